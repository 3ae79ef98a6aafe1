/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of kernel/sched/slice.c: the torus index follows every assume,
 * revert, removal and commit (the snapshot checker proves it after each
 * step) and the checker catches a corrupted index; random slices on random
 * tori place as boxes exactly when a brute-force search over every box says
 * one is free; the failure message names the largest free box.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-slice.h"
#include "tests/kernel/sched/helpers.h"

/* Hosts of a torus of 2x2x1-chip hosts: grid gx x gy x gz, named T-h<i>. */
static void add_torus(struct pk_sched *s, const char *t, int gx, int gy, int gz, bool wrap)
{
	char shape[32], cube[32];

	snprintf(shape, sizeof(shape), "%dx%dx%d", 2 * gx, 2 * gy, gz);
	snprintf(cube, sizeof(cube), "%dx%dx%d", 2 * gx, 2 * gy, gz % 2 ? gz : gz / 2);
	for (int i = 0; i < gx * gy * gz; i++) {
		char name[64], coords[48];

		snprintf(name, sizeof(name), "%s-h%d", t, i);
		snprintf(coords, sizeof(coords), "%d.%d.%d", 2 * (i % gx), 2 * (i / gx % gy),
			 i / (gx * gy));
		add_obj(s, json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}}, "
				     "s:{s:{s:s, s:s}}}",
				     "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
				     "labels", TOPO_LABEL_TORUS, t, TOPO_LABEL_TORUS_SHAPE, shape,
				     TOPO_LABEL_HOST_SHAPE, "2x2x1", TOPO_LABEL_CUBE_SHAPE, cube,
				     TOPO_LABEL_WRAPAROUND, wrap ? "true" : "false",
				     TOPO_LABEL_COORDS, coords, "status", "allocatable", "cpu", "8",
				     "google.com/tpu", "4"));
	}
}

static json_t *tpu_pod(const char *name, const char *group, const char *node)
{
	json_t *p = pod_obj(name, "1", group, node, 0);

	json_object_set_new(
	    json_object_get(
		json_object_get(json_array_get(pk_get(p, "spec.containers"), 0), "resources"),
		"requests"),
	    "google.com/tpu", json_string("4"));
	return p;
}

static json_t *slice_group(const char *name, const char *shape, int min)
{
	return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:{s:i}}}}", "apiVersion",
			 "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name", name,
			 "annotations", TOPO_ANN_SLICE_SHAPE, shape, "spec", "schedulingPolicy",
			 "gang", "minCount", min);
}

static void check_ok(const struct pk_sched *s)
{
	char why[512];

	ck_assert_msg(sc_snapshot_check(&s->snap, &s->forest.all_pods, false, why, sizeof(why)) ==
			  0,
		      "%s", why);
}

START_TEST(index_follows_assumptions)
{
	struct pk_sched *s = NULL;
	unsigned seed = 5;
	struct sc_snapshot *snap;
	struct sc_pod *pods[40];

	ck_assert_int_eq(pk_sched_new(NULL, &s), 0);
	add_torus(s, "t0", 2, 2, 4, true);
	add_torus(s, "t1", 2, 1, 4, false);
	for (int i = 0; i < 40; i++) {
		char name[32];

		snprintf(name, sizeof(name), "p%d", i);
		add_obj(s, tpu_pod(name, NULL, i < 6 ? (i % 2 ? "t0-h3" : "t1-h2") : NULL));
		pods[i] = pk_map_get(&s->forest.pods,
				     (snprintf(name, sizeof(name), "default/p%d", i), name));
		ck_assert_ptr_nonnull(pods[i]);
	}
	snap = &s->snap;
	ck_assert_ptr_nonnull(sc_snapshot_slices(snap));
	ck_assert_int_eq(sc_snapshot_slices(snap)->nt, 2);
	ck_assert_str_eq(sc_snapshot_slices(snap)->t[0].name, "t0");
	check_ok(s);
	for (int step = 0; step < 400; step++) {
		int r = (int)(rand_r(&seed) % 10);
		size_t mark = sc_snapshot_mark(snap);
		struct sc_pod *p = pods[rand_r(&seed) % 40];

		if (r < 5 && p->node < 0 && p->cycle.assumed < 0)
			ck_assert_int_eq(
			    sc_snapshot_assume(snap, p, (int)(rand_r(&seed) % snap->nnodes)), 0);
		else if (r < 6 && p->node >= 0 && !p->cycle.sim_removed)
			ck_assert_int_eq(sc_snapshot_assume_removed(snap, p), 0);
		else if (r < 8 && snap->nlog)
			sc_snapshot_revert(snap, (size_t)rand_r(&seed) % (snap->nlog + 1));
		else if (r == 8)
			sc_snapshot_commit(snap);
		(void)mark;
		check_ok(s);
	}
	sc_snapshot_revert(snap, 0);
	check_ok(s);
	pk_sched_free(s);
}
END_TEST

