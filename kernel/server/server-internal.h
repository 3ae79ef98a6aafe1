/* SPDX-License-Identifier: Apache-2.0 */
/* server-internal.h — state shared by the server's modules (router, watch, http, metrics). */
#ifndef PODKERNEL_KERNEL_SERVER_INTERNAL_H
#define PODKERNEL_KERNEL_SERVER_INTERNAL_H

#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include <protobuf-c/protobuf-c.h>

#include "kernel/lib/log.h"
#include "kernel/server/server.h"

#define METRIC_SLOTS 512
#define LATENCY_BUCKETS 8

struct metric_slot {
	const char *verb;     /* static string; NULL: free slot */
	const char *resource; /* static string (the type table's plural), "" for none */
	char subresource[16];
	int code;
	uint64_t count;
};

/*
 * Request latency by verb, resource and subresource (the code is no label of
 * kube-apiserver's histogram either); the last slot takes what does not fit.
 */
#define LATENCY_SLOTS 128
struct latency_slot {
	const char *verb, *resource; /* static strings; verb NULL: free slot */
	char subresource[16];
	uint64_t buckets[LATENCY_BUCKETS]; /* cumulative at render time */
	double sum;
	uint64_t count;
};

/*
 * What one request was, for its metrics, its log line and its audit event:
 * filled by the router as it learns it (router.c), read by audit.c.
 */
struct pk_srv_note {
	const char *verb;     /* "get", "create", ... or a class ("health", "auth") */
	const char *resource; /* "pods"; "" when the path names none */
	const char *group, *version;
	char subresource[16];
	char ns[254], name[254];
	char user[256], uid[128];
	json_t *groups; /* the user's groups (strings); owned, NULL: none */
};

struct pk_server {
	struct pk_store *store;
	char *listen, *token_file, *tls_cert_file, *tls_key_file, *client_ca_file;
	bool insecure_non_loopback;
	bool insecure_anonymous_admin;
	char node_lease_ns[254];     /* where a node may write its own Lease */
	char *queue_controller_user; /* pk_server_config.queue_controller_user, or NULL */
	int verbosity;
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;

	pthread_mutex_t auth_lock;
	struct pk_tokens *tokens;
	struct stat token_stat;
	time_t token_checked;
	bool token_missing; /* the file was gone at the last check (logged once) */

	struct pk_listen_limits limits;
	struct pk_listener *listener;
	/* Request bodies in flight (http.c): bytes held, in all and per user. */
	pthread_mutex_t body_lock;
	size_t body_total, body_max, body_max_per_user;
	json_t *body_users; /* user -> bytes */
	/* Watch streams waiting for news (stream.c) and the thread that wakes them. */
	pthread_mutex_t park_lock;
	struct stream *parked;
	pthread_t hub;
	bool hub_running;
	char *tls_cert, *tls_key, *client_ca;
	uint16_t port;
	atomic_bool stopping;

	pthread_mutex_t metrics_lock;
	struct metric_slot metrics[METRIC_SLOTS];
	struct latency_slot latency[LATENCY_SLOTS];
	atomic_long watchers;
	atomic_size_t watch_bytes; /* buffered by all watches (PK_SERVER_WATCH_MEMORY) */

	struct pk_srv_audit *audit; /* --audit-log-path; NULL: none */
	struct timespec started;    /* CLOCK_REALTIME at pk_server_new */

	/* More metrics from the program around the server (the appliance). */
	pthread_mutex_t hook_lock;
	void (*metrics_hook)(void *arg, FILE *f);
	void *metrics_hook_arg;
	pk_server_ui_fn ui_hook; /* /ui/ (placement map), under hook_lock too */
	void *ui_hook_arg;
};

/* A log line for the program's sink, at most at the server's verbosity. */
#define pk_srv_log(srv, level, ...)                                                                \
	pk_logf((srv)->log, (srv)->log_arg, (srv)->verbosity, level, __VA_ARGS__)

