/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_random.c — randomized property tests of the whole scheduling core.
 * Random clusters and hierarchies (cycles, missing parents, invalid mixes,
 * bound and deleting pods, priorities, topology keys) are scheduled to
 * quiescence; random add/update/remove/cycle sequences are run on one
 * scheduler.  The snapshot and forest invariants are checked after every
 * cycle and every step, and the sanitizers watch memory.  Seeds are fixed,
 * so a failure names a reproducible iteration.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched.h"
#include "kernel/sched/sched-strand.h"

static unsigned seed;
static int rnd(int n)
{
	return (int)(rand_r(&seed) % (unsigned)n);
}

/* Random cluster number it: nodes, groups and pods, some bound. */
static json_t *random_cluster(int it)
{
	seed = (unsigned)it * 7919u + 1;
	json_t *objs = json_array();
	int nn = 1 + rnd(24), ng = rnd(14), np = rnd(60);
	for (int i = 0; i < nn; i++) {
		char name[16], rack[16], blk[16];
		snprintf(name, sizeof name, "n%d", i);
		snprintf(rack, sizeof rack, "r%d", rnd(4));
		snprintf(blk, sizeof blk, "b%d", rnd(2));
		json_t *n = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s}},s:{s:{s:s,s:s}}}", "apiVersion",
				      "v1", "kind", "Node", "metadata", "name", name, "labels",
				      "rack", rack, "block", blk, "status", "allocatable", "cpu",
				      rnd(2) ? "2" : "4", "pods", "3");
		if (rnd(5) == 0)
			json_object_set_new(n, "spec", json_pack("{s:b}", "unschedulable", 1));
		json_array_append_new(objs, n);
	}
	for (int i = 0; i < ng; i++) {
		char name[16], parent[16];
		int comp = rnd(2);
		snprintf(name, sizeof name, "g%d", i);
		snprintf(parent, sizeof parent, "g%d", rnd(ng + 2));
		json_t *g = json_pack(
		    "{s:s,s:s,s:{s:s},s:{s:{s:s,s:s}}}", "apiVersion", "scheduling.k8s.io/v1alpha3",
		    "kind", comp ? "CompositePodGroup" : "PodGroup", "metadata", "name", name,
		    "spec", "workloadRef", "workloadName", rnd(8) ? "w" : "x", "templateName", "t");
		json_t *spec = json_object_get(g, "spec");
		if (rnd(3))
			json_object_set_new(spec, "parentCompositePodGroupName",
					    json_string(parent));
		if (rnd(3))
			json_object_set_new(spec, "schedulingPolicy",
					    json_pack("{s:{s:i}}", "gang",
						      comp ? "minGroupCount" : "minCount",
						      1 + rnd(3)));
		else
			json_object_set_new(spec, "schedulingPolicy", json_pack("{s:{}}", "basic"));
		if (rnd(3) == 0)
			json_object_set_new(
			    spec, "schedulingConstraints",
			    json_pack("{s:[{s:s}]}", "topology", "key", rnd(2) ? "rack" : "block"));
		if (rnd(3) == 0)
			json_object_set_new(spec, "disruptionMode",
					    json_pack("{s:{}}", rnd(2) ? "all" : "single"));
		if (rnd(6) == 0)
			json_object_set_new(spec, "priority", json_integer(rnd(3) * 10));
		json_array_append_new(objs, g);
	}
	for (int i = 0; i < np; i++) {
		char name[16], grp[16], node[16];
		snprintf(name, sizeof name, "p%d", i);
		snprintf(grp, sizeof grp, "g%d", rnd(ng + 1));
		snprintf(node, sizeof node, "n%d", rnd(nn + 1));
		json_t *p = json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:{s:{s:s}}}],s:i}}",
				      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
				      "spec", "containers", "name", "c", "resources", "requests",
				      "cpu", rnd(2) ? "1" : "2", "priority", rnd(3) * 10);
		json_t *spec = json_object_get(p, "spec");
		if (rnd(4))
			json_object_set_new(spec, "schedulingGroup",
					    json_pack("{s:s}", "podGroupName", grp));
		if (rnd(4) == 0)
			json_object_set_new(spec, "nodeName", json_string(node));
		if (rnd(6) == 0)
			json_object_set_new(spec, "nodeSelector", json_pack("{s:s}", "rack", "r1"));
		json_array_append_new(objs, p);
	}
	return objs;
}

