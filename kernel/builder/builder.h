/* SPDX-License-Identifier: Apache-2.0 */
/*
 * builder.h — workloadbuilder and the Job / JobSet controllers (KEP-6089).
 *
 * Controllers describe their workload as a tree of items (struct wb_item):
 * each item carries the controller's defaults, the user's building blocks
 * (jansson subtrees of the controller's API, each with the field path where it
 * lives) and callbacks that post-process the merged configuration.  The builder
 * resolves the tree into a hierarchy-agnostic configuration (struct
 * wb_config), validates it (declarative block rules, the controller's
 * allow-lists, cross-field and update rules) and compiles it into a Workload
 * (PodGroupTemplates or nested CompositePodGroupTemplates) from which runtime
 * PodGroups and CompositePodGroups are materialized.
 *
 * The Job and JobSet controllers are pure functions over object trees: they
 * take a Job or JobSet and return the objects it creates, so that podctl and
 * podkerneld run the same code.  Every object they emit carries a controller
 * ownerReference to the object that created it (garbage collection).
 *
 * Conventions: functions return 0 or a negative errno; outputs are ret_*
 * parameters written only on success; destructors accept NULL.  Errors for
 * users are Kubernetes-style field-path messages added to a struct pk_errors.
 */
#ifndef PODKERNEL_KERNEL_BUILDER_H
#define PODKERNEL_KERNEL_BUILDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"

/* ---- well-known names ------------------------------------------------------ */
/* Downward annotations for delegated management (KEP-6089). */
#define WB_ANNOTATION_WORKLOAD "scheduling.k8s.io/workload-name"
#define WB_ANNOTATION_TEMPLATE "scheduling.k8s.io/group-template-name"
#define WB_ANNOTATION_PARENT "scheduling.k8s.io/parent-compositepodgroup"

#define WB_MAX_TEMPLATES 8	/* templates in one list */
#define WB_MAX_CLAIMS 4		/* resourceClaims of one group */
#define WB_MAX_PODS 10000	/* pods one Job or JobSet may stamp out */
#define WB_MAX_EXPANDED 1000000 /* objects one wb_expand_objects may produce */

/* ---- intermediate form ------------------------------------------------------- */
enum wb_policy_kind { WB_POLICY_UNSET = 0, WB_POLICY_BASIC, WB_POLICY_GANG };
enum wb_disruption_kind { WB_DISRUPTION_UNSET = 0, WB_DISRUPTION_SINGLE, WB_DISRUPTION_ALL };

struct wb_claim {
	char *name;
	char *claim_name;	   /* resourceClaimName, or NULL */
	char *claim_template_name; /* resourceClaimTemplateName, or NULL */
};

/*
 * Hierarchy-agnostic scheduling configuration of one group (leaf or
 * composite).  All strings are owned by the config (wb_config_clear frees).
 * "unset" fields fall back to the defaults during resolution.
 */
struct wb_config {
	enum wb_policy_kind policy;
	bool has_min_count; /* gang: minCount (leaf) / minGroupCount (composite) */
	int32_t min_count;
	bool has_constraints;
	char *topology_key; /* NULL: no topology constraint */
	enum wb_disruption_kind disruption;
	bool has_claims;
	struct wb_claim *claims;
	size_t nclaims;
	char *priority_class_name; /* NULL: none */
};

void wb_config_init(struct wb_config *cfg);
void wb_config_clear(struct wb_config *cfg); /* frees strings, re-inits */
int wb_config_copy(struct wb_config *dst, const struct wb_config *src);
/* Set (or with NULL clear) the single topology constraint; sets has_constraints. */
int wb_config_set_topology(struct wb_config *cfg, const char *key);
int wb_config_set_priority_class(struct wb_config *cfg, const char *name);
/* Append a claim (exactly one of claim_name / template_name); sets has_claims. */
int wb_config_add_claim(struct wb_config *cfg, const char *name, const char *claim_name,
			const char *template_name);

/* ---- workload items ------------------------------------------------------------ */
/* The building blocks a controller embeds in its API. */
enum wb_block {
	WB_BLOCK_POLICY,      /* schedulingPolicy */
	WB_BLOCK_CONSTRAINTS, /* schedulingConstraints */
	WB_BLOCK_DISRUPTION,  /* disruptionMode */
	WB_BLOCK_CLAIMS,      /* resourceClaims */
	_WB_BLOCK_MAX,
};

