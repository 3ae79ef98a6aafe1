/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_writer.c — kernel/write/writer.c and the store's backend: a batch
 * groups the actions per object (a binding, its annotations and its
 * condition are one write), the store backend commits the batch in one
 * transaction, and an object whose resourceVersion precondition fails is
 * left out and handed back with its current state while the rest commit.
 * A binding that depends on a claim's allocation is written with it in the
 * same transaction, and left out when the claim's write fails; so is one
 * that depends on a PersistentVolumeClaim's volume or selected node.
 * Creates, replacements, status writes and deletions (the controllers'
 * writes) carry their resourceVersion and uid preconditions; a served kind
 * without a typed view (Namespace, Event) is named by its row too.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/write/writer.h"
#include "kernel/store/store.h"

static char dir[256];
static struct pk_store *st;

static void setup(void)
{
	char err[256];

	snprintf(dir, sizeof(dir), "/tmp/pk-writer-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
}

static void teardown(void)
{
	char cmd[300], err[256] = "";

	ck_assert_msg(pk_store_check(st, err, sizeof(err)) == 0, "invariant: %s", err);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static uint64_t create_pod(const char *name)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
			      "Pod", "metadata", "name", name, "spec", "containers", "name", "c",
			      "image", "x"),
	       *out = NULL;

	ck_assert_int_eq(pk_store_create(st, p, NULL, &out), 0);
	uint64_t rv = strtoull(pk_get_string(out, "metadata.resourceVersion"), NULL, 10);

	json_decref(p);
	json_decref(out);
	return rv;
}

static struct pk_write_ref pod_ref(const char *name, uint64_t rv)
{
	return (struct pk_write_ref){.kind = &pk_type_pod, .ns = "default", .name = name, .rv = rv};
}

START_TEST(test_store_batch_leaves_out_a_stale_object)
{
	uint64_t rv_a = create_pod("a"), rv_b = create_pod("b");
	struct pk_writer *w = NULL;
	struct pk_write_ref a = pod_ref("a", rv_a), b = pod_ref("b", rv_b);
	json_t *ann = json_pack("{s:s}", "example.com/worker-id", "0");
	const struct pk_write_result *res = NULL;
	struct pk_store_stats before, after;
	size_t n = 0;

	/* b changes behind the loop's back. */
	json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "x", "y");
	ck_assert_int_eq(pk_store_patch(st, &pk_type_pod, "default", "b", PK_PATCH_MERGE, patch,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);

	ck_assert_int_eq(pk_writer_store_new(st, &w), 0);
	ck_assert_str_eq(pk_writer_name(w), "store");
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_bind(w, &a, "n1", ann), 0);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &a, "PodScheduled", "True", "Scheduled", "bound to n1"), 0);
	ck_assert_int_eq(pk_writer_bind(w, &b, "n2", NULL), 0);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &b, "PodScheduled", "True", "Scheduled", "bound to n2"), 0);
	ck_assert_uint_eq(pk_writer_batch_size(w), 2); /* one item per object */
	pk_store_get_stats(st, &before);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	pk_store_get_stats(st, &after);
	ck_assert_uint_eq(after.writes, before.writes + 1); /* one transaction */
	ck_assert_uint_eq(n, 2);

	ck_assert_int_eq(res[0].error, 0);
	ck_assert_str_eq(res[0].name, "a");
	ck_assert_str_eq(pk_get_string(res[0].object, "spec.nodeName"), "n1");
	ck_assert_str_eq(
	    json_string_value(json_object_get(pk_get(res[0].object, "metadata.annotations"),
					      "example.com/worker-id")),
	    "0");
	json_t *c = pk_condition_get(res[0].object, "PodScheduled");
	ck_assert_str_eq(json_string_value(json_object_get(c, "message")), "bound to n1");

	ck_assert_int_eq(res[1].error, -PK_WRITE_ECONFLICT);
	ck_assert_ptr_nonnull(res[1].object); /* handed back as it is now */
	ck_assert_str_eq(pk_get_string(res[1].object, "metadata.labels.x"), "y");
	ck_assert_ptr_null(pk_get(res[1].object, "spec.nodeName"));

	/* The store agrees: a bound with its condition, b untouched. */
	json_t *got = NULL;
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "a", &got), 0);
	ck_assert_str_eq(pk_get_string(got, "spec.nodeName"), "n1");
	json_decref(got);
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "b", &got), 0);
	ck_assert_ptr_null(pk_get(got, "spec.nodeName"));
	json_decref(got);
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "nope", &got), -ENOENT);
	json_decref(ann);
	pk_writer_free(w);
}
END_TEST

