/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lifecycle.c — kernel/controllers/lifecycle.c against a real store: on a
 * --simulate-board cluster with the simulated lifecycle on, a bound pod is
 * Running after the start delay and Succeeded after its
 * sim.podkernel.dev/duration, so a Job completes by itself; a pod on a real
 * node (not registered from the board) is never touched; a node loss fails
 * the pods on it, and the JobSet restarts its gang, placed whole on the
 * hosts that are left.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/store/store.h"
#include "kernel/appliance/appliance.h"
#include "kernel/controllers/controllers.h"
#include "kernel/builder/builder.h"

/* The store as podkerneld opens it: Jobs and JobSets admitted by the builder. */
static const struct pk_store_open_opts store_opts = {.admission = wb_admission,
						     .nadmission = WB_ADMISSION_N};

/* Six 8-GPU hosts in one rack. */
static const char board_text[] =
    "apiVersion: podkernel.dev/v1alpha1\nkind: Board\nmetadata:\n  name: rack6\nspec:\n"
    "  description: six hosts\n  accelerator:\n    resource: nvidia.com/gpu\n"
    "    vendorId: \"10de\"\n    deviceIds: [\"2330\"]\n    chipsPerHost: 8\n"
    "  host:\n    allocatable:\n      cpu: \"64\"\n      memory: 512Gi\n      pods: \"110\"\n"
    "      nvidia.com/gpu: \"8\"\n    numaNodes: 2\n  levels:\n    - name: rack\n"
    "      key: topology.podkernel.dev/rack\n      prefix: r\n      count: 1\n"
    "    - name: host\n      key: kubernetes.io/hostname\n      count: 6\n"
    "  hostnamePattern: \"gpu-r{rack}-n{host}\"\n";

static char dir[256], board[300];
static struct pk_store *st;
static struct pk_appliance *app;

static void open_store(void)
{
	char err[256];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/pk-lifecycle-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(board, sizeof(board), "%s/board.yaml", dir);
	f = fopen(board, "w");
	ck_assert_ptr_nonnull(f);
	fputs(board_text, f);
	fclose(f);
	ck_assert_int_eq(pk_store_open_opts(dir, &store_opts, &st, err, sizeof(err)), 0);
}

static void log_line(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "%s\n", msg);
}

static void start(const char *node_loss)
{
	struct pk_appliance_config cfg = {
	    .backoff_initial_ms = 50,
	    .backoff_max_ms = 200,
	    .log = log_line,
	    .verbosity = 2,
	};
	struct pk_standalone_config scfg = {
	    .board = board,
	    .sim_lifecycle = true,
	    .sim_start_delay_ms = 100,
	    .sim_node_loss = node_loss,
	};
	char err[256] = "";

	ck_assert_msg(pk_standalone_start(st, &cfg, &scfg, &app, err, sizeof(err)) == 0, "%s", err);
}

static void stop(void)
{
	char cmd[300];

	pk_appliance_stop(app);
	app = NULL;
	pk_store_shutdown(st);
	pk_store_close(st);
	st = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
	if (st)
		stop();
}

static void create_json(const char *text)
{
	struct pk_errors errs = {0};
	json_t *o = json_loads(text, 0, NULL);
	int r;

	ck_assert_ptr_nonnull(o);
	r = pk_store_create(st, o, &errs, NULL);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "create: %s\n", errs.msg[i]);
	pk_errors_clear(&errs);
	json_decref(o);
	ck_assert_int_eq(r, 0);
}