struct wb_input {
	json_t *data; /* the user's block (a reference is held), NULL: not set */
	char *path;   /* where it lives, relative to the root path: "schedulingPolicy" */
};

/* Post-processes the resolved configuration (e.g. defaulting gang minCount). */
typedef void (*wb_config_fn)(struct wb_config *cfg, void *userdata);

struct wb_callback {
	wb_config_fn fn;
	void *userdata; /* owned by the caller; must outlive the item */
};

/*
 * A logical component of a workload (a Job, a JobSet, one replicated job).
 * With children it compiles into a CompositePodGroupTemplate, without into a
 * PodGroupTemplate; its name becomes the template name.  An item owns its
 * name, defaults, inputs, callbacks and children.
 */
struct wb_item {
	char *name;
	struct wb_config defaults;
	struct wb_input input[_WB_BLOCK_MAX];
	struct wb_callback *callbacks;
	size_t ncallbacks;
	struct wb_item **children;
	size_t nchildren;
	/* Filled by wb_item_resolve (and by the builder's validate/build). */
	bool resolved_ok;
	struct wb_config resolved;
};

int wb_item_new(const char *name, struct wb_item **ret_item);
void wb_item_free(struct wb_item *item); /* frees the whole subtree */
/* Record the user's block (data may be NULL: not set) and its field path. */
int wb_item_set_input(struct wb_item *item, enum wb_block block, json_t *data, const char *path);
int wb_item_add_callback(struct wb_item *item, wb_config_fn fn, void *userdata);
/* Appends child; the parent owns it from then on (also on failure it is freed). */
int wb_item_add_child(struct wb_item *parent, struct wb_item *child);
static inline bool wb_item_is_composite(const struct wb_item *item)
{
	return item->nchildren > 0;
}

/*
 * Resolve every item of the tree: map the user's blocks into the intermediate
 * form (leaf blocks for leaves, composite blocks with minGroupCount for
 * composites), override the defaults field by field, then run the callbacks
 * in order.  Blocks that cannot be mapped (wrong JSON types) are reported at
 * root_path + the block's path; returns 0 or -EINVAL.
 */
int wb_item_resolve(struct wb_item *root, const char *root_path, struct pk_errors *errs);

/* ---- the builder --------------------------------------------------------------- */
enum {
	WB_ALLOW_BASIC = 1u << 0,
	WB_ALLOW_GANG = 1u << 1,
};
enum {
	WB_ALLOW_SINGLE = 1u << 0,
	WB_ALLOW_ALL = 1u << 1,
};

struct wb_owner {
	const char *api_version; /* "batch/v1" */
	const char *kind;	 /* "Job"; NULL: no owner */
	const char *name;
	const char *uid; /* may be NULL (objects read from files) */
};

struct wb_options {
	const char *name;      /* of the Workload */
	const char *namespace; /* NULL: "default" */
	struct wb_owner owner; /* controller ownerReference of everything built */
	/* Allow-lists (opt-in): anything not listed is rejected by validate. */
	unsigned allowed_policies;	   /* WB_ALLOW_BASIC | WB_ALLOW_GANG */
	unsigned allowed_disruption_modes; /* WB_ALLOW_SINGLE | WB_ALLOW_ALL */
	bool disable_declarative_validation;
};

struct wb_builder;

/* A builder over root (borrowed: it must outlive the builder). Options are copied. */
int wb_builder_new(struct wb_item *root, const struct wb_options *opts, struct wb_builder **ret);
/*
 * A builder that materializes groups from an already persisted Workload
 * (copied) instead of compiling one: build_workload is refused (-EPERM) and
 * validate does nothing.
 */
int wb_builder_from_workload(const json_t *workload, const struct wb_options *opts,
			     struct wb_builder **ret);
void wb_builder_free(struct wb_builder *b);

/*
 * Validate the tree at root_path ("spec.scheduling"): declarative rules on
 * the user's blocks (unless disabled), the allow-lists, cross-field rules
 * (`all` disruption with the basic policy, a child that is not `all` under an
 * `all` parent), Workload limits (depth, 8 templates per list, unique names),
 * and with old_root set the update rules (policy variant frozen; minCount /
 * minGroupCount may change; constraints, disruption mode and claims
 * immutable).  A root whose name differs from old_root's is an internal error.
 * Returns 0 or -EINVAL with the errors in errs.
 */