static int bind_other(json_t *pod, void *arg)
{
	(void)arg;
	return pk_set(pod, "spec.nodeName", json_string("other"));
}

START_TEST(test_bound_elsewhere_and_eviction)
{
	uint64_t rv_a = create_pod("a"), rv_v = create_pod("victim");
	struct pk_writer *w = NULL;
	struct pk_write_ref a = pod_ref("a", 0), v = pod_ref("victim", rv_v);
	const struct pk_write_result *res = NULL;
	size_t n = 0;

	(void)rv_a;
	/* Another scheduler binds it (a binding, not an update: updates cannot). */
	struct pk_store_edit bind = {
	    .kind = &pk_type_pod, .ns = "default", .name = "a", .apply = bind_other};
	ck_assert_int_eq(pk_store_edit_batch(st, &bind, 1), 0);
	ck_assert_int_eq(bind.rc, 0);
	json_decref(bind.object);
	ck_assert_int_eq(pk_writer_store_new(st, &w), 0);
	pk_writer_batch_begin(w);
	/* No precondition, but the pod is bound elsewhere meanwhile: a conflict. */
	ck_assert_int_eq(pk_writer_bind(w, &a, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &v, "DisruptionTarget", "True",
						 "PreemptionByScheduler", "preempted"),
			 0);
	ck_assert_int_eq(pk_writer_evict(w, &v), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(res[0].error, -PK_WRITE_ECONFLICT);
	ck_assert_str_eq(pk_get_string(res[0].object, "spec.nodeName"), "other");
	ck_assert_int_eq(res[1].error, 0);
	ck_assert_ptr_nonnull(pk_condition_get(res[1].object, "DisruptionTarget"));
	json_t *got = NULL;
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "victim", &got), -ENOENT);
	/* A new batch starts empty. */
	pk_writer_batch_begin(w);
	ck_assert_uint_eq(pk_writer_batch_size(w), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, 0);
	pk_writer_free(w);
}
END_TEST

/* A backend sees the finished batch only: what it is handed, and its results back. */
struct recorder {
	size_t commits, items;
	char first[64];
};

static int rec_commit(void *backend, const struct pk_write_batch *b, struct pk_write_result *r)
{
	struct recorder *rec = backend;

	rec->commits++;
	rec->items += b->n;
	snprintf(rec->first, sizeof(rec->first), "%s %s/%s rv %llu node %s conds %zu",
		 b->items[0].kind->kind, b->items[0].ns, b->items[0].name,
		 (unsigned long long)b->items[0].rv, b->items[0].node ? b->items[0].node : "-",
		 b->items[0].nconds);
	for (size_t i = 0; i < b->n; i++)
		r[i].error = i == 1 ? -PK_WRITE_ECONFLICT : 0;
	return 0;
}

static int rec_get(void *backend, const struct pk_type *kind, const char *ns, const char *name,
		   json_t **ret)
{
	(void)backend, (void)kind, (void)ns, (void)name, (void)ret;
	return -ENOENT;
}

static uint64_t create_claim(const char *name)
{
	json_t *c = json_pack("{s:s,s:s,s:{s:s},s:{s:{s:[{s:s,s:{s:s}}]}}}", "apiVersion",
			      "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name",
			      name, "spec", "devices", "requests", "name", "gpu", "exactly",
			      "deviceClassName", "gpu.example.com"),
	       *out = NULL;

	ck_assert_int_eq(pk_store_create(st, c, NULL, &out), 0);
	uint64_t rv = strtoull(pk_get_string(out, "metadata.resourceVersion"), NULL, 10);

	json_decref(c);
	json_decref(out);
	return rv;
}

