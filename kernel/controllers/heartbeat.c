/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heartbeat.c — which nodes stopped reporting.
 *
 * A node proves it is alive in one of two ways.  The current one is its
 * Lease (coordination.k8s.io/v1, namespace kube-node-lease by default, named
 * after the node), renewed by podagent every --interval: every write of it
 * counts.  The older one, honoured for a release, is the annotation
 * TOPO_ANN_HEARTBEAT refreshed on the Node itself: every Node write the
 * appliance did not make counts while the Node carries it.  The table keeps,
 * per node name, the monotonic time of the last sign of life, whether the
 * Node exists, whether it has a Lease or the annotation, and whether it was
 * already declared unreachable (so the loop acts once per outage).  Only an
 * existing Node with a Lease or the annotation is monitored, or one that
 * podagent registered (it will renew a Lease: monitored from registration,
 * so an agent that dies before its first renewal is noticed); nodes
 * registered from a board file are never declared unreachable.  Times are
 * when the appliance saw the write, not the Lease's renewTime, so clocks of
 * the nodes do not matter (as in kube-controller-manager's node lifecycle).
 *
 * Which silent nodes are declared lost, and how fast, is the node lifecycle
 * controller's policy with the cluster as one zone (ctl_heartbeats_lost()):
 * nothing while the API server was saturated within the grace period (a
 * node that could not get through is not silent), a token bucket at the
 * eviction rate, and when a large share of the nodes falls silent at once
 * the secondary rate (large clusters) or nothing (small ones, and when every
 * node is silent): the appliance's own network is then the likelier fault.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/controllers.h"
#include "kernel/lib/map.h"

/* What is known of one node name. */
struct beat {
	int64_t t;  /* the last sign of life, monotonic ms */
	int64_t n;  /* Lease writes seen */
	bool down;  /* declared unreachable (once per outage) */
	bool node;  /* the Node exists */
	bool ann;   /* it carries TOPO_ANN_HEARTBEAT */
	bool lease; /* it has a Lease */
	bool agent; /* podagent registered it: a Lease will come */
};

struct ctl_heartbeats {
	struct pk_map map; /* name -> struct beat */
};

int ctl_heartbeats_new(struct ctl_heartbeats **ret)
{
	struct ctl_heartbeats *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->map = (struct pk_map)PK_MAP_INIT(free);
	*ret = h;
	return 0;
}

void ctl_heartbeats_free(struct ctl_heartbeats *h)
{
	if (!h)
		return;
	pk_map_free(&h->map);
	free(h);
}

static struct beat *beat_of(const struct ctl_heartbeats *h, const char *name)
{
	return h && name ? pk_map_get(&h->map, name) : NULL;
}

bool ctl_node_monitored(const json_t *node)
{
	json_t *ann = pk_get(node, "metadata.annotations");

	if (!json_is_object(ann))
		return false;
	if (json_object_get(ann, PK_ANN_SIMULATED))
		return false;
	return json_object_get(ann, TOPO_ANN_HEARTBEAT) != NULL;
}

static bool monitored(const struct beat *e)
{
	return e->node && (e->ann || e->lease || e->agent);
}

bool ctl_node_agent_registered(const json_t *node)
{
	json_t *ann = pk_get(node, "metadata.annotations");

	return json_is_object(ann) && !json_object_get(ann, PK_ANN_SIMULATED) &&
	       json_object_get(ann, TOPO_ANN_AGENT_OWNED) != NULL;
}

/* The entry of name, created when missing; NULL without memory. */
static struct beat *entry(struct ctl_heartbeats *h, const char *name, int64_t now_ms)
{
	struct beat *e = pk_map_get(&h->map, name);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e || pk_map_put(&h->map, name, e) < 0) {
		free(e);
		return NULL;
	}
	e->t = now_ms;
	return e;
}

/* A sign of life: refresh the time; *ret_recovered when it was down. */
static void alive(struct beat *e, int64_t now_ms, bool *ret_recovered)
{
	if (ret_recovered)
		*ret_recovered = e->down;
	e->t = now_ms;
	e->down = false;
}

int ctl_heartbeat_seen(struct ctl_heartbeats *h, const char *name, bool annotated, int64_t now_ms,
		       bool *ret_recovered)
{
	struct beat *e;

	if (!h || !name)
		return -EINVAL;
	if (ret_recovered)
		*ret_recovered = false;
	/* Kept also while not monitored: a Lease that comes later finds the Node. */
	e = entry(h, name, now_ms);
	if (!e)
		return -ENOMEM;
	e->node = true;
	e->ann = annotated;
	/* without the annotation, only the Lease says the agent is alive */
	if (annotated)
		alive(e, now_ms, ret_recovered);
	return 0;
}

int ctl_heartbeat_expect(struct ctl_heartbeats *h, const char *name, int64_t now_ms)
{
	struct beat *e;

	if (!h || !name)
		return -EINVAL;
	e = entry(h, name, now_ms);
	if (!e)
		return -ENOMEM;
	e->agent = true;
	e->node = true;
	return 0;
}

int ctl_heartbeat_lease(struct ctl_heartbeats *h, const char *name, bool present, int64_t now_ms,
			bool *ret_recovered)
{
	struct beat *e;

	if (!h || !name)
		return -EINVAL;
	if (ret_recovered)
		*ret_recovered = false;
	e = pk_map_get(&h->map, name);
	if (!present) {
		if (e && !e->ann && !e->node)
			pk_map_del(&h->map, name);
		else if (e)
			e->lease = false;
		return 0;
	}
	e = entry(h, name, now_ms);
	if (!e)
		return -ENOMEM;
	e->lease = true;
	e->n++;
	alive(e, now_ms, monitored(e) ? ret_recovered : NULL);
	return 0;
}

