/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_memory.c — kernel/write/memory.c, the in-memory backend of the write
 * path: an item writes its object in place (a binding, its annotations and
 * its condition at the writer's clock), under the resourceVersion and uid
 * preconditions and the binding's (a pod bound elsewhere is refused, and
 * the item's other actions with it); a create appends the object, refuses a
 * name taken (EEXIST) and names a generateName reproducibly; an eviction
 * removes the pod after its condition and hands it back; a binding that
 * depends on a claim waits for it; the kinds a writer does not hold are not
 * its own; shared objects are copied at their first change and the
 * shared ones left as they were; an index kept from writer to writer is
 * what a fresh one would be; and a batch written to memory and to the store changes the
 * objects the same way (with versions, the generation too).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/store/store.h"
#include "kernel/write/writer.h"

#define NOW 1700000000 /* 2023-11-14T22:13:20Z */

static json_t *pod(const char *name, const char *rv, const char *uid, const char *node)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
			      "Pod", "metadata", "name", name, "namespace", "default", "spec",
			      "containers", "name", "c", "image", "x");

	if (rv)
		pk_set(p, "metadata.resourceVersion", json_string(rv));
	if (uid)
		pk_set(p, "metadata.uid", json_string(uid));
	if (node)
		pk_set(p, "spec.nodeName", json_string(node));
	return p;
}

static json_t *claim(const char *name)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:[{s:s,s:{s:s}}]}}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name,
			 "namespace", "default", "spec", "devices", "requests", "name", "gpu",
			 "exactly", "deviceClassName", "gpu.example.com");
}

static struct pk_write_ref ref(enum pk_kind kind, const char *name, uint64_t rv, const char *uid)
{
	return (struct pk_write_ref){
	    .kind = pk_type_of(kind), .ns = "default", .name = name, .rv = rv, .uid = uid};
}

static struct pk_writer *writer(json_t *objects, bool versions)
{
	struct pk_writer_memory_opts o = {.now = NOW, .versions = versions};
	struct pk_writer *w = NULL;

	ck_assert_int_eq(pk_writer_memory_new(objects, &o, &w), 0);
	ck_assert_str_eq(pk_writer_name(w), "memory");
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	return w;
}

static const struct pk_write_result *commit(struct pk_writer *w, size_t want)
{
	const struct pk_write_result *res = NULL;
	size_t n = 0;

	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), 0);
	ck_assert_uint_eq(n, want);
	return res;
}

START_TEST(test_binding_and_condition_in_place)
{
	json_t *objs = json_pack("[o,o]", pod("a", NULL, NULL, NULL), pod("b", NULL, NULL, NULL));
	json_t *a = json_array_get(objs, 0), *ann = json_pack("{s:s}", "example.com/worker", "3"),
	       *cond;
	struct pk_write_ref ra = ref(PK_KIND_POD, "a", 0, NULL);
	struct pk_writer *w = writer(objs, false);
	const struct pk_write_result *res;

	ck_assert_int_eq(pk_writer_bind(w, &ra, "n1", ann), 0);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &ra, "PodScheduled", "True", "Scheduled", "on n1"), 0);
	res = commit(w, 1);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_ptr_eq(res[0].object, a); /* written in place, where it was */
	ck_assert_ptr_eq(json_array_get(objs, 0), a);
	ck_assert_str_eq(pk_get_string(a, "spec.nodeName"), "n1");
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(a, "metadata.annotations"),
							   "example.com/worker")),
			 "3");
	cond = json_array_get(pk_get(a, "status.conditions"), 0);
	ck_assert_str_eq(pk_get_string(cond, "type"), "PodScheduled");
	ck_assert_str_eq(pk_get_string(cond, "lastTransitionTime"), "2023-11-14T22:13:20Z");
	/* no versions: the metadata stays as given */
	ck_assert_ptr_null(pk_get(a, "metadata.resourceVersion"));
	ck_assert_ptr_null(pk_get(json_array_get(objs, 1), "spec.nodeName"));
	json_decref(ann);
	pk_writer_free(w);
	json_decref(objs);
}
END_TEST

