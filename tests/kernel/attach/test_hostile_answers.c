/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hostile_answers.c — an informer feeding the attach-mode mirror from a
 * scripted server that answers what a proxy in front of a cluster may
 * answer.  The mirror first holds pod "full" (7 of node n1's 8 CPUs).  Then
 * the watch is answered 410 Gone and the relist a 200 HTML page: the mirror
 * must keep "full" (taken as an empty list, n1 would look free and a second
 * 7-CPU pod would be bound onto it), and the list is asked for again with
 * backoff.  A 200 Status instead of a list, and a list whose pages add up
 * past the client's list bound, are refused the same way.  Once the server
 * answers a list, the mirror follows it.  A watch line that is not an event
 * ends the watch as an error: the informer resumes from the last
 * resourceVersion it delivered, without listing again.  A page past
 * KUBE_LIST_PAGE_MAX_BYTES (a cluster that ignores limit) is refused as it
 * arrives, before it is parsed.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel/attach/attach-internal.h"

enum phase { P_NORMAL, P_GONE, P_HTML, P_STATUS, P_BIG, P_RECOVERED, P_HUGE };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static enum phase phase;
static int lfd;
static uint16_t port;
static pthread_t thread;
static atomic_bool stopping;
static char seen[64][512]; /* request paths, in order (the last 64) */
static int nseen;

#define POD(name, rv, pad)                                                                         \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"resourceVersion\":\"" rv \
	"\",\"annotations\":{\"pad\":\"" pad                                                       \
	"\"}},\"spec\":{\"nodeName\":\"n1\",\"schedulerName\":"                                    \
	"\"podkernel\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"            \
	"\"requests\":"                                                                            \
	"{\"cpu\":\"7\"}}}]}}"
#define PAD "0123456789012345678901234567890123456789012345678901234567890123456789"
#define PAD8 PAD PAD PAD PAD PAD PAD PAD PAD

static void answer(int fd, const char *type, const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 type, strlen(body));

	if (write(fd, head, (size_t)n) < 0 || write(fd, body, strlen(body)) < 0)
		return;
}

/* A page past KUBE_LIST_PAGE_MAX_BYTES (a cluster that ignores limit). */
static void serve_huge(int fd)
{
	static const char head[] = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":"
				   "\"30\"},\"items\":[{\"metadata\":{\"name\":\"huge\","
				   "\"namespace\":\"default\",\"resourceVersion\":\"30\","
				   "\"annotations\":{\"pad\":\"";
	static const char tail[] = "\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}]}";
	size_t pad = KUBE_LIST_PAGE_MAX_BYTES + 4096;
	char *body = malloc(sizeof(head) + pad + sizeof(tail));

	if (!body)
		return;
	memcpy(body, head, sizeof(head) - 1);
	memset(body + sizeof(head) - 1, 'x', pad);
	memcpy(body + sizeof(head) - 1 + pad, tail, sizeof(tail));
	answer(fd, "application/json", body);
	free(body);
}

static void serve_list(int fd, enum phase p, const char *path)
{
	if (p == P_HUGE) {
		serve_huge(fd);
		return;
	}
	static const char html[] = "<html><head><title>502 Bad Gateway</title></head>\n"
				   "<body><h1>502 Bad Gateway</h1></body></html>\n";

	if (p == P_HTML || p == P_GONE)
		answer(fd, "text/html", html);
	else if (p == P_STATUS)
		answer(fd, "application/json",
		       "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\"}");
	else if (p == P_BIG && !strstr(path, "continue="))
		answer(
		    fd, "application/json",
		    "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\",\"continue\":"
		    "\"next\"},\"items\":[" POD("full", "5", PAD8) "]}");
	else if (p == P_BIG)
		answer(fd, "application/json",
		       "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":"
		       "[" POD("second", "19", PAD8) "]}");
	else if (p == P_RECOVERED)
		answer(fd, "application/json",
		       "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":"
		       "[" POD("full", "5", "") "," POD("second", "19", "") "]}");
	else
		answer(fd, "application/json",
		       "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":"
		       "[" POD("full", "5", "") "]}");
}

