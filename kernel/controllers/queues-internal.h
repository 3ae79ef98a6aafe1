/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues-internal.h — the queue controller's pass, shared by its modules:
 * queues.c (the listing, quota, admission, the pass), queues_flavor.c
 * (which flavor of each resource group, spec.flavorFungibility), queues_preempt.c
 * (preemption for quota), queues_pods.c (plain pods and pod groups as
 * workloads) and queues_status.c (the queues' status and Kueue's gauges).
 */
#ifndef PODKERNEL_KERNEL_CONTROLLERS_QUEUES_INTERNAL_H
#define PODKERNEL_KERNEL_CONTROLLERS_QUEUES_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "kernel/controllers/controllers-internal.h"

#define Q_LABEL_PRIORITY_CLASS "kueue.x-k8s.io/priority-class"
/* On a PodGroup the queue controller made for a Kueue pod group (queues_pods.c). */
#define Q_LABEL_KUEUE_POD_GROUP PK_QUEUES_LABEL_KUEUE_POD_GROUP

struct q_known;

/*
 * "a/b" into buf (n bytes), as snprintf(buf, n, "%s/%s", a, b) writes it,
 * without reading a format: a LocalQueue's key, read for each workload.
 */
static inline void q_join(char *buf, size_t n, const char *a, const char *b)
{
	size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;

	if (!a || !b || la + 1 + lb >= n) {
		snprintf(buf, n, "%s/%s", a ? a : "(null)", b ? b : "(null)");
		return;
	}
	memcpy(buf, a, la);
	buf[la] = '/';
	memcpy(buf + la + 1, b, lb + 1);
}

/* A queued workload: a Job, a JobSet, a plain Pod or the pods of one root group. */
struct q_workload {
	json_t *obj; /* borrowed from the listing (a pod workload: its first pod) */
	enum pk_kind kind;
	const char *kind_name; /* "Job", "JobSet", "Pod", "PodGroup", "CompositePodGroup" */
	const char *ns, *name, *queue, *created;
	json_t *pods;	  /* a pod workload: its pods (borrowed from the listing) */
	json_t *requests; /* resource -> milli */
	bool admitted;
	bool preempted;	    /* by this pass: pending again, not tried again in it */
	int64_t priority;   /* its WorkloadPriorityClass's value, else its pods' PriorityClass's */
	char *cq;	    /* admitted: the ClusterQueue */
	json_t *flavors;    /* admitted: one flavor name (or "-") per resource group */
	char *why;	    /* pending: why, as this pass found */
	char *inadmissible; /* never admitted as it is (a missing WorkloadPriorityClass) */
	char *incomplete;   /* a Kueue pod group that waits for the rest of its pods: why */
	json_t *group;	    /* a Kueue pod group's PodGroup, created when it is admitted */
	struct q_known *known; /* a Job's or JobSet's entry in the cache (queues_cache.c) */
};

struct q_state {
	json_t *cqs, *lqs, *flavors, *namespaces, *cohorts, *classes, *wpcs, *jobs, *jobsets, *pods,
	    *groups;	       /* listings (groups: "Kind/ns/name" -> object) */
	struct q_tree *tree;   /* quota and usage shared in cohorts */
	struct q_place *place; /* the cluster, for placement (read at the first need) */
	struct q_workload *w;
	size_t nw, capw;
	json_t *usage;	       /* cq -> flavor -> resource -> milli */
	json_t *counts;	       /* "cq" or "ns/lq" -> {pending, admitted} */
	json_t *lqusage;       /* "ns/lq" -> flavor -> resource -> milli */
	struct q_cache *cache; /* kept between passes (queues_cache.c) */
	json_t *dirty;	       /* quota keys admitted or evicted under in this pass */
	json_t *visit;	       /* quota keys this pass visits (q_cache_plan; NULL: all) */
	bool fair;	       /* some ClusterQueue sets fairSharing */
};

