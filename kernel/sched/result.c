/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.c — the actions a cycle hands back (bind, condition, preempt), and
 * the condition memo that writes each object's condition only when it
 * changes, so repeated cycles over a parked hierarchy stay silent.
 *
 * The actions' strings live in blocks owned by the result (res->strings, a
 * chain of 4 KiB blocks), so a cycle's bindings and conditions cost a
 * malloc or two in all; the memo is a fingerprint of the last condition
 * written (struct sc_cond_memo, sched-forest.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-result.h"
#include "kernel/sched/sched-snapshot.h"

static struct pk_sched_action *push(struct pk_sched_result *res)
{
	if (res->nactions == res->cap) {
		size_t cap = res->cap ? res->cap * 2 : 16;
		struct pk_sched_action *v = realloc(res->actions, cap * sizeof(*v));

		if (!v)
			return NULL;
		res->actions = v;
		res->cap = cap;
	}
	struct pk_sched_action *a = &res->actions[res->nactions++];

	memset(a, 0, sizeof(*a));
	return a;
}

struct strblk {
	struct strblk *next;
	size_t used, cap;
	char data[];
};

/* n bytes from the result's string blocks, or NULL. */
static char *str_alloc(struct pk_sched_result *res, size_t n)
{
	struct strblk *b = res->strings;

	if (!b || b->cap - b->used < n) {
		size_t cap = n > 4096 - sizeof(*b) ? n : 4096 - sizeof(*b);

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = res->strings;
		b->used = 0;
		b->cap = cap;
		res->strings = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

/*
 * Copy src[0..n) (NULL stays NULL) into the result's strings; fields[i]
 * receives the copy.  -ENOMEM.
 */
static int pack(struct pk_sched_result *res, char **fields[], const char *src[], size_t n)
{
	size_t len[8], total = 0;
	char *blk, *w;

	for (size_t i = 0; i < n; i++) {
		len[i] = src[i] ? strlen(src[i]) + 1 : 0;
		total += len[i];
	}
	blk = str_alloc(res, total + 1);
	if (!blk)
		return -ENOMEM;
	w = blk;
	for (size_t i = 0; i < n; i++) {
		if (!src[i]) {
			*fields[i] = NULL;
			continue;
		}
		memcpy(w, src[i], len[i]);
		*fields[i] = w;
		w += len[i];
	}
	return 0;
}

void pk_sched_result_free(struct pk_sched_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->nactions; i++)
		json_decref(res->actions[i].claim);
	for (struct strblk *b = res->strings, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(res->actions);
	free(res->root);
	free(res);
}

static int finish(struct pk_sched_result *res, struct pk_sched_action *a, int r)
{
	if (r == 0)
		return 0;
	res->nactions--;
	memset(a, 0, sizeof(*a));
	return r;
}

int sc_result_condition(struct pk_sched_result *res, enum pk_kind kind, const char *ns,
			const char *name, const char *type, const char *status, const char *reason,
			const char *message)
{
	struct pk_sched_action *a = push(res);

	if (!a)
		return -ENOMEM;
	char **fields[] = {&a->ns, &a->name, &a->type, &a->status, &a->reason, &a->message};
	const char *src[] = {ns ? ns : "", name, type, status, reason, message ? message : ""};

	a->action = PK_SCHED_CONDITION;
	a->kind = pk_type_of(kind);
	return finish(res, a, pack(res, fields, src, 6));
}

int sc_result_bind(struct pk_sched_result *res, const struct sc_snapshot *snap,
		   const struct sc_pod *pod, const char *node)
{
	struct pk_sched_action *a = push(res);
	char coords[48], worker[16];
	bool slice =
	    sc_snapshot_bind_annotations(snap, pod, coords, sizeof(coords), worker, sizeof(worker));

	if (!a)
		return -ENOMEM;
	char **fields[] = {&a->ns,
			   &a->name,
			   &a->node,
			   &a->annotations[0].key,
			   &a->annotations[0].value,
			   &a->annotations[1].key,
			   &a->annotations[1].value};
	const char *src[] = {pod->ns ? pod->ns : "",
			     pod->name ? pod->name : "",
			     node,
			     slice ? TOPO_ANN_SLICE_COORDS : NULL,
			     slice ? coords : NULL,
			     slice ? TOPO_ANN_WORKER_ID : NULL,
			     slice ? worker : NULL};

	a->action = PK_SCHED_BIND;
	a->kind = &pk_type_pod;
	return finish(res, a, pack(res, fields, src, 7));
}

int sc_result_volume_claim(struct pk_sched_result *res, const char *ns, const char *name,
			   const char *volume, const char *node)
{
	struct pk_sched_action *a = push(res);

	if (!a)
		return -ENOMEM;
	char **fields[] = {&a->ns,
			   &a->name,
			   &a->volume,
			   &a->node,
			   &a->annotations[0].key,
			   &a->annotations[0].value};
	const char *src[] = {ns,  name, volume, node, node ? PK_SCHED_ANN_SELECTED_NODE : NULL,
			     node};

	a->action = PK_SCHED_VOLUME_CLAIM;
	a->kind = &pk_type_persistent_volume_claim;
	return finish(res, a, pack(res, fields, src, 6));
}

int sc_result_preempt(struct pk_sched_result *res, const struct sc_pod *pod)
{
	struct pk_sched_action *a = push(res);

	if (!a)
		return -ENOMEM;
	char **fields[] = {&a->ns, &a->name};
	const char *src[] = {pod->ns ? pod->ns : "", pod->name ? pod->name : ""};

	a->action = PK_SCHED_PREEMPT;
	a->kind = &pk_type_pod;
	return finish(res, a, pack(res, fields, src, 2));
}

int sc_result_claim(struct pk_sched_result *res, const char *ns, const char *name, json_t *status)
{
	struct pk_sched_action *a = push(res);

	if (!a)
		return -ENOMEM;
	char **fields[] = {&a->ns, &a->name};
	const char *src[] = {ns ? ns : "", name};
	int r;

	a->action = PK_SCHED_CLAIM;
	a->kind = &pk_type_resource_claim;
	r = finish(res, a, pack(res, fields, src, 2));
	if (r == 0)
		a->claim = json_incref(status);
	return r;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	return pk_fnv1a_byte(pk_fnv1a(h, s), 0xff); /* terminator: "a","bc" != "ab","c" */
}

/* True when the memo changed (the condition must be written). */
static bool memo_update(struct sc_cond_memo *memo, const char *status, const char *reason,
			const char *message)
{
	uint64_t h = fnv(fnv(fnv(PK_FNV1A_INIT, status), reason), message ? message : "") &
		     (UINT64_MAX >> 1); /* the memo keeps 63 bits */

	if (!h)
		h = 1;
	if (memo->fp == h)
		return false;
	memo->fp = h;
	return true;
}

int sc_emit_pod(struct sc_ctx *ctx, struct sc_pod *pod, const char *status, const char *reason,
		const char *message)
{
	if (!memo_update(&pod->memo, status, reason, message))
		return 0;
	pod->memo.gated = false;
	return sc_result_condition(ctx->res, PK_KIND_POD, pod->ns, pod->name, "PodScheduled",
				   status, reason, message);
}

int sc_emit_group(struct sc_ctx *ctx, struct sc_group *g, const char *status, const char *reason,
		  const char *message)
{
	if (g->implicit || !g->present)
		return 0;
	if (g->scheduled && strcmp(status, "True") != 0)
		return 0; /* InitiallyScheduled True is terminal */
	if (!memo_update(&g->memo, status, reason, message))
		return 0;
	return sc_result_condition(
	    ctx->res, g->composite ? PK_KIND_COMPOSITE_POD_GROUP : PK_KIND_POD_GROUP, g->ns,
	    g->name,
	    g->composite ? "CompositePodGroupInitiallyScheduled" : "PodGroupInitiallyScheduled",
	    status, reason, message);
}