int wb_builder_validate(struct wb_builder *b, const char *root_path, const struct wb_item *old_root,
			struct pk_errors *errs);

/*
 * Compile the tree into a new Workload (reference returned to the caller) and
 * keep a copy to materialize groups from.  Resolves and checks the tree as
 * validate does, except for the allow-lists (an API-validation concern, as in
 * KEP-6089); errors go to errs if not NULL; -EINVAL on an invalid tree.
 */
int wb_builder_build_workload(struct wb_builder *b, const char *root_path, json_t **ret_workload,
			      struct pk_errors *errs);

/*
 * A runtime PodGroup (or CompositePodGroup) named name from the template
 * template_name of the builder's Workload, attached to parent (NULL: root).
 * -ENOENT if there is no such template of that kind, -EINVAL before a
 * Workload exists.
 */
int wb_builder_new_pod_group(struct wb_builder *b, const char *name, const char *template_name,
			     const char *parent, json_t **ret_group);
int wb_builder_new_composite_pod_group(struct wb_builder *b, const char *name,
				       const char *template_name, const char *parent,
				       json_t **ret_group);

/*
 * Delegation by a parent controller: write the downward annotations onto the
 * metadata of a child object it creates (parent may be NULL), so that the
 * child's controller materializes its groups from template_name of workload
 * under parent instead of compiling its own Workload.
 */
int wb_set_downward_annotations(json_t *child, const char *workload, const char *template_name,
				const char *parent);

/* ---- controllers ------------------------------------------------------------------ */
/* Finds an existing object (borrowed reference) or returns NULL. */
typedef json_t *(*wb_lookup_fn)(void *userdata, enum pk_kind kind, const char *namespace,
				const char *name);
struct wb_lookup {
	wb_lookup_fn fn;
	void *userdata;
};

/*
 * batch/v1 Job.  Validation of spec.scheduling (old_job: the previous version
 * for an update, or NULL).  Reconcile returns, as a new JSON array, the
 * objects the Job creates:
 *  - standalone: the Workload, its PodGroup and the pods;
 *  - pod template already bound to a group by a parent controller
 *    (spec.template.spec.schedulingGroup.podGroupName): only the pods;
 *  - downward annotations (delegated): the PodGroup materialized from the
 *    annotated template of the annotated Workload (found through lookup)
 *    under the annotated parent, and the pods.
 * Pods are named <job>-<index>, `parallelism` of them (default 1).
 */
int wb_job_validate(const json_t *job, const json_t *old_job, struct pk_errors *errs);
int wb_job_reconcile(const json_t *job, const struct wb_lookup *lookup, json_t **ret_objects,
		     struct pk_errors *errs);

/*
 * jobset.x-k8s.io/v1alpha2 JobSet with the centralized targeted-policies
 * model.  Reconcile returns the Workload, the root CompositePodGroup, the
 * replicated-job and per-replica groups, and one Job per replica whose pod
 * template is bound to its group (a Job reconcile then creates the pods).
 * With downward annotations, no Workload is compiled: the groups are
 * materialized from the annotated template and the Jobs are delegated the
 * creation of their PodGroups through the same annotations.
 */
int wb_jobset_validate(const json_t *jobset, const json_t *old_jobset, struct pk_errors *errs);

/*
 * The builder's admission rules, for a store that serves Jobs and JobSets
 * (pk_store_open_opts): wb_job_validate and wb_jobset_validate, their
 * scheduling intent and its update rules (KEP-6089).
 */
#define WB_ADMISSION_N 3
extern const struct pk_admission wb_admission[WB_ADMISSION_N];
int wb_jobset_reconcile(const json_t *jobset, const struct wb_lookup *lookup, json_t **ret_objects,
			struct pk_errors *errs);

