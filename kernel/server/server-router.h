/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server-router.h — what the request router (router.c) shares with its
 * handlers: the parsed route, a write on its way, and the helpers the verbs
 * use (router_request.c).  The handlers have a file each by what they do:
 * reads (get, list, watch: router_read.c), create, update and binding
 * (router_write.c), patch and server-side apply (router_patch.c), delete
 * and eviction (router_delete.c).
 */
#ifndef PODKERNEL_KERNEL_SERVER_ROUTER_H
#define PODKERNEL_KERNEL_SERVER_ROUTER_H

#include "kernel/server/server-internal.h"

/* A request path as kube-apiserver splits it. */
struct route {
	const struct pk_type *type;
	const char *group, *version;
	char *ns;   /* namespace from the path or NULL */
	char *name; /* object name or NULL (collection) */
	char *sub;  /* "status", "binding" or NULL */
};
/* A write on its way: who asks, and the store options from the query and body. */
struct call {
	struct pk_server *srv;
	const struct pk_request *req;
	const struct route *r;
	const struct pk_identity *who;
	struct pk_store_write_opts wo;
	json_t *dups; /* duplicate keys of the body, for fieldValidation */
};

/* ---- router_request.c: answers, query arguments and bodies ------------------------ */
/* A query argument's value, or NULL. */
const char *rt_arg(const struct pk_request *req, const char *key);
/* A boolean query argument as Go's strconv.ParseBool reads it; absent: false; else -EINVAL. */
int rt_arg_bool(const struct pk_request *req, const char *key, bool *ret);
bool rt_arg_true(const struct pk_request *req, const char *key);
/* A store error as the Status kube-apiserver answers, naming the object. */
void rt_respond_store_error(struct pk_response *resp, int rc, const struct route *r,
			    const char *name, const struct pk_errors *errs);
/* The body as a tree (JSON, YAML or protobuf); -EINVAL with resp answered. */
int rt_parse_body(const struct pk_request *req, struct pk_response *resp, json_t **ret);
/* The same; dups non-NULL: duplicate keys are recorded there (fieldValidation decides). */
int rt_parse_body_dups(const struct pk_request *req, struct pk_response *resp, json_t **ret,
		       json_t *dups);
/* Body's kind, name and namespace must agree with the URL; fills them in when absent. */
int rt_check_body_identity(const struct route *r, json_t *obj, bool need_name,
			   struct pk_response *resp);
/* A list of t's objects at resourceVersion rv, with its continue token. */
json_t *rt_list_object(const struct pk_type *t, json_t *items, uint64_t rv, const char *cont);
/* labelSelector and fieldSelector; -EINVAL with resp answered. */
int rt_parse_selectors(const struct pk_request *req, struct pk_response *resp,
		       struct pk_selector **ret_labels, struct pk_selector **ret_fields);
/* metadata.name of a create body, for authorisation by name; NULL when unknown. */
const char *rt_body_name(const struct pk_request *req);

/* ---- router_read.c ------------------------------------------------------------------ */
void rt_do_get(struct pk_server *srv, const struct pk_request *req, const struct route *r,
	       struct pk_response *resp);
void rt_do_list(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		struct pk_response *resp);
void rt_do_watch(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		 struct pk_response *resp);

/* ---- router_write.c: what every write passes, and create, update, binding ------------- */
/* The node name when NodeRestriction applies to this write (a node, its Node's main resource). */
const char *rt_restricted_node(const struct call *c);
/* A patch of the stored object through the write's admission. */
int rt_patch_admitted(const struct call *c, enum pk_patch_type type, const json_t *patch,
		      struct pk_errors *errs, json_t **ret);
/* A patch of a row served in another shape than stored (versions.c): an
 * events.k8s.io Event, a kueue.x-k8s.io/v1beta1 object. */
int rt_patch_view(const struct call *c, enum pk_patch_type type, const json_t *patch,
		  struct pk_errors *errs, json_t **ret);
/* fieldValidation=Strict|Warn|Ignore on a body: 0, or -EINVAL with resp answered. */
int rt_field_validation(const struct call *c, const json_t *body, bool patch,
			struct pk_response *resp);
/* NamespaceLifecycle: content is created only in a namespace that exists. */
int rt_namespace_lifecycle(const struct call *c, const json_t *obj, struct pk_response *resp);
void rt_do_create(const struct call *c, struct pk_response *resp);
void rt_do_binding(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		   struct pk_response *resp);
void rt_do_update(const struct call *c, struct pk_response *resp);
/* PUT (type NULL) or PATCH of a scale subresource (scale.c); body taken, resp answered. */
void rt_write_scale(const struct call *c, const enum pk_patch_type *type, json_t *body,
		    struct pk_response *resp);

/* ---- router_patch.c, router_delete.c ----------------------------------------------- */
void rt_do_patch(const struct call *c, struct pk_response *resp);
void rt_do_delete(struct call *c, struct pk_response *resp);
void rt_do_eviction(struct call *c, struct pk_response *resp);

#endif
