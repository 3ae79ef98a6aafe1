/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.c — the actions a cycle hands back (bind, condition, preempt), and
 * the condition memo that writes each object's condition only when it
 * changes, so repeated cycles over a parked hierarchy stay silent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/internal.h"

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

static void action_clear(struct pk_sched_action *a)
{
	free(a->ns);
	free(a->name);
	free(a->node);
	free(a->type);
	free(a->status);
	free(a->reason);
	free(a->message);
}

void pk_sched_result_free(struct pk_sched_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->nactions; i++)
		action_clear(&res->actions[i]);
	free(res->actions);
	free(res->root);
	free(res);
}

static int finish(struct pk_sched_result *res, struct pk_sched_action *a, bool ok)
{
	if (ok)
		return 0;
	action_clear(a);
	res->nactions--;
	return -ENOMEM;
}

int sc_result_condition(struct pk_sched_result *res, enum pk_kind kind, const char *ns,
			const char *name, const char *type, const char *status, const char *reason,
			const char *message)
{
	struct pk_sched_action *a = push(res);

	if (!a)
		return -ENOMEM;
	a->action = PK_SCHED_CONDITION;
	a->kind = kind;
	a->ns = sc_strdup(ns);
	a->name = sc_strdup(name);
	a->type = sc_strdup(type);
	a->status = sc_strdup(status);
	a->reason = sc_strdup(reason);
	a->message = strdup(message ? message : "");
	return finish(res, a, a->ns && a->name && a->type && a->status && a->reason && a->message);
}

int sc_result_bind(struct pk_sched_result *res, const struct sc_pod *pod, const char *node)
{
	struct pk_sched_action *a = push(res);

	if (!a)
		return -ENOMEM;
	a->action = PK_SCHED_BIND;
	a->kind = PK_KIND_POD;
	a->ns = strdup(pod->ns);
	a->name = strdup(pod->name);
	a->node = strdup(node);
	return finish(res, a, a->ns && a->name && a->node);
}

int sc_result_preempt(struct pk_sched_result *res, const struct sc_pod *pod)
{
	struct pk_sched_action *a = push(res);

	if (!a)
		return -ENOMEM;
	a->action = PK_SCHED_PREEMPT;
	a->kind = PK_KIND_POD;
	a->ns = strdup(pod->ns);
	a->name = strdup(pod->name);
	return finish(res, a, a->ns && a->name);
}

/* True when the memo changed (the condition must be written). */
static bool memo_update(struct sc_cond_memo *memo, const char *status, const char *reason,
			const char *message)
{
	char *text = NULL;

	if (asprintf(&text, "%s|%s|%s", status, reason, message ? message : "") < 0)
		return true;
	if (memo->text && strcmp(memo->text, text) == 0) {
		free(text);
		return false;
	}
	free(memo->text);
	memo->text = text;
	return true;
}

int sc_emit_pod(struct sc_ctx *ctx, struct sc_pod *pod, const char *status, const char *reason,
		const char *message)
{
	if (!memo_update(&pod->memo, status, reason, message))
		return 0;
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
