/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cycle.c — one scheduling cycle.
 *
 * Every plugin's cycle hook first (what it owes since the last cycle).  Pop
 * the best eligible root; hold it back if the gang admission, over the
 * plugins' PreEnqueue, finds it not admissible (its pods say why); validate
 * its hierarchy (Invalid on every group, nothing bound); run the placement
 * strategy on the snapshot; collect the assumed pod -> node pairs; then act
 * on the root's status: Success commits the assumptions in place (they
 * become the bindings, each after the plugins' PreBind), anything else
 * reverts them (the invariant check proves no assumption is left either
 * way, when enabled); Unschedulable triggers
 * preemption, UnschedulableAndUnresolvable does nothing.  A root that was
 * already scheduled and placed nothing new also triggers preemption
 * (KEP-6012 "Preemption triggering rules").  Binding and preemption never
 * happen in the same cycle.  Finally every group of the hierarchy gets its
 * condition and every pending pod a PodScheduled message naming the nearest
 * failed group and the cause.
 *
 * Hierarchies that cannot resolve a root (a missing ancestor, a cycle) never
 * enter a cycle; their pods are told what they wait for and groups on a
 * cycle are marked Invalid.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-result.h"
#include "kernel/sched/sched-snapshot.h"

/* Every pending pod of g's subtree gets message (prefixed by nothing). */
/*
 * Tell the pending pods of a hierarchy why they wait.  A pod held back by
 * PreEnqueue is told once: while the gang fills up, the counts in the
 * message change with every member that arrives, and rewriting every
 * waiting pod each time would cost writes in proportion to the pods
 * waiting, for every arrival.
 */
static void tell_pending(struct sc_ctx *ctx, struct sc_group *g, int depth, const char *msg,
			 bool gated)
{
	if (depth > PK_HIERARCHY_WALK_MAX)
		return;
	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];
		const struct sc_plugin_ops *waits;

		if (p->node >= 0 || p->node_name || p->deleting || (gated && p->memo.gated))
			continue;
		if ((waits = sc_cons_pre_enqueue(p, NULL)))
			sc_emit_pod(ctx, p, "False", waits->wait_reason, waits->wait_message);
		else
			sc_emit_pod(ctx, p, "False", "Unschedulable", msg);
		p->memo.gated = gated;
	}
	for (size_t i = 0; i < g->children.n; i++)
		tell_pending(ctx, g->children.v[i], depth + 1, msg, gated);
}

static void mark_invalid(struct sc_ctx *ctx, struct sc_group *g, int depth, const char *msg)
{
	if (depth > PK_HIERARCHY_WALK_MAX)
		return;
	sc_emit_group(ctx, g, "False", "Invalid", msg);
	for (size_t i = 0; i < g->children.n; i++)
		mark_invalid(ctx, g->children.v[i], depth + 1, msg);
}

/* ---- telling a gated gang's pods, later --------------------------------------------- */

/* Remember to tell root's pods at time at (once per gated spell). */
static void tell_later(struct pk_sched *s, const struct sc_group *root, int64_t at)
{
	char *k = malloc(strlen(root->key) + 2);

	if (!k)
		return;
	k[0] = root->implicit ? 'I' : root->composite ? 'C' : 'P'; /* I: a pod's own root */
	strcpy(k + 1, root->key);
	if (s->tell_keys.n == s->tell_cap) {
		size_t cap = s->tell_cap ? s->tell_cap * 2 : 16;
		int64_t *v = realloc(s->tell_at, cap * sizeof(*v));

		if (!v) {
			free(k);
			return;
		}
		s->tell_at = v;
		s->tell_cap = cap;
	}
	if (sc_vec_push(&s->tell_keys, k) < 0) {
		free(k);
		return;
	}
	s->tell_at[s->tell_keys.n - 1] = at;
}

/* The message of a root PreEnqueue holds back, or false when it is admissible. */
static bool gated_message(struct sc_group *root, bool wait, char *msg, size_t len)
{
	struct sc_buf why = {0};
	bool gated;

	sc_group_note_gated(root, wait, 0);
	gated = !sc_group_admissible(root, 0, &why);

	if (gated)
		snprintf(msg, len, "waiting for gang members: %s",
			 why.s ? why.s : "not admissible");
	sc_buf_free(&why);
	return gated;
}

