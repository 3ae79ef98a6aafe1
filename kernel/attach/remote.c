/* SPDX-License-Identifier: Apache-2.0 */
/*
 * remote.c — the write path's backend on a kube-apiserver (attach mode).
 *
 * A batch (kernel/write/writer.h: one item per object) becomes the
 * requests a scheduler makes, sent concurrently over a pool of
 * AT_REMOTE_IN_FLIGHT kept-alive connections:
 *   - a binding is POST pods/NAME/binding (a Binding naming the node and
 *     the pod's uid, with the item's annotations, which the server copies
 *     onto the pod, setting PodScheduled itself); a pod bound elsewhere, or
 *     another pod of the same name, answers 409;
 *   - conditions are a PUT of the status subresource: the object as the
 *     mirror holds it with the conditions applied, carrying the
 *     resourceVersion the loop saw, so a concurrent change answers 409;
 *   - an eviction (preemption) writes its DisruptionTarget condition that
 *     way first, then DELETEs the pod with preconditions on its uid and the
 *     resourceVersion the status write returned.
 *   - a ResourceClaim's allocation and reservations go first, each a PUT
 *     of the claim's status subresource under the resourceVersion the loop
 *     saw; the bindings that depend on a claim (pk_writer_depend) are sent
 *     only once it is written, and fail as a conflict when it is not.  A
 *     deallocation is left to the cluster's claim controller, as
 *     kube-scheduler leaves it;
 *   - a PersistentVolumeClaim of a pod about to be bound goes first too: a
 *     merge PATCH of its spec.volumeName and selected-node annotation under
 *     the resourceVersion the loop saw; the bindings that depend on it are
 *     sent once it is written;
 *   - a create is a POST to the kind's collection (409 there: -EEXIST; an
 *     Event, the one kind written here that attach mode does not watch, goes to
 *     events.k8s.io/v1's), a
 *     replacement a PUT of the object (its status a PUT of the status
 *     subresource) carrying the resourceVersion and uid preconditions, a
 *     deletion a DELETE with preconditions and its propagationPolicy;
 * 409 is a conflict (the loop re-reads the object through get(), a GET on
 * the cluster, or the mirror's copy when the cluster does not answer), 404
 * gone, anything else (no answer included) a failed write.
 * The writes go out only while may_write() holds (the leader's lease); a
 * batch stops starting requests the moment it does not.  Events follow the
 * answers: Scheduled for a binding, FailedScheduling with the condition's
 * message, Preempted for a deleted victim.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/attach/attach-internal.h"

struct remote {
	struct at_remote_config cfg;
	struct kube_multi *multi;
	struct kube_conn *conn; /* get() */
	struct kube_call *calls;
	char (*paths)[512];
	json_t **bodies;
	size_t *item_of; /* call -> item */
	size_t cap;
};

static bool fenced(void *arg)
{
	struct remote *rb = arg;

	return rb->cfg.may_write && !rb->cfg.may_write(rb->cfg.may_write_arg);
}

static int grow(struct remote *rb, size_t n)
{
	if (n <= rb->cap)
		return 0;
	size_t cap = n < 64 ? 64 : n;
	void *c = realloc(rb->calls, cap * sizeof(*rb->calls));

	if (c)
		rb->calls = c;
	void *p = realloc(rb->paths, cap * sizeof(*rb->paths));

	if (p)
		rb->paths = p;
	void *b = realloc(rb->bodies, cap * sizeof(*rb->bodies));

	if (b)
		rb->bodies = b;
	void *i = realloc(rb->item_of, cap * sizeof(*rb->item_of));

	if (i)
		rb->item_of = i;
	if (!c || !p || !b || !i)
		return -ENOMEM;
	rb->cap = cap;
	return 0;
}

static int error_of(long status)
{
	if (status == 200 || status == 201 || status == 202)
		return 0;
	if (status == 409)
		return -PK_WRITE_ECONFLICT;
	if (status == 404)
		return -ENOENT;
	if (status == 0)
		return -EIO;
	return status == 403 || status == 401 ? -EACCES : status == 422 ? -EINVAL : -EPROTO;
}

static int path_of(struct remote *rb, const struct pk_type *kind, const char *ns, const char *name,
		   const char *sub, char buf[512])
{
	const struct kube_resource *res = at_api_resource(rb->cfg.api, kind);

	return res ? kube_resource_path(res, ns, name, sub, buf, 512) : -EINVAL;
}

