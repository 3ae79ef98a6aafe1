/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_remote.c — the write path's kube-apiserver backend (remote.c)
 * against podkerneld's real API server (in process, on a loopback port),
 * for the writes beyond the scheduler's own: a create is a POST (an existing
 * name answers AlreadyExists), a replacement a PUT under the
 * resourceVersion and uid (a stale one is refused and handed back), a
 * status a PUT of the status subresource, a deletion a DELETE whose uid
 * precondition refuses another object of the same name; a kind without a
 * typed view (Namespace, Event) is refused.
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

static void setup(void)
{
	char listen[] = "127.0.0.1:0", err[256] = "";
	struct pk_server_config cfg = {.listen = listen};

	snprintf(dir, sizeof(dir), "%s/pk-remote-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_server_new(st, &cfg, &srv, err, sizeof(err)), 0);
	ck_assert_msg(pk_server_start(srv, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	char cmd[300];

	pk_server_free(srv);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static bool always(void *arg)
{
	(void)arg;
	return true;
}

static json_t *pod(const char *name)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
			 "Pod", "metadata", "name", name, "namespace", "default", "spec",
			 "schedulerName", "podkernel", "containers", "name", "c", "image", "x");
}

/* The stored pod, also given to the mirror (as its watch would). */
static json_t *stored(struct at_mirror *m, const char *name)
{
	json_t *p = NULL;

	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", name, &p), 0);
	at_mirror_event(m, &pk_type_pod, KUBE_MODIFIED, p);
	return p;
}

static struct pk_write_ref ref_of(const json_t *p)
{
	return (struct pk_write_ref){
	    .kind = &pk_type_pod,
	    .ns = "default",
	    .name = pk_name(p),
	    .rv = strtoull(pk_get_string(p, "metadata.resourceVersion"), NULL, 10),
	    .uid = pk_get_string(p, "metadata.uid"),
	};
}

/* One action's batch, committed: the result's error (and object in *ret). */
static int commit(struct pk_writer *w, json_t **ret)
{
	const struct pk_write_result *res = NULL;
	size_t n = 0;

	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, 1);
	if (ret)
		*ret = json_incref(res[0].object);
	return res[0].error;
}

START_TEST(test_create_replace_status_delete)
{
	struct pk_kube_credentials creds = {0};
	struct kube_client *c = NULL;
	struct at_mirror *m = NULL;
	struct at_api api;
	struct at_remote_stats stats = {0};
	struct pk_writer *w = NULL;
	char server[64];
	json_t *a = pod("a"), *out = NULL, *p, *want, *status;

	snprintf(server, sizeof(server), "http://127.0.0.1:%u", (unsigned)pk_server_port(srv));
	creds.server = strdup(server);
	ck_assert_int_eq(kube_client_new(&creds, &c), 0);
	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	ck_assert_int_eq(at_api_init(&api, PK_ATTACH_DEFAULT_WORKLOAD_API), 0);
	struct at_remote_config cfg = {
	    .client = c, .api = &api, .mirror = m, .may_write = always, .stats = &stats};
	ck_assert_int_eq(at_remote_writer_new(&cfg, &w), 0);

	/* create: POST; the same name again is AlreadyExists */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_pod, a), 0);
	ck_assert_int_eq(commit(w, &out), 0);
	ck_assert_str_eq(pk_name(out), "a");
	ck_assert_ptr_nonnull(pk_get_string(out, "metadata.uid"));
	json_decref(out);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_pod, a), 0);
	ck_assert_int_eq(commit(w, NULL), -EEXIST);

	/* replace: PUT under the version the mirror holds; again under it: refused */
	p = stored(m, "a");
	struct pk_write_ref r = ref_of(p);
	want = json_deep_copy(p);
	pk_set(want, "metadata.labels", json_pack("{s:s}", "tier", "gold"));
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_replace(w, &r, want), 0);
	ck_assert_int_eq(commit(w, &out), 0);
	ck_assert_str_eq(pk_get_string(out, "metadata.labels.tier"), "gold");
	json_decref(out);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_replace(w, &r, want), 0);
	ck_assert_int_eq(commit(w, NULL), -PK_WRITE_ECONFLICT);
	json_decref(p);

	/* status: PUT of pods/status at the current version */
	p = stored(m, "a");
	r = ref_of(p);
	status = json_pack("{s:s}", "phase", "Running");
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_status(w, &r, status), 0);
	ck_assert_int_eq(commit(w, &out), 0);
	ck_assert_str_eq(pk_get_string(out, "status.phase"), "Running");
	ck_assert_str_eq(pk_get_string(out, "metadata.labels.tier"), "gold");
	json_decref(out);

	/* delete: another uid is refused, the pod's own goes */
	r.rv = 0;
	r.uid = "0000-not-its-uid";
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_delete(w, &r, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	ck_assert_int_eq(commit(w, NULL), -PK_WRITE_ECONFLICT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "a", &out), 0);
	json_decref(out);
	r.uid = pk_get_string(p, "metadata.uid");
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_delete(w, &r, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	ck_assert_int_eq(commit(w, NULL), 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "a", &out), -ENOENT);
	ck_assert_uint_eq(atomic_load(&stats.deletes), 2);

	/* a kind attach mode does not reach (Event) has no resource here: refused, not sent */
	struct pk_write_ref ev = {.kind = &pk_type_event, .ns = "default", .name = "e1"};
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_delete(w, &ev, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	ck_assert_int_eq(commit(w, NULL), -EOPNOTSUPP);
	ck_assert_uint_eq(atomic_load(&stats.deletes), 2);

	json_decref(status);
	json_decref(p);
	json_decref(want);
	json_decref(a);
	pk_writer_free(w);
	at_mirror_free(m);
	kube_client_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach-remote");
	TCase *tc = tcase_create("remote");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_create_replace_status_delete);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
