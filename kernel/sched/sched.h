/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched.h — podkernel's scheduling core (KEP-6012 multi-level gang scheduling).
 *
 * A scheduler holds a snapshot of the cluster (nodes and the pods bound to
 * them) and a workload forest (PodGroups, CompositePodGroups and their pods,
 * in any arrival order).  Callers feed it API objects and run cycles; each
 * cycle pops one root from the queue (a root CompositePodGroup, a standalone
 * PodGroup or a standalone pod), validates its hierarchy, places it with the
 * selected strategy, and returns the actions the caller applies: bind a pod to
 * a node, set a condition on an object, preempt (delete) a victim pod.  The
 * scheduler never touches the caller's trees; pk_sched_apply() is a helper
 * that applies a result to a JSON array of objects (what `podctl schedule`
 * does).
 *
 * Lifecycle: pk_sched_new() -> pk_sched_add()/update()/remove() ->
 * pk_sched_cycle() (repeatedly) -> pk_sched_free().
 */
#ifndef PODKERNEL_KERNEL_SCHED_H
#define PODKERNEL_KERNEL_SCHED_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/api/api.h"

struct pk_sched;
struct pk_writer;

/* Receives one trace line (no newline) of the explain trace. */
typedef void (*pk_sched_trace_fn)(void *arg, const char *line);

/*
 * Placement statistics for metrics (KEP-6012 "Monitoring Requirements"),
 * reported as they happen without any tracing:
 *   GENERATED   value candidate placements (topology domains in scope) one
 *               group's search generated
 *   EVALUATED   value 1: one candidate domain simulated
 *   SEARCH      value seconds one topology-constrained group's search over
 *               its candidates took
 *   ROOT_GATED  root ("Kind ns/name") held back by PreEnqueue; value 0
 *   REPAIR_IN_PLACE, REPAIR_WHOLE  value 1: a topology-constrained group
 *               placed before (its home domain remembered, or the annotation
 *               scheduling.podkernel.dev/home-domain) placed again after its
 *               pods were lost, in its home domain or, that one having no
 *               room, whole elsewhere
 */
enum pk_sched_stat {
	PK_SCHED_STAT_GENERATED,
	PK_SCHED_STAT_EVALUATED,
	PK_SCHED_STAT_SEARCH,
	PK_SCHED_STAT_ROOT_GATED,
	PK_SCHED_STAT_REPAIR_IN_PLACE, /* value 1: a group placed before, again in its domain */
	PK_SCHED_STAT_REPAIR_WHOLE,    /* value 1: one whose domain had no room, re-placed whole */
};
typedef void (*pk_sched_stat_fn)(void *arg, enum pk_sched_stat stat, double value,
				 const char *root);

struct pk_sched_opts {
	const char *strategy;	 /* placement strategy name; NULL: the default */
	FILE *explain;		 /* when set, the explain trace goes here */
	pk_sched_trace_fn trace; /* or here (both may be set) */
	void *trace_arg;
	pk_sched_stat_fn stat; /* placement statistics, or NULL */
	void *stat_arg;
	bool check;		    /* run the snapshot invariant check after every cycle */
	int64_t backoff_initial_ms; /* 0: 1000 */
	int64_t backoff_max_ms;	    /* 0: 10000 */
	/*
	 * A gang held back by PreEnqueue tells its pending pods why only once
	 * it has waited this long with its tree unchanged (0: at once): the
	 * pods of a gang still being created, a member arriving within each
	 * such spell, are told nothing, as kube-scheduler writes nothing for a
	 * pod PreEnqueue holds back.  The result's retry time covers the wait.
	 */
	int64_t gated_tell_ms;
	/*
	 * Pods with scheduling gates count toward their gang's minCount and
	 * the others are placed, as kube-scheduler does.  Set, a gang waits
	 * instead while any member is gated (podkernel's former default).
	 */
	bool gated_gangs_wait;
	/*
	 * The caller reads no message of a failed attempt (the simulator): a
	 * root whose need the cluster cannot hold in all (less free of some
	 * resource than the least its placement takes) fails without the
	 * strategy's search on its first attempt too, its pods told nothing.
	 * Unset, only a root unchanged since a failed attempt fails so, keeping
	 * that attempt's message.
	 */
	bool quiet_failures;
	/*
	 * Nodes and pods added are decoded once (NULL: each add decodes): the
	 * view of each object (by its address) is kept there and reused by
	 * the adds of the same object, in this scheduler or a later one, as
	 * placement checks that run the same cluster again and again add it.
	 * What is added is the same; the caller changes no object it added
	 * while the cache holds it (pk_sched_decoded_sweep lets go).
	 */
	struct pk_sched_decoded *decoded;
	/*
	 * Offline runs (pk_sched_run*): the cluster's controllers, run once on
	 * the run's objects before the scheduler reads them, writing through
	 * the run's in-memory writer (kernel/write/writer.h), as they would
	 * through the store or a kube-apiserver; a failure ends the run.  NULL:
	 * none.  podctl schedule and the queue controller's placement check
	 * run the resource claim controller (pk_claims_pass(),
	 * kernel/controllers/controllers.h).
	 */
	int (*controllers)(void *arg, json_t *objects, struct pk_writer *w);
	void *controllers_arg;
};

