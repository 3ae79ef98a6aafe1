/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_claims.c — kernel/controllers/claims.c as an offline run's
 * controller (pk_claims_pass() through an in-memory writer): a pod claim
 * naming a template gets its claim, named reproducibly, and the pod's status
 * records it; a PodGroup's claim the same way; a second pass makes nothing;
 * a claim the pod already owns is taken instead of made; a template not in
 * the objects makes nothing; a pass that skips the pods it saw needing no
 * claim (pk_claims_seen) writes what a pass without it writes, over random
 * changes of the objects from pass to pass.  Standalone's side (the store) runs in
 * tests/kernel/server/test_dra_schedule.sh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/controllers.h"
#include "kernel/write/writer.h"

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *o = json_loads(text, 0, &e);

	ck_assert_msg(o != NULL, "%s", e.text);
	return o;
}

static const char *const TEMPLATE =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\","
    "\"metadata\":{\"name\":\"gpu\",\"namespace\":\"default\"},"
    "\"spec\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"devices\":{\"requests\":[{"
    "\"name\":\"g\",\"exactly\":"
    "{\"deviceClassName\":\"gpu.example.com\"}}]}}}}";

static json_t *pod(const char *name, const char *uid, const char *tmpl)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s}],s:[{s:s,s:s}]}}", "apiVersion",
			      "v1", "kind", "Pod", "metadata", "name", name, "namespace", "default",
			      "spec", "containers", "name", "c", "image", "i", "resourceClaims",
			      "name", "gpu", "resourceClaimTemplateName", tmpl);

	if (uid)
		json_object_set_new(json_object_get(p, "metadata"), "uid", json_string(uid));
	return p;
}

/* One pass over objects through an in-memory writer of every kind. */
static int pass(json_t *objects)
{
	struct pk_writer *w = NULL;
	int r = pk_writer_memory_new(objects, NULL, &w);

	ck_assert_int_eq(r, 0);
	r = pk_claims_pass(NULL, objects, w);
	pk_writer_free(w);
	return r;
}

static size_t count_kind(const json_t *objects, enum pk_kind kind)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(objects, i, o) n += pk_kind_of(o) == kind;
	return n;
}

static const char *recorded(const json_t *objects, size_t i)
{
	json_t *st = pk_get(json_array_get(objects, i), "status.resourceClaimStatuses");

	ck_assert_int_eq(json_array_size(st), 1);
	return pk_get_string(json_array_get(st, 0), "resourceClaimName");
}

START_TEST(pod_claim_made_and_recorded)
{
	json_t *objs = json_pack("[o,o]", load(TEMPLATE), pod("p", NULL, "gpu"));
	json_t *again = json_pack("[o,o]", load(TEMPLATE), pod("p", NULL, "gpu"));
	const char *name;

	ck_assert_int_eq(pass(objs), 0);
	ck_assert_int_eq(count_kind(objs, PK_KIND_RESOURCE_CLAIM), 1);
	name = recorded(objs, 1);
	ck_assert_str_eq(pk_name(json_array_get(objs, 2)), name);
	ck_assert(strncmp(name, "p-gpu-", 6) == 0 && strlen(name) == 11);
	ck_assert_str_eq(pk_get_string(json_array_get(objs, 2), "metadata.labels.a"), "b");
	/* reproducible: the same input names the same claim */
	ck_assert_int_eq(pass(again), 0);
	ck_assert_str_eq(recorded(again, 1), name);
	/* a second pass over the result makes nothing more */
	ck_assert_int_eq(pass(objs), 0);
	ck_assert_int_eq(json_array_size(objs), 3);
	json_decref(objs);
	json_decref(again);
}
END_TEST

START_TEST(group_claim)
{
	json_t *g = load("{\"apiVersion\":\"scheduling.k8s.io/v1alpha3\",\"kind\":\"PodGroup\","
			 "\"metadata\":{\"name\":\"g\",\"namespace\":\"default\"},"
			 "\"spec\":{\"resourceClaims\":[{\"name\":\"imex\","
			 "\"resourceClaimTemplateName\":\"gpu\"}]}}");
	json_t *objs = json_pack("[o,o]", load(TEMPLATE), g);

	ck_assert_int_eq(pass(objs), 0);
	ck_assert_int_eq(count_kind(objs, PK_KIND_RESOURCE_CLAIM), 1);
	ck_assert(strncmp(recorded(objs, 1), "g-imex-", 7) == 0);
	json_decref(objs);
}
END_TEST

