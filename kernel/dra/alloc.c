/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc.c — allocation of one claim's requests on one node.
 *
 * The claim's requests are read first (exactly or the firstAvailable
 * subrequests; fields not implemented refuse the claim by path).  Then a
 * depth-first search places the requests in order: a request takes the
 * first of its alternatives that can be satisfied; ExactCount picks `count`
 * devices in table order, All takes every matching device visible to the
 * node and fails when one of them is in use.  The node's candidates come
 * from the state's per-node index (its own devices, then merged in table
 * order those of nodeSelector and allNodes slices), so a search never walks
 * the devices of other nodes.  A candidate is visible to the
 * node, not in use, not picked by an earlier request of this search, has no
 * NoSchedule or NoExecute taint (DRADeviceTaints: the slice's
 * devices[].taints) the request does not tolerate, passes
 * its class's selectors (cached per device and class) and the request's own;
 * every constraint naming the request (or naming none) requires the
 * candidate's matchAttribute to exist and to equal the value the first
 * device picked under that constraint has.  The search backtracks over
 * candidates and alternatives within a budget of steps.
 *
 * When it fails, the message names the first request that cannot be
 * satisfied on its own (no class, no matching device, devices taken), or
 * else the constraint that no combination meets.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/dra/dra-internal.h"
#include "topology/topology.h"

#define MAX_REQ 32   /* requests a claim (upstream's limit) */
#define MAX_ALT 8    /* subrequests a request */
#define MAX_PICKS 32 /* devices an allocation (upstream's AllocationResultsMaxSize) */
#define MAX_CONS 32
#define STEP_BUDGET 100000
#define MAX_DEV_CAPS 32 /* capacities a shared device (attributes and capacity: 32) */

struct alt {
	char name[140]; /* "req" or "req/sub" */
	char path[96];	/* "spec.devices.requests[0].exactly" */
	int cls;
	const char *class_name;
	const json_t *sels; /* the request's own selectors */
	struct cel_program *prog[32];
	size_t nprog;
	bool all;
	int64_t count;
	const json_t *tols;	   /* the request's device tolerations */
	struct dra_cap_req capreq; /* capacity.requests */
};

struct request {
	char name[64];
	struct alt alts[MAX_ALT];
	size_t nalts;
};

struct constraint {
	char domain[256], attr[64];
	const json_t *reqs; /* NULL or empty: every request */
	bool has_value;
	struct cel_attr value;
	int setter; /* pick index that set the value */
};

struct search {
	struct dra_state *st;
	const struct dra_node *node;
	struct request *req; /* as many as the claim has (each holds MAX_ALT alternatives) */
	size_t nreq;
	struct constraint cons[MAX_CONS];
	size_t ncons;
	int picks[MAX_PICKS];
	int pick_req[MAX_PICKS], pick_alt[MAX_PICKS];
	int64_t pick_cons[MAX_PICKS][MAX_DEV_CAPS]; /* what a pick of a shared device consumes */
	size_t npicks;
	int *cand; /* the devices the node may see, in table order */
	size_t ncand;
	long steps;
	int err; /* an evaluation error stops the search */
	char *why;
	size_t whylen;
};

