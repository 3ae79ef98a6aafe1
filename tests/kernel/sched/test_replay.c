/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_replay.c — arrival replays (kernel/sched/replay.c): accelerators
 * requested and allocated as pods arrive under a strategy and under a
 * comparison policy, the policy seeing only the nodes the filters accept,
 * allocation at arrival levels (and the parts of shared devices left free
 * there, told to the caller's hook), and refused inputs.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/replay.h"

#define GPU "nvidia.com/gpu"
#define MODEL "accelerator.podkernel.dev/product"

static json_t *node(const char *name, const char *model, const char *gpus, const char *cpu)
{
	return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s}}}", "apiVersion", "v1",
			 "kind", "Node", "metadata", "name", name, "labels", MODEL, model, "status",
			 "allocatable", GPU, gpus, "cpu", cpu, "pods", "10");
}

static json_t *pod(const char *name, const char *gpus, const char *cpu, const char *model)
{
	json_t *p =
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:s, s:s}}}]}}", "apiVersion",
		      "v1", "kind", "Pod", "metadata", "name", name, "namespace", "t", "spec",
		      "containers", "name", "c", "resources", "requests", GPU, gpus, "cpu", cpu);

	if (model)
		json_object_set_new(json_object_get(p, "spec"), "nodeSelector",
				    json_pack("{s:s}", MODEL, model));
	return p;
}

/* Two nodes: a (model X, 1 GPU, 4 CPU), b (model Y, 2 GPUs, 8 CPU). */
static json_t *nodes(void)
{
	return json_pack("[o, o]", node("a", "X", "1", "4"), node("b", "Y", "2", "8"));
}

static void add_nodes(struct pk_replay *r)
{
	json_t *ns = nodes();
	struct pk_errors errs = {0};
	size_t i;
	json_t *o;

	json_array_foreach(ns, i, o) ck_assert_int_eq(pk_replay_add_node(r, o, &errs), 0);
	json_decref(ns);
}

static bool arrive(struct pk_replay *r, json_t *p)
{
	struct pk_errors errs = {0};
	bool bound = false;

	ck_assert_int_eq(pk_replay_arrive(r, p, &errs, &bound), 0);
	json_decref(p);
	return bound;
}

START_TEST(test_strategy)
{
	struct pk_replay_opts o = {.strategy = "kep", .resource = GPU};
	struct pk_replay *r = NULL;
	struct pk_replay_stats st;

	ck_assert_int_eq(pk_replay_new(&o, &r), 0);
	add_nodes(r);
	ck_assert(arrive(r, pod("one", "1", "1", "Y")));
	ck_assert(!arrive(r, pod("two", "2", "1", NULL))); /* b has one GPU left, a one */
	ck_assert(arrive(r, pod("three", "1", "1", NULL)));
	pk_replay_stats(r, &st);
	ck_assert_int_eq(st.total, 3000);
	ck_assert_int_eq(st.requested, 4000);
	ck_assert_int_eq(st.allocated, 2000);
	ck_assert_uint_eq(st.arrived, 3);
	ck_assert_uint_eq(st.bound, 2);
	pk_replay_free(r);
}
END_TEST

struct seen {
	size_t n;
	char names[4][8];
	int64_t free_cpu[4], req_gpu;
};

/* Takes the last candidate and remembers what it was shown. */
static int pick_last(void *arg, const struct pk_replay_node *cand, size_t n, const int64_t *req)
{
	struct seen *s = arg;

	s->n = n;
	for (size_t i = 0; i < n && i < 4; i++) {
		snprintf(s->names[i], sizeof(s->names[i]), "%s", cand[i].name);
		s->free_cpu[i] = cand[i].free[PK_REPLAY_CPU];
	}
	s->req_gpu = req[PK_REPLAY_ACCEL];
	return (int)n - 1;
}

START_TEST(test_policy_sees_filtered_nodes)
{
	struct seen seen = {0};
	struct pk_replay_opts o = {.resource = GPU, .pick = pick_last, .pick_arg = &seen};
	struct pk_replay *r = NULL;
	struct pk_replay_stats st;

	ck_assert_int_eq(pk_replay_new(&o, &r), 0);
	add_nodes(r);
	ck_assert(arrive(r, pod("x", "1", "2", "X"))); /* only a passes the selector */
	ck_assert_uint_eq(seen.n, 1);
	ck_assert_str_eq(seen.names[0], "a");
	ck_assert_int_eq(seen.req_gpu, 1000);
	ck_assert(arrive(r, pod("any", "1", "3", NULL))); /* a has 2 CPUs left: only b */
	ck_assert_uint_eq(seen.n, 1);
	ck_assert_str_eq(seen.names[0], "b");
	ck_assert_int_eq(seen.free_cpu[0], 8000);
	seen.n = 99;
	ck_assert(!arrive(r, pod("big", "2", "1", NULL))); /* nowhere: not asked */
	ck_assert_uint_eq(seen.n, 99);
	pk_replay_stats(r, &st);
	ck_assert_int_eq(st.allocated, 2000);
	ck_assert_uint_eq(st.bound, 2);
	pk_replay_free(r);
}
END_TEST

