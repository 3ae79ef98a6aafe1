/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_placement.c — property tests of the placement strategies on random
 * small fragmented instances (gen_placement.h): each instance is scheduled
 * for one cycle by the default strategy, by "kep" and by the exhaustive
 * oracle, with the snapshot invariant checked after every cycle.
 *
 *   every strategy's result is valid (capacity, gang minimums, topology);
 *   the default succeeds whenever kep does (never worse than the KEP), and
 *   when both do, it binds at least as many pods;
 *   nothing succeeds where the oracle proves no placement exists;
 *   the default succeeds on at least 97% of what the oracle places.
 *
 * Seeds are fixed; a failure names the instance.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kernel/sched/gen_placement.h"

#define INSTANCES 1000

START_TEST(test_default_vs_kep_vs_oracle)
{
	int fit_ok = 0, kep_ok = 0, ex_ok = 0;
	const char *def = pk_sched_strategy_name(0);

	for (int it = 0; it < INSTANCES; it++) {
		struct gp_inst in;
		char why[256];
		size_t fb = 0, kb = 0;
		int f, k, x;

		gp_generate(&in, 0x5eed0000u + (unsigned)it);
		f = gp_run_bound(&in, NULL, why, sizeof(why), &fb);
		ck_assert_msg(f >= 0, "instance %d: %s invalid: %s", it, def, why);
		k = gp_run_bound(&in, "kep", why, sizeof(why), &kb);
		ck_assert_msg(k >= 0, "instance %d: kep invalid: %s", it, why);
		x = gp_run(&in, "exhaustive", why, sizeof(why));
		ck_assert_msg(x >= 0, "instance %d: exhaustive invalid: %s", it, why);
		ck_assert_msg(!k || f, "instance %d: kep succeeds, %s fails", it, def);
		/* When both place the root, the default binds at least as many pods. */
		ck_assert_msg(!k || !f || fb >= kb, "instance %d: %s binds %zu pods, kep %zu", it,
			      def, fb, kb);
		ck_assert_msg(!f || x, "instance %d: %s succeeds, the oracle says impossible", it,
			      def);
		ck_assert_msg(!k || x, "instance %d: kep succeeds, the oracle says impossible", it);
		fit_ok += f;
		kep_ok += k;
		ex_ok += x;
	}
	fprintf(stderr, "placement: %d instances, roots scheduled: %s %d, kep %d, exhaustive %d\n",
		INSTANCES, def, fit_ok, kep_ok, ex_ok);
	ck_assert_int_ge(fit_ok, kep_ok);
	ck_assert_msg(fit_ok * 100 >= ex_ok * 97, "%s %d of oracle %d", def, fit_ok, ex_ok);
}
END_TEST

struct text {
	char *s;
	size_t n, cap;
};

static void grab(void *arg, const char *line)
{
	struct text *t = arg;
	size_t l = strlen(line);

	if (t->n + l + 2 > t->cap) {
		t->cap = (t->n + l + 2) * 2;
		t->s = realloc(t->s, t->cap);
		ck_assert_ptr_nonnull(t->s);
	}
	memcpy(t->s + t->n, line, l);
	t->n += l;
	t->s[t->n++] = '\n';
	t->s[t->n] = '\0';
}

static void add(struct pk_sched *s, json_t *o)
{
	struct pk_errors errs = {0};

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pk_sched_add(s, o, &errs), 0);
	pk_errors_clear(&errs);
	json_decref(o);
}

/*
 * Twelve rack-bound gangs of 3 pods need twelve racks; there are ten of 5
 * slots (capacity in total, but not per rack).  The search space is
 * factorial: the budget stops it, the trace says so, nothing is bound and
 * the snapshot is back to its committed state.
 */