START_TEST(test_random_offline)
{
	int iters = 300;

	for (int it = 0; it < iters; it++) {
		json_t *objs = random_cluster(it);
		struct pk_sched_opts o = {.check = true};
		struct pk_errors errs = {0};
		json_t *out = NULL, *pre = NULL;
		int r = pk_sched_run(objs, &o, &out, &pre, &errs);
		ck_assert_msg(r == 0, "iteration %d: %d %s", it, r, errs.n ? errs.msg[0] : "");
		pk_errors_clear(&errs);
		json_decref(out);
		json_decref(pre);
		json_decref(objs);
	}
}
END_TEST

/* What a run decided: "pod=node" of each pod, "-pod" of each preempted one, in order. */
static char *decided(const json_t *out, const json_t *pre)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	size_t i;
	json_t *o;

	ck_assert_ptr_nonnull(f);
	json_array_foreach(out, i, o) if (pk_kind_of(o) == PK_KIND_POD)
	    fprintf(f, "%s=%s ", pk_name(o), pk_get_string(o, "spec.nodeName") ?: "");
	json_array_foreach(pre, i, o) fprintf(f, "-%s ", pk_name(o));
	fclose(f);
	return text;
}

/*
 * A cache of decoded objects (pk_sched_opts.decoded) changes nothing: the
 * same clusters run with it, twice (the second time every view is the kept
 * one), and after a sweep, decide as runs without it.
 */
START_TEST(test_random_decoded)
{
	struct pk_sched_decoded *d = NULL;

	ck_assert_int_eq(pk_sched_decoded_new(&d), 0);
	for (int it = 0; it < 120; it++) {
		json_t *objs = random_cluster(it);
		char *want = NULL;

		for (int k = 0; k < 3; k++) {
			struct pk_sched_opts o = {.check = true, .decoded = k ? d : NULL};
			struct pk_errors errs = {0};
			json_t *out = NULL, *pre = NULL;
			int r = pk_sched_run_shared(objs, &o, &out, &pre, &errs);
			char *got;

			ck_assert_msg(r == 0, "iteration %d: %d", it, r);
			got = decided(out, pre);
			if (!want)
				want = got;
			else {
				ck_assert_msg(strcmp(want, got) == 0,
					      "iteration %d run %d: %s, not %s", it, k, got, want);
				free(got);
			}
			pk_errors_clear(&errs);
			json_decref(out);
			json_decref(pre);
		}
		if (it % 3 == 0)
			pk_sched_decoded_sweep(d); /* the clusters before go */
		free(want);
		json_decref(objs);
	}
	pk_sched_decoded_free(d);
}
END_TEST

/* Whether a run placed every pod and preempted none (a placement check that passed). */
static bool all_bound(const json_t *out, const json_t *pre)
{
	size_t i;
	json_t *o;

	if (json_array_size(pre))
		return false;
	json_array_foreach(out, i, o) if (pk_kind_of(o) == PK_KIND_POD &&
					  !pk_get_string(o, "spec.nodeName")) return false;
	return true;
}

/* v without the times of its conditions (the clock moves between runs). */
static void drop_times(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	json_object_del(v, "lastTransitionTime");
	json_object_foreach(v, k, x) drop_times(x);
	json_array_foreach(v, i, x) drop_times(x);
}

/* Whether two runs wrote the same objects. */
static bool same_objects(const json_t *a, const json_t *b)
{
	json_t *x = json_deep_copy(a), *y = json_deep_copy(b);
	bool same;

	drop_times(x);
	drop_times(y);
	same = json_equal(x, y);
	json_decref(x);
	json_decref(y);
	return same;
}

/* A run on a kept or carried scheduler decided and wrote what a new one did. */
static void assert_same_run(int it, int try, const json_t *fout, const json_t *fpre,
			    const json_t *kout, const json_t *kpre)
{
	char *want = decided(fout, fpre), *got = decided(kout, kpre);

	ck_assert_msg(strcmp(want, got) == 0, "iteration %d try %d: %s, not %s", it, try, got,
		      want);
	ck_assert_msg(same_objects(fout, kout), "iteration %d try %d: objects differ", it, try);
	free(want);
	free(got);
}

