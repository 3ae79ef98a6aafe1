/* SPDX-License-Identifier: Apache-2.0 */
/* ui-internal.h — what the placement map's modules share. */
#ifndef PODKERNEL_KERNEL_UI_INTERNAL_H
#define PODKERNEL_KERNEL_UI_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

#include "kernel/ui/ui.h"

/* A string, or JSON null for NULL (the documents' optional fields). */
static inline json_t *ui_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* ---- layout (placement_layout.c), called with the map's data -------------------- */

/* The accelerators (extended resources: nvidia.com/gpu, ...) in res, milli-units. */
long long ui_accelerators(const json_t *res);

/*
 * The rendered document from the map's tables: nodes (name -> [labels,
 * cordoned, unreachable, allocatable, taints]), pods ("ns/name" -> [node,
 * group, sliceCoords, workerId, namespace, requests, finished]) and groups ("ns/name" -> {kind,
 * namespace, name, parent, sliceShape, status, reason, message}).  All borrowed.
 */
int ui_map_layout(const json_t *nodes, const json_t *pods, const json_t *groups,
		  uint64_t generation, json_t **ret);

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
