/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_listener.c — the listener's pool of event-loop threads
 * (kernel/http/listener.c): connections that arrive together are served by
 * different threads, so a handler that waits (as one waiting for the
 * store's commit does) holds up no other client.  Four connections are
 * opened at once to a pool of four; each sends one request, whose handler
 * waits until all four handlers run at the same time (or gives up after a
 * few seconds and answers 503).  Sharing a thread, two of them could never
 * meet.  Then the port is served as before: a fifth request on a new
 * connection, and connections cut by the stop.
 */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kernel/http/listener.h"

#define CLIENTS 4
#define MEET_S 5

struct meeting {
	pthread_mutex_t lock;
	pthread_cond_t all_in;
	int inside; /* handlers waiting for the others */
	int calls;  /* handlers that answered */
};

static struct meeting meet = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

/* Wait until CLIENTS handlers are inside at once; false after MEET_S seconds. */
static bool meet_all(void)
{
	struct timespec until;
	bool met = true;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += MEET_S;
	pthread_mutex_lock(&meet.lock);
	meet.inside++;
	pthread_cond_broadcast(&meet.all_in);
	while (met && meet.inside < CLIENTS)
		met = pthread_cond_timedwait(&meet.all_in, &meet.lock, &until) == 0;
	meet.calls++;
	met = met || meet.inside >= CLIENTS;
	pthread_mutex_unlock(&meet.lock);
	return met;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	static int first;
	struct MHD_Response *resp;
	enum MHD_Result r;
	bool met;

	(void)cls, (void)method, (void)version, (void)upload;
	if (!*con_cls) {
		*con_cls = &first; /* headers only: the request goes on */
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	met = strcmp(url, "/meet") != 0 || meet_all();
	resp =
	    MHD_create_response_from_buffer(2, (void *)(met ? "ok" : "no"), MHD_RESPMEM_PERSISTENT);
	r = MHD_queue_response(conn, met ? 200 : 503, resp);
	MHD_destroy_response(resp);
	return r;
}

static int port_of(struct pk_listener **ret)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct pk_listener_config cfg = {.addr = &ss, .threads = CLIENTS, .handler = handler};
	char err[200] = "";

	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(pk_listener_start(&cfg, ret, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(pk_listener_port(*ret), 0);
	return pk_listener_port(*ret);
}

static int dial(int fd, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return connect(fd, (struct sockaddr *)&a, sizeof(a));
}

/* One request on fd; the status line's code (0: no answer). */
static int ask(int fd, const char *path)
{
	char req[128], buf[512];
	ssize_t n;
	int code = 0;

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		sscanf(buf, "HTTP/1.1 %d", &code);
	}
	return code;
}

struct client {
	int fd, code;
	pthread_t t;
};

static void *client_main(void *arg)
{
	struct client *c = arg;

	c->code = ask(c->fd, "/meet");
	return NULL;
}

START_TEST(test_connections_together_spread_over_threads)
{
	struct pk_listener *l = NULL;
	int port = port_of(&l), fd;
	struct client c[CLIENTS];

	/* every descriptor first, then the connections: the server accepts them in a row */
	for (int i = 0; i < CLIENTS; i++) {
		c[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(c[i].fd, 0);
	}
	for (int i = 0; i < CLIENTS; i++)
		ck_assert_int_eq(dial(c[i].fd, port), 0);
	for (int i = 0; i < CLIENTS; i++)
		pthread_create(&c[i].t, NULL, client_main, &c[i]);
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(c[i].t, NULL);
		ck_assert_msg(c[i].code == 200, "client %d: %d (handlers shared a thread)", i,
			      c[i].code);
	}
	ck_assert_int_eq(meet.calls, CLIENTS);
	/* a later connection is served too */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(dial(fd, port), 0);
	ck_assert_int_eq(ask(fd, "/other"), 200);
	close(fd);
	/* the stop closes what is still open */
	pk_listener_stop(l);
	for (int i = 0; i < CLIENTS; i++) {
		char b;

		ck_assert_int_le(read(c[i].fd, &b, 1), 0);
		close(c[i].fd);
	}
}
END_TEST

START_TEST(test_port_taken_refused)
{
	struct pk_listener *l = NULL, *again = NULL;
	int port = port_of(&l);
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct pk_listener_config cfg = {.addr = &ss, .threads = 2, .handler = handler};
	char err[200] = "";

	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(pk_listener_start(&cfg, &again, err, sizeof(err)), -EADDRNOTAVAIL);
	ck_assert_ptr_null(again);
	ck_assert_msg(strstr(err, "cannot serve there") != NULL, "%s", err);
	pk_listener_stop(l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("listener");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_connections_together_spread_over_threads);
	tcase_add_test(tc, test_port_taken_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
