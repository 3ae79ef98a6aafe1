/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_loop.c — kernel/appliance/appliance.c, controllers.c and nodes.c
 * against a real store in a temporary directory, without the HTTP server:
 * gang bindings inside one topology domain, restart without double binding
 * or overcommit, Job controller and garbage collection, preemption, a
 * deleted node's disruption unit, a Job pod recreated after eviction, the
 * metrics text, and hooks tables registered beside the controllers'.
 */
#include "loop_fixture.h"

START_TEST(gang_lands_in_one_cube)
{
	char x[64], y[64];

	cluster();
	start();
	create(gang("g", 2, CUBE, false));
	create(pod("g-0", "g", NULL));
	create(pod("g-1", "g", NULL));
	ck_assert(wait_bound("g-0"));
	ck_assert(wait_bound("g-1"));
	node_of("g-0", x, sizeof(x));
	node_of("g-1", y, sizeof(y));
	ck_assert_str_ne(x, y);
	ck_assert_int_eq(x[0], y[0]); /* a* or b*: one cube */
	ck_assert(wait_condition("PodGroup", "g", "PodGroupInitiallyScheduled", "True"));
	ck_assert(wait_condition("Pod", "g-0", "PodScheduled", "True"));
	/* the cube search shows in the placement figures, whatever the strategy */
	ck_assert(wait_metric("scheduler_placement_evaluation_duration_seconds_count 1\n"));
	ck_assert(!wait_metric_briefly("scheduler_generated_placements_total 0\n"));
	ck_assert(!wait_metric_briefly("scheduler_placement_evaluations_total 0\n"));
	/* the workload profile behind fit's stranding score: one class, both pods */
	ck_assert(wait_metric("podkernel_workload_profile_pods_seen_total 2\n"));
	ck_assert(wait_metric("podkernel_workload_profile_share{resource=\"google.com/tpu\","
			      "devices=\"4\",models=\"\"} 1\n"));
	ck_assert(wait_metric("podkernel_workload_profile_cpu_per_device{resource=\"google.com/"
			      "tpu\",devices=\"4\",models=\"\"} 0\n"));
}
END_TEST

/* A host of a 4x4x1-chip torus of 2x2x1 hosts, at host position (x, y). */
static json_t *torus_node(const char *name, int x, int y)
{
	char coords[32];

	snprintf(coords, sizeof(coords), "%d.%d.0", 2 * x, 2 * y);
	return json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s,s:s,s:s}},s:{s:{s:s,s:s,s:s}}}",
			 "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "labels",
			 "topology.podkernel.dev/torus", "t0", "topology.podkernel.dev/torus-shape",
			 "4x4x1", "topology.podkernel.dev/host-shape", "2x2x1",
			 "topology.podkernel.dev/wraparound", "false",
			 "topology.podkernel.dev/coords", coords, "status", "allocatable", "cpu",
			 "8", "google.com/tpu", "4", "pods", "110");
}

/* The binding write carries the slice annotations; the API refuses a bad shape. */
START_TEST(slice_binding_carries_annotations)
{
	json_t *bad = gang("bad", 3, NULL, false);
	struct pk_errors errs = {0};

	pk_set(bad, "metadata.annotations",
	       json_pack("{s:s}", "scheduling.podkernel.dev/slice-shape", "4x4x1"));
	ck_assert_int_eq(pk_store_create(st, bad, &errs, NULL), -EINVAL);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msg[0], "metadata.annotations[scheduling.podkernel.dev/slice-shape]: "
				      "Invalid value: \"4x4x1\": 16 chips cannot be split evenly "
				      "among minCount 3 pods (one pod per host)");
	pk_errors_clear(&errs);
	json_decref(bad);
	create(torus_node("h0", 0, 0));
	create(torus_node("h1", 1, 0));
	create(torus_node("h2", 0, 1));
	create(torus_node("h3", 1, 1));
	start();
	json_t *g = gang("s", 4, NULL, false);

	pk_set(g, "metadata.annotations",
	       json_pack("{s:s}", "scheduling.podkernel.dev/slice-shape", "4x4x1"));
	create(g);
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "s-%d", i);
		create(pod(name, "s", NULL));
	}
	for (int i = 0; i < 4; i++) {
		char name[16], want[16];
		json_t *p;

		snprintf(name, sizeof(name), "s-%d", i);
		ck_assert(wait_bound(name));
		p = get("Pod", name);
		json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");

		snprintf(want, sizeof(want), "%d", i);
		ck_assert_str_eq(
		    json_string_value(json_object_get(ann, "scheduling.podkernel.dev/worker-id"))
			?: "",
		    want);
		snprintf(want, sizeof(want), "%d.%d.0", 2 * (i % 2), 2 * (i / 2));
		ck_assert_str_eq(
		    json_string_value(json_object_get(ann, "scheduling.podkernel.dev/slice-coords"))
			?: "",
		    want);
		snprintf(want, sizeof(want), "h%d", i);
		ck_assert_str_eq(pk_get_string(p, "spec.nodeName"), want);
		json_decref(p);
	}
}
END_TEST

