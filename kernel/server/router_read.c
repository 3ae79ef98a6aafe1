/* SPDX-License-Identifier: Apache-2.0 */
/*
 * router_read.c — the read verbs: get, list (resourceVersion and
 * resourceVersionMatch, limit and continue, label and field selectors,
 * Table output) and watch (from a resourceVersion, bookmarks).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"
#include "kernel/server/server-router.h"

/* ---- verbs ---------------------------------------------------------------------- */
void rt_do_get(struct pk_server *srv, const struct pk_request *req, const struct route *r,
	       struct pk_response *resp)
{
	json_t *obj = NULL;
	int rc = pk_store_get(srv->store, r->type, r->ns, r->name, &obj);
	if (rc < 0)
		return rt_respond_store_error(resp, rc, r, r->name, NULL);
	/* A table's columns read the stored fields: a converted version's rows come from them. */
	bool table = pk_srv_wants_table(req->accept);
	if (!(table && r->type->conversion) && !(obj = pk_srv_answer(r->type, obj)))
		return rt_respond_store_error(resp, -ENOMEM, r, r->name, NULL);
	if (r->sub && strcmp(r->sub, "scale") == 0) {
		json_t *scale = pk_srv_scale_view(obj);
		json_decref(obj);
		return scale ? pk_srv_respond_json(resp, 200, scale)
			     : rt_respond_store_error(resp, -ENOMEM, r, r->name, NULL);
	}
	if (table) {
		json_t *items = json_pack("[o]", obj);
		json_t *table =
		    pk_srv_table_of(r->type, items, true,
				    rt_arg(req, "includeObject") &&
					strcmp(rt_arg(req, "includeObject"), "Object") == 0);
		json_decref(items);
		return pk_srv_respond_json(resp, 200, table);
	}
	pk_srv_respond_json(resp, 200, obj);
}

/* ---- resourceVersion semantics (list and watch) ------------------------------ */
struct rv_query {
	uint64_t rv; /* resourceVersion; 0: unset or "0" (any) */
	bool exact;  /* resourceVersionMatch=Exact */
};

/* 504 as kube-apiserver answers a resourceVersion it has not reached. */
static void respond_too_large_rv(struct pk_response *resp, uint64_t want, uint64_t have)
{
	char msg[160];
	snprintf(msg, sizeof(msg),
		 "Timeout: Too large resource version: %" PRIu64 ", current: %" PRIu64, want, have);
	json_t *st =
	    json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:{s:[{s:s,s:s}],s:i},s:i}", "kind", "Status",
		      "apiVersion", "v1", "metadata", "status", "Failure", "message", msg, "reason",
		      "Timeout", "details", "causes", "reason", "ResourceVersionTooLarge",
		      "message", "Too large resource version", "retryAfterSeconds", 1, "code", 504);
	pk_srv_respond_json(resp, 504, st);
}

/*
 * resourceVersion as kube-apiserver reads it: digits only.  A version past
 * the store's is 504 (the server answers at once instead of waiting for
 * it).  0 or -EINVAL (answered).
 */
static int parse_rv_query(struct pk_server *srv, const struct pk_request *req,
			  struct pk_response *resp, struct rv_query *ret)
{
	const char *rvs = rt_arg(req, "resourceVersion"),
		   *match = rt_arg(req, "resourceVersionMatch");
	*ret = (struct rv_query){0};
	if (rvs && *rvs) {
		char *end;
		errno = 0;
		ret->rv = strtoull(rvs, &end, 10);
		if (*end || errno || !(*rvs >= '0' && *rvs <= '9')) {
			pk_srv_respond_status(
			    resp, 400, "BadRequest", NULL, NULL, NULL,
			    "resourceVersion: Invalid value: \"%s\": must be an unsigned "
			    "decimal number",
			    rvs);
			return -EINVAL;
		}
	}
	/* its rules are ListOptions' (query.c, checked before) */
	ret->exact = match && strcmp(match, "Exact") == 0;
	uint64_t now = pk_store_rv(srv->store);
	if (ret->rv > now) {
		respond_too_large_rv(resp, ret->rv, now);
		return -EINVAL;
	}
	return 0;
}

/*
 * limit: absent, 0 or negative means every object (one snapshot, as
 * kube-apiserver); anything else must be a 64-bit integer.
 */
static int parse_limit(const struct pk_request *req, struct pk_response *resp, size_t *ret)
{
	const char *limit = rt_arg(req, "limit");
	*ret = 0;
	if (!limit || !*limit)
		return 0;
	char *end;
	errno = 0;
	long long n = strtoll(limit, &end, 10);
	if (*end || errno) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "limit: Invalid value: \"%s\": must be a 64-bit integer",
				      limit);
		return -EINVAL;
	}
	*ret = n > 0 ? (size_t)n : 0;
	return 0;
}