START_TEST(test_run_levels)
{
	struct pk_replay_opts o = {.strategy = "fit", .resource = GPU};
	json_t *ns = nodes(),
	       *ps = json_pack("[o, o, o, o]", pod("p0", "2", "1", NULL), pod("p1", "2", "1", NULL),
			       pod("p2", "1", "1", NULL), pod("p3", "1", "1", "X"));
	const double levels[3] = {0.5, 1.0, 2.0};
	double alloc[3] = {-1, -1, -1};
	struct pk_errors errs = {0};

	ck_assert_int_eq(pk_replay_run(&o, ns, ps, levels, 3, alloc, &errs), 0);
	/* p0 (2 of 3 requested): b; p1 (4 of 3) fits nowhere; p2 takes a; p3 finds a taken. */
	ck_assert(alloc[0] > 0.66 && alloc[0] < 0.67);
	ck_assert(alloc[1] > 0.66 && alloc[1] < 0.67);
	ck_assert(alloc[2] == 1.0); /* never reached: after the last pod */
	json_decref(ns);
	json_decref(ps);
}
END_TEST

struct levels_seen {
	size_t n, level[4];
	int64_t allocated[4], parts[4];
};

static void note_level(void *arg, size_t level, const struct pk_replay_stats *st)
{
	struct levels_seen *s = arg;

	if (s->n < 4) {
		s->level[s->n] = level;
		s->allocated[s->n] = st->allocated;
		s->parts[s->n] = st->parts;
	}
	s->n++;
}

START_TEST(test_levels_hook_parts)
{
	struct levels_seen seen = {0};
	struct pk_replay_opts o = {
	    .strategy = "fit", .resource = GPU, .on_level = note_level, .level_arg = &seen};
	json_t *ns = nodes(), *ps = json_pack("[o, o]", pod("share", "300m", "1", NULL),
					      pod("whole", "1", "1", NULL));
	const double levels[3] = {0.1, 0.4, 2.0};
	double alloc[3] = {-1, -1, -1};
	struct pk_errors errs = {0};

	ck_assert_int_eq(pk_replay_run(&o, ns, ps, levels, 3, alloc, &errs), 0);
	/* each level once, in order, the last one after the last pod */
	ck_assert_uint_eq(seen.n, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_uint_eq(seen.level[i], i);
	/* the share leaves 700m on its device: free, but only for a share */
	ck_assert_int_eq(seen.allocated[0], 300);
	ck_assert_int_eq(seen.parts[0], 700);
	/* the whole GPU takes an untouched device, the part stays */
	ck_assert_int_eq(seen.allocated[1], 1300);
	ck_assert_int_eq(seen.parts[1], 700);
	ck_assert_int_eq(seen.parts[2], 700);
	ck_assert(alloc[0] > 0.09 && alloc[0] < 0.11);
	json_decref(ns);
	json_decref(ps);
}
END_TEST

START_TEST(test_refused)
{
	struct pk_replay_opts none = {.strategy = "kep"},
			      bad = {.strategy = "nope", .resource = GPU},
			      ok = {.strategy = "kep", .resource = GPU};
	struct pk_replay *r = NULL;
	struct pk_errors errs = {0};
	json_t *p = pod("same", "1", "1", NULL);

	ck_assert_int_eq(pk_replay_new(NULL, &r), -EINVAL);
	ck_assert_int_eq(pk_replay_new(&none, &r), -EINVAL);
	ck_assert_int_eq(pk_replay_new(&bad, &r), -ENOENT);
	ck_assert_int_eq(pk_replay_new(&ok, &r), 0);
	add_nodes(r);
	ck_assert_int_eq(pk_replay_arrive(r, p, &errs, NULL), 0);
	ck_assert_int_eq(pk_replay_arrive(r, p, &errs, NULL), -EEXIST);
	json_decref(p);
	p = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
		      "name", "cm");
	ck_assert_int_eq(pk_replay_arrive(r, p, &errs, NULL), -EINVAL);
	json_decref(p);
	pk_errors_clear(&errs);
	pk_replay_free(r);
	pk_replay_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-replay");
	TCase *tc = tcase_create("replay");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_strategy);
	tcase_add_test(tc, test_policy_sees_filtered_nodes);
	tcase_add_test(tc, test_run_levels);
	tcase_add_test(tc, test_levels_hook_parts);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