START_TEST(gang_waits_for_members_then_binds)
{
	char x[64];

	cluster();
	start();
	create(gang("w", 3, NULL, false));
	create(pod("w-0", "w", NULL));
	create(pod("w-1", "w", NULL));
	sleep_ms(300);
	ck_assert_str_eq(node_of("w-0", x, sizeof(x)), ""); /* gated: 2 of minCount 3 */
	create(pod("w-2", "w", NULL));
	ck_assert(wait_bound("w-0") && wait_bound("w-1") && wait_bound("w-2"));
}
END_TEST

START_TEST(restart_keeps_bindings_and_capacity)
{
	char before[64], after[64], name[32];

	cluster();
	start();
	create(pod("solo", NULL, NULL));
	ck_assert(wait_bound("solo"));
	node_of("solo", before, sizeof(before));
	pk_appliance_stop(app);
	app = NULL;
	/* while no loop runs: more pods than the 3 free nodes */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "late-%d", i);
		create(pod(name, NULL, NULL));
	}
	start();
	for (int i = 0; i < 200 && count_pods(true) < 4; i++)
		sleep_ms(50);
	sleep_ms(300);
	ck_assert_int_eq(count_pods(true), 4);
	ck_assert_str_eq(node_of("solo", after, sizeof(after)), before);
	assert_no_overcommit();
}
END_TEST

START_TEST(job_controller_and_garbage_collection)
{
	cluster();
	start();
	create(json_loads(
	    "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": "
	    "{\"name\": \"train\", \"namespace\": \"default\"}, \"spec\": "
	    "{\"parallelism\": 2, \"scheduling\": {\"schedulingPolicy\": {\"gang\": {}}}, "
	    "\"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": "
	    "\"x\", \"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}}}",
	    0, NULL));
	ck_assert(wait_bound("train-0"));
	ck_assert(wait_bound("train-1"));
	json_t *wl = get("Workload", "train");

	ck_assert_ptr_nonnull(wl);
	json_decref(wl);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "train", NULL, NULL, NULL), 0);
	ck_assert(wait_gone("Pod", "train-0"));
	ck_assert(wait_gone("Pod", "train-1"));
	ck_assert(wait_gone("Workload", "train"));
}
END_TEST

static json_t *prio_class(const char *name, int value)
{
	return json_pack("{s:s,s:s,s:{s:s},s:i}", "apiVersion", "scheduling.k8s.io/v1", "kind",
			 "PriorityClass", "metadata", "name", name, "value", value);
}

START_TEST(preemption_makes_room_for_higher_priority)
{
	char name[32];

	cluster();
	create(prio_class("low", 10));
	create(prio_class("high", 1000));
	start();
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "low-%d", i);
		create(pod(name, NULL, "low"));
	}
	for (int i = 0; i < 200 && count_pods(true) < 4; i++)
		sleep_ms(50);
	ck_assert_int_eq(count_pods(true), 4);
	create(gang("hi", 2, CUBE, false));
	create(pod("hi-0", "hi", "high"));
	create(pod("hi-1", "hi", "high"));
	ck_assert(wait_bound("hi-0"));
	ck_assert(wait_bound("hi-1"));
	ck_assert_int_eq(count_pods(false), 4); /* two victims deleted */
	assert_no_overcommit();
	ck_assert(wait_metric("scheduler_podgroup_schedule_attempts_total{type=\"podgroup\","
			      "result=\"scheduled\"} 1\n"));
	ck_assert(wait_metric("scheduler_workload_preemption_victims_count 1\n"));
	ck_assert(wait_metric("scheduler_workload_preemption_attempts_total 1\n"));
	ck_assert(
	    wait_metric("scheduler_queued_entities{type=\"compositepodgroup\",queue=\"gated\"} 0"));
	ck_assert(wait_metric("podkernel_appliance_bindings_total 6\n"));
}
END_TEST

/* A test backend's item that the store writes: its binding and conditions. */
static void pass_to_store(struct pk_writer *store, const struct pk_write_item *it)
{
	struct pk_write_ref ref = {it->kind, it->ns, it->name, it->rv};

	if (it->node)
		pk_writer_bind(store, &ref, it->node, it->annotations);
	for (size_t c = 0; c < it->nconds; c++)
		pk_writer_set_condition(store, &ref, it->conds[c].type, it->conds[c].status,
					it->conds[c].reason, it->conds[c].message);
}

/* The store's next result (res[*k] of n) as a test backend's answer for one item. */
static void take_result(struct pk_write_result *out, const struct pk_write_result *res, size_t n,
			size_t *k)
{
	if (*k < n) {
		out->error = res[*k].error;
		out->object = json_incref(res[*k].object);
		(*k)++;
	}
}

/*
 * A backend that refuses every eviction as if the victim had changed
 * meanwhile (and counts them); everything else goes to the store.
 */
struct refusing {
	struct pk_writer *store;
	int refused;
	int error; /* what an eviction gets: 0 a lost precondition; -EIO no answer (and no read) */
};

static int refusing_commit(void *backend, const struct pk_write_batch *b,
			   struct pk_write_result *results)
{
	struct refusing *rb = backend;
	const struct pk_write_result *res = NULL;
	size_t n = 0;

