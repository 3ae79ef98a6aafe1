/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_patch.c — the patch engines (kernel/store/patch.c) against
 * amplification and long lists: a JSON patch whose copy ops double the
 * object is refused at the object limit before it spends memory, merges
 * that would outgrow the limit are refused, a merge never changes its
 * target (the result shares nothing the caller could change), and a
 * strategic merge of 20,000-item lists merges by key, deletes and appends
 * as the linear definition does.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kernel/store/store.h"

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A 1.5 KB Node. */
static json_t *node(void)
{
	char pad[1400];

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	return json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s}}}", "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", "n1", "status", "nodeInfo", "pad", pad);
}

/* 26 ops, each copying /status onto a key inside it: 2^26 times the object. */
START_TEST(test_copy_doubling_refused_before_it_is_built)
{
	json_t *target = node(), *ops = json_array(), *out = NULL;
	char err[256] = "", path[64];
	long before = maxrss_kb();

	for (int i = 0; i < 26; i++) {
		snprintf(path, sizeof(path), "/status/c%d", i);
		json_array_append_new(
		    ops, json_pack("{s:s,s:s,s:s}", "op", "copy", "from", "/status", "path", path));
	}
	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_JSON, ops, &out, err, sizeof(err)),
			 -E2BIG);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(err, "larger than"), "%s", err);
	/* the object never grew past the limit: a few MB, not gigabytes */
	ck_assert_msg(maxrss_kb() - before < 64 * 1024, "RSS grew %ld kB", maxrss_kb() - before);
	/* ten doublings fit: the same ops up to there apply */
	while (json_array_size(ops) > 9)
		json_array_remove(ops, json_array_size(ops) - 1);
	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_JSON, ops, &out, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(json_object_get(json_object_get(out, "status"), "c8"));
	json_decref(out);
	json_decref(ops);
	json_decref(target);
}
END_TEST

/* Copy ops may not duplicate more than twice the limit, even when each is removed again. */
START_TEST(test_copy_bytes_capped)
{
	json_t *target = json_object(), *ops = json_array(), *out = NULL;
	char *big = malloc(600 * 1024);
	char err[256] = "";

	memset(big, 'y', 600 * 1024 - 1);
	big[600 * 1024 - 1] = '\0';
	json_object_set_new(target, "big", json_string(big));
	free(big);
	for (int i = 0; i < 20; i++) {
		json_array_append_new(
		    ops, json_pack("{s:s,s:s,s:s}", "op", "copy", "from", "/big", "path", "/c"));
		json_array_append_new(ops, json_pack("{s:s,s:s}", "op", "remove", "path", "/c"));
	}
	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_JSON, ops, &out, err, sizeof(err)),
			 -E2BIG);
	ck_assert_msg(strstr(err, "duplicate"), "%s", err);
	json_decref(ops);
	json_decref(target);
}
END_TEST

START_TEST(test_merge_over_the_limit_refused)
{
	json_t *target = node(), *patch = json_object(), *labels = json_object(), *out = NULL;
	char err[256] = "", key[32], val[1024];

	memset(val, 'v', sizeof(val) - 1);
	val[sizeof(val) - 1] = '\0';
	for (int i = 0; i < 1600; i++) { /* 1.6 MB of new labels */
		snprintf(key, sizeof(key), "k%d", i);
		json_object_set_new(labels, key, json_string(val));
	}
	json_object_set_new(patch, "metadata", json_pack("{s:o}", "labels", labels));
	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_MERGE, patch, &out, err, sizeof(err)),
			 -E2BIG);
	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_STRATEGIC, patch, &out, err, sizeof(err)),
			 -E2BIG);
	ck_assert_ptr_null(out);
	json_decref(patch);
	json_decref(target);
}
END_TEST

/* ownerReferences merge by uid (their patchMergeKey), as kubectl's strategic merge expects. */
START_TEST(test_strategic_owner_references_by_uid)
{
	json_t *target =
	    json_pack("{s:{s:s,s:[{s:s,s:s,s:s,s:s}]}}", "metadata", "name", "p", "ownerReferences",
		      "apiVersion", "v1", "kind", "Pod", "name", "a", "uid", "u1");
	json_t *patch = json_pack("{s:{s:[{s:s,s:s,s:s,s:s}]}}", "metadata", "ownerReferences",
				  "apiVersion", "v1", "kind", "Pod", "name", "b", "uid", "u2");
	json_t *out = NULL, *refs;
	char err[256] = "";

	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_STRATEGIC, patch, &out, err, sizeof(err)),
			 0);
	refs = pk_get(out, "metadata.ownerReferences");
	ck_assert_uint_eq(json_array_size(refs), 2);
	ck_assert_str_eq(pk_get_string(out, "metadata.ownerReferences[0].uid"), "u1");
	ck_assert_str_eq(pk_get_string(out, "metadata.ownerReferences[1].uid"), "u2");
	json_decref(out);
	/* the same uid again: that item changes in place */
	json_object_set_new(json_array_get(pk_get(patch, "metadata.ownerReferences"), 0), "uid",
			    json_string("u1"));
	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_STRATEGIC, patch, &out, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(json_array_size(pk_get(out, "metadata.ownerReferences")), 1);
	ck_assert_str_eq(pk_get_string(out, "metadata.ownerReferences[0].name"), "b");
	json_decref(out);
	/* a JSON merge patch still replaces the list */
	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_MERGE, patch, &out, err, sizeof(err)), 0);
	ck_assert_uint_eq(json_array_size(pk_get(out, "metadata.ownerReferences")), 1);
	json_decref(out);
	json_decref(patch);
	json_decref(target);
}
END_TEST