START_TEST(test_stale_resource_version_or_uid_refused)
{
	json_t *objs = json_pack("[o]", pod("a", "5", "u1", NULL)), *a = json_array_get(objs, 0);
	struct pk_write_ref stale = ref(PK_KIND_POD, "a", 4, NULL),
			    other = ref(PK_KIND_POD, "a", 5, "u2"),
			    fresh = ref(PK_KIND_POD, "a", 5, "u1");
	struct pk_writer *w = writer(objs, true);
	const struct pk_write_result *res;
	char rv[24];

	ck_assert_int_eq(pk_writer_set_condition(w, &stale, "Ready", "True", "", ""), 0);
	res = commit(w, 1);
	ck_assert_int_eq(res[0].error, -PK_WRITE_ECONFLICT);
	ck_assert_ptr_eq(res[0].object, a); /* handed back as it is */
	ck_assert_ptr_null(pk_get(a, "status"));

	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &other, "Ready", "True", "", ""), 0);
	ck_assert_int_eq(commit(w, 1)[0].error, -PK_WRITE_ECONFLICT);
	ck_assert_ptr_null(pk_get(a, "status"));

	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &fresh, "Ready", "True", "", ""), 0);
	ck_assert_int_eq(commit(w, 1)[0].error, 0);
	/* versions: the write stamped the next resourceVersion, so rv 5 is stale now */
	snprintf(rv, sizeof(rv), "%s", pk_get_string(a, "metadata.resourceVersion"));
	ck_assert_str_eq(rv, "6");
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &fresh, "Ready", "False", "", ""), 0);
	ck_assert_int_eq(commit(w, 1)[0].error, -PK_WRITE_ECONFLICT);
	fresh.rv = 6;
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &fresh, "Ready", "False", "", ""), 0);
	ck_assert_int_eq(commit(w, 1)[0].error, 0);
	ck_assert_str_eq(pk_get_string(json_array_get(pk_get(a, "status.conditions"), 0), "status"),
			 "False");
	pk_writer_free(w);
	json_decref(objs);
}
END_TEST

START_TEST(test_binding_of_a_bound_pod_refused)
{
	json_t *objs = json_pack("[o]", pod("a", NULL, NULL, "n1")), *a = json_array_get(objs, 0);
	struct pk_write_ref ra = ref(PK_KIND_POD, "a", 0, NULL);
	struct pk_writer *w = writer(objs, false);
	json_t *before = json_deep_copy(a);

	/* bound elsewhere: the binding and its condition are refused together */
	ck_assert_int_eq(pk_writer_set_condition(w, &ra, "PodScheduled", "True", "", ""), 0);
	ck_assert_int_eq(pk_writer_bind(w, &ra, "n2", NULL), 0);
	ck_assert_int_eq(commit(w, 1)[0].error, -PK_WRITE_ECONFLICT);
	ck_assert(json_equal(a, before));
	/* to the node it is bound to: nothing to refuse */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_bind(w, &ra, "n1", NULL), 0);
	ck_assert_int_eq(commit(w, 1)[0].error, 0);
	/* a condition status that is none is refused before anything is written */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &ra, "Ready", "Maybe", "", ""), 0);
	ck_assert_int_eq(commit(w, 1)[0].error, -EINVAL);
	ck_assert(json_equal(a, before));
	json_decref(before);
	pk_writer_free(w);
	json_decref(objs);
}
END_TEST

START_TEST(test_create_named_taken_and_generated)
{
	json_t *objs = json_pack("[o]", claim("c0")), *gen = claim("x"), *got = NULL;
	json_t *named = claim("c1"), *taken = claim("c0");
	struct pk_writer *w = writer(objs, false), *w2;
	const struct pk_write_result *res;
	char first[64];

	json_object_del(json_object_get(gen, "metadata"), "name");
	json_object_set_new(json_object_get(gen, "metadata"), "generateName",
			    json_string("pod-gpu-"));
	json_object_del(json_object_get(gen, "metadata"), "namespace");
	ck_assert_int_eq(pk_writer_create(w, &pk_type_resource_claim, named), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_resource_claim, taken), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_resource_claim, gen), 0);
	res = commit(w, 3);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_int_eq(res[1].error, -EEXIST);
	ck_assert_int_eq(res[2].error, 0);
	ck_assert_uint_eq(json_array_size(objs), 3);
	ck_assert_ptr_eq(json_array_get(objs, 1), res[0].object); /* appended, in order */
	ck_assert_ptr_eq(json_array_get(objs, 2), res[2].object);
	ck_assert_ptr_ne(res[0].object, named); /* a copy */
	snprintf(first, sizeof(first), "%s", pk_get_string(res[2].object, "metadata.name"));
	ck_assert_uint_eq(strlen(first), strlen("pod-gpu-") + 5);
	ck_assert(strncmp(first, "pod-gpu-", 8) == 0);
	ck_assert_str_eq(pk_get_string(res[2].object, "metadata.namespace"), "default");
	ck_assert_int_eq(pk_writer_get(w, &pk_type_resource_claim, "default", first, &got), 0);
	ck_assert_ptr_eq(got, json_array_get(objs, 2));
	json_decref(got);
	/* the same prefix again: another name */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_resource_claim, gen), 0);
	res = commit(w, 1);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_str_ne(pk_get_string(res[0].object, "metadata.name"), first);
	pk_writer_free(w);
	json_decref(objs);

	/* another writer over the same objects makes the same name: a run is reproducible */
	objs = json_pack("[o]", claim("c0"));
	w2 = writer(objs, true);
	ck_assert_int_eq(pk_writer_create(w2, &pk_type_resource_claim, gen), 0);
	res = commit(w2, 1);
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.name"), first);
	/* versions: what a store stamps on a new object */
	ck_assert_ptr_nonnull(pk_get_string(res[0].object, "metadata.uid"));
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.creationTimestamp"),
			 "2023-11-14T22:13:20Z");
	ck_assert_str_eq(pk_get_string(res[0].object, "metadata.resourceVersion"), "1");
	pk_writer_free(w2);
	json_decref(objs);
	json_decref(gen);
	json_decref(named);
	json_decref(taken);
}
END_TEST