START_TEST(test_binding_waits_for_its_claim)
{
	uint64_t rv_a = create_pod("a"), rv_b = create_pod("b");
	uint64_t rv_ca = create_claim("ca"), rv_cb = create_claim("cb");
	struct pk_write_ref a = pod_ref("a", rv_a), b = pod_ref("b", rv_b);
	struct pk_write_ref ca = {&pk_type_resource_claim, "default", "ca", rv_ca};
	struct pk_write_ref cb = {&pk_type_resource_claim, "default", "cb", rv_cb + 1000};
	json_t *status = json_pack("{s:{s:{s:[{s:s,s:s,s:s,s:s}]}},s:[{s:s,s:s,s:s}]}",
				   "allocation", "devices", "results", "request", "gpu", "driver",
				   "gpu.example.com", "pool", "n1", "device", "gpu-0",
				   "reservedFor", "resource", "pods", "name", "a", "uid", "u-a");
	const struct pk_write_result *res = NULL;
	struct pk_writer *w = NULL;
	json_t *got = NULL;
	size_t n = 0;

	ck_assert_int_eq(pk_writer_store_new(st, &w), 0);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	/* the pods' items come first: the claims must still be written before them */
	ck_assert_int_eq(pk_writer_set_condition(w, &a, "PodScheduled", "True", "Scheduled", ""),
			 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &b, "PodScheduled", "True", "Scheduled", ""),
			 0);
	ck_assert_int_eq(pk_writer_claim(w, &ca, status), 0);
	ck_assert_int_eq(pk_writer_claim(w, &cb, status), 0); /* stale: fails */
	ck_assert_int_eq(pk_writer_bind(w, &a, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_depend(w, &a, &ca), 0);
	ck_assert_int_eq(pk_writer_bind(w, &b, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_depend(w, &b, &cb), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++) {
		bool ok = strcmp(res[i].name, "a") == 0 || strcmp(res[i].name, "ca") == 0;

		ck_assert_msg(ok ? res[i].error == 0 : res[i].error == -PK_WRITE_ECONFLICT,
			      "%s: %d", res[i].name, res[i].error);
	}
	ck_assert_int_eq(pk_store_get(st, &pk_type_resource_claim, "default", "ca", &got), 0);
	ck_assert_str_eq(
	    pk_get_string(json_array_get(pk_get(got, "status.allocation.devices.results"), 0),
			  "device"),
	    "gpu-0");
	json_decref(got);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "a", &got), 0);
	ck_assert_str_eq(pk_get_string(got, "spec.nodeName"), "n1");
	json_decref(got);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "b", &got), 0);
	ck_assert_ptr_null(pk_get_string(got, "spec.nodeName"));
	json_decref(got);
	ck_assert_int_eq(pk_store_get(st, &pk_type_resource_claim, "default", "cb", &got), 0);
	ck_assert_ptr_null(pk_get(got, "status.allocation"));
	json_decref(got);
	/* a deallocation ({}) removes the allocation and the reservations */
	json_decref(status);
	status = json_object();
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ca.rv = 0;
	ck_assert_int_eq(pk_writer_claim(w, &ca, status), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_resource_claim, "default", "ca", &got), 0);
	ck_assert_ptr_null(pk_get(got, "status.allocation"));
	ck_assert_ptr_null(pk_get(got, "status.reservedFor"));
	json_decref(got);
	json_decref(status);
	pk_writer_free(w);
}
END_TEST

static uint64_t create_pvc(const char *name)
{
	json_t *c = json_pack("{s:s,s:s,s:{s:s},s:{s:[s],s:s,s:{s:{s:s}}}}", "apiVersion", "v1",
			      "kind", "PersistentVolumeClaim", "metadata", "name", name, "spec",
			      "accessModes", "ReadWriteOnce", "storageClassName", "local",
			      "resources", "requests", "storage", "1Gi"),
	       *out = NULL;

	ck_assert_int_eq(pk_store_create(st, c, NULL, &out), 0);
	uint64_t rv = strtoull(pk_get_string(out, "metadata.resourceVersion"), NULL, 10);

	json_decref(c);
	json_decref(out);
	return rv;
}

