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
 * controller's policy with the cluster as one zone (ap_heartbeats_lost()):
 * nothing while the API server was saturated within the grace period (a
 * node that could not get through is not silent), a token bucket at the
 * eviction rate, and when a large share of the nodes falls silent at once
 * the secondary rate (large clusters) or nothing (small ones, and when every
 * node is silent): the appliance's own network is then the likelier fault.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance.h"

struct ap_heartbeats {
	json_t *map; /* name -> {"t": last_seen_ms, "down", "node", "ann", "lease", "n"} */
};

int ap_heartbeats_new(struct ap_heartbeats **ret)
{
	struct ap_heartbeats *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->map = json_object();
	if (!h->map) {
		free(h);
		return -ENOMEM;
	}
	*ret = h;
	return 0;
}

void ap_heartbeats_free(struct ap_heartbeats *h)
{
	if (!h)
		return;
	json_decref(h->map);
	free(h);
}

bool ap_node_monitored(const json_t *node)
{
	json_t *ann = pk_get(node, "metadata.annotations");

	if (!json_is_object(ann))
		return false;
	if (json_object_get(ann, PK_ANN_SIMULATED))
		return false;
	return json_object_get(ann, TOPO_ANN_HEARTBEAT) != NULL;
}

static bool flag(const json_t *e, const char *name)
{
	return json_is_true(json_object_get(e, name));
}

static bool monitored(const json_t *e)
{
	return flag(e, "node") && (flag(e, "ann") || flag(e, "lease") || flag(e, "agent"));
}

bool ap_node_agent_registered(const json_t *node)
{
	json_t *ann = pk_get(node, "metadata.annotations");

	return json_is_object(ann) && !json_object_get(ann, PK_ANN_SIMULATED) &&
	       json_object_get(ann, TOPO_ANN_AGENT_OWNED) != NULL;
}

/* The entry of name, created when missing; NULL without memory. */
static json_t *entry(struct ap_heartbeats *h, const char *name, int64_t now_ms)
{
	json_t *e = json_object_get(h->map, name);

	if (e)
		return e;
	e = json_pack("{s:I,s:b,s:b,s:b,s:b}", "t", (json_int_t)now_ms, "down", 0, "node", 0, "ann",
		      0, "lease", 0);
	if (!e || json_object_set_new(h->map, name, e) < 0)
		return NULL;
	return e;
}

/* A sign of life: refresh the time; *ret_recovered when it was down. */
static int alive(json_t *e, int64_t now_ms, bool *ret_recovered)
{
	bool was_down = flag(e, "down");

	if (json_object_set_new(e, "t", json_integer((json_int_t)now_ms)) < 0 ||
	    json_object_set_new(e, "down", json_false()) < 0)
		return -ENOMEM;
	if (ret_recovered)
		*ret_recovered = was_down;
	return 0;
}

int ap_heartbeat_seen(struct ap_heartbeats *h, const char *name, bool annotated, int64_t now_ms,
		      bool *ret_recovered)
{
	json_t *e;

	if (!h || !name)
		return -EINVAL;
	if (ret_recovered)
		*ret_recovered = false;
	/* Kept also while not monitored: a Lease that comes later finds the Node. */
	e = entry(h, name, now_ms);
	if (!e || json_object_set_new(e, "node", json_true()) < 0 ||
	    json_object_set_new(e, "ann", json_boolean(annotated)) < 0)
		return -ENOMEM;
	/* without the annotation, only the Lease says the agent is alive */
	return annotated ? alive(e, now_ms, ret_recovered) : 0;
}

int ap_heartbeat_expect(struct ap_heartbeats *h, const char *name, int64_t now_ms)
{
	json_t *e;

	if (!h || !name)
		return -EINVAL;
	e = entry(h, name, now_ms);
	if (!e || json_object_set_new(e, "agent", json_true()) < 0 ||
	    json_object_set_new(e, "node", json_true()) < 0)
		return -ENOMEM;
	return 0;
}

int ap_heartbeat_lease(struct ap_heartbeats *h, const char *name, bool present, int64_t now_ms,
		       bool *ret_recovered)
{
	json_t *e;

	if (!h || !name)
		return -EINVAL;
	if (ret_recovered)
		*ret_recovered = false;
	e = json_object_get(h->map, name);
	if (!present) {
		if (e && !flag(e, "ann") && !flag(e, "node"))
			json_object_del(h->map, name);
		else if (e && json_object_set_new(e, "lease", json_false()) < 0)
			return -ENOMEM;
		return 0;
	}
	e = entry(h, name, now_ms);
	if (!e || json_object_set_new(e, "lease", json_true()) < 0 ||
	    json_object_set_new(e, "n",
				json_integer(json_integer_value(json_object_get(e, "n")) + 1)) < 0)
		return -ENOMEM;
	return alive(e, now_ms, monitored(e) ? ret_recovered : NULL);
}

