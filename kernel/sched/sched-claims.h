/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-claims.h — ResourceClaims and their devices (claims.c), as the rest
 * of the scheduling core sees them: objects in and out, a pod's claims state,
 * and the actions a committed placement's claims become.  Private to
 * kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_CLAIMS_H
#define PODKERNEL_KERNEL_SCHED_CLAIMS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kernel/api/api.h"

struct pk_sched;
struct pk_sched_result;
struct sc_ctx;
struct sc_placement;
struct sc_pod;
struct sc_snapshot;

/*
 * ResourceClaims, DeviceClasses and ResourceSlices in (set) and out
 * (remove); the last reason a pod's claims did not fit a node; a pod
 * leaving for good (its reservations go, a claim nobody reserves is
 * deallocated).  claims.c is a constraint plugin: it calls the snapshot and
 * the result below it, never the forest or the plugin table above it; the
 * snapshot frees the claim table through the table's hooks (plugin.c).
 */
void sc_claims_free(struct sc_snapshot *snap);
int sc_claims_set(struct pk_sched *s, json_t *obj);
/* Give a PodGroup's member the claims state its group's claims need. */
int sc_claims_attach(struct sc_pod *pod);
int sc_claims_remove(struct pk_sched *s, enum pk_kind kind, const char *ns, const char *name);
const char *sc_claims_why(const struct sc_pod *pod);
void sc_claims_pod_gone(struct pk_sched *s, const struct sc_pod *pod);
/*
 * As the claim controller does: reservedFor entries naming a pod the
 * scheduler does not have (deleted, finished) go, and a claim left
 * reserved by nobody is deallocated.  For offline runs, whose input is
 * the whole cluster.
 */
void sc_claims_drop_stale(struct pk_sched *s);
int sc_claims_tell(struct pk_sched *s, struct pk_sched_result *res);
/* A scheduling cycle begins: its device allocation searches share one budget. */
void sc_claims_cycle_begin(struct pk_sched *s);
/* The claims a committed placement allocated or reserved, as actions. */
int sc_claims_commit(struct sc_ctx *ctx, const struct sc_placement *pl, size_t n);

#endif
