/* SPDX-License-Identifier: Apache-2.0 */
/*
 * budgets.c — the status of PodDisruptionBudgets (policy/v1), as upstream's
 * disruption controller keeps it: after a pod or a budget of a namespace
 * changes, each budget of that namespace is counted again over its pods
 * (kernel/api's arithmetic, the one the eviction subresource counts with)
 * and its status written when it differs.  status.disruptedPods forgets a pod
 * once it is gone or being deleted, or after two minutes (upstream's
 * DeletionTimeout: an eviction granted whose pod never went).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/controllers/controllers-internal.h"

#define DISRUPTED_TTL_S 120

/*
 * Keep the count of namespace ns's budgets (gone: the budget name was
 * deleted), so that a pod's change in a namespace without budgets costs no
 * listing of its budgets.
 */
static int count_budget(struct pk_ctl *ctl, const char *ns, const char *name, bool gone)
{
	intptr_t c = (intptr_t)pk_map_get(&ctl->budget_count, ns);
	char key[640];

	snprintf(key, sizeof(key), "%s/%s", ns, name ? name : "");
	if (gone == !pk_map_get(&ctl->budget_keys, key))
		return 0; /* a change of a budget counted, or a deletion of one never seen */
	if (gone) {
		pk_map_del(&ctl->budget_keys, key);
		if (c <= 1) {
			pk_map_del(&ctl->budget_count, ns);
			return 0;
		}
		return pk_map_put(&ctl->budget_count, ns, (void *)(c - 1));
	}
	if (pk_map_put(&ctl->budget_keys, key, (void *)1) < 0)
		return -ENOMEM;
	if (pk_map_put(&ctl->budget_count, ns, (void *)(c + 1)) < 0) {
		pk_map_del(&ctl->budget_keys, key);
		return -ENOMEM;
	}
	return 0;
}

int ctl_budgets_note(struct pk_ctl *ctl, const struct pk_source_event *ev)
{
	enum pk_kind k = ev->kind ? ev->kind->pk : PK_KIND_UNKNOWN;
	const char *ns = ev->object ? pk_namespace(ev->object) : NULL;

	if ((k != PK_KIND_POD && k != PK_KIND_POD_DISRUPTION_BUDGET) || !ns)
		return 0;
	if (k == PK_KIND_POD_DISRUPTION_BUDGET) {
		int r = count_budget(ctl, ns, pk_name(ev->object), ev->type == PK_EVENT_DELETED);

		if (r < 0 || ev->type == PK_EVENT_DELETED)
			return r;
	} else if (!pk_map_get(&ctl->budget_count, ns)) {
		return 0; /* no budget selects this pod: nothing to count */
	}
	return pk_map_get(&ctl->budget_ns, ns) ? 0 : pk_map_put(&ctl->budget_ns, ns, (void *)1);
}

/* The pod named name in pods (a namespace's), or NULL. */
static const json_t *pod_named(const json_t *pods, const char *name)
{
	json_t *p;
	size_t i;

	json_array_foreach(pods, i, p) if (strcmp(pk_name(p), name) == 0) return p;
	return NULL;
}

/* disruptedPods without the pods gone, being deleted or granted too long ago. */
static json_t *disrupted_kept(const json_t *pdb, const json_t *pods, int64_t now)
{
	json_t *old = pk_get(pdb, "status.disruptedPods"), *kept = json_object(), *v;
	const char *name;

	json_object_foreach(old, name, v)
	{
		const json_t *p = pod_named(pods, name);
		int64_t at = 0;

		if (!p || pk_get(p, "metadata.deletionTimestamp") ||
		    pk_time_parse(json_string_value(v) ?: "", &at) < 0 ||
		    now - at > DISRUPTED_TTL_S)
			continue;
		json_object_set(kept, name, v);
	}
	return kept;
}