int64_t ap_heartbeat_lease_writes(const struct ap_heartbeats *h, const char *name)
{
	const json_t *e = h && name ? json_object_get(h->map, name) : NULL;

	return e ? json_integer_value(json_object_get(e, "n")) : 0;
}

bool ap_heartbeat_live(const struct ap_heartbeats *h, const char *name)
{
	const json_t *e = h && name ? json_object_get(h->map, name) : NULL;

	return e && monitored(e) && !flag(e, "down");
}

void ap_heartbeat_forget(struct ap_heartbeats *h, const char *name)
{
	json_t *e = h && name ? json_object_get(h->map, name) : NULL;

	/* the Node is gone; a Lease that stays is remembered for a Node that returns */
	if (e && flag(e, "lease"))
		json_object_set_new(e, "node", json_false());
	else if (e)
		json_object_del(h->map, name);
}

int ap_heartbeats_expired(struct ap_heartbeats *h, int64_t now_ms, int64_t grace_ms,
			  json_t **ret_names)
{
	json_t *names, *e;
	const char *name;

	if (!h || !ret_names)
		return -EINVAL;
	names = json_array();
	if (!names)
		return -ENOMEM;
	json_object_foreach(h->map, name, e)
	{
		int64_t last = json_integer_value(json_object_get(e, "t"));

		if (!monitored(e) || flag(e, "down") || now_ms - last <= grace_ms)
			continue;
		if (json_array_append_new(names, json_string(name)) < 0 ||
		    json_object_set_new(e, "down", json_true()) < 0) {
			json_decref(names);
			return -ENOMEM;
		}
	}
	*ret_names = names;
	return 0;
}

/* ---- node-loss policy --------------------------------------------------------- */
/* When a node counts as silent: its last heartbeat or the server's last
 * saturation, whichever is later. */
static int64_t silent_since(const json_t *e, const struct ap_loss_policy *p)
{
	int64_t last = json_integer_value(json_object_get(e, "t"));

	return p->saturated_ms > last ? p->saturated_ms : last;
}

static double loss_rate(const struct ap_loss_policy *p, struct ap_loss_report *r)
{
	r->state = AP_LOSS_NORMAL;
	if (r->silent > 2 && r->silent == r->monitored)
		r->state = AP_LOSS_FULL;
	else if (r->silent > 2 && (double)r->silent >= p->unhealthy_share * (double)r->monitored)
		r->state = AP_LOSS_PARTIAL;
	if (r->state == AP_LOSS_FULL)
		return 0;
	if (r->state == AP_LOSS_PARTIAL)
		return r->monitored > p->large_cluster ? p->secondary_rate : 0;
	return p->rate;
}

/* Silent nodes not yet declared lost, oldest silence first. */
static json_t *candidates(struct ap_heartbeats *h, const struct ap_loss_policy *p, int64_t now_ms,
			  struct ap_loss_report *r)
{
	json_t *c = json_array(), *e;
	const char *name;

	json_object_foreach(h->map, name, e)
	{
		int64_t since;

		if (!monitored(e))
			continue;
		r->monitored++;
		since = silent_since(e, p);
		if (now_ms - since <= p->grace_ms)
			continue;
		r->silent++;
		if (flag(e, "down"))
			continue;
		size_t i = json_array_size(c);

		while (i > 0 &&
		       json_integer_value(json_array_get(json_array_get(c, i - 1), 0)) > since)
			i--;
		json_array_insert_new(c, i, json_pack("[I,s]", (json_int_t)since, name));
	}
	return c;
}

int ap_heartbeats_lost(struct ap_heartbeats *h, const struct ap_loss_policy *p,
		       struct ap_loss_limiter *lim, int64_t now_ms, json_t **ret_names,
		       struct ap_loss_report *ret_report)
{
	struct ap_loss_report r = {0};
	json_t *names, *c, *x;
	size_t i;

	if (!h || !p || !lim || !ret_names)
		return -EINVAL;
	names = json_array();
	c = candidates(h, p, now_ms, &r);
	if (!names || !c) {
		json_decref(names);
		json_decref(c);
		return -ENOMEM;
	}
	double rate = loss_rate(p, &r);

	if (p->saturated_ms && now_ms - p->saturated_ms <= p->grace_ms)
		r.state = AP_LOSS_BLIND;
	if (lim->last_ms == 0)
		lim->tokens = 1;
	else if (rate > 0)
		lim->tokens += (double)(now_ms - lim->last_ms) / 1000.0 * rate;
	if (lim->tokens > 1)
		lim->tokens = 1;
	lim->last_ms = now_ms;
	json_array_foreach(c, i, x)
	{
		const char *name = json_string_value(json_array_get(x, 1));

		if (rate <= 0 || lim->tokens < 1 - 1e-9) { /* (rounding of the sums) */
			r.held++;
			continue;
		}
		lim->tokens -= 1;
		json_array_append_new(names, json_string(name));
		json_object_set_new(json_object_get(h->map, name), "down", json_true());
	}
	json_decref(c);
	if (ret_report)
		*ret_report = r;
	*ret_names = names;
	return 0;
}