START_TEST(test_eviction_deletes)
{
	json_t *objs = json_pack("[o,o,o]", pod("a", NULL, NULL, "n1"), pod("b", NULL, NULL, "n1"),
				 claim("c"));
	json_t *b = json_incref(json_array_get(objs, 1)), *got = NULL;
	struct pk_write_ref ra = ref(PK_KIND_POD, "a", 0, NULL),
			    rb = ref(PK_KIND_POD, "b", 0, NULL),
			    rc = ref(PK_KIND_RESOURCE_CLAIM, "c", 0, NULL);
	struct pk_writer *w = writer(objs, false);
	const struct pk_write_result *res;

	ck_assert_int_eq(pk_writer_set_condition(w, &rb, "DisruptionTarget", "True",
						 "PreemptionByScheduler", "preempted"),
			 0);
	ck_assert_int_eq(pk_writer_evict(w, &rb), 0);
	res = commit(w, 1);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_ptr_eq(res[0].object, b); /* as it was removed: with its condition */
	ck_assert_str_eq(pk_get_string(json_array_get(pk_get(b, "status.conditions"), 0), "type"),
			 "DisruptionTarget");
	ck_assert_uint_eq(json_array_size(objs), 2);
	ck_assert_str_eq(pk_get_string(json_array_get(objs, 0), "metadata.name"), "a");
	ck_assert_str_eq(pk_get_string(json_array_get(objs, 1), "metadata.name"), "c");
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "b", &got), -ENOENT);
	/* gone: a later write about it finds nothing */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_bind(w, &rb, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_delete(w, &ra, PK_WRITE_PROPAGATE_ORPHAN), 0);
	ck_assert_int_eq(pk_writer_delete(w, &rc, PK_WRITE_PROPAGATE_BACKGROUND), 0);
	res = commit(w, 3);
	ck_assert_int_eq(res[0].error, -ENOENT);
	ck_assert_int_eq(res[1].error, -EOPNOTSUPP); /* no garbage collector to orphan for */
	ck_assert_int_eq(res[2].error, 0);
	ck_assert_uint_eq(json_array_size(objs), 1);
	ck_assert_str_eq(pk_get_string(json_array_get(objs, 0), "metadata.name"), "a");
	json_decref(b);
	pk_writer_free(w);
	json_decref(objs);
}
END_TEST

/*
 * A shared pod with annotations and conditions of its own, bound with
 * annotations and given a condition: its copy (its own metadata and status,
 * its spec's fields shared) holds the changes, the shared pod and what it
 * holds within are left as they were.
 */
START_TEST(test_shared_pod_within_left_as_it_was)
{
	json_t *d = pod("d", NULL, NULL, NULL), *objs, *before, *mine;
	json_t *ann = json_pack("{s:s}", "example.com/placed", "yes");
	struct pk_writer_memory_opts o = {.now = NOW, .shared = true};
	struct pk_write_ref rd = ref(PK_KIND_POD, "d", 0, NULL);
	struct pk_writer *w = NULL;
	const struct pk_write_result *res;

	pk_set(d, "metadata.annotations", json_pack("{s:s}", "example.com/had", "1"));
	pk_set(d, "status",
	       json_pack("{s:[{s:s,s:s}]}", "conditions", "type", "Ready", "status", "False"));
	objs = json_pack("[O]", d);
	before = json_deep_copy(d);
	ck_assert_int_eq(pk_writer_memory_new(objs, &o, &w), 0);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_bind(w, &rd, "n1", ann), 0);
	res = commit(w, 1);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &rd, "Ready", "True", "", ""), 0);
	res = commit(w, 1);
	ck_assert_int_eq(res[0].error, 0);
	mine = json_array_get(objs, 0);
	ck_assert_ptr_ne(mine, d);
	ck_assert_str_eq(pk_get_string(mine, "spec.nodeName"), "n1");
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(mine, "metadata.annotations"),
							   "example.com/placed")),
			 "yes");
	ck_assert_str_eq(
	    pk_get_string(json_array_get(pk_get(mine, "status.conditions"), 0), "status"), "True");
	ck_assert(json_equal(d, before)); /* the shared one, within too */
	pk_writer_free(w);
	json_decref(objs);
	json_decref(before);
	json_decref(ann);
	json_decref(d);
}
END_TEST