/*
 * Tell the roots whose wait is over and that are still gated.  The wait is
 * gated_tell_ms without a change to the root's tree: a gang whose members
 * are still arriving is being created, not stuck, and is told nothing (as
 * kube-scheduler writes nothing for a pod PreEnqueue holds back).
 */
static void tell_due(struct sc_ctx *ctx, int64_t now)
{
	struct pk_sched *s = ctx->s;
	size_t keep = 0;

	for (size_t i = 0; i < s->tell_keys.n; i++) {
		char *k = s->tell_keys.v[i];
		int64_t at = s->tell_at[i];

		if (at > now) {
			s->tell_keys.v[keep] = k;
			s->tell_at[keep++] = at;
			continue;
		}
		struct sc_pod *pod = k[0] == 'I' ? pk_map_get(&s->forest.pods, k + 1) : NULL;
		struct sc_group *g = k[0] == 'I'
					 ? (pod ? pod->group : NULL)
					 : sc_forest_group(&s->forest, k + 1, k[0] == 'C', false);
		char msg[768];

		if (g && g->q && g->q->is_root && g->q->gated && g->q->dirty && !g->q->gated_told)
			g->q->gated_since = now; /* changed since its last pick: still filling */
		if (g && g->q && g->q->is_root && g->q->gated && !g->q->gated_told &&
		    now - g->q->gated_since < s->opts.gated_tell_ms) {
			s->tell_keys.v[keep] = k; /* a member came meanwhile: wait on */
			s->tell_at[keep++] = g->q->gated_since + s->opts.gated_tell_ms;
			continue;
		}
		if (g && g->q && g->q->is_root && g->q->gated &&
		    gated_message(g, s->opts.gated_gangs_wait, msg, sizeof(msg))) {
			tell_pending(ctx, g, 0, msg, true);
			g->q->gated_told = true;
		}
		free(k);
	}
	s->tell_keys.n = keep;
}

#define SC_REPORT_DEPTH 64 /* deepest subtree walked when reporting unrooted groups */

static void report_unrooted_pod(struct sc_ctx *ctx, struct sc_pod *p)
{
	char why[256], msg[320];

	if (p->node >= 0 || p->node_name || p->deleting || !p->group || p->group->implicit)
		return;
	if (sc_group_root(p->group, why, sizeof(why)))
		return;
	snprintf(msg, sizeof(msg), "waiting for the group hierarchy: %s", why);
	sc_emit_pod(ctx, p, "False", "Unschedulable", msg);
}

/*
 * A changed group without a root: it (when on a cycle) and everything below
 * it is reported; a group with a root has a rooted subtree.  seen stops the
 * walk going round a cycle.
 */
static void report_unrooted_group(struct sc_ctx *ctx, struct sc_group *g, int depth,
				  struct pk_map *seen)
{
	char why[256];

	if (depth > SC_REPORT_DEPTH || pk_map_get(seen, g->key) == g ||
	    sc_group_root(g, why, sizeof(why)))
		return;
	pk_map_put(seen, g->key, g);
	if (g->present && strncmp(why, "cycle", 5) == 0) {
		char msg[320];

		snprintf(msg, sizeof(msg), "invalid hierarchy: %s", why);
		sc_emit_group(ctx, g, "False", "Invalid", msg);
	}
	for (size_t i = 0; i < g->children.n; i++)
		report_unrooted_group(ctx, g->children.v[i], depth + 1, seen);
	for (size_t i = 0; i < g->pods.n; i++)
		report_unrooted_pod(ctx, g->pods.v[i]);
}

/*
 * Groups and pods whose hierarchy has no root: say so, once.  Only what was
 * added or unlinked since the last report is looked at (and what hangs
 * below it): a hierarchy loses its root only through one of those.
 */
