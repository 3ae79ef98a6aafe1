/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue_pass.h — the types of the queue controller's pass
 * (pk_queues_pass_opts(), pk_queues_pass_scratch(),
 * kernel/controllers/controllers.h), beside the queue annotations and order
 * of the workloads this folder builds: attach mode is handed the pass on its
 * mirror's objects (struct pk_attach_config.queue_pass) and links neither the
 * controllers nor the store.
 */
#ifndef PODKERNEL_BUILDER_QUEUE_PASS_H
#define PODKERNEL_BUILDER_QUEUE_PASS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct pk_type;

/*
 * The label on a PodGroup the queue controller made for a Kueue pod group
 * (deleted by it once no queued pod names it), and the annotation that says
 * why a queued workload waits.
 */
#define PK_QUEUES_LABEL_KUEUE_POD_GROUP "queue.podkernel.dev/kueue-pod-group"
#define PK_QUEUES_ANNOTATION_PENDING "queue.podkernel.dev/pending-reason"
/*
 * The pass's options.  quota_only admits by quota alone, with no
 * placement check: Kueue's way (reserve quota, place later), the
 * simulator's comparison mode (podctl simulate --admission quota-first).
 */
struct pk_queues_pass_opts {
	bool quota_only;
	/*
	 * Where the pass's Events go (Inadmissible, Preempted, Evicted: type
	 * "Normal" or "Warning", about obj of kind); NULL: none.  Attach mode
	 * sends them to the cluster (kernel/attach/queues.c).
	 */
	void (*event)(void *arg, const char *type, const struct pk_type *kind, const json_t *obj,
		      const char *reason, const char *note);
	void *event_arg;
};
/*
 * The pass on objects that live in no store of podkernel's (attach mode's
 * mirror of a cluster; kernel/controllers/queues_scratch.c): groups[0 .. ngroups) (JSON
 * arrays) are created in a scratch store under $TMPDIR, each group in one
 * transaction, in the order given (their creation times keep it: the queued
 * workloads go last, in their queue order, and keep their own creation
 * times), their resourceVersion, uid and
 * generation the store's; refused(arg, obj, -errno), when set, for each
 * object the store refused (left out of the pass).  The objects of the
 * written kinds (NULL-terminated) are returned as they were before the pass
 * and after it ("Kind/ns/name" -> object, new objects).  The store is
 * removed before the call returns.  Errors (the scratch store's) go to err.
 */
struct pk_queues_scratch {
	json_t *const *groups;
	size_t ngroups;
	const struct pk_type *const *written_kinds;
	void (*refused)(void *arg, const json_t *obj, int error);
	void *refused_arg;
};
typedef int pk_queues_scratch_fn(const struct pk_queues_scratch *s,
				 const struct pk_queues_pass_opts *o, json_t **ret_before,
				 json_t **ret_after, char *err, size_t errlen);

#endif