START_TEST(test_shared_objects_copied_at_first_change)
{
	json_t *a = pod("a", NULL, NULL, NULL), *b = pod("b", NULL, NULL, "n1"),
	       *c = pod("c", NULL, NULL, "n1");
	json_t *objs = json_pack("[O,O,O]", a, b, c), *mine, *got = NULL;
	json_t *before = json_deep_copy(a);
	struct pk_writer_memory_opts o = {.now = NOW, .shared = true};
	struct pk_write_ref ra = ref(PK_KIND_POD, "a", 0, NULL),
			    rb = ref(PK_KIND_POD, "b", 0, NULL),
			    rc = ref(PK_KIND_POD, "c", 0, NULL);
	struct pk_writer *w = NULL;
	const struct pk_write_result *res;

	ck_assert_int_eq(pk_writer_memory_new(objs, &o, &w), 0);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_bind(w, &ra, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_evict(w, &rc), 0); /* a bare eviction changes nothing */
	res = commit(w, 2);
	ck_assert_int_eq(res[0].error, 0);
	mine = json_array_get(objs, 0);
	ck_assert_ptr_ne(mine, a); /* a copy, in its place */
	ck_assert_ptr_eq(res[0].object, mine);
	ck_assert_str_eq(pk_get_string(mine, "spec.nodeName"), "n1");
	ck_assert(json_equal(a, before)); /* the shared one as it was */
	ck_assert_int_eq(res[1].error, 0);
	ck_assert_ptr_eq(res[1].object, c); /* removed as it was */
	ck_assert_uint_eq(json_array_size(objs), 2);
	ck_assert_ptr_eq(json_array_get(objs, 1), b); /* never changed: still shared */
	/* the copy is the writer's own: a second change writes it, no copy again */
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &ra, "PodScheduled", "True", "Scheduled", "on n1"), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &rb, "Ready", "True", "", ""), 0);
	res = commit(w, 2);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_ptr_eq(json_array_get(objs, 0), mine);
	ck_assert_str_eq(
	    pk_get_string(json_array_get(pk_get(mine, "status.conditions"), 0), "type"),
	    "PodScheduled");
	ck_assert_ptr_ne(json_array_get(objs, 1), b);
	ck_assert_ptr_null(pk_get(b, "status"));
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "b", &got), 0);
	ck_assert_ptr_eq(got, json_array_get(objs, 1));
	ck_assert(json_equal(a, before));
	json_decref(got);
	json_decref(before);
	pk_writer_free(w);
	json_decref(objs);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}
END_TEST

START_TEST(test_binding_waits_for_its_claim)
{
	json_t *objs = json_pack("[o,o,o]", pod("a", NULL, NULL, NULL), pod("b", NULL, NULL, NULL),
				 claim("ca"));
	json_t *status = json_pack("{s:{s:{s:[{s:s,s:s,s:s,s:s}]}}}", "allocation", "devices",
				   "results", "request", "gpu", "driver", "gpu.example.com", "pool",
				   "n1", "device", "gpu-0");
	struct pk_write_ref a = ref(PK_KIND_POD, "a", 0, NULL), b = ref(PK_KIND_POD, "b", 0, NULL),
			    ca = ref(PK_KIND_RESOURCE_CLAIM, "ca", 0, NULL),
			    cb = ref(PK_KIND_RESOURCE_CLAIM, "cb", 0, NULL);
	struct pk_writer *w = writer(objs, false);
	const struct pk_write_result *res;

	/* the pods' items come first: the claims must still be written before them */
	ck_assert_int_eq(pk_writer_bind(w, &a, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_depend(w, &a, &ca), 0);
	ck_assert_int_eq(pk_writer_bind(w, &b, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_depend(w, &b, &cb), 0);
	ck_assert_int_eq(pk_writer_claim(w, &ca, status), 0);
	ck_assert_int_eq(pk_writer_claim(w, &cb, status), 0); /* not there */
	res = commit(w, 4);
	ck_assert_int_eq(res[0].error, 0);		     /* a */
	ck_assert_int_eq(res[1].error, 0);		     /* ca */
	ck_assert_int_eq(res[2].error, -PK_WRITE_ECONFLICT); /* b, for cb */
	ck_assert_int_eq(res[3].error, -ENOENT);	     /* cb */
	ck_assert_str_eq(pk_get_string(json_array_get(objs, 0), "spec.nodeName"), "n1");
	ck_assert_ptr_null(pk_get(json_array_get(objs, 1), "spec.nodeName"));
	ck_assert_ptr_nonnull(pk_get(json_array_get(objs, 2), "status.allocation"));
	json_decref(status);
	pk_writer_free(w);
	json_decref(objs);
}
END_TEST

static bool pods_only(const struct pk_type *kind)
{
	return kind->pk == PK_KIND_POD;
}

START_TEST(test_kinds_not_held_are_not_written)
{
	json_t *node = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Node",
				 "metadata", "name", "n1");
	json_t *objs = json_pack("[o,O]", pod("a", NULL, NULL, NULL), node), *before;
	json_t *other = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Node",
				  "metadata", "name", "n2");
	struct pk_writer_memory_opts o = {.holds = pods_only, .now = NOW};
	struct pk_write_ref rn = {.kind = &pk_type_node, .name = "n1"},
			    ra = ref(PK_KIND_POD, "a", 0, NULL);
	struct pk_writer *w = NULL;
	const struct pk_write_result *res;

	before = json_deep_copy(node);
	ck_assert_int_eq(pk_writer_memory_new(objs, &o, &w), 0);
	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &rn, "Ready", "False", "", ""), 0);
	ck_assert_int_eq(pk_writer_create(w, &pk_type_node, other), 0);
	ck_assert_int_eq(pk_writer_set_condition(w, &ra, "Ready", "True", "", ""), 0);
	res = commit(w, 3);
	ck_assert_int_eq(res[0].error, -ENOENT);
	ck_assert_int_eq(res[1].error, -EOPNOTSUPP);
	ck_assert_int_eq(res[2].error, 0);
	ck_assert(json_equal(node, before));
	ck_assert_uint_eq(json_array_size(objs), 2);
	pk_writer_free(w);
	json_decref(other);
	json_decref(before);
	json_decref(node);
	json_decref(objs);
	/* not an array: refused */
	ck_assert_int_eq(pk_writer_memory_new(NULL, NULL, &w), -EINVAL);
}
END_TEST

