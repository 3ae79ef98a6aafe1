/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-forest.h — the workload forest (forest.c): the scheduler's copies of
 * pods and of PodGroups and CompositePodGroups keyed by "namespace/name", the
 * queue of roots (queue.c), the victim floor, and the runtime validation of a
 * hierarchy (hierarchy.c).  Nothing here borrows from a caller's jansson tree.
 * The forest and the queue sit above the constraint plugins (a pod that
 * arrives has its constraints parsed, plugin.c) and the snapshot; the
 * plugins read the forest's data but call nothing in it.  Private to
 * kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_FOREST_H
#define PODKERNEL_KERNEL_SCHED_FOREST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"
#include "kernel/lib/map.h"
#include "kernel/sched/sched-common.h"
#include "topology/topology.h"

struct pk_sched;
struct sc_cons;

struct sc_sel_req {
	char *key;
	bool field; /* matchFields: key is metadata.name, compared with the node's name */
	enum pk_selector_op op;
	char **values;
	size_t nvalues;
};
struct sc_sel_term {
	struct sc_sel_req *reqs;
	size_t nreqs;
};

struct sc_toleration {
	char *key, *value;
	enum pk_toleration_op op;
	bool has_effect;
	enum pk_taint_effect effect;
};

/*
 * What the scheduler last told about an object, to write each change once:
 * a 64-bit FNV-1a fingerprint of status, reason and message (0: nothing
 * said yet), so checking a condition allocates nothing.
 */
struct sc_cond_memo {
	/* fp: 63 bits of the fingerprint (memo_update()), so that the memo
	 * takes 8 bytes of every pod; gated: the last thing said was a
	 * PreEnqueue wait (said once, cycle.c) */
	uint64_t fp : 63, gated : 1;
};

/*
 * What the cycles record of a pod, apart from what the pod says (as
 * kube-scheduler keeps CycleState apart from PodInfo): where placement
 * assumed or simulated it away, why it did not fit, and its TPU slice
 * position.  Everything here is the scheduler's own; none of it comes
 * from the pod's object.
 */
/*
 * A pod's last placement failure (sc_pod_set_misfits): made when it first
 * fails, so the many pods that never did (a backlog's) carry none.
 */
struct sc_pod_fail {
	char *why; /* built on demand (sc_pod_why) */
	size_t scope_n;
	int misfit[_SC_MISFIT_MAX];
	int short_of[SC_MAX_RES];
};
struct sc_pod_cycle {
	int assumed;		  /* simulation: node index or -1 */
	bool sim_removed;	  /* simulation: taken from its node (preemption's what-if) */
	struct sc_pod_fail *fail; /* the last placement failure, NULL: none */
	/* TPU slice (slice.c): rank and chip position in the box of the last
	 * placement of its slice group; -1 when never placed in one. */
	int slice_worker;
	struct topo_coord slice_at;
};

/* A pod as the scheduler keeps it: what its object says, its place, its cycle record. */
struct sc_pod {
	char *key, *ns, *name;	/* key: the forest's pods map borrows it */
	int64_t creation;	/* INT64_MIN: none */
	uint64_t seq;		/* arrival order */
	char *group_key;	/* "ns/podGroupName" or NULL (interned: forest strings) */
	struct sc_group *group; /* leaf group (maybe a placeholder) or implicit */
	int node;		/* bound node index, -1 pending or unknown node */
	int share_dev;		/* the device its share is charged to (sc_devs), or -1 */
	char *node_name; /* spec.nodeName or NULL (interned in the forest's strings when read from
			    the object) */
	/* the small fields together: no padding between them (one per cluster pod) */
	bool deleting, preempted, has_prio;
	bool node_name_own; /* node_name is the pod's own copy (a binding's), not interned */
	int32_t prio;
	uint32_t nsel, nterms, ntols;
	uint32_t apos; /* index in the forest's all_pods */
	/* what it requests, by resource id: shared by the pods asking the same
	 * (the forest's reqs), never written once the pod is added */
	const int64_t *req;
	struct sc_label *sel;
	struct sc_sel_term *terms;
	struct sc_toleration *tols;
	char *prio_class;
	uint64_t fp;	      /* fingerprint of what scheduling reads (pk_sched_fingerprint) */
	struct sc_cons *cons; /* placement constraints (plugin.h), NULL: none */
	struct sc_cond_memo memo;
	struct sc_pod_cycle cycle;
};

