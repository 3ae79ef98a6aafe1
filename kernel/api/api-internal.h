/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api-internal.h — what the files of kernel/api share and nobody else needs:
 * YAML scalar resolution (the reader and the writer must agree on which plain
 * scalars are not strings) and the decoding helpers of objects.c.
 */
#ifndef PODKERNEL_KERNEL_API_INTERNAL_H
#define PODKERNEL_KERNEL_API_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/api/api.h"

/*
 * The value a plain (unquoted, untagged) YAML scalar stands for under the
 * YAML 1.2 core schema: null, a bool, an integer (decimal, 0o octal, 0x hex;
 * integers beyond 64 bits become reals) or a real; anything else, including
 * .inf and .nan which JSON cannot hold, is a string.  Returns 0 and the new
 * value in *ret_value, -ERANGE for a number too large for a double (1e400:
 * bad input, not a string), or -ENOMEM.
 */
int pk_scalar_resolve(const char *s, size_t len, json_t **ret_value);

/* True when a string written plain would read back as something else here or
 * in a YAML 1.1 reader (yes/no/on/off, 0777, 1_000, 12:30, ...). */
bool pk_scalar_needs_quotes(const char *s, size_t len);

/* ---- decoding helpers (objects.c) -------------------------------------- */

/* A field path being built while walking a tree: "spec.containers[0].name". */
struct pk_path {
	char s[512];
	size_t len;
};

/* Append ".key" (no dot at the start) and return the previous length. */
size_t pk_path_key(struct pk_path *p, const char *key);
/* Append "[i]" or "[key]". */
size_t pk_path_index(struct pk_path *p, size_t i);
size_t pk_path_mapkey(struct pk_path *p, const char *key);
void pk_path_pop(struct pk_path *p, size_t len);

/* A value as Kubernetes prints it in errors: "text", 5, true, {...}. */
const char *pk_value_text(const json_t *v, char *buf, size_t len);

/*
 * Typed fields of an object at path p (p names the parent).  Absent or null
 * fields leave the output alone and succeed; a field of the wrong type adds
 * "path.key: Invalid value: ...: must be ..." and fails.
 */
bool pk_field_string(const json_t *parent, const char *key, struct pk_path *p,
		     struct pk_errors *errs, const char **ret);
bool pk_field_int32(const json_t *parent, const char *key, struct pk_path *p,
		    struct pk_errors *errs, bool *ret_has, int32_t *ret);
bool pk_field_bool(const json_t *parent, const char *key, struct pk_path *p, struct pk_errors *errs,
		   bool *ret);
/* The object (or list) at key, NULL when absent, null or of the wrong type. */
json_t *pk_field_object(const json_t *parent, const char *key, struct pk_path *p,
			struct pk_errors *errs);
json_t *pk_field_array(const json_t *parent, const char *key, struct pk_path *p,
		       struct pk_errors *errs);

/*
 * A validation walk (validate_storage.c, validate_dra.c): the path of the
 * field being checked and where errors go.  Each helper reports at
 * "path.key" and leaves the path as it found it.
 */
struct pk_vctx {
	struct pk_path p;
	struct pk_errors *errs;
	char text[128];
};

/* "path.key: " fmt with %s replaced by detail (key NULL: at path itself). */
void pk_vctx_fail(struct pk_vctx *v, const char *key, const char *fmt, const char *detail);
/* obj[key] when an object (absent or null: NULL; wrong type: reported, NULL). */
json_t *pk_vctx_object(struct pk_vctx *v, const json_t *obj, const char *key);
/* obj[key] when a list; more than max items is reported but the list returned. */
json_t *pk_vctx_array(struct pk_vctx *v, const json_t *obj, const char *key, size_t max);
/* obj[key] as a string; a missing or empty required one is reported. */
const char *pk_vctx_string(struct pk_vctx *v, const json_t *obj, const char *key, bool required);

/* A resource quantity written as a string or a number, in milli-units. */
int pk_quantity_of(const json_t *v, int64_t *ret_milli);

int pk_meta_decode(json_t *obj, const struct pk_type *t, struct pk_meta *meta,
		   struct pk_errors *errs);
void pk_meta_clear(struct pk_meta *meta);

/*
 * Decoders that always hand back a view (NULL only when out of memory), with
 * every structural problem added to errs; the public pk_*_decode fail
 * instead.  Validation uses these to check the rest of an object too.
 */
struct pk_node *pk_node_decode_partial(json_t *obj, struct pk_errors *errs);
struct pk_pod *pk_pod_decode_partial(json_t *obj, struct pk_errors *errs);
struct pk_priority_class *pk_priority_class_decode_partial(json_t *obj, struct pk_errors *errs);
struct pk_group *pk_group_decode_partial(json_t *obj, struct pk_errors *errs);
struct pk_workload *pk_workload_decode_partial(json_t *obj, struct pk_errors *errs);

/*
 * The validate operations of the kinds table (kinds.c): each checks one
 * object of its kind whole, metadata included, and adds every problem to
 * errs with its field path.  obj is the caller's copy; decoders may
 * normalise it.
 */
/* Metadata only: name, namespace as the kind's scope, labels (validate.c). */
void pk_validate_meta(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/* The typed views' kinds (validate.c). */
void pk_validate_node(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
void pk_validate_pod(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
void pk_validate_priority_class(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
void pk_validate_group(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
void pk_validate_workload(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
void pk_validate_lease(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/* The resource.k8s.io/v1 kinds' spec and status (validate_dra.c). */
void pk_validate_dra(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/* PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode (validate_storage.c). */
void pk_validate_storage(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/* PodDisruptionBudget (budget.c). */
void pk_validate_budget(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/*
 * ResourceFlavor, ClusterQueue and LocalQueue (validate_kueue.c),
 * unimplemented fields refused by path.
 */
void pk_validate_kueue(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/* WorkloadPriorityClass: value (int32, required) and description (validate_kueue.c). */
void pk_validate_workload_priority_class(json_t *obj, const struct pk_type *t,
					 struct pk_errors *errs);
/* Topology: spec.levels[].nodeLabel, Kueue's rules (validate_kueue_topology.c). */
void pk_validate_topology(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/* ConfigMap: data and binaryData keys and values (validate_config.c). */
void pk_validate_config_map(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
/* convert_kueue.c: kueue.x-k8s.io/v1beta1 to and from v1beta2, per kind
 * (_same: the kinds whose fields are the same in both). */
extern const struct pk_conversion pk_kueue_v1beta1_cluster_queue;
extern const struct pk_conversion pk_kueue_v1beta1_local_queue;
extern const struct pk_conversion pk_kueue_v1beta1_cohort;
extern const struct pk_conversion pk_kueue_v1beta1_same;

#endif
