/* SPDX-License-Identifier: Apache-2.0 */
/* attach-internal.h — what the modules of attach mode share. */
#ifndef PODKERNEL_KERNEL_ATTACH_INTERNAL_H
#define PODKERNEL_KERNEL_ATTACH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "kernel/appliance/appliance.h"
#include "kernel/write/writer.h"
#include "kernel/attach/attach.h"
#include "kernel/kube/kube.h"
#include "kernel/ui/ui.h"

/* ---- the API the cluster serves -------------------------------------------------- */
/* The resources attach mode watches, in the order the scheduler wants them. */
enum at_res {
	AT_RES_NODE,
	AT_RES_PRIORITY_CLASS,
	AT_RES_NAMESPACE,
	AT_RES_STORAGE_CLASS,
	AT_RES_CSI_NODE,
	AT_RES_PERSISTENT_VOLUME,
	AT_RES_PERSISTENT_VOLUME_CLAIM,
	AT_RES_COMPOSITE_POD_GROUP,
	AT_RES_POD_GROUP,
	AT_RES_WORKLOAD,
	AT_RES_POD,
	/* dynamic resource allocation (resource.k8s.io/v1), as kube-scheduler's DRA plugin */
	AT_RES_DEVICE_CLASS,
	AT_RES_RESOURCE_SLICE,
	AT_RES_RESOURCE_CLAIM,
	/* --queues=podkernel only: Kueue's kinds and the workloads they queue (queues.c) */
	AT_RES_RESOURCE_FLAVOR,
	AT_RES_TOPOLOGY,
	AT_RES_COHORT,
	AT_RES_CLUSTER_QUEUE,
	AT_RES_LOCAL_QUEUE,
	AT_RES_WORKLOAD_PRIORITY_CLASS,
	AT_RES_JOB,
	AT_RES_JOBSET,
	_AT_RES_MAX,
};
#define AT_RES_FIRST_QUEUES AT_RES_RESOURCE_FLAVOR
struct at_api {
	struct kube_resource res[_AT_RES_MAX];
	char workload_group[128], workload_version[64];
	bool queues; /* the queue kinds are watched (and written) too */
};
/* Fill the table for a workload API "GROUP/VERSION"; -EINVAL when malformed. */
int at_api_init(struct at_api *api, const char *workload_api);
/* Whether resource i is watched (the queue kinds only with api->queues). */
bool at_api_watched(const struct at_api *api, int i);
/* The resource of a kind the scheduler writes, or NULL. */
const struct kube_resource *at_api_resource(const struct at_api *api, const struct pk_type *t);
/* The row of the kinds table of one of api's resources (or a copy of one), or NULL. */
const struct pk_type *at_api_type(const struct at_api *api, const struct kube_resource *res);
/* An object from the cluster as the scheduler reads it (apiVersion of workload kinds). */
void at_api_normalize(json_t *obj);

/* ---- mirror.c ------------------------------------------------------------------------ */
#define AT_MIRROR_MAX_PENDING (1u << 20)
#define AT_MIRROR_QUIET_MS 10  /* a burst of events is over after this much quiet */
#define AT_MIRROR_SETTLE_MS 50 /* ... or after this long */
struct at_mirror;
/* Pods of other schedulers than scheduler_name are mirrored only once bound. */
int at_mirror_new(const char *scheduler_name, struct at_mirror **ret);
void at_mirror_free(struct at_mirror *m);
/* Wake the loop's wait for good (shutdown). */
void at_mirror_close(struct at_mirror *m);
/* Wake the loop's wait once (leadership changed, lists synced). */
void at_mirror_kick(struct at_mirror *m);
void at_mirror_event(struct at_mirror *m, const struct pk_type *kind, enum kube_event type,
		     const json_t *obj);
void at_mirror_replace(struct at_mirror *m, const struct pk_type *kind, const json_t *items);
int at_mirror_get(struct at_mirror *m, const struct pk_type *kind, const char *ns, const char *name,
		  json_t **ret);
void at_mirror_stats(struct at_mirror *m, uint64_t *ret_events, uint64_t *ret_filtered,
		     size_t *ret_objects);