static void serve_watch(int fd, enum phase p)
{
	if (p == P_GONE) {
		answer(fd, "application/json",
		       "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		       "\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410}}\n");
		pthread_mutex_lock(&lock);
		phase = P_HTML; /* what the proxy answers the relist */
		pthread_mutex_unlock(&lock);
	} else if (p == P_RECOVERED) {
		answer(fd, "application/json",
		       "{\"type\":\"MODIFIED\",\"object\":" POD(
			   "second", "21", "") "}\n<html><body>502 Bad Gateway</body></html>\n");
	} else {
		/* a quiet watch that the server ends after a while */
		usleep(300000);
		answer(fd, "application/json",
		       "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
		       "{\"resourceVersion\":\"10\"}}}\n");
	}
}

static void handle(int fd)
{
	char req[4096] = "", path[512] = "";
	size_t n = 0;
	enum phase p;

	while (n < sizeof(req) - 1 && !strstr(req, "\r\n\r\n")) {
		ssize_t k = read(fd, req + n, sizeof(req) - 1 - n);

		if (k <= 0)
			return;
		n += (size_t)k;
		req[n] = '\0';
	}
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "server: %.200s\n", req);
	if (sscanf(req, "GET %511s", path) != 1)
		return;
	pthread_mutex_lock(&lock);
	snprintf(seen[nseen % 64], sizeof(seen[0]), "%s", path);
	nseen++;
	p = phase;
	pthread_mutex_unlock(&lock);
	if (strstr(path, "watch=1"))
		serve_watch(fd, p);
	else
		serve_list(fd, p, path);
}

static void *server_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&stopping)) {
		struct pollfd pfd = {.fd = lfd, .events = POLLIN};
		int fd;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		handle(fd);
		close(fd);
	}
	return NULL;
}

static void setup(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(lfd, 16), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	phase = P_NORMAL;
	nseen = 0;
	atomic_store(&stopping, false);
	ck_assert_int_eq(pthread_create(&thread, NULL, server_main, NULL), 0);
}

static void teardown(void)
{
	atomic_store(&stopping, true);
	pthread_join(thread, NULL);
	close(lfd);
}

static void set_phase(enum phase p)
{
	pthread_mutex_lock(&lock);
	phase = p;
	pthread_mutex_unlock(&lock);
}

static void on_replace(void *arg, const struct kube_resource *res, const json_t *items)
{
	at_mirror_replace(arg, pk_type_by_kind(res->kind), items);
}

static void on_event(void *arg, const struct kube_resource *res, enum kube_event type,
		     const json_t *obj)
{
	at_mirror_event(arg, pk_type_by_kind(res->kind), type, obj);
}

static void on_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "informer (%d): %s\n", level, msg);
}

static const char *pod_rv(struct at_mirror *m, const char *name, char *buf, size_t len)
{
	json_t *obj = NULL;

	if (at_mirror_get(m, &pk_type_pod, "default", name, &obj) < 0)
		return NULL;
	snprintf(buf, len, "%s", pk_get_string(obj, "metadata.resourceVersion"));
	json_decref(obj);
	return buf;
}

static bool has_pod(struct at_mirror *m, const char *name)
{
	char rv[32];

	return pod_rv(m, name, rv, sizeof(rv)) != NULL;
}

static struct kube_informer_stats stats_of(struct kube_informer *inf)
{
	struct kube_informer_stats s;

	kube_informer_get_stats(inf, &s);
	return s;
}