/* A candidate for preemption (queues_preempt.c). */
struct q_victim {
	struct q_workload *v;
	bool reclaim;	      /* from another ClusterQueue of the cohort (else within w's) */
	bool kept;	      /* not needed after all (or its ClusterQueue stopped borrowing) */
	bool while_borrowing; /* taken by a preemptor that borrows (borrowWithinCohort) */
};

/* queues.c */
json_t *q_sub(json_t *map, const char *a);
int64_t q_milli_at(const json_t *map, const char *a, const char *b);
bool q_covers(const json_t *group, const char *resource);
/* q_covers of a group's coveredResources array, read once by the caller. */
bool q_covers_in(const json_t *covered, const char *resource);
/* q_covers of a group's coveredResources array, read once by the caller. */
bool q_covers_in(const json_t *covered, const char *resource);
/* Count w's requests in cq's usage (sign -1: give them back), its LocalQueue's and the tree's. */
void q_charge_sign(struct q_state *s, const struct q_workload *w, const char *cq,
		   const json_t *flavors, int sign);
void q_count_both(struct q_state *s, const struct q_workload *w, const char *cq, const char *what,
		  int delta);
bool q_cq_active(const struct q_state *s, const json_t *cq, char *missing, size_t n);
/* Whether a ClusterQueue or LocalQueue is stopped: spec.stopPolicy HoldAndDrain, or (!drain) Hold.
 */
bool q_stopped(const json_t *queue, bool drain);
int64_t q_int_or(const json_t *obj, const char *path, int64_t dflt);
/* Add n times the requests of a pod of template's spec to req; -ENOMEM. */
int q_add_pod_requests(json_t *req, const json_t *template, int64_t n);
/* A workload's priority: the WorkloadPriorityClass its label names, else spec's PriorityClass. */
int64_t q_priority(struct q_state *s, struct q_workload *w, const json_t *spec);

/* queues_flavor.c: Kueue's flavor assignment under spec.flavorFungibility. */
#define Q_MAX_GROUPS 16	 /* resource groups of a ClusterQueue (validation's bound) */
#define Q_MAX_FLAVORS 64 /* flavors of a resource group (validation's bound) */
/* Which flavors q_assign may take. */
struct q_pick {
	uint64_t skip[Q_MAX_GROUPS]; /* per group: flavors (bit = index) whose nodes did not place
					the workload */
	int pin[Q_MAX_GROUPS];	     /* per group: 1 + the only flavor to take; 0: any */
	bool probe; /* whenCanPreempt MayStopSearch: stop at a flavor where preemption makes room */
};
/*
 * w's flavor of each resource group of cq (a name, "-" for a group it asks
 * nothing of) where all fit, or NULL and why; pick (NULL: any flavor) says
 * which it may take; with pick->probe, NULL also when some group stopped at
 * a flavor where w must preempt: that group is pinned to it in pick.
 */
json_t *q_assign(struct q_state *s, struct q_workload *w, const char *cq, struct q_pick *pick,
		 char *why, size_t n);
/* Whether w fits cq's nominal quota in flavors (borrowing nothing). */
bool q_within_nominal(struct q_state *s, const struct q_workload *w, const char *cq,
		      const json_t *flavors);
/*
 * flavors' nodes did not place the workload: skip, in pick, each group's
 * flavor in flavors when the group has another left, and clear the pins;
 * false when no group has another.
 */
bool q_assign_skip(struct q_state *s, const char *cq, const json_t *flavors, struct q_pick *pick);

/* queues_preempt.c: Kueue's classical preemption for quota. */
/*
 * The fewest candidates whose quota makes room for w in cq (their quota
 * given back in the pass's accounts), its flavors as pick allows (its
 * probe not made): w's flavors, the candidates and how many were tried
 * (the victims are those not kept), or NULL.
 */
json_t *q_preempt_plan(struct q_state *s, struct q_workload *w, const char *cq,
		       const struct q_pick *pick, struct q_victim **ret_c, size_t *ret_n);