/* How a group's failure message is built, lazily: formatting is costly. */
enum sc_why { SC_WHY_TEXT = 0, SC_WHY_PRESIM, SC_WHY_LEAF, SC_WHY_POD };

/* What a PodGroup or CompositePodGroup object says (forest.c parses it). */
struct sc_group_spec {
	int64_t creation;
	char *parent_key;
	char *workload;
	enum pk_policy policy;
	int32_t min;
	enum pk_disruption disruption;
	char *topo_key;
	char *home; /* annotation scheduling.podkernel.dev/home-domain, NULL: none */
	/* TPU slice: the slice-shape annotation (slice_bad: it does not parse) */
	bool has_slice, slice_bad;
	/* spec.resourceClaims: a CompositePodGroup's are refused (hierarchy.c); a
	 * PodGroup's (the object, claims_obj) are shared by its pods (claims.c),
	 * claims_gen changing whenever the object does (0: none) */
	bool has_claims;
	json_t *claims_obj;
	uint64_t claims_gen;
	struct topo_shape slice;
	bool has_prio;
	int32_t prio;
	char *prio_class;
};

/*
 * A root's place in the queue (queue.c), as kube-scheduler's QueuedPodInfo
 * is kept apart from the pod: made when a group first becomes a root (and
 * kept while it lives, should it become one again), so groups below the
 * roots carry none.
 */
struct sc_group_queue {
	/* Parked (qheap SC_QUEUE_PARK + r): the treap's links (before, after in rank order),
	 * the least need (of the treap's resource) in each link's subtree, its own, and its
	 * rank when it entered (with prio_cache); in the record's first cache line (the record
	 * is aligned to one), as a search reads one line a step. */
	struct sc_group_queue *pl, *pr;
	int64_t lmin, rmin; /* INT64_MAX: an empty subtree */
	int64_t pneed;	    /* need[r] of its treap's resource r */
	int64_t tcreation;
	uint64_t tseq;
	int32_t prio_cache;
	/* What a pick and a backoff's end read, in the second line. */
	struct sc_group *g; /* the group whose record this is */
	uint32_t qpos;	    /* index in its heap (but the backoff heap's, which keeps none) */
	uint32_t bstamp;    /* the stamp of its live entry in the backoff heap */
	int64_t backoff_until;
	uint64_t tried_gen;
	uint64_t checked_epoch; /* full_epoch when it last passed PreEnqueue and validation */
	uint64_t mark_next;	/* parked: the first of the queue's marks it has not replayed */
	int attempts;
	bool is_root; /* in the forest's roots */
	bool done, dirty, parked_invalid;
	unsigned char qheap; /* SC_QUEUE_NONE, _ACTIVE or _BACKOFF */
	bool qtouched;	     /* listed in the queue's touched roots */
	bool prio_valid;     /* prio_cache holds sc_root_priority() at prio_epoch */
	bool need_ok;	     /* need holds for its pods as they are (it is not dirty) */
	bool present;	     /* g->present, kept with it */
	bool kept;	     /* tcreation and tseq hold g's (set when parked, cleared by a touch) */
	bool bgarbage;	     /* the backoff heap may hold stale entries of it */
	int64_t need[SC_MAX_RES]; /* the least it takes of each resource to place */
	uint64_t prio_epoch;
	bool gated;	     /* held back by PreEnqueue since gated_since */
	bool gated_told;     /* its pods were told why in this gated spell */
	int64_t gated_since; /* ... or since its tree last changed, until told */
	int64_t tried_at;    /* the time of its last attempt */
	int64_t bkey;	     /* the backoff's end its live backoff entry holds */
};

