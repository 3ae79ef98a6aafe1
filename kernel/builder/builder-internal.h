/* SPDX-License-Identifier: Apache-2.0 */
/*
 * builder-internal.h — what the files of kernel/builder share: field-path
 * strings, mapping of the user's building blocks into the intermediate form,
 * object skeletons (metadata, ownerReferences) and pod stamping.
 */
#ifndef PODKERNEL_KERNEL_BUILDER_INTERNAL_H
#define PODKERNEL_KERNEL_BUILDER_INTERNAL_H

#include "kernel/builder/builder.h"

#define WB_SCHED_API "scheduling.k8s.io/v1alpha3"

/* "a.b" joined, or the non-empty one; malloc'ed, NULL on allocation failure. */
char *wb_path_join(const char *a, const char *b);
/* printf into a malloc'ed string, NULL on failure. */
char *wb_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Short JSON rendering of a value for "Invalid value: X" (malloc'ed). */
char *wb_json_brief(const json_t *value);

/* Names of the block fields and their enum values (one table). */
const char *wb_block_name(enum wb_block block);
const char *wb_policy_name(enum wb_policy_kind kind);
const char *wb_disruption_name(enum wb_disruption_kind kind);

/*
 * Map one user block into cfg (only that block's fields are touched).
 * composite selects the composite variant (minGroupCount).  With
 * declarative, the value rules of the building blocks are checked too;
 * type errors are always reported.  path is the block's full field path.
 * Returns 0 or -EINVAL (errors added; errs may be NULL to map silently).
 */
int wb_map_block(enum wb_block block, const json_t *data, const char *path, bool composite,
		 bool declarative, struct wb_config *cfg, struct pk_errors *errs);

/* Map the user's blocks of one item into u (a fresh config); errors at root_path + block path. */
int wb_item_map_input(const struct wb_item *item, const char *root_path, bool declarative,
		      struct wb_config *u, struct pk_errors *errs);
/* Field-by-field override of cfg by the blocks the user set in item (mapped into u). */
int wb_config_override(struct wb_config *cfg, const struct wb_config *u,
		       const struct wb_item *item);
/* wb_item_resolve with the declarative rules switchable. */
int wb_item_resolve_ex(struct wb_item *root, const char *root_path, bool declarative,
		       struct pk_errors *errs);

/* Whether two configs hold the same value for one block (update rules). */
bool wb_block_equal(enum wb_block block, const struct wb_config *a, const struct wb_config *b);

/* Fill in what the library defaults when nothing else did: basic, single. */
void wb_config_finalize(struct wb_config *cfg);

/* The JSON form of a resolved config, the fields of a (Composite)PodGroup(Template). */
int wb_config_to_json(const struct wb_config *cfg, bool composite, json_t *target);

/* {apiVersion, kind, name, uid?, controller: true, blockOwnerDeletion: true} */
json_t *wb_owner_reference(const struct wb_owner *owner);
/* The owner of an object that its controller writes into what it creates. */
void wb_owner_of(const json_t *obj, struct wb_owner *ret_owner);
/* A new object {apiVersion, kind, metadata: {name, namespace, ownerReferences}}. */
json_t *wb_object_new(const char *api_version, const char *kind, const char *name,
		      const char *namespace, const struct wb_owner *owner);

/* Error helper: adds "prefix: message" for every message of from. */
void wb_errors_move(struct pk_errors *to, struct pk_errors *from, const char *prefix);

/*
 * A gang count the user set on item that the group can never reach (more
 * than limit members, described by what, e.g. "spec.parallelism"): error at
 * the count's field path.  Returns 0 or -EINVAL.
 */
int wb_check_count_limit(const struct wb_item *item, const char *root_path, int64_t limit,
			 const char *what, struct pk_errors *errs);

/* Object member helpers tolerant of absent parents. */
json_t *wb_obj(const json_t *obj, const char *key); /* object member or NULL */
const char *wb_str(const json_t *obj, const char *key);
const char *wb_annotation(const json_t *obj, const char *key);

/* Reject members of obj not in allowed (NULL-terminated): "path.k: Forbidden: unknown field". */
int wb_check_known_fields(const json_t *obj, const char *path, const char *const *allowed,
			  struct pk_errors *errs);
/* Integer member: absent -> def; wrong type or out of [min, max] -> error, -EINVAL. */
int wb_get_int(const json_t *obj, const char *key, const char *path, int64_t def, int64_t min,
	       int64_t max, int64_t *ret, struct pk_errors *errs);

/*
 * Append count pods of a Job to out: names <job_name>-<index>, the pod
 * template's metadata and spec, the Job labels, bound to pod_group (unless
 * NULL), owned by owner.
 */
int wb_stamp_pods(const json_t *job, const char *job_name, const char *namespace, int64_t count,
		  const char *pod_group, const struct wb_owner *owner, json_t *out);

/* Template of that name anywhere in a Workload spec, its kind in ret_composite. */
json_t *wb_find_template(const json_t *workload, const char *name, bool *ret_composite);
/* Direct child template of a composite template, NULL if none. */
json_t *wb_find_child_template(const json_t *tmpl, const char *name, bool *ret_composite);

/* ---- the controllers of workload kinds (controller.c) --------------------------- */
#define WB_SCHEDULING_PATH "spec.scheduling"

/* The fields of the four building blocks, NULL-terminated (known-field checks). */
extern const char *const wb_block_fields[];

/*
 * What every kind's parsed object holds.  It is the first member of the
 * kind's own view, so the kind's hooks get their view back by a cast.
 * Strings are borrowed from the object.
 */
struct wb_view {
	const char *name, *namespace;
	const json_t *scheduling;			/* spec.scheduling, NULL when absent */
	const char *a_workload, *a_template, *a_parent; /* the downward annotations */
	const char *priority_class;
	bool compiles; /* it compiles its own Workload: neither delegated nor bound */
	const struct wb_lookup *lookup; /* what exists, while reconciling (else NULL) */
};

/* One kind's controller: what is its own, driven by the shared skeleton. */
struct wb_controller {
	size_t view_size; /* of the kind's view, which starts with struct wb_view */
	/* Parse and check obj into view (zeroed).  Returns 0, -EINVAL or -ENOMEM. */
	int (*parse)(const json_t *obj, struct wb_view *view, struct pk_errors *errs);
	void (*view_clear)(struct wb_view *view); /* frees what parse allocated; may be NULL */
	/* Checks of obj beyond its view (may be NULL).  Returns 0 or -EINVAL. */
	int (*check)(const json_t *obj, struct pk_errors *errs);
	/* The item tree a compiling object's Workload is built from. */
	int (*tree)(const struct wb_view *view, struct wb_item **ret_root);
	/* Gang counts no group of the tree can reach.  Returns 0 or -EINVAL. */
	int (*check_counts)(const struct wb_view *view, const struct wb_item *root,
			    struct pk_errors *errs);
	/* A compiling object: the groups and objects appended after its Workload. */
	int (*materialize)(const json_t *obj, const struct wb_view *view, struct wb_builder *b,
			   json_t *out);
	/* An object that does not compile: all it creates, appended to out. */
	int (*reconcile_managed)(const json_t *obj, const struct wb_view *view,
				 const struct wb_lookup *lookup, json_t *out,
				 struct pk_errors *errs);
	/* One block may feed several groups: each validation message is reported once. */
	bool shared_blocks;
};

/* wb_job_validate and its kin: validation of obj (old_obj: the previous version or NULL). */
int wb_controller_validate(const struct wb_controller *c, const json_t *obj, const json_t *old_obj,
			   struct pk_errors *errs);
/* wb_job_reconcile and its kin: validate, then the objects obj creates, a new array. */
int wb_controller_reconcile(const struct wb_controller *c, const json_t *obj,
			    const struct wb_lookup *lookup, json_t **ret_objects,
			    struct pk_errors *errs);

/* "kind: Invalid value" unless obj is of kind (what: "batch/v1 Job").  0 or -EINVAL. */
int wb_view_check_kind(const json_t *obj, enum pk_kind kind, const char *what,
		       struct pk_errors *errs);
/* Name and namespace of obj into v; the name is required and must pass valid (rule says how). */
int wb_view_parse_name(const json_t *obj, struct wb_view *v, bool (*valid)(const char *name),
		       const char *rule, struct pk_errors *errs);
/* spec.scheduling into v: an object (null: absent) with only the members in fields. */
int wb_view_parse_scheduling(struct wb_view *v, const json_t *spec, const char *const *fields,
			     struct pk_errors *errs);
/* The downward annotations of obj into v. */
void wb_view_read_downward(const json_t *obj, struct wb_view *v);
/*
 * The same, for a kind whose delegated form has no scheduling of its own
 * (JobSet, LeaderWorkerSet): the annotations go together, and spec.scheduling
 * (parsed into v first) is refused under a parent.
 */
int wb_view_parse_downward(const json_t *obj, struct wb_view *v, const char *kind,
			   struct pk_errors *errs);
/* The Workload a delegated object names (borrowed), or NULL with a "Not found" error. */
const json_t *wb_view_workload(const struct wb_view *v, const struct wb_lookup *lookup,
			       struct pk_errors *errs);
/* A builder over that Workload, owned by obj. */
int wb_view_delegated_builder(const json_t *obj, const struct wb_view *v, const json_t *workload,
			      struct wb_builder **ret);

/*
 * A new item, basic unless the user says otherwise, of priority_class, whose
 * omitted gang count defaults to *count (at least 1; count must outlive it).
 */
int wb_item_new_counted(const char *name, const char *priority_class, const int64_t *count,
			struct wb_item **ret);
/* The user's four blocks, members of blocks, as item's input at prefix + block name. */
int wb_item_set_blocks(struct wb_item *item, const json_t *blocks, const char *prefix);
/* The root item of a compiling object: the user's blocks are spec.scheduling's. */
int wb_view_root_item(const struct wb_view *v, const char *name, const int64_t *count,
		      struct wb_item **ret);
/* A new (Composite)PodGroup of the builder's Workload appended to out. */
int wb_append_group(struct wb_builder *b, json_t *out, bool composite, const char *name,
		    const char *tmpl, const char *parent);

/*
 * Store admission (create: old_obj NULL): the queue admission annotation is
 * the queue controller's write, refused on a created object.
 */
int wb_check_admission_annotation(const json_t *obj, const json_t *old_obj, struct pk_errors *errs);
/* A user's update (pk_admission.admit_user): only the queue controller admits. */
int wb_check_queue_user_update(const json_t *obj, const json_t *old_obj, struct pk_errors *errs);

/* What the LeaderWorkerSet's status controller reads of it (lws.c); -EINVAL when invalid. */
struct wb_lws_params {
	int64_t replicas, size, max_unavailable, max_surge;
	bool recreate; /* restartPolicy RecreateGroupOnPodRestart */
};
int wb_lws_params(const json_t *lws, struct wb_lws_params *ret);

#endif