static bool same_status(const json_t *a, const json_t *b)
{
	static const char *const keys[] = {"expectedPods",	 "currentHealthy",
					   "desiredHealthy",	 "disruptionsAllowed",
					   "observedGeneration", "disruptedPods"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *x = json_object_get(a, keys[i]), *y = json_object_get(b, keys[i]);

		if (!x || !y || !json_equal(x, y))
			return false;
	}
	return true;
}

/* Count one budget and write its status if it changed. */
static int budget_sync(struct pk_ctl *ctl, const json_t *pdb, const json_t *pods, int64_t now)
{
	json_t *kept = disrupted_kept(pdb, pods, now), *probe, *st;
	struct pk_budget b;
	int r;

	if (!kept)
		return -ENOMEM;
	/* count with the pruned disruptedPods */
	probe = json_pack("{s:O,s:O,s:{s:O}}", "metadata", pk_get(pdb, "metadata"), "spec",
			  pk_get(pdb, "spec") ?: json_null(), "status", "disruptedPods", kept);
	r = probe ? pk_budget_count(probe, pods, &b) : -ENOMEM;
	st = r == 0 ? pk_budget_status(pdb, &b, kept) : NULL;
	if (r == 0 && st && !same_status(st, pk_get(pdb, "status"))) {
		struct pk_write_ref ref = ctl_ref_of(&pk_type_pod_disruption_budget, pdb);

		r = ctl_status(ctl, &ref, st, NULL);
		if (r == 0)
			ctl_log(ctl, 2, "poddisruptionbudget %s/%s: %d of %d healthy, %d allowed",
				pk_namespace(pdb), pk_name(pdb), b.current_healthy, b.expected,
				b.allowed);
	}
	json_decref(st);
	json_decref(probe);
	json_decref(kept);
	return r;
}

/* Every budget of namespace ns. */
static void sync_namespace(struct pk_ctl *ctl, const char *ns, int64_t now)
{
	json_t *budgets = NULL, *pods = NULL, *b;
	size_t i;

	if (pk_store_list(ctl->store, &pk_type_pod_disruption_budget, ns, NULL, &budgets, NULL,
			  NULL) < 0 ||
	    json_array_size(budgets) == 0 ||
	    pk_store_list(ctl->store, &pk_type_pod, ns, NULL, &pods, NULL, NULL) < 0) {
		json_decref(budgets);
		return;
	}
	json_array_foreach(budgets, i, b)
	{
		int r = budget_sync(ctl, b, pods, now);

		if (r < 0 && r != -PK_WRITE_ECONFLICT)
			ctl_log(ctl, 1, "poddisruptionbudget %s/%s: status: %s", ns, pk_name(b),
				strerror(-r));
	}
	json_decref(pods);
	json_decref(budgets);
}

void ctl_budgets_run(struct pk_ctl *ctl)
{
	int64_t now = (int64_t)time(NULL);
	const char *ns;

	for (size_t at = 0; pk_map_next(&ctl->budget_ns, &at, &ns, NULL);)
		sync_namespace(ctl, ns, now);
	pk_map_free(&ctl->budget_ns);
}

/* After the listing: every namespace with a budget. */
void ctl_budgets_note_all(struct pk_ctl *ctl)
{
	json_t *budgets = NULL, *b;
	size_t i;

	if (pk_store_list(ctl->store, &pk_type_pod_disruption_budget, NULL, NULL, &budgets, NULL,
			  NULL) < 0)
		return;
	pk_map_free(&ctl->budget_keys);
	pk_map_free(&ctl->budget_count);
	json_array_foreach(budgets, i, b)
	{
		if (count_budget(ctl, pk_namespace(b), pk_name(b), false) < 0)
			ctl_log(ctl, 1, "poddisruptionbudgets: out of memory counting them");
		if (!pk_map_get(&ctl->budget_ns, pk_namespace(b)))
			pk_map_put(&ctl->budget_ns, pk_namespace(b), (void *)1);
	}
	json_decref(budgets);
}
