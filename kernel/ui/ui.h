/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ui.h — the placement map behind podkerneld's /ui/ page and
 * /ui/api/placement (docs/placement-map.md documents the JSON).
 *
 * The map is a compact copy of what the scheduler reads about placement:
 * per Node its topology labels, cordon and reachability; per Pod its node,
 * group and slice coordinates; per PodGroup/CompositePodGroup its parent,
 * slice shape and InitiallyScheduled condition.  It registers on the
 * scheduling loop (kernel/appliance/) as hooks, pk_ui_map_hooks, and is fed
 * from the same listing and change stream as the scheduler: every event,
 * including the loop's own bindings and conditions, which the scheduler
 * skips because it already knows them.  Answering a request never re-lists
 * a source.  HTTP threads render it under its mutex; the rendered document
 * is cached until the next change (its generation).
 *
 * Lifecycle: pk_ui_map_new() -> registered on the loop's configuration
 * (or pk_ui_map_update()/pk_ui_map_remove()/pk_ui_map_clear() from one
 * thread), pk_ui_map_serve()/pk_ui_map_render()/pk_ui_map_node()
 * from any thread -> pk_ui_map_free() once the loop stopped and no server
 * calls pk_ui_map_serve() any more.  The loop does not free the map.
 */
#ifndef PODKERNEL_KERNEL_UI_H
#define PODKERNEL_KERNEL_UI_H

#include <stdio.h>

#include <jansson.h>
#include <stdint.h>

#include "kernel/api/api.h"
#include "kernel/lib/request.h"

struct pk_appliance_hooks;
struct pk_ui_map;

int pk_ui_map_new(struct pk_ui_map **ret);
void pk_ui_map_free(struct pk_ui_map *m); /* accepts NULL */

/* Forget everything (before a full listing). */
void pk_ui_map_clear(struct pk_ui_map *m);
/*
 * Take the current state of obj, of the given kind (a Node, Pod, PodGroup
 * or CompositePodGroup; a Job or JobSet while it waits in a queue; other
 * kinds are ignored).  The tree is only read.
 */
int pk_ui_map_update(struct pk_ui_map *m, const struct pk_type *kind, const json_t *obj);
void pk_ui_map_remove(struct pk_ui_map *m, const struct pk_type *kind, const json_t *obj);
/* One change-stream event: update or remove. */
void pk_ui_map_event(struct pk_ui_map *m, enum pk_event_type type, const struct pk_type *kind,
		     const json_t *obj);

/*
 * The map as the scheduling loop's hooks (kernel/appliance/appliance.h),
 * registered with pk_appliance_config_add_hooks(cfg, &pk_ui_map_hooks, m):
 * a listing begins (clear), each listed object (update), each
 * change-stream event whatever the loop made of it (update or remove).
 * It has no free: the map stays its creator's.  Only the loop's types are
 * used, so linking the map pulls in no part of the loop.
 */
extern const struct pk_appliance_hooks pk_ui_map_hooks;

/* The generation of the rendered document: grows with every change (from the clock at start). */
uint64_t pk_ui_map_generation(struct pk_ui_map *m);

/*
 * The PlacementMap document as compact JSON (ret_json malloc'ed, owned by
 * the caller).  When since equals the current generation the document is
 * only {"kind","apiVersion","generation","unchanged":true}.
 */
int pk_ui_map_render(struct pk_ui_map *m, uint64_t since, char **ret_json, size_t *ret_len);
/* The PlacementNode document of one node: labels, state, taints,
 * allocatable and requested (milli-units), pods; -ENOENT. */
int pk_ui_map_node(struct pk_ui_map *m, const char *name, json_t **ret);
/* The PlacementPodList of the pods whose "namespace/name" contains text (the
 * page's search): namespace, name, node, group; at most max, "truncated"
 * when there were more. */
#define PK_UI_MAP_POD_MATCHES 100
int pk_ui_map_pods(struct pk_ui_map *m, const char *text, size_t max, json_t **ret);

/*
 * Serve a GET under /ui/ (kernel/server's pk_server_ui_fn; arg is the
 * struct pk_ui_map, NULL answers nothing): the embedded page and its script
 * and style, and /ui/api/placement (?since=GENERATION, ?node=NAME,
 * ?pod=TEXT).  -ENOENT for other paths.
 */
int pk_ui_map_serve(void *arg, const struct pk_request *req, struct pk_response *resp);

/*
 * Prometheus lines of the map's state: accelerators (extended resources)
 * allocated per namespace (podkernel_namespace_accelerators_allocated) and
 * allocated and free per topology domain (podkernel_domain_accelerators).
 */
void pk_ui_map_metrics(struct pk_ui_map *m, FILE *f);

#endif /* PODKERNEL_KERNEL_UI_H */