/*
 * leaderworkerset.x-k8s.io/v1 LeaderWorkerSet (lws.c), with LWS KEP-666's
 * spec.scheduling.  Reconcile returns the Workload, the root
 * CompositePodGroup NAME (basic unless spec.scheduling says), one PodGroup
 * NAME-I per group (a gang of size pods unless
 * spec.scheduling.replica.schedulingPolicy is basic) and the pods: leader
 * NAME-I, workers NAME-I-J, with LWS's labels, annotations, environment and
 * hostname/subdomain.  lookup finds the pods that exist: with startupPolicy
 * LeaderReady a group's workers come once its leader is Ready, and a rolling
 * update's surge groups (maxSurge) follow the indices [0, replicas).
 * Delegated through the downward annotations, NAME comes from the annotated
 * composite template and the groups from its one PodGroupTemplate.
 */
#define WB_LWS_LABEL_NAME "leaderworkerset.sigs.k8s.io/name"
#define WB_LWS_LABEL_GROUP_INDEX "leaderworkerset.sigs.k8s.io/group-index"
#define WB_LWS_LABEL_WORKER_INDEX "leaderworkerset.sigs.k8s.io/worker-index"
#define WB_LWS_LABEL_GROUP_KEY "leaderworkerset.sigs.k8s.io/group-key"
#define WB_LWS_LABEL_REVISION "leaderworkerset.sigs.k8s.io/template-revision-hash"
#define WB_LWS_ANNOTATION_SIZE "leaderworkerset.sigs.k8s.io/size"
#define WB_LWS_ANNOTATION_LEADER "leaderworkerset.sigs.k8s.io/leader-name"
#define WB_LWS_ANNOTATION_EXCLUSIVE "leaderworkerset.sigs.k8s.io/exclusive-topology"
#define WB_LWS_REVISION_LEN 17 /* 16 hex digits and the NUL */
int wb_lws_validate(const json_t *lws, const json_t *old_lws, struct pk_errors *errs);
int wb_lws_reconcile(const json_t *lws, const struct wb_lookup *lookup, json_t **ret_objects,
		     struct pk_errors *errs);
/* The revision of spec.leaderWorkerTemplate the pods carry (WB_LWS_LABEL_REVISION). */
void wb_lws_revision(const json_t *lws, char ret[WB_LWS_REVISION_LEN]);
/* spec.leaderWorkerTemplate.size, 1 when absent. */
int64_t wb_lws_size(const json_t *lws);

/*
 * A LeaderWorkerSet's controller after looking at its pods (lws_status.c):
 * status (NULL: unchanged) with replicas (groups that exist), readyReplicas
 * (groups whose size pods are all Ready), updatedReplicas (groups at the
 * current revision), hpaPodSelector and conditions Available, Progressing
 * and UpdateInProgress; delete_pods and delete_groups (names of pods and
 * PodGroups, deleted in the same write) recreate groups: a group with a pod
 * that ended or is gone is recreated whole under RecreateGroupOnPodRestart
 * (with None only the ended pod is), and a rolling update recreates groups
 * of an older revision from the highest index down while the Ready groups
 * stay at least replicas - maxUnavailable (surge groups count).
 */
struct wb_lws_update {
	json_t *status;
	json_t *delete_pods, *delete_groups;
	int64_t restarted, rolled; /* groups recreated for a pod, for an update */
	/* The conditions changed: a Normal Event's reason (static) and note, as LWS's. */
	const char *event_reason;
	char event_note[160];
};
int wb_lws_status(const json_t *lws, const json_t *pods, const char *now,
		  struct wb_lws_update *ret);
void wb_lws_update_clear(struct wb_lws_update *u);

/*
 * Replace every Job and JobSet in objects (a JSON array) by the Workload,
 * groups and pods it compiles into; other objects pass through in order.
 * Errors (field paths) go to errs; returns 0 or -EINVAL.
 */
int wb_expand_objects(json_t *objects, json_t **ret_objects, struct pk_errors *errs);
/*
 * The same, with objects[0..from) taken as they are, unread: the caller knows
 * none of them is a Job, JobSet or LeaderWorkerSet (an array expanded
 * before, with objects to expand after it, as the queues' placement checks
 * give the cluster and one workload).  The result is wb_expand_objects()'s.
 */
int wb_expand_objects_from(json_t *objects, size_t from, json_t **ret_objects,
			   struct pk_errors *errs);