/* The plan not carried out: its victims are admitted still. */
void q_preempt_undo(struct q_state *s, struct q_victim *c, size_t n);
/* Evict the plan's victims, each in one write; < 0 when one failed. */
int q_preempt_commit(struct pk_ctl *ctl, struct q_state *s, const struct q_workload *w,
		     struct q_victim *c, size_t n);
/* Take v's admission back (why: the Event's message); 0 or < 0. */
int q_evict(struct pk_ctl *ctl, struct q_workload *v, const char *reason, const char *why);

/* queues_pods.c: plain pods and pod groups queued by their label. */
/* Add the queued pods of s->pods to s->w, one workload per root group or lone pod. */
int q_pods_load(struct q_state *s);
/* The admission of a pod workload: its pods as admitted (q_pods_admitted), in one batch. */
int q_pods_admit(struct pk_ctl *ctl, struct q_workload *w, const json_t *admitted);
/* The pods of w as admitted, for the placement check (a List); NULL: no memory. */
json_t *q_pods_admitted(const struct q_workload *w, const char *admission, const json_t *flavors);
/* Whether every pod of w tolerates flavor's taints. */
bool q_pods_tolerated(const struct q_workload *w, const json_t *flavor, char *why, size_t n);
/* Delete each PodGroup made for a Kueue pod group that no queued pod names any more. */
void q_pods_groups_gone(struct pk_ctl *ctl, const struct q_state *s);
/* Stop w's pods (deleted, as Kueue stops a plain pod); 0 or < 0. */
int q_pods_evict(struct pk_ctl *ctl, struct q_workload *w);
/*
 * obj's pending annotations, its queue order (WB_ANNOTATION_QUEUE_ORDER)
 * and why (NULL: removed), when they change, into the writer's open batch
 * (pk_writer_batch_begin first); q_note_commit writes the batch (each
 * object on its own precondition).
 */
bool q_note_one(struct pk_ctl *ctl, enum pk_kind kind, const json_t *obj, const char *order,
		const char *why); /* true: obj carries them already */
/* Commit the open batch (the queues' status too, queues_status.c), logging what failed. */
void q_note_commit(struct pk_ctl *ctl);
/* w's pending annotations (or none: NULL) on each of its pods, as q_note_one. */
void q_pods_note(struct pk_ctl *ctl, struct q_workload *w, const char *order, const char *why);

/* queues_cache.c: what the pass reads, kept between passes; parked workloads. */
/* Bring ctl->qcache up to date (made, or listed again, when needed); 0 or < 0. */
int q_cache_sync(struct pk_ctl *ctl);
/* s's listings from the cache (shared, read only); 0 or -ENOMEM. */
int q_cache_view(struct pk_ctl *ctl, struct q_state *s);
/* The cluster as placement sees it (q_place_new's picture) from the cache (listed at first). */
int q_cache_place(struct pk_store *store, struct q_state *s, struct q_place **ret);
/* The pass is over: its placement scheduler carried to the next pass's picture. */
void q_cache_carry(struct q_state *s);
/*
 * s->tree for the pass: the last pass's quota tree when no ClusterQueue,
 * Cohort or other configuration changed since (its usage emptied), else a
 * new one; 0 or -ENOMEM.  q_cache_carry keeps it for the next pass.
 */
int q_cache_tree(struct q_state *s);
/*
 * The workload of obj (a Job or JobSet, "ns/name" key) as the last pass
 * read this very version of it under the same queues and classes: 1 with w
 * filled, 2 when it was no workload (not queued, finished, being deleted),
 * 0 when unknown (read it, then q_cache_keep), -ENOMEM.
 */
int q_cache_known(struct q_state *s, enum pk_kind kind, const char *key, const json_t *obj,
		  struct q_workload *w);
/*
 * w's requests from an earlier version that differs only in its status or
 * pending annotations (true; else false: decode them), and (*ret_priority)
 * its priority and why it is inadmissible when the classes did not change.
 */
bool q_cache_decoded(struct q_state *s, enum pk_kind kind, const char *key, struct q_workload *w,
		     bool *ret_priority);