/* Decoded Nodes and Pods kept between schedulers (pk_sched_opts.decoded; one thread at a time). */
struct pk_sched_decoded;
int pk_sched_decoded_new(struct pk_sched_decoded **ret);
void pk_sched_decoded_free(struct pk_sched_decoded *d);
/* Let go of the objects no add used since the last sweep. */
void pk_sched_decoded_sweep(struct pk_sched_decoded *d);

/*
 * The spec.schedulerName podkernel answers to besides "default-scheduler"
 * (offline runs; attach mode's default --scheduler-name).
 */
#define PK_SCHED_NAME "podkernel"

/* Placement strategies: names in preference order (the first is the default). */
size_t pk_sched_strategy_count(void);
const char *pk_sched_strategy_name(size_t i);

/* NULL opts means defaults.  -ENOENT for an unknown strategy, -ENOMEM. */
int pk_sched_new(const struct pk_sched_opts *opts, struct pk_sched **ret);
void pk_sched_free(struct pk_sched *s);

/*
 * Add, replace or remove one object: Node, Pod, PodGroup, CompositePodGroup,
 * PriorityClass, PersistentVolumeClaim, PersistentVolume, StorageClass,
 * CSINode, Namespace (other kinds are accepted and ignored).  A pod in phase
 * Succeeded or Failed holds nothing: adding it removes the pod of its name.  The tree is only read
 * during the call.  Decoding errors go to errs with field paths (-EINVAL);
 * -E2BIG when more distinct resource names than the scheduler keeps.
 * update() is add() for an object that may already exist.
 */
int pk_sched_add(struct pk_sched *s, json_t *obj, struct pk_errors *errs);
int pk_sched_update(struct pk_sched *s, json_t *obj, struct pk_errors *errs);
int pk_sched_remove(struct pk_sched *s, const struct pk_type *kind, const char *ns,
		    const char *name);
/*
 * The home domain of group ns/name (PodGroup or CompositePodGroup): the
 * value of its topology key its last committed placement chose, else its
 * scheduling.podkernel.dev/home-domain annotation; a new string in *ret,
 * NULL when it has none.  -ENOENT: no such group; -ENOMEM.  A simulator that
 * withdraws a job's groups after a node loss hands it back as the annotation.
 */
int pk_sched_group_home(struct pk_sched *s, const struct pk_type *kind, const char *ns,
			const char *name, char **ret);
/*
 * The kinds the scheduler reads (pk_sched_add and pk_sched_remove take
 * them; any other kind it ignores), in the order a new scheduler is best
 * fed them: nodes, what the plugins consume (what pods refer to), groups,
 * pods.  NULL-terminated, static.
 */
const struct pk_type *const *pk_sched_kinds(void);
/* Is kind (a row of the kinds table; NULL: no) one of pk_sched_kinds()? */
bool pk_sched_reads(const struct pk_type *kind);
/*
 * A fingerprint of what scheduling reads of obj, an object of kind
 * (fingerprint.c): what the scheduler reads, or with loop what the
 * scheduling loop's controllers read besides (always a superset).  Equal
 * whatever the order of object members; an update that changes only other
 * fields (a status the scheduler wrote) keeps it.
 */