START_TEST(checker_catches_a_corrupted_index)
{
	struct pk_sched *s = NULL;
	struct topo_coord c = {{1, 0, 2}};
	char why[512] = "";

	ck_assert_int_eq(pk_sched_new(NULL, &s), 0);
	add_torus(s, "t0", 2, 2, 4, true);
	ck_assert_ptr_nonnull(sc_snapshot_slices(&s->snap));
	check_ok(s);
	topo_occ_add(sc_snapshot_slices(&s->snap)->t[0].occ, &c, 1);
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 -EUCLEAN);
	ck_assert_msg(strstr(why, "slice index, torus t0: cell 1.0.2") != NULL, "%s", why);
	topo_occ_add(sc_snapshot_slices(&s->snap)->t[0].occ, &c, -1);
	check_ok(s);
	sc_snapshot_slices(&s->snap)->mark[3] = 1;
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 -EUCLEAN);
	ck_assert_msg(strstr(why, "scope mark left") != NULL, "%s", why);
	sc_snapshot_slices(&s->snap)->mark[3] = 0;
	pk_sched_free(s);
}
END_TEST

/* Is a box of the slice shape free on the input's busy cells?  Brute force. */
static bool brute_fits(const bool *busy, int gx, int gy, int gz, bool wrap, int sx, int sy, int sz)
{
	static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
					{1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
	int g[3] = {gx, gy, gz}, sl[3] = {sx, sy, sz}, host[3] = {2, 2, 1};

	for (int p = 0; p < 6; p++) {
		int e[3];
		bool ok = true;

		for (int a = 0; a < 3; a++) {
			int chips = sl[perms[p][a]];

			ok = ok && chips % host[a] == 0 && chips / host[a] <= g[a];
			e[a] = chips / host[a];
		}
		if (!ok)
			continue;
		for (int oz = 0; oz < gz; oz++)
			for (int oy = 0; oy < gy; oy++)
				for (int ox = 0; ox < gx; ox++) {
					int o[3] = {ox, oy, oz};
					bool free_ = true;

					for (int a = 0; a < 3 && free_; a++)
						free_ = wrap || o[a] + e[a] <= g[a];
					for (int z = 0; z < e[2] && free_; z++)
						for (int y = 0; y < e[1] && free_; y++)
							for (int x = 0; x < e[0] && free_; x++)
								free_ = !busy[(ox + x) % gx +
									      gx * ((oy + y) % gy +
										    gy * ((oz + z) %
											  gz))];
					if (free_)
						return true;
				}
	}
	return false;
}

START_TEST(random_slices_match_brute_force)
{
	unsigned seed = 9;
	static const char *shapes[] = {"2x2x1", "2x2x2", "4x2x2", "2x4x1", "4x4x2",
				       "2x2x4", "4x4x4", "4x2x3", "3x2x1", "4x4x1"};

	int nfit = 0, nnofit = 0;

	for (int round = 0; round < 120; round++) {
		int gx = 1 + (int)(rand_r(&seed) % 3), gy = 1 + (int)(rand_r(&seed) % 2),
		    gz = 2 + (int)(rand_r(&seed) % 4);
		bool wrap = rand_r(&seed) % 2, busy[64] = {false};
		const char *shape = shapes[rand_r(&seed) % 10];
		struct topo_shape sh;
		struct pk_sched_opts opts = {.check = true, .strategy = round % 3 ? NULL : "kep"};
		json_t *in = json_array(), *out = NULL, *pre = NULL;
		struct pk_sched *tmp = NULL;
		struct pk_errors errs = {0};
		int hosts, bound = 0;

		topo_shape_parse(shape, &sh);
		hosts = (int)(topo_shape_volume(&sh) / 4);
		ck_assert_int_eq(pk_sched_new(NULL, &tmp), 0);
		add_torus(tmp, "t0", gx, gy, gz, wrap);
		for (size_t i = 0; i < tmp->snap.nnodes; i++) {
			char name[64];
			json_t *labels = json_object();

			for (size_t l = 0; l < tmp->snap.nodes[i]->nlabels; l++)
				json_object_set_new(
				    labels, tmp->snap.nodes[i]->labels[l].key,
				    json_string(tmp->snap.nodes[i]->labels[l].value));
			json_array_append_new(
			    in, json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:{s:s, s:s}}}",
					  "apiVersion", "v1", "kind", "Node", "metadata", "name",
					  tmp->snap.nodes[i]->name, "labels", labels, "status",
					  "allocatable", "cpu", "8", "google.com/tpu", "4"));
			if (rand_r(&seed) % 4 == 0) {
				busy[i] = true;
				snprintf(name, sizeof(name), "busy-%zu", i);
				json_array_append_new(
				    in, tpu_pod(name, NULL, tmp->snap.nodes[i]->name));
			}
		}
		pk_sched_free(tmp);
		if (hosts * 4 == topo_shape_volume(&sh) && hosts > 0) {
			json_array_append_new(in, slice_group("s", shape, hosts));
			for (int i = 0; i < hosts; i++) {
				char name[32];

				snprintf(name, sizeof(name), "s-%d", i);
				json_array_append_new(in, tpu_pod(name, "s", NULL));
			}
		}
		ck_assert_int_eq(pk_sched_run(in, &opts, &out, &pre, &errs), 0);
		for (size_t i = 0; i < json_array_size(out); i++) {
			json_t *o = json_array_get(out, i);

			if (pk_kind_of(o) == PK_KIND_POD && strncmp(pk_name(o), "s-", 2) == 0 &&
			    pk_get_string(o, "spec.nodeName"))
				bound++;
		}
		bool fits = hosts * 4 == topo_shape_volume(&sh) &&
			    brute_fits(busy, gx, gy, gz, wrap, sh.dim[0], sh.dim[1], sh.dim[2]);

		char bl[128] = "";

		for (int i = 0; i < gx * gy * gz; i++)
			if (busy[i])
				snprintf(bl + strlen(bl), sizeof(bl) - strlen(bl), " %d", i);
		ck_assert_msg(
		    bound == (fits ? hosts : 0),
		    "round %d: %s on %dx%dx%d hosts wrap %d busy%s: %d bound, brute force "
		    "says %s",
		    round, shape, gx, gy, gz, wrap, bl, bound, fits ? "fits" : "no box");
		nfit += fits;
		nnofit += !fits && hosts * 4 == topo_shape_volume(&sh);
		json_decref(in);
		json_decref(out);
		json_decref(pre);
		pk_errors_clear(&errs);
	}
	ck_assert_msg(nfit >= 20 && nnofit >= 10, "%d fit, %d did not", nfit, nnofit);
}
END_TEST

