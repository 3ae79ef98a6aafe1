/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_watch_cost.c — a watch's initial list costs what a list of the same
 * objects costs.  Work is counted, not timed: the store reports the SQLite
 * statements its reads ran and the virtual-machine steps they took
 * (pk_store_stats.read_queries / read_steps).  A namespace of 2,000 pods sits
 * beside other namespaces; one watch of it, read to the end of its initial
 * list, must take at most twice the steps of one list of it and a handful of
 * statements (pages of many objects, no query per object, no sort per page),
 * and so must a watch of every namespace.  A hundred watches that nobody
 * reads cost no more than that each.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/server/server.h"
#include "kernel/store/store.h"

#define BIG_NS_PODS 2000
#define OTHER_PODS 200

static char dir[256];
static struct pk_store *st;
static struct pk_server *srv;

static void create_ns(const char *name)
{
	json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
			       "metadata", "name", name);
	ck_assert_int_eq(pk_store_create(st, ns, NULL, NULL), 0);
	json_decref(ns);
}

static void create_pods(const char *ns, int n)
{
	for (int i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "pod-%05d", (i * 7919) % n); /* not in key order */
		json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:[{s:s,s:s}]}}",
				      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
				      "namespace", ns, "labels", "app", "web", "spec", "containers",
				      "name", "c", "image", "registry.example/app:1.0");
		ck_assert_int_eq(pk_store_create(st, p, NULL, NULL), 0);
		json_decref(p);
	}
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/dev/shm/pk-watch-cost-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/pk-watch-cost-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
	}
	char path[300], err[256];
	snprintf(path, sizeof(path), "%s/tokens", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("admintok,admin,1,\"system:masters\"\n", f);
	fclose(f);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	struct pk_server_config cfg = {.token_auth_file = path};
	ck_assert_int_eq(pk_server_new(st, &cfg, &srv, err, sizeof(err)), 0);
	create_ns("aaa");
	create_ns("big");
	create_ns("zzz");
	create_pods("aaa", OTHER_PODS);
	create_pods("big", BIG_NS_PODS);
	create_pods("zzz", OTHER_PODS);
}

static void teardown(void)
{
	pk_server_free(srv);
	pk_store_close(st);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void handle(const char *path, struct pk_query_arg *args, size_t nargs,
		   struct pk_response *resp)
{
	char auth[] = "Bearer admintok";
	struct pk_request req = {
	    .method = "GET", .path = path, .args = args, .nargs = nargs, .authorization = auth};
	ck_assert_int_eq(pk_server_handle(srv, &req, resp), 0);
	ck_assert_int_eq(resp->status, 200);
}

static struct pk_store_stats stats(void)
{
	struct pk_store_stats s;
	pk_store_get_stats(st, &s);
	return s;
}

/* One list of the namespace through the API: its cost in steps and queries. */
static void list_cost(const char *path, uint64_t *ret_steps, uint64_t *ret_queries)
{
	struct pk_store_stats a = stats();
	struct pk_response resp;
	handle(path, NULL, 0, &resp);
	json_t *body = json_loads(resp.body, 0, NULL);
	ck_assert_uint_eq(json_array_size(json_object_get(body, "items")), BIG_NS_PODS);
	json_decref(body);
	pk_response_clear(&resp);
	struct pk_store_stats b = stats();
	*ret_steps = b.read_steps - a.read_steps;
	*ret_queries = b.read_queries - a.read_queries;
}

/* Read a watch until its initial list is delivered; returns the events read. */
static size_t drain_initial(struct pk_watch *w, size_t want)
{
	static char buf[65536];
	size_t lines = 0;
	while (lines < want) {
		ssize_t n = pk_watch_read(w, buf, sizeof(buf), 100);
		ck_assert_int_gt(n, 0);
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	}
	return lines;
}

START_TEST(test_watch_costs_a_list)
{
	static const char path[] = "/api/v1/namespaces/big/pods";
	uint64_t list_steps, list_queries;
	list_cost(path, &list_steps, &list_queries);
	ck_assert_uint_gt(list_steps, 0);

	struct pk_store_stats a = stats();
	struct pk_query_arg args[] = {{"watch", "1"}};
	struct pk_response resp;
	handle(path, args, 1, &resp);
	ck_assert_ptr_nonnull(resp.watch);
	ck_assert_uint_eq(drain_initial(resp.watch, BIG_NS_PODS), BIG_NS_PODS);
	struct pk_store_stats b = stats();
	pk_response_clear(&resp);
	uint64_t steps = b.read_steps - a.read_steps, queries = b.read_queries - a.read_queries;
	ck_assert_msg(steps <= 2 * list_steps, "watch: %llu steps, list: %llu",
		      (unsigned long long)steps, (unsigned long long)list_steps);
	/* pages of many objects: a few dozen statements for 2,000 objects at most */
	ck_assert_msg(queries <= BIG_NS_PODS / 50, "watch ran %llu statements",
		      (unsigned long long)queries);

	/* The same across every namespace (the cluster-wide key range). */
	uint64_t all_steps, all_queries;
	struct pk_store_stats c = stats();
	struct pk_response lresp;
	handle("/api/v1/pods", NULL, 0, &lresp);
	pk_response_clear(&lresp);
	struct pk_store_stats d = stats();
	all_steps = d.read_steps - c.read_steps;
	all_queries = d.read_queries - c.read_queries;
	ck_assert_uint_eq(all_queries, 1);
	handle("/api/v1/pods", args, 1, &resp);
	drain_initial(resp.watch, BIG_NS_PODS + 2 * OTHER_PODS);
	struct pk_store_stats e = stats();
	pk_response_clear(&resp);
	ck_assert_msg(e.read_steps - d.read_steps <= 2 * all_steps,
		      "cluster-wide watch: %llu steps, list: %llu",
		      (unsigned long long)(e.read_steps - d.read_steps),
		      (unsigned long long)all_steps);
	(void)list_queries;

	/* Watches that nobody reads fill one bounded buffer each and stop there. */
	enum { WATCHES = 20 };
	struct pk_response many[WATCHES];
	a = stats();
	for (int i = 0; i < WATCHES; i++) {
		handle(path, args, 1, &many[i]);
		char c;
		/* the first byte makes the watch fill its buffer */
		ck_assert_int_eq(pk_watch_read(many[i].watch, &c, 1, 100), 1);
	}
	b = stats();
	ck_assert_msg(b.read_steps - a.read_steps <= 2 * (uint64_t)WATCHES * list_steps,
		      "%d unread watches: %llu steps, one list %llu", WATCHES,
		      (unsigned long long)(b.read_steps - a.read_steps),
		      (unsigned long long)list_steps);
	for (int i = 0; i < WATCHES; i++)
		pk_response_clear(&many[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("watch_cost");
	TCase *tc = tcase_create("cost");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_watch_costs_a_list);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
