/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.h — podkernel's API object model.
 *
 * Objects travel as jansson trees (json_t), exactly as a user wrote them, so
 * that unknown fields survive and a read-then-write round trip is stable.  The
 * codec reads YAML (multi-document) or JSON into such trees and writes them back
 * as JSON or YAML.  On top of the trees sit typed views (struct pk_pod, ...)
 * that the scheduler, the store and the builder use; a view borrows strings from
 * its tree and holds a reference to it (view->raw), so the tree outlives it.
 *
 * Field names are the upstream Kubernetes ones (docs/CONTRACT.md).
 */
#ifndef PODKERNEL_KERNEL_API_H
#define PODKERNEL_KERNEL_API_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/lib/hash.h"
#include "topology/topology.h"

/* ---- limits for hostile input ------------------------------------------ */
#define PK_MAX_INPUT_BYTES (3 * 1024 * 1024) /* one API request body, like kube-apiserver */
#define PK_MAX_DEPTH 64			     /* nesting of maps/lists */
#define PK_MAX_OBJECTS 100000		     /* objects in one request body */
/*
 * Files (podctl -f) hold whole clusters: a dump of 65,536 Nodes is about
 * 55 MB of JSON.  Their default limit is PK_MAX_FILE_BYTES; a caller may set
 * another (podctl --max-input-size).  A file may hold one object per
 * PK_FILE_BYTES_PER_OBJECT bytes of its limit, and never fewer than
 * PK_MAX_OBJECTS.
 */
#define PK_MAX_FILE_BYTES ((size_t)256 * 1024 * 1024)
#define PK_FILE_BYTES_PER_OBJECT 128

/*
 * Levels of a group hierarchy: Workload templates, CompositePodGroup nesting
 * (KEP-6012).  Validation refuses deeper ones; walks over a hierarchy that
 * may not be validated yet stop past four times this, so a cycle or a hostile
 * tree cannot recurse without end.
 */
#define PK_HIERARCHY_DEPTH_MAX 4
#define PK_HIERARCHY_WALK_MAX (4 * PK_HIERARCHY_DEPTH_MAX)

/* Annotation on Nodes registered from a board file (exempt from heartbeats). */
#define PK_ANN_SIMULATED "podkernel.dev/simulated"
/*
 * The taint a Node that stopped reporting carries, Kubernetes' well-known
 * one (written by standalone's node monitor, kernel/controllers/, or by a
 * cluster's own; the placement map shows it).
 */
#define PK_TAINT_UNREACHABLE "node.kubernetes.io/unreachable"