static void report_unrooted(struct sc_ctx *ctx)
{
	struct sc_forest *f = &ctx->s->forest;
	struct pk_map seen = {0};

	for (size_t i = 0; i < f->unrooted_groups.n; i++) {
		const char *k = f->unrooted_groups.v[i];
		struct sc_group *g = sc_forest_group(f, k + 1, k[0] == 'C', false);

		if (g)
			report_unrooted_group(ctx, g, 0, &seen);
		free(f->unrooted_groups.v[i]);
	}
	f->unrooted_groups.n = 0;
	for (size_t i = 0; i < f->unrooted_pods.n; i++) {
		const char *k = f->unrooted_pods.v[i];
		struct sc_pod *p = pk_map_get(&f->pods, k + 1);

		if (p)
			report_unrooted_pod(ctx, p);
		free(f->unrooted_pods.v[i]);
	}
	f->unrooted_pods.n = 0;
	pk_map_free(&seen);
}

static const char *failed_why(struct sc_ctx *ctx, const struct sc_group *failed)
{
	const char *w = sc_group_why(ctx->snap, (struct sc_group *)failed);

	return w ? w : sc_status_to_string(failed->eval.status);
}

/* Append s (short, fixed text) at w; returns the new end. */
static char *put_str(char *w, const char *s)
{
	size_t n = strlen(s);

	memcpy(w, s, n + 1);
	return w + n;
}

/* Append the decimal form of v at w (at most 11 characters). */
static char *put_int(char *w, int v)
{
	char tmp[12];
	int n = 0;
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;

	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*w++ = '-';
	while (n)
		*w++ = tmp[--n];
	*w = '\0';
	return w;
}

/*
 * A committed placement with a topology key: its domain becomes the group's
 * home, and a repair is told (condition <Kind>Repaired, reason
 * RepairedInPlace or ReplacedWhole, and the statistic).
 */
static void report_pick(struct sc_ctx *ctx, struct sc_group *g)
{
	char msg[768];
	char *home;

	if (g->pick_stamp != ctx->stamp || !g->pick)
		return;
	home = g->home ? g->home : g->spec.home;
	if (g->pick_repair == SC_REPAIR_IN_PLACE)
		snprintf(msg, sizeof(msg), "placed again in its home domain %s=%s",
			 g->spec.topo_key, g->pick);
	else if (g->pick_repair == SC_REPAIR_WHOLE)
		snprintf(msg, sizeof(msg),
			 "its home domain %s=%s had no room: placed whole in %s=%s",
			 g->spec.topo_key, home ? home : "", g->spec.topo_key, g->pick);
	if (g->pick_repair != SC_REPAIR_NONE && g->present && !g->implicit) {
		bool in_place = g->pick_repair == SC_REPAIR_IN_PLACE;

		sc_stat(ctx, in_place ? PK_SCHED_STAT_REPAIR_IN_PLACE : PK_SCHED_STAT_REPAIR_WHOLE,
			1);
		sc_result_condition(
		    ctx->res, g->composite ? PK_KIND_COMPOSITE_POD_GROUP : PK_KIND_POD_GROUP, g->ns,
		    g->name, g->composite ? "CompositePodGroupRepaired" : "PodGroupRepaired",
		    "True", in_place ? "RepairedInPlace" : "ReplacedWhole", msg);
	}
	free(g->home);
	g->home = g->pick;
	g->pick = NULL;
	g->pick_repair = SC_REPAIR_NONE;
}

/*
 * Conditions after a cycle: evaluated groups report their own status, or the
 * nearest failed ancestor's; pending pods name the nearest failed group.
 */
/* The pod's last failure as placement told it (a refusal when it has none), or dflt. */
static const char *pod_why_or(struct sc_ctx *ctx, struct sc_pod *p, const char *dflt)
{
	const char *why = sc_pod_why(ctx->snap, p);

	if (!why)
		return dflt;
	return p->cycle.fail && p->cycle.fail->why ? p->cycle.fail->why : why;
}

