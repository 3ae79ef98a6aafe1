/* SPDX-License-Identifier: Apache-2.0 */
/*
 * expand.c — run the controllers over a list of objects, offline.
 *
 * Every Job, JobSet and LeaderWorkerSet is replaced, in place, by what its
 * controller creates;
 * Jobs created by a JobSet are expanded in turn (bounded depth), so a JobSet
 * ends as its Workload, groups and pods.  Controllers that take their groups
 * from a parent's Workload (downward annotations) find it among the objects
 * emitted so far or the input.  Errors of one object are prefixed with its
 * kind, namespace and name; all objects are tried before failing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/log.h"
#include "kernel/builder/builder-internal.h"

struct expand {
	const json_t *input;
	json_t *out;
	struct pk_errors *errs;
	bool too_many;
};

static bool matches(const json_t *obj, enum pk_kind kind, const char *ns, const char *name)
{
	const char *n = pk_name(obj), *s;

	if (pk_kind_of(obj) != kind || !n || strcmp(n, name) != 0)
		return false;
	s = pk_namespace(obj);
	return !ns || !s || strcmp(s, ns) == 0;
}

static json_t *lookup(void *userdata, enum pk_kind kind, const char *ns, const char *name)
{
	struct expand *e = userdata;
	json_t *o;
	size_t i;

	if (!name)
		return NULL;
	json_array_foreach(e->out, i, o) if (matches(o, kind, ns, name)) return o;
	json_array_foreach(e->input, i, o) if (matches(o, kind, ns, name)) return o;
	return NULL;
}

static int expand_one(struct expand *e, json_t *obj, unsigned depth)
{
	struct wb_lookup lk = {lookup, e};
	struct pk_errors local = {0};
	enum pk_kind kind = pk_kind_of(obj);
	json_t *made = NULL, *o;
	char *prefix;
	size_t i;
	int r;

	if (json_array_size(e->out) >= WB_MAX_EXPANDED) {
		if (!e->too_many)
			pk_errors_add(
			    e->errs,
			    "<input>: Too many: the objects would expand to more than %d objects",
			    WB_MAX_EXPANDED);
		e->too_many = true;
		return -EINVAL;
	}
	if (kind != PK_KIND_JOB && kind != PK_KIND_JOBSET && kind != PK_KIND_LEADER_WORKER_SET)
		return json_array_append(e->out, obj) < 0 ? -ENOMEM : 0;
	prefix = wb_strdupf("%s %s/%s", pk_kind_to_string(kind),
			    pk_namespace(obj) ? pk_namespace(obj) : "default",
			    pk_name(obj) ? pk_name(obj) : "<unnamed>");
	if (!prefix)
		return -ENOMEM;
	if (depth > PK_HIERARCHY_DEPTH_MAX) {
		pk_errors_add(e->errs, "%s: Invalid value: controllers nest deeper than %d levels",
			      prefix, PK_HIERARCHY_DEPTH_MAX);
		free(prefix);
		return -EINVAL;
	}
	r = kind == PK_KIND_JOB	     ? wb_job_reconcile(obj, &lk, &made, &local)
	    : kind == PK_KIND_JOBSET ? wb_jobset_reconcile(obj, &lk, &made, &local)
				     : wb_lws_reconcile(obj, &lk, &made, &local);
	wb_errors_move(e->errs, &local, prefix);
	pk_errors_clear(&local);
	if (r < 0) {
		if (r != -ENOMEM && r != -EINVAL) {
			if (!e->errs || e->errs->n == 0)
				pk_errors_add(e->errs, "%s: Internal error: %s", prefix,
					      pk_errno_text(r));
			r = -EINVAL;
		}
		free(prefix);
		return r;
	}
	free(prefix);
	json_array_foreach(made, i, o)
	{
		r = expand_one(e, o, depth + 1);
		if (r < 0)
			break;
	}
	json_decref(made);
	return r;
}

int wb_expand_objects(json_t *objects, json_t **ret_objects, struct pk_errors *errs)
{
	return wb_expand_objects_from(objects, 0, ret_objects, errs);
}

/* objects[0..from) into e->out as they are (expand_one would pass each through). */
static int take_first(struct expand *e, json_t *objects, size_t from)
{
	if (from > WB_MAX_EXPANDED)
		from = WB_MAX_EXPANDED; /* expand_one stops there: from it on, it says so */
	for (size_t i = 0; i < from; i++)
		if (json_array_append(e->out, json_array_get(objects, i)) < 0)
			return -ENOMEM;
	return (int)from;
}

int wb_expand_objects_from(json_t *objects, size_t from, json_t **ret_objects,
			   struct pk_errors *errs)
{
	struct expand e = {.input = objects, .errs = errs};
	json_t *o;
	size_t i;
	int r = 0, k;

	if (!json_is_array(objects) || !ret_objects || from > json_array_size(objects))
		return -EINVAL;
	e.out = json_array();
	if (!e.out)
		return -ENOMEM;
	k = take_first(&e, objects, from);
	if (k < 0) {
		json_decref(e.out);
		return k;
	}
	for (i = (size_t)k; i < json_array_size(objects) && (o = json_array_get(objects, i)); i++) {
		k = expand_one(&e, o, 0);
		if (k == -ENOMEM) {
			r = k;
			break;
		}
		if (k < 0)
			r = -EINVAL;
		if (e.too_many)
			break;
	}
	if (r < 0) {
		json_decref(e.out);
		return r;
	}
	*ret_objects = e.out;
	return 0;
}