uint64_t pk_sched_fingerprint(const struct pk_type *kind, const json_t *obj, bool loop);
/*
 * Add n pods alike: pod (a Pod object) named names[0], ..., names[n-1] in
 * turn, as n pk_sched_add calls would, but decoded once (a simulator's
 * gang).  pod's metadata.name is left at the last name.  Stops at the first
 * error.
 */
int pk_sched_add_pods(struct pk_sched *s, json_t *pod, const char *const *names, size_t n,
		      struct pk_errors *errs);

enum pk_sched_action_kind {
	PK_SCHED_BIND,	    /* set spec.nodeName of pod ns/name to node */
	PK_SCHED_CONDITION, /* set condition type/status/reason/message on the object */
	PK_SCHED_PREEMPT,   /* delete victim pod ns/name (already given DisruptionTarget) */
	/*
	 * ResourceClaim ns/name: set status.allocation and status.reservedFor
	 * to those of status, removing the ones status lacks ({}: deallocate).
	 * A claim action comes before the bindings of the pods that use it.
	 */
	PK_SCHED_CLAIM,
	/*
	 * A PersistentVolumeClaim ns/name of a pod about to be bound: set its
	 * spec.volumeName to volume (a static volume chosen for it), or, with
	 * node set, its volume.kubernetes.io/selected-node annotation (the
	 * annotation is also in annotations[0]) so its provisioner makes the
	 * volume there.  Volume claim actions come before the binding they serve.
	 */
	PK_SCHED_VOLUME_CLAIM,
};

/* The annotation a claim's provisioner reads (kube-scheduler's VolumeBinding). */
#define PK_SCHED_ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"

/* Annotations a binding carries at most (a TPU slice pod: coordinates, worker id). */
#define PK_SCHED_BIND_ANNOTATIONS 2

struct pk_sched_kv {
	char *key, *value;
};

struct pk_sched_action {
	enum pk_sched_action_kind action;
	const struct pk_type *kind; /* of the object: its row of the kinds table */
	char *ns, *name;
	char *node;   /* BIND; VOLUME_CLAIM: the selected node */
	char *volume; /* VOLUME_CLAIM: spec.volumeName */
	/*
	 * BIND: annotations to set on the pod in the same write as the node
	 * (entries with a NULL key are unused; most bindings carry none).
	 */
	struct pk_sched_kv annotations[PK_SCHED_BIND_ANNOTATIONS];
	char *type, *status, *reason, *message; /* CONDITION */
	json_t *claim; /* CLAIM: the claim's new status (owned by the result) */
};

/* Outcome of the root a cycle processed. */
enum pk_sched_outcome {
	PK_SCHED_IDLE = 0,	/* nothing was eligible */
	PK_SCHED_SCHEDULED,	/* root Success: bindings committed */
	PK_SCHED_UNSCHEDULABLE, /* no binding; maybe preemption */
	PK_SCHED_UNRESOLVABLE,	/* no binding, no preemption */
	PK_SCHED_INVALID,	/* runtime hierarchy validation failed */
	PK_SCHED_GATED,		/* only PreEnqueue-gated roots were seen */
};

struct pk_sched_result {
	struct pk_sched_action *actions;
	size_t nactions, cap;
	enum pk_sched_outcome outcome;
	char *root;	  /* "Kind ns/name" of the processed root, or NULL */
	size_t bound;	  /* pods bound by this cycle */
	size_t preempted; /* victims */
	/* IDLE with a root waiting in backoff: the time it becomes eligible. */
	bool has_retry;
	int64_t retry_at_ms;
	void *strings; /* private: where the actions' strings live (freed with the result) */
};
void pk_sched_result_free(struct pk_sched_result *res);

/*
 * Run one scheduling cycle at time now_ms (any monotonic clock; only
 * differences matter, for backoff).  The result (owned by the caller) lists
 * the actions in the order they must be applied.  The scheduler's own state
 * already reflects them: bound pods are bound, preempted pods are gone (a
 * later pk_sched_remove of a victim answers -ENOENT).  Feeding back objects
 * whose only change is status (the conditions written) changes nothing.
 * Returns 0 or -errno; -EUCLEAN when opts.check found a broken invariant
 * (pk_sched_check_message() says which).
 */