static void report(struct sc_ctx *ctx, struct sc_group *g, const struct sc_group *failed,
		   bool committed, int depth)
{
	char msg[1024];
	bool own_fail = false;

	if (depth > PK_HIERARCHY_WALK_MAX)
		return;
	if (g->eval.stamp == ctx->stamp && !failed && g->eval.status == SC_SUCCESS && committed) {
		/* "%d of %s %d %s scheduled", without printf (once per cycle) */
		char *w = msg;

		w = put_int(w, g->eval.S);
		w = put_str(w, " of ");
		w = put_str(w, g->spec.policy == PK_POLICY_GANG
				   ? (g->composite ? "minGroupCount" : "minCount")
				   : "required");
		w = put_str(w, " ");
		w = put_int(w, g->eval.M);
		w = put_str(w, g->composite ? " child groups" : " pods");
		put_str(w, " scheduled");
		sc_emit_group(ctx, g, "True", "Scheduled", msg);
		g->scheduled = !g->implicit;
		report_pick(ctx, g);
	} else if (g->eval.stamp == ctx->stamp && g->eval.status != SC_SUCCESS) {
		snprintf(msg, sizeof(msg), "%s: %s", sc_status_to_string(g->eval.status),
			 sc_group_why(ctx->snap, g) ? g->eval.why : "not placed");
		sc_emit_group(ctx, g, "False", "Unschedulable", msg);
		own_fail = true;
	} else if (failed) {
		snprintf(msg, sizeof(msg), "ancestor %s %s failed: %s", sc_group_kind(failed),
			 failed->key, failed_why(ctx, failed));
		sc_emit_group(ctx, g, "False", "Unschedulable", msg);
	}
	if (own_fail)
		failed = g;
	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];
		const struct sc_plugin_ops *waits;

		if (p->node >= 0 || p->node_name || p->deleting)
			continue;
		if ((waits = sc_cons_pre_enqueue(p, NULL))) {
			sc_emit_pod(ctx, p, "False", waits->wait_reason, waits->wait_message);
			continue;
		}
		if (failed)
			snprintf(msg, sizeof(msg), "%s %s: %s", sc_group_kind(failed), failed->key,
				 failed_why(ctx, failed));
		else
			snprintf(msg, sizeof(msg), "%s %s placed without this pod: %s",
				 sc_group_kind(g), g->key, pod_why_or(ctx, p, "no node fits"));
		sc_emit_pod(ctx, p, "False", "Unschedulable", msg);
	}
	for (size_t i = 0; i < g->children.n; i++)
		report(ctx, g->children.v[i], failed, committed, depth + 1);
}

static int commit(struct sc_ctx *ctx, const struct sc_placement *pl, size_t n)
{
	struct pk_sched *s = ctx->s;

	for (size_t i = 0; i < n; i++) {
		struct sc_pod *p = pl[i].pod;
		const char *node = s->snap.nodes[pl[i].node]->name;
		size_t len = strlen(node);
		char msg[320];
		int r;

		sc_victim_floor_note(s, p);
		/* the snapshot already holds the binding; a copy of the pod's own
		 * (cheaper than interning, on the binding path; a restart shares it) */
		sc_pod_node_name_drop(&s->forest, p);
		p->node_name = strdup(node);
		if (!p->node_name)
			return -ENOMEM;
		p->node_name_own = true;
		if (len > sizeof(msg) - 10)
			len = sizeof(msg) - 10;
		memcpy(msg, "bound to ", 9);
		memcpy(msg + 9, node, len);
		msg[9 + len] = '\0';
		/* what the plugins write before a binding goes first (PreBind) */
		if ((r = sc_cons_pre_bind(ctx, p, node)) < 0 ||
		    (r = sc_result_bind(ctx->res, ctx->snap, p, node)) < 0 ||
		    (r = sc_emit_pod(ctx, p, "True", "Scheduled", msg)) < 0)
			return r;
	}
	/* No s->gen bump: capacity taken never helps a root that failed for capacity. */
	ctx->res->bound += n;
	return 0;
}