/* Accelerators on nodes and pods, and hard spread over racks, on some pods of objs. */
static void add_features(json_t *objs, bool gpus)
{
	size_t i;
	json_t *o;

	json_array_foreach(objs, i, o)
	{
		json_t *req = json_object_get(
		    json_object_get(json_array_get(pk_get(o, "spec.containers"), 0), "resources"),
		    "requests");

		if (pk_kind_of(o) == PK_KIND_NODE && gpus)
			json_object_set_new((json_t *)pk_get(o, "status.allocatable"),
					    "nvidia.com/gpu", json_string(rnd(2) ? "4" : "8"));
		if (pk_kind_of(o) == PK_KIND_NODE) { /* room for most candidates */
			json_object_set_new((json_t *)pk_get(o, "status.allocatable"), "pods",
					    json_string("12"));
			json_object_set_new((json_t *)pk_get(o, "status.allocatable"), "cpu",
					    json_string(rnd(2) ? "8" : "12"));
		}
		if (pk_kind_of(o) != PK_KIND_POD)
			continue;
		json_object_set_new(json_object_get(o, "metadata"), "labels",
				    json_pack("{s:s}", "app", rnd(2) ? "a" : "b"));
		if (req && gpus && rnd(2))
			json_object_set_new(req, "nvidia.com/gpu", json_string(rnd(2) ? "1" : "4"));
		if (rnd(4) == 0)
			json_object_set_new(json_object_get(o, "spec"), "topologySpreadConstraints",
					    json_pack("[{s:i,s:s,s:s,s:{s:{s:s}}}]", "maxSkew",
						      1 + rnd(2), "topologyKey", "rack",
						      "whenUnsatisfiable", "DoNotSchedule",
						      "labelSelector", "matchLabels", "app", "a"));
	}
}

/* n more nodes with room, in four racks. */
static void add_nodes(json_t *objs, int n)
{
	for (int i = 0; i < n; i++) {
		char name[16], rack[16];

		snprintf(name, sizeof name, "x%d", i);
		snprintf(rack, sizeof rack, "r%d", i % 4);
		json_array_append_new(
		    objs, json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:{s:s,s:s,s:s}}}", "apiVersion",
				    "v1", "kind", "Node", "metadata", "name", name, "labels",
				    "rack", rack, "status", "allocatable", "cpu", "8", "pods", "12",
				    "nvidia.com/gpu", "8"));
	}
}

/* The next candidate of cands at *c into in: an unbound pod, with those of its group. */
static void take_candidate(json_t *in, json_t *cands, size_t *c)
{
	const char *g =
	    pk_get_string(json_array_get(cands, *c), "spec.schedulingGroup.podGroupName");

	json_array_append(in, json_array_get(cands, (*c)++));
	for (size_t i = *c; g && i < json_array_size(cands); i++) {
		json_t *o = json_array_get(cands, i);
		const char *h = pk_get_string(o, "spec.schedulingGroup.podGroupName");

		if (h && strcmp(g, h) == 0) {
			json_array_append(in, o);
			json_array_remove(cands, i--);
		}
	}
}

/*
 * Placement checks on a kept scheduler (pk_sched_run_kept) decide as new
 * schedulers do: the unbound pods of a random cluster come a few at a time
 * as candidates to its bound ones; a candidate that is placed whole stays
 * (the next runs on the kept scheduler), one that is not goes, and with it
 * the kept scheduler.  Each run is compared with pk_sched_run_shared().
 */
/*
 * Iteration it's random cluster with its features (from seed s), split into
 * what stands (base) and the unbound pods to try one by one (cands).
 */
static void split_cluster(json_t *objs, int it, unsigned s, json_t *base, json_t *cands)
{
	size_t i;
	json_t *o;

	seed = s;
	add_features(objs, it % 2);
	if (it % 40 == 0)
		add_nodes(objs, 1100); /* past fit's sampling scope: its rotating scan */
	json_array_foreach(objs, i, o) json_array_append(
	    pk_kind_of(o) == PK_KIND_POD && !pk_get_string(o, "spec.nodeName") ? cands : base, o);
}

