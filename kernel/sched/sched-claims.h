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
 * The DynamicResources plugin (claims.c): ResourceClaims, DeviceClasses and
 * ResourceSlices come through its events (plugin.h), a pod's claims
 * through its extension points.  What else the core asks of it: the last
 * reason a pod's claims did not fit a node, and a member's claims state
 * when its PodGroup's claims change.  claims.c calls the snapshot and the
 * result below it, never the forest or the plugin table above it; the
 * snapshot frees the claim table through the table's hooks (plugin.c).
 */
void sc_claims_free(struct sc_snapshot *snap);
/* Give a PodGroup's member the claims state its group's claims need. */
int sc_claims_attach(struct sc_pod *pod);
const char *sc_claims_why(const struct sc_pod *pod);
/*
 * As the claim controller does: reservedFor entries naming a pod the
 * scheduler does not have (deleted, finished) go, and a claim left
 * reserved by nobody is deallocated.  For offline runs, whose input is
 * the whole cluster.
 */
void sc_claims_drop_stale(struct pk_sched *s);

#endif
