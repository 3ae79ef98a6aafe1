/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_store_limits.c — kernel/store against hostile writers and the write
 * options clients rely on: annotation and object size limits (with the field
 * path), the event ring bounded by bytes, lists without a limit returning
 * everything, dry runs that write nothing, and uid preconditions.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/store/store.h"

static char dir[256];
static struct pk_store *st;

static void setup(void)
{
	/* tmpfs when there is one: some of these tests write thousands of commits. */
	snprintf(dir, sizeof(dir), "/dev/shm/pk-limits-test-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/pk-limits-test-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
	}
	char err[256];
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
}

static void teardown(void)
{
	char err[256] = "";
	ck_assert_msg(pk_store_check(st, err, sizeof(err)) == 0, "invariant: %s", err);
	pk_store_close(st);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static json_t *pod(const char *name)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1",
			 "kind", "Pod", "metadata", "name", name, "namespace", "default", "labels",
			 "app", "a", "spec", "containers", "name", "c", "image", "busybox");
}

static json_t *meta(json_t *obj)
{
	return json_object_get(obj, "metadata");
}

static const char *uid_of(json_t *obj)
{
	return json_string_value(json_object_get(meta(obj), "uid"));
}

static char *filled(size_t n)
{
	char *s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}

static bool errs_mention(const struct pk_errors *errs, const char *what)
{
	for (size_t i = 0; i < errs->n; i++)
		if (strstr(errs->msg[i], what))
			return true;
	return false;
}

START_TEST(test_annotation_and_object_size)
{
	/* 300 KiB of annotations: 422 with the field path, nothing written. */
	json_t *p = pod("big");
	char *v = filled(300 * 1024);
	json_object_set_new(meta(p), "annotations", json_pack("{s:s}", "a", v));
	struct pk_errors errs = {0};
	uint64_t rv0 = pk_store_rv(st);
	ck_assert_int_eq(pk_store_create(st, p, &errs, NULL), -EINVAL);
	ck_assert_msg(errs_mention(&errs, "metadata.annotations: Too long"), "%s",
		      errs.n ? errs.msg[0] : "no error");
	pk_errors_clear(&errs);
	ck_assert_uint_eq(pk_store_rv(st), rv0);
	/* Exactly at the limit (key + value) is fine. */
	v[256 * 1024 - 1] = '\0';
	json_object_set_new(meta(p), "annotations", json_pack("{s:s}", "a", v));
	json_t *out = NULL;
	ck_assert_int_eq(pk_store_create(st, p, &errs, &out), 0);
	/* Updating it past the limit is refused the same way. */
	json_object_set_new(meta(out), "annotations", json_pack("{s:s,s:s}", "a", v, "b", "yy"));
	ck_assert_int_eq(pk_store_update_opts(st, out, PK_SUB_MAIN, NULL, &errs, NULL), -EINVAL);
	ck_assert(errs_mention(&errs, "metadata.annotations"));
	pk_errors_clear(&errs);
	json_decref(out);
	json_decref(p);
	free(v);

	/* An object over PK_STORE_OBJECT_MAX as a whole: -E2BIG, nothing written. */
	p = pod("huge");
	json_t *args = json_array();
	char *chunk = filled(100 * 1024);
	for (int i = 0; i < 20; i++)
		json_array_append_new(args, json_string(chunk));
	free(chunk);
	json_object_set_new(
	    json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0), "args",
	    args);
	rv0 = pk_store_rv(st);
	ck_assert_int_eq(pk_store_create(st, p, &errs, NULL), -E2BIG);
	ck_assert_uint_eq(pk_store_rv(st), rv0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "huge", &out), -ENOENT);
	pk_errors_clear(&errs);
	json_decref(p);
}
END_TEST

/* A writer of large objects cannot make the ring hold 4,096 copies of them. */
START_TEST(test_ring_bounded_by_bytes)
{
	json_t *p = pod("churn"), *out = NULL;
	char *v = filled(250 * 1024);
	json_object_set_new(meta(p), "annotations", json_pack("{s:s}", "a", v));
	ck_assert_int_eq(pk_store_create(st, p, NULL, &out), 0);
	json_decref(p);
	size_t writes = PK_STORE_RING_BYTES / (250 * 1024) + 50;
	for (size_t i = 0; i < writes; i++) {
		json_t *next = NULL;
		v[0] = (char)('a' + i % 26);
		json_object_set_new(meta(out), "annotations", json_pack("{s:s}", "a", v));
		ck_assert_int_eq(pk_store_update_opts(st, out, PK_SUB_MAIN, NULL, NULL, &next), 0);
		json_decref(out);
		out = next;
	}
	free(v);
	json_decref(out);
	struct pk_store_stats s;
	pk_store_get_stats(st, &s);
	ck_assert_uint_le(s.ring_bytes, PK_STORE_RING_BYTES);
	ck_assert_uint_lt(s.ring_events, writes);
	ck_assert_uint_gt(s.ring_floor, 0);
	/* The dropped history is gone for watchers, as when the ring wraps. */
	ck_assert_int_eq(pk_store_events_since(st, s.ring_floor - 1, 0, NULL, NULL, NULL),
			 -PK_STORE_EGONE);
}
END_TEST