static int say(struct search *s, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(struct search *s, int r, const char *fmt, ...)
{
	va_list ap;

	if (s->why && s->whylen) {
		va_start(ap, fmt);
		vsnprintf(s->why, s->whylen, fmt, ap);
		va_end(ap);
	}
	return r;
}

static int class_index(const struct dra_state *st, const char *name)
{
	for (size_t i = 0; name && i < st->ncls; i++)
		if (strcmp(st->cls[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* capacity.requests: name -> quantity, at most DRA_MAX_CAP_REQ. */
static int read_capacity(struct search *s, const json_t *r, struct alt *a)
{
	json_t *reqs = pk_get(r, "capacity.requests"), *v;
	const char *name;

	if (json_object_size(reqs) > DRA_MAX_CAP_REQ)
		return say(s, -EINVAL, "%s.capacity.requests: Too many: more than %d", a->path,
			   DRA_MAX_CAP_REQ);
	json_object_foreach(reqs, name, v)
	{
		int64_t *m = &a->capreq.milli[a->capreq.n];

		if (!json_is_string(v) || topo_quantity_parse(json_string_value(v), m) < 0 ||
		    *m < 0)
			return say(s, -EINVAL,
				   "%s.capacity.requests[%s]: Invalid value: must be a "
				   "non-negative quantity",
				   a->path, name);
		a->capreq.name[a->capreq.n++] = name;
	}
	return 0;
}

/* Fields of an exact request or subrequest. */
static int read_alt(struct search *s, const json_t *r, struct alt *a)
{
	const char *mode = pk_get_string(r, "allocationMode");
	json_t *count = json_object_get(r, "count"), *sel;
	size_t i;
	int rc;

	if (json_is_true(json_object_get(r, "adminAccess")))
		return say(s, -EOPNOTSUPP,
			   "%s.adminAccess: admin access is not implemented by "
			   "this scheduler",
			   a->path);
	a->tols = json_object_get(r, "tolerations");
	if ((rc = read_capacity(s, r, a)) < 0)
		return rc;
	a->class_name = pk_get_string(r, "deviceClassName");
	a->cls = class_index(s->st, a->class_name);
	if (a->cls < 0)
		return say(s, -ENOENT, "request %s: DeviceClass \"%s\" not found", a->name,
			   a->class_name ? a->class_name : "");
	if (s->st->cls[a->cls].err)
		return say(s, -EINVAL, "request %s: %s", a->name, s->st->cls[a->cls].err);
	a->all = mode && strcmp(mode, "All") == 0;
	a->count = json_is_integer(count) ? json_integer_value(count) : 1;
	if (!a->all && (a->count < 1 || a->count > MAX_PICKS))
		return say(s, -EINVAL,
			   "%s.count: %lld devices are more than an allocation holds "
			   "(%d)",
			   a->path, (long long)a->count, MAX_PICKS);
	a->sels = json_object_get(r, "selectors");
	json_array_foreach(a->sels, i, sel)
	{
		const char *expr = pk_get_string(sel, "cel.expression");
		struct cel_error e = {0};

		if (i >= 32 || !expr || cel_compile(expr, &a->prog[a->nprog], &e) < 0)
			return say(s, -EINVAL,
				   "%s.selectors[%zu].cel.expression: column %u: %s "
				   "(expression: %s)",
				   a->path, i, e.col, expr ? e.msg : "Required value",
				   expr ? expr : "");
		/* compiling its patterns is work of the cycle, as search steps are */
		s->st->cycle_steps += (long)cel_program_regex_atoms(a->prog[a->nprog]);
		a->nprog++;
	}
	return 0;
}

static int read_request(struct search *s, size_t ri, const json_t *r)
{
	struct request *q = &s->req[ri];
	json_t *exactly = json_object_get(r, "exactly"),
	       *first = json_object_get(r, "firstAvailable");
	json_t *sub;
	size_t i;
	int rc;

	const char *qn = pk_get_string(r, "name") ? pk_get_string(r, "name") : "";

	snprintf(q->name, sizeof(q->name), "%s", qn);
	if (exactly) {
		struct alt *a = &q->alts[q->nalts++];

		snprintf(a->name, sizeof(a->name), "%s", qn);
		snprintf(a->path, sizeof(a->path), "spec.devices.requests[%zu].exactly", ri);
		return read_alt(s, exactly, a);
	}
	json_array_foreach(first, i, sub)
	{
		struct alt *a;

		if (i >= MAX_ALT)
			break;
		a = &q->alts[q->nalts++];
		snprintf(a->name, sizeof(a->name), "%s/%s", qn,
			 pk_get_string(sub, "name") ? pk_get_string(sub, "name") : "");
		snprintf(a->path, sizeof(a->path), "spec.devices.requests[%zu].firstAvailable[%zu]",
			 ri, i);
		if ((rc = read_alt(s, sub, a)) < 0)
			return rc;
	}
	if (q->nalts == 0)
		return say(s, -EINVAL,
			   "spec.devices.requests[%zu]: Required value: exactly or "
			   "firstAvailable",
			   ri);
	return 0;
}

static int read_claim(struct search *s, const json_t *spec)
{
	json_t *reqs = pk_get(spec, "devices.requests"),
	       *cons = pk_get(spec, "devices.constraints");
	json_t *x;
	size_t i;
	int r;

	if (json_array_size(reqs) > MAX_REQ || json_array_size(cons) > MAX_CONS)
		return say(s, -EINVAL,
			   "spec.devices: Too many: more than %d requests or constraints", MAX_REQ);
	s->req = calloc(json_array_size(reqs) + 1, sizeof(*s->req));
	if (!s->req)
		return -ENOMEM;
	json_array_foreach(reqs, i, x) if ((r = read_request(s, s->nreq++, x)) < 0) return r;
	json_array_foreach(cons, i, x)
	{
		struct constraint *c = &s->cons[s->ncons++];
		const char *attr = pk_get_string(x, "matchAttribute"), *slash;

		if (json_object_get(x, "distinctAttribute"))
			return say(s, -EOPNOTSUPP,
				   "spec.devices.constraints[%zu].distinctAttribute: "
				   "not implemented by this scheduler",
				   i);
		slash = attr ? strchr(attr, '/') : NULL;
		if (!slash || (size_t)(slash - attr) >= sizeof(c->domain) ||
		    strlen(slash + 1) >= sizeof(c->attr))
			return say(s, -EINVAL,
				   "spec.devices.constraints[%zu].matchAttribute: "
				   "Required value: a fully qualified attribute name",
				   i);
		memcpy(c->domain, attr, (size_t)(slash - attr));
		c->domain[slash - attr] = '\0';
		strcpy(c->attr, slash + 1);
		c->reqs = json_object_get(x, "requests");
	}
	return 0;
}

bool dra_node_selector_match(const json_t *sel, const struct dra_node *node);

static bool visible(const struct dra_device *d, const struct dra_node *node)
{
	if (d->all)
		return true;
	if (d->node_name)
		return node->name && strcmp(d->node_name, node->name) == 0;
	return d->node_sel && dra_node_selector_match(d->node_sel, node);
}

/* Whether program p selects device d; -EINVAL with why on an error. */
static int selects(struct search *s, struct cel_program *p, const struct dra_device *d,
		   const char *where, bool *ret)
{
	struct cel_error e = {0};

	if (cel_eval(p, &d->cel, ret, &e) == 0)
		return 0;
	s->err = say(s, -EINVAL, "%s: column %u: %s (expression: %s; device %s)", where, e.col,
		     e.msg, cel_program_source(p), d->key);
	return s->err;
}

static bool class_selects(struct search *s, int dev, int cls)
{
	uint8_t *c = &s->st->cache[(size_t)dev * s->st->ncls + (size_t)cls];
	const struct dra_class *k = &s->st->cls[cls];

	if (*c != DRA_UNKNOWN)
		return *c == DRA_YES;
	*c = DRA_YES;
	for (size_t i = 0; i < k->nsel && *c == DRA_YES; i++) {
		bool m = false;
		char where[300];

		snprintf(where, sizeof(where), "DeviceClass %s: spec.selectors[%zu]", k->name, i);
		if (selects(s, k->sel[i], &s->st->devs[dev], where, &m) < 0)
			*c = DRA_UNKNOWN; /* an error is not cached: it is reported each time */
		else if (!m)
			*c = DRA_NO;
	}
	return *c == DRA_YES;
}

/*
 * DRADeviceTaints: does toleration t (key, operator Equal or Exists, value,
 * effect; no key with Exists: every taint) tolerate taint x?
 */
static bool tolerates(const json_t *t, const json_t *x)
{
	const char *tk = pk_get_string(t, "key"), *op = pk_get_string(t, "operator");
	const char *te = pk_get_string(t, "effect"), *xe = pk_get_string(x, "effect");
	bool exists = op && strcmp(op, "Exists") == 0;

	if (te && *te && (!xe || strcmp(te, xe) != 0))
		return false;
	if (!tk || !*tk)
		return exists;
	if (strcmp(tk, pk_get_string(x, "key") ?: "") != 0)
		return false;
	return exists ||
	       strcmp(pk_get_string(t, "value") ?: "", pk_get_string(x, "value") ?: "") == 0;
}

/* Is every NoSchedule and NoExecute taint of device d tolerated by a? */
static bool taints_tolerated(const struct dra_device *d, const struct alt *a)
{
	size_t i, k;
	json_t *x, *t;

	json_array_foreach(d->taints, i, x)
	{
		const char *e = pk_get_string(x, "effect");
		bool ok = false;

		if (!e || (strcmp(e, "NoSchedule") != 0 && strcmp(e, "NoExecute") != 0))
			continue;
		json_array_foreach(a->tols, k, t) ok = ok || tolerates(t, x);
		if (!ok)
			return false;
	}
	return true;
}

/* Does device dev match alternative a, taints aside (and whether it is free)? */
static bool selected(struct search *s, int dev, const struct alt *a)
{
	const struct dra_device *d = &s->st->devs[dev];

	if (!visible(d, s->node) || !class_selects(s, dev, a->cls))
		return false;
	for (size_t i = 0; i < a->nprog; i++) {
		bool m = false;
		char where[120];

		snprintf(where, sizeof(where), "%s.selectors[%zu].cel.expression", a->path, i);
		if (selects(s, a->prog[i], d, where, &m) < 0 || !m)
			return false;
	}
	return true;
}

/* Does device dev match alternative a (ignoring whether it is free)? */
static bool matches(struct search *s, int dev, const struct alt *a)
{
	return taints_tolerated(&s->st->devs[dev], a) && selected(s, dev, a);
}

/*
 * Does device dev have the capacity alternative a asks (into out: what a
 * share of it consumes)?  A shared device counts its committed shares and
 * this search's picks of it.
 */
static bool fits(const struct search *s, int dev, const struct alt *a, int64_t *out)
{
	const struct dra_device *d = &s->st->devs[dev];

	if (a->capreq.n == 0 && !d->multi)
		return true;
	if (d->cel.ncaps > MAX_DEV_CAPS || !dra_consumption(d, &a->capreq, out))
		return false;
	for (size_t c = 0; d->multi && c < d->cel.ncaps; c++) {
		int64_t left = d->pol[c].value - d->consumed[c];

		for (size_t i = 0; i < s->npicks; i++)
			if (s->picks[i] == dev)
				left -= s->pick_cons[i][c];
		if (out[c] > left)
			return false;
	}
	return true;
}

static bool in_use(const struct search *s, int dev)
{
	if (s->st->devs[dev].multi) /* shared: fits() counts this search's picks */
		return s->st->inuse[dev] & DRA_WHOLE;
	for (size_t i = 0; i < s->npicks; i++)
		if (s->picks[i] == dev)
			return true;
	return s->st->inuse[dev];
}

/* The constraints that apply to alternative a of request ri. */
static bool applies(const struct constraint *c, const struct request *q, const struct alt *a)
{
	size_t i;
	json_t *r;

	if (json_array_size(c->reqs) == 0)
		return true;
	json_array_foreach(c->reqs, i, r)
	{
		const char *n = json_string_value(r);

		if (n && (strcmp(n, q->name) == 0 || strcmp(n, a->name) == 0))
			return true;
	}
	return false;
}

static const struct cel_attr *attr_of(const struct dra_device *d, const struct constraint *c)
{
	for (size_t i = 0; i < d->cel.nattrs; i++)
		if (strcmp(d->attrs[i].name, c->attr) == 0 &&
		    strcmp(d->attrs[i].domain, c->domain) == 0)
			return &d->attrs[i];
	return NULL;
}

static bool same_value(const struct cel_attr *a, const struct cel_attr *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case CEL_ATTR_INT:
		return a->i == b->i;
	case CEL_ATTR_BOOL:
		return a->b == b->b;
	case CEL_ATTR_STRING:
		return strcmp(a->s, b->s) == 0;
	default:
		return cel_semver_compare(&a->v, &b->v) == 0;
	}
}

/* Pick dev for (ri, a) if the constraints allow (consuming cons); false otherwise. */
static bool pick(struct search *s, int dev, size_t ri, size_t ai, const int64_t *cons)
{
	const struct request *q = &s->req[ri];
	const struct alt *a = &q->alts[ai];
	int at = (int)s->npicks;

	if (s->npicks >= MAX_PICKS)
		return false;
	for (size_t i = 0; i < s->ncons; i++) {
		struct constraint *c = &s->cons[i];
		const struct cel_attr *v;

		if (!applies(c, q, a))
			continue;
		v = attr_of(&s->st->devs[dev], c);
		if (!v || (c->has_value && !same_value(&c->value, v)))
			goto undo;
		if (!c->has_value) {
			c->has_value = true;
			c->value = *v;
			c->setter = at;
		}
	}
	s->picks[at] = dev;
	s->pick_req[at] = (int)ri;
	s->pick_alt[at] = (int)ai;
	memcpy(s->pick_cons[at], cons, sizeof(s->pick_cons[at]));
	s->npicks++;
	return true;
undo:
	for (size_t i = 0; i < s->ncons; i++)
		if (s->cons[i].has_value && s->cons[i].setter == at)
			s->cons[i].has_value = false;
	return false;
}

static void unpick(struct search *s)
{
	int at = (int)--s->npicks;

	for (size_t i = 0; i < s->ncons; i++)
		if (s->cons[i].has_value && s->cons[i].setter == at)
			s->cons[i].has_value = false;
}

static bool place(struct search *s, size_t ri);

/* Choose `need` more devices for (ri, ai) from table index `from` on. */
static bool choose(struct search *s, size_t ri, size_t ai, int64_t need, size_t from)
{
	const struct alt *a = &s->req[ri].alts[ai];
	int64_t cons[MAX_DEV_CAPS] = {0};

	if (need == 0)
		return place(s, ri + 1);
	for (size_t k = from; k < s->ncand && !s->err; k++) {
		int d = s->cand[k];

		if (++s->steps > STEP_BUDGET || ++s->st->cycle_steps > DRA_CYCLE_STEPS)
			return false;
		if (in_use(s, d) || !matches(s, d, a) || !fits(s, d, a, cons) ||
		    !pick(s, d, ri, ai, cons))
			continue;
		if (choose(s, ri, ai, need - 1, k + 1))
			return true;
		unpick(s);
	}
	return false;
}

/* All: every matching device visible to the node, none of them in use. */
static bool choose_all(struct search *s, size_t ri, size_t ai)
{
	const struct alt *a = &s->req[ri].alts[ai];
	size_t before = s->npicks;
	int64_t cons[MAX_DEV_CAPS] = {0};

	for (size_t k = 0; k < s->ncand && !s->err; k++) {
		int d = s->cand[k];

		if (!matches(s, d, a))
			continue;
		if (in_use(s, d) || !fits(s, d, a, cons) || !pick(s, d, ri, ai, cons))
			goto fail;
	}
	if (s->npicks > before && place(s, ri + 1))
		return true;
fail:
	while (s->npicks > before)
		unpick(s);
	return false;
}

static bool place(struct search *s, size_t ri)
{
	if (ri == s->nreq)
		return true;
	for (size_t ai = 0; ai < s->req[ri].nalts && !s->err; ai++) {
		const struct alt *a = &s->req[ri].alts[ai];

		if (a->all ? choose_all(s, ri, ai) : choose(s, ri, ai, a->count, 0))
			return true;
	}
	return false;
}

void dra_cycle_begin(struct dra_state *st)
{
	if (st)
		st->cycle_steps = 0;
}

static int cycle_spent(struct search *s)
{
	return say(s, -ENOSPC,
		   "the device allocation searches of this scheduling cycle took their %d steps; "
		   "tried again in a later cycle",
		   DRA_CYCLE_STEPS);
}

/* Why the search failed: the first request short of devices on its own. */
static int explain(struct search *s)
{
	if (s->st->cycle_steps > DRA_CYCLE_STEPS)
		return cycle_spent(s);
	for (size_t ri = 0; ri < s->nreq; ri++) {
		const struct alt *a = &s->req[ri].alts[0];
		int64_t match = 0, free_ = 0, tainted = 0, shy = 0, cons[MAX_DEV_CAPS];

		for (size_t k = 0; k < s->ncand && !s->err; k++)
			if (matches(s, s->cand[k], a)) {
				bool idle = !(s->st->inuse[s->cand[k]] & DRA_WHOLE),
				     room = fits(s, s->cand[k], a, cons);

				match++;
				free_ += idle && room;
				shy += idle && !room;
			} else if (!s->err && selected(s, s->cand[k], a)) {
				tainted++;
			}
		if (s->err)
			return s->err;
		if (match == 0 && tainted)
			return say(s, -ENOSPC,
				   "request %s: %lld devices of class %s on node %s have taints "
				   "the request does not tolerate",
				   a->name, (long long)tainted, a->class_name, s->node->name);
		if (match == 0)
			return say(s, -ENOSPC,
				   "request %s: no device of class %s matches on node %s", a->name,
				   a->class_name, s->node->name);
		if ((a->all ? free_ < match : free_ < a->count) && shy)
			return say(s, -ENOSPC,
				   "request %s: %s.capacity: %lld devices of class %s on node %s "
				   "lack the capacity asked (requestPolicy or what their shares "
				   "left), %lld have it, %lld wanted",
				   a->name, a->path, (long long)shy, a->class_name, s->node->name,
				   (long long)free_, (long long)(a->all ? match : a->count));
		if (a->all ? free_ < match : free_ < a->count)
			return say(s, -ENOSPC,
				   "request %s: devices taken: %lld of class %s match on "
				   "node %s, %lld free, %lld wanted%s",
				   a->name, (long long)match, a->class_name, s->node->name,
				   (long long)free_, (long long)(a->all ? match : a->count),
				   tainted ? " (others have taints the request does not tolerate)"
					   : "");
	}
	if (s->steps > STEP_BUDGET)
		return say(s, -ENOSPC, "no allocation found within %d search steps", STEP_BUDGET);
	return say(s, -ENOSPC,
		   "constraint: no devices on node %s share the matchAttribute of "
		   "spec.devices.constraints",
		   s->node->name);
}

/* The node's own devices and the shared ones, merged in table order. */
static int candidates(struct dra_state *st, const struct dra_node *node, struct search *s)
{
	json_t *at = node->name ? json_object_get(st->by_node, node->name) : NULL;
	size_t k = at ? (size_t)json_integer_value(at) : 0;
	size_t nl = at ? st->slot_len[k] : 0, i = 0, j = 0;
	const int *l = at ? st->local + st->slot_start[k] : NULL;

	s->cand = malloc((nl + st->nshared + 1) * sizeof(int));
	if (!s->cand)
		return -ENOMEM;
	while (i < nl || j < st->nshared)
		s->cand[s->ncand++] =
		    j == st->nshared || (i < nl && l[i] < st->shared[j]) ? l[i++] : st->shared[j++];
	return 0;
}

static void search_free(struct search *s)
{
	for (size_t r = 0; r < s->nreq; r++)
		for (size_t a = 0; a < s->req[r].nalts; a++)
			for (size_t i = 0; i < s->req[r].alts[a].nprog; i++)
				cel_program_free(s->req[r].alts[a].prog[i]);
	free(s->req);
	free(s->cand);
	free(s);
}

/* The allocation's node scope: node-local devices pin the node. */
static int scope(struct search *s, struct dra_allocation *a)
{
	for (size_t i = 0; i < s->npicks; i++) {
		const struct dra_device *d = &s->st->devs[s->picks[i]];

		if (d->node_name && !a->node_name && !(a->node_name = strdup(d->node_name)))
			return -ENOMEM;
		if (d->node_sel && !a->node_selector &&
		    !(a->node_selector = json_deep_copy(d->node_sel)))
			return -ENOMEM;
	}
	return 0;
}

/* A pick of a shared device: its share ID and consumedCapacity. */
static int share_of(struct search *s, size_t i, struct dra_result *r)
{
	const struct dra_device *d = &s->st->devs[s->picks[i]];
	char id[37], q[64];

	if (!d->multi)
		return 0;
	dra_share_id(s->st, d->key, id);
	r->share_id = strdup(id);
	r->consumed = json_object();
	if (!r->share_id || !r->consumed)
		return -ENOMEM;
	for (size_t c = 0; c < d->cel.ncaps; c++) {
		if (topo_quantity_format(s->pick_cons[i][c],
					 (enum topo_quantity_format)d->pol[c].fmt, q,
					 sizeof(q)) < 0 ||
		    json_object_set_new(r->consumed, d->pol[c].key, json_string(q)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int fill(struct search *s, struct dra_allocation *ret)
{
	struct dra_allocation a = {0};

	a.results = calloc(s->npicks + 1, sizeof(*a.results));
	if (!a.results)
		return -ENOMEM;
	for (size_t i = 0; i < s->npicks; i++) {
		const struct dra_device *d = &s->st->devs[s->picks[i]];
		struct dra_result *r = &a.results[a.nresults++];

		r->request = strdup(s->req[s->pick_req[i]].alts[s->pick_alt[i]].name);
		r->driver = strdup(d->driver);
		r->pool = strdup(d->pool);
		r->device = strdup(d->name);
		if (!r->request || !r->driver || !r->pool || !r->device || share_of(s, i, r) < 0) {
			dra_allocation_clear(&a);
			return -ENOMEM;
		}
	}
	if (scope(s, &a) < 0) {
		dra_allocation_clear(&a);
		return -ENOMEM;
	}
	*ret = a;
	return 0;
}

int dra_allocate(struct dra_state *st, const json_t *claim, const struct dra_node *node,
		 struct dra_allocation *ret, char *why, size_t whylen)
{
	const json_t *spec =
	    json_object_get(claim, "spec") ? json_object_get(claim, "spec") : claim;
	struct search *s;
	int r;

	if (why && whylen)
		why[0] = '\0';
	if (st->cycle_steps > DRA_CYCLE_STEPS) {
		struct search spent = {.why = why, .whylen = whylen};
		return cycle_spent(&spent);
	}
	if ((r = dra_state_rebuild(st)) < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s || candidates(st, node, s) < 0) {
		free(s);
		return -ENOMEM;
	}
	s->st = st, s->node = node, s->why = why, s->whylen = whylen;
	r = read_claim(s, spec);
	if (r == 0 && !place(s, 0))
		r = s->err ? s->err : explain(s);
	if (r == 0)
		r = fill(s, ret);
	search_free(s);
	return r;
}

/* Does class cls select device dev (cached)?  1, 0, or -EINVAL on an evaluation error. */
static int class_ok(struct dra_state *st, int dev, int cls)
{
	uint8_t *c = &st->cache[(size_t)dev * st->ncls + (size_t)cls];
	const struct dra_class *k = &st->cls[cls];

	if (*c != DRA_UNKNOWN)
		return *c == DRA_YES;
	for (size_t i = 0; i < k->nsel; i++) {
		struct cel_error e = {0};
		bool m = false;

		if (cel_eval(k->sel[i], &st->devs[dev].cel, &m, &e) < 0)
			return -EINVAL; /* dra_allocate() reports it */
		if (!m) {
			*c = DRA_NO;
			return 0;
		}
	}
	*c = DRA_YES;
	return 1;
}

static int count_one(struct dra_state *st, int dev, int cls, bool taken_too, size_t *n)
{
	int ok;

	static const struct alt untolerating = {.tols = NULL};

	/* in use whole, or a shared device a request naming no capacity no longer fits */
	if ((st->inuse[dev] && !taken_too) || !taints_tolerated(&st->devs[dev], &untolerating))
		return 0; /* the fast check's claims tolerate no taint */
	ok = class_ok(st, dev, cls);
	if (ok > 0)
		(*n)++;
	return ok < 0 ? ok : 0;
}

static int count_devices(struct dra_state *st, const char *class_name, const struct dra_node *node,
			 int slot, size_t want, bool taken_too)
{
	size_t n = 0;
	int cls, r = dra_state_rebuild(st);

	if (r < 0)
		return r;
	if ((cls = class_index(st, class_name)) < 0)
		return -ENOENT;
	if (st->cls[cls].err)
		return -EINVAL;
	if (slot == DRA_SLOT_LOOKUP)
		slot = dra_node_slot(st, node->name);
	if (slot >= 0) {
		const int *l = st->local + st->slot_start[slot];
		size_t nl = st->slot_len[slot];

		for (size_t i = 0; i < nl && n < want; i++)
			if ((r = count_one(st, l[i], cls, taken_too, &n)) < 0)
				return r;
	}
	for (size_t i = 0; i < st->nshared && n < want; i++)
		if (visible(&st->devs[st->shared[i]], node) &&
		    (r = count_one(st, st->shared[i], cls, taken_too, &n)) < 0)
			return r;
	return (int)n;
}

int dra_free_count(struct dra_state *st, const char *class_name, const struct dra_node *node,
		   int slot, size_t want)
{
	return count_devices(st, class_name, node, slot, want, false);
}

int dra_match_count(struct dra_state *st, const char *class_name, const struct dra_node *node,
		    int slot, size_t want)
{
	return count_devices(st, class_name, node, slot, want, true);
}