/* A volume claim (spec.volumeName or the selected-node annotation) before its binding. */
START_TEST(test_binding_waits_for_its_volume_claim)
{
	uint64_t rv_a = create_pod("a"), rv_b = create_pod("b");
	uint64_t rv_va = create_pvc("va"), rv_vb = create_pvc("vb");
	struct pk_write_ref a = pod_ref("a", rv_a), b = pod_ref("b", rv_b);
	struct pk_write_ref va = {&pk_type_persistent_volume_claim, "default", "va", rv_va};
	struct pk_write_ref vb = {&pk_type_persistent_volume_claim, "default", "vb", rv_vb + 1000};
	json_t *ann = json_pack("{s:s}", "volume.kubernetes.io/selected-node", "n1"), *got = NULL;
	const struct pk_write_result *res = NULL;
	struct pk_writer *w = NULL;
	size_t n = 0;

	ck_assert_int_eq(pk_writer_store_new(st, &w), 0);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_volume_claim(w, &va, "pv-1", NULL), 0);
	ck_assert_int_eq(pk_writer_volume_claim(w, &vb, NULL, ann), 0); /* stale: fails */
	ck_assert_int_eq(pk_writer_volume_claim(w, &va, NULL, NULL), -EINVAL);
	ck_assert_int_eq(pk_writer_bind(w, &a, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_depend(w, &a, &va), 0);
	ck_assert_int_eq(pk_writer_bind(w, &b, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_depend(w, &b, &vb), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++) {
		bool ok = strcmp(res[i].name, "a") == 0 || strcmp(res[i].name, "va") == 0;

		ck_assert_msg(ok ? res[i].error == 0 : res[i].error == -PK_WRITE_ECONFLICT,
			      "%s: %d", res[i].name, res[i].error);
	}
	ck_assert_int_eq(pk_store_get(st, &pk_type_persistent_volume_claim, "default", "va", &got),
			 0);
	ck_assert_str_eq(pk_get_string(got, "spec.volumeName"), "pv-1");
	json_decref(got);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "b", &got), 0);
	ck_assert_ptr_null(pk_get_string(got, "spec.nodeName"));
	json_decref(got);
	/* the annotation on a current claim; a claim bound to another volume conflicts */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	vb.rv = 0;
	va.rv = 0;
	ck_assert_int_eq(pk_writer_volume_claim(w, &vb, NULL, ann), 0);
	ck_assert_int_eq(pk_writer_volume_claim(w, &va, "pv-2", NULL), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_int_eq(res[1].error, -PK_WRITE_ECONFLICT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_persistent_volume_claim, "default", "vb", &got),
			 0);
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(got, "metadata.annotations"),
							   "volume.kubernetes.io/selected-node")),
			 "n1");
	json_decref(got);
	json_decref(ann);
	pk_writer_free(w);
}
END_TEST

START_TEST(test_any_backend_gets_the_same_batch)
{
	static const struct pk_writer_ops ops = {
	    .name = "recorder", .commit = rec_commit, .get = rec_get};
	struct recorder rec = {0};
	struct pk_writer *w = NULL;
	struct pk_write_ref p = pod_ref("p", 7),
			    g = {.kind = &pk_type_pod_group, .name = "g", .rv = 9};
	const struct pk_write_result *res = NULL;
	size_t n = 0;

	ck_assert_int_eq(pk_writer_new(&ops, &rec, &w), 0);
	pk_writer_batch_begin(w);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &p, "PodScheduled", "False", "Unschedulable", "no room"), 0);
	ck_assert_int_eq(pk_writer_bind(w, &p, "n3", NULL), 0);
	/* The same condition type again replaces the first. */
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &p, "PodScheduled", "True", "Scheduled", "bound to n3"), 0);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &g, "PodGroupInitiallyScheduled", "True", "Scheduled", "ok"),
	    0);
	ck_assert_int_eq(pk_writer_bind(w, &g, "n3", NULL), -EINVAL); /* only pods bind */
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(rec.commits, 1);
	ck_assert_uint_eq(rec.items, 2);
	ck_assert_str_eq(rec.first, "Pod default/p rv 7 node n3 conds 1");
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_int_eq(res[1].error, -PK_WRITE_ECONFLICT);
	ck_assert_str_eq(res[1].name, "g");
	ck_assert_str_eq(res[1].ns, "default");
	pk_writer_free(w);
}
END_TEST