START_TEST(test_budget_runs_out)
{
	struct pk_sched_opts opts = {.check = true, .trace = grab};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;
	struct text t = {0};
	char why[256];

	opts.trace_arg = &t;
	ck_assert_int_eq(pk_sched_new(&opts, &s), 0);
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < 5; i++) {
			char name[16], rack[16];

			snprintf(name, sizeof(name), "r%d-n%d", r, i);
			snprintf(rack, sizeof(rack), "r%d", r);
			add(s, json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s}}}", "apiVersion",
					 "v1", "kind", "Node", "metadata", "name", name, "labels",
					 "rack", rack, "status", "allocatable", "cpu", "1"));
		}
	add(s, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s}, s:{s:{s:i}}}}", "apiVersion",
			 "scheduling.k8s.io/v1alpha3", "kind", "CompositePodGroup", "metadata",
			 "name", "root", "spec", "workloadRef", "workloadName", "w", "templateName",
			 "root", "schedulingPolicy", "gang", "minGroupCount", 12));
	for (int g = 0; g < 12; g++) {
		char name[16];

		snprintf(name, sizeof(name), "g%d", g);
		add(s, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s}, s:s, s:{s:{s:i}}, "
				 "s:{s:[{s:s}]}}}",
				 "apiVersion", "scheduling.k8s.io/v1alpha3", "kind", "PodGroup",
				 "metadata", "name", name, "spec", "workloadRef", "workloadName",
				 "w", "templateName", name, "parentCompositePodGroupName", "root",
				 "schedulingPolicy", "gang", "minCount", 3, "schedulingConstraints",
				 "topology", "key", "rack"));
		for (int p = 0; p < 3; p++) {
			char pod[24];

			snprintf(pod, sizeof(pod), "g%d-%d", g, p);
			add(s,
			    json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}, s:[{s:s, "
				      "s:{s:{s:s}}}]}}",
				      "apiVersion", "v1", "kind", "Pod", "metadata", "name", pod,
				      "spec", "schedulingGroup", "podGroupName", name, "containers",
				      "name", "c", "resources", "requests", "cpu", "1"));
		}
	}
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_ne(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 0);
	for (size_t i = 0; i < res->nactions; i++)
		ck_assert_int_ne(res->actions[i].action, PK_SCHED_BIND);
	ck_assert_ptr_nonnull(t.s);
	ck_assert_msg(strstr(t.s, "search budget of") != NULL, "no budget line in the trace");
	ck_assert_msg(strstr(t.s, "fit search found no placement within its budget") != NULL,
		      "no fallback line in the trace");
	ck_assert_int_eq(pk_sched_check(s, why, sizeof(why)), 0);
	pk_sched_result_free(res);
	pk_sched_free(s);
	free(t.s);
}
END_TEST

/* The exhaustive oracle is not offered to users, but is found by name. */
START_TEST(test_oracle_hidden)
{
	struct pk_sched *s = NULL;
	struct pk_sched_opts opts = {.strategy = "exhaustive"};

	for (size_t i = 0; i < pk_sched_strategy_count(); i++)
		ck_assert_str_ne(pk_sched_strategy_name(i), "exhaustive");
	ck_assert_str_eq(pk_sched_strategy_name(0), "fit");
	ck_assert_int_eq(pk_sched_new(&opts, &s), 0);
	pk_sched_free(s);
}
END_TEST

struct stats {
	double generated, evaluated;
	int searches, gated, in_place, whole;
};

static void count_stat(void *arg, enum pk_sched_stat stat, double value, const char *root)
{
	struct stats *st = arg;

	switch (stat) {
	case PK_SCHED_STAT_GENERATED:
		st->generated += value;
		break;
	case PK_SCHED_STAT_EVALUATED:
		st->evaluated += value;
		break;
	case PK_SCHED_STAT_SEARCH:
		ck_assert(value >= 0);
		st->searches++;
		break;
	case PK_SCHED_STAT_ROOT_GATED:
		ck_assert_str_eq(root, "PodGroup default/g");
		st->gated++;
		break;
	case PK_SCHED_STAT_REPAIR_IN_PLACE:
		st->in_place++;
		break;
	case PK_SCHED_STAT_REPAIR_WHOLE:
		st->whole++;
		break;
	}
}

static json_t *rack_gang(const char *name, int min)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s}, s:{s:{s:i}}, s:{s:[{s:s}]}}}",
			 "apiVersion", "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata",
			 "name", name, "spec", "workloadRef", "workloadName", "w", "templateName",
			 name, "schedulingPolicy", "gang", "minCount", min, "schedulingConstraints",
			 "topology", "key", "rack");
}

static json_t *gang_pod(const char *name, const char *group)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}, s:[{s:s, s:{s:{s:s}}}]}}", "apiVersion",
			 "v1", "kind", "Pod", "metadata", "name", name, "spec", "schedulingGroup",
			 "podGroupName", group, "containers", "name", "c", "resources", "requests",
			 "cpu", "1");
}

