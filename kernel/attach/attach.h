/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attach.h — podkerneld as the gang scheduler of an existing Kubernetes
 * cluster (attach mode).
 *
 * Instead of its own store, podkerneld mirrors the cluster: one list+watch
 * informer per resource (Nodes, Pods, Namespaces, PriorityClasses and the
 * workload kinds) feeds an in-memory mirror (mirror.c) that the unchanged
 * scheduling loop (kernel/appliance/) reads as its source, and the loop's
 * write path gets a backend that speaks the Kubernetes API (remote.c:
 * pods/binding, status subresources with preconditions, DisruptionTarget
 * then DELETE with preconditions, many requests in flight).  Only pods whose
 * spec.schedulerName is the configured name are scheduled; every other
 * bound pod takes capacity.  Events (recorder.c) explain decisions.  With
 * leader election one instance of several writes; the others keep their
 * mirror and scheduler warm and take over when the Lease expires.  The
 * listen address serves /healthz, /readyz, /metrics and the placement map
 * /ui/ (health.c, ui.c: its data to tokens the cluster lets list Nodes and
 * Pods); the map (kernel/ui/) is the caller's, fed by the loop as its hooks.
 *
 * Lifecycle: pk_attach_start() -> (runs) -> pk_attach_stop().
 */
#ifndef PODKERNEL_KERNEL_ATTACH_H
#define PODKERNEL_KERNEL_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/appliance/appliance.h"
#include "kernel/builder/queue_pass.h"
#include "kernel/http/listener.h"

#define PK_ATTACH_DEFAULT_SCHEDULER "podkernel"
#define PK_ATTACH_DEFAULT_WORKLOAD_API "scheduling.k8s.io/v1alpha3"
#define PK_ATTACH_DEFAULT_LEASE_NAMESPACE "kube-system"
#define PK_ATTACH_DEFAULT_LEASE_NAME "podkernel-scheduler"
/* The health listener's caps (probes and a metrics scraper need few). */
#define PK_ATTACH_HEALTH_MAX_CONNECTIONS 64
#define PK_ATTACH_HEALTH_MAX_CONNECTIONS_PER_ADDR 16

struct pk_ui_map;

struct pk_attach_config {
	const char *kubeconfig;	    /* --kubeconfig FILE (else $KUBECONFIG, ~/.kube/config) */
	const char *context;	    /* --context NAME, or NULL */
	bool in_cluster;	    /* --in-cluster: the pod's service account */
	const char *sa_dir;	    /* NULL: the standard service account folder */
	const char *scheduler_name; /* NULL: PK_ATTACH_DEFAULT_SCHEDULER */
	const char *strategy;	    /* placement strategy; NULL: the default */
	bool gated_gangs_wait;	    /* --gated-gangs-wait: a gang waits while a member is gated */
	/*
	 * --queues=podkernel: admit the cluster's queued Jobs, JobSets and Pods
	 * (Kueue's kinds) by podkernel's queue controller (queues.c); false:
	 * the cluster's Kueue admits, podkerneld schedules what it releases.
	 */
	bool queues;
	/*
	 * The queue controller's pass on a scratch store that queues.c hands
	 * the mirror's objects to: the program's (podkerneld gives
	 * pk_queues_pass_scratch(), kernel/controllers/), so attach links
	 * neither the controllers nor the store.  NULL: queues is refused.
	 */
	pk_queues_scratch_fn *queue_pass;
	const char *workload_api; /* GROUP/VERSION; NULL: PK_ATTACH_DEFAULT_WORKLOAD_API */
	bool leader_elect;
	const char *lease_namespace, *lease_name;	    /* NULL: the defaults above */
	const char *identity;				    /* NULL: HOSTNAME_PID */
	int lease_duration_ms, renew_deadline_ms, retry_ms; /* 0: kube.h defaults */
	const char *listen; /* ADDR:PORT of /healthz, /readyz, /metrics (port 0 picks one) */
	/* Its caps and deadlines; zero fields: PK_ATTACH_HEALTH_* and the listener's. */
	struct pk_listen_limits limits;
	/* PEM files of the listen address's serving certificate chain and key
	 * (--tls-cert-file, --tls-private-key-file); NULL: plain HTTP. */
	const char *tls_cert_file, *tls_key_file;
	/*
	 * The placement map (kernel/ui/), registered on the scheduling loop and
	 * served at /ui/ on the listen address; NULL: no /ui/.  Borrowed: it
	 * must outlive pk_attach_stop().
	 */
	struct pk_ui_map *map;
	int verbosity;
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

struct pk_attach;
/*
 * Connect (credentials are checked now; the cluster need not answer yet),
 * start the informers, the scheduling loop and the health server.  Errors
 * go to err; -EINVAL for bad configuration.
 */
int pk_attach_start(const struct pk_attach_config *cfg, struct pk_attach **ret, char *err,
		    size_t errlen);
/* Stop everything (a held Lease is released); accepts NULL. */
void pk_attach_stop(struct pk_attach *a);
/* Every informer delivered its first list. */
bool pk_attach_ready(struct pk_attach *a);
/* Leading (or not electing). */
bool pk_attach_leading(struct pk_attach *a);
/* Prometheus text: the scheduler's metrics and attach mode's own. */
void pk_attach_metrics(struct pk_attach *a, FILE *f);

#endif /* PODKERNEL_KERNEL_ATTACH_H */
