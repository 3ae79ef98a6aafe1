/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_round.c — kernel/sched/round.c: a round runs cycles until nothing is
 * eligible, hands every result to its caller, and ends early when the
 * caller says so, at its cycle limit, or before a cycle it refuses; and a
 * cycle's actions become writer items (pk_sched_result_write()) under the
 * caller's resourceVersion preconditions, an action the writer refuses
 * handed to the caller or ending the batch.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "kernel/write/writer.h"

struct seen {
	size_t results, binds;
	int end_after; /* > 0: end the round after this many results */
	int refuse_at; /* > 0: refuse the cycle with this number */
	int begun;
};

static int on_result(void *arg, const struct pk_sched_result *res, int64_t now)
{
	struct seen *k = arg;

	(void)now;
	k->results++;
	for (size_t i = 0; i < res->nactions; i++)
		k->binds += res->actions[i].action == PK_SCHED_BIND;
	return k->end_after > 0 && (int)k->results >= k->end_after;
}

static bool on_begin(void *arg, int64_t *ret_now)
{
	struct seen *k = arg;

	*ret_now = 5;
	return ++k->begun != k->refuse_at;
}

/* Three standalone pods on a node with room for two. */
static struct pk_sched *cluster(void)
{
	struct pk_sched *s = new_sched();

	add_node(s, "n1", "2", NULL);
	add_pod(s, "a", "1", NULL, NULL, 0);
	add_pod(s, "b", "1", NULL, NULL, 0);
	add_pod(s, "c", "1", NULL, NULL, 0);
	return s;
}

START_TEST(round_runs_until_idle)
{
	struct pk_sched *s = cluster();
	struct seen k = {0};
	struct pk_sched_round_ops ops = {.result = on_result};
	struct pk_sched_round round;

	ck_assert_int_eq(pk_sched_round(s, 0, &ops, &k, &round), 0);
	ck_assert(round.idle);
	ck_assert_uint_eq(k.binds, 2);
	ck_assert_uint_eq(round.cycles, k.results);
	ck_assert_uint_eq(round.cycles, 4); /* two bound, one without room, one idle */
	/* the third pod waits for room, not for a time */
	ck_assert(!round.has_retry);
	pk_sched_free(s);
}
END_TEST

START_TEST(caller_ends_the_round)
{
	struct pk_sched *s = cluster();
	struct seen k = {.end_after = 1};
	struct pk_sched_round_ops ops = {.result = on_result};
	struct pk_sched_round round;

	ck_assert_int_eq(pk_sched_round(s, 0, &ops, &k, &round), 0);
	ck_assert(!round.idle);
	ck_assert_uint_eq(round.cycles, 1);
	ck_assert_uint_eq(k.binds, 1);
	/* the next round goes on where it stopped */
	k.end_after = 0;
	ck_assert_int_eq(pk_sched_round(s, 0, &ops, &k, &round), 0);
	ck_assert(round.idle);
	ck_assert_uint_eq(k.binds, 2);
	pk_sched_free(s);
}
END_TEST

START_TEST(limit_and_refused_cycle_end_the_round)
{
	struct pk_sched *s = cluster();
	struct seen k = {.refuse_at = 2};
	struct pk_sched_round_ops ops = {.result = on_result, .max_cycles = 1};
	struct pk_sched_round round;

	ck_assert_int_eq(pk_sched_round(s, 0, &ops, &k, &round), 0);
	ck_assert(!round.idle);
	ck_assert_uint_eq(round.cycles, 1);
	ops.max_cycles = 0;
	ops.cycle_begins = on_begin;
	k.begun = 1; /* the next cycle is the refused second one */
	ck_assert_int_eq(pk_sched_round(s, 0, &ops, &k, &round), 0);
	ck_assert(!round.idle);
	ck_assert_uint_eq(round.cycles, 0);
	ck_assert_uint_eq(k.binds, 1);
	pk_sched_free(s);
}
END_TEST

/* Writes of a round into an in-memory writer; b's precondition is stale. */
struct writes {
	struct pk_writer *w;
	size_t conflicts, failed;
};

static uint64_t rv_of(void *arg, const struct pk_type *kind, const char *ns, const char *name)
{
	(void)arg;
	(void)kind;
	(void)ns;
	return strcmp(name, "b") == 0 ? 2 : 0;
}

static void on_failed(void *arg, const struct pk_sched_action *a, int r)
{
	struct writes *k = arg;

	(void)a;
	ck_assert_int_eq(r, -EINVAL);
	k->failed++;
}

static const struct pk_sched_write_ops write_ops = {.rv = rv_of, .failed = on_failed};

static int write_result(void *arg, const struct pk_sched_result *res, int64_t now)
{
	struct writes *k = arg;
	const struct pk_write_result *wr = NULL;
	size_t n = 0;

	(void)now;
	ck_assert_int_eq(pk_writer_batch_begin(k->w), 0);
	ck_assert_int_eq(pk_sched_result_write(k->w, res, &write_ops, k), 0);
	ck_assert_int_eq(pk_writer_batch_commit(k->w, &wr, &n), 0);
	for (size_t i = 0; i < n; i++)
		k->conflicts += wr[i].error == -PK_WRITE_ECONFLICT;
	return 0;
}

START_TEST(results_become_writes)
{
	struct pk_sched *s = cluster();
	json_t *objs =
	    json_pack("[o,o,o]", pod_obj("a", "1", NULL, NULL, 0), pod_obj("b", "1", NULL, NULL, 0),
		      pod_obj("c", "1", NULL, NULL, 0));
	struct pk_writer_memory_opts mo = {.now = 1};
	struct writes k = {0};
	struct pk_sched_round_ops ops = {.result = write_result};
	struct pk_sched_round round;
	struct pk_sched_action bad = {.action = PK_SCHED_BIND,
				      .kind = pk_type_of(PK_KIND_POD),
				      .ns = "default",
				      .name = "c"}; /* a binding to no node */
	struct pk_sched_result res = {.actions = &bad, .nactions = 1};

	pk_set(json_array_get(objs, 1), "metadata.resourceVersion", json_string("3"));
	ck_assert_int_eq(pk_writer_memory_new(objs, &mo, &k.w), 0);
	ck_assert_int_eq(pk_sched_round(s, 0, &ops, &k, &round), 0);
	ck_assert_str_eq(pk_get_string(json_array_get(objs, 0), "spec.nodeName"), "n1");
	/* b was bound by the scheduler, but its write was refused: stale */
	ck_assert_ptr_null(pk_get(json_array_get(objs, 1), "spec.nodeName"));
	ck_assert_uint_eq(k.conflicts, 1);
	ck_assert_str_eq(
	    pk_get_string(json_array_get(pk_get(json_array_get(objs, 2), "status.conditions"), 0),
			  "status"),
	    "False");
	/* an action the writer refuses: handed to failed(), or the batch ends with it */
	ck_assert_int_eq(pk_writer_batch_begin(k.w), 0);
	ck_assert_int_eq(pk_sched_result_write(k.w, &res, &write_ops, &k), 0);
	ck_assert_uint_eq(k.failed, 1);
	ck_assert_int_eq(pk_sched_result_write(k.w, &res, NULL, NULL), -EINVAL);
	pk_writer_free(k.w);
	json_decref(objs);
	pk_sched_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-round");
	TCase *tc = tcase_create("round");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, round_runs_until_idle);
	tcase_add_test(tc, caller_ends_the_round);
	tcase_add_test(tc, limit_and_refused_cycle_end_the_round);
	tcase_add_test(tc, results_become_writes);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