START_TEST(message_names_the_largest_free_box)
{
	struct pk_sched *s = NULL;
	struct pk_sched_opts opts = {.check = true};
	struct pk_sched_result *res = NULL;
	const char *msg = NULL;

	ck_assert_int_eq(pk_sched_new(&opts, &s), 0);
	add_torus(s, "t0", 2, 2, 4, false); /* 4x4x4 chips */
	add_torus(s, "t1", 2, 2, 4, false);
	add_obj(s, tpu_pod("b0", NULL, "t0-h0")); /* t0: largest free 4x4x3 */
	add_obj(s, tpu_pod("b1", NULL, "t1-h4")); /* t1: largest free 4x4x2 */
	add_obj(s, slice_group("s", "4x4x4", 16));
	for (int i = 0; i < 16; i++) {
		char name[32];

		snprintf(name, sizeof(name), "s-%d", i);
		add_obj(s, tpu_pod(name, "s", NULL));
	}
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	for (size_t i = 0; i < res->nactions; i++)
		if (res->actions[i].action == PK_SCHED_CONDITION &&
		    res->actions[i].kind->pk == PK_KIND_POD_GROUP)
			msg = res->actions[i].message;
	ck_assert_ptr_nonnull(msg);
	ck_assert_msg(strstr(msg, "no free 4x4x4 box in any rotation in 2 superslices; largest "
				  "free box in superslice t0 is 4x4x3") != NULL,
		      "%s", msg);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/* Labels claiming huge or many tori cost no more than a bounded index. */
START_TEST(hostile_labels_are_bounded)
{
	struct pk_sched *s = NULL;

	ck_assert_int_eq(pk_sched_new(NULL, &s), 0);
	add_torus(s, "t0", 2, 2, 4, true);
	for (int i = 0; i < 64; i++) {
		char name[32], torus[32];

		snprintf(name, sizeof(name), "evil-%d", i);
		snprintf(torus, sizeof(torus), "evil-%d", i);
		add_obj(s, json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s, s:s, s:s}}}",
				     "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
				     "labels", TOPO_LABEL_TORUS, torus, TOPO_LABEL_TORUS_SHAPE,
				     i ? "256x256x1" : "256x256x2", TOPO_LABEL_HOST_SHAPE, "1x1x1",
				     TOPO_LABEL_WRAPAROUND, "true", TOPO_LABEL_COORDS, "0.0.0"));
	}
	ck_assert_ptr_nonnull(sc_snapshot_slices(&s->snap));
	/* 256x256x2 is over 65536 chips; of the 65536-host tori one fits the budget */
	ck_assert_int_eq(sc_snapshot_slices(&s->snap)->nt, 2);
	ck_assert_str_eq(sc_snapshot_slices(&s->snap)->t[0].name, "evil-1");
	ck_assert_str_eq(sc_snapshot_slices(&s->snap)->t[1].name, "t0");
	check_ok(s);
	pk_sched_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slice");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, index_follows_assumptions);
	tcase_add_test(tc, checker_catches_a_corrupted_index);
	tcase_add_test(tc, random_slices_match_brute_force);
	tcase_add_test(tc, message_names_the_largest_free_box);
	tcase_add_test(tc, hostile_labels_are_bounded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