START_TEST(owned_claim_taken)
{
	json_t *claim = load("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
			     "\"metadata\":{\"name\":\"p-gpu-old\",\"namespace\":\"default\","
			     "\"annotations\":{\"resource.kubernetes.io/pod-claim-name\":\"gpu\"},"
			     "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
			     "\"name\":\"p\",\"uid\":\"u1\",\"controller\":true}]},"
			     "\"spec\":{}}");
	json_t *objs = json_pack("[o,o,o]", load(TEMPLATE), claim, pod("p", "u1", "gpu"));

	ck_assert_int_eq(pass(objs), 0);
	ck_assert_int_eq(count_kind(objs, PK_KIND_RESOURCE_CLAIM), 1);
	ck_assert_str_eq(recorded(objs, 2), "p-gpu-old");
	json_decref(objs);
}
END_TEST

START_TEST(missing_template_makes_nothing)
{
	json_t *objs = json_pack("[o]", pod("p", NULL, "absent"));

	ck_assert_int_eq(pass(objs), 0);
	ck_assert_int_eq(json_array_size(objs), 1);
	ck_assert_ptr_null(pk_get(json_array_get(objs, 0), "status.resourceClaimStatuses"));
	json_decref(objs);
}
END_TEST

/* A new pod of a random kind: no claims, a claim of a template, of none. */
static json_t *random_pod(unsigned *seed)
{
	static int made;
	char name[16], uid[16];
	int v = rand_r(seed) % 4;
	json_t *p;

	snprintf(name, sizeof(name), "p%d", made);
	snprintf(uid, sizeof(uid), "u%d", made++);
	p = pod(name, uid, v == 1 ? "absent" : "gpu");
	if (v >= 2) /* no claims */
		json_object_del(json_object_get(p, "spec"), "resourceClaims");
	return p;
}

static bool has_template(const json_t *objects, size_t *ret_at)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o) if (pk_kind_of(o) == PK_KIND_RESOURCE_CLAIM_TEMPLATE)
	{
		*ret_at = i;
		return true;
	}
	return false;
}

/* A random change, never in place: an object replaced, removed, moved, added. */
static void random_change(json_t *objects, unsigned *seed)
{
	size_t n = json_array_size(objects), at = 0;
	size_t i = n ? (size_t)rand_r(seed) % n : 0, j = n ? (size_t)rand_r(seed) % n : 0;
	json_t *a;

	switch (rand_r(seed) % 5) {
	case 0:
		if (n && pk_kind_of(json_array_get(objects, i)) == PK_KIND_POD)
			json_array_set_new(objects, i, random_pod(seed));
		break;
	case 1:
		if (n > 4)
			json_array_remove(objects, i);
		break;
	case 2:
		a = json_incref(json_array_get(objects, i));
		json_array_set(objects, i, json_array_get(objects, j));
		json_array_set_new(objects, j, a);
		break;
	case 3:
		if (has_template(objects, &at))
			json_array_remove(objects, at);
		else
			json_array_append_new(objects, load(TEMPLATE));
		break;
	default:
		json_array_insert_new(objects, j, random_pod(seed));
	}
}

/* The pass on objects as the placement check runs it: a shared writer, seen kept. */
static int pass_seen(json_t *objects, struct pk_claims_seen *seen)
{
	struct pk_writer_memory_opts o = {.shared = true};
	struct pk_writer *w = NULL;
	int r = pk_writer_memory_new(objects, &o, &w);

	ck_assert_int_eq(r, 0);
	r = pk_claims_pass(seen, objects, w);
	pk_writer_free(w);
	return r;
}

START_TEST(seen_pass_equals_fresh_pass)
{
	struct pk_claims_seen seen = {0};
	unsigned seed = 42;
	json_t *cur = json_array();
	size_t skipped = 0;

	for (int k = 0; k < 12; k++)
		json_array_append_new(cur, random_pod(&seed));
	for (int round = 0; round < 400; round++) {
		json_t *fresh = json_deep_copy(cur), *next = json_array();

		json_array_extend(next, cur); /* sharing every object */
		ck_assert_int_eq(pass(fresh), 0);
		for (size_t i = 0; i < json_array_size(next) && i < seen.n; i++)
			skipped += seen.pods[i] && seen.pods[i] == json_array_get(next, i);
		ck_assert_int_eq(pass_seen(next, &seen), 0);
		ck_assert_msg(json_equal(next, fresh), "round %d", round);
		json_decref(fresh);
		json_decref(cur);
		cur = next;
		for (int c = rand_r(&seed) % 4; c >= 0; c--)
			random_change(cur, &seed);
	}
	ck_assert_uint_gt(skipped, 1000); /* the pass skipped pods it saw */
	pk_claims_seen_clear(&seen);
	json_decref(cur);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-claims");
	TCase *tc = tcase_create("offline");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, pod_claim_made_and_recorded);
	tcase_add_test(tc, group_claim);
	tcase_add_test(tc, owned_claim_taken);
	tcase_add_test(tc, missing_template_makes_nothing);
	tcase_add_test(tc, seen_pass_equals_fresh_pass);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
