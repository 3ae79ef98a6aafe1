/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_informer.c — an informer against podkerneld's real API server
 * (in process, on a loopback port) feeding the attach-mode mirror.  The
 * server is stopped while objects change in its store and started again on
 * the same port: the informer resumes its watch from the last
 * resourceVersion it saw and receives exactly what it missed, without
 * listing again.  Then the store's history is cut (a new store): the watch
 * is answered 410 Gone and the informer lists again.  The Event recorder
 * posts to the same server and drops a note it already sent.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/attach/attach-internal.h"
#include "kernel/server/server.h"

static char dir[256];
static struct pk_store *st;
static struct pk_server *srv;
static uint16_t port;

static void serve(void)
{
	char listen[32], err[256] = "";
	struct pk_server_config cfg = {.listen = listen};

	snprintf(listen, sizeof(listen), "127.0.0.1:%u", (unsigned)port);
	ck_assert_int_eq(pk_server_new(st, &cfg, &srv, err, sizeof(err)), 0);
	/* the port of a stopped server may linger a moment */
	for (int i = 0; pk_server_start(srv, err, sizeof(err)) < 0; i++) {
		ck_assert_int_lt(i, 50);
		usleep(100000);
	}
	port = pk_server_port(srv);
}

static void setup(void)
{
	char err[256];

	snprintf(dir, sizeof(dir), "%s/pk-informer-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	port = 0;
	serve();
}

static void teardown(void)
{
	char cmd[300];

	pk_server_free(srv);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
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

static void create_pod(const char *name)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
			      "Pod", "metadata", "name", name, "spec", "schedulerName", "podkernel",
			      "containers", "name", "c", "image", "x");

	ck_assert_int_eq(pk_store_create(st, p, NULL, NULL), 0);
	json_decref(p);
}

static bool has_pod(struct at_mirror *m, const char *name)
{
	json_t *obj = NULL;
	bool yes = at_mirror_get(m, &pk_type_pod, "default", name, &obj) == 0;

	json_decref(obj);
	return yes;
}

/* Wait up to 10 s for the mirror to hold (or not) the pod. */
static void wait_pod(struct at_mirror *m, const char *name, bool present)
{
	for (int i = 0; has_pod(m, name) != present; i++) {
		ck_assert_msg(i < 200, "pod %s never %s", name, present ? "appeared" : "went");
		usleep(50000);
	}
}

START_TEST(test_resume_and_relist)
{
	struct pk_kube_credentials creds = {0};
	struct kube_client *c = NULL;
	struct at_mirror *m = NULL;
	struct kube_informer *inf = NULL;
	struct kube_informer_stats stats;
	const struct kube_resource pods = {"Pod", "", "v1", "pods", true};
	char server[64], err[256];

	snprintf(server, sizeof(server), "http://127.0.0.1:%u", (unsigned)port);
	creds.server = strdup(server);
	ck_assert_int_eq(kube_client_new(&creds, &c), 0);
	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	struct kube_informer_sink sink = {.replace = on_replace, .event = on_event, .arg = m};

	create_pod("before");
	ck_assert_int_eq(kube_informer_start(c, &pods, &sink, &inf), 0);
	wait_pod(m, "before", true);
	create_pod("watched");
	wait_pod(m, "watched", true);

	/* the server goes away; the store changes meanwhile */
	pk_server_free(srv);
	srv = NULL;
	create_pod("while-down");
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "before", NULL, NULL, NULL), 0);
	serve();
	wait_pod(m, "while-down", true);
	wait_pod(m, "before", false);
	kube_informer_get_stats(inf, &stats);
	ck_assert_uint_eq(stats.lists, 1); /* resumed, not listed again */
	ck_assert_uint_eq(stats.gone, 0);
	ck_assert_uint_ge(stats.watches, 2);

	/* a store whose history starts later: the old resourceVersion is gone */
	pk_server_free(srv);
	srv = NULL;
	pk_store_close(st);
	snprintf(server, sizeof(server), "rm -rf '%s'/*", dir);
	ck_assert_int_eq(system(server), 0);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	for (int i = 0; i < 20; i++) { /* past the old resourceVersions */
		char name[16];

		snprintf(name, sizeof(name), "filler-%d", i);
		create_pod(name);
	}
	create_pod("fresh");
	/* reopened, its watch history starts empty at its counter */
	pk_store_close(st);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	serve();
	wait_pod(m, "fresh", true);
	wait_pod(m, "watched", false); /* not in the new list: deleted */
	kube_informer_get_stats(inf, &stats);
	ck_assert_uint_ge(stats.lists, 2);

	kube_informer_stop(inf);
	at_mirror_free(m);
	kube_client_free(c);
}
END_TEST

/* Events reach the server; the same note about an object again is dropped. */
START_TEST(test_recorder_limits_repeats)
{
	struct pk_kube_credentials creds = {0};
	struct kube_client *c = NULL;
	struct at_recorder *rec = NULL;
	struct at_api api;
	uint64_t sent = 0, limited = 0, failed = 0;
	json_t *items = NULL;
	char server[64];

	snprintf(server, sizeof(server), "http://127.0.0.1:%u", (unsigned)port);
	creds.server = strdup(server);
	ck_assert_int_eq(kube_client_new(&creds, &c), 0);
	ck_assert_int_eq(at_api_init(&api, PK_ATTACH_DEFAULT_WORKLOAD_API), 0);
	ck_assert_int_eq(at_recorder_new(c, &api, "test", &rec), 0);
	for (int i = 0; i < 3; i++)
		at_recorder_emit(rec, &pk_type_pod, "default", "p", NULL, "Warning",
				 "FailedScheduling", "Scheduling", "0/4 nodes fit");
	at_recorder_emit(rec, &pk_type_pod, "default", "p", NULL, "Warning", "FailedScheduling",
			 "Scheduling", "0/5 nodes fit"); /* news: sent */
	at_recorder_emit(rec, &pk_type_pod_group, "default", "g", NULL, "Warning",
			 "FailedScheduling", "Scheduling", "0/4 nodes fit"); /* another object */
	for (int i = 0; i < 200 && sent + failed < 3; i++) {
		usleep(50000);
		at_recorder_stats(rec, &sent, &limited, &failed);
	}
	ck_assert_uint_eq(sent, 3);
	ck_assert_uint_eq(limited, 2);
	ck_assert_uint_eq(failed, 0);
	ck_assert_int_eq(pk_store_list(st, &pk_type_event, "default", NULL, &items, NULL, NULL), 0);
	ck_assert_uint_eq(json_array_size(items), 3);
	json_t *ev = json_array_get(items, 0);

	/* stored as the core Event kube-apiserver keeps: reason, message, involvedObject */
	ck_assert_str_eq(json_string_value(json_object_get(ev, "apiVersion")), "v1");
	ck_assert_str_eq(json_string_value(json_object_get(ev, "reportingComponent")),
			 AT_REPORTING_CONTROLLER);
	ck_assert_str_eq(json_string_value(json_object_get(ev, "reason")), "FailedScheduling");
	ck_assert_ptr_nonnull(json_string_value(json_object_get(ev, "message")));
	ck_assert_ptr_nonnull(json_string_value(pk_get(ev, "involvedObject.name")));
	json_decref(items);
	at_recorder_free(rec);
	kube_client_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach-informer");
	TCase *tc = tcase_create("informer");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_resume_and_relist);
	tcase_add_test(tc, test_recorder_limits_repeats);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