/*
 * A group's last evaluation (sc_record, place_common.c): valid for the cycle
 * whose stamp it carries.
 */
struct sc_group_eval {
	uint64_t stamp;
	enum sc_status status;
	/* KEP-6012's counts over the group's children (its pods, or its child groups) */
	int S;	   /* placed: Success */
	int R;	   /* not tried yet, may still be admissible */
	int U;	   /* Unschedulable: preemption may help */
	int UU;	   /* UnschedulableAndUnresolvable: nothing in this cycle helps */
	int M;	   /* the minimum the group needs (minCount, minGroupCount; 1 basic) */
	char *why; /* built on demand from why_kind (sc_group_why) */
	int why_kind;
	struct sc_pod *why_pod;
};

struct sc_group {
	char *key, *ns, *name;
	bool present; /* the object was seen (else a placeholder) */
	bool composite;
	bool implicit; /* the one-pod root of a standalone pod */
	uint64_t seq;
	struct sc_group_spec spec;
	bool scheduled;		 /* InitiallyScheduled True seen or written */
	struct sc_group *parent; /* registered under this (may be a placeholder) */
	struct sc_vec children;	 /* struct sc_group * */
	struct sc_vec pods;	 /* struct sc_pod * */
	bool sorted;
	struct sc_group_queue *q; /* NULL: never a root */
	struct sc_group_eval eval;
	struct sc_cond_memo memo;
	bool disrupted; /* DisruptionTarget written (preempt.c) */
	/*
	 * Repair in the same domain (place_kep.c, cycle.c): home, the value of
	 * its topology key its subtree was last committed in; pick, this
	 * cycle's choice (valid at pick_stamp) and whether it was a repair.
	 */
	char *home;
	char *pick;
	uint64_t pick_stamp;
	enum sc_repair { SC_REPAIR_NONE, SC_REPAIR_IN_PLACE, SC_REPAIR_WHOLE } pick_repair;
	/*
	 * Set for a root's tree before each attempt (sc_group_note_gated):
	 * gated_wait, the opt-in policy under which a gang waits while a
	 * member is gated; else gated, this leaf's gated pending pods, which
	 * count toward its minCount as kube-scheduler counts them.
	 */
	bool gated_wait;
	int gated;
	/* The placement strategy's own state for this group (state NULL: none),
	 * opaque to the rest: the strategy allocates it and says how it is
	 * freed, which happens with the group. */
	struct sc_group_strat {
		void *state;
		void (*free)(void *state);
	} strat;
};

/*
 * The queue (queue.c): eligible roots in two binary heaps, active (by rank)
 * and backoff (by the end of their backoff); roots changed since the last
 * pick are listed in touched and placed at the next pick.  A root that is
 * not eligible (parked until its subtree or the cluster changes, or done)
 * is in neither heap, so picking costs O(log roots), not a scan.
 */
enum {
	SC_QUEUE_NONE,
	SC_QUEUE_ACTIVE,
	SC_QUEUE_BACKOFF,
	SC_QUEUE_WAIT,
	SC_QUEUE_DEFER,
	SC_QUEUE_PARK
};
/* A root in a heap with what the heap orders it by (queue.c heap_ent). */
struct sc_heap_ent {
	int64_t k;	  /* active: its priority negated; backoff: its backoff's end */
	int64_t creation; /* active: its creationTimestamp; backoff: the entry's stamp */
	uint64_t seq;
	struct sc_group_queue *q; /* the root's queue record (q->g its group) */
};
struct sc_heap {
	struct sc_heap_ent *v;
	size_t n, cap;
};
/*
 * A root that failed waits for the cluster to change (queueing hints, as
 * kube-scheduler's unschedulable pods do): in waiting (unordered) until any
 * change, or parked in park[r] (a treap in rank order, each subtree knowing
 * its least need of resource r, one the root lacked) when the cluster has
 * too little free in all for it to place anything.  A pick takes the best
 * root in rank order of the active heap and of the parked roots whose need
 * the cluster now holds, so freed capacity wakes a parked root only when
 * its turn comes and the capacity is still there.  A parked root's retries
 * that would have failed are replayed when it wakes (attempts, backoff),
 * from the marks: the time and generation of every change the queue saw
 * while roots were parked.
 */