/*
 * Both strategies report their placement statistics without tracing: a
 * rack-bound gang over three racks generates one to three candidates (both
 * strategies stop at a perfect one), simulates at least one, and its search
 * is timed once; a gang short of pods is reported as gated by PreEnqueue.
 */
START_TEST(test_stats_reported)
{
	for (size_t k = 0; k < 2; k++) {
		struct stats st = {0};
		struct pk_sched_opts opts = {.check = true,
					     .strategy = k ? "kep" : NULL,
					     .stat = count_stat,
					     .stat_arg = &st};
		struct pk_sched *s = NULL;
		struct pk_sched_result *res = NULL;

		ck_assert_int_eq(pk_sched_new(&opts, &s), 0);
		for (int r = 0; r < 3; r++)
			for (int i = 0; i < 2; i++) {
				char name[16], rack[8];

				snprintf(name, sizeof(name), "r%d-n%d", r, i);
				snprintf(rack, sizeof(rack), "r%d", r);
				add(s, json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s}}}",
						 "apiVersion", "v1", "kind", "Node", "metadata",
						 "name", name, "labels", "rack", rack, "status",
						 "allocatable", "cpu", "1"));
			}
		add(s, rack_gang("g", 3)); /* 2 of 3 pods: gated */
		add(s, gang_pod("g-0", "g"));
		add(s, gang_pod("g-1", "g"));
		ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
		pk_sched_result_free(res);
		ck_assert_int_eq(st.gated, 1);
		ck_assert_int_eq(st.searches, 0);

		add(s, rack_gang("h", 2));
		add(s, gang_pod("h-0", "h"));
		add(s, gang_pod("h-1", "h"));
		for (int c = 0; c < 3; c++) {
			ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
			pk_sched_result_free(res);
		}
		/* both stop early at a perfect candidate: between one and three racks */
		ck_assert_msg(st.generated >= 1 && st.generated <= 3, "%s: %g generated",
			      opts.strategy ?: "fit", st.generated);
		ck_assert(st.evaluated >= 1 && st.evaluated <= st.generated);
		ck_assert_int_eq(st.searches, 1);
		pk_sched_free(s);
	}
}
END_TEST

/* One cycle: the rack its pods were bound to ("" none, "mixed") and the repair condition. */
static void repair_cycle(struct pk_sched *s, char rack[16], char reason[32])
{
	struct pk_sched_result *res = NULL;

	rack[0] = reason[0] = '\0';
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	for (size_t i = 0; i < res->nactions; i++) {
		const struct pk_sched_action *a = &res->actions[i];

		if (a->action == PK_SCHED_BIND) {
			const char *dash = strchr(a->node, '-');
			char r[16];

			snprintf(r, sizeof(r), "%.*s", (int)(dash - a->node), a->node);
			if (!rack[0])
				snprintf(rack, 16, "%s", r);
			else if (strcmp(rack, r) != 0)
				snprintf(rack, 16, "mixed");
		}
		if (a->action == PK_SCHED_CONDITION && strcmp(a->type, "PodGroupRepaired") == 0)
			snprintf(reason, 32, "%s", a->reason);
	}
	pk_sched_result_free(res);
}

/* The gang's pods lost (a node gone, a drain) and made again, pending. */
static void lose_pods(struct pk_sched *s)
{
	for (int i = 0; i < 2; i++) {
		char name[8];

		snprintf(name, sizeof(name), "h-%d", i);
		ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", name), 0);
		add(s, gang_pod(name, "h"));
	}
}

/*
 * Repair in the same domain, both strategies.  Rack ra holds a gang of two
 * exactly (a fresh placement's best); rb holds four.  A gang whose
 * home-domain annotation says rb goes back to rb (RepairedInPlace); its pods
 * lost, it goes back to rb again, remembered; once rb has no room it is
 * placed whole in ra (ReplacedWhole).  A gang without a home is not a repair.
 */