	pk_writer_batch_begin(rb->store);
	for (size_t i = 0; i < b->n; i++)
		if (!b->items[i].evict)
			pass_to_store(rb->store, &b->items[i]);
	int r = pk_writer_batch_commit(rb->store, &res, &n);

	for (size_t i = 0, k = 0; i < b->n; i++) {
		if (b->items[i].evict) {
			/* object NULL: read again */
			results[i].error = rb->error ? rb->error : -PK_WRITE_ECONFLICT;
			__atomic_fetch_add(&rb->refused, 1, __ATOMIC_RELAXED);
			continue;
		}
		take_result(&results[i], res, n, &k);
	}
	return r;
}

static int refusing_get(void *backend, const struct pk_type *kind, const char *ns, const char *name,
			json_t **ret)
{
	struct refusing *rb = backend;

	if (rb->error == -EIO)
		return -EIO; /* the API server does not answer reads either */
	return pk_writer_get(rb->store, kind, ns, name, ret);
}

/*
 * Preemption whose evictions are refused: the victims stay where they are and
 * the preemptor is never bound beside them (its binding is never in the batch
 * of the evictions it needs).
 */
static void evictions_fail(int error)
{
	static const struct pk_writer_ops ops = {
	    .name = "refusing", .commit = refusing_commit, .get = refusing_get};
	struct refusing rb = {.error = error};
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	char err[256] = "";

	cluster();
	create(prio_class("low", 10));
	create(prio_class("high", 1000));
	ck_assert_int_eq(pk_writer_store_new(st, &rb.store), 0);
	ck_assert_int_eq(pk_writer_new(&ops, &rb, &cfg.writer), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	for (int i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "low-%d", i);
		create(pod(name, NULL, "low"));
	}
	for (int i = 0; i < 200 && count_pods(true) < 4; i++)
		sleep_ms(50);
	ck_assert_int_eq(count_pods(true), 4);
	create(pod("urgent", NULL, "high"));
	for (int i = 0; i < 200 && __atomic_load_n(&rb.refused, __ATOMIC_RELAXED) < 3; i++)
		sleep_ms(50);
	ck_assert_int_ge(__atomic_load_n(&rb.refused, __ATOMIC_RELAXED), 3); /* tried again */
	ck_assert_int_eq(count_pods(true), 4);
	ck_assert_int_eq(count_pods(false), 5);
	assert_no_overcommit();
	pk_appliance_stop(app);
	app = NULL;
	pk_writer_free(rb.store);
}

START_TEST(refused_eviction_never_overcommits)
{
	evictions_fail(0);
}
END_TEST

/*
 * The same when an eviction gets no answer at all (a broken connection) and
 * the victim cannot be read back from the API either: it is taken back as
 * the change stream last showed it, still bound, never as gone.
 */
START_TEST(unanswered_eviction_never_overcommits)
{
	evictions_fail(-EIO);
}
END_TEST

/*
 * A backend that refuses the first condition-only write as stale (handing
 * back the stored object, as the store does on a lost precondition) and
 * passes everything else to the store.
 */
struct stale_once {
	struct pk_writer *store;
	int refused, commits, retried; /* retried: the next commit carried it again */
	char name[64];
};

static int stale_once_commit(void *backend, const struct pk_write_batch *b,
			     struct pk_write_result *results)
{
	struct stale_once *sb = backend;
	const struct pk_write_result *res = NULL;
	size_t n = 0, refuse = b->n;
	int commit = __atomic_add_fetch(&sb->commits, 1, __ATOMIC_RELAXED);

	pk_writer_batch_begin(sb->store);
	for (size_t i = 0; i < b->n; i++) {
		const struct pk_write_item *it = &b->items[i];

		if (commit == 2 && sb->refused && strcmp(it->name, sb->name) == 0)
			__atomic_store_n(&sb->retried, 1, __ATOMIC_RELAXED);
		if (refuse == b->n && !sb->refused && !it->node && !it->evict && it->nconds &&
		    it->kind->pk == PK_KIND_POD)
			refuse = i;
		else
			pass_to_store(sb->store, it);
	}
	int r = pk_writer_batch_commit(sb->store, &res, &n);

	for (size_t i = 0, k = 0; i < b->n; i++) {
		if (i == refuse) {
			results[i].error = -PK_WRITE_ECONFLICT;
			pk_writer_get(sb->store, b->items[i].kind, b->items[i].ns, b->items[i].name,
				      &results[i].object);
			snprintf(sb->name, sizeof(sb->name), "%s", b->items[i].name);
			__atomic_store_n(&sb->refused, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&sb->commits, 1, __ATOMIC_RELAXED);
			continue;
		}
		take_result(&results[i], res, n, &k);
	}
	return r;
}

static int stale_once_get(void *backend, const struct pk_type *kind, const char *ns,
			  const char *name, json_t **ret)
{
	return pk_writer_get(((struct stale_once *)backend)->store, kind, ns, name, ret);
}

/*
 * A condition refused as stale is set again at once on the object the
 * refusal handed back (the very next commit carries it), and stands.
 */