/*
 * The controllers' writes: creates (named, generated, existing), a
 * replacement that keeps identity and status, a status write, and
 * deletions under uid preconditions, with their propagation; all in one
 * transaction, each refused alone.
 */
START_TEST(test_creates_replacements_and_deletions)
{
	uint64_t rv_a = create_pod("a");
	struct pk_writer *w = NULL;
	const struct pk_write_result *res = NULL;
	struct pk_store_stats before, after;
	size_t n = 0;
	json_t *a = NULL, *got = NULL;
	json_t *fresh =
	    json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind", "Pod",
		      "metadata", "name", "fresh", "spec", "containers", "name", "c", "image", "x");
	json_t *gen = json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
				"Pod", "metadata", "generateName", "gen-", "spec", "containers",
				"name", "c", "image", "x");
	json_t *dup =
	    json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind", "Pod",
		      "metadata", "name", "a", "spec", "containers", "name", "c", "image", "x");

	ck_assert_int_eq(pk_writer_store_new(st, &w), 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "a", &a), 0);
	const char *uid_a = pk_get_string(a, "metadata.uid");
	struct pk_write_ref ra = pod_ref("a", rv_a), missing = pod_ref("a2", 0);

	ra.uid = uid_a;
	/* a: new labels (a PUT), then its status */
	json_t *want = json_deep_copy(a);
	pk_set(want, "metadata.labels", json_pack("{s:s}", "tier", "gold"));
	pk_set(want, "metadata.uid", json_string("forged"));	      /* identity is the object's */
	pk_set(want, "status", json_pack("{s:s}", "phase", "Bogus")); /* a PUT keeps status */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_pod, fresh), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_pod, gen), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_pod, dup), 0);
	ck_assert_int_eq(
	    pk_writer_bind(w, &(struct pk_write_ref){&pk_type_pod, "default", "fresh"}, "n1", NULL),
	    -EBUSY); /* a create is the item's only action */
	ck_assert_int_eq(pk_writer_replace(w, &missing, want), 0); /* a2 does not exist */
	/* a replacement is one request: no status action may join it, a deletion may */
	ck_assert_int_eq(pk_writer_set_condition(w, &missing, "Ready", "True", "", ""), -EBUSY);
	ck_assert_int_eq(pk_writer_delete(w, &missing, PK_WRITE_PROPAGATE_DEFAULT), 0);
	ck_assert_int_eq(pk_writer_batch_size(w), 4);
	pk_store_get_stats(st, &before);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	pk_store_get_stats(st, &after);
	ck_assert_uint_eq(after.writes, before.writes + 1); /* one transaction */
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_str_eq(pk_name(res[0].object), "fresh");
	ck_assert_ptr_nonnull(pk_get_string(res[0].object, "metadata.uid"));
	ck_assert_int_eq(res[1].error, 0);
	ck_assert_int_eq(strncmp(pk_name(res[1].object), "gen-", 4), 0); /* named by the store */
	ck_assert_int_eq(res[2].error, -EEXIST);
	ck_assert_int_eq(res[3].error, -ENOENT);

	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_replace(w, &ra, want), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.labels.tier"), "gold");
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.uid"), uid_a);
	/* the status stays the store's (a pod is created Pending) */
	ck_assert_str_eq(pk_get_string(res[0].object, "status.phase"), "Pending");
	uint64_t rv2 = strtoull(pk_get_string(res[0].object, "metadata.resourceVersion"), NULL, 10);

	/* the same replacement again under the old version: refused, handed back */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_replace(w, &ra, want), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_int_eq(res[0].error, -PK_WRITE_ECONFLICT);
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.labels.tier"), "gold");

	/* status under the new version; a delete under another uid is refused */
	struct pk_write_ref cur = pod_ref("a", rv2), other = pod_ref("fresh", 0);
	json_t *status = json_pack("{s:s}", "phase", "Running");

	cur.uid = uid_a;
	other.uid = "not-its-uid";
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_status(w, &cur, status), 0);
	ck_assert_int_eq(pk_writer_delete(w, &other, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_str_eq(pk_get_string(res[0].object, "status.phase"), "Running");
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.labels.tier"), "gold");
	ck_assert_int_eq(res[1].error, -PK_WRITE_ECONFLICT);
	ck_assert_ptr_nonnull(res[1].message); /* the store says why */
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "fresh", &got), 0);
	json_decref(got);

	/* the same delete under its own uid goes */
	other.uid = NULL;
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_delete(w, &other, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "fresh", &got), -ENOENT);

	json_decref(status);
	json_decref(want);
	json_decref(a);
	json_decref(fresh);
	json_decref(gen);
	json_decref(dup);
	pk_writer_free(w);
}
END_TEST