START_TEST(test_random_kept)
{
	int tries = 0, kept_runs = 0;

	for (int it = 0; it < 240; it++) {
		json_t *objs = random_cluster(it), *base = json_array(), *cands = json_array();
		struct pk_sched *s = NULL;

		split_cluster(objs, it, (unsigned)it * 31u + 7, base, cands);
		for (size_t c = 0; c < json_array_size(cands); tries++) {
			json_t *in = json_array(), *fout = NULL, *fpre = NULL, *kout = NULL,
			       *kpre = NULL;
			struct pk_sched_opts opts = {.check = true};
			struct pk_errors errs = {0};
			size_t from = s ? json_array_size(base) : 0;

			json_array_extend(in, base);
			take_candidate(in, cands, &c);
			ck_assert_int_eq(pk_sched_run_shared(in, &opts, &fout, &fpre, &errs), 0);
			kept_runs += s != NULL;
			ck_assert_int_eq(
			    pk_sched_run_kept(&s, in, from, &opts, &kout, &kpre, &errs), 0);
			assert_same_run(it, tries, fout, fpre, kout, kpre);
			if (all_bound(fout, fpre)) {
				ck_assert_ptr_nonnull(s); /* kept: it holds the new base */
				json_decref(base);
				base = json_incref(kout);
			} else {
				ck_assert_ptr_null(s); /* pods left waiting: not kept */
			}
			pk_errors_clear(&errs);
			json_decref(in);
			json_decref(fout);
			json_decref(fpre);
			json_decref(kout);
			json_decref(kpre);
		}
		pk_sched_free(s);
		json_decref(base);
		json_decref(cands);
		json_decref(objs);
	}
	fprintf(stderr, "%d of %d runs on a kept scheduler\n", kept_runs, tries);
	ck_assert_int_gt(kept_runs, tries / 4); /* many runs were on a kept scheduler */
}
END_TEST

/* A bound pod of base, as the store would hold it after a pass: the same, gone, moved or new. */
static void churn_pod(json_t *base, size_t i, size_t first, int pass, int *nodes)
{
	json_t *o = json_array_get(base, i), *copy;
	char name[32];

	switch (rnd(8)) {
	case 0: /* its job ended */
		json_array_remove(base, i);
		break;
	case 1: /* bound elsewhere than its check placed it */
		copy = json_deep_copy(o);
		snprintf(name, sizeof name, "n%d", rnd(*nodes));
		json_object_set_new(json_object_get(copy, "spec"), "nodeName", json_string(name));
		json_array_set_new(base, i, copy);
		break;
	case 2: /* the same pod, a new version of it */
		json_array_set_new(base, i, json_deep_copy(o));
		break;
	case 3: /* a new pod, bound, somewhere among the listing's pods (they follow the rest) */
		if (i < first)
			break;
		copy = json_deep_copy(o);
		snprintf(name, sizeof name, "q%d-%zu", pass, i);
		json_object_set_new(json_object_get(copy, "metadata"), "name", json_string(name));
		json_array_insert_new(base, first + (size_t)rnd((int)(i - first) + 1), copy);
		break;
	}
}

/*
 * base as the store would list it at the next pass: pods churned, groups
 * and (now and then) Nodes in new versions.
 */
static void churn(json_t *base, int pass)
{
	size_t i, first = 0;
	int nodes = 0;
	json_t *o;

	json_array_foreach(base, i, o)
	{
		nodes += pk_kind_of(o) == PK_KIND_NODE;
		if (pk_kind_of(o) != PK_KIND_POD)
			first = i + 1; /* the pods after the last of the rest */
	}
	for (i = json_array_size(base); i-- > 0;) {
		o = json_array_get(base, i);
		if (pk_kind_of(o) == PK_KIND_POD && pk_get_string(o, "spec.nodeName"))
			churn_pod(base, i, first, pass, &nodes);
		else if (pk_kind_of(o) == PK_KIND_NODE && rnd(200) == 0) /* not carried */
			json_array_set_new(base, i, json_deep_copy(o));
		else if ((pk_kind_of(o) == PK_KIND_POD_GROUP ||
			  pk_kind_of(o) == PK_KIND_COMPOSITE_POD_GROUP) &&
			 rnd(10) == 0) /* a new version of a group, or (seldom) gone */
			rnd(4) ? json_array_set_new(base, i, json_deep_copy(o))
			       : json_array_remove(base, i);
	}
}

/*
 * The workload profile of s, carried (its objects' kinds and keys read from
 * the memo of the carry before), is exactly a new scheduler's of objs, the
 * objects it holds, added in their order.
 */