START_TEST(stale_condition_is_written_again_on_the_current_object)
{
	static const struct pk_writer_ops ops = {
	    .name = "stale-once", .commit = stale_once_commit, .get = stale_once_get};
	struct stale_once sb = {0};
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	char err[256] = "";

	ck_assert_int_eq(pk_writer_store_new(st, &sb.store), 0);
	ck_assert_int_eq(pk_writer_new(&ops, &sb, &cfg.writer), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	create(pod("lonely", NULL, NULL)); /* no node: PodScheduled False */
	ck_assert(wait_condition("Pod", "lonely", "PodScheduled", "False"));
	ck_assert_int_eq(__atomic_load_n(&sb.refused, __ATOMIC_RELAXED), 1);
	ck_assert_str_eq(sb.name, "lonely");
	ck_assert_int_eq(__atomic_load_n(&sb.retried, __ATOMIC_RELAXED), 1);
	pk_appliance_stop(app);
	app = NULL;
	pk_writer_free(sb.store);
}
END_TEST

START_TEST(evicted_job_pod_is_recreated_elsewhere)
{
	char x[64], y[64];
	json_t *before, *after;

	cluster();
	start();
	create(
	    json_loads("{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": "
		       "{\"name\": \"svc\", \"namespace\": \"default\"}, \"spec\": "
		       "{\"parallelism\": 1, \"template\": {\"spec\": {\"containers\": [{\"name\": "
		       "\"c\", \"image\": \"x\", \"resources\": {\"requests\": "
		       "{\"google.com/tpu\": \"4\"}}}]}}}}",
		       0, NULL));
	ck_assert(wait_bound("svc-0"));
	node_of("svc-0", x, sizeof(x));
	before = get("Pod", "svc-0");
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_node, NULL, x, NULL, NULL, NULL), 0);
	/* evicted, then recreated by the Job controller (a new uid) and bound again */
	for (int i = 0; i < 200; i++) {
		after = get("Pod", "svc-0");
		if (after &&
		    strcmp(pk_get_string(after, "metadata.uid"),
			   pk_get_string(before, "metadata.uid")) != 0 &&
		    pk_get_string(after, "spec.nodeName"))
			break;
		json_decref(after);
		after = NULL;
		sleep_ms(50);
	}
	ck_assert_ptr_nonnull(after);
	node_of("svc-0", y, sizeof(y));
	ck_assert_str_ne(x, y);
	json_decref(before);
	json_decref(after);
}
END_TEST

static json_t *job(const char *name)
{
	json_t *j = json_loads("{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": "
			       "{\"namespace\": \"default\"}, \"spec\": {\"parallelism\": 1, "
			       "\"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", "
			       "\"image\": \"x\", \"resources\": {\"requests\": "
			       "{\"google.com/tpu\": \"4\"}}}]}}}}",
			       0, NULL);

	pk_set(j, "metadata.name", json_string(name));
	return j;
}

START_TEST(job_recreated_under_the_same_name_gets_its_own_pods)
{
	json_t *j, *p = NULL;
	const char *uid, *owner;
	bool ok = false;

	cluster();
	start();
	create(job("re"));
	ck_assert(wait_bound("re-0"));
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_job, "default", "re", NULL, NULL, NULL),
			 0);
	create(job("re"));
	j = get("Job", "re");
	uid = pk_get_string(j, "metadata.uid");
	for (int i = 0; i < 200 && !ok; i++) {
		json_decref(p);
		p = get("Pod", "re-0");
		owner = p ? json_string_value(json_object_get(
				json_array_get(pk_get(p, "metadata.ownerReferences"), 0), "uid"))
			  : NULL;
		ok = owner && strcmp(owner, uid) == 0 && pk_get_string(p, "spec.nodeName");
		if (!ok)
			sleep_ms(50);
	}
	ck_assert_msg(ok, "pod re-0 does not belong to the new Job");
	json_decref(p);
	json_decref(j);
}
END_TEST

START_TEST(deleted_node_evicts_the_disruption_unit)
{
	char x[64], y[64];

	cluster();
	start();
	create(gang("u", 2, NULL, true)); /* disruptionMode all */
	create(pod("u-0", "u", NULL));
	create(pod("u-1", "u", NULL));
	create(pod("other", NULL, NULL));
	ck_assert(wait_bound("u-0") && wait_bound("u-1") && wait_bound("other"));
	node_of("u-0", x, sizeof(x));
	node_of("other", y, sizeof(y));
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_node, NULL, x, NULL, NULL, NULL), 0);
	ck_assert(wait_gone("Pod", "u-0"));
	ck_assert(wait_gone("Pod", "u-1")); /* on another node, same unit */
	json_t *o = get("Pod", "other");

	ck_assert_ptr_nonnull(o); /* unrelated pod stays */
	json_decref(o);
}
END_TEST

/*
 * A node's loss evicts the pods listed on it, each only if the stored pod is
 * still that pod: one deleted and created again under the same name since
 * the list is spared.  (The loop's thread runs beside: the pods have no
 * owner, so eviction asks it for nothing.)
 */