int64_t ctl_heartbeat_lease_writes(const struct ctl_heartbeats *h, const char *name)
{
	const struct beat *e = beat_of(h, name);

	return e ? e->n : 0;
}

bool ctl_heartbeat_live(const struct ctl_heartbeats *h, const char *name)
{
	const struct beat *e = beat_of(h, name);

	return e && monitored(e) && !e->down;
}

void ctl_heartbeat_forget(struct ctl_heartbeats *h, const char *name)
{
	struct beat *e = beat_of(h, name);

	/* the Node is gone; a Lease that stays is remembered for a Node that returns */
	if (e && e->lease)
		e->node = false;
	else if (e)
		pk_map_del(&h->map, name);
}

int ctl_heartbeats_expired(struct ctl_heartbeats *h, int64_t now_ms, int64_t grace_ms,
			   json_t **ret_names)
{
	json_t *names;
	const char *name;
	void *v;

	if (!h || !ret_names)
		return -EINVAL;
	names = json_array();
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; pk_map_next(&h->map, &i, &name, &v);) {
		struct beat *e = v;

		if (!monitored(e) || e->down || now_ms - e->t <= grace_ms)
			continue;
		if (json_array_append_new(names, json_string(name)) < 0) {
			json_decref(names);
			return -ENOMEM;
		}
		e->down = true;
	}
	*ret_names = names;
	return 0;
}

/* ---- node-loss policy --------------------------------------------------------- */
/* When a node counts as silent: its last heartbeat or the server's last
 * saturation, whichever is later. */
static int64_t silent_since(const struct beat *e, const struct ctl_loss_policy *p)
{
	return p->saturated_ms > e->t ? p->saturated_ms : e->t;
}

static double loss_rate(const struct ctl_loss_policy *p, struct ctl_loss_report *r)
{
	r->state = CTL_LOSS_NORMAL;
	if (r->silent > 2 && r->silent == r->monitored)
		r->state = CTL_LOSS_FULL;
	else if (r->silent > 2 && (double)r->silent >= p->unhealthy_share * (double)r->monitored)
		r->state = CTL_LOSS_PARTIAL;
	if (r->state == CTL_LOSS_FULL)
		return 0;
	if (r->state == CTL_LOSS_PARTIAL)
		return r->monitored > p->large_cluster ? p->secondary_rate : 0;
	return p->rate;
}

/* A silent node not yet declared lost. */
struct candidate {
	int64_t since;
	const char *name; /* the map's key */
	struct beat *e;
};

/* Oldest silence first, then by name (the table's order is no order). */
static int candidate_cmp(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->since != y->since)
		return x->since < y->since ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Silent nodes not yet declared lost, oldest silence first (*ret, *n; -ENOMEM). */
static int candidates(struct ctl_heartbeats *h, const struct ctl_loss_policy *p, int64_t now_ms,
		      struct ctl_loss_report *r, struct candidate **ret, size_t *n)
{
	struct candidate *c = calloc(h->map.live ? h->map.live : 1, sizeof(*c));
	const char *name;
	void *v;

	if (!c)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; pk_map_next(&h->map, &i, &name, &v);) {
		struct beat *e = v;
		int64_t since;

		if (!monitored(e))
			continue;
		r->monitored++;
		since = silent_since(e, p);
		if (now_ms - since <= p->grace_ms)
			continue;
		r->silent++;
		if (!e->down)
			c[(*n)++] = (struct candidate){since, name, e};
	}
	qsort(c, *n, sizeof(*c), candidate_cmp);
	*ret = c;
	return 0;
}

int ctl_heartbeats_lost(struct ctl_heartbeats *h, const struct ctl_loss_policy *p,
			struct ctl_loss_limiter *lim, int64_t now_ms, json_t **ret_names,
			struct ctl_loss_report *ret_report)
{
	struct ctl_loss_report r = {0};
	struct candidate *c = NULL;
	size_t nc = 0;
	json_t *names;

	if (!h || !p || !lim || !ret_names)
		return -EINVAL;
	names = json_array();
	if (!names || candidates(h, p, now_ms, &r, &c, &nc) < 0) {
		json_decref(names);
		return -ENOMEM;
	}
	double rate = loss_rate(p, &r);

	if (p->saturated_ms && now_ms - p->saturated_ms <= p->grace_ms)
		r.state = CTL_LOSS_BLIND;
	if (lim->last_ms == 0)
		lim->tokens = 1;
	else if (rate > 0)
		lim->tokens += (double)(now_ms - lim->last_ms) / 1000.0 * rate;
	if (lim->tokens > 1)
		lim->tokens = 1;
	lim->last_ms = now_ms;
	for (size_t i = 0; i < nc; i++) {
		if (rate <= 0 || lim->tokens < 1 - 1e-9) { /* (rounding of the sums) */
			r.held++;
			continue;
		}
		lim->tokens -= 1;
		json_array_append_new(names, json_string(c[i].name));
		c[i].e->down = true;
	}
	free(c);
	if (ret_report)
		*ret_report = r;
	*ret_names = names;
	return 0;
}
