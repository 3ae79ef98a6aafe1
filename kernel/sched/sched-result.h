/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-result.h — the actions of a cycle's result (result.c): conditions,
 * bindings, preemptions and the claims' and volumes' new state, packed into
 * the result the caller reads (sched.h).  Private to kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_RESULT_H
#define PODKERNEL_KERNEL_SCHED_RESULT_H

#include <jansson.h>

#include "kernel/api/api.h"

struct pk_sched_result;
struct sc_ctx;
struct sc_group;
struct sc_pod;
struct sc_snapshot;

int sc_result_condition(struct pk_sched_result *res, enum pk_kind kind, const char *ns,
			const char *name, const char *type, const char *status, const char *reason,
			const char *message);
/* A binding, with the annotations the snapshot's extensions give the pod. */
int sc_result_bind(struct pk_sched_result *res, const struct sc_snapshot *snap,
		   const struct sc_pod *pod, const char *node);
/* A claim's volume (spec.volumeName) or selected node (annotation). */
int sc_result_volume_claim(struct pk_sched_result *res, const char *ns, const char *name,
			   const char *volume, const char *node);
int sc_result_preempt(struct pk_sched_result *res, const struct sc_pod *pod);
/* A claim's new status (allocation, reservedFor; the result takes a reference). */
int sc_result_claim(struct pk_sched_result *res, const char *ns, const char *name, json_t *status);

/* A condition on a pod or group, written only when it differs from the last. */
int sc_emit_pod(struct sc_ctx *ctx, struct sc_pod *pod, const char *status, const char *reason,
		const char *message);
int sc_emit_group(struct sc_ctx *ctx, struct sc_group *g, const char *status, const char *reason,
		  const char *message);

#endif