/* Keep obj's workload w (NULL: none) for the next pass; decoded: its requests were decoded. */
void q_cache_keep(struct q_state *s, enum pk_kind kind, const char *key, json_t *obj,
		  struct q_workload *w, bool decoded);
/*
 * Which quota keys this pass visits (s->visit; NULL: all, and the members
 * of every key built again): those whose workloads or admissions changed
 * since the last pass, that were not settled then (a workload tried and
 * not parked, an admission, an eviction), that wait for room where the
 * cluster changed since, and Q_NO_QUOTA; 0 or -ENOMEM.
 */
int q_cache_plan(struct q_state *s);
/* Whether the pass visits quota key qk (NULL: Q_NO_QUOTA's). */
bool q_cache_visits(const struct q_state *s, const char *qk);
/* The Jobs and JobSets of quota key qk: "0ns/name" (a Job), "1ns/name" (a JobSet) -> true. */
json_t *q_cache_members(const struct q_state *s, const char *qk);
/* Where the gauges' lines of the last pass are kept (queues_status.c); NULL: nowhere. */
json_t **q_cache_gauges(const struct q_state *s);
/*
 * After the admissions: what each visited quota key settled to, for the
 * next pass's plan, and the counts and usage of the keys not visited (as
 * their last visit found them) into the pass's maps.
 */
void q_cache_record(struct q_state *s);
/* The quota key of workloads whose LocalQueue or ClusterQueue is missing. */
#define Q_NO_QUOTA "-"
/* The key of cq's quota: "" for any ClusterQueue in a cohort, else its name; NULL: none. */
const char *q_cache_quota_key(const json_t *cqs, const char *cq);
/* w not admitted in cq: park it (place: for want of room) with why, when it may be parked. */
void q_cache_park(struct q_state *s, const struct q_workload *w, const char *cq, bool place,
		  const char *why);
void q_cache_unpark(struct q_state *s, const struct q_workload *w);
/* Why w waits, when it is parked in cq and nothing since could change the answer; else NULL. */
const char *q_cache_parked(struct q_state *s, const struct q_workload *w, const char *cq);
/*
 * Whether w (a Job or JobSet) carries its queue order and why it waits
 * already, as a pass found this very version of it with the same reason
 * (the order depends on nothing else that can change without a new
 * version or new queues); q_cache_note records that it does.
 */
bool q_cache_noted(const struct q_workload *w);
void q_cache_note(const struct q_workload *w);
/* cq's quota changed in this pass: nothing parked under it is skipped in the rest of it. */
void q_cache_dirty(struct q_state *s, const char *cq);
/* Whether cq's quota changed in this pass but by the pass's own admissions (q_cache_admitted). */
bool q_cache_dirty_by_others(const struct q_state *s, const char *cq);
/*
 * w (a Job or JobSet) admitted in cq by the pass itself, written as
 * written, nothing preempted for it: its quota's generation bumped now, and
 * the write's echo on the change stream (by its resourceVersion) is no
 * change, so the workloads of that quota tried after it (judged with it
 * admitted) stay parked after the pass; those parked before are not.
 */
void q_cache_admitted(struct q_state *s, const char *cq, const struct q_workload *w,
		      const json_t *written);
/*
 * The pass's own write of a Job's or JobSet's pending annotations, as
 * written: its echo on the change stream is no change (the pass decides
 * nothing by them).
 */
void q_cache_noted_write(struct pk_ctl *ctl, const struct pk_type *kind, const char *ns,
			 const char *name, const json_t *written);
/* Count a workload tried (its quota computed), or (place) a placement check run. */
void q_cache_tried(struct q_state *s, bool place);

/* queues_status.c: a queue's status, when it changed, into the writer's open batch. */
void q_cq_status(struct pk_ctl *ctl, const struct q_state *s, const char *name, const json_t *cq,
		 const char *now);
void q_lq_status(struct pk_ctl *ctl, const struct q_state *s, const char *key, const json_t *lq,
		 const char *now);
/* Kueue's gauges of this pass (queues_metrics.c prints them). */
void q_gauges(struct pk_ctl *ctl, const struct q_state *s);

#endif