/* ---- the same batch through the store and through memory ----------------------- */

/* The batch both backends are given: every kind of item the scheduler writes, and a status. */
static void same_batch(struct pk_writer *w)
{
	struct pk_write_ref a = ref(PK_KIND_POD, "a", 0, NULL), b = ref(PK_KIND_POD, "b", 0, NULL),
			    c = ref(PK_KIND_RESOURCE_CLAIM, "c", 0, NULL),
			    v = ref(PK_KIND_PERSISTENT_VOLUME_CLAIM, "v", 0, NULL);
	json_t *ann = json_pack("{s:s}", "example.com/worker", "1");
	json_t *sel = json_pack("{s:s}", "volume.kubernetes.io/selected-node", "n1");
	json_t *alloc = json_pack("{s:{s:{s:[{s:s,s:s,s:s,s:s}]}},s:[{s:s,s:s,s:s}]}", "allocation",
				  "devices", "results", "request", "gpu", "driver",
				  "gpu.example.com", "pool", "n1", "device", "gpu-0", "reservedFor",
				  "resource", "pods", "name", "a", "uid", "u-a");
	json_t *st = json_pack("{s:[{s:s,s:s}]}", "resourceClaimStatuses", "name", "gpu",
			       "resourceClaimName", "c");

	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_claim(w, &c, alloc), 0);
	ck_assert_int_eq(pk_writer_volume_claim(w, &v, "pv-1", sel), 0);
	ck_assert_int_eq(pk_writer_status(w, &a, st), 0);
	ck_assert_int_eq(pk_writer_bind(w, &a, "n1", ann), 0);
	ck_assert_int_eq(pk_writer_depend(w, &a, &c), 0);
	ck_assert_int_eq(pk_writer_depend(w, &a, &v), 0);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &a, "PodScheduled", "True", "Scheduled", "bound"), 0);
	ck_assert_int_eq(
	    pk_writer_set_condition(w, &b, "PodScheduled", "False", "Unschedulable", "no room"), 0);
	json_decref(ann);
	json_decref(sel);
	json_decref(alloc);
	json_decref(st);
}

/* o without what only a store stamps (resourceVersion, times). */
static json_t *plain(const json_t *o)
{
	json_t *c = json_deep_copy(o), *x;
	size_t i;

	json_object_del(json_object_get(c, "metadata"), "resourceVersion");
	json_array_foreach(pk_get(c, "status.conditions"), i, x)
	    json_object_del(x, "lastTransitionTime");
	return c;
}

START_TEST(test_memory_writes_as_the_store_does)
{
	char dir[] = "/tmp/pk-memory-test-XXXXXX", err[256], cmd[300];
	json_t *in[] = {pod("a", NULL, NULL, NULL), pod("b", NULL, NULL, NULL), claim("c"),
			json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[s],s:s,s:{s:{s:s}}}}", "apiVersion",
				  "v1", "kind", "PersistentVolumeClaim", "metadata", "name", "v",
				  "namespace", "default", "spec", "accessModes", "ReadWriteOnce",
				  "storageClassName", "local", "resources", "requests", "storage",
				  "1Gi")};
	const char *kinds[] = {"Pod", "Pod", "ResourceClaim", "PersistentVolumeClaim"};
	json_t *objs = json_array();
	struct pk_writer *sw = NULL, *mw;
	struct pk_store *st = NULL;
	const struct pk_write_result *res;
	size_t n = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	for (size_t i = 0; i < 4; i++) {
		json_t *out = NULL;

		ck_assert_int_eq(pk_store_create(st, in[i], NULL, &out), 0);
		json_array_append_new(objs, out); /* memory starts from the stored objects */
		json_decref(in[i]);
	}
	ck_assert_int_eq(pk_writer_store_new(st, &sw), 0);
	same_batch(sw);
	ck_assert_int_eq(pk_writer_batch_commit(sw, &res, &n), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(res[i].error == 0, "store: %s: %d", res[i].name, res[i].error);
	mw = writer(objs, true); /* versions: the generation as the store keeps it */
	same_batch(mw);
	res = commit(mw, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(res[i].error == 0, "memory: %s: %d", res[i].name, res[i].error);
	for (size_t i = 0; i < 4; i++) {
		json_t *m = json_array_get(objs, i), *s = NULL, *pm, *ps;

		ck_assert_int_eq(
		    pk_store_get(st, pk_type_by_kind(kinds[i]), "default", pk_name(m), &s), 0);
		pm = plain(m);
		ps = plain(s);
		ck_assert_msg(json_equal(pm, ps), "%s %s differs:\nmemory %s\nstore  %s", kinds[i],
			      pk_name(m), json_dumps(pm, JSON_SORT_KEYS),
			      json_dumps(ps, JSON_SORT_KEYS));
		json_decref(pm);
		json_decref(ps);
		json_decref(s);
	}
	pk_writer_free(mw);
	pk_writer_free(sw);
	pk_store_close(st);
	json_decref(objs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * A store in a fresh directory dir (a mkdtemp template) holding one
 * suspended Job default/j of one container, image x; the stored tree the
 * create handed out goes to ret_stored.
 */
static struct pk_store *job_store_open(char *dir, json_t **ret_stored)
{
	json_t *job = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:b,s:{s:{s:s,s:[{s:s,s:s}]}}}}",
				"apiVersion", "batch/v1", "kind", "Job", "metadata", "name", "j",
				"namespace", "default", "spec", "suspend", 1, "template", "spec",
				"restartPolicy", "Never", "containers", "name", "c", "image", "x");
	struct pk_store *st = NULL;
	char err[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_store_create(st, job, NULL, ret_stored), 0);
	json_decref(job);
	return st;
}