/* The result is the caller's own: changing it leaves target and patch alone. */
START_TEST(test_merge_result_shares_nothing)
{
	json_t *target =
	    json_pack("{s:{s:s,s:{s:s}},s:{s:[{s:s,s:s}]}}", "metadata", "name", "p", "labels", "a",
		      "1", "spec", "containers", "name", "c", "image", "x");
	json_t *patch =
	    json_pack("{s:{s:{s:s}},s:{s:i}}", "metadata", "labels", "b", "2", "extra", "n", 1);
	json_t *t0 = json_deep_copy(target), *p0 = json_deep_copy(patch), *out = NULL;
	char err[256] = "";

	for (int type = PK_PATCH_MERGE; type <= PK_PATCH_STRATEGIC; type++) {
		ck_assert_int_eq(
		    pk_patch_apply(target, (enum pk_patch_type)type, patch, &out, err, sizeof(err)),
		    0);
		json_object_set_new(json_object_get(out, "metadata"), "name", json_string("q"));
		json_object_set_new(json_object_get(out, "extra"), "n", json_integer(2));
		json_object_set_new(
		    json_array_get(json_object_get(json_object_get(out, "spec"), "containers"), 0),
		    "image", json_string("y"));
		json_object_clear(json_object_get(json_object_get(out, "metadata"), "labels"));
		json_decref(out);
		ck_assert(json_equal(target, t0));
		ck_assert(json_equal(patch, p0));
	}
	json_decref(t0);
	json_decref(p0);
	json_decref(target);
	json_decref(patch);
}
END_TEST

/* 20,000 containers each side: by name, in order, deletes and appends. */
START_TEST(test_strategic_long_lists)
{
	enum { N = 20000 };
	json_t *tl = json_array(), *pl = json_array(), *out = NULL;
	char name[32], err[256] = "";

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		json_array_append_new(tl, json_pack("{s:s,s:s}", "name", name, "image", "old"));
	}
	for (int i = N - 1; i >= 0; i -= 2) { /* every odd one changes, from the end */
		snprintf(name, sizeof(name), "c%d", i);
		json_array_append_new(pl, json_pack("{s:s,s:s}", "name", name, "image", "new"));
	}
	for (int i = 0; i < N; i += 4) { /* every fourth goes */
		snprintf(name, sizeof(name), "c%d", i);
		json_array_append_new(pl, json_pack("{s:s,s:s}", "name", name, "$patch", "delete"));
	}
	for (int i = N; i < 2 * N; i++) { /* new ones append, in patch order */
		snprintf(name, sizeof(name), "c%d", i);
		json_array_append_new(pl, json_pack("{s:s,s:s}", "name", name, "image", "add"));
	}
	json_t *target = json_pack("{s:{s:o}}", "spec", "containers", tl);
	json_t *patch = json_pack("{s:{s:o}}", "spec", "containers", pl);

	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_STRATEGIC, patch, &out, err, sizeof(err)),
			 0);
	json_t *got = json_object_get(json_object_get(out, "spec"), "containers");

	ck_assert_uint_eq(json_array_size(got), N - N / 4 + N);
	size_t k = 0;

	for (int i = 0; i < N; i++) {
		if (i % 4 == 0)
			continue;
		json_t *c = json_array_get(got, k++);

		snprintf(name, sizeof(name), "c%d", i);
		ck_assert_str_eq(json_string_value(json_object_get(c, "name")), name);
		ck_assert_str_eq(json_string_value(json_object_get(c, "image")),
				 i % 2 ? "new" : "old");
		ck_assert_ptr_null(json_object_get(c, "$patch"));
	}
	for (int i = N; i < 2 * N; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		ck_assert_str_eq(
		    json_string_value(json_object_get(json_array_get(got, k++), "name")), name);
	}
	json_decref(out);
	json_decref(target);
	json_decref(patch);
}
END_TEST

/* Merge keys that are numbers (ports by containerPort) and a repeated key. */
START_TEST(test_strategic_number_keys)
{
	json_t *target = json_pack("{s:[{s:i,s:s},{s:i,s:s}]}", "ports", "containerPort", 80,
				   "name", "http", "containerPort", 443, "name", "https");
	json_t *patch = json_pack("{s:[{s:i,s:s},{s:i,s:s},{s:i,s:s}]}", "ports", "containerPort",
				  443, "name", "tls", "containerPort", 8080, "name", "alt",
				  "containerPort", 8080, "name", "alt2");
	json_t *out = NULL;
	char err[256] = "";

	ck_assert_int_eq(pk_patch_apply(target, PK_PATCH_STRATEGIC, patch, &out, err, sizeof(err)),
			 0);
	json_t *p = json_object_get(out, "ports");

	ck_assert_uint_eq(json_array_size(p), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(p, 1), "name")), "tls");
	/* the second 8080 merges into the one the first appended */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(p, 2), "name")), "alt2");
	json_decref(out);
	json_decref(target);
	json_decref(patch);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store-patch");
	TCase *tc = tcase_create("patch");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_copy_doubling_refused_before_it_is_built);
	tcase_add_test(tc, test_copy_bytes_capped);
	tcase_add_test(tc, test_merge_over_the_limit_refused);
	tcase_add_test(tc, test_merge_result_shares_nothing);
	tcase_add_test(tc, test_strategic_owner_references_by_uid);
	tcase_add_test(tc, test_strategic_long_lists);
	tcase_add_test(tc, test_strategic_number_keys);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