#define SC_PATH_MAX 64
struct sc_queue_mark {
	int64_t t;
	uint64_t gen;
};
struct sc_queue {
	struct sc_heap active, backoff, waiting;
	/* Parked roots whose turn came while their backoff runs on, until the
	 * round ends: then those the cluster still has room for back off, the
	 * others park again (unordered). */
	struct sc_heap deferred;
	struct sc_group_queue *park[SC_MAX_RES];
	/* The links down to the last best parked root a pick found (path_node), valid while no
	 * park changed since (pver, bumped by every change, still path_ver), so that it leaves
	 * its park without a second descent. */
	struct sc_group_queue **path[SC_PATH_MAX];
	int npath;
	struct sc_group_queue *path_node;
	uint64_t pver, path_ver;
	struct sc_vec touched;
	uint64_t gen_seen, epoch_seen, cap_seen;
	uint64_t full_epoch; /* bumps when anything but freed capacity changed */
	bool started;
	size_t nparked;
	int32_t parked_prio; /* the highest priority parked since none was */
	struct sc_queue_mark *marks;
	size_t nmarks, capmarks;
	uint64_t marks_base; /* the number of marks dropped before marks[0] */
};

struct sc_forest {
	/* key -> struct sc_group* (present or placeholder), one map per kind:
	 * [0] PodGroups, [1] CompositePodGroups (separate resources; the same
	 * name may be both) */
	struct pk_map groups[2];
	struct pk_map pods;	/* key -> struct sc_pod* */
	struct pk_map strings;	/* the pods' node names and group keys (pk_intern) */
	struct pk_map reqs;	/* the pods' request vectors, one per distinct one (forest.c) */
	struct sc_vec all_pods; /* in no particular order: a removal moves the last pod */
	struct sc_vec all_groups;
	struct sc_vec roots; /* present parentless groups and implicit groups */
	uint64_t seq;
	uint64_t version; /* bumps on every add or remove */
	struct sc_queue queue;
	/* Groups ("P"/"C" + key) and pods (key) added or unlinked since the
	 * last report of unrooted hierarchies (cycle.c); malloc'ed strings. */
	struct sc_vec unrooted_groups, unrooted_pods;
	/*
	 * Home domains of groups removed lately, "P"/"C" + key -> struct
	 * sc_recent_home: a group made again under the same name soon after (a
	 * JobSet restart, a simulator's retry) takes its home back.
	 */
	struct pk_map recent_homes;
};
struct sc_recent_home {
	char *home;
	uint64_t at; /* forest version at the removal */
};
/* A removed group's home is taken back within this many forest changes; at most this many kept. */
#define SC_RECENT_HOME_WINDOW 100000
#define SC_RECENT_HOMES_MAX 4096

/* forest.c */
void sc_forest_init(struct sc_forest *f);
/* Drop a pod's node name (interned or its own copy); it is NULL after. */
void sc_pod_node_name_drop(struct sc_forest *f, struct sc_pod *p);
void sc_forest_fini(struct sc_forest *f);
struct sc_group *sc_forest_group(struct sc_forest *f, const char *key, bool composite, bool create);
/*
 * The group of that key, or NULL: a lookup in the forest's data, which the
 * constraint plugins below the forest (claims.c) may make without calling
 * up into forest.c.
 */
static inline struct sc_group *sc_forest_find(const struct sc_forest *f, const char *key,
					      bool composite)
{
	return pk_map_get(&f->groups[composite], key);
}
int sc_forest_add_group(struct sc_forest *f, const struct pk_group *view, bool scheduled);
int sc_forest_remove_group(struct sc_forest *f, const char *key, bool composite);
int sc_forest_add_pod(struct pk_sched *s, const struct pk_pod *view);
int sc_forest_remove_pod(struct pk_sched *s, const char *key);
void sc_group_sort(struct sc_group *g);
/*
 * The victim floor: a lower bound of the priorities of bound pods, so a
 * preemptor no bound pod ranks below is answered without looking at every
 * pod.  Bindings lower it; a group or priority-class change that may lower
 * a bound pod's priority makes it recomputed on the next question.
 */