/*
 * A pod's binding.  It names the pod's uid as the mirror knows it, as
 * kube-scheduler does: a pod deleted and created again under the same name
 * is not bound by a decision about the old one.
 */
static json_t *binding_body(struct remote *rb, const struct pk_write_item *it)
{
	json_t *b = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind",
			      "Binding", "metadata", "name", it->name, "namespace", it->ns,
			      "target", "apiVersion", "v1", "kind", "Node", "name", it->node);
	json_t *pod = NULL;

	if (b && it->annotations)
		json_object_set(json_object_get(b, "metadata"), "annotations", it->annotations);
	if (b && at_mirror_get(rb->cfg.mirror, &pk_type_pod, it->ns, it->name, &pod) == 0 &&
	    pk_get_string(pod, "metadata.uid"))
		json_object_set_new(json_object_get(b, "metadata"), "uid",
				    json_string(pk_get_string(pod, "metadata.uid")));
	json_decref(pod);
	return b;
}

/* The object with the item's conditions, to PUT to its status (NULL: -ENOENT etc.). */
static int status_body(struct remote *rb, const struct pk_write_item *it, json_t **ret)
{
	const struct kube_resource *res = at_api_resource(rb->cfg.api, it->kind);
	json_t *cur = NULL, *obj;
	char rv[32], av[200];
	int r = at_mirror_get(rb->cfg.mirror, it->kind, it->ns, it->name, &cur);

	if (r < 0)
		return r;
	obj = json_deep_copy(cur);
	json_decref(cur);
	if (!obj || !res)
		return obj ? -EINVAL : -ENOMEM;
	struct pk_write_item conds = *it;

	conds.node = NULL; /* a binding goes through pods/binding, never a status write */
	conds.annotations = NULL;
	r = pk_write_item_apply(&conds, obj, time(NULL));
	if (r == 0 && it->rv) {
		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)it->rv);
		r = pk_set(obj, "metadata.resourceVersion", json_string(rv));
	}
	/* a uid in an update is the server's uid precondition */
	if (r == 0 && it->uid)
		r = pk_set(obj, "metadata.uid", json_string(it->uid));
	snprintf(av, sizeof(av), "%s%s%s", res->group, *res->group ? "/" : "", res->version);
	json_object_set_new(obj, "apiVersion", json_string(av));
	if (r < 0) {
		json_decref(obj);
		return r;
	}
	*ret = obj;
	return 0;
}

/* Only PodScheduled=True with a binding: the binding says it already. */
static bool needs_status(const struct pk_write_item *it)
{
	if (it->status)
		return true;
	for (size_t c = 0; c < it->nconds; c++)
		if (!it->node || strcmp(it->conds[c].type, "PodScheduled") != 0)
			return true;
	return false;
}

static void add_call(struct remote *rb, size_t *n, size_t item, const char *method, json_t *body)
{
	rb->calls[*n] = (struct kube_call){.method = method, .path = rb->paths[*n], .body = body};
	rb->bodies[*n] = body;
	rb->item_of[*n] = item;
	(*n)++;
}

/* A POST that is not a binding: a create. */
static bool is_create(const struct kube_call *call)
{
	size_t n = strlen(call->path);

	return strcmp(call->method, "POST") == 0 &&
	       (n < 8 || strcmp(call->path + n - 8, "/binding") != 0);
}

static void count(struct remote *rb, const struct kube_call *call, int e)
{
	struct at_remote_stats *st = rb->cfg.stats;

	if (!st)
		return;
	if (call->status == 0 && e == -EPERM) {
		atomic_fetch_add(&st->fenced, 1);
		return;
	}
	if (strcmp(call->method, "POST") == 0 && !is_create(call))
		atomic_fetch_add(&st->bindings, 1);
	else if (strcmp(call->method, "DELETE") != 0)
		atomic_fetch_add(&st->status_writes, 1);
	else
		atomic_fetch_add(&st->deletes, 1);
	if (e == -PK_WRITE_ECONFLICT)
		atomic_fetch_add(&st->conflicts, 1);
	else if (e < 0 && e != -ENOENT)
		atomic_fetch_add(&st->failures, 1);
}