START_TEST(test_repair_in_home_domain)
{
	for (size_t k = 0; k < 2; k++) {
		struct stats st = {0};
		struct pk_sched_opts opts = {.check = true,
					     .strategy = k ? "kep" : NULL,
					     .stat = count_stat,
					     .stat_arg = &st};
		struct pk_sched *s = NULL;
		char rack[16], reason[32];
		json_t *g = rack_gang("h", 2);

		ck_assert_int_eq(pk_sched_new(&opts, &s), 0);
		for (int r = 0; r < 2; r++)
			for (int i = 0; i < (r ? 4 : 2); i++) {
				char name[16];

				snprintf(name, sizeof(name), "r%c-n%d", r ? 'b' : 'a', i);
				add(s, json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s}}}",
						 "apiVersion", "v1", "kind", "Node", "metadata",
						 "name", name, "labels", "rack", r ? "rb" : "ra",
						 "status", "allocatable", "cpu", "1"));
			}
		json_object_set_new(
		    json_object_get(g, "metadata"), "annotations",
		    json_pack("{s:s}", "scheduling.podkernel.dev/home-domain", "rb"));
		add(s, g);
		add(s, gang_pod("h-0", "h"));
		add(s, gang_pod("h-1", "h"));
		repair_cycle(s, rack, reason);
		ck_assert_str_eq(rack, "rb");
		ck_assert_str_eq(reason, "RepairedInPlace");

		lose_pods(s); /* remembered from the committed placement */
		repair_cycle(s, rack, reason);
		ck_assert_str_eq(rack, "rb");
		ck_assert_str_eq(reason, "RepairedInPlace");

		lose_pods(s);
		for (int i = 1; i < 4; i++) {
			char name[16];

			snprintf(name, sizeof(name), "rb-n%d", i);
			ck_assert_int_eq(pk_sched_remove(s, &pk_type_node, NULL, name), 0);
		}
		repair_cycle(s, rack, reason);
		ck_assert_str_eq(rack, "ra");
		ck_assert_str_eq(reason, "ReplacedWhole");
		ck_assert_int_eq(st.in_place, 2);
		ck_assert_int_eq(st.whole, 1);

		add(s, rack_gang("fresh", 1));
		add(s, gang_pod("fresh-0", "fresh"));
		repair_cycle(s, rack, reason);
		ck_assert_str_eq(rack, "rb");
		ck_assert_str_eq(reason, "");
		pk_sched_free(s);
	}
}
END_TEST

/*
 * A group deleted and made again under its name (a JobSet restart) takes
 * its home back: gang k went to rb while ra was full; ra is free again, a
 * fresh placement's best, yet k made again goes back to rb.
 */
START_TEST(test_home_survives_recreation)
{
	for (size_t k = 0; k < 2; k++) {
		struct pk_sched_opts opts = {.check = true, .strategy = k ? "kep" : NULL};
		struct pk_sched *s = NULL;
		char rack[16], reason[32];

		ck_assert_int_eq(pk_sched_new(&opts, &s), 0);
		for (int r = 0; r < 2; r++)
			for (int i = 0; i < (r ? 4 : 2); i++) {
				char name[16];

				snprintf(name, sizeof(name), "r%c-n%d", r ? 'b' : 'a', i);
				add(s, json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s}}}",
						 "apiVersion", "v1", "kind", "Node", "metadata",
						 "name", name, "labels", "rack", r ? "rb" : "ra",
						 "status", "allocatable", "cpu", "1"));
			}
		add(s, rack_gang("f", 2));
		add(s, gang_pod("f-0", "f"));
		add(s, gang_pod("f-1", "f"));
		repair_cycle(s, rack, reason);
		ck_assert_str_eq(rack, "ra");
		add(s, rack_gang("k", 2));
		add(s, gang_pod("k-0", "k"));
		add(s, gang_pod("k-1", "k"));
		repair_cycle(s, rack, reason);
		ck_assert_str_eq(rack, "rb");
		ck_assert_str_eq(reason, "");
		for (int i = 0; i < 2; i++) {
			char f[8], kk[8];

			snprintf(f, sizeof(f), "f-%d", i);
			snprintf(kk, sizeof(kk), "k-%d", i);
			ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", f), 0);
			ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", kk), 0);
		}
		ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod_group, "default", "f"), 0);
		ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod_group, "default", "k"), 0);
		add(s, rack_gang("k", 2));
		add(s, gang_pod("k-0", "k"));
		add(s, gang_pod("k-1", "k"));
		repair_cycle(s, rack, reason);
		ck_assert_str_eq(rack, "rb");
		ck_assert_str_eq(reason, "RepairedInPlace");
		pk_sched_free(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("placement");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_default_vs_kep_vs_oracle);
	tcase_add_test(tc, test_oracle_hidden);
	tcase_add_test(tc, test_budget_runs_out);
	tcase_add_test(tc, test_stats_reported);
	tcase_add_test(tc, test_repair_in_home_domain);
	tcase_add_test(tc, test_home_survives_recreation);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