/* Close st and remove its directory dir. */
static void job_store_close(struct pk_store *st, const char *dir)
{
	char cmd[300];

	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * A Job written through the store (its replacement and its status, as the
 * queue controller writes an admission): the new object is the write's, and
 * the tree the store handed out before is left as it was (the edit shares
 * what it does not change with it).
 */
START_TEST(test_store_job_write_leaves_the_tree_before)
{
	char dir[] = "/tmp/pk-memory-test-XXXXXX";
	json_t *stored = NULL, *before, *want, *now = NULL;
	json_t *status = json_pack("{s:i}", "active", 0);
	struct pk_write_ref r = ref(PK_KIND_JOB, "j", 0, NULL);
	struct pk_writer *sw = NULL;
	struct pk_store *st = job_store_open(dir, &stored);
	const struct pk_write_result *res;
	size_t n = 0;

	before = json_deep_copy(stored);
	want = json_deep_copy(stored);
	pk_set(want, "spec.suspend", json_false());
	pk_set(want, "spec.template.spec.containers",
	       json_pack("[{s:s,s:s}]", "name", "d", "image", "y"));
	pk_set(want, "metadata.annotations", json_pack("{s:s}", "example.com/why", "admitted"));
	ck_assert_int_eq(pk_writer_store_new(st, &sw), 0);
	ck_assert_int_eq(pk_writer_batch_begin(sw), 0);
	ck_assert_int_eq(pk_writer_replace(sw, &r, want), 0);
	ck_assert_int_eq(pk_writer_batch_commit(sw, &res, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert(json_equal(stored, before)); /* handed out before: as it was */
	ck_assert_int_eq(pk_store_get(st, &pk_type_job, "default", "j", &now), 0);
	json_decref(before);
	before = json_deep_copy(now);
	ck_assert_int_eq(pk_writer_batch_begin(sw), 0);
	ck_assert_int_eq(pk_writer_status(sw, &r, status), 0);
	ck_assert_int_eq(pk_writer_batch_commit(sw, &res, &n), 0);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert(json_equal(now, before));
	json_decref(now);
	ck_assert_int_eq(pk_store_get(st, &pk_type_job, "default", "j", &now), 0);
	ck_assert(json_is_false(pk_get(now, "spec.suspend")));
	ck_assert_str_eq(pk_get_string(now, "spec.template.spec.containers[0].image"), "y");
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(now, "metadata.annotations"),
							   "example.com/why")),
			 "admitted");
	ck_assert_int_eq(json_integer_value(pk_get(now, "status.active")), 0);
	ck_assert_str_eq(pk_get_string(stored, "spec.template.spec.containers[0].image"), "x");
	json_decref(now);
	pk_writer_free(sw);
	job_store_close(st, dir);
	json_decref(stored);
	json_decref(before);
	json_decref(want);
	json_decref(status);
}
END_TEST

/*
 * A replacement held, not copied (pk_writer_replace_held, as the queue
 * controller writes a pending reason): a copy of the stored tree with its
 * own metadata and annotations, the rest the stored tree's.  The write
 * stores the new annotation, and neither the tree handed out before nor the
 * replacement changes, through that write or the status write after it
 * (held too, pk_writer_status_held).
 */