int pk_sched_cycle(struct pk_sched *s, int64_t now_ms, struct pk_sched_result **ret);

/* Invariant check of the snapshot and forest; 0 or -EUCLEAN with why. */
int pk_sched_check(const struct pk_sched *s, char *why, size_t whylen);
/*
 * After pk_sched_cycle() returned -EUCLEAN (opts.check found a broken
 * invariant): the checker's message, naming what is wrong.  "" otherwise.
 * Owned by the scheduler, valid until its next cycle.
 */
const char *pk_sched_check_message(const struct pk_sched *s);

/*
 * A round: cycles until nothing is eligible, each result handed to the
 * caller (round.c).  The one driver of the cycles: the scheduling loop
 * batches the actions it writes, podctl schedule applies them to its
 * objects, the simulator to its cluster.
 *
 *   cycle_begins(arg, &now)  before each cycle (NULL: every cycle runs at
 *                            the round's now_ms): the cycle's time, or
 *                            false to end the round before it (stopping).
 *   result(arg, res, now)    after each cycle, its result (freed after):
 *                            < 0 fails the round, > 0 ends it after this
 *                            cycle (victims whose evictions must be written
 *                            first), 0 goes on.
 *   max_cycles               the most cycles of a round (0: no limit).
 *   until_quiet              an idle cycle that still acted (a deallocation
 *                            it told) is followed by another.
 */
struct pk_sched_round_ops {
	bool (*cycle_begins)(void *arg, int64_t *ret_now_ms);
	int (*result)(void *arg, const struct pk_sched_result *res, int64_t now_ms);
	size_t max_cycles;
	bool until_quiet;
};
struct pk_sched_round {
	size_t cycles; /* cycles run */
	bool idle;     /* it ended because nothing was eligible */
	/* idle, with a root in backoff: the time it becomes eligible */
	bool has_retry;
	int64_t retry_at_ms;
};
/* 0 (ret says how the round ended) or the first cycle's or result's -errno. */
int pk_sched_round(struct pk_sched *s, int64_t now_ms, const struct pk_sched_round_ops *ops,
		   void *arg, struct pk_sched_round *ret);

/*
 * A cycle's actions into the open batch of a writer (kernel/write/writer.h),
 * as every driver of the rounds writes them: a binding (with its
 * annotations) after the claims and volume claims its cycle allocated or
 * bound, a condition, a claim's status, a volume claim, a preemption as an
 * eviction.  ops may be NULL:
 *   rv(arg, kind, ns, name)  an object's resourceVersion precondition, as
 *                            the caller last saw it (NULL: none);
 *   failed(arg, action, r)   an action the writer refused (NULL: the first
 *                            refusal ends it, returned).
 */
struct pk_writer;
struct pk_sched_write_ops {
	uint64_t (*rv)(void *arg, const struct pk_type *kind, const char *ns, const char *name);
	void (*failed)(void *arg, const struct pk_sched_action *a, int r);
};
int pk_sched_result_write(struct pk_writer *w, const struct pk_sched_result *res,
			  const struct pk_sched_write_ops *ops, void *arg);

/*
 * Apply a result to a JSON array of objects (matched by kind, namespace,
 * name) through an in-memory writer (pk_writer_memory_new()): sets
 * spec.nodeName (and a binding's annotations), conditions, claims and
 * volume claims, and moves preempted pods from objects into preempted (an
 * array, may be NULL).  Objects not in the array are left alone.  now is
 * the conditions' time in seconds (0: the wall clock).
 */
int pk_sched_apply(json_t *objects, const struct pk_sched_result *res, json_t *preempted,
		   int64_t now);

/*
 * Offline run: feed objects (an array; not modified; an item may be the
 * compact text of an object, pk_compact_object) to a new scheduler, run
 * cycles until nothing changes (backoff waits are skipped on a virtual clock),
 * and return a new array with every object after the run, preempted pods left
 * out and returned in ret_preempted.  Decode errors go to errs (-EINVAL).
 */
int pk_sched_run(const json_t *objects, const struct pk_sched_opts *opts, json_t **ret_objects,
		 json_t **ret_preempted, struct pk_errors *errs);
/*
 * The same run into a new array that shares with objects every object the
 * run does not change (an object is copied at its first change, objects
 * itself is left as it was): what placement checks use, as they run the
 * same cluster again and again.  The caller changes neither array's objects.
 */
