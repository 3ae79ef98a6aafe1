/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gc_graph.c — the garbage collector follows every ownerReference,
 * whatever the kinds: a chain of one object of every served kind (the
 * cluster-scoped kinds first: a cluster-scoped object cannot have a
 * namespaced owner), each owning the next, is deleted from its head under
 * each propagationPolicy (an Event, which may own nothing, last; a Namespace
 * beside the head), and every object ends as kube-controller-manager's
 * collector would leave it:
 *   - Background: the head goes at once, then every other object, each
 *     after its owner;
 *   - Foreground: the head stays (deletionTimestamp, foregroundDeletion)
 *     while anything below blocks it; the objects go tail first, the head
 *     last;
 *   - Orphan: the head goes, the next object stays without the reference,
 *     nothing else changes.
 * And the reference rules: a dependent with another, solid owner loses only
 * the dangling reference; an owner named from another namespace is not
 * found (the dependent is collected); a cluster-scoped object naming a
 * namespaced owner, and a reference to a kind not served, are left alone.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/store/store.h"
#include "kernel/appliance/appliance.h"
#include "kernel/controllers/controllers.h"
#include "kernel/builder/builder.h"

static const struct pk_store_open_opts store_opts = {.admission = wb_admission,
						     .nadmission = WB_ADMISSION_N};

/* The smallest valid object of each served kind, but for metadata. */
static const struct {
	const char *kind, *body;
} bodies[] = {
    {"Node", "{\"status\": {\"allocatable\": {\"cpu\": \"1\", \"pods\": \"0\"}}}"},
    {"Namespace", "{}"},
    {"PriorityClass", "{\"value\": 1}"},
    {"DeviceClass", "{\"spec\": {}}"},
    {"ResourceSlice", "{\"spec\": {\"driver\": \"d.example.com\", \"nodeName\": \"nx\","
		      " \"pool\": {\"name\": \"p\", \"generation\": 1,"
		      " \"resourceSliceCount\": 1}}}"},
    {"PersistentVolume", "{\"spec\": {\"accessModes\": [\"ReadWriteOnce\"], \"capacity\":"
			 " {\"storage\": \"1Gi\"}, \"hostPath\": {\"path\": \"/tmp\"}}}"},
    {"StorageClass", "{\"provisioner\": \"kubernetes.io/no-provisioner\"}"},
    {"CSINode", "{\"spec\": {\"drivers\": []}}"},
    {"ResourceFlavor", "{\"spec\": {}}"},
    {"ClusterQueue", "{\"spec\": {\"namespaceSelector\": {}}}"},
    {"LocalQueue", "{\"spec\": {\"clusterQueue\": \"cq\"}}"},
    {"Cohort", "{\"spec\": {}}"},
    {"WorkloadPriorityClass", "{\"value\": 100}"},
    {"Topology", "{\"spec\": {\"levels\": [{\"nodeLabel\": \"rack\"}]}}"},
    {"Pod", "{\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"x\"}],"
	    " \"nodeName\": \"nowhere\"}}"},
    {"Event", "{\"involvedObject\": {\"kind\": \"Pod\", \"name\": \"x\"}, \"reason\": \"R\","
	      " \"message\": \"m\"}"},
    {"Workload", "{\"spec\": {\"podGroupTemplates\": [{\"name\": \"t\", \"schedulingPolicy\":"
		 " {\"basic\": {}}}]}}"},
    {"PodGroup", "{\"spec\": {\"schedulingPolicy\": {\"basic\": {}}}}"},
    {"CompositePodGroup", "{\"spec\": {\"workloadRef\": {\"workloadName\": \"w\","
			  " \"templateName\": \"t\"}, \"schedulingPolicy\": {\"basic\": {}}}}"},
    {"Job", "{\"spec\": {\"suspend\": true, \"template\": {\"spec\": {\"restartPolicy\":"
	    " \"Never\", \"containers\": [{\"name\": \"c\", \"image\": \"x\"}]}}}}"},
    {"JobSet", "{\"spec\": {\"replicatedJobs\": [{\"name\": \"r\", \"template\": {\"spec\":"
	       " {\"suspend\": true, \"template\": {\"spec\": {\"restartPolicy\": \"Never\","
	       " \"containers\": [{\"name\": \"c\", \"image\": \"x\"}]}}}}}]}}"},
    {"LeaderWorkerSet",
     "{\"spec\": {\"replicas\": 0, \"leaderWorkerTemplate\": {\"workerTemplate\":"
     " {\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"x\"}]}}}}}"},
    {"Lease", "{\"spec\": {}}"},
    {"ResourceClaim", "{\"spec\": {\"devices\": {\"requests\": [{\"name\": \"r\", \"exactly\":"
		      " {\"deviceClassName\": \"dc\"}}]}}}"},
    {"ResourceClaimTemplate", "{\"spec\": {\"spec\": {\"devices\": {\"requests\": [{\"name\":"
			      " \"r\", \"exactly\": {\"deviceClassName\": \"dc\"}}]}}}}"},
    {"PersistentVolumeClaim", "{\"spec\": {\"accessModes\": [\"ReadWriteOnce\"], \"resources\":"
			      " {\"requests\": {\"storage\": \"1Gi\"}}}}"},
    {"PodDisruptionBudget", "{\"spec\": {\"minAvailable\": 1, \"selector\": {\"matchLabels\":"
			    " {\"app\": \"x\"}}}}"},
    {"ConfigMap", "{\"data\": {\"k\": \"v\"}}"},
};