/* Responses. */
void pk_srv_respond_json(struct pk_response *resp, int status, json_t *body); /* body stolen */
void pk_srv_respond_text(struct pk_response *resp, int status, const char *ctype, const char *text);
/* A Status object; causes: messages "path: text" (may be NULL). */
void pk_srv_respond_status(struct pk_response *resp, int code, const char *reason, const char *kind,
			   const char *name, const struct pk_errors *causes, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* eviction.c: pods/NAME/eviction, a gang's disruption unit whole or not at
 * all under the namespace's PodDisruptionBudgets; answers 201, 429 or 500
 * itself, -errno (nothing answered) for the caller's store error. */
int pk_srv_evict(struct pk_store *store, const char *ns, const char *name,
		 const struct pk_store_write_opts *wo, struct pk_response *resp);

/* query.c: the query parameters of list and watch, as kube-apiserver checks them. */
/* A NUL byte in any argument: 400 naming it into resp, true. */
bool pk_srv_query_nul(const struct pk_request *req, struct pk_response *resp);
/* A boolean as Go's strconv.ParseBool (and a bare key: true); NULL: false; else -EINVAL. */
int pk_srv_query_bool(const char *v, bool *ret);
/* timeoutSeconds (0 when absent) into *ret; -EINVAL answered (not a number, negative). */
int pk_srv_query_timeout(const struct pk_request *req, struct pk_response *resp, long long *ret);
/*
 * Every list or watch parameter of req for a collection of kind t that
 * kube-apiserver refuses before reading: 0, or -EINVAL with the answer (400
 * or 422, the parameter named) in resp.
 */
int pk_srv_query_check(const struct pk_request *req, const struct pk_type *t, bool watch,
		       struct pk_response *resp);

/* proto.c: Kubernetes protobuf.  The messages of the kinds a protobuf body
 * may carry (group "*": the options kinds of every group), and of the custom
 * resources (schema_only: their schema for field validation and OpenAPI, no
 * protobuf body). */
struct pk_pb_kind {
	const char *group, *kind;
	const ProtobufCMessageDescriptor *desc;
	bool schema_only;
	const char
	    *version; /* the kind's other version (pk_type_versions[]); NULL: the stored one */
};
/* The message of kind in group (""=core), or NULL; its stored version's. */
const struct pk_pb_kind *pk_srv_pb_kind(const char *group, const char *kind);
/* The message of a served row, in the row's version (a v1beta1 row: its v1beta1 message). */
const struct pk_pb_kind *pk_srv_pb_kind_of(const struct pk_type *t);
/* The JSON form of a protobuf field (one element when repeated). */
enum pk_pb_shape {
	PK_PB_STRING,
	PK_PB_INT,
	PK_PB_BOOL,
	PK_PB_NUMBER,
	PK_PB_BYTES,	     /* base64 string */
	PK_PB_QUANTITY,	     /* "100m", or a number */
	PK_PB_INT_OR_STRING, /* 8 or "80%" */
	PK_PB_TIME,	     /* RFC 3339, seconds */
	PK_PB_MICROTIME,     /* RFC 3339, microseconds */
	PK_PB_RAW,	     /* any JSON value (RawExtension, FieldsV1) */
	PK_PB_OBJECT,	     /* *ret_msg's fields */
	PK_PB_MAP,	     /* object; *ret_msg is the entry, its field [1] the value */
};
enum pk_pb_shape pk_srv_pb_shape(const ProtobufCFieldDescriptor *f,
				 const ProtobufCMessageDescriptor **ret_msg);
/* The OpenAPI v3 schema of a scalar shape (string, integer, boolean, number,
 * bytes, quantity or int-or-string, time); NULL for RAW, OBJECT and MAP, whose
 * schemas differ between the OpenAPI documents and the CRDs.  New reference. */
json_t *pk_srv_pb_scalar_schema(const ProtobufCFieldDescriptor *f, enum pk_pb_shape shape);
/* An embedded Go struct: its fields are the parent's in JSON. */
bool pk_srv_pb_inline(const ProtobufCFieldDescriptor *f);
/* A body "k8s\0" + runtime.Unknown as the JSON object it encodes (with
 * apiVersion and kind).  -EPROTONOSUPPORT: a kind not served as protobuf;
 * -EINVAL: malformed, too deep, or a field the messages do not know (err
 * names the path). */
int pk_srv_proto_decode(const char *buf, size_t len, json_t **ret, char *err, size_t errlen);
/*
 * Decoding is bounded before libprotobuf-c allocates: one walk over the wire
 * estimates what the unpacked message and its JSON tree hold (every message,
 * repeated element, string) and refuses more than
 * pk_srv_pb_decode_limit(len) = PK_SRV_PB_DECODE_FLOOR + len *
 * PK_SRV_PB_DECODE_FACTOR with -E2BIG (413); reserve, when set, then takes
 * the estimate from the request's budget (false: -EAGAIN, 429).
 */
#define PK_SRV_PB_DECODE_FACTOR 16
#define PK_SRV_PB_DECODE_FLOOR (1 << 20)
struct pk_srv_pb_budget {
	bool (*reserve)(void *ctx, size_t n);
	void *ctx;
};
size_t pk_srv_pb_decode_limit(size_t len);
int pk_srv_proto_decode_budget(const char *buf, size_t len, const struct pk_srv_pb_budget *b,
			       json_t **ret, char *err, size_t errlen);

/* fieldvalidation.c: the fields of a message by JSON name, embedded structs
 * included (NULL: not a field). */
const ProtobufCFieldDescriptor *pk_srv_pb_field(const ProtobufCMessageDescriptor *d,
						const char *name);
enum pk_field_validation { PK_FV_WARN, PK_FV_STRICT, PK_FV_IGNORE };
/* The fieldValidation query value (NULL: Warn); -EINVAL for another. */
int pk_srv_field_validation_mode(const char *value, enum pk_field_validation *ret);
/* The paths of obj's unknown fields ("spec.containerz"), a new JSON array;
 * patch: '$' keys are directives.  Kinds without a message: none. */
int pk_srv_unknown_fields(const struct pk_type *t, const json_t *obj, bool patch,
			  json_t **ret_paths);
/* Strict: unknown fields of body and the duplicate keys in dups (paths, may
 * be NULL) are 400 (resp answered, -EINVAL); Warn: warnings on resp; Ignore:
 * nothing. */
int pk_srv_field_validate(const struct pk_type *t, enum pk_field_validation mode,
			  const json_t *body, const json_t *dups, bool patch,
			  struct pk_response *resp);

/* apply.c: server-side apply of config as manager to t/ns/name (created when
 * absent; *ret_created says so).  status: the status subresource (only status
 * is applied and written).  admit, when set, judges the object the apply
 * produces (live NULL: a create) before it is written: 0, or an error with
 * the reason in errs.  -EBUSY: conflicts (without force), listed in
 * *ret_conflicts as [{manager, apiVersion, field}]; else admit's or a store
 * error. */
struct pk_srv_apply_req {
	struct pk_store *store;
	const struct pk_type *t;
	const char *ns, *name, *manager;
	const json_t *config;
	bool force, status;
	const struct pk_store_write_opts *wo;
	int (*admit)(void *arg, const json_t *live, const json_t *next, struct pk_errors *errs);
	void *admit_arg;
};
int pk_srv_apply(const struct pk_srv_apply_req *q, struct pk_errors *errs, json_t **ret_obj,
		 json_t **ret_conflicts, bool *ret_created);
/* metadata.managedFields of an object being created by manager (NULL: none):
 * one Update entry owning every field it sets. */
int pk_srv_managed_create(json_t *obj, const char *manager);
/* A non-apply write of next over live by manager (NULL: untracked): the
 * fields it changes move to manager's Update entry, fields it removes leave
 * every entry.  Nothing when live has no managedFields or next sets its own. */
int pk_srv_managed_update(const json_t *live, json_t *next, const char *manager);

/* The keys (at most 2, NULL-terminated when fewer) that tell the items of a
 * list field apart for server-side apply; NULL: the list is owned whole. */
const char *const *pk_srv_list_keys(const char *field);

/* openapi.c: /openapi/v3 and one group version's document (NULL: none). */
json_t *pk_srv_openapi_root(void);
json_t *pk_srv_openapi_gv(const char *group, const char *version);

/* discovery.c */
/* impersonate.c: the identity the Impersonate-* headers ask for, and its strings. */
#define PK_IMP_GROUPS_MAX 64
#define PK_IMP_EXTRAS_MAX 16
#define PK_IMP_VALUE_MAX 256
#define PK_IMP_KEY_MAX 128
struct pk_impersonation {
	char user[PK_IMP_VALUE_MAX], uid[PK_IMP_VALUE_MAX];
	bool has_uid;
	char sa_ns[PK_IMP_VALUE_MAX], sa_name[PK_IMP_VALUE_MAX], sa_group[PK_IMP_VALUE_MAX + 32];
	char groups_buf[PK_IMP_GROUPS_MAX][PK_IMP_VALUE_MAX];
	const char *groups[PK_IMP_GROUPS_MAX + 3];
	size_t ngiven, ngroups;
	char extra_keys_buf[PK_IMP_EXTRAS_MAX][PK_IMP_KEY_MAX];
	char extra_values_buf[PK_IMP_EXTRAS_MAX][PK_IMP_VALUE_MAX];
	const char *extra_keys[PK_IMP_EXTRAS_MAX], *extra_values[PK_IMP_EXTRAS_MAX];
	size_t nextra;
};
/*
 * Without Impersonate-* headers 0, who unchanged.  With them: 0 and who
 * replaced by the impersonated identity (its strings in im, which must
 * outlive it), or -EPERM (403), -EINVAL (400, 500) with the answer in resp.
 */
int pk_srv_impersonate(const struct pk_server *srv, const struct pk_request *req,
		       struct pk_identity *who, struct pk_impersonation *im,
		       struct pk_response *resp);

/* access.c: SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview; false: not one. */
bool pk_srv_access_handle(const struct pk_server *srv, const struct pk_request *req,
			  const struct pk_identity *who, struct pk_response *resp);
bool pk_srv_discovery_handle(struct pk_server *srv, const char *path, struct pk_response *resp);
/* /openapi/v2: an empty document, protobuf when accepted, else JSON. */
void pk_srv_discovery_openapi_v2(const char *accept, struct pk_response *resp);

/*
 * scale.c: the scale subresource (autoscaling/v1 Scale) of LeaderWorkerSet.
 * The Scale of obj (a new reference); obj with scale's spec.replicas (and
 * its resourceVersion, if any) as *ret, or -EINVAL naming the field; a PUT
 * (type NULL: body is the Scale) or PATCH of the Scale written as an update
 * of the object, retried on a conflict unless the body names a version.
 */
bool pk_srv_has_scale(const struct pk_type *t);
json_t *pk_srv_scale_view(const json_t *obj);
int pk_srv_scale_stored(const json_t *live, const json_t *scale, json_t **ret,
			struct pk_errors *errs);
int pk_srv_scale_write(struct pk_store *st, const struct pk_type *t, const char *ns,
		       const char *name, const enum pk_patch_type *type, const json_t *body,
		       const struct pk_store_write_opts *wo, struct pk_errors *errs, json_t **ret);

/*
 * versions.c: a row served in a shape other than the one stored (an
 * events.k8s.io Event, a kind of pk_type_versions[]): bodies converted on
 * their way in, objects on their way out.  Does t convert?
 */
bool pk_srv_converts(const struct pk_type *t);
/* The row t's objects are stored as (core Event for events.k8s.io's). */
const struct pk_type *pk_srv_stored_type(const struct pk_type *t);
/* A stored object in t's shape: a new reference (obj itself when t needs none). */
json_t *pk_srv_view(const struct pk_type *t, json_t *obj);
/* Would pk_srv_view() convert obj? */
bool pk_srv_needs_view(const struct pk_type *t, const json_t *obj);
/* A body in t's shape as stored: a new reference; what it refuses goes to errs by its path. */
json_t *pk_srv_stored(const struct pk_type *t, json_t *obj, struct pk_errors *errs);
/* The answer of a write in t's shape; body taken (a Status passes). */
json_t *pk_srv_answer(const struct pk_type *t, json_t *body);
/* Each item of a list in t's shape, in place. */
void pk_srv_items(const struct pk_type *t, json_t *items);
/* events.c: the Event resource in its two shapes (core v1 as stored,
 * events.k8s.io/v1).  Is t one of the two? */
bool pk_srv_event_type(const struct pk_type *t);
/* Is t events.k8s.io's (whose bodies are converted)? */
bool pk_srv_event_api(const struct pk_type *t);
/* obj as served at t (a new reference; obj itself when nothing changes). */
json_t *pk_srv_event_view(const struct pk_type *t, json_t *obj);
/* Would pk_srv_event_view() convert obj? */
bool pk_srv_event_needs_view(const struct pk_type *t, const json_t *obj);
/* A body written at t as the store keeps it (a new reference). */
json_t *pk_srv_event_stored(const struct pk_type *t, json_t *obj);
/* The answer body of a write or get at t (body taken, a new one returned). */
json_t *pk_srv_event_answer(const struct pk_type *t, json_t *body);
/* The items of a list at t, converted in place. */
void pk_srv_event_items(const struct pk_type *t, json_t *items);
/* Field selector keys at t (regarding.name) as the stored fields (involvedObject.name). */
int pk_srv_event_fields(const struct pk_type *t, struct pk_selector *fields);

/* table.c: meta.k8s.io/v1 Table of objects (items borrowed). */
bool pk_srv_wants_table(const char *accept);
/* A column of a kind's Table: its cell from the function, or else from the
 * JSONPath (also the column of the kind's CRD; type "date": an age). */
struct pk_srv_column {
	const char *name, *type;
	int priority; /* 1: -o wide only */
	json_t *(*cell)(json_t *obj);
	const char *json_path;
	const char *description;
};
/* tables_kinds.c: t's columns, ended by a NULL name. */
const struct pk_srv_column *pk_srv_columns_of(const struct pk_type *t);
/* A JSONPath (".a.b", ".a[?(@.k==\"v\")].b") in obj, borrowed; NULL: none. */
json_t *pk_srv_json_path(json_t *obj, const char *path);
/* upstream's HumanDuration ("3m20s") of seconds. */
void pk_srv_human_duration(int64_t seconds, char *buf, size_t len);
/* The age of an RFC 3339 time ("<unknown>" when there is none). */
json_t *pk_srv_cell_since(const char *ts);
json_t *pk_srv_table_of(const struct pk_type *t, json_t *items, bool with_header, bool full_object);

/* watch.c */
struct watch_spec {
	const struct pk_type *type;
	const char *ns;			     /* NULL: all */
	struct pk_selector *labels, *fields; /* taken */
	uint64_t since;			     /* 0: send current objects first */
	bool table;
	bool bookmarks; /* allowWatchBookmarks */
	int timeout_s;
};
int pk_srv_watch_new(struct pk_server *srv, struct watch_spec *spec, struct pk_watch **ret);

/* stream.c: a watch as a chunked response that never blocks an event-loop
 * thread (w is taken, also on failure). */
struct MHD_Connection;
struct MHD_Response;
struct MHD_Response *pk_srv_stream_response(struct pk_server *srv, struct MHD_Connection *conn,
					    struct pk_watch *w);
int pk_srv_stream_hub_start(struct pk_server *srv);
/* Sets srv->stopping, joins the hub and resumes every parked stream. */
void pk_srv_stream_hub_stop(struct pk_server *srv);

/* admission.c: NodeRestriction.  The node name of a node identity (not
 * system:masters); false for anyone else. */
bool pk_srv_admission_node_name(const struct pk_identity *who, const char **ret_name);
/*
 * A node's write (not get, list or watch) of a Lease outside the server's
 * node-lease namespace (ns NULL: no namespace given): kube-apiserver's Node
 * authorizer lets a node write only its own Lease in kube-node-lease.
 */
bool pk_srv_admission_node_lease_elsewhere(const struct pk_server *srv,
					   const struct pk_identity *who, const char *verb,
					   const struct pk_type *t, const char *ns);
/* May node write next over old (NULL: create) of its own Node?  0 or -EPERM
 * with the field and reason in errs. */
int pk_srv_admission_node_write(const char *node, const json_t *old, const json_t *next,
				struct pk_errors *errs);

/* metrics.c */
/* Count a finished request by verb, resource, subresource and code. */
void pk_srv_metrics_record(struct pk_server *srv, const struct pk_srv_note *note, int code,
			   double seconds);

/* audit.c: --audit-log-path opened at pk_server_new (-EINVAL, err: cannot). */
int pk_srv_audit_open(struct pk_server *srv, const struct pk_server_config *cfg, char *err,
		      size_t errlen);
void pk_srv_audit_close(struct pk_server *srv);
void pk_srv_audit_metrics(struct pk_server *srv, FILE *f);
/* A finished request: its log line (verbosity 2) and, for a write, its audit event. */
void pk_srv_request_done(struct pk_server *srv, const struct pk_request *req,
			 const struct pk_srv_note *note, int code, double seconds,
			 const struct timespec *received);
char *pk_srv_metrics_render(struct pk_server *srv);
/* /ui/ through the hook: 0 answered, -ENOENT not served here. */
int pk_srv_ui_render(struct pk_server *srv, const struct pk_request *req, struct pk_response *resp);

/* auth in router.c: identity of a request (NULL token file: admin). */

#endif