START_TEST(eviction_spares_a_pod_recreated_under_the_same_name)
{
	char n[64];
	json_t *listed, *set;

	cluster();
	start();
	create(pod("p", NULL, NULL));
	ck_assert(wait_bound("p"));
	listed = get("Pod", "p");
	node_of("p", n, sizeof(n));
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "p", NULL, NULL, NULL),
			 0);
	create(pod("p", NULL, NULL));
	set = json_pack("[O]", listed);
	ck_assert_int_eq(ctl_evict_pods(pk_appliance_hooks_arg(app), set, n, "was deleted"), 0);
	json_decref(set);
	json_decref(listed);
	listed = get("Pod", "p");
	ck_assert_ptr_nonnull(listed); /* the new pod stays */
	ck_assert_ptr_null(pk_condition_get(listed, "DisruptionTarget"));
	set = json_pack("[O]", listed); /* the pod as it is now: evicted */
	ck_assert_int_eq(ctl_evict_pods(pk_appliance_hooks_arg(app), set, n, "was deleted"), 1);
	json_decref(set);
	json_decref(listed);
	ck_assert_ptr_null(get("Pod", "p"));
}
END_TEST

/*
 * A pod that changed since the node's pods were listed (a status write
 * raised its resourceVersion): the eviction under the listed version is
 * refused, and the pod, still the same by uid, is evicted at its new one.
 */
START_TEST(eviction_with_a_stale_resource_version_is_refused_and_retried)
{
	struct pk_errors errs = {0};
	json_t *listed, *cur, *out = NULL, *set;
	char n[64];

	cluster();
	start();
	create(pod("p", NULL, NULL));
	ck_assert(wait_bound("p"));
	listed = get("Pod", "p");
	node_of("p", n, sizeof(n));
	cur = get("Pod", "p");
	pk_set(cur, "status.message", json_string("written after the list"));
	ck_assert_int_eq(pk_store_update_opts(st, cur, PK_SUB_STATUS, NULL, &errs, &out), 0);
	pk_errors_clear(&errs);
	ck_assert_str_ne(pk_get_string(out, "metadata.resourceVersion"),
			 pk_get_string(listed, "metadata.resourceVersion"));
	json_decref(cur);
	json_decref(out);
	set = json_pack("[O]", listed);
	ck_assert_int_eq(ctl_evict_pods(pk_appliance_hooks_arg(app), set, n, "was deleted"), 1);
	json_decref(set);
	json_decref(listed);
	ck_assert_ptr_null(get("Pod", "p"));
	ck_assert(wait_metric("podkernel_node_eviction_conflicts_total 1\n"));
	ck_assert(wait_metric("podkernel_node_evictions_total 1\n"));
}
END_TEST

/* The value of a metric without labels. */
static long long metric_value(const char *name)
{
	static char text[1 << 17];
	char want[128];
	FILE *f = tmpfile();
	size_t n;
	const char *at;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pk_appliance_metrics(app, f), 0);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	snprintf(want, sizeof(want), "\n%s ", name);
	at = strstr(text, want);
	ck_assert_msg(at != NULL, "no metric %s", name);
	return atoll(at + strlen(want));
}

/* Log lines of the loop that mention a pod, counted through cfg.log. */
static int log_lines_about;
static void count_log(void *arg, int level, const char *msg)
{
	(void)level;
	if (strstr(msg, (const char *)arg))
		__atomic_fetch_add(&log_lines_about, 1, __ATOMIC_RELAXED);
}

/*
 * A pod whose object is so close to the size limit that its binding (node
 * name and PodScheduled condition) cannot be stored: every write of it fails
 * with -E2BIG.  Made before the loop starts: a first copy measures what
 * the store adds (uid, timestamps, ...), the second is padded to the byte.
 */
static void create_unwritable_pod(const char *name)
{
	size_t pad = PK_STORE_OBJECT_MAX - 4096, len;
	char *text, *fill = malloc(PK_STORE_OBJECT_MAX);
	json_t *p, *o;

	ck_assert_ptr_nonnull(fill);
	memset(fill, 'x', PK_STORE_OBJECT_MAX);
	for (int round = 0; round < 2; round++) {
		fill[pad] = '\0';
		p = pod(name, NULL, NULL);
		pk_set(p, "spec.containers[0].args", json_pack("[s]", fill));
		create(p);
		if (round == 1)
			break;
		o = get("Pod", name);
		text = json_dumps(o, JSON_COMPACT);
		len = strlen(text);
		free(text);
		json_decref(o);
		ck_assert_int_eq(
		    pk_store_delete_opts(st, &pk_type_pod, "default", name, NULL, NULL, NULL), 0);
		/* 8 bytes short of the limit: the node name alone adds more */
		fill[pad] = 'x';
		pad += PK_STORE_OBJECT_MAX - 8 - len;
	}
	free(fill);
}

/*
 * A write the loop cannot make backs off per object: the pod is retried
 * after 1 s, 2 s, ... (not at once, forever), a normal pod beside it binds
 * at once, and the log gets a line per try, not a flood.
 */