struct told {
	int n;
	char reason[32], note[128];
};

static void tell(void *arg, const struct pk_write_item *it, const json_t *obj, const char *type,
		 const char *reason, const char *action, const char *note)
{
	struct told *t = arg;

	(void)it;
	(void)obj;
	ck_assert_str_eq(type, "Normal");
	ck_assert_str_eq(action, "Repairing");
	t->n++;
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
	snprintf(t->note, sizeof(t->note), "%s", note);
}

/* A group's Repaired condition written True is told as an Event with its reason. */
START_TEST(test_repair_is_an_event)
{
	struct pk_write_cond conds[] = {
	    {"PodGroupInitiallyScheduled", "True", "Scheduled", "2 of minCount 2 pods scheduled"},
	    {"PodGroupRepaired", "True", "RepairedInPlace",
	     "placed again in its home domain rack=rb"},
	};
	struct pk_write_item it = {
	    .kind = &pk_type_pod_group, .ns = "default", .name = "h", .conds = conds, .nconds = 2};
	struct pk_write_batch b = {.items = &it, .n = 1};
	struct pk_write_result res = {.kind = &pk_type_pod_group};
	struct told t = {0};

	pk_writer_events(&b, &res, NULL, tell, &t);
	ck_assert_int_eq(t.n, 1);
	ck_assert_str_eq(t.reason, "RepairedInPlace");
	ck_assert_str_eq(t.note, "placed again in its home domain rack=rb");
	res.error = -PK_WRITE_ECONFLICT; /* not written: not told */
	pk_writer_events(&b, &res, NULL, tell, &t);
	ck_assert_int_eq(t.n, 1);
}
END_TEST

/* The Events correlator: a note repeated about the same key within the window is dropped. */
/* Create an object of kind from JSON text; the object as created. */
static json_t *create_obj(const char *text)
{
	json_t *o = json_loads(text, 0, NULL), *out = NULL;

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pk_store_create(st, o, NULL, &out), 0);
	json_decref(o);
	return out;
}

static struct pk_write_ref obj_ref(enum pk_kind kind, const json_t *obj)
{
	return (struct pk_write_ref){
	    .kind = pk_type_of(kind),
	    .ns = pk_get_string(obj, "metadata.namespace"),
	    .name = pk_name(obj),
	    .rv = strtoull(pk_get_string(obj, "metadata.resourceVersion"), NULL, 10),
	    .uid = pk_get_string(obj, "metadata.uid"),
	};
}

/*
 * A kind is its stored row: none, or another version's row, is refused.
 * Event (no status subresource) is created, replaced or deleted only.
 */