/* ---- error lists: field-path messages ---------------------------------- */
struct pk_errors {
	char **msg;
	size_t n, cap;
};
/* Append "fmt..." (printf-style).  Messages read "path: what: detail". */
void pk_errors_add(struct pk_errors *errs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pk_errors_clear(struct pk_errors *errs); /* frees messages, keeps struct */
/* Print each message on its own line, prefixed by prefix (e.g. file name). */
void pk_errors_print(const struct pk_errors *errs, FILE *f, const char *prefix);

/* ---- kinds --------------------------------------------------------------- */
enum pk_kind {
	PK_KIND_UNKNOWN = 0,
	PK_KIND_NODE,
	PK_KIND_POD,
	PK_KIND_PRIORITY_CLASS,
	PK_KIND_WORKLOAD,
	PK_KIND_POD_GROUP,
	PK_KIND_COMPOSITE_POD_GROUP,
	PK_KIND_JOB,
	PK_KIND_JOBSET,
	PK_KIND_LEASE, /* coordination.k8s.io/v1: node heartbeats, leader election */
	/* resource.k8s.io/v1: Dynamic Resource Allocation */
	PK_KIND_DEVICE_CLASS,
	PK_KIND_RESOURCE_CLAIM,
	PK_KIND_RESOURCE_CLAIM_TEMPLATE,
	PK_KIND_RESOURCE_SLICE,
	/* volumes: core v1 claims and volumes, storage.k8s.io/v1 classes and CSI nodes */
	PK_KIND_PERSISTENT_VOLUME_CLAIM,
	PK_KIND_PERSISTENT_VOLUME,
	PK_KIND_STORAGE_CLASS,
	PK_KIND_CSI_NODE,
	PK_KIND_POD_DISRUPTION_BUDGET, /* policy/v1: the eviction subresource's budgets */
	/* kueue.x-k8s.io/v1beta2: queues and quotas (standalone) */
	PK_KIND_RESOURCE_FLAVOR,
	PK_KIND_CLUSTER_QUEUE,
	PK_KIND_LOCAL_QUEUE,
	PK_KIND_LEADER_WORKER_SET, /* leaderworkerset.x-k8s.io/v1: serving groups */
	PK_KIND_COHORT,
	PK_KIND_NAMESPACE, /* core/v1: its labels are what namespaceSelectors read */
	PK_KIND_EVENT,	   /* core/v1 (events.k8s.io/v1 is the same resource in another shape) */
	PK_KIND_WORKLOAD_PRIORITY_CLASS, /* kueue.x-k8s.io: a workload's priority value */
	PK_KIND_TOPOLOGY,		 /* kueue.x-k8s.io: the levels of a flavor's topology */
	_PK_KIND_MAX,
};
/* "Pod", "CompositePodGroup", ...; NULL for unknown (pk_type_of(kind)->kind). */
const char *pk_kind_to_string(enum pk_kind kind);
/* Expected apiVersion of a kind ("v1", "scheduling.k8s.io/v1alpha3", ...). */
const char *pk_kind_api_version(enum pk_kind kind);
/*
 * Kind of an object tree from its "kind" field; also checks apiVersion: a
 * different apiVersion gives PK_KIND_UNKNOWN, an absent one is accepted.
 */
enum pk_kind pk_kind_of(const json_t *obj);
/* Whether objects of the kind live in a namespace (unknown kinds: true). */
bool pk_kind_namespaced(enum pk_kind kind);

/*
 * A kind: one row of the table of the resource types podkernel serves
 * (kinds.c), in discovery order.  A `const struct pk_type *` is how a kind is
 * named between libraries; enum pk_kind is only the typed view a row carries
 * (pk) for the code that switches on it.  The row holds what the kind is
 * (names, group, scope, subresources) and the api library's operations on
 * it; the layers above keep their own per-kind operations keyed by the row
 * (the server finds its protobuf message by the row's group, version and
 * kind, kernel/server/proto.c; its table columns are in
 * kernel/server/tables_kinds.c; a scheduling plugin's events and attach's
 * watched resources are rows).  The kinds nothing in C names (pk
 * PK_KIND_UNKNOWN) are served by their row alone; Namespace and Event are
 * stored as given (no validate operation).
 */
struct pk_conversion;
struct pk_type {
	const char *kind;	 /* "Pod" */
	const char *plural;	 /* "pods" */
	const char *group;	 /* "" for the core group */
	const char *version;	 /* "v1" */
	const char *api_version; /* "v1", "scheduling.k8s.io/v1alpha3": group/version */
	const char *short_names; /* comma-separated, "" if none */
	bool namespaced;
	bool has_status; /* status subresource: main writes keep status */
	enum pk_kind pk; /* the typed view; PK_KIND_UNKNOWN for Event and custom-only kinds */
	/* What `kubectl explain KIND` says first (the OpenAPI description). */
	const char *description;
	/*
	 * Checks an object of the kind whole (metadata, spec, status), every
	 * problem added to errs by field path; obj is a copy the check may
	 * normalise.  NULL: objects of the kind are stored as given.
	 */
	void (*validate)(json_t *obj, const struct pk_type *t, struct pk_errors *errs);
	/*
	 * Set on a row of pk_type_versions[] only: another version of the kind
	 * of the same name in pk_types[], whose objects are stored in that row's
	 * version and converted on the way in and out (as kube-apiserver serves
	 * a CRD in several versions).  NULL: objects are stored as given.
	 */
	const struct pk_conversion *conversion;
};
/*
 * How one version converts to and from the version its kind is stored in.
 * Renamed fields are a table of paths (dotted, below the object's root, in
 * no array); the hooks do what more there is, on an object renamed already
 * (to_storage) or not yet (from_storage), changed in place.  to_storage
 * adds to errs, by its path in this version, a field that has no place in
 * the stored version and that podkernel refuses.
 */
struct pk_conversion {
	const char *const (*renames)[2]; /* {stored path, this version's path} */
	size_t nrenames;
	void (*to_storage)(json_t *obj, struct pk_errors *errs);
	void (*from_storage)(json_t *obj);
};
/*
 * The rows served, in discovery order, NULL-terminated.  Each row is also a
 * named object (pk_type_pod), so a library names a kind it knows as
 * &pk_type_pod, in a static table too; a kind nothing in C names needs no
 * name here, only its row in kinds.c.
 */
extern const struct pk_type *const pk_types[];
extern const struct pk_type pk_type_node, pk_type_pod, pk_type_namespace, pk_type_event,
    pk_type_event_v1, pk_type_priority_class, pk_type_workload, pk_type_pod_group,
    pk_type_composite_pod_group, pk_type_job, pk_type_jobset, pk_type_lease, pk_type_device_class,
    pk_type_resource_claim, pk_type_resource_claim_template, pk_type_resource_slice,
    pk_type_persistent_volume_claim, pk_type_persistent_volume, pk_type_storage_class,
    pk_type_csi_node, pk_type_pod_disruption_budget, pk_type_resource_flavor, pk_type_cluster_queue,
    pk_type_local_queue, pk_type_leader_worker_set, pk_type_cohort, pk_type_workload_priority_class,
    pk_type_topology;
/*
 * The other versions served of kinds of pk_types[] (kueue.x-k8s.io/v1beta1
 * beside v1beta2), each with its conversion; NULL-terminated.  Discovery,
 * OpenAPI and the router serve them; everything else knows the stored rows.
 */
extern const struct pk_type pk_type_versions[];
/* The i-th row served, pk_types[] then pk_type_versions[]; NULL past the last. */
const struct pk_type *pk_type_served(size_t i);
/* By group, version and plural among the rows served; NULL when not served. */
const struct pk_type *pk_type_by_version(const char *group, const char *version,
					 const char *plural);
/*
 * The row t's objects are stored as: t itself unless t is another version
 * (or events.k8s.io's Event, stored as core/v1's); NULL for NULL.
 */
const struct pk_type *pk_type_stored(const struct pk_type *t);
/*
 * obj, in t's version (a whole object or a merge patch), in the stored
 * version: a new object, its apiVersion the stored one when it names one.
 * Fields that version has no place for and podkernel refuses go to errs by
 * their path in t's version.  NULL on allocation failure.  For a row without
 * a conversion, obj itself (a new reference).
 */
json_t *pk_convert_to_storage(const struct pk_type *t, const json_t *obj, struct pk_errors *errs);
/* A stored object in t's version: a new object (obj itself, t without conversion). */
json_t *pk_convert_from_storage(const struct pk_type *t, const json_t *obj);
/*
 * A message about the stored version ("spec.cohortName: Invalid value ...")
 * as a client of t's version reads it: a leading renamed path replaced, in
 * buf.  msg itself when nothing is renamed.
 */
const char *pk_convert_message(const struct pk_type *t, const char *msg, char *buf, size_t len);
/* By kind name ("Pod"); NULL when not served. */
const struct pk_type *pk_type_by_kind(const char *kind);
/* By API group ("" core) and plural resource name. */
const struct pk_type *pk_type_by_resource(const char *group, const char *plural);
/* The served type of a typed kind; NULL for PK_KIND_UNKNOWN. */
const struct pk_type *pk_type_of(enum pk_kind kind);
/*
 * The one key of an object by identity, "Kind/namespace/name", written in
 * buf: the namespace is "" for a cluster-scoped kind and "default" when a
 * namespaced object names none (t NULL: namespaced, kind "").  Every map of
 * objects by kind and name (the writer's index, attach's mirror, the
 * controllers' queue, write backoff, event dedup) keys by it.  NULL when it
 * does not fit in len.
 */
const char *pk_obj_key(char *buf, size_t len, const struct pk_type *t, const char *ns,
		       const char *name);

/*
 * What happened to an object, as a watch says it: the store's change stream,
 * the scheduling loop's sources, the placement map.
 */
enum pk_event_type { PK_EVENT_ADDED, PK_EVENT_MODIFIED, PK_EVENT_DELETED };
const char *pk_event_type_to_string(enum pk_event_type type); /* "ADDED", ... */

/* ---- codec ---------------------------------------------------------------- */
enum pk_format { PK_FORMAT_JSON, PK_FORMAT_YAML };

/*
 * Read every object of a YAML (multi-document) or JSON input into a new JSON
 * array; "kind: List" or "*List" documents are flattened into their items;
 * empty documents are skipped.  Errors ("NAME:LINE:COL: message") go to err.
 * Returns 0, -EINVAL on bad input (limits included), -EFBIG for a file over
 * its size limit, -errno on I/O.  pk_read_buffer applies the request limits
 * (PK_MAX_INPUT_BYTES, PK_MAX_OBJECTS); pk_read_file the file limits, with
 * max_bytes 0 meaning PK_MAX_FILE_BYTES.  A file over the limit is refused
 * before it is read when its size is known, and otherwise after max_bytes + 1
 * bytes, so memory stays bounded by the limit (/dev/zero included).
 * pk_read_file reads standard input for the path "-" (named "<stdin>").
 */
int pk_read_file(const char *path, json_t **ret_objects, char *err, size_t errlen);
int pk_read_file_max(const char *path, size_t max_bytes, json_t **ret_objects, char *err,
		     size_t errlen);
/* Parse a size such as "300Mi", "1Gi" or "5000000" (bytes, at least 1). */
int pk_parse_size(const char *s, size_t *ret_bytes);
int pk_read_buffer(const char *name, const char *buf, size_t len, json_t **ret_objects, char *err,
		   size_t errlen);
/* One document (a request body) into one value, YAML or JSON. */
int pk_parse_document(const char *name, const char *buf, size_t len, json_t **ret_value, char *err,
		      size_t errlen);
/* The same, but a duplicate key is no error: its path ("metadata.name") is
 * appended to the array dups and the last value wins (dups NULL: refused).
 * At most PK_MAX_DUPS_RECORDED paths are recorded; later duplicates are
 * counted in one integer that follows them (and read all the same). */
#define PK_MAX_DUPS_RECORDED 100
int pk_parse_document_dups(const char *name, const char *buf, size_t len, json_t **ret_value,
			   json_t *dups, char *err, size_t errlen);

/* Write one value as JSON (indented, newline-terminated) or YAML. */
int pk_write(FILE *f, const json_t *value, enum pk_format fmt);
/* Same into a malloc'ed string the caller frees. */
char *pk_write_string(const json_t *value, enum pk_format fmt);
/* A "kind: List" (apiVersion v1) holding items (reference stolen). */
json_t *pk_list_new(json_t *items);
/*
 * An object as its compact JSON text in a JSON string: about a tenth of the
 * memory of its tree, for objects only kept to be written out again.
 */
json_t *pk_compact_object(const json_t *obj);
/*
 * v as compact JSON, byte for byte what json_dumps(v, JSON_COMPACT |
 * JSON_ENCODE_ANY) writes but far cheaper (jsondump.c): the store's rows and
 * watch events.  A malloc'ed string, its length in *ret_len (may be NULL);
 * NULL on ENOMEM or nesting deeper than 2,048.
 */
char *pk_json_compact(const json_t *v, size_t *ret_len);
/*
 * Write pk_list_new(items) as pk_write would, item by item: an item that is
 * a pk_compact_object() string is parsed back only while it is written.
 */
int pk_write_list(FILE *f, const json_t *items, enum pk_format fmt);

/* ---- row checksums (hash.c; FNV-1a is kernel/lib/hash.h) ------------------ */

/*
 * A stored object row (kernel/store's SQLite table, read back by `podctl
 * store check`): its checksum covers the key, the resourceVersion and the
 * body, so a flipped byte anywhere in them is found on read.
 */
uint64_t pk_row_sum(const char *kind, const char *ns, const char *name, int64_t rv,
		    const char *body, size_t len);
/*
 * Check one row: the checksum (when has_sum), a resourceVersion in
 * 1..counter, and, for a row written before checksums (no sum to say it is
 * what the store wrote), a body that is a JSON object of that kind, name and
 * namespace whose metadata.resourceVersion is the row's.  0, or -EBADMSG
 * with what is wrong in why.
 */
int pk_row_verify(const char *kind, const char *ns, const char *name, int64_t rv, const char *body,
		  size_t len, bool has_sum, uint64_t sum, uint64_t counter, char *why,
		  size_t whylen);

/* ---- small helpers on trees ------------------------------------------------ */
/*
 * Value at a dotted path ("spec.schedulingGroup.podGroupName"), or NULL.  List
 * items are reached as "spec.containers[0].name" (or "spec.containers.0.name");
 * keys that contain '.' (label keys) need json_object_get on their parent.
 */
json_t *pk_get(const json_t *obj, const char *path);
const char *pk_get_string(const json_t *obj, const char *path); /* NULL if absent */
/*
 * Set a value at a dotted path, creating maps on the way; value stolen (also
 * on failure).  "[N]" replaces an existing list item.  -EINVAL when a step is
 * not a map.
 */
int pk_set(json_t *obj, const char *path, json_t *value);
/* metadata.namespace, defaulting to "default" for namespaced kinds. */
const char *pk_namespace(const json_t *obj);
const char *pk_name(const json_t *obj);
/* RFC 3339 timestamp to seconds since the epoch; -EINVAL if malformed. */
int pk_time_parse(const char *s, int64_t *ret_seconds);
void pk_time_format(int64_t seconds, char buf[32]);

/*
 * Set (or replace, by type) a metav1.Condition in status.conditions.
 * lastTransitionTime changes only when status changes; now is seconds.
 */
int pk_condition_set(json_t *obj, const char *type, const char *status, const char *reason,
		     const char *message, int64_t now);
/* The condition of that type, or NULL. */
json_t *pk_condition_get(const json_t *obj, const char *type);
/*
 * A ResourceClaim's status.allocation and status.reservedFor set as claim
 * (a scheduler's claim action) says them, each removed when claim has
 * none; 0 or -ENOMEM.
 */
int pk_claim_status_set(json_t *obj, const json_t *claim);
/*
 * The ResourceClaim kube-controller-manager's resource claim controller
 * makes from ResourceClaimTemplate tmpl for claim pod_claim of owner (a Pod
 * or a PodGroup): named name (else generate_name), owned by owner as its
 * controller, annotated with the pod claim's name, with the template's
 * labels, annotations and spec.  A new reference; NULL on ENOMEM.
 */
json_t *pk_claim_from_template(const json_t *owner, const char *pod_claim, const json_t *tmpl,
			       const char *name, const char *generate_name);

/* ---- typed views ------------------------------------------------------------ */
struct pk_kv {
	const char *key;
	const char *value;
};

struct pk_resource {
	const char *name; /* "cpu", "memory", "pods", "google.com/tpu", ... */
	int64_t milli;
};

struct pk_meta {
	const char *name;
	const char *namespace; /* "default" when absent for namespaced kinds */
	const char *uid;
	int64_t creation; /* seconds; INT64_MIN when no creationTimestamp */
	bool deleting;	  /* metadata.deletionTimestamp set */
	struct pk_kv *labels;
	size_t nlabels;
};

enum pk_taint_effect {
	PK_TAINT_NO_SCHEDULE,
	PK_TAINT_PREFER_NO_SCHEDULE,
	PK_TAINT_NO_EXECUTE,
};

struct pk_taint {
	const char *key, *value;
	enum pk_taint_effect effect;
};

struct pk_node {
	json_t *raw;
	struct pk_meta meta;
	bool unschedulable;
	struct pk_taint *taints;
	size_t ntaints;
	struct pk_resource *allocatable; /* "pods" always present (default 110) */
	size_t nallocatable;
};

enum pk_toleration_op { PK_TOL_EQUAL, PK_TOL_EXISTS };

struct pk_toleration {
	const char *key; /* NULL or "" matches every key (with Exists) */
	enum pk_toleration_op op;
	const char *value;
	bool has_effect; /* false: all effects */
	enum pk_taint_effect effect;
};

enum pk_selector_op {
	PK_SEL_IN,
	PK_SEL_NOT_IN,
	PK_SEL_EXISTS,
	PK_SEL_DOES_NOT_EXIST,
	PK_SEL_GT,
	PK_SEL_LT
};

struct pk_selector_req {
	const char *key; /* label key; "metadata.name" when field is true */
	bool field;	 /* from matchFields: compare with the node's name, not a label */
	enum pk_selector_op op;
	const char **values;
	size_t nvalues;
};

/* One nodeSelectorTerm: all requirements ANDed.  Terms are ORed. */
struct pk_selector_term {
	struct pk_selector_req *reqs;
	size_t nreqs;
};

struct pk_pod {
	json_t *raw;
	struct pk_meta meta;
	const char *pod_group; /* spec.schedulingGroup.podGroupName, the group label, or NULL */
	const char *pod_group_label; /* the label key pod_group came from, NULL: the spec */
	const char *node_name;	     /* spec.nodeName or NULL (pending) */
	struct pk_kv *node_selector;
	size_t nnode_selector;
	struct pk_selector_term *affinity; /* required node affinity terms */
	size_t naffinity;
	struct pk_toleration *tolerations;
	size_t ntolerations;
	bool has_priority;
	int32_t priority;
	const char *priority_class;   /* spec.priorityClassName */
	struct pk_resource *requests; /* summed over containers; "pods" not included */
	size_t nrequests;
};

struct pk_priority_class {
	json_t *raw;
	struct pk_meta meta;
	int32_t value;
	bool global_default;
};

enum pk_policy { PK_POLICY_BASIC, PK_POLICY_GANG };
enum pk_disruption { PK_DISRUPTION_SINGLE, PK_DISRUPTION_ALL };

/* What PodGroups and CompositePodGroups (and their templates) share. */
struct pk_group_spec {
	enum pk_policy policy;
	int32_t min_count;	  /* gang: minCount / minGroupCount; basic: 0 */
	const char *topology_key; /* schedulingConstraints.topology[0].key (or .level) */
	enum pk_disruption disruption;
	bool has_priority;
	int32_t priority;
	const char *priority_class;
};

struct pk_group {
	json_t *raw;
	enum pk_kind kind; /* PK_KIND_POD_GROUP or PK_KIND_COMPOSITE_POD_GROUP */
	struct pk_meta meta;
	const char *workload_name; /* spec.workloadRef.workloadName */
	const char *template_name; /* spec.workloadRef.templateName */
	const char *parent;	   /* spec.parentCompositePodGroupName */
	struct pk_group_spec spec;
	/* metadata.annotations[scheduling.podkernel.dev/slice-shape], "AxBxC" in chips */
	const char *slice_shape;
};

struct pk_template {
	const char *name;
	bool composite;
	struct pk_group_spec spec;
	struct pk_template *children; /* composite templates only */
	size_t nchildren;
};

struct pk_workload {
	json_t *raw;
	struct pk_meta meta;
	struct pk_template *templates; /* top-level templates */
	size_t ntemplates;
	bool composite; /* compositePodGroupTemplates (true) or podGroupTemplates */
};

/*
 * Decode a tree into a typed view.  Structural errors (wrong types, unknown
 * enum values, bad quantities) are added to errs with their field path and
 * make the call fail with -EINVAL; the view is then not returned.
 */
int pk_node_decode(json_t *obj, struct pk_node **ret, struct pk_errors *errs);
/*
 * The PodGroup a pod object names: spec.schedulingGroup.podGroupName, else
 * the TOPO_LABEL_POD_GROUP label, else TOPO_LABEL_POD_GROUP_COSCHED; NULL
 * when none.  Borrowed from obj.
 */
const char *pk_pod_group_name(const json_t *pod);
/*
 * Kueue's pod integration (validate_kueue.c): a pod labelled
 * kueue.x-k8s.io/queue-name that no controller owns is queued in that
 * LocalQueue (pk_pod_queue_name, NULL when it is not), and is created with
 * the scheduling gate kueue.x-k8s.io/admission (pk_pod_default_queue_gate,
 * in place, unless it is bound already), which the queue controller removes
 * when it admits it.
 */
#define PK_KUEUE_LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define PK_KUEUE_ADMISSION_GATE "kueue.x-k8s.io/admission"
const char *pk_pod_queue_name(const json_t *pod);
void pk_pod_default_queue_gate(json_t *pod);
/*
 * A user's update of a queued pod (old) that removes the gate
 * kueue.x-k8s.io/admission while it still has it: -EINVAL and why at
 * spec.schedulingGates, as an admission webhook refuses it (only the queue
 * controller ungates, when it admits the pod); else 0.
 */
int pk_pod_queue_user_update(const json_t *pod, const json_t *old, struct pk_errors *errs);
/*
 * Kueue's plain pod groups: the queued pods labelled
 * kueue.x-k8s.io/pod-group-name: NAME and annotated
 * kueue.x-k8s.io/pod-group-total-count: N are one workload of N pods.  A
 * queued pod's group (NULL: none; borrowed) and *ret_total its total count
 * (0 when the annotation is missing or not an integer of at least 1);
 * pk_pod_group_total parses the annotation's value so.
 * pk_pod_default_kueue_group puts such a pod, when it is created, in the
 * PodGroup of that name (spec.schedulingGroup.podGroupName), which the
 * queue controller creates as a gang of N when it admits the group.
 * pk_validate_kueue_pod refuses, by path, a label without the annotation or
 * the reverse, a count that is not an integer of at least 1, a group name
 * that is not a DNS subdomain and a spec.schedulingGroup naming another
 * group; pk_validate_kueue_pod_update a change of the label.
 */
#define PK_KUEUE_LABEL_POD_GROUP_NAME "kueue.x-k8s.io/pod-group-name"
#define PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL "kueue.x-k8s.io/pod-group-total-count"
const char *pk_pod_kueue_group(const json_t *pod, int64_t *ret_total);
int64_t pk_pod_group_total(const char *value);
void pk_pod_default_kueue_group(json_t *pod);
void pk_validate_kueue_pod(const json_t *pod, struct pk_errors *errs);
void pk_validate_kueue_pod_update(const json_t *pod, const json_t *old, struct pk_errors *errs);
int pk_pod_decode(json_t *obj, struct pk_pod **ret, struct pk_errors *errs);
/*
 * kube-apiserver's pod defaulting of host ports: a pod with
 * spec.hostNetwork true gets hostPort = containerPort on every port of its
 * containers and init containers that has none (or 0).  In place; 0 or
 * -ENOMEM.
 */
int pk_pod_default_host_ports(json_t *pod);
int pk_priority_class_decode(json_t *obj, struct pk_priority_class **ret, struct pk_errors *errs);
int pk_group_decode(json_t *obj, struct pk_group **ret, struct pk_errors *errs);
int pk_workload_decode(json_t *obj, struct pk_workload **ret, struct pk_errors *errs);
void pk_node_free(struct pk_node *node);
void pk_pod_free(struct pk_pod *pod);
void pk_priority_class_free(struct pk_priority_class *pc);
void pk_group_free(struct pk_group *group);
void pk_workload_free(struct pk_workload *workload);

/* Requested amount of a resource by a pod, 0 when absent. */
int64_t pk_pod_request(const struct pk_pod *pod, const char *resource);
int64_t pk_node_allocatable(const struct pk_node *node, const char *resource);
const char *pk_meta_label(const struct pk_meta *meta, const char *key);

/*
 * The disruption unit of a group (KEP-6012): from the group up through its
 * parents, the highest one whose disruptionMode is `all`; NULL when none is
 * (a pod of the group is disrupted alone).  Groups are the caller's handles:
 * up() gives a group's parent (NULL at the top or when it is not known) and
 * is_all() whether a group says `all`.  The scheduler walks its forest with
 * it, the appliance the stored objects; the walk stops after
 * PK_HIERARCHY_WALK_MAX groups.
 */
struct pk_group_walk {
	void *(*up)(void *arg, void *group);
	bool (*is_all)(void *arg, const void *group);
	void *arg;
};
void *pk_disruption_unit(void *group, const struct pk_group_walk *walk);

/*
 * PodDisruptionBudget (policy/v1, budget.c).  A label selector (matchLabels,
 * matchExpressions) against labels; a null selector picks nothing, {} every
 * pod.  A pod is healthy for a budget when Running, Ready and not being
 * deleted; terminal when Succeeded or Failed.
 */
bool pk_label_selector_matches(const json_t *sel, const json_t *labels);
bool pk_budget_selects(const json_t *pdb, const json_t *pod);
bool pk_pod_terminal(const json_t *pod);
bool pk_pod_ready(const json_t *pod);
bool pk_pod_disruption_healthy(const json_t *pod);
struct pk_budget {
	int expected;	     /* non-terminal pods selected */
	int current_healthy; /* of them, healthy */
	int desired_healthy; /* from minAvailable or maxUnavailable */
	int allowed;	     /* disruptionsAllowed: current - desired, at least 0 */
};
/* Count a budget over pods (an array, any namespaces); -EINVAL: a bad int-or-percent. */
int pk_budget_count(const json_t *pdb, const json_t *pods, struct pk_budget *ret);
/* spec.unhealthyPodEvictionPolicy is AlwaysAllow (default IfHealthyBudget). */
bool pk_budget_always_allow(const json_t *pdb);
/* The status the counts make, with disruptedPods (borrowed; NULL: none). */
json_t *pk_budget_status(const json_t *pdb, const struct pk_budget *b, const json_t *disrupted);

/*
 * Static validation of one object of any known kind (the rules of
 * docs/CONTRACT.md and KEP-6012).  Every violation is added to errs as
 * a Kubernetes-style field-path message, e.g.
 *   spec.compositePodGroupTemplates[0].podGroupTemplates[1].name: Duplicate value: "workers"
 * Returns 0 when valid, -EINVAL otherwise.
 */
int pk_validate(const json_t *obj, struct pk_errors *errs);

/*
 * metadata.ownerReferences of any object, as kube-apiserver's
 * ValidateOwnerReferences: each an object with apiVersion (with a version),
 * kind, name and uid, no Event as owner, at most one with controller true.
 * Messages added to errs; 0 or -EINVAL.  The store checks it on every write;
 * pk_validate() does not, as offline files (and podctl compile's output,
 * whose owners were never created) carry references without a uid.
 */
int pk_validate_owner_references(const json_t *obj, struct pk_errors *errs);

/*
 * A Pod's status.qosClass as kube-apiserver computes it on create:
 * "Guaranteed", "Burstable" or "BestEffort" (static strings; qos.c).
 */
const char *pk_pod_qos_class(const json_t *pod);

/*
 * An admission rule beyond static validation, as kube-apiserver's admission
 * plugins are: for the writes of kind, admit sees the new object and the
 * stored one (old, NULL on create), adds field-path messages to errs and
 * returns < 0 to refuse the write.  The store runs those it is opened with
 * (pk_store_open_opts); the workload builder's are wb_admission.  admit_user
 * (NULL: none) runs too for a write a user's request makes (the API server
 * marks them, pk_store_write_opts.by_user), never for the appliance's own
 * controllers: what only a controller may write (the queue controller's
 * admission of a workload) is refused there.
 */
struct pk_admission {
	enum pk_kind kind;
	const char *name; /* where the rule comes from, e.g. "workloadbuilder: Job" */
	int (*admit)(const json_t *obj, const json_t *old, struct pk_errors *errs);
	int (*admit_user)(const json_t *obj, const json_t *old, struct pk_errors *errs);
};

/* ---- boards as API objects (board_nodes.c, board_links.c) -------------------- */
/*
 * The v1 Node podagent would publish for host index of a board's simulated
 * cluster of superslices outermost domains (0: the board's count): labels,
 * capacity and allocatable.  Returns 0 or -errno (-ERANGE past the last host).
 */
int pk_board_node_json(const struct topo_board *board, int superslices, int64_t index,
		       json_t **ret_node);
/* Every Node of the cluster, in host order, as a JSON array. */
int pk_board_nodes_json(const struct topo_board *board, int superslices, json_t **ret_items);
/*
 * The ResourceSlices a board's DRA drivers publish for its simulated cluster
 * (spec.dra; an empty array without it): per host, one device per chip
 * ("gpu-I": type gpu, index, numaNode, resource.kubernetes.io/pcieRoot, two
 * chips a root); per domain of the channel level, one slice whose
 * nodeSelector picks the domain's hosts with one IMEX channel device
 * ("channel-0": type channel, id 0).  0 or -ENOMEM.
 */
int pk_board_slices_json(const struct topo_board *board, int superslices, json_t **ret_items);
/* How a resource's quantity reads best: binary units for memory-like ones. */
enum topo_quantity_format pk_board_quantity_format(const char *resource);

/*
 * Verifier of a board's ICI wiring against podagent link reports.  new sorts
 * the cluster's host names once (the board is borrowed and must outlive it);
 * verify reads reports (a JSON array of LinkReports or Nodes carrying one in
 * TOPO_ANN_LINKS), writes one line per mismatch to out and adds to tally.
 * verify returns -EINVAL (malformed report) or -ENOENT (host not of the board)
 * with a message naming the field path (items[N]...) in err.
 */
struct pk_board_links;
struct pk_link_tally {
	int hosts, ports, ok, missing, wrong, down, unexpected, unknown;
};
int pk_board_links_new(const struct topo_board *board, int superslices,
		       struct pk_board_links **ret);
int pk_board_links_verify(const struct pk_board_links *links, const json_t *reports, FILE *out,
			  struct pk_link_tally *tally, char *err, size_t errlen);
void pk_board_links_free(struct pk_board_links *links); /* accepts NULL */

#endif /* PODKERNEL_KERNEL_API_H */
