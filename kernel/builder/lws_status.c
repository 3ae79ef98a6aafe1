/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lws_status.c — what a LeaderWorkerSet's controller does after looking at
 * its pods: the groups to recreate and the status to write.
 *
 * The pods are sorted into groups by their group-index and worker-index
 * labels.  A group is broken when one of its pods ended (Failed or
 * Succeeded: a serving pod does not end) or is gone while others of the
 * group remain (its leader, or a worker beside other workers: with
 * LeaderReady the workers come all at once).  Under
 * RecreateGroupOnPodRestart a broken group's pods and PodGroup are deleted
 * together, so that the reconcile that follows creates and gates the gang
 * whole again; under None only the ended pods are, and come back alone.
 *
 * A rolling update runs over the groups in [0, replicas) whose leader
 * carries an older template revision, from the highest index down, as LWS
 * does: a group that is not Ready anyway is recreated at once; a Ready one
 * only while the Ready groups left (surge groups at the indices past
 * replicas count, see lws.c) stay at least replicas - maxUnavailable.  With
 * maxUnavailable 0 and a surge, a new group must be placed and Ready before
 * an old one is removed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/builder/builder-internal.h"

struct group {
	const json_t *leader;
	int64_t workers, ended, ready; /* pods present but deleting; ready: Ready and active */
	bool current;		       /* the leader is at the current revision */
};

struct groups {
	struct group *g;
	int64_t n; /* indices 0..n-1 */
	const json_t *pods;
	const char *revision;
	struct wb_lws_params p;
};

static const char *label(const json_t *pod, const char *key)
{
	return json_string_value(json_object_get(pk_get(pod, "metadata.labels"), key));
}

/* A label holding an index in [0, max), or -1. */
static int64_t index_of(const json_t *pod, const char *key, int64_t max)
{
	const char *s = label(pod, key);
	char *end;
	long long v;

	if (!s || !*s)
		return -1;
	v = strtoll(s, &end, 10);
	return *end || v < 0 || v >= max ? -1 : v;
}

static int sort_pods(struct groups *gs)
{
	const json_t *p;
	size_t i;

	gs->n = gs->p.replicas + gs->p.max_surge;
	json_array_foreach(gs->pods, i, p)
	{
		int64_t g = index_of(p, WB_LWS_LABEL_GROUP_INDEX, WB_MAX_PODS);

		if (g + 1 > gs->n)
			gs->n = g + 1;
	}
	gs->g = calloc(gs->n ? (size_t)gs->n : 1, sizeof(*gs->g));
	if (!gs->g)
		return -ENOMEM;
	json_array_foreach(gs->pods, i, p)
	{
		int64_t g = index_of(p, WB_LWS_LABEL_GROUP_INDEX, WB_MAX_PODS);
		int64_t w = index_of(p, WB_LWS_LABEL_WORKER_INDEX, gs->p.size);
		enum wb_pod_state st = wb_pod_state(p);
		struct group *gr;

		if (g < 0 || w < 0 || st == WB_POD_DELETING)
			continue;
		gr = &gs->g[g];
		if (w == 0) {
			gr->leader = p;
			gr->current = label(p, WB_LWS_LABEL_REVISION) &&
				      strcmp(label(p, WB_LWS_LABEL_REVISION), gs->revision) == 0;
		} else {
			gr->workers++;
		}
		if (st != WB_POD_ACTIVE)
			gr->ended++;
		else if (pk_pod_ready(p))
			gr->ready++;
	}
	return 0;
}

static bool broken(const struct groups *gs, const struct group *g)
{
	return g->ended > 0 || (!g->leader && g->workers > 0) ||
	       (g->workers > 0 && g->workers < gs->p.size - 1);
}

static bool done(const struct groups *gs, const struct group *g)
{
	return g->leader && !broken(gs, g) && g->ready == gs->p.size;
}

/* Delete the pods of group i (only the ended ones unless whole) and with whole its PodGroup. */
static int recreate(const struct groups *gs, const char *name, int64_t i, bool whole,
		    struct wb_lws_update *u)
{
	const json_t *p;
	size_t k;
	char pg[128];

	json_array_foreach(gs->pods, k, p)
	{
		if (index_of(p, WB_LWS_LABEL_GROUP_INDEX, WB_MAX_PODS) != i ||
		    wb_pod_state(p) == WB_POD_DELETING ||
		    (!whole && wb_pod_state(p) == WB_POD_ACTIVE))
			continue;
		if (json_array_append_new(u->delete_pods, json_string(pk_name(p))) < 0)
			return -ENOMEM;
	}
	snprintf(pg, sizeof(pg), "%s-%lld", name, (long long)i);
	if (whole && json_array_append_new(u->delete_groups, json_string(pg)) < 0)
		return -ENOMEM;
	return 0;
}