static void assert_same_profile(const struct pk_sched *s, const json_t *objs)
{
	struct pk_sched_opts opts = {.check = true};
	struct pk_errors errs = {0};
	struct pk_sched *f = NULL;
	const struct sc_profile *a, *b = &s->profile;
	size_t i;
	json_t *o;

	ck_assert_int_eq(pk_sched_new(&opts, &f), 0);
	json_array_foreach(objs, i, o)
	{
		if (!sc_other_scheduler(o))
			ck_assert_int_eq(pk_sched_add(f, o, &errs), 0);
	}
	a = &f->profile;
	ck_assert_int_eq(a->n, b->n);
	ck_assert(a->seen == b->seen && a->total == b->total);
	for (int k = 0; k < a->n; k++) {
		const struct sc_profile_class *x = &a->c[k], *y = &b->c[k];

		ck_assert(x->res == y->res && x->devices == y->devices && x->nmodels == y->nmodels);
		ck_assert(x->weight == y->weight && x->cpu == y->cpu && x->mem == y->mem);
		ck_assert(x->cpu2 == y->cpu2 && x->mem2 == y->mem2);
	}
	pk_errors_clear(&errs);
	pk_sched_free(f);
}

/*
 * Placement checks on a scheduler carried from pass to pass
 * (pk_sched_run_carried) decide as new schedulers do: between two checks
 * the cluster changes as a store's would (pods gone, moved, new in the
 * middle of the listing's order, a Node now and then), and each check on
 * the scheduler of the last, fed what changed, is compared with
 * pk_sched_run_shared() of the same objects.
 */
START_TEST(test_random_carried)
{
	int tries = 0, carried = 0;

	for (int it = 0; it < 160; it++) {
		json_t *objs = random_cluster(it), *base = json_array(), *cands = json_array(), *o;
		json_t *held = NULL;
		struct pk_sched *s = NULL;

		split_cluster(objs, it, (unsigned)it * 131u + 5, base, cands);
		for (size_t c = 0; c < json_array_size(cands); tries++) {
			json_t *in = json_array(), *fout = NULL, *fpre = NULL, *kout = NULL,
			       *kpre = NULL;
			struct pk_sched_opts opts = {.check = true};
			struct pk_errors errs = {0};
			size_t from;
			int r;

			o = json_copy(base); /* a new listing: held stays as it was */
			json_decref(base);
			base = o;
			churn(base, tries);
			json_array_extend(in, base);
			from = json_array_size(in);
			take_candidate(in, cands, &c);
			ck_assert_int_eq(pk_sched_run_shared(in, &opts, &fout, &fpre, &errs), 0);
			r = pk_sched_run_carried(&s, held, in, from, &opts, &kout, &kpre, &errs);
			ck_assert_int_ge(r, 0);
			carried += r == 1; /* on the carried scheduler, not a new one */
			assert_same_run(it, tries, fout, fpre, kout, kpre);
			if (r == 1)
				assert_same_profile(s, kout);
			json_decref(held);
			held = s ? json_incref(kout) : NULL; /* what the scheduler holds now */
			if (all_bound(fout, fpre)) {
				json_decref(base);
				base = json_incref(kout);
			}
			pk_errors_clear(&errs);
			json_decref(in);
			json_decref(fout);
			json_decref(fpre);
			json_decref(kout);
			json_decref(kpre);
		}
		pk_sched_free(s);
		json_decref(held);
		json_decref(base);
		json_decref(cands);
		json_decref(objs);
	}
	fprintf(stderr, "%d of %d runs on a carried scheduler\n", carried, tries);
	ck_assert_int_gt(carried, tries / 8); /* many ran on the carried one (others fell back) */
}
END_TEST