#define MAX_CHAIN 64

static char dir[256];
static struct pk_store *st;
static struct pk_appliance *app;

/* The chain: every served kind once (Namespace aside: a leaf of the head). */
static const struct pk_type *chain[MAX_CHAIN];
static size_t nchain;

static void log_line(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	if (getenv("GC_GRAPH_LOG"))
		fprintf(stderr, "%s\n", msg);
}

static void setup(void)
{
	struct pk_appliance_config cfg = {
	    .backoff_initial_ms = 50, .backoff_max_ms = 200, .verbosity = 3, .log = log_line};
	char err[256] = "";

	/* tmpfs when there is one: a commit per object */
	snprintf(dir, sizeof(dir), "/dev/shm/pk-gc-graph-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/pk-gc-graph-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
	}
	ck_assert_int_eq(pk_store_open_opts(dir, &store_opts, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	nchain = 0;
	for (int scoped = 0; scoped < 2; scoped++)
		for (const struct pk_type *const *p_t = pk_types, *t; (t = *p_t); p_t++)
			if (pk_type_by_kind(t->kind) == t && t->namespaced == scoped &&
			    strcmp(t->kind, "Namespace") != 0 && strcmp(t->kind, "Event") != 0)
				chain[nchain++] = t;
	/* an Event may own nothing (kube-apiserver refuses it as an owner): the tail */
	chain[nchain++] = pk_type_by_kind("Event");
}

static void teardown(void)
{
	char cmd[300];

	pk_store_shutdown(st); /* wakes the loop at once */
	pk_appliance_stop(app);
	app = NULL;
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static const char *body_of(const char *kind)
{
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		if (strcmp(bodies[i].kind, kind) == 0)
			return bodies[i].body;
	ck_abort_msg("no test object for served kind %s: add one to bodies[]", kind);
	return NULL;
}

/* The name of kind t's object in the chain named prefix. */
static void name_of(char *buf, size_t n, const char *prefix, const struct pk_type *t)
{
	snprintf(buf, n, "%s-%s", prefix, t->plural);
}

static json_t *ref_to(const json_t *owner, bool block)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:b}", "apiVersion",
			 json_string_value(json_object_get(owner, "apiVersion")), "kind",
			 json_string_value(json_object_get(owner, "kind")), "name",
			 pk_get_string(owner, "metadata.name"), "uid",
			 pk_get_string(owner, "metadata.uid"), "blockOwnerDeletion", block);
}