START_TEST(unwritable_pod_backs_off)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50,
					  .backoff_max_ms = 200,
					  .verbosity = 2,
					  .log = count_log,
					  .log_arg = (void *)"default/huge"};
	char err[256] = "";

	cluster();
	create_unwritable_pod("huge");
	log_lines_about = 0;
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	ck_assert(wait_metric("podkernel_appliance_binding_conflicts_total 1\n"));
	create(pod("ok", NULL, NULL));
	ck_assert(wait_bound("ok"));
	sleep_ms(2500);
	/* tried at 0, ~1 s and ~3 s at most: never in a tight circle */
	long long tries = metric_value("podkernel_appliance_binding_conflicts_total");
	ck_assert_msg(tries <= 3, "%lld failed bindings in 2.5 s", tries);
	ck_assert_int_eq(metric_value("podkernel_appliance_write_backoffs_total"), tries);
	ck_assert_int_eq(metric_value("podkernel_appliance_write_backoff_objects"), 1);
	ck_assert_int_le(__atomic_load_n(&log_lines_about, __ATOMIC_RELAXED), 4);
	char buf[64];
	ck_assert_str_eq(node_of("huge", buf, sizeof(buf)), "");
	/* Deleted, it leaves the backoff table. */
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "huge", NULL, NULL, NULL), 0);
	ck_assert(wait_metric("podkernel_appliance_write_backoff_objects 0\n"));
	assert_no_overcommit();
}
END_TEST

/*
 * A writer that cannot write pods named "bad-*": each such edit is refused
 * (-EINVAL) inside the store's batch, the others are written as by the
 * store backend.
 */
struct failing_arg {
	const struct pk_write_item *it;
	int64_t now;
};

static int failing_apply(json_t *obj, void *arg)
{
	const struct failing_arg *a = arg;

	if (strncmp(a->it->name, "bad-", 4) == 0)
		return -EINVAL;
	return pk_write_item_apply(a->it, obj, a->now);
}

static int failing_commit(void *backend, const struct pk_write_batch *batch,
			  struct pk_write_result *results)
{
	struct pk_store_edit *edits = calloc(batch->n, sizeof(*edits));
	struct failing_arg *args = calloc(batch->n, sizeof(*args));
	int r;

	ck_assert(edits && args);
	for (size_t i = 0; i < batch->n; i++) {
		const struct pk_write_item *it = &batch->items[i];

		args[i] = (struct failing_arg){.it = it, .now = time(NULL)};
		edits[i] = (struct pk_store_edit){.kind = it->kind,
						  .ns = it->ns,
						  .name = it->name,
						  .precondition_rv = it->rv,
						  .apply = failing_apply,
						  .arg = &args[i],
						  .delete_after = it->evict};
	}
	r = pk_store_edit_batch(backend, edits, batch->n);
	for (size_t i = 0; i < batch->n; i++)
		results[i] = (struct pk_write_result){.kind = batch->items[i].kind,
						      .ns = batch->items[i].ns,
						      .name = batch->items[i].name,
						      .error = r < 0 ? r : edits[i].rc,
						      .object = edits[i].object};
	free(edits);
	free(args);
	return r;
}

static int failing_get(void *backend, const struct pk_type *kind, const char *ns, const char *name,
		       json_t **ret)
{
	return pk_store_get(backend, kind, ns, name, ret);
}

static const struct pk_writer_ops failing_ops = {
    .name = "failing", .commit = failing_commit, .get = failing_get};

/*
 * 300 pods whose writes fail beside a normal one: each failing pod waits
 * 1 s, then 2 s, ... before its next try; the normal pod binds at once and
 * the log gets one line per failing pod, not one per cycle.
 */
START_TEST(failing_writes_back_off_per_object)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50,
					  .backoff_max_ms = 200,
					  .verbosity = 1,
					  .log = count_log,
					  .log_arg = (void *)"default/bad-"};
	char err[256] = "";

	cluster();
	for (int i = 0; i < 300; i++) {
		char name[32];

		snprintf(name, sizeof(name), "bad-%d", i);
		create(json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1",
				 "kind", "Pod", "metadata", "name", name, "namespace", "default",
				 "spec", "containers", "name", "c", "image", "x"));
	}
	log_lines_about = 0;
	ck_assert_int_eq(pk_writer_new(&failing_ops, st, &cfg.writer), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	create(pod("ok", NULL, NULL));
	ck_assert(wait_bound("ok"));
	sleep_ms(2500);
	/* each bad pod tried at 0, ~1 s and ~3 s at most */
	long long tries = metric_value("podkernel_appliance_binding_conflicts_total");
	ck_assert_msg(tries >= 300 && tries <= 900, "%lld failed bindings in 2.5 s", tries);
	ck_assert_int_eq(metric_value("podkernel_appliance_write_backoffs_total"), tries);
	ck_assert_int_le(metric_value("podkernel_appliance_write_backoff_objects"), 300);
	/* first failures at level 1, repeats only at level 2 */
	ck_assert_int_le(__atomic_load_n(&log_lines_about, __ATOMIC_RELAXED), 300);
	ck_assert_int_eq(count_pods(true), 1);
}
END_TEST