static json_t *node(int i)
{
	char name[16], rack[16];
	snprintf(name, sizeof name, "n%d", i);
	snprintf(rack, sizeof rack, "r%d", rnd(3));
	return json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:{s:s}}}", "apiVersion", "v1", "kind",
			 "Node", "metadata", "name", name, "labels", "rack", rack, "status",
			 "allocatable", "cpu", rnd(2) ? "2" : "3");
}
static json_t *group(int i, int ng)
{
	char name[16], parent[16];
	int comp = rnd(2);
	snprintf(name, sizeof name, "g%d", i);
	snprintf(parent, sizeof parent, "g%d", rnd(ng));
	json_t *g = json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s}}}", "apiVersion",
			      "scheduling.k8s.io/v1alpha3", "kind",
			      comp ? "CompositePodGroup" : "PodGroup", "metadata", "name", name,
			      "spec", "workloadRef", "workloadName", "w", "templateName", "t");
	json_t *spec = json_object_get(g, "spec");
	if (rnd(2))
		json_object_set_new(spec, "parentCompositePodGroupName", json_string(parent));
	json_object_set_new(
	    spec, "schedulingPolicy",
	    json_pack("{s:{s:i}}", "gang", comp ? "minGroupCount" : "minCount", 1 + rnd(2)));
	if (rnd(3) == 0)
		json_object_set_new(spec, "schedulingConstraints",
				    json_pack("{s:[{s:s}]}", "topology", "key", "rack"));
	if (rnd(3) == 0)
		json_object_set_new(spec, "disruptionMode", json_pack("{s:{}}", "all"));
	return g;
}
static json_t *pod(int i, int ng, int nn)
{
	char name[16], grp[16], nd[16];
	snprintf(name, sizeof name, "p%d", i);
	snprintf(grp, sizeof grp, "g%d", rnd(ng));
	snprintf(nd, sizeof nd, "n%d", rnd(nn));
	json_t *p = json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:{s:{s:s}}}],s:i}}", "apiVersion", "v1",
			      "kind", "Pod", "metadata", "name", name, "spec", "containers", "name",
			      "c", "resources", "requests", "cpu", "1", "priority", rnd(3) * 10);
	json_t *spec = json_object_get(p, "spec");
	if (rnd(4))
		json_object_set_new(spec, "schedulingGroup",
				    json_pack("{s:s}", "podGroupName", grp));
	if (rnd(5) == 0)
		json_object_set_new(spec, "nodeName", json_string(nd));
	if (rnd(8) == 0)
		json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
				    json_string("2026-01-01T00:00:00Z"));
	return p;
}
START_TEST(test_random_incremental)
{
	int iters = 120;

	for (int it = 0; it < iters; it++) {
		seed = (unsigned)it * 104729u + 7;
		struct pk_sched_opts o = {.check = true};
		struct pk_sched *s = NULL;
		pk_sched_new(&o, &s);
		int nn = 6, ng = 8, np = 20;
		int64_t now = 0;
		for (int step = 0; step < 200; step++) {
			int op = rnd(10);
			json_t *obj = NULL;
			char name[16];
			if (op == 0)
				obj = node(rnd(nn));
			else if (op == 1)
				obj = group(rnd(ng), ng);
			else if (op <= 3)
				obj = pod(rnd(np), ng, nn);
			else if (op == 4) {
				snprintf(name, sizeof name, "p%d", rnd(np));
				pk_sched_remove(s, &pk_type_pod, "default", name);
			} else if (op == 5) {
				snprintf(name, sizeof name, "g%d", rnd(ng));
				pk_sched_remove(s,
						pk_type_of(rnd(2) ? PK_KIND_POD_GROUP
								  : PK_KIND_COMPOSITE_POD_GROUP),
						"default", name);
			} else if (op == 6 && rnd(4) == 0) {
				snprintf(name, sizeof name, "n%d", rnd(nn));
				pk_sched_remove(s, &pk_type_node, NULL, name);
			} else {
				struct pk_sched_result *res = NULL;
				now += rnd(3000);
				int r = pk_sched_cycle(s, now, &res);
				ck_assert_msg(r == 0, "iteration %d step %d: cycle %d", it, step,
					      r);
				pk_sched_result_free(res);
			}
			if (obj) {
				pk_sched_update(s, obj, NULL);
				json_decref(obj);
			}
			char why[256];
			ck_assert_msg(pk_sched_check(s, why, sizeof why) == 0,
				      "iteration %d step %d: %s", it, step, why);
		}
		pk_sched_free(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-random");
	TCase *tc = tcase_create("random");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_random_offline);
	tcase_add_test(tc, test_random_decoded);
	tcase_add_test(tc, test_random_kept);
	tcase_add_test(tc, test_random_carried);
	tcase_add_test(tc, test_random_incremental);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