void sc_victim_floor_note(struct pk_sched *s, const struct sc_pod *pod);
void sc_victim_floor_invalidate(struct pk_sched *s);
/* May any bound pod rank below prio?  Recomputes the floor when stale. */
bool sc_victim_floor_below(struct pk_sched *s, int32_t prio);
/* Walk up to the root; NULL when an ancestor is missing or on a cycle (why). */
struct sc_group *sc_group_root(struct sc_group *g, char *why, size_t whylen);
/* Mark g and its ancestors as changed; the top one is queued for placement. */
void sc_group_touch(struct sc_forest *f, struct sc_group *g);
const char *sc_group_kind(const struct sc_group *g);

/* queue.c: PreEnqueue and root ordering */
bool sc_group_admissible(const struct sc_group *g, int depth, struct sc_buf *why);
/* A gated pod that holds g back (a gang waits for all its members), or NULL. */
const struct sc_pod *sc_group_gated_pod(const struct sc_group *g, bool gang, int depth);
/* Set gated_wait and gated on g's tree (before PreEnqueue and placement). */
void sc_group_note_gated(struct sc_group *g, bool wait, int depth);
/* A pod's own priority (spec.priority, else a known spec.priorityClassName):
 * false when it has none and inherits its group's. */
bool sc_pod_explicit_priority(const struct pk_sched *s, const struct sc_pod *pod,
			      int32_t *ret_prio);
int32_t sc_pod_priority(const struct pk_sched *s, const struct sc_pod *pod);
int32_t sc_group_priority(const struct pk_sched *s, const struct sc_group *g, bool *ret_explicit);
int32_t sc_root_priority(const struct pk_sched *s, const struct sc_group *root);
/*
 * Best eligible root, or NULL; *ret_wait gets the earliest backoff end.  The
 * root returned leaves the queue; sc_queue_place() puts it back after its
 * cycle when it is still eligible.
 */
struct sc_group *sc_queue_pick(struct pk_sched *s, int64_t now, int64_t *ret_wait);
/* Root g passed PreEnqueue and validation: until something but capacity changes, it would again. */
void sc_queue_checked(struct pk_sched *s, struct sc_group *g);
/* The queue's invariants (its heaps, its parks); -EUCLEAN and why when one is broken. */
int sc_queue_check(const struct pk_sched *s, char *why, size_t whylen);
void sc_queue_place(struct pk_sched *s, struct sc_group *g, int64_t now);
/* g (changed) is placed at the next pick. */
void sc_queue_touched(struct sc_queue *q, struct sc_group *g);
/* g leaves the queue (no longer a root, or about to be freed). */
void sc_queue_forget(struct sc_queue *q, struct sc_group *g);
void sc_queue_fini(struct sc_queue *q);
void sc_queue_order(struct pk_sched *s, struct sc_vec *ret_roots); /* test helper */
/*
 * Can root g place nothing now, whatever the strategy: unable to preempt
 * (no bound pod has a lower priority), and the cluster has less free in all
 * of some resource than the least it would take (its need, made anew)?
 */
bool sc_queue_cannot_place(struct pk_sched *s, struct sc_group *g);
/* Root g's attempt at now failed without a search (known to): its backoff grows. */
void sc_queue_failed(struct pk_sched *s, struct sc_group *g, int64_t now);
/* The backoff after a root's attempts-th failed attempt in a row. */
int64_t sc_backoff_ms(const struct pk_sched *s, int attempts);

/* hierarchy.c: runtime validation; 0 or -EINVAL with the violation in why */
int sc_hierarchy_validate(const struct pk_sched *s, struct sc_group *root, char *why,
			  size_t whylen);

#endif