static int process_root(struct sc_ctx *ctx, struct sc_group *root, int64_t now)
{
	struct pk_sched *s = ctx->s;
	bool was_scheduled = root->scheduled;
	struct sc_placement *pl;
	size_t npl = 0;
	enum sc_status st;
	int r = 0;

	sc_trace(ctx, "cycle %llu: root %s %s (priority %d), strategy %s",
		 (unsigned long long)s->cycle, sc_group_kind(root), root->key,
		 sc_root_priority(s, root), s->ops->name);
	ctx->depth = 1;
	ctx->placed = 0;
	st = s->ops->place_root(ctx, root);
	ctx->depth = 0;
	if (s->snap.nlog + 1 > s->pl_cap) {
		size_t cap = (s->snap.nlog + 1) * 2;

		pl = realloc(s->pl, cap * sizeof(*pl));
		if (!pl) {
			sc_snapshot_revert(&s->snap, 0);
			return -ENOMEM;
		}
		s->pl = pl;
		s->pl_cap = cap;
	}
	pl = s->pl;
	for (size_t i = 0; i < s->snap.nlog; i++)
		if (s->snap.log[i].op == SC_UNDO_ASSUME)
			pl[npl++] = (struct sc_placement){s->snap.log[i].pod, s->snap.log[i].node};
	uint64_t gen0 = s->gen;
	bool preempt = st == SC_UNSCHEDULABLE || (st == SC_SUCCESS && npl == 0 && was_scheduled);

	/* A placement that stands is committed where it is; anything else is undone. */
	if (st == SC_SUCCESS && !preempt)
		sc_snapshot_commit(&s->snap);
	else
		sc_snapshot_revert(&s->snap, 0);
	if (s->opts.check && sc_snapshot_check(&s->snap, &s->forest.all_pods, true, s->check_why,
					       sizeof(s->check_why)) < 0)
		return -EUCLEAN;

	sc_trace(ctx, "root %s %s: %s, %zu pods placed%s", sc_group_kind(root), root->key,
		 sc_status_to_string(st), npl, preempt ? ", preemption" : "");
	if (st == SC_SUCCESS && !preempt) {
		r = commit(ctx, pl, npl);
		ctx->res->outcome = PK_SCHED_SCHEDULED;
		report(ctx, root, NULL, true, 0);
		root->q->attempts = 0;
		root->q->backoff_until = 0;
	} else {
		ctx->res->outcome =
		    st == SC_UNRESOLVABLE ? PK_SCHED_UNRESOLVABLE : PK_SCHED_UNSCHEDULABLE;
		report(ctx, root, NULL, false, 0);
		root->q->attempts++;
		root->q->backoff_until = now + sc_backoff_ms(s, root->q->attempts);
	}
	root->q->tried_gen = gen0;
	root->q->tried_at = now;
	if (st == SC_SUCCESS && !preempt && npl)
		root->q->dirty = true; /* leftovers (a basic group's extra pods) get another try */
	if (r == 0 && preempt) {
		uint64_t before = s->gen;

		r = sc_preempt(ctx, root);
		if (r == 0 && s->gen != before) {
			root->q->backoff_until =
			    0; /* the preemptor goes first once victims are gone */
			root->q->tried_gen = before;
		} else {
			root->q->tried_gen = s->gen;
		}
	}
	return r;
}

/* "Kind ns/name" of the root a cycle processes, for the result. */
static void name_root(struct pk_sched_result *res, const struct sc_group *root)
{
	const char *kind = sc_group_kind(root);
	size_t kl = strlen(kind), rl = strlen(root->key);

	free(res->root);
	res->root = malloc(kl + rl + 2);
	if (res->root) {
		memcpy(res->root, kind, kl);
		res->root[kl] = ' ';
		memcpy(res->root + kl + 1, root->key, rl + 1);
	}
}

/*
 * Build the topology partitions a placement reads (every topology key a
 * group names) while a gang waits for its members, so that the placement
 * after the last member arrives finds them built (on 16,384 hosts about
 * 40k instructions a host and key) instead of building them then.
 */
static void prepare_parts(struct pk_sched *s)
{
	if (s->snap.nlog)
		return;
	for (size_t i = 0; i < s->topo_keys.n; i++)
		(void)sc_snapshot_part(&s->snap, s->topo_keys.v[i]);
}

/*
 * The gang admission held root back (why: what it waits for): its pods are
 * told, once it has waited gated_tell_ms with its tree unchanged (changed:
 * it changed since its last pick), and it goes back to the queue.
 */