/* Create kind t's object named name in ns with refs (taken, may be NULL); the stored object. */
static json_t *make(const struct pk_type *t, const char *ns, const char *name, json_t *refs)
{
	json_t *obj = json_loads(body_of(t->kind), 0, NULL), *out = NULL;
	struct pk_errors errs = {0};
	json_t *meta = json_pack("{s:s}", "name", name);
	int r;

	ck_assert_ptr_nonnull(obj);
	if (t->namespaced)
		json_object_set_new(meta, "namespace", json_string(ns));
	if (refs)
		json_object_set_new(meta, "ownerReferences", refs);
	json_object_set_new(obj, "apiVersion", json_string(t->api_version));
	json_object_set_new(obj, "kind", json_string(t->kind));
	json_object_set_new(obj, "metadata", meta);
	r = pk_store_create(st, obj, &errs, &out);
	for (size_t i = 0; r < 0 && i < errs.n; i++)
		fprintf(stderr, "create %s %s: %s\n", t->kind, name, errs.msg[i]);
	pk_errors_clear(&errs);
	json_decref(obj);
	ck_assert_int_eq(r, 0);
	return out;
}

/* Build the chain named prefix in namespace "default"; its head (and a Namespace leaf). */
static json_t *build_chain(const char *prefix, bool block)
{
	json_t *prev = NULL, *head = NULL;
	char name[128];

	for (size_t i = 0; i < nchain; i++) {
		json_t *obj;

		name_of(name, sizeof(name), prefix, chain[i]);
		obj = make(chain[i], "default", name,
			   prev ? json_pack("[o]", ref_to(prev, block)) : NULL);
		if (!head)
			head = json_incref(obj);
		json_decref(prev);
		prev = obj;
	}
	json_decref(prev);
	snprintf(name, sizeof(name), "%s-ns", prefix);
	json_decref(
	    make(pk_type_by_kind("Namespace"), NULL, name, json_pack("[o]", ref_to(head, block))));
	return head;
}

static bool exists(const struct pk_type *t, const char *ns, const char *name, json_t **ret)
{
	json_t *o = NULL;
	bool there = pk_store_get(st, t, ns, name, &o) == 0;

	if (ret)
		*ret = o;
	else
		json_decref(o);
	return there;
}

/* Wait up to 20 s for the object to be gone. */
static bool wait_gone(const struct pk_type *t, const char *ns, const char *name)
{
	for (int i = 0; i < 400; i++) {
		if (!exists(t, ns, name, NULL))
			return true;
		sleep_ms(50);
	}
	return false;
}

/*
 * A dependent of an owner that was never there: once the collector has
 * deleted it, every event before its creation has been looked at.
 */
static void collector_caught_up(void)
{
	static int n;
	const struct pk_type *t = pk_type_by_kind("PriorityClass");
	char name[32];
	json_t *ghost = json_pack("{s:s,s:s,s:s,s:s}", "apiVersion", "v1", "kind", "Node", "name",
				  "ghost", "uid", "00000000-0000-0000-0000-000000000000");

	snprintf(name, sizeof(name), "sentinel-%d", n++);
	json_decref(make(t, NULL, name, json_pack("[o]", ghost)));
	ck_assert_msg(wait_gone(t, NULL, name), "a dependent of a missing owner was left");
}

struct order {
	const char *prefix;
	long pos[MAX_CHAIN]; /* the index of each chain object's DELETED event, -1: none */
	long n;
};

static int on_event(const struct pk_store_event *ev, void *arg)
{
	struct order *o = arg;
	char name[128];

	if (ev->type != PK_EVENT_DELETED)
		return 0;
	for (size_t i = 0; i < nchain; i++) {
		name_of(name, sizeof(name), o->prefix, chain[i]);
		if (strcmp(ev->kind->kind, chain[i]->kind) == 0 &&
		    strcmp(pk_get_string(ev->object, "metadata.name") ?: "", name) == 0)
			o->pos[i] = o->n;
	}
	o->n++;
	return 0;
}