/* Wait up to 10 s for cond. */
#define WAIT_FOR(cond)                                                                             \
	for (int i_ = 0; !(cond); i_++) {                                                          \
		ck_assert_msg(i_ < 200, "waited 10 s in vain for: %s", #cond);                     \
		usleep(50000);                                                                     \
	}

static bool seen_path(const char *part, int from)
{
	bool yes = false;

	pthread_mutex_lock(&lock);
	for (int i = from > nseen - 64 ? from : nseen - 64; i < nseen && !yes; i++)
		yes = strstr(seen[i % 64], part) != NULL;
	pthread_mutex_unlock(&lock);
	return yes;
}

START_TEST(test_undecodable_answers_keep_the_mirror)
{
	struct pk_kube_credentials creds = {0};
	struct kube_client *c = NULL;
	struct at_mirror *m = NULL;
	struct kube_informer *inf = NULL;
	const struct kube_resource pods = {"Pod", "", "v1", "pods", true};
	char server[64], rv[32];
	uint64_t bad;
	int mark;

	snprintf(server, sizeof(server), "http://127.0.0.1:%u", (unsigned)port);
	creds.server = strdup(server);
	ck_assert_int_eq(kube_client_new(&creds, &c), 0);
	kube_client_set_max_list_bytes(c, 1500); /* one padded page fits, two do not */
	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	struct kube_informer_sink sink = {
	    .replace = on_replace, .event = on_event, .log = on_log, .arg = m};

	ck_assert_int_eq(kube_informer_start(c, &pods, &sink, &inf), 0);
	WAIT_FOR(has_pod(m, "full"));

	/* 410, then an HTML page with 200: an error, not an empty list */
	set_phase(P_GONE);
	WAIT_FOR(stats_of(inf).undecodable >= 2); /* asked again, still HTML */
	ck_assert(has_pod(m, "full"));
	ck_assert_uint_eq(stats_of(inf).lists, 1);
	ck_assert_uint_ge(stats_of(inf).gone, 1);
	ck_assert_uint_ge(stats_of(inf).errors, 2);

	/* a Status with 200 is no list either */
	bad = stats_of(inf).undecodable;
	set_phase(P_STATUS);
	WAIT_FOR(stats_of(inf).undecodable >= bad + 1);
	ck_assert(has_pod(m, "full"));

	/* two pages of ~900 bytes past a bound of 1500: nothing of them delivered */
	set_phase(P_BIG);
	WAIT_FOR(stats_of(inf).too_big >= 1);
	ck_assert(has_pod(m, "full"));
	ck_assert(!has_pod(m, "second"));
	ck_assert_uint_eq(stats_of(inf).lists, 1);

	/* a list again: the mirror follows it */
	set_phase(P_RECOVERED);
	WAIT_FOR(has_pod(m, "second") && stats_of(inf).lists == 2);
	ck_assert(has_pod(m, "full"));

	/* the watch delivers rv 21, then a line that is no event: resumed from 21 */
	WAIT_FOR(pod_rv(m, "second", rv, sizeof(rv)) && strcmp(rv, "21") == 0);
	pthread_mutex_lock(&lock);
	mark = nseen;
	pthread_mutex_unlock(&lock);
	bad = stats_of(inf).undecodable;
	WAIT_FOR(stats_of(inf).undecodable >= bad + 1 && seen_path("resourceVersion=21", mark));
	ck_assert_uint_eq(stats_of(inf).lists, 2);
	ck_assert(has_pod(m, "full"));

	kube_informer_stop(inf);
	at_mirror_free(m);
	kube_client_free(c);
}
END_TEST

/*
 * A cluster that ignores limit and answers one page past
 * KUBE_LIST_PAGE_MAX_BYTES (well within the whole list's bound): refused as
 * it arrives, never parsed into a tree many times its size.
 */
START_TEST(test_page_bounded_before_it_is_parsed)
{
	struct pk_kube_credentials creds = {0};
	struct kube_client *c = NULL;
	struct at_mirror *m = NULL;
	struct kube_informer *inf = NULL;
	const struct kube_resource pods = {"Pod", "", "v1", "pods", true};
	char server[64];

	set_phase(P_HUGE);
	snprintf(server, sizeof(server), "http://127.0.0.1:%u", (unsigned)port);
	creds.server = strdup(server);
	ck_assert_int_eq(kube_client_new(&creds, &c), 0);
	ck_assert_int_gt(kube_client_max_list_bytes(c), 2 * KUBE_LIST_PAGE_MAX_BYTES);
	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	struct kube_informer_sink sink = {
	    .replace = on_replace, .event = on_event, .log = on_log, .arg = m};

	ck_assert_int_eq(kube_informer_start(c, &pods, &sink, &inf), 0);
	WAIT_FOR(stats_of(inf).too_big >= 1);
	ck_assert(!has_pod(m, "huge"));
	ck_assert_uint_eq(stats_of(inf).lists, 0);
	kube_informer_stop(inf);
	at_mirror_free(m);
	kube_client_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach-hostile-answers");
	TCase *tc = tcase_create("hostile");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_undecodable_answers_keep_the_mirror);
	tcase_add_test(tc, test_page_bounded_before_it_is_parsed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
