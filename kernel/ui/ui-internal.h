/* SPDX-License-Identifier: Apache-2.0 */
/* ui-internal.h — what the placement map's modules share. */
#ifndef PODKERNEL_KERNEL_UI_INTERNAL_H
#define PODKERNEL_KERNEL_UI_INTERNAL_H

#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "kernel/lib/map.h"
#include "kernel/ui/ui.h"

/* A string, or JSON null for NULL (the documents' optional fields). */
static inline json_t *ui_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* ---- entries (placement_entries.c): what is kept of a Node and a Pod ---------- */

/* Every string of an entry but a pod's name is interned in the map's pool (pk_intern()). */
struct ui_res {
	const char *name; /* nvidia.com/gpu, cpu, ... */
	int64_t milli;
};

struct ui_label {
	const char *key, *value;
};

struct ui_node {
	unsigned refs; /* the map's and renders' (counted under the map's lock) */
	bool cordoned, unreachable;
	uint16_t nlabels, nalloc, ntaints;
	const char *name;
	struct ui_label *labels; /* the labels a person asks about, in key order */
	struct ui_res *alloc;	 /* status.allocatable, in name order */
	const char **taints;	 /* "key=value:Effect", but the cordon's and unreachable */
};

struct ui_pod {
	unsigned refs;
	bool done; /* Succeeded or Failed: holds nothing */
	uint16_t nreq;
	const char *ns;
	const char *node;		     /* while it holds it; else NULL */
	const char *group, *coords, *worker; /* or NULL */
	/* then, inline: what its containers request (nreq, in name order), and
	 * "ns/name", the key of the map's table (ui_pod_new()) */
};

/* A pod entry's requests, kept after it. */
static inline struct ui_res *ui_pod_req(const struct ui_pod *e)
{
	return (struct ui_res *)(e + 1);
}

/* A pod entry's "ns/name", kept after its requests. */
static inline const char *ui_pod_key(const struct ui_pod *e)
{
	return (const char *)(ui_pod_req(e) + e->nreq);
}

/* A pod entry's name: its key past the namespace (which holds no '/'). */
static inline const char *ui_pod_name(const struct ui_pod *e)
{
	return ui_pod_key(e) + strlen(e->ns) + 1;
}

/* A PodGroup or CompositePodGroup: its parent, slice shape and InitiallyScheduled condition. */
struct ui_group {
	unsigned refs;
	const char *kind; /* "PodGroup", "CompositePodGroup" (static) */
	const char *ns;	  /* interned, as every string but the key */
	const char *name; /* in key */
	const char *parent, *slice_shape, *status, *reason, *message; /* or NULL */
	char key[];						      /* "ns/name" */
};

/* An entry drawn from the object (one user), or NULL (ENOMEM). */
struct ui_node *ui_node_new(struct pk_map *pool, const json_t *node);
struct ui_pod *ui_pod_new(struct pk_map *pool, const json_t *pod);
struct ui_group *ui_group_new(struct pk_map *pool, enum pk_kind kind, const json_t *group);
bool ui_node_equal(const struct ui_node *a, const struct ui_node *b);
bool ui_pod_equal(const struct ui_pod *a, const struct ui_pod *b);
bool ui_group_equal(const struct ui_group *a, const struct ui_group *b);
/* Drop a user; the last one frees the entry and its strings.  Accept NULL. */
void ui_node_put(struct pk_map *pool, struct ui_node *e);
void ui_pod_put(struct pk_map *pool, struct ui_pod *e);
void ui_group_put(struct pk_map *pool, struct ui_group *e);
void ui_node_strings_drop(struct pk_map *pool, const struct ui_node *e);

const char *ui_node_label(const struct ui_node *n, const char *key);
int64_t ui_res_get(const struct ui_res *r, size_t n, const char *name);
json_t *ui_res_json(const struct ui_res *r, size_t n);
json_t *ui_node_labels_json(const struct ui_node *n);
json_t *ui_node_taints_json(const struct ui_node *n);

/* ---- layout (placement_layout.c), called with the map's data -------------------- */

/* The accelerators (extended resources: nvidia.com/gpu, ...) in res, milli-units. */
long long ui_accelerators(const json_t *res);
long long ui_res_accelerators(const struct ui_res *r, size_t n);

/*
 * What one render lays out: the entries, in name (nodes) and "ns/name"
 * (pods, groups) order, each held for the render.
 */
struct ui_view {
	struct ui_node **nodes;
	size_t nnodes;
	struct ui_pod **pods;
	size_t npods;
	struct ui_group **groups;
	size_t ngroups;
	json_t *queued; /* "Kind/ns/name" -> ui_queued_entry() */
	json_t *orders; /* "Kind/ns/name" -> queue-order annotation (Jobs, JobSets, pods) */
};

/*
 * placement_queued.c: a queued Job's or JobSet's entry ({kind, namespace,
 * name, localQueue, position (null here), reason, wait[, resource, flavor,
 * clusterQueue, more]}), NULL when obj is not one waiting in a queue; the
 * entries as the document's sorted "queued" list, each position ranked
 * from orders (wb_queue_positions_of).
 */
json_t *ui_queued_entry(enum pk_kind kind, const json_t *obj);
json_t *ui_queued_json(const json_t *queued, const json_t *orders);

int ui_map_layout(const struct ui_view *v, uint64_t generation, json_t **ret);

/* Embedded page files (generated from kernel/ui/ by embed.sh at build time). */
struct ui_asset {
	const char *path; /* "/ui/index.html" */
	const char *content_type;
	const unsigned char *data;
	size_t len;
};
extern const struct ui_asset ui_assets[];
extern const size_t ui_nassets;

#endif /* PODKERNEL_KERNEL_UI_INTERNAL_H */