/* Broken groups (restartPolicy), then the rolling update; ret_ready: Ready groups left. */
static int plan(struct groups *gs, const char *name, struct wb_lws_update *u)
{
	int64_t i, ready = 0;
	int r = 0;

	for (i = 0; i < gs->n; i++)
		ready += done(gs, &gs->g[i]);
	for (i = 0; r >= 0 && i < gs->n; i++)
		if (broken(gs, &gs->g[i])) {
			r = recreate(gs, name, i, gs->p.recreate, u);
			u->restarted++;
		}
	for (i = gs->p.replicas - 1; r >= 0 && i >= 0; i--) {
		struct group *g = &gs->g[i];

		if (!g->leader || g->current || broken(gs, g))
			continue;
		if (done(gs, g)) {
			if (ready - 1 < gs->p.replicas - gs->p.max_unavailable)
				break;
			ready--;
		}
		r = recreate(gs, name, i, true, u);
		u->rolled++;
		g->leader = NULL; /* not counted as updated or existing below */
	}
	return r;
}

/*
 * LWS's conditions: an update under way makes UpdateInProgress and
 * Progressing true; else every group of [0, replicas) updated and Ready makes
 * Available true; else Progressing.  The others are false.
 */
static int set_conditions(json_t *obj, bool update, bool available, int64_t now,
			  struct wb_lws_update *u)
{
	static const char *const types[] = {"Available", "Progressing", "UpdateInProgress"};
	const char *reason = update	 ? "GroupsUpdating"
			     : available ? "AllGroupsReady"
					 : "GroupsProgressing";
	const char *message = update	  ? "Rolling Upgrade is in progress"
			      : available ? "All replicas are ready"
					  : "Replicas are progressing";
	bool on[3] = {available && !update, update || !available, update};
	const char *was = pk_get_string(pk_condition_get(obj, "Progressing"), "reason");
	int r = 0;

	if (!was || strcmp(was, reason) != 0) {
		u->event_reason = reason;
		snprintf(u->event_note, sizeof(u->event_note), "%s", message);
	}
	for (size_t k = 0; k < 3; k++)
		r |=
		    pk_condition_set(obj, types[k], on[k] ? "True" : "False", reason, message, now);
	return r;
}

/* The new status into a copy of lws (conditions keep their transition times). */
static int fill_status(const struct groups *gs, const json_t *lws, const char *now, json_t *copy,
		       struct wb_lws_update *u)
{
	int64_t groups = 0, ready = 0, updated = 0, old = 0, good = 0, t = 0, i;
	json_t *st = json_object_get(copy, "status");
	char sel[160];
	int r = 0;

	pk_time_parse(now, &t);
	for (i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		groups += g->leader != NULL;
		ready += done(gs, g);
		updated += g->leader && g->current;
		old += g->leader && !g->current && i < gs->p.replicas;
		good += done(gs, g) && g->current && i < gs->p.replicas;
	}
	snprintf(sel, sizeof(sel), WB_LWS_LABEL_NAME "=%s," WB_LWS_LABEL_WORKER_INDEX "=0",
		 pk_name(lws));
	r |= json_object_set_new(st, "replicas", json_integer(groups));
	r |= json_object_set_new(st, "readyReplicas", json_integer(ready));
	r |= json_object_set_new(st, "updatedReplicas", json_integer(updated));
	r |= json_object_set_new(st, "hpaPodSelector", json_string(sel));
	if (json_is_integer(pk_get(lws, "metadata.generation")))
		r |= json_object_set_new(st, "observedGeneration",
					 json_copy(pk_get(lws, "metadata.generation")));
	r |= set_conditions(copy, old > 0, good == gs->p.replicas, t, u);
	if (u->event_reason)
		snprintf(u->event_note + strlen(u->event_note),
			 sizeof(u->event_note) - strlen(u->event_note),
			 ", with %lld groups ready of total %lld groups", (long long)ready,
			 (long long)gs->p.replicas);
	return r ? -ENOMEM : 0;
}

int wb_lws_status(const json_t *lws, const json_t *pods, const char *now, struct wb_lws_update *ret)
{
	struct groups gs = {.pods = pods};
	char rev[WB_LWS_REVISION_LEN];
	struct wb_lws_update u = {0};
	json_t *copy = NULL;
	int r;

	if (!lws || !json_is_array(pods) || !now || !ret)
		return -EINVAL;
	r = wb_lws_params(lws, &gs.p);
	if (r < 0)
		return r;
	wb_lws_revision(lws, rev);
	gs.revision = rev;
	u.delete_pods = json_array();
	u.delete_groups = json_array();
	copy = json_deep_copy(lws);
	r = u.delete_pods && u.delete_groups && copy ? sort_pods(&gs) : -ENOMEM;
	if (r >= 0)
		r = plan(&gs, pk_name(lws), &u);
	if (r >= 0 && !json_is_object(json_object_get(copy, "status")))
		r = json_object_set_new(copy, "status", json_object()) < 0 ? -ENOMEM : 0;
	if (r >= 0)
		r = fill_status(&gs, lws, now, copy, &u);
	if (r >= 0 && !json_equal(json_object_get(copy, "status"), pk_get(lws, "status")))
		u.status = json_incref(json_object_get(copy, "status"));
	json_decref(copy);
	free(gs.g);
	if (r < 0) {
		wb_lws_update_clear(&u);
		return r;
	}
	*ret = u;
	return 0;
}

void wb_lws_update_clear(struct wb_lws_update *u)
{
	if (!u)
		return;
	json_decref(u->status);
	json_decref(u->delete_pods);
	json_decref(u->delete_groups);
	memset(u, 0, sizeof(*u));
}