START_TEST(test_store_job_replace_held_leaves_both_trees)
{
	char dir[] = "/tmp/pk-memory-test-XXXXXX";
	json_t *stored = NULL, *before, *copy, *copy_before, *meta, *now = NULL;
	json_t *status = json_pack("{s:i}", "active", 1);
	struct pk_write_ref r = ref(PK_KIND_JOB, "j", 0, NULL);
	struct pk_writer *sw = NULL;
	struct pk_store *st = job_store_open(dir, &stored);
	const struct pk_write_result *res;
	size_t n = 0;

	before = json_deep_copy(stored);
	copy = json_copy(stored);
	meta = json_copy(json_object_get(stored, "metadata"));
	json_object_set_new(meta, "annotations", json_pack("{s:s}", "example.com/why", "waits"));
	json_object_set_new(copy, "metadata", meta);
	copy_before = json_deep_copy(copy);
	ck_assert_int_eq(pk_writer_store_new(st, &sw), 0);
	ck_assert_int_eq(pk_writer_batch_begin(sw), 0);
	ck_assert_int_eq(pk_writer_replace_held(sw, &r, copy), 0);
	ck_assert_int_eq(pk_writer_batch_commit(sw, &res, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert_int_eq(pk_writer_batch_begin(sw), 0);
	ck_assert_int_eq(pk_writer_status_held(sw, &r, status), 0); /* held too */
	ck_assert_int_eq(pk_writer_batch_commit(sw, &res, &n), 0);
	ck_assert_int_eq(res[0].error, 0);
	ck_assert(json_equal(stored, before));	  /* handed out before: as it was */
	ck_assert(json_equal(copy, copy_before)); /* the replacement held: as it was */
	ck_assert_int_eq(json_integer_value(json_object_get(status, "active")), 1);
	ck_assert_uint_eq(json_object_size(status), 1); /* the status held: as it was */
	ck_assert_int_eq(pk_store_get(st, &pk_type_job, "default", "j", &now), 0);
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(now, "metadata.annotations"),
							   "example.com/why")),
			 "waits");
	ck_assert_int_eq(json_integer_value(pk_get(now, "status.active")), 1);
	ck_assert_str_eq(pk_get_string(now, "spec.template.spec.containers[0].image"), "x");
	json_decref(now);
	pk_writer_free(sw);
	job_store_close(st, dir);
	json_decref(stored);
	json_decref(before);
	json_decref(copy);
	json_decref(copy_before);
	json_decref(status);
}
END_TEST

/* ---- an index kept from writer to writer --------------------------------------- */

/* Whether ix holds exactly the pods and claims of objs, each under its key, as a fresh index. */
static bool index_is_fresh(const struct pk_writer_memory_index *ix, const json_t *objs)
{
	char key[600];
	size_t i, held = 0;
	json_t *o;

	json_array_foreach(objs, i, o)
	{
		enum pk_kind k = pk_kind_of(o);

		if (k != PK_KIND_POD && k != PK_KIND_RESOURCE_CLAIM)
			continue;
		held++;
		if (pk_writer_memory_index_get(ix, pk_obj_key(key, sizeof(key), pk_type_of(k),
							      pk_namespace(o), pk_name(o))) != o)
			return false;
	}
	return pk_writer_memory_index_count(ix) == held;
}

/* Whether w's kinds of objs are each item's. */
static bool kinds_are_fresh(struct pk_writer *w, const json_t *objs)
{
	const enum pk_kind *kinds = pk_writer_memory_kinds(w, objs);

	for (size_t i = 0; kinds && i < json_array_size(objs); i++)
		if (kinds[i] != pk_kind_of(json_array_get(objs, i)))
			return false;
	return kinds && !pk_writer_memory_kinds(w, json_array_get(objs, 0));
}

/* The kinds of objs' items (a static buffer: the test's arrays stay small). */
static const enum pk_kind *kinds_of(const json_t *objs)
{
	static enum pk_kind v[4096];

	ck_assert_uint_le(json_array_size(objs), 4096);
	for (size_t i = 0; i < json_array_size(objs); i++)
		v[i] = pk_kind_of(json_array_get(objs, i));
	return v;
}

static bool pods_and_claims(const struct pk_type *kind)
{
	return kind->pk == PK_KIND_POD || kind->pk == PK_KIND_RESOURCE_CLAIM;
}

static uint64_t ix_rng = 88172645463325252ULL;

static unsigned ix_rand(unsigned n)
{
	ix_rng ^= ix_rng << 13;
	ix_rng ^= ix_rng >> 7;
	ix_rng ^= ix_rng << 17;
	return (unsigned)(ix_rng % n);
}

/* One batch of random writes through w over objs: bindings, creates, deletions. */
static void random_writes(struct pk_writer *w, json_t *objs, int round)
{
	char name[32];

	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	for (int k = 0; k < 4; k++) {
		json_t *o = json_array_get(objs, ix_rand((unsigned)json_array_size(objs)));
		struct pk_write_ref r = ref(PK_KIND_POD, pk_name(o), 0, NULL);
		unsigned what = ix_rand(3);

		if (what == 1) {
			snprintf(name, sizeof(name), "made-%d-%d", round, k);
			o = claim(name);
			ck_assert_int_eq(pk_writer_create(w, &pk_type_resource_claim, o), 0);
			json_decref(o);
		} else if (pk_kind_of(o) == PK_KIND_POD && what == 0 &&
			   !pk_get(o, "spec.nodeName")) {
			ck_assert_int_eq(pk_writer_bind(w, &r, "n1", NULL), 0);
		} else if (pk_kind_of(o) == PK_KIND_POD && what == 2) {
			ck_assert_int_eq(pk_writer_delete(w, &r, PK_WRITE_PROPAGATE_DEFAULT), 0);
		}
	}
	commit(w, pk_writer_batch_size(w));
}