/* Send calls [0, n) and fold their answers into the items' results. */
static void send_calls(struct remote *rb, size_t n, struct pk_write_result *results,
		       json_t **answers)
{
	kube_request_many(rb->multi, rb->calls, n, fenced, rb);
	for (size_t c = 0; c < n; c++) {
		struct pk_write_result *wr = &results[rb->item_of[c]];
		int e = rb->calls[c].status ? error_of(rb->calls[c].status)
					    : (fenced(rb) ? -EPERM : -EIO);
		bool create = is_create(&rb->calls[c]);

		if (create && e == -PK_WRITE_ECONFLICT)
			e = -EEXIST; /* AlreadyExists */

		if (wr->error == 0)
			wr->error = e;
		count(rb, &rb->calls[c], e);
		/* a binding answers with a Status, not the pod */
		if (e == 0 && rb->calls[c].answer && answers &&
		    (create || strcmp(rb->calls[c].method, "PUT") == 0 ||
		     strcmp(rb->calls[c].method, "PATCH") == 0)) {
			at_api_normalize(rb->calls[c].answer);
			json_decref(answers[rb->item_of[c]]);
			answers[rb->item_of[c]] = json_incref(rb->calls[c].answer);
		}
		json_decref(rb->calls[c].answer);
		json_decref(rb->bodies[c]);
	}
}

/* A PersistentVolumeClaim's merge patch: its volume and annotations, under its rv. */
static json_t *volume_claim_patch(const struct pk_write_item *it)
{
	json_t *body = json_pack("{s:{}}", "metadata"), *meta = json_object_get(body, "metadata");
	char rv[32];

	if (!body)
		return NULL;
	if (it->rv) {
		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)it->rv);
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	}
	if (it->annotations)
		json_object_set(meta, "annotations", it->annotations);
	if (it->volume)
		json_object_set_new(body, "spec", json_pack("{s:s}", "volumeName", it->volume));
	return body;
}

/* Phase zero: the claims' status writes and the volume claims' patches. */
static size_t claim_calls(struct remote *rb, const struct pk_write_batch *batch,
			  struct pk_write_result *results)
{
	size_t n = 0;

	for (size_t i = 0; i < batch->n; i++) {
		const struct pk_write_item *it = &batch->items[i];
		json_t *body = NULL;
		int r;

		if (it->kind->pk == PK_KIND_PERSISTENT_VOLUME_CLAIM) {
			if (path_of(rb, it->kind, it->ns, it->name, NULL, rb->paths[n]) < 0) {
				results[i].error = -EINVAL;
				continue;
			}
			add_call(rb, &n, i, "PATCH", volume_claim_patch(it));
			rb->calls[n - 1].content_type = "application/merge-patch+json";
			continue;
		}
		if (!it->claim || !json_object_get(it->claim, "allocation"))
			continue;
		r = status_body(rb, it, &body);
		if (r == 0)
			r = path_of(rb, it->kind, it->ns, it->name, "status", rb->paths[n]);
		if (r < 0) {
			json_decref(body);
			results[i].error = r;
			continue;
		}
		add_call(rb, &n, i, "PUT", body);
	}
	return n;
}

/* The one kind written here that attach mode does not watch: the recorder's Events. */
static const struct kube_resource event_resource = {"Event", "events.k8s.io", "v1", "events", true};

/* The cluster's resource of an item's kind, NULL when there is none known here. */
static const struct kube_resource *item_resource(const struct remote *rb,
						 const struct pk_write_item *it)
{
	if (it->kind == &pk_type_event) /* created only, not watched */
		return it->create ? &event_resource : NULL;
	return at_api_resource(rb->cfg.api, it->kind);
}

/* A create: a POST of the object to its collection. */
static void create_call(struct remote *rb, size_t *n, size_t i, const struct pk_write_item *it,
			struct pk_write_result *results)
{
	const struct kube_resource *res = item_resource(rb, it);
	json_t *body = json_deep_copy(it->create);
	char av[200];

	if (!res || !body || kube_resource_path(res, it->ns, NULL, NULL, rb->paths[*n], 512) < 0) {
		json_decref(body);
		results[i].error = body ? -EINVAL : -ENOMEM;
		return;
	}
	snprintf(av, sizeof(av), "%s%s%s", res->group, *res->group ? "/" : "", res->version);
	json_object_set_new(body, "apiVersion", json_string(av));
	add_call(rb, n, i, "POST", body);
}