extern const struct pk_appliance_source_ops at_mirror_source_ops;

/* ---- recorder.c: events.k8s.io/v1 Events ----------------------------------------------- */
#define AT_REPORTING_CONTROLLER "podkernel.dev/scheduler"
#define AT_EVENT_QUEUE_MAX 4096
struct at_recorder;
int at_recorder_new(struct kube_client *c, const struct at_api *api, const char *instance,
		    struct at_recorder **ret);
void at_recorder_free(struct at_recorder *rec);
/*
 * Queue an Event about an object (sent by the recorder's thread).  type
 * "Normal" or "Warning".  A note repeated within PK_EVENT_REPEAT_S is
 * dropped and counted.  regarding: the object (its uid is read from it when present).
 */
void at_recorder_emit(struct at_recorder *rec, const struct pk_type *kind, const char *ns,
		      const char *name, const char *uid, const char *type, const char *reason,
		      const char *action, const char *note);
void at_recorder_stats(struct at_recorder *rec, uint64_t *ret_sent, uint64_t *ret_limited,
		       uint64_t *ret_failed);

/* ---- remote.c: the write-path backend on a kube-apiserver -------------------------------- */
#define AT_REMOTE_IN_FLIGHT 16
/* Requests the backend sent, by what they were (read by /metrics). */
struct at_remote_stats {
	atomic_ullong bindings, status_writes, deletes, conflicts, failures, fenced;
};
struct at_remote_config {
	struct kube_client *client;
	const struct at_api *api;
	struct at_mirror *mirror;
	struct at_recorder *recorder; /* may be NULL */
	/* Writes go out only while this says yes (the leader election's fence). */
	bool (*may_write)(void *arg);
	void *may_write_arg;
	struct at_remote_stats *stats; /* owned by the caller, outlives the writer */
};
int at_remote_writer_new(const struct at_remote_config *cfg, struct pk_writer **ret);

/* ---- attach.c: what the listener's modules read ------------------------------------------- */
struct pk_ui_map *at_map(struct pk_attach *a); /* cfg->map, or NULL */
struct kube_client *at_client(struct pk_attach *a);
const struct pk_attach_config *at_config(struct pk_attach *a);
/* The loop may schedule (caches synced and current, leading); arg: the pk_attach. */
bool at_may_schedule(void *arg);

/* ---- queues.c: podkernel's queue controller on the cluster (--queues=podkernel) ------------ */
#define AT_QUEUES_ECHO_MS                                                                          \
	5000			/* the longest a pass waits for the watch to show the last writes  \
				 */
#define AT_QUEUES_POLL_MS 20	/* ... looking again this often */
#define AT_QUEUES_RETRY_MS 1000 /* a failed pass runs again after this long */
struct at_queues;
/* Hooks on the scheduling loop: a pass when something queued changed (queues.c). */
extern const struct pk_appliance_hooks at_queues_hooks;
/* Its own write backend on rc (the same cluster, fence and mirror); freed by the hooks' free. */
int at_queues_new(struct pk_attach *a, const struct at_remote_config *rc, struct at_queues **ret);

/* ---- ui.c: /ui/ (the placement map) on the listener --------------------------------------- */
struct at_ui;
int at_ui_new(struct pk_attach *a, struct at_ui **ret);
void at_ui_free(struct at_ui *u);
/*
 * Answer a GET under /ui/: the page to anyone, /ui/api/ to a bearer token
 * the cluster lets list Nodes and Pods.  -ENOENT for other paths.
 */
int at_ui_handle(struct at_ui *u, const struct pk_request *req, struct pk_response *resp);

/* ---- health.c: /healthz, /readyz, /metrics, /ui/ -------------------------------------------- */
struct at_health;
int at_health_start(struct pk_attach *a, const struct pk_attach_config *cfg, struct at_health **ret,
		    char *err, size_t errlen);
uint16_t at_health_port(const struct at_health *h);
void at_health_stop(struct at_health *h);

#endif /* PODKERNEL_KERNEL_ATTACH_INTERNAL_H */
