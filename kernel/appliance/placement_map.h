/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement_map.h — the placement map behind podkerneld's /ui/ page and
 * /ui/api/placement (README "Placement map" documents the JSON).
 *
 * The map is a compact copy of what the scheduler reads about placement:
 * per Node its topology labels, cordon and reachability; per Pod its node,
 * group and slice coordinates; per PodGroup/CompositePodGroup its parent,
 * slice shape and InitiallyScheduled condition.  The appliance loop feeds it
 * from the same list and change stream as the scheduler (every event,
 * including the appliance's own bindings and conditions, which the
 * scheduler skips because it already knows them), so answering a request
 * never re-lists the store.  HTTP threads render it under its mutex; the
 * rendered document is cached until the next change (its generation).
 *
 * Lifecycle: ap_pmap_new() -> ap_pmap_update()/ap_pmap_remove()/
 * ap_pmap_clear() from the loop thread, ap_pmap_render()/ap_pmap_node()
 * from any thread -> ap_pmap_free().
 */
#ifndef PODKERNEL_KERNEL_APPLIANCE_PLACEMENT_MAP_H
#define PODKERNEL_KERNEL_APPLIANCE_PLACEMENT_MAP_H

#include <jansson.h>
#include <stdint.h>

#include "kernel/lib/request.h"
#include "kernel/store/store.h"

/* A string, or JSON null for NULL (the documents' optional fields). */
static inline json_t *ap_pmap_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

struct ap_pmap;

int ap_pmap_new(struct ap_pmap **ret);
void ap_pmap_free(struct ap_pmap *m); /* accepts NULL */

/* Forget everything (before a full list). */
void ap_pmap_clear(struct ap_pmap *m);
/*
 * Take the current state of obj (a Node, Pod, PodGroup or
 * CompositePodGroup; other kinds are ignored).  The tree is only read.
 */
int ap_pmap_update(struct ap_pmap *m, const char *kind, const json_t *obj);
void ap_pmap_remove(struct ap_pmap *m, const char *kind, const json_t *obj);
/* One change-stream event: update or remove. */
void ap_pmap_event(struct ap_pmap *m, enum pk_event_type type, const char *kind, const json_t *obj);

/* The generation of the rendered document: grows with every change (from the clock at start). */
uint64_t ap_pmap_generation(struct ap_pmap *m);

/*
 * The PlacementMap document as compact JSON (ret_json malloc'ed, owned by
 * the caller).  When since equals the current generation the document is
 * only {"kind","apiVersion","generation","unchanged":true}.
 */
int ap_pmap_render(struct ap_pmap *m, uint64_t since, char **ret_json, size_t *ret_len);
/* The PlacementNode document of one node: labels, state, taints,
 * allocatable and requested (milli-units), pods; -ENOENT. */
int ap_pmap_node(struct ap_pmap *m, const char *name, json_t **ret);
/* The PlacementPodList of the pods whose "namespace/name" contains text (the
 * page's search): namespace, name, node, group; at most max, "truncated"
 * when there were more. */
#define AP_PMAP_POD_MATCHES 100
int ap_pmap_pods(struct ap_pmap *m, const char *text, size_t max, json_t **ret);

/*
 * Serve a GET under /ui/ (pk_server_ui_fn; arg is the struct ap_pmap):
 * the embedded page and its script and style, and /ui/api/placement
 * (?since=GENERATION, ?node=NAME, ?pod=TEXT).  -ENOENT for other paths.
 */
int ap_pmap_serve(void *arg, const struct pk_request *req, struct pk_response *resp);

/* ---- layout (placement_layout.c), called with the map's data -------------------- */

/*
 * The rendered document from the map's tables: nodes (name -> [labels,
 * cordoned, unreachable, allocatable, taints]), pods ("ns/name" -> [node,
 * group, sliceCoords, workerId, namespace, requests]) and groups ("ns/name" -> {kind, namespace,
 * name, parent, sliceShape, status, reason, message}).  All borrowed.
 */
int ap_pmap_layout(const json_t *nodes, const json_t *pods, const json_t *groups,
		   uint64_t generation, json_t **ret);

/* Embedded page files (generated from kernel/ui/ at build time). */
struct ap_ui_asset {
	const char *path; /* "/ui/index.html" */
	const char *content_type;
	const unsigned char *data;
	size_t len;
};
extern const struct ap_ui_asset ap_ui_assets[];
extern const size_t ap_ui_nassets;

#endif /* PODKERNEL_KERNEL_APPLIANCE_PLACEMENT_MAP_H */