/* The order of the chain's deletions in the change stream since rv. */
static void deletion_order(uint64_t rv, struct order *o)
{
	uint64_t last = rv;

	memset(o->pos, 0xff, sizeof(o->pos));
	o->n = 0;
	while (pk_store_events_since(st, last, 1000, on_event, o, &last) > 0)
		;
}

static void assert_chain_gone(const char *prefix)
{
	char name[128];

	for (size_t i = 0; i < nchain; i++) {
		name_of(name, sizeof(name), prefix, chain[i]);
		ck_assert_msg(wait_gone(chain[i], "default", name), "%s %s was left behind",
			      chain[i]->kind, name);
	}
	snprintf(name, sizeof(name), "%s-ns", prefix);
	ck_assert_msg(wait_gone(pk_type_by_kind("Namespace"), NULL, name), "Namespace %s was left",
		      name);
}

START_TEST(background_follows_every_kind)
{
	json_t *head = build_chain("bg", false), *keeper, *both;
	uint64_t rv = pk_store_rv(st);
	struct order o = {.prefix = "bg"};
	char name[128];

	/* A dependent with a second, solid owner keeps it and loses the other reference. */
	keeper = make(pk_type_by_kind("PriorityClass"), NULL, "keeper", NULL);
	both = make(pk_type_by_kind("Lease"), "default", "both",
		    json_pack("[o,o]", ref_to(head, false), ref_to(keeper, false)));
	json_decref(both);
	/* a Pod owned by a Pod, as a controller */
	{
		const struct pk_type *pod = pk_type_by_kind("Pod");
		json_t *owner = NULL, *ref;

		name_of(name, sizeof(name), "bg", pod);
		ck_assert(exists(pod, "default", name, &owner));
		ref = ref_to(owner, false);
		json_object_set_new(ref, "controller", json_true());
		json_decref(make(pod, "default", "pod-of-pod", json_pack("[o]", ref)));
		json_decref(owner);
	}
	name_of(name, sizeof(name), "bg", chain[0]);
	ck_assert_int_eq(pk_store_delete_opts(st, chain[0], NULL, name, NULL, NULL, NULL), 0);
	assert_chain_gone("bg");
	ck_assert_msg(wait_gone(pk_type_by_kind("Pod"), "default", "pod-of-pod"),
		      "a Pod owned by a Pod was left behind");
	deletion_order(rv, &o);
	for (size_t i = 1; i < nchain; i++)
		ck_assert_msg(o.pos[i - 1] >= 0 && o.pos[i - 1] < o.pos[i],
			      "%s deleted before its owner %s", chain[i]->kind, chain[i - 1]->kind);
	collector_caught_up();
	ck_assert(exists(pk_type_by_kind("Lease"), "default", "both", &both));
	ck_assert_int_eq(json_array_size(pk_get(both, "metadata.ownerReferences")), 1);
	ck_assert_str_eq(
	    pk_get_string(json_array_get(pk_get(both, "metadata.ownerReferences"), 0), "name"),
	    "keeper");
	json_decref(both);
	json_decref(keeper);
	json_decref(head);
}
END_TEST

START_TEST(foreground_deletes_the_owner_last)
{
	json_t *head = build_chain("fg", true), *got = NULL;
	struct pk_store_write_opts fg = {.propagation = PK_PROPAGATE_FOREGROUND};
	uint64_t rv = pk_store_rv(st);
	struct order o = {.prefix = "fg"};
	char name[128];

	name_of(name, sizeof(name), "fg", chain[0]);
	ck_assert_int_eq(pk_store_delete_opts(st, chain[0], NULL, name, &fg, NULL, &got), 0);
	ck_assert_ptr_nonnull(pk_get(got, "metadata.deletionTimestamp"));
	json_decref(got);
	assert_chain_gone("fg");
	deletion_order(rv, &o);
	for (size_t i = 1; i < nchain; i++)
		ck_assert_msg(o.pos[i] >= 0 && o.pos[i] < o.pos[i - 1],
			      "%s deleted before its blocking dependent %s", chain[i - 1]->kind,
			      chain[i]->kind);
	json_decref(head);
}
END_TEST