int pk_sched_run_shared(const json_t *objects, const struct pk_sched_opts *opts,
			json_t **ret_objects, json_t **ret_preempted, struct pk_errors *errs);
/*
 * The same shared run on a scheduler kept between runs of a growing cluster
 * (placement checks): *kept NULL (from 0), a new one, left in *kept; else
 * *kept holds objects[0..from) as the last run of it left them (that run's
 * objects, which are objects[0..from) here), and only the rest is added.
 * A run decides as pk_sched_run_shared() of the same objects: what drifts
 * in a scheduler from run to run is reset first or does not weigh, as
 * tests/kernel/sched/test_random.c checks on random clusters.  After a
 * run, *kept holds its objects, or is NULL where it would not be as a new
 * one (the run left a pod unbound, preempted pods or made objects); a
 * caller that does not keep the objects frees it (it would hold what the
 * caller dropped).  opts: a new scheduler's (a kept one has its own).  On
 * failure *kept is freed and NULL; -EAGAIN (the controllers changed one of
 * objects[0..from)): *kept is untouched and only a new scheduler can run.
 */
int pk_sched_run_kept(struct pk_sched **kept, const json_t *objects, size_t from,
		      const struct pk_sched_opts *opts, json_t **ret_objects,
		      json_t **ret_preempted, struct pk_errors *errs);
/*
 * The same run on a scheduler carried from an earlier cluster (placement
 * checks, pass after pass): *kept holds held, the objects of the last run
 * of it (or is NULL); objects[0..from) is the cluster now, with the
 * objects to place after it.  What differs between held and
 * objects[0..from) (pods and groups gone, come or changed) is fed to
 * *kept (kernel/sched/carry.c) and the rest added, as pk_sched_run_kept()
 * from from.  A run that leaves a pod unbound, preempts or makes objects
 * (where the order the pods came in could weigh), and a change that is not
 * carried (Nodes, priority classes, claims, what plugins read), are run on
 * a new scheduler instead: a run decides as pk_sched_run_shared() of the
 * same objects, as tests/kernel/sched/test_random.c checks on random
 * clusters.  *kept after the run as pk_sched_run_kept() leaves it.
 * objects[0..from) must name each object once, as a listing does.  1: the
 * carried scheduler ran; 0: a new one; < 0: failure, as pk_sched_run_kept().
 */
int pk_sched_run_carried(struct pk_sched **kept, const json_t *held, const json_t *objects,
			 size_t from, const struct pk_sched_opts *opts, json_t **ret_objects,
			 json_t **ret_preempted, struct pk_errors *errs);
/*
 * The same run applied to objects itself (no copy: what podctl schedule uses,
 * as it has no further use for its input): bound pods and conditions are set
 * in place and preempted pods moved from objects to ret_preempted; objects
 * the run never changes (all but pods and groups) are replaced by their
 * compact text (pk_compact_object), which pk_write_list writes out as they
 * were.  On failure objects may be partly changed.
 */
int pk_sched_run_in_place(json_t *objects, const struct pk_sched_opts *opts, json_t **ret_preempted,
			  struct pk_errors *errs);

/*
 * The workload profile (kernel/sched/strand.c): the classes of accelerator
 * pods seen recently, which the fit strategy's stranding score weighs.
 * Each class is one accelerator resource, a device count per pod and the
 * accelerator models (accelerator.podkernel.dev/product values) its pods
 * accept; counts decay with a half-life of 1,024 pods seen.
 */
struct pk_sched_profile_entry {
	char resource[64];
	char models[160];	  /* accepted models, comma-separated; "" for any */
	double devices;		  /* per pod */
	double share;		  /* of the recent accelerator pods */
	double cpu_per_device;	  /* cores, mean */
	double memory_per_device; /* bytes, mean */
};
/* Up to max classes into ret; returns how many. */
size_t pk_sched_profile(const struct pk_sched *s, struct pk_sched_profile_entry *ret, size_t max);
/* Pods the profile has noted since the scheduler was made. */
uint64_t pk_sched_profile_seen(const struct pk_sched *s);

#endif /* PODKERNEL_KERNEL_SCHED_H */