START_TEST(test_kinds_without_status)
{
	json_t *ns = create_obj("{\"apiVersion\": \"v1\", \"kind\": \"Namespace\","
				" \"metadata\": {\"name\": \"x\"}}");
	json_t *ev =
	    create_obj("{\"apiVersion\": \"v1\", \"kind\": \"Event\", \"metadata\":"
		       " {\"name\": \"x\", \"namespace\": \"default\"}, \"involvedObject\":"
		       " {\"kind\": \"Pod\", \"name\": \"p\"}, \"reason\": \"R\"}");
	struct pk_write_ref rn = obj_ref(PK_KIND_NAMESPACE, ns), re = obj_ref(PK_KIND_EVENT, ev);
	struct pk_write_ref other = re, view = re, unknown = re;
	const struct pk_write_result *res = NULL;
	struct pk_writer *w = NULL;
	json_t *want = json_deep_copy(ns), *got = NULL;
	size_t n = 0;

	other.kind = pk_type_by_version("kueue.x-k8s.io", "v1beta1", "cohorts"); /* not stored */
	view.kind = pk_type_by_resource("events.k8s.io", "events");
	unknown.kind = NULL;
	pk_set(want, "metadata.labels", json_pack("{s:s}", "team", "a"));
	ck_assert_int_eq(pk_writer_store_new(st, &w), 0);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_ptr_nonnull(other.kind);
	ck_assert_ptr_nonnull(view.kind);
	ck_assert_int_eq(pk_writer_replace(w, &other, want), -EINVAL);
	ck_assert_int_eq(pk_writer_replace(w, &view, want), -EINVAL);
	ck_assert_int_eq(pk_writer_delete(w, &unknown, PK_WRITE_PROPAGATE_DEFAULT), -EINVAL);
	ck_assert_int_eq(pk_writer_status(w, &re, json_object_get(want, "metadata")), -EINVAL);
	ck_assert_int_eq(pk_writer_set_condition(w, &re, "Ready", "True", "", ""), -EINVAL);
	ck_assert_int_eq(pk_writer_batch_size(w), 0);
	/* the same name under two kinds: two objects */
	ck_assert_int_eq(pk_writer_replace(w, &rn, want), 0);
	ck_assert_int_eq(pk_writer_delete(w, &re, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	ck_assert_int_eq(pk_writer_batch_size(w), 2);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.labels.team"), "a");
	ck_assert_int_eq(res[1].error, 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_event, "default", "x", &got), -ENOENT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_namespace, NULL, "x", &got), 0);
	ck_assert_str_eq(pk_get_string(got, "metadata.labels.team"), "a");
	json_decref(got);
	/* its precondition holds: the version read before is stale now */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_delete(w, &rn, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_int_eq(res[0].error, -PK_WRITE_ECONFLICT);
	json_decref(want);
	json_decref(ns);
	json_decref(ev);
	pk_writer_free(w);
}
END_TEST

START_TEST(test_event_limiter)
{
	struct pk_event_limiter l = {0};
	char key[32];

	ck_assert(pk_event_allowed(&l, "Pod/ns/p/FailedScheduling", "waiting", 1000));
	ck_assert(!pk_event_allowed(&l, "Pod/ns/p/FailedScheduling", "waiting", 1001));
	ck_assert(pk_event_allowed(&l, "Pod/ns/q/FailedScheduling", "waiting", 1001));
	ck_assert(pk_event_allowed(&l, "Pod/ns/p/FailedScheduling", "something else", 1002));
	ck_assert(!pk_event_allowed(&l, "Pod/ns/p/FailedScheduling", "something else",
				    1002 + PK_EVENT_REPEAT_S - 1));
	ck_assert(pk_event_allowed(&l, "Pod/ns/p/FailedScheduling", "something else",
				   1002 + PK_EVENT_REPEAT_S));
	/* a full limiter forgets everything rather than growing */
	for (int i = 0; i < PK_EVENT_LIMITER_MAX; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		pk_event_allowed(&l, key, "n", 5000);
	}
	ck_assert_uint_le(l.seen.live, PK_EVENT_LIMITER_MAX);
	ck_assert(pk_event_allowed(&l, "Pod/ns/q/FailedScheduling", "waiting", 5000));
	pk_event_limiter_free(&l);
	ck_assert_uint_eq(l.seen.live, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("write");
	TCase *tc = tcase_create("writer");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store_batch_leaves_out_a_stale_object);
	tcase_add_test(tc, test_bound_elsewhere_and_eviction);
	tcase_add_test(tc, test_any_backend_gets_the_same_batch);
	tcase_add_test(tc, test_binding_waits_for_its_claim);
	tcase_add_test(tc, test_binding_waits_for_its_volume_claim);
	tcase_add_test(tc, test_creates_replacements_and_deletions);
	tcase_add_test(tc, test_kinds_without_status);
	tcase_add_test(tc, test_event_limiter);
	tcase_add_test(tc, test_repair_is_an_event);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