/*
 * Phase one: bindings, creates, replacements and status writes of every
 * item but the claims (a replacement is alone on its item: writer.h).
 */
static size_t first_calls(struct remote *rb, const struct pk_write_batch *batch,
			  struct pk_write_result *results)
{
	size_t n = 0;

	for (size_t i = 0; i < batch->n; i++) {
		const struct pk_write_item *it = &batch->items[i];
		json_t *body = NULL;

		if (it->claim || it->kind->pk == PK_KIND_PERSISTENT_VOLUME_CLAIM)
			continue;
		if (it->create) {
			if (!results[i].error)
				create_call(rb, &n, i, it, results);
			continue;
		}
		for (size_t d = 0; d < it->ndeps && !results[i].error; d++)
			if (results[it->deps[d]].error)
				results[i].error = -PK_WRITE_ECONFLICT;
		if (results[i].error)
			continue;

		if (it->node) {
			if (path_of(rb, it->kind, it->ns, it->name, "binding", rb->paths[n]) == 0)
				add_call(rb, &n, i, "POST", binding_body(rb, it));
			else
				results[i].error = -EINVAL;
		}
		if (!needs_status(it) && !it->replace)
			continue;
		int r = status_body(rb, it, &body);

		if (r == 0)
			r = path_of(rb, it->kind, it->ns, it->name, it->replace ? NULL : "status",
				    rb->paths[n]);
		if (r < 0) {
			json_decref(body);
			results[i].error = r;
			continue;
		}
		add_call(rb, &n, i, "PUT", body);
	}
	return n;
}

static const char *const propagation_names[] = {
    [PK_WRITE_PROPAGATE_DEFAULT] = "",
    [PK_WRITE_PROPAGATE_ORPHAN] = "Orphan",
    [PK_WRITE_PROPAGATE_BACKGROUND] = "Background",
    [PK_WRITE_PROPAGATE_FOREGROUND] = "Foreground",
};

/* Phase two: the deletions, the victims' once their DisruptionTarget is written. */
static size_t delete_calls(struct remote *rb, const struct pk_write_batch *batch,
			   struct pk_write_result *results, json_t **answers)
{
	size_t n = 0;

	for (size_t i = 0; i < batch->n; i++) {
		const struct pk_write_item *it = &batch->items[i];
		json_t *cur;
		char rv[32];

		if (!it->evict || results[i].error != 0)
			continue;
		cur = json_incref(answers[i]);
		/* the uid the item names, else the one the mirror knows */
		if (!cur && at_mirror_get(rb->cfg.mirror, it->kind, it->ns, it->name, &cur) < 0 &&
		    !it->uid) {
			results[i].error = -ENOENT;
			continue;
		}
		const char *uid = it->uid ? it->uid : pk_get_string(cur, "metadata.uid");
		const char *crv = pk_get_string(answers[i], "metadata.resourceVersion");

		/* the version the item's status write returned, else the item's own (0: none) */
		rv[0] = '\0';
		if (crv)
			snprintf(rv, sizeof(rv), "%s", crv);
		else if (it->rv)
			snprintf(rv, sizeof(rv), "%llu", (unsigned long long)it->rv);
		json_t *opts = json_pack("{s:s,s:s,s:{}}", "apiVersion", "v1", "kind",
					 "DeleteOptions", "preconditions");

		if (uid)
			json_object_set_new(json_object_get(opts, "preconditions"), "uid",
					    json_string(uid));
		if (*rv)
			json_object_set_new(json_object_get(opts, "preconditions"),
					    "resourceVersion", json_string(rv));
		if (it->propagation != PK_WRITE_PROPAGATE_DEFAULT)
			json_object_set_new(opts, "propagationPolicy",
					    json_string(propagation_names[it->propagation]));
		json_decref(cur);
		if (path_of(rb, it->kind, it->ns, it->name, NULL, rb->paths[n]) == 0)
			add_call(rb, &n, i, "DELETE", opts);
		else
			json_decref(opts);
	}
	return n;
}

/* The Events of what was written. */
static void record_one(void *arg, const struct pk_write_item *it, const json_t *obj,
		       const char *type, const char *reason, const char *action, const char *note)
{
	struct remote *rb = arg;

	at_recorder_emit(rb->cfg.recorder, it->kind, it->ns, it->name,
			 obj ? pk_get_string(obj, "metadata.uid") : NULL, type, reason, action,
			 note);
}