/* Admission refuses pods the loop could never write; a normal pod binds beside them. */
START_TEST(specless_pods_refused)
{
	cluster();
	start();
	for (int i = 0; i < 300; i++) {
		char name[32];
		struct pk_errors errs = {0};
		json_t *p;

		snprintf(name, sizeof(name), "bare-%d", i);
		p = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "Pod",
			      "metadata", "name", name, "namespace", "default");
		if (i % 2)
			json_object_set_new(p, "spec", json_object());
		ck_assert_int_eq(pk_store_create(st, p, &errs, NULL), -EINVAL);
		ck_assert_uint_eq(errs.n, 1);
		ck_assert_str_eq(errs.msg[0], i % 2 ? "spec.containers: Required value"
						    : "spec: Required value");
		pk_errors_clear(&errs);
		json_decref(p);
	}
	create(pod("ok", NULL, NULL));
	ck_assert(wait_bound("ok"));
	ck_assert_int_eq(count_pods(false), 1);
}
END_TEST

/* ---- more than one hooks table ----------------------------------------------------- */

struct hook_count {
	int begin, listed, done, events, written, rounds, freed;
	int first; /* the sequence number of its first listing */
};
static int hook_seq;

static void count_begin(void *arg)
{
	struct hook_count *c = arg;

	if (!c->begin++)
		c->first = ++hook_seq;
}

static void count_listed(void *arg, const struct pk_type *kind, const json_t *obj, int64_t now)
{
	(void)kind, (void)obj, (void)now;
	((struct hook_count *)arg)->listed++;
}

static void count_done(void *arg)
{
	((struct hook_count *)arg)->done++;
}

static void count_event(void *arg, const struct pk_source_event *ev, const struct ap_decision *d)
{
	(void)ev, (void)d;
	((struct hook_count *)arg)->events++;
}

static void count_written(void *arg, const struct pk_write_batch *b,
			  const struct pk_write_result *res, size_t n, int64_t now)
{
	(void)b, (void)res, (void)now;
	((struct hook_count *)arg)->written += (int)n;
}

static int64_t count_round(void *arg, int64_t now)
{
	(void)now;
	((struct hook_count *)arg)->rounds++;
	return 0;
}

static void count_free(void *arg)
{
	((struct hook_count *)arg)->freed++;
}

static const struct pk_appliance_hooks counting_hooks = {
    .list_begin = count_begin,
    .listed = count_listed,
    .list_done = count_done,
    .event = count_event,
    .written = count_written,
    .round = count_round,
    .free = count_free,
};

/* ResourceFlavors listed to a hook. */
struct kinds_seen {
	int flavors;
};

static void seen_listed(void *arg, const struct pk_type *kind, const json_t *obj, int64_t now)
{
	(void)obj, (void)now;
	((struct kinds_seen *)arg)->flavors += kind == &pk_type_resource_flavor;
}

static const struct pk_type *const flavors[] = {&pk_type_resource_flavor, NULL};
static const struct pk_appliance_hooks tracking_hooks = {.tracked = flavors, .listed = seen_listed};
static const struct pk_appliance_hooks plain_hooks = {.listed = seen_listed};

/*
 * A kind neither the scheduler nor the controllers read is listed (to every
 * hook, and into the loop's cache) only when some hook tracks it.
 */
START_TEST(tracked_kinds_are_listed_and_decided)
{
	struct pk_appliance_config cfg = {0};
	struct kinds_seen t = {0}, p = {0}, none = {0};
	char err[256] = "";

	create(json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
			 "ResourceFlavor", "metadata", "name", "f0"));
	ck_assert_int_eq(pk_appliance_config_add_hooks(&cfg, &plain_hooks, &none), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	pk_appliance_stop(app);
	ck_assert_int_eq(none.flavors, 0); /* nobody tracks it: not listed */
	cfg = (struct pk_appliance_config){0};
	ck_assert_int_eq(pk_appliance_config_add_hooks(&cfg, &tracking_hooks, &t), 0);
	ck_assert_int_eq(pk_appliance_config_add_hooks(&cfg, &plain_hooks, &p), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	pk_appliance_stop(app);
	app = NULL;
	ck_assert_int_eq(t.flavors, 1);
	ck_assert_int_eq(p.flavors, 1); /* listed to every hook */
}
END_TEST

/* Two tables registered before the controllers': each sees everything, in order. */
START_TEST(every_registered_hooks_table_is_called)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200},
				   full = {0};
	struct hook_count a = {0}, b = {0};
	char err[256] = "";

	for (int i = 0; i < PK_APPLIANCE_MAX_HOOKS; i++)
		ck_assert_int_eq(pk_appliance_config_add_hooks(&full, &counting_hooks, NULL), 0);
	ck_assert_int_eq(pk_appliance_config_add_hooks(&full, &counting_hooks, NULL), -ENOSPC);
	create(node("n0", "c0"));
	ck_assert_int_eq(pk_appliance_config_add_hooks(&cfg, &counting_hooks, &a), 0);
	ck_assert_int_eq(pk_appliance_config_add_hooks(&cfg, &counting_hooks, &b), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	/* the controllers registered last: theirs is the hooks' argument */
	ck_assert_ptr_nonnull(pk_appliance_hooks_arg(app));
	ck_assert_ptr_ne(pk_appliance_hooks_arg(app), &a);
	ck_assert_ptr_ne(pk_appliance_hooks_arg(app), &b);
	create(pod("p0", NULL, NULL));
	ck_assert(wait_bound("p0"));
	pk_appliance_stop(app);
	app = NULL;
	ck_assert_int_lt(a.first, b.first);
	ck_assert_int_eq(a.begin, 1);
	ck_assert_int_eq(a.done, 1);
	ck_assert_int_ge(a.listed, 1); /* the Node */
	ck_assert_int_ge(a.events, 1); /* the Pod, its binding */
	ck_assert_int_ge(a.written, 1);
	ck_assert_int_ge(a.rounds, 1);
	ck_assert_int_eq(a.freed, 1);
	ck_assert_mem_eq(&a, &b, offsetof(struct hook_count, first));
}
END_TEST