static void hold_back(struct sc_ctx *ctx, struct sc_group *root, const char *why, bool changed,
		      int64_t now_ms)
{
	struct pk_sched *s = ctx->s;
	char msg[768];

	snprintf(msg, sizeof(msg), "waiting for gang members: %s", why ? why : "not admissible");
	sc_trace(ctx, "root %s %s gated by PreEnqueue: %s", sc_group_kind(root), root->key,
		 why ? why : "");
	if (s->opts.stat) {
		char name[600];

		snprintf(name, sizeof(name), "%s %s", sc_group_kind(root), root->key);
		sc_stat_line(ctx, PK_SCHED_STAT_ROOT_GATED, 0, name);
	}
	if (!root->q->gated) {
		root->q->gated = true;
		root->q->gated_told = false;
		root->q->gated_since = now_ms;
		if (s->opts.gated_tell_ms > 0)
			tell_later(s, root, now_ms + s->opts.gated_tell_ms);
	} else if (changed && !root->q->gated_told) {
		root->q->gated_since = now_ms; /* a member came: the wait starts again */
	}
	if (now_ms - root->q->gated_since >= s->opts.gated_tell_ms) {
		tell_pending(ctx, root, 0, msg, true);
		root->q->gated_told = true;
	}
	prepare_parts(s);
	root->q->parked_invalid = true;
	sc_queue_place(s, root, now_ms);
}

int pk_sched_cycle(struct pk_sched *s, int64_t now_ms, struct pk_sched_result **ret)
{
	struct pk_sched_result *res = calloc(1, sizeof(*res));
	struct sc_ctx ctx = {.s = s, .snap = &s->snap, .res = res};
	bool gated = false, changed;
	int r = 0;

	if (!res)
		return -ENOMEM;
	if (!ret) {
		free(res);
		return -EINVAL;
	}
	s->cycle++;
	s->check_why[0] = '\0';
	ctx.stamp = s->cycle;
	ctx.tracing = s->opts.explain || s->opts.trace;
	if (s->forest_changed) {
		report_unrooted(&ctx);
		s->forest_changed = false;
	}
	if (s->tell_keys.n)
		tell_due(&ctx, now_ms);
	if ((r = sc_cons_cycle(s, res)) < 0) {
		pk_sched_result_free(res);
		return r;
	}
	for (;;) {
		int64_t wait = 0;
		struct sc_group *root = sc_queue_pick(s, now_ms, &wait);
		struct sc_buf why = {0};
		char invalid[512];

		if (!root) {
			res->outcome = gated ? PK_SCHED_GATED : PK_SCHED_IDLE;
			for (size_t i = 0; i < s->tell_keys.n; i++)
				if (!wait || s->tell_at[i] < wait)
					wait = s->tell_at[i];
			res->has_retry = wait > 0;
			res->retry_at_ms = wait;
			break;
		}
		changed = root->q->dirty;
		root->q->dirty = false;
		root->q->tried_gen = s->gen;
		name_root(res, root);
		sc_group_note_gated(root, s->opts.gated_gangs_wait, 0);
		if (!sc_group_admissible(root, 0, &why)) {
			hold_back(&ctx, root, why.s, changed, now_ms);
			gated = true;
			sc_buf_free(&why);
			continue;
		}
		sc_buf_free(&why);
		root->q->gated = false;
		if (sc_hierarchy_validate(s, root, invalid, sizeof(invalid)) < 0) {
			char msg[600];

			snprintf(msg, sizeof(msg), "invalid hierarchy: %s", invalid);
			sc_trace(&ctx, "root %s %s: %s", sc_group_kind(root), root->key, msg);
			mark_invalid(&ctx, root, 0, msg);
			tell_pending(&ctx, root, 0, msg, false);
			root->q->parked_invalid = true;
			res->outcome = PK_SCHED_INVALID;
			sc_queue_place(s, root, now_ms);
			break;
		}
		root->q->parked_invalid = false;
		sc_queue_checked(s, root);
		if (changed && s->opts.quiet_failures && !ctx.tracing && !s->opts.stat &&
		    sc_queue_cannot_place(s, root)) {
			res->outcome = PK_SCHED_UNSCHEDULABLE; /* its pods are told nothing */
			sc_queue_failed(s, root, now_ms);
		} else {
			r = process_root(&ctx, root, now_ms);
		}
		sc_queue_place(s, root, now_ms);
		break;
	}
	if (r == 0 && s->opts.check)
		r = pk_sched_check(s, s->check_why, sizeof(s->check_why));
	if (r < 0) {
		pk_sched_result_free(res);
		return r;
	}
	*ret = res;
	return 0;
}