static void record(struct remote *rb, const struct pk_write_batch *batch,
		   const struct pk_write_result *results, json_t **answers)
{
	if (rb->cfg.recorder)
		pk_writer_events(batch, results, answers, record_one, rb);
}

static int remote_commit(void *backend, const struct pk_write_batch *batch,
			 struct pk_write_result *results)
{
	struct remote *rb = backend;
	json_t **answers;
	size_t n;

	/* at most a binding and a status write per item */
	if (grow(rb, batch->n * 2) < 0)
		return -ENOMEM;
	answers = calloc(batch->n, sizeof(*answers));
	if (!answers)
		return -ENOMEM;
	for (size_t i = 0; i < batch->n; i++) {
		results[i] = (struct pk_write_result){batch->items[i].kind, batch->items[i].ns,
						      batch->items[i].name, 0, NULL};
		/* a kind attach mode does not reach; an Event is created only */
		if (!item_resource(rb, &batch->items[i]))
			results[i].error = -EOPNOTSUPP;
	}
	if (fenced(rb)) {
		for (size_t i = 0; i < batch->n; i++)
			results[i].error = -EPERM;
		free(answers);
		return -EPERM;
	}
	n = claim_calls(rb, batch, results);
	send_calls(rb, n, results, answers);
	n = first_calls(rb, batch, results);
	send_calls(rb, n, results, answers);
	n = delete_calls(rb, batch, results, answers);
	send_calls(rb, n, results, NULL);
	record(rb, batch, results, answers);
	for (size_t i = 0; i < batch->n; i++) {
		/* what was written, for the loop to recognise its echo; not for evictions */
		if (results[i].error == 0 && !batch->items[i].evict)
			results[i].object = answers[i];
		else
			json_decref(answers[i]);
	}
	free(answers);
	return 0;
}

static int remote_get(void *backend, const struct pk_type *kind, const char *ns, const char *name,
		      json_t **ret)
{
	struct remote *rb = backend;
	const struct kube_resource *res = at_api_resource(rb->cfg.api, kind);
	char path[512];
	json_t *obj = NULL;
	long status = 0;
	int r = res ? path_of(rb, kind, ns, name, NULL, path) : -EINVAL;

	if (r < 0)
		return r;
	r = kube_request(rb->conn, "GET", path, NULL, NULL, 10000, &status, &obj);
	if (r == 0 && status != 200)
		r = error_of(status);
	if (r == 0 && !json_is_object(obj))
		r = -EPROTO;
	if (r < 0 && r != -ENOENT) {
		/*
		 * The cluster did not answer: the mirror's copy is the latest state
		 * known, and the scheduler must not forget the object until its next
		 * event (there may be none).
		 */
		json_decref(obj);
		return at_mirror_get(rb->cfg.mirror, kind, ns, name, ret);
	}
	if (r < 0) {
		json_decref(obj);
		return r;
	}
	if (!json_object_get(obj, "kind"))
		json_object_set_new(obj, "kind", json_string(res->kind));
	at_api_normalize(obj);
	*ret = obj;
	return 0;
}

static void remote_free(void *backend)
{
	struct remote *rb = backend;

	if (!rb)
		return;
	kube_multi_free(rb->multi);
	kube_conn_free(rb->conn);
	free(rb->calls);
	free(rb->paths);
	free(rb->bodies);
	free(rb->item_of);
	free(rb);
}

static const struct pk_writer_ops remote_ops = {
    .name = "kube",
    .commit = remote_commit,
    .get = remote_get,
    .free = remote_free,
};

int at_remote_writer_new(const struct at_remote_config *cfg, struct pk_writer **ret)
{
	struct remote *rb = calloc(1, sizeof(*rb));
	int r;

	if (!rb)
		return -ENOMEM;
	rb->cfg = *cfg;
	r = kube_multi_new(cfg->client, AT_REMOTE_IN_FLIGHT, &rb->multi);
	if (r == 0)
		r = kube_conn_new(cfg->client, &rb->conn);
	if (r == 0)
		r = pk_writer_new(&remote_ops, rb, ret);
	if (r < 0)
		remote_free(rb);
	return r;
}
