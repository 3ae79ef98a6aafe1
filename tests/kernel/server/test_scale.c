/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_scale.c — the scale subresource's Scale (scale.c): which kinds have
 * one, the Scale of a LeaderWorkerSet (spec.replicas defaulting to 1, the
 * status' replicas and hpaPodSelector as the selector), and a Scale written
 * back: only spec.replicas (and a named resourceVersion) reaches the object,
 * a bad replicas is refused by path.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"

static json_t *parse(const char *s)
{
	json_t *o = json_loads(s, 0, NULL);

	ck_assert_ptr_nonnull(o);
	return o;
}

START_TEST(test_scale_view_and_back)
{
	json_t *lws =
	    parse("{\"apiVersion\": \"leaderworkerset.x-k8s.io/v1\", \"kind\": "
		  "\"LeaderWorkerSet\", \"metadata\": {\"name\": \"llm\", \"namespace\": "
		  "\"ns\", \"uid\": \"u\", \"resourceVersion\": \"7\", \"labels\": {\"a\": "
		  "\"b\"}}, \"spec\": {\"leaderWorkerTemplate\": {\"size\": 2}}, "
		  "\"status\": {\"replicas\": 1, \"hpaPodSelector\": \"x=y\"}}");
	json_t *scale = pk_srv_scale_view(lws), *next = NULL, *bad;
	struct pk_errors errs = {0};

	ck_assert(pk_srv_has_scale(pk_type_by_kind("LeaderWorkerSet")));
	ck_assert(!pk_srv_has_scale(pk_type_by_kind("Pod")));
	ck_assert_str_eq(pk_get_string(scale, "apiVersion"), "autoscaling/v1");
	ck_assert_str_eq(pk_get_string(scale, "kind"), "Scale");
	ck_assert_str_eq(pk_get_string(scale, "metadata.resourceVersion"), "7");
	ck_assert_ptr_null(pk_get(scale, "metadata.labels"));
	ck_assert_int_eq(json_integer_value(pk_get(scale, "spec.replicas")), 1); /* the default */
	ck_assert_int_eq(json_integer_value(pk_get(scale, "status.replicas")), 1);
	ck_assert_str_eq(pk_get_string(scale, "status.selector"), "x=y");
	json_object_set_new(json_object_get(scale, "spec"), "replicas", json_integer(4));
	json_object_set_new(json_object_get(scale, "metadata"), "resourceVersion",
			    json_string("9"));
	json_object_set_new(json_object_get(scale, "status"), "replicas", json_integer(40));
	ck_assert_int_eq(pk_srv_scale_stored(lws, scale, &next, &errs), 0);
	ck_assert_int_eq(json_integer_value(pk_get(next, "spec.replicas")), 4);
	ck_assert_int_eq(json_integer_value(pk_get(next, "spec.leaderWorkerTemplate.size")), 2);
	ck_assert_int_eq(json_integer_value(pk_get(next, "status.replicas")), 1);
	ck_assert_str_eq(pk_get_string(next, "metadata.resourceVersion"), "9");
	ck_assert_ptr_nonnull(pk_get(next, "metadata.labels"));
	json_decref(next);
	bad = parse("{\"spec\": {\"replicas\": -1}}");
	ck_assert_int_eq(pk_srv_scale_stored(lws, bad, &next, &errs), -EINVAL);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert(strncmp(errs.msg[0], "spec.replicas: Invalid value", 28) == 0);
	pk_errors_clear(&errs);
	json_decref(bad);
	json_decref(scale);
	json_decref(lws);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scale");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_scale_view_and_back);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
