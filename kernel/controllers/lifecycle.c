/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lifecycle.c — pods on simulated nodes run, as a kubelet would report them.
 *
 * With --sim-lifecycle, a pod the loop binds to a Node that --simulate-board
 * registered (annotation PK_ANN_SIMULATED) goes through the stages a kubelet
 * reports, written as status updates:
 *
 *   bound at t ──start delay──> Running (Ready True, startTime)
 *              ──duration─────> Succeeded (Ready False)
 *
 * The duration is the pod's annotation sim.podkernel.dev/duration (seconds,
 * or N with s, m, h or d); without it the pod runs until deleted.  With a
 * failure rate P, each running pod with a duration fails (phase Failed,
 * reason Error) with probability P at a time drawn in its run; node loss
 * times (T:NODE after start) fail every pod on the node (reason NodeLost)
 * and delete the Node.  Random draws come from the seed.  Pods on real
 * podagent nodes are never touched: only simulated nodes are tracked.  Each
 * write is preconditioned on the pod's uid, so a pod recreated under the
 * same name is not finished by its predecessor's timer.  The Job and JobSet
 * controllers then count the phases (controllers.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/controllers/controllers-internal.h"
#include "kernel/sim/sim.h"

enum lc_kind { LC_RUN, LC_SUCCEED, LC_FAIL, LC_NODE_LOSS, LC_NODE_DELETE };

struct lc_timer {
	int64_t due_ms;
	enum lc_kind kind;
	char *ns, *name, *uid; /* LC_NODE_LOSS, LC_NODE_DELETE: name (and uid) are the node's */
};

struct ctl_lifecycle {
	struct lc_timer *v;
	size_t n, cap;
	json_t *nodes; /* simulated node names */
	uint64_t rng;
	int64_t start_delay_ms;
	double failure_rate;
};

static uint64_t rnd(struct ctl_lifecycle *lc)
{
	uint64_t z = (lc->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unit(struct ctl_lifecycle *lc)
{
	return (double)(rnd(lc) >> 11) / 9007199254740992.0;
}

static int add_timer(struct ctl_lifecycle *lc, int64_t due, enum lc_kind kind, const char *ns,
		     const char *name, const char *uid)
{
	struct lc_timer *t;

	if (lc->n == lc->cap) {
		size_t cap = lc->cap ? lc->cap * 2 : 64;
		struct lc_timer *v = realloc(lc->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		lc->v = v;
		lc->cap = cap;
	}
	t = &lc->v[lc->n];
	*t = (struct lc_timer){due, kind, strdup(ns ? ns : ""), strdup(name),
			       strdup(uid ? uid : "")};
	if (!t->ns || !t->name || !t->uid) {
		free(t->ns);
		free(t->name);
		free(t->uid);
		return -ENOMEM;
	}
	lc->n++;
	return 0;
}

/* "T:NODE[,T:NODE...]" -> node loss timers at start + T. */
static int parse_losses(struct ctl_lifecycle *lc, const char *spec, int64_t now, char *err,
			size_t errlen)
{
	char *copy = spec ? strdup(spec) : NULL, *save = NULL, *tok;
	int r = 0;

	if (spec && !copy)
		return -ENOMEM;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && r == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		int64_t at = 0;

		if (colon)
			*colon = '\0';
		if (!colon || !colon[1] || pk_sim_parse_seconds(tok, &at) < 0) {
			snprintf(err, errlen, "--sim-node-loss: expected T:NODE[,T:NODE...]");
			r = -EINVAL;
		} else {
			r = add_timer(lc, now + at, LC_NODE_LOSS, NULL, colon + 1, NULL);
		}
	}
	free(copy);
	return r;
}

int ctl_lifecycle_new(const struct pk_standalone_config *cfg, int64_t now,
		      struct ctl_lifecycle **ret, char *err, size_t errlen)
{
	struct ctl_lifecycle *lc = calloc(1, sizeof(*lc));
	int r;

	if (!lc || !(lc->nodes = json_object())) {
		free(lc);
		return -ENOMEM;
	}
	lc->rng = cfg->sim_seed ^ 0x5eed5eed5eed5eedULL;
	lc->start_delay_ms = cfg->sim_start_delay_ms;
	lc->failure_rate = cfg->sim_failure_rate;
	r = parse_losses(lc, cfg->sim_node_loss, now, err, errlen);
	if (r < 0) {
		ctl_lifecycle_free(lc);
		return r;
	}
	*ret = lc;
	return 0;
}

void ctl_lifecycle_free(struct ctl_lifecycle *lc)
{
	if (!lc)
		return;
	for (size_t i = 0; i < lc->n; i++) {
		free(lc->v[i].ns);
		free(lc->v[i].name);
		free(lc->v[i].uid);
	}
	free(lc->v);
	json_decref(lc->nodes);
	free(lc);
}

void ctl_lifecycle_node(struct ctl_lifecycle *lc, const json_t *node, bool deleted)
{
	const char *name = pk_name(node);

	if (!lc || !name)
		return;
	if (deleted)
		json_object_del(lc->nodes, name);
	else if (pk_get(node, "metadata.annotations") &&
		 json_object_get(pk_get(node, "metadata.annotations"), PK_ANN_SIMULATED))
		json_object_set_new(lc->nodes, name, json_true());
}

void ctl_lifecycle_bound(struct ctl_lifecycle *lc, const json_t *pod, const char *node, int64_t now)
{
	const char *d = json_string_value(
	    json_object_get(pk_get(pod, "metadata.annotations"), PK_SIM_ANN_DURATION));
	const char *ns = pk_namespace(pod), *name = pk_name(pod);
	const char *uid = pk_get_string(pod, "metadata.uid");
	int64_t run = now + lc->start_delay_ms, dur = 0;

	if (!lc || !node || !name || !json_object_get(lc->nodes, node))
		return; /* a real node: its kubelet reports */
	add_timer(lc, run, LC_RUN, ns, name, uid);
	if (!d || pk_sim_parse_seconds(d, &dur) < 0 || dur <= 0)
		return; /* runs until deleted */
	if (lc->failure_rate > 0 && unit(lc) < lc->failure_rate)
		add_timer(lc, run + (int64_t)(unit(lc) * (double)dur), LC_FAIL, ns, name, uid);
	else
		add_timer(lc, run + dur, LC_SUCCEED, ns, name, uid);
}

/* ---- firing ------------------------------------------------------------------------ */

struct phase_arg {
	const char *phase, *reason;
	int64_t now_s;
};

static int apply_phase(json_t *pod, void *arg)
{
	const struct phase_arg *a = arg;
	const char *cur = pk_get_string(pod, "status.phase");
	char ts[32];

	if (cur && (strcmp(cur, "Succeeded") == 0 || strcmp(cur, "Failed") == 0))
		return -EALREADY; /* ended already: nothing to say */
	pk_set(pod, "status.phase", json_string(a->phase));
	if (strcmp(a->phase, "Running") == 0) {
		pk_time_format(a->now_s, ts);
		pk_set(pod, "status.startTime", json_string(ts));
		return pk_condition_set(pod, "Ready", "True", "PodReady", "", a->now_s);
	}
	if (a->reason)
		pk_set(pod, "status.reason", json_string(a->reason));
	return pk_condition_set(pod, "Ready", "False", "PodCompleted", "", a->now_s);
}

/*
 * The pod's new phase, written as its status under the pod's
 * resourceVersion and uid; a pod changed meanwhile is read again (a few
 * times), one deleted or replaced under its name is left alone.
 */
static void set_phase(struct pk_ctl *ctl, const json_t *listed, const char *phase,
		      const char *reason)
{
	struct phase_arg a = {phase, reason, (int64_t)time(NULL)};
	json_t *pod = json_incref((json_t *)listed);
	const char *uid = pk_get_string(listed, "metadata.uid");
	int r = -PK_WRITE_ECONFLICT;

	for (int attempt = 0; attempt < 3 && r == -PK_WRITE_ECONFLICT && pod; attempt++) {
		struct pk_write_ref ref = ctl_ref_of(&pk_type_pod, pod);
		json_t *next = json_deep_copy(pod);

		ref.uid = uid;
		r = next ? apply_phase(next, &a) : -ENOMEM;
		if (r == 0)
			r = ctl_status(ctl, &ref, json_object_get(next, "status"), NULL);
		json_decref(next);
		if (r == -PK_WRITE_ECONFLICT) { /* read it again (ref's names are pod's) */
			json_t *cur = NULL;

			if (pk_store_get(ctl->store, &pk_type_pod, ref.ns, ref.name, &cur) < 0)
				cur = NULL;
			json_decref(pod);
			pod = cur;
		}
	}
	if (r == 0)
		ctl_log(ctl, 2, "lifecycle: pod %s/%s %s%s%s", pk_namespace(listed),
			pk_name(listed), phase, reason ? ": " : "", reason ? reason : "");
	json_decref(pod);
}

/* The pod as stored, if it is still the one the timer is for (a new reference), or NULL. */
static json_t *same_pod(struct pk_ctl *ctl, const struct lc_timer *t)
{
	json_t *pod = NULL;

	if (pk_store_get(ctl->store, &pk_type_pod, t->ns, t->name, &pod) == 0 &&
	    strcmp(pk_get_string(pod, "metadata.uid") ?: "", t->uid) == 0 &&
	    !pk_get(pod, "metadata.deletionTimestamp"))
		return pod;
	json_decref(pod);
	return NULL;
}

static void node_lost(struct pk_ctl *ctl, const char *node)
{
	struct pk_store_list_opts o = {0};
	struct pk_selector *sel = NULL;
	char s[320], err[64];
	json_t *pods = NULL, *p, *n = NULL;
	size_t i;

	/* the Node lost now, by uid: one registered again under its name is another */
	if (pk_store_get(ctl->store, &pk_type_node, NULL, node, &n) < 0)
		n = NULL;
	snprintf(s, sizeof(s), "spec.nodeName=%s", node);
	if (pk_selector_parse(s, true, &sel, err, sizeof(err)) == 0) {
		o.fields = sel;
		if (pk_store_list(ctl->store, &pk_type_pod, NULL, &o, &pods, NULL, NULL) == 0)
			json_array_foreach(pods, i, p) set_phase(ctl, p, "Failed", "NodeLost");
		json_decref(pods);
	}
	pk_selector_free(sel);
	ctl_log(ctl, 2, "lifecycle: node %s lost", node);
	/*
	 * The Node goes on the next turn of the loop, once the controllers
	 * counted its pods Failed (deleting it now would evict them first).
	 */
	if (n)
		add_timer(ctl->lifecycle, ctl_now_ms() + 1, LC_NODE_DELETE, NULL, node,
			  pk_get_string(n, "metadata.uid"));
	json_decref(n);
}

static void fire(struct pk_ctl *ctl, const struct lc_timer *t)
{
	struct pk_write_ref node = {.kind = &pk_type_node, .name = t->name, .uid = t->uid};
	json_t *pod;

	if (t->kind == LC_NODE_LOSS) {
		node_lost(ctl, t->name);
	} else if (t->kind == LC_NODE_DELETE) {
		ctl_delete(ctl, &node, PK_WRITE_PROPAGATE_DEFAULT);
	} else if ((pod = same_pod(ctl, t))) {
		set_phase(ctl, pod,
			  t->kind == LC_RUN	  ? "Running"
			  : t->kind == LC_SUCCEED ? "Succeeded"
						  : "Failed",
			  t->kind == LC_FAIL ? "Error" : NULL);
		json_decref(pod);
	}
}

int64_t ctl_lifecycle_run(struct pk_ctl *ctl, int64_t now)
{
	struct ctl_lifecycle *lc = ctl->lifecycle;
	struct lc_timer *due;
	size_t ndue = 0, keep = 0;
	int64_t next = 0;

	if (!lc || !lc->n || !(due = malloc(lc->n * sizeof(*due))))
		return 0;
	/* take the due timers out first: those their firing adds wait a turn */
	for (size_t i = 0; i < lc->n; i++) {
		if (lc->v[i].due_ms <= now)
			due[ndue++] = lc->v[i];
		else
			lc->v[keep++] = lc->v[i];
	}
	lc->n = keep;
	for (size_t i = 0; i < ndue; i++) {
		fire(ctl, &due[i]);
		free(due[i].ns);
		free(due[i].name);
		free(due[i].uid);
	}
	free(due);
	for (size_t i = 0; i < lc->n; i++)
		if (next == 0 || lc->v[i].due_ms < next)
			next = lc->v[i].due_ms;
	return next;
}