void rt_do_list(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		struct pk_response *resp)
{
	struct rv_query rq;
	struct pk_store_list_opts o = {.continue_token = rt_arg(req, "continue")};
	if (pk_srv_query_check(req, r->type, false, resp) < 0 ||
	    parse_rv_query(srv, req, resp, &rq) < 0 || parse_limit(req, resp, &o.limit) < 0)
		return;
	struct pk_selector *labels, *fields;
	if (rt_parse_selectors(req, resp, &labels, &fields) < 0)
		return;
	if (pk_srv_event_fields(r->type, fields) < 0) {
		pk_selector_free(labels);
		pk_selector_free(fields);
		return rt_respond_store_error(resp, -ENOMEM, r, NULL, NULL);
	}
	o.labels = labels;
	o.fields = fields;
	json_t *items = NULL;
	uint64_t rv = 0;
	char *cont = NULL;
	int rc = pk_store_list(srv->store, r->type, r->ns, &o, &items, &rv, &cont);
	pk_selector_free(labels);
	pk_selector_free(fields);
	if (rc == -EINVAL) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "invalid continue token");
		return;
	}
	if (rc < 0)
		return rt_respond_store_error(resp, rc, r, NULL, NULL);
	/* Only the present is kept: an older exact version is gone, as after compaction. */
	if (rq.exact && rq.rv != rv) {
		json_decref(items);
		free(cont);
		pk_srv_respond_status(
		    resp, 410, "Expired", NULL, NULL, NULL,
		    "The resourceVersion for the provided list is too old: %" PRIu64
		    " (current %" PRIu64 ")",
		    rq.rv, rv);
		return;
	}
	json_t *out;
	bool table = pk_srv_wants_table(req->accept);
	if (!(table && r->type->conversion))
		pk_srv_items(r->type, items);
	if (table) {
		const char *inc = rt_arg(req, "includeObject");
		out = pk_srv_table_of(r->type, items, true, inc && strcmp(inc, "Object") == 0);
		json_t *meta = json_object_get(out, "metadata");
		char rvs[32];
		snprintf(rvs, sizeof(rvs), "%" PRIu64, rv);
		json_object_set_new(meta, "resourceVersion", json_string(rvs));
		if (cont)
			json_object_set_new(meta, "continue", json_string(cont));
		json_decref(items);
	} else {
		out = rt_list_object(r->type, items, rv, cont);
	}
	free(cont);
	pk_srv_respond_json(resp, 200, out);
}

/* AND "metadata.name == name" into a field selector (built, not parsed: any name). */
static int select_name(struct pk_selector **sel, const char *name)
{
	if (!*sel && !(*sel = calloc(1, sizeof(**sel))))
		return -ENOMEM;
	struct pk_selector *s = *sel;
	struct pk_sel_req *reqs = realloc(s->reqs, (s->nreqs + 1) * sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	s->reqs = reqs;
	struct pk_sel_req *q = &reqs[s->nreqs];
	*q = (struct pk_sel_req){.key = strdup("metadata.name"),
				 .op = PK_SELOP_EQ,
				 .values = calloc(1, sizeof(char *)),
				 .nvalues = 1};
	if (q->values)
		q->values[0] = strdup(name);
	s->nreqs++;
	return q->key && q->values && q->values[0] ? 0 : -ENOMEM;
}

void rt_do_watch(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		 struct pk_response *resp)
{
	struct watch_spec spec = {.type = r->type,
				  .ns = r->ns,
				  .table = pk_srv_wants_table(req->accept),
				  .bookmarks = rt_arg_true(req, "allowWatchBookmarks")};
	struct rv_query rq;
	long long timeout = 0;
	if (pk_srv_query_check(req, r->type, true, resp) < 0 ||
	    pk_srv_query_timeout(req, resp, &timeout) < 0 ||
	    parse_rv_query(srv, req, resp, &rq) < 0)
		return;
	if (rt_parse_selectors(req, resp, &spec.labels, &spec.fields) < 0)
		return;
	/* A watch on one object is a watch with a name field selector. */
	if ((r->name && select_name(&spec.fields, r->name) < 0) ||
	    pk_srv_event_fields(r->type, spec.fields) < 0) {
		pk_selector_free(spec.labels);
		pk_selector_free(spec.fields);
		return rt_respond_store_error(resp, -ENOMEM, r, NULL, NULL);
	}
	spec.since = rq.rv;
	/* 0 or absent: the default; more than the longest watch: clamped to it */
	spec.timeout_s = timeout > 0 && timeout < PK_SERVER_WATCH_TIMEOUT_S
			     ? (int)timeout
			     : PK_SERVER_WATCH_TIMEOUT_S;
	struct pk_store_stats stats;
	pk_store_get_stats(srv->store, &stats);
	if (spec.since && spec.since < stats.ring_floor) {
		pk_selector_free(spec.labels);
		pk_selector_free(spec.fields);
		pk_srv_respond_status(resp, 410, "Expired", NULL, NULL, NULL,
				      "too old resource version: %" PRIu64 " (%" PRIu64 ")",
				      spec.since, stats.ring_floor);
		return;
	}
	struct pk_watch *w = NULL;
	int rc = pk_srv_watch_new(srv, &spec, &w);
	if (rc < 0)
		return rt_respond_store_error(resp, rc, r, NULL, NULL);
	resp->status = 200;
	resp->content_type = "application/json";
	resp->watch = w;
	resp->watch_free = pk_watch_free;
}