static json_t *get(const char *kind, const char *name)
{
	json_t *o = NULL;

	return pk_store_get(st, pk_type_by_kind(kind), "default", name, &o) == 0 ? o : NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static const char *field(const char *kind, const char *name, const char *path, char *buf,
			 size_t len)
{
	json_t *o = get(kind, name);
	const char *v = o ? pk_get_string(o, path) : NULL;

	snprintf(buf, len, "%s", v ? v : "");
	json_decref(o);
	return buf;
}

/* Wait up to 15 s until kind/name's path reads want. */
static bool wait_field(const char *kind, const char *name, const char *path, const char *want)
{
	char buf[256];

	for (int i = 0; i < 300; i++) {
		if (strcmp(field(kind, name, path, buf, sizeof(buf)), want) == 0)
			return true;
		sleep_ms(50);
	}
	fprintf(stderr, "%s %s: %s is \"%s\", not \"%s\"\n", kind, name, path, buf, want);
	return false;
}

static bool has_condition(const char *kind, const char *name, const char *type)
{
	for (int i = 0; i < 300; i++) {
		json_t *o = get(kind, name), *c = o ? pk_condition_get(o, type) : NULL;
		bool ok = c && strcmp(json_string_value(json_object_get(c, "status")), "True") == 0;

		json_decref(o);
		if (ok)
			return true;
		sleep_ms(50);
	}
	return false;
}

#define POD_SPEC(dur)                                                                              \
	"\"template\": {\"metadata\": {\"annotations\": {\"sim.podkernel.dev/duration\": \"" dur   \
	"\"}}, \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"x\", \"resources\": "    \
	"{\"requests\": {\"nvidia.com/gpu\": \"8\"}}}]}}"

START_TEST(simulated_pods_run_and_the_job_completes)
{
	open_store();
	start(NULL);
	create_json(
	    "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
	    "\"train\", \"namespace\": \"default\"}, \"spec\": {\"parallelism\": 2, "
	    "\"completions\": 2, \"scheduling\": {\"schedulingPolicy\": {\"gang\": {}}}, " POD_SPEC(
		"3") "}}");
	ck_assert(wait_field("Pod", "train-0", "status.phase", "Running"));
	ck_assert(wait_field("Pod", "train-1", "status.phase", "Running"));
	ck_assert(has_condition("Pod", "train-0", "Ready"));
	ck_assert(wait_field("Pod", "train-0", "status.phase", "Succeeded"));
	ck_assert(has_condition("Job", "train", "Complete"));
	json_t *j = get("Job", "train");

	ck_assert_int_eq(json_integer_value(pk_get(j, "status.succeeded")), 2);
	json_decref(j);
}
END_TEST

START_TEST(real_nodes_are_never_touched)
{
	char buf[64];

	open_store();
	/* a node podagent would publish: no simulated annotation */
	create_json("{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
		    "\"real\", \"labels\": {\"kind\": \"real\"}}, \"status\": {\"allocatable\": "
		    "{\"cpu\": \"8\", \"nvidia.com/gpu\": \"8\", \"pods\": \"110\"}}}");
	start(NULL);
	create_json("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\", "
		    "\"namespace\": \"default\", \"annotations\": {\"sim.podkernel.dev/duration\": "
		    "\"0.2\"}}, \"spec\": {\"nodeSelector\": {\"kind\": \"real\"}, \"containers\": "
		    "[{\"name\": \"c\", \"image\": \"x\"}]}}");
	ck_assert(wait_field("Pod", "p", "spec.nodeName", "real"));
	sleep_ms(800);
	/* still the Pending it was created with */
	ck_assert_str_eq(field("Pod", "p", "status.phase", buf, sizeof(buf)), "Pending");
}
END_TEST

static const char jobset[] =
    "{\"apiVersion\": \"jobset.x-k8s.io/v1alpha2\", \"kind\": \"JobSet\", \"metadata\": "
    "{\"name\": \"js\", \"namespace\": \"default\"}, \"spec\": {\"failurePolicy\": "
    "{\"maxRestarts\": 2}, \"scheduling\": {\"schedulingPolicy\": {\"gang\": {}}}, "
    "\"replicatedJobs\": [{\"name\": \"w\", \"replicas\": 1, \"template\": {\"spec\": "
    "{\"parallelism\": 4, \"completions\": 4, \"backoffLimit\": 0, " POD_SPEC("600") "}}}]}}";

START_TEST(node_loss_fails_pods_and_replaces_the_gang)
{
	char lost[128], loss[160], buf[128];

	/* where the gang lands (the scheduler is deterministic) */
	open_store();
	start(NULL);
	create_json(jobset);
	ck_assert(wait_field("Pod", "js-w-0-0", "status.phase", "Running"));
	field("Pod", "js-w-0-0", "spec.nodeName", lost, sizeof(lost));
	stop();
	/* again, losing that node 4 s after start: the gang runs by then even on a
	 * loaded machine (it ran within a few hundred ms above) */
	open_store();
	snprintf(loss, sizeof(loss), "4:%s", lost);
	start(loss);
	create_json(jobset);
	for (int i = 0; i < 300; i++) {
		json_t *js = get("JobSet", "js");
		json_int_t restarts = json_integer_value(pk_get(js, "status.restarts"));

		json_decref(js);
		if (restarts >= 1)
			break;
		sleep_ms(50);
	}
	json_t *js = get("JobSet", "js");

	ck_assert_int_eq(json_integer_value(pk_get(js, "status.restarts")), 1);
	json_decref(js);
	/* the node is gone; the whole gang of four runs again on the five hosts left */
	for (int i = 0; i < 100; i++) {
		json_t *n = get("Node", lost);

		json_decref(n);
		if (!n)
			break;
		sleep_ms(50);
	}
	ck_assert_ptr_null(get("Node", lost));
	for (int k = 0; k < 4; k++) {
		char name[32];

		snprintf(name, sizeof(name), "js-w-0-%d", k);
		ck_assert(wait_field("Pod", name, "status.phase", "Running"));
		ck_assert_str_ne(field("Pod", name, "spec.nodeName", buf, sizeof(buf)), lost);
		json_t *p = get("Pod", name);

		/* a pod of the new attempt */
		ck_assert_str_eq(
		    json_string_value(json_object_get(pk_get(p, "metadata.labels"),
						      "jobset.sigs.k8s.io/restart-attempt")),
		    "1");
		json_decref(p);
	}
}
END_TEST

static const char rack_job[] =
    "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": \"train\", "
    "\"namespace\": \"default\"}, \"spec\": {\"parallelism\": 2, \"completions\": 2, "
    "\"scheduling\": {\"schedulingPolicy\": {\"gang\": {}}, \"schedulingConstraints\": "
    "{\"topology\": [{\"key\": \"topology.podkernel.dev/rack\"}]}, \"disruptionMode\": "
    "{\"all\": {}}}, " POD_SPEC("600") "}}";

/*
 * Repair in the same domain, end to end: a node under a rack-bound gang Job
 * (disruptionMode all) is deleted; the whole unit is evicted, the Job makes
 * the pods again and they go back to the same rack, which has room
 * (RepairedInPlace on the PodGroup, with its Event).
 */
START_TEST(node_loss_repairs_the_gang_in_its_rack)
{
	char lost[128], buf[256];
	json_t *g, *c, *evs = NULL, *e;
	size_t i;
	bool told = false;

	open_store();
	start(NULL);
	create_json(rack_job);
	ck_assert(wait_field("Pod", "train-0", "status.phase", "Running"));
	ck_assert(wait_field("Pod", "train-1", "status.phase", "Running"));
	field("Pod", "train-0", "spec.nodeName", lost, sizeof(lost));
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_node, NULL, lost, NULL, NULL, NULL), 0);
	ck_assert(has_condition("PodGroup", "train", "PodGroupRepaired"));
	g = get("PodGroup", "train");
	c = pk_condition_get(g, "PodGroupRepaired");
	ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), "RepairedInPlace");
	ck_assert_str_eq(json_string_value(json_object_get(c, "message")),
			 "placed again in its home domain topology.podkernel.dev/rack=r0");
	json_decref(g);
	ck_assert(wait_field("Pod", "train-0", "status.phase", "Running"));
	ck_assert_str_ne(field("Pod", "train-0", "spec.nodeName", buf, sizeof(buf)), lost);
	for (int k = 0; k < 100 && !told; k++) {
		ck_assert_int_eq(
		    pk_store_list(st, &pk_type_event, "default", NULL, &evs, NULL, NULL), 0);
		json_array_foreach(evs, i, e) told |=
		    strcmp(pk_get_string(e, "reason") ?: "", "RepairedInPlace") == 0;
		json_decref(evs);
		if (!told)
			sleep_ms(50);
	}
	ck_assert(told);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-lifecycle");
	TCase *tc = tcase_create("lifecycle");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, simulated_pods_run_and_the_job_completes);
	tcase_add_test(tc, real_nodes_are_never_touched);
	tcase_add_test(tc, node_loss_fails_pods_and_replaces_the_gang);
	tcase_add_test(tc, node_loss_repairs_the_gang_in_its_rack);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