static json_t *light_pod(const char *ns, const char *name, const char *app, const char *node)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1",
			      "kind", "Pod", "metadata", "name", name, "namespace", ns, "labels",
			      "app", app, "spec", "containers", "name", "c", "image", "x");

	if (node)
		pk_set(p, "spec.nodeName", json_string(node));
	return p;
}

/* Required anti-affinity to pods labelled app=target in namespaces labelled team=team. */
static json_t *shy_pod(const char *name, const char *target, const char *team)
{
	json_t *p = light_pod("default", name, "shy", NULL);

	pk_set(p, "spec.affinity",
	       json_pack("{s:{s:[{s:s,s:{s:{s:s}},s:{s:{s:s}}}]}}", "podAntiAffinity",
			 "requiredDuringSchedulingIgnoredDuringExecution", "topologyKey", CUBE,
			 "labelSelector", "matchLabels", "app", target, "namespaceSelector",
			 "matchLabels", "team", team));
	return p;
}

/*
 * A namespaceSelector reads the labels of the Namespaces in the store:
 * those listed at start and those created later.
 */
START_TEST(namespace_selector_reads_namespaces)
{
	char x[64];

	create(json_pack("{s:s,s:s,s:{s:s,s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace",
			 "metadata", "name", "team-a", "labels", "team", "a"));
	create(node("solo", "cs"));
	create(light_pod("team-a", "web", "web", "solo"));
	start();
	create(shy_pod("shy-a", "web", "a"));
	create(light_pod("default", "plain-a", "plain", NULL));
	ck_assert(wait_bound("plain-a"));
	sleep_ms(300);
	ck_assert_str_eq(node_of("shy-a", x, sizeof(x)), "");
	create(json_pack("{s:s,s:s,s:{s:s,s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace",
			 "metadata", "name", "team-b", "labels", "team", "b"));
	create(light_pod("team-b", "db", "db", "solo"));
	create(shy_pod("shy-b", "db", "b"));
	create(shy_pod("shy-c", "db", "c")); /* no namespace has team=c: free to go */
	ck_assert(wait_bound("shy-c"));
	sleep_ms(300);
	ck_assert_str_eq(node_of("shy-b", x, sizeof(x)), "");
}
END_TEST

/* --gated-gangs-wait: a gang with a gated member binds nothing until it is ungated. */
START_TEST(gated_gangs_wait_opt_in)
{
	struct pk_appliance_config cfg = {
	    .backoff_initial_ms = 50, .backoff_max_ms = 200, .gated_gangs_wait = true};
	char err[256] = "", x[64];
	json_t *gated = pod("gw-1", "gw", NULL);

	cluster();
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	create(gang("gw", 2, NULL, false));
	create(pod("gw-0", "gw", NULL));
	pk_set(gated, "spec.schedulingGates", json_pack("[{s:s}]", "name", "example.com/q"));
	create(gated);
	create(pod("free", NULL, NULL));
	ck_assert(wait_bound("free"));
	sleep_ms(300);
	ck_assert_str_eq(node_of("gw-0", x, sizeof(x)), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("appliance-loop");
	TCase *tc = tcase_create("loop");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, gang_lands_in_one_cube);
	tcase_add_test(tc, slice_binding_carries_annotations);
	tcase_add_test(tc, gang_waits_for_members_then_binds);
	tcase_add_test(tc, restart_keeps_bindings_and_capacity);
	tcase_add_test(tc, job_controller_and_garbage_collection);
	tcase_add_test(tc, preemption_makes_room_for_higher_priority);
	tcase_add_test(tc, refused_eviction_never_overcommits);
	tcase_add_test(tc, unanswered_eviction_never_overcommits);
	tcase_add_test(tc, deleted_node_evicts_the_disruption_unit);
	tcase_add_test(tc, eviction_spares_a_pod_recreated_under_the_same_name);
	tcase_add_test(tc, eviction_with_a_stale_resource_version_is_refused_and_retried);
	tcase_add_test(tc, stale_condition_is_written_again_on_the_current_object);
	tcase_add_test(tc, evicted_job_pod_is_recreated_elsewhere);
	tcase_add_test(tc, job_recreated_under_the_same_name_gets_its_own_pods);
	tcase_add_test(tc, unwritable_pod_backs_off);
	tcase_add_test(tc, specless_pods_refused);
	tcase_add_test(tc, failing_writes_back_off_per_object);
	tcase_add_test(tc, every_registered_hooks_table_is_called);
	tcase_add_test(tc, tracked_kinds_are_listed_and_decided);
	tcase_add_test(tc, namespace_selector_reads_namespaces);
	tcase_add_test(tc, gated_gangs_wait_opt_in);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