/* Without a limit a list returns every object, past any page size. */
START_TEST(test_list_without_limit_is_complete)
{
	enum { N = 10050 };
	for (int i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof(name), "ns-%05d", i);
		json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				       "metadata", "name", name);
		ck_assert_int_eq(pk_store_create(st, ns, NULL, NULL), 0);
		json_decref(ns);
	}
	json_t *items = NULL;
	char *cont = NULL;
	ck_assert_int_eq(pk_store_list(st, &pk_type_namespace, NULL, NULL, &items, NULL, &cont), 0);
	ck_assert_uint_ge(json_array_size(items), N);
	ck_assert_ptr_null(cont);
	json_decref(items);
	/* An explicit limit still pages. */
	struct pk_store_list_opts o = {.limit = 100};
	ck_assert_int_eq(pk_store_list(st, &pk_type_namespace, NULL, &o, &items, NULL, &cont), 0);
	ck_assert_uint_eq(json_array_size(items), 100);
	ck_assert_ptr_nonnull(cont);
	json_decref(items);
	free(cont);
}
END_TEST

static int count_event(const struct pk_store_event *ev, void *arg)
{
	(void)ev;
	*(int *)arg += 1;
	return 0;
}

START_TEST(test_dry_run_writes_nothing)
{
	const struct pk_store_write_opts dry = {.dry_run = true};
	uint64_t rv0 = pk_store_rv(st);
	json_t *p = pod("d1"), *out = NULL, *got = NULL;
	ck_assert_int_eq(pk_store_create_opts(st, p, &dry, NULL, &out), 0);
	ck_assert_ptr_nonnull(uid_of(out)); /* defaulted as a real create would */
	ck_assert_ptr_null(json_object_get(meta(out), "resourceVersion"));
	json_decref(out);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "d1", &got), -ENOENT);
	ck_assert_uint_eq(pk_store_rv(st), rv0);
	/* Validation still runs. */
	json_t *bad = pod("Bad_Name");
	ck_assert_int_eq(pk_store_create_opts(st, bad, &dry, NULL, NULL), -EINVAL);
	json_decref(bad);

	json_t *real = NULL;
	ck_assert_int_eq(pk_store_create(st, p, NULL, &real), 0);
	json_decref(p);
	uint64_t rv1 = pk_store_rv(st);
	const char *rv1s = json_string_value(json_object_get(meta(real), "resourceVersion"));

	/* update, patch and delete: what would be stored comes back, nothing changes. */
	json_t *upd = json_deep_copy(real);
	json_object_set_new(json_object_get(meta(upd), "labels"), "tier", json_string("x"));
	ck_assert_int_eq(pk_store_update_opts(st, upd, PK_SUB_MAIN, &dry, NULL, &out), 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(meta(out), "labels"), "tier")), "x");
	ck_assert_str_eq(json_string_value(json_object_get(meta(out), "resourceVersion")), rv1s);
	json_decref(out);
	json_decref(upd);
	json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "tier", "y");
	ck_assert_int_eq(pk_store_patch_opts(st, &pk_type_pod, "default", "d1", PK_PATCH_MERGE,
					     patch, PK_SUB_MAIN, &dry, NULL, &out),
			 0);
	json_decref(out);
	json_decref(patch);
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "d1", &dry, NULL, &out),
			 0);
	ck_assert_str_eq(json_string_value(json_object_get(meta(out), "name")), "d1");
	json_decref(out);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "d1", &got), 0);
	ck_assert(json_equal(got, real));
	json_decref(got);
	ck_assert_uint_eq(pk_store_rv(st), rv1);
	int n = 0;
	ck_assert_int_eq(pk_store_events_since(st, rv1, 0, count_event, &n, NULL), 0);
	ck_assert_int_eq(n, 0);
	json_decref(real);
}
END_TEST

START_TEST(test_uid_preconditions)
{
	json_t *p = pod("u1"), *real = NULL, *got = NULL;
	ck_assert_int_eq(pk_store_create(st, p, NULL, &real), 0);
	json_decref(p);
	struct pk_errors errs = {0};
	/* DELETE with the wrong preconditions.uid: 409, the object stays. */
	struct pk_store_write_opts o = {.precondition_uid = "not-the-uid"};
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "u1", &o, &errs, NULL),
			 -PK_STORE_ECONFLICT);
	ck_assert(errs_mention(&errs, "Precondition failed: UID in precondition"));
	pk_errors_clear(&errs);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "u1", &got), 0);
	json_decref(got);
	/* A PATCH or PUT changing metadata.uid: 409, never a new identity. */
	json_t *patch = json_pack("{s:{s:s}}", "metadata", "uid", "forged");
	ck_assert_int_eq(pk_store_patch(st, &pk_type_pod, "default", "u1", PK_PATCH_MERGE, patch,
					PK_SUB_MAIN, &errs, NULL),
			 -PK_STORE_ECONFLICT);
	pk_errors_clear(&errs);
	json_decref(patch);
	json_t *upd = json_deep_copy(real);
	json_object_set_new(meta(upd), "uid", json_string("forged"));
	ck_assert_int_eq(pk_store_update_opts(st, upd, PK_SUB_MAIN, NULL, &errs, NULL),
			 -PK_STORE_ECONFLICT);
	pk_errors_clear(&errs);
	json_decref(upd);
	/* The right uid deletes. */
	o.precondition_uid = uid_of(real);
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "u1", &o, NULL, NULL),
			 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "u1", &got), -ENOENT);
	json_decref(real);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store-limits");
	TCase *tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_annotation_and_object_size);
	tcase_add_test(tc, test_ring_bounded_by_bytes);
	tcase_add_test(tc, test_list_without_limit_is_complete);
	tcase_add_test(tc, test_dry_run_writes_nothing);
	tcase_add_test(tc, test_uid_preconditions);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