/*
 * next: objs changed as a carried scheduler's cluster changes between two
 * writers: pods gone, changed (a copy in their place), new in the middle.
 */
static json_t *moved(const json_t *objs, int round, json_t *gone, json_t *came)
{
	json_t *next = json_array(), *o;
	char name[32];
	size_t i;

	json_array_foreach(objs, i, o)
	{
		unsigned what = pk_kind_of(o) == PK_KIND_NODE ? 0 : ix_rand(6);

		if (what == 1) { /* gone */
			json_array_append(gone, o);
			continue;
		}
		if (what == 2) { /* changed */
			json_t *c = json_deep_copy(o);

			pk_set(c, "metadata.labels", json_pack("{s:i}", "round", round));
			json_array_append(gone, o);
			json_array_append(came, c);
			json_array_append_new(next, c);
			continue;
		}
		json_array_append(next, o);
		if (what == 3) { /* new, in the middle */
			snprintf(name, sizeof(name), "m-%d-%zu", round, i);
			json_array_append_new(next, pod(name, NULL, NULL, NULL));
			json_array_append(came, json_array_get(next, json_array_size(next) - 1));
		}
	}
	return next;
}

/*
 * Writers over a growing array (each over the last one's array with new
 * objects after it, as a kept scheduler's runs), sharing one index: after
 * each, the index and the items' kinds are what a fresh writer's would be
 * (copies made, objects created and deleted); one told it holds more than the last array had
 * indexes everything again.
 */
START_TEST(test_kept_index_matches_a_fresh_one)
{
	struct pk_writer_memory_index *ix = NULL;
	json_t *objs = json_array();
	char name[32];

	ck_assert_int_eq(pk_writer_memory_index_new(&ix), 0);
	for (int round = 0; round < 40; round++) {
		json_t *next = json_array();
		size_t from = json_array_size(objs);
		struct pk_writer_memory_opts o = {.holds = pods_and_claims,
						  .now = NOW,
						  .shared = true,
						  .index = ix,
						  .indexed = round == 20 ? from + 1 : from};
		struct pk_writer *w = NULL;

		if (round % 5 == 4) { /* the array changed between the writers */
			json_t *gone = json_array(), *came = json_array();

			json_decref(next);
			next = moved(objs, round, gone, came);
			ck_assert_int_eq(pk_writer_memory_index_moved(
					     ix, pods_and_claims, gone, came, json_array_size(next),
					     round % 10 == 4 ? kinds_of(next) : NULL),
					 0);
			ck_assert(index_is_fresh(ix, next));
			o.indexed = json_array_size(next);
			json_decref(gone);
			json_decref(came);
		} else {
			json_array_extend(next, objs);
		}
		for (int k = 0; k < 3; k++) {
			snprintf(name, sizeof(name), "p-%d-%d", round, k);
			json_array_append_new(next, pod(name, NULL, NULL, NULL));
		}
		snprintf(name, sizeof(name), "n-%d", round);
		json_array_append_new(next, json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1",
						      "kind", "Node", "metadata", "name", name));
		ck_assert_int_eq(pk_writer_memory_new(next, &o, &w), 0);
		ck_assert(index_is_fresh(ix, next));
		if (round % 3 == 0) /* kinds read before the writes and kept through them */
			ck_assert(kinds_are_fresh(w, next));
		random_writes(w, next, round);
		ck_assert(index_is_fresh(ix, next));
		ck_assert(kinds_are_fresh(w, next));
		pk_writer_free(w);
		json_decref(objs);
		objs = next;
	}
	ck_assert_uint_gt(pk_writer_memory_index_count(ix), 40);
	pk_writer_memory_index_free(ix);
	json_decref(objs);
}
END_TEST

static Suite *memory_suite(void)
{
	Suite *s = suite_create("write-memory");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_binding_and_condition_in_place);
	tcase_add_test(tc, test_stale_resource_version_or_uid_refused);
	tcase_add_test(tc, test_binding_of_a_bound_pod_refused);
	tcase_add_test(tc, test_create_named_taken_and_generated);
	tcase_add_test(tc, test_eviction_deletes);
	tcase_add_test(tc, test_shared_objects_copied_at_first_change);
	tcase_add_test(tc, test_shared_pod_within_left_as_it_was);
	tcase_add_test(tc, test_binding_waits_for_its_claim);
	tcase_add_test(tc, test_kinds_not_held_are_not_written);
	tcase_add_test(tc, test_memory_writes_as_the_store_does);
	tcase_add_test(tc, test_store_job_write_leaves_the_tree_before);
	tcase_add_test(tc, test_store_job_replace_held_leaves_both_trees);
	tcase_add_test(tc, test_kept_index_matches_a_fresh_one);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(memory_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