/* ---- status (status.c) ----------------------------------------------------------- */
/* The JobSet's restart attempt a Job belongs to (its status.restarts then). */
#define WB_LABEL_RESTART_ATTEMPT "jobset.sigs.k8s.io/restart-attempt"

/* How the status controllers count a pod. */
enum wb_pod_state { WB_POD_ACTIVE, WB_POD_SUCCEEDED, WB_POD_FAILED, WB_POD_DELETING };
enum wb_pod_state wb_pod_state(const json_t *pod);
/* Whether obj has condition type with status True. */
bool wb_condition_true(const json_t *obj, const char *type);

/*
 * Queues (kueue.x-k8s.io): a Job or JobSet labelled with a LocalQueue's name
 * is queued; standalone's queue controller admits it by writing the
 * admission annotation ("CLUSTERQUEUE/FLAVOR[,FLAVOR...]", one flavor per
 * resource group of the ClusterQueue, "-" for a group it asks nothing of)
 * and turning spec.suspend false.  A JobSet's Jobs are admitted with it.
 */
#define WB_LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define WB_ANNOTATION_QUEUE_ADMISSION "queue.podkernel.dev/admission"
/* The LocalQueue a Job or JobSet is queued in, NULL when it is not (a JobSet's Job never is). */
const char *wb_queue_name(const json_t *obj);
/* Suspended: spec.suspend true, or queued and not admitted yet. */
bool wb_suspended(const json_t *obj);
/*
 * A pending workload's place in its ClusterQueue's order (queue_order.c):
 * the queue controller writes "CQ PRIORITY CREATED KIND/NAMESPACE/NAME" (a
 * pod of a pod group: its root group's kind and name) on each pending Job,
 * JobSet or queued pod; readers compute positions from the values.
 */
#define WB_ANNOTATION_QUEUE_ORDER "queue.podkernel.dev/queue-order"
/* The value, into buf; -ENAMETOOLONG. */
int wb_queue_order_format(char *buf, size_t n, const char *cq, int64_t priority,
			  const char *created, const char *kind, const char *ns, const char *name);
/* obj's queue-order annotation, or NULL. */
const char *wb_queue_order(const json_t *obj);
/*
 * Positions (1 is next) from orders ("Kind/ns/name" -> queue-order value):
 * a new object with the same keys (values that do not parse left out);
 * NULL: no memory.
 */
json_t *wb_queue_positions_of(const json_t *orders);
/* The same over an array of objects (those without the annotation left out). */
json_t *wb_queue_positions(const json_t *objects);

/*
 * What a Job's controller writes after looking at its pods (the pods it
 * controls, any order): status is the new status (NULL: unchanged);
 * delete_pods the names of pods to delete in the same write: Failed pods
 * just counted into status.failed (the Job's reconcile then recreates their
 * index), and the active pods of a Job that finished.  finished: the Job has
 * condition Complete or Failed (then nothing is recreated).
 */
struct wb_job_update {
	json_t *status;
	json_t *delete_pods;
	bool finished;
};
bool wb_job_finished(const json_t *job);
/* now: RFC 3339 time for startTime, completionTime and conditions. */
int wb_job_status(const json_t *job, const json_t *pods, const char *now,
		  struct wb_job_update *ret);
void wb_job_update_clear(struct wb_job_update *u);

/*
 * A JobSet's controller after looking at its Jobs: status (NULL:
 * unchanged); restart: a Job failed and status.restarts is below
 * failurePolicy.maxRestarts: every Job and group of the JobSet is to be
 * deleted and created again (the new status already counts the restart);
 * finished: Completed or Failed; stop: Failed (what still runs is deleted).
 */
struct wb_jobset_update {
	json_t *status;
	bool restart, finished, stop;
};
bool wb_jobset_finished(const json_t *jobset);
int64_t wb_jobset_restarts(const json_t *jobset);
int wb_jobset_status(const json_t *jobset, const json_t *jobs, const char *now,
		     struct wb_jobset_update *ret);
void wb_jobset_update_clear(struct wb_jobset_update *u);
/* spec.successPolicy and spec.failurePolicy (the fields implemented); -EINVAL with paths. */
int wb_jobset_check_policies(const json_t *jobset, struct pk_errors *errs);

#endif /* PODKERNEL_KERNEL_BUILDER_H */