START_TEST(orphan_leaves_every_kind)
{
	json_t *head = build_chain("or", false), *got = NULL, *refs;
	struct pk_store_write_opts orphan = {.propagation = PK_PROPAGATE_ORPHAN};
	char name[128];

	name_of(name, sizeof(name), "or", chain[0]);
	ck_assert_int_eq(pk_store_delete_opts(st, chain[0], NULL, name, &orphan, NULL, NULL), 0);
	collector_caught_up();
	ck_assert(!exists(chain[0], NULL, name, NULL));
	for (size_t i = 1; i < nchain; i++) {
		name_of(name, sizeof(name), "or", chain[i]);
		ck_assert_msg(exists(chain[i], "default", name, &got), "%s %s was deleted",
			      chain[i]->kind, name);
		refs = pk_get(got, "metadata.ownerReferences");
		if (i == 1)
			ck_assert_ptr_null(refs);
		else
			ck_assert_str_eq(pk_get_string(json_array_get(refs, 0), "kind"),
					 chain[i - 1]->kind);
		json_decref(got);
	}
	ck_assert(exists(pk_type_by_kind("Namespace"), NULL, "or-ns", &got));
	ck_assert_ptr_null(pk_get(got, "metadata.ownerReferences"));
	json_decref(got);
	json_decref(head);
}
END_TEST

START_TEST(reference_rules)
{
	const struct pk_type *pod = pk_type_by_kind("Pod"), *pc = pk_type_by_kind("PriorityClass");
	json_t *owner = make(pod, "default", "owner", NULL), *unserved;

	json_decref(make(pk_type_by_kind("Namespace"), NULL, "other", NULL));
	/* A namespaced owner is looked for in the dependent's namespace only. */
	json_decref(make(pk_type_by_kind("Lease"), "other", "elsewhere",
			 json_pack("[o]", ref_to(owner, false))));
	ck_assert_msg(wait_gone(pk_type_by_kind("Lease"), "other", "elsewhere"),
		      "an owner in another namespace was found");
	/* A cluster-scoped object cannot have a namespaced owner: left alone. */
	json_decref(make(pc, NULL, "invalid", json_pack("[o]", ref_to(owner, false))));
	/* Nor can a kind this server does not serve be judged. */
	unserved = json_pack("{s:s,s:s,s:s,s:s}", "apiVersion", "apps/v1", "kind", "ReplicaSet",
			     "name", "rs", "uid", "11111111-1111-1111-1111-111111111111");
	json_decref(make(pod, "default", "unserved", json_pack("[o]", unserved)));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "owner", NULL, NULL, NULL), 0);
	collector_caught_up();
	ck_assert_msg(exists(pc, NULL, "invalid", NULL),
		      "a cluster-scoped dependent of a namespaced owner was collected");
	/* and reported, as upstream does, in a Warning Event about it */
	json_t *events = NULL, *ev;
	size_t i;
	bool reported = false;

	ck_assert_int_eq(pk_store_list(st, &pk_type_event, NULL, NULL, &events, NULL, NULL), 0);
	json_array_foreach(events, i, ev)
	{
		reported |=
		    strcmp(pk_get_string(ev, "reason") ?: "", "OwnerRefInvalidNamespace") == 0 &&
		    strcmp(pk_get_string(ev, "involvedObject.name") ?: "", "invalid") == 0 &&
		    strcmp(pk_get_string(ev, "type") ?: "", "Warning") == 0;
	}
	json_decref(events);
	ck_assert_msg(reported, "no OwnerRefInvalidNamespace Event");
	ck_assert_msg(exists(pod, "default", "unserved", NULL),
		      "a dependent of a kind not served was collected");
	json_decref(owner);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-gc-graph");
	TCase *tc = tcase_create("gc");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, foreground_deletes_the_owner_last);
	tcase_add_test(tc, background_follows_every_kind);
	tcase_add_test(tc, orphan_leaves_every_kind);
	tcase_add_test(tc, reference_rules);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
