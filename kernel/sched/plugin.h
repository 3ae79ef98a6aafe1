/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin.h — per-pod placement constraints as plugins (kube-scheduler's
 * SchedulingGates, InterPodAffinity, PodTopologySpread, NodePorts,
 * NodeAffinity scoring, VolumeBinding, VolumeRestrictions, VolumeZone and
 * NodeVolumeLimits, and the refusal of what the core does not implement).
 *
 * Each plugin is an ops table (struct sc_plugin_ops, the table in plugin.c)
 * with kube-scheduler's extension points; the core calls them through the
 * table (the sc_cons_* calls below), never a plugin by name:
 *
 *   parse(s, obj, pod)     once, when the pod is added: reads the plugin's
 *                          fields of the pod's object into the pod's slot
 *                          (pod->cons->state[id]).  A field the plugin does
 *                          not implement, or one that does not parse, makes
 *                          the pod UnschedulableAndUnresolvable with a
 *                          message naming the field path (kept in pod->cons->refuse):
 *                          never a binding that ignores it.
 *   pre_enqueue(pod)       PreEnqueue: what the pod waits for before it may
 *                          enter a cycle ("has scheduling gates (x)"), or
 *                          NULL.  Such a pod is never placed; a gang waits
 *                          for it (queue.c) and the pod is told wait_reason
 *                          and wait_message.
 *   pre_filter(pod)        PreFilter: why no node can take the pod (a claim
 *                          missing), or NULL; the pod is then
 *                          UnschedulableAndUnresolvable.
 *   filter(snap, pod, n)   Filter: can pod go on node n given everything
 *                          bound and assumed now: SC_FIT or the misfit
 *                          reason (enum sc_misfit; condition messages count
 *                          them like taints and resources).
 *   score(snap, pod, n)    Score: the pod's preferences for node n (higher
 *                          better); the strategies rank by it before packing.
 *   charge(snap, pod, n, sign)
 *                          Reserve (+1) and Unreserve (-1): pod was added to
 *                          or taken from node n.  The snapshot calls it,
 *                          through the hooks the table registers
 *                          (sc_cons_register), from the one place usage
 *                          changes (bind, unbind, assume, assume_removed,
 *                          revert, commit), for every pod, so the plugins'
 *                          per-node and per-domain state follows the undo
 *                          log exactly: a gang's members see each other's
 *                          tentative placements, a reverted gang holds
 *                          nothing, and preemption's simulated removal of a
 *                          victim releases its ports and affinity counts.
 *   pre_bind(ctx, pod, node)
 *                          PreBind: a placement is committed; what the pod
 *                          needs written before its binding (its claims'
 *                          allocations, its volumes) goes into the cycle's
 *                          result, ahead of the binding.
 *   cycle(s, res)          a cycle begins: what the plugin owes since the
 *                          last one (deallocated claims) goes into res.
 *   pod_gone(s, pod)       the pod leaves for good (deleted or preempted).
 *   why(pod)               what the plugin adds to the pod's failure message
 *                          (why its last filter refused), or NULL.
 *   group_changed(pod)     the pod's group object changed (a PodGroup's
 *                          claims): the plugin may need a slot for the pod.
 *   complete(s)            every object of the cluster is in (an offline
 *                          run, whose input is the whole cluster): what no
 *                          object backs any more goes (a claim reserved
 *                          for a pod that is not there, as the resource
 *                          claim controller drops it).
 *   release(s, pod)        the pod leaves the scheduler (or is parsed again).
 *   events                 the kinds of object the plugin consumes besides
 *                          pods, with its handlers (EventsToRegister): each
 *                          handler returns SC_HINT_QUEUE when the change may
 *                          let a waiting pod fit (its QueueingHint), which
 *                          requeues the roots parked for want of room (a
 *                          handler's error other than -ENOENT requeues too:
 *                          its state may have changed in part), or
 *                          SC_HINT_SKIP.
 *
 * The shared index (struct sc_terms, in the snapshot; terms.c): every distinct
 * "term" a pod states, i.e. a conjunction of (namespaces, labelSelector)
 * matchers over one topology key, is registered once, refcounted by the pods
 * that state it.  For each term the index keeps, per node and per domain of
 * its topology key, how many bound or assumed pods match it, and per domain
 * how many bound or assumed pods own it as a required anti-affinity term
 * (the symmetric rule).  Counts are built on first use by one pass over the
 * pods and then kept by charge(): a pod added to a node costs one selector
 * test per registered term, never a walk over nodes or pods.  Dropping the
 * snapshot's partitions (a node came, went or changed labels) marks every
 * term to be rebuilt.  kube-scheduler's PreFilter state holds the same
 * counts, built again for every pod; here they persist.
 *
 * Pods without any constraint pay one NULL test in filter and score; a pod
 * that matches no registered term pays one selector test per term in charge.
 *
 * Layers, each calling only those below it: the snapshot; the label
 * selectors and the term index (terms.c) and the static filters (filter.c);
 * the plugins; the table and what the core calls (plugin.c).  The snapshot
 * reaches the plugins only through the hooks sc_cons_register() gives it,
 * and the term index asks interpod.c which pods own a term only through its
 * owns callback.
 */
#ifndef PODKERNEL_KERNEL_SCHED_PLUGIN_H
#define PODKERNEL_KERNEL_SCHED_PLUGIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Included by sched-snapshot.h (after sched-common.h's containers and enum sc_misfit). */
struct pk_sched;
struct pk_sched_result;
struct sc_ctx;
struct sc_snapshot;
struct sc_pod;
struct sc_part;
struct sc_node;

/* Limits on what one pod may state (hostile input). */
#define SC_CONS_MAX_TERMS 64  /* affinity terms, spread constraints, ports */
#define SC_CONS_MAX_REQS 64   /* requirements of one label selector */
#define SC_CONS_MAX_VALUES 64 /* values of one requirement, namespaces of a term */

enum sc_plugin_id {
	SC_PLUGIN_FIELDS,   /* fields the core does not implement: refused by name */
	SC_PLUGIN_GATES,    /* spec.schedulingGates (PreEnqueue) */
	SC_PLUGIN_NODEPREF, /* preferred node affinity (score) */
	SC_PLUGIN_INTERPOD, /* pod affinity and anti-affinity */
	SC_PLUGIN_SPREAD,   /* topology spread constraints */
	SC_PLUGIN_PORTS,    /* host ports */
	SC_PLUGIN_CLAIMS,   /* spec.resourceClaims (dynamic resource allocation) */
	SC_PLUGIN_VOLUMES,  /* persistent volume claims, CSI attach limits (volumes.c) */
	_SC_PLUGIN_MAX,
};

/* ---- label selectors (metav1.LabelSelector), terms.c ---------------------------- */

enum sc_lop { SC_LOP_IN, SC_LOP_NOT_IN, SC_LOP_EXISTS, SC_LOP_NOT_EXISTS };
struct sc_lreq {
	char *key;
	enum sc_lop op;
	char **values;
	size_t nvalues;
};
/* A null selector matches nothing; an empty one matches everything. */
struct sc_lsel {
	bool null;
	struct sc_lreq *reqs;
	size_t nreqs;
};

/* Labels of a pod or namespace: key/value pairs. */
struct sc_labels {
	char **kv; /* key0, value0, key1, value1, ... */
	size_t n;  /* pairs */
};
const char *sc_labels_get(const struct sc_labels *l, const char *key);
bool sc_lsel_match(const struct sc_lsel *sel, const struct sc_labels *l);
/* metadata.labels of obj; 0 or -ENOMEM. */
int sc_labels_parse(json_t *obj, struct sc_labels *ret);
void sc_labels_clear(struct sc_labels *l);
/*
 * A metav1.LabelSelector found at path (v absent or null: the null
 * selector); -EINVAL with "path...: why" appended to why, -ENOMEM.
 */
int sc_lsel_parse(json_t *v, const char *path, struct sc_lsel *ret, struct sc_buf *why);
/* Append a requirement (values copied); -ENOMEM. */
int sc_lsel_add(struct sc_lsel *sel, const char *key, enum sc_lop op, const char *const *values,
		size_t nvalues);
void sc_lsel_clear(struct sc_lsel *sel);

/* ---- the term index, terms.c -------------------------------------------------- */

/* Which pods a term looks at: namespaces and a label selector. */
struct sc_matcher {
	char **ns; /* explicit namespaces (term.namespaces or the owner's own) */
	size_t nns;
	bool has_nssel; /* namespaceSelector given ({} matches every namespace) */
	struct sc_lsel nssel;
	struct sc_lsel sel;
	bool live_only; /* terminating pods do not count (PodTopologySpread's terms) */
};

struct sc_term {
	char *id;	/* canonical text (the index's key) */
	char *topo_key; /* topologyKey */
	struct sc_matcher *m;
	size_t nm; /* matchers ANDed: a pod counts when it matches all */
	int refs;
	bool built;	       /* counts below are current */
	struct sc_part *part;  /* the topology key's domains (when built) */
	int *node_cnt;	       /* per node: matching pods */
	int *dom_cnt;	       /* per domain: matching pods */
	int *own_cnt;	       /* per domain: pods owning it as required anti-affinity */
	int64_t total, owners; /* sums of dom_cnt, own_cnt */
	size_t nnodes;
};

struct sc_terms {
	struct pk_map byid; /* id -> struct sc_term * */
	struct sc_term **v;
	size_t n, cap;
	uint64_t version;	   /* bumps when a term is added or removed */
	int64_t owners;		   /* sum of every term's owners */
	const struct sc_vec *pods; /* every pod (the forest's), for building counts */
	struct pk_map ns_labels;   /* namespace -> struct sc_labels * (Namespace objects) */
	struct sc_vec ns_all;	   /* those labels, owned */
	uint64_t charges;	   /* bumps on every charge (cache key of per-pick state) */
	bool stale;		   /* some term is not built */
	/* whether pod owns term as a required anti-affinity term (interpod.c's
	 * sc_interpod_owns, set by sc_cons_register; NULL: nobody owns any) */
	bool (*owns)(const struct sc_pod *pod, const struct sc_term *term);
	/* interpod.c: the owned terms the last filtered pod matches */
	const struct sc_pod *sym_pod;
	uint64_t sym_version;
	struct sc_term **sym;
	size_t nsym, capsym;
};

/* Register (one more user) the term described; NULL on ENOMEM. */
struct sc_term *sc_terms_get(struct sc_terms *t, const char *topo_key, struct sc_matcher *m,
			     size_t nm);
void sc_terms_put(struct sc_terms *t, struct sc_term *term);
/* The term's counts, built if needed; -ENOMEM. */
int sc_term_build(struct sc_snapshot *snap, struct sc_term *term);
/* Every term built (what the filters call first); -ENOMEM. */
int sc_terms_ready(struct sc_snapshot *snap);
/* pod was added to (+1) or taken from (-1) node: move the counts of the terms it matches. */
void sc_terms_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign);
/* The snapshot's partitions were dropped: terms rebuild on next use. */
void sc_terms_parts_dropped(struct sc_snapshot *snap);
/* Node a pod occupies in the snapshot now (bound or assumed), or -1. */
int sc_pod_where(const struct sc_pod *pod);
/* Invariant check of the index: counts equal a recount; 0 or -EUCLEAN. */
int sc_terms_check(const struct sc_snapshot *snap, char *why, size_t whylen);
/* Is other a pod that pod's required pod affinity asks for (matches its terms)? */
bool sc_interpod_target(const struct sc_terms *t, const struct sc_pod *pod,
			const struct sc_pod *other);
/* The topologyKey of pod's first required pod affinity term, or NULL (interpod.c). */
const char *sc_interpod_affinity_key(const struct sc_pod *pod);
/* Whether pod owns term as a required anti-affinity term (interpod.c). */
bool sc_interpod_owns(const struct sc_pod *pod, const struct sc_term *term);
/* Does pod (namespace ns, labels l) match every matcher of term? */
bool sc_term_matches(const struct sc_terms *t, const struct sc_term *term, const char *ns,
		     const struct sc_labels *l);
/*
 * Would every namespaceSelector see namespace ns labelled a as labelled b?
 * Either may be NULL (no Namespace object): the name label alone.
 */
bool sc_ns_labels_same(const struct sc_labels *a, const struct sc_labels *b, const char *ns);
void sc_matcher_clear(struct sc_matcher *m);
void sc_terms_fini(struct sc_terms *t);

/* ---- a pod's constraints ------------------------------------------------------ */

struct sc_cons {
	char *refuse; /* "field.path: why": the pod is UnschedulableAndUnresolvable */
	struct sc_labels labels;
	void *state[_SC_PLUGIN_MAX];
	bool scores;	    /* some plugin scores this pod */
	bool never_preempt; /* spec.preemptionPolicy: Never (fields.c) */
};

/* What an event handler says (kube-scheduler's QueueingHint). */
enum { SC_HINT_SKIP = 0, SC_HINT_QUEUE = 1 };

/* Objects of one kind a plugin consumes, and its handlers (remove may be NULL). */
struct sc_plugin_event {
	const struct pk_type *kind; /* its row of the kinds table (&pk_type_storage_class) */
	int (*set)(struct pk_sched *s, json_t *obj);
	int (*remove)(struct pk_sched *s, enum pk_kind kind, const char *ns, const char *name);
};

struct sc_plugin_ops {
	const char *name;
	int (*parse)(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why);
	void (*release)(struct pk_sched *s, struct sc_pod *pod);
	const char *(*pre_enqueue)(const struct sc_pod *pod);
	const char *wait_reason, *wait_message; /* what a pod pre_enqueue holds back is told */
	const char *(*pre_filter)(const struct sc_pod *pod);
	enum sc_misfit (*filter)(struct sc_snapshot *snap, const struct sc_pod *pod, int node);
	int64_t (*score)(struct sc_snapshot *snap, const struct sc_pod *pod, int node);
	void (*charge)(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign);
	int (*pre_bind)(struct sc_ctx *ctx, const struct sc_pod *pod, const char *node);
	int (*cycle)(struct pk_sched *s, struct pk_sched_result *res);
	void (*pod_gone)(struct pk_sched *s, const struct sc_pod *pod);
	const char *(*why)(const struct sc_pod *pod);
	int (*group_changed)(struct sc_pod *pod);
	void (*complete)(struct pk_sched *s);
	const struct sc_plugin_event *events;
	size_t nevents;
};

extern const struct sc_plugin_ops sc_plugin_fields, sc_plugin_gates, sc_plugin_nodepref,
    sc_plugin_interpod, sc_plugin_spread, sc_plugin_ports, sc_plugin_claims, sc_plugin_volumes;

/* ---- what the core calls, plugin.c --------------------------------------------- */

/*
 * Register the plugins with the snapshot (once, pk_sched_new): the hooks it
 * calls on every charge, when its partitions go, in its invariant check and
 * in sc_snapshot_fini, and the term index's owns callback.
 */
void sc_cons_register(struct sc_snapshot *snap);

/*
 * Parse every plugin's fields of obj into pod (pod->cons stays NULL for a pod
 * that states nothing).  A refusal is not an error: it is kept in
 * pod->cons->refuse.  0 or -ENOMEM.
 */
int sc_cons_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod);
void sc_cons_release(struct pk_sched *s, struct sc_pod *pod);
void sc_cons_free(struct sc_cons *c);
/* The plugins' filters for pod on node, in table order. */
enum sc_misfit sc_cons_filter(struct sc_snapshot *snap, const struct sc_pod *pod, int node);
/*
 * The whole filter: the static filters (filter.c), the plugins' filters,
 * then resource fit; *ret_res gets the short resource id.
 */
enum sc_misfit sc_filter(const struct sc_snapshot *snap, const struct sc_pod *pod,
			 const struct sc_node *node, int *ret_res);
/* Sum of the plugins' scores (0 for a pod without preferences). */
int64_t sc_cons_score(struct sc_snapshot *snap, const struct sc_pod *pod, int node);
bool sc_cons_scores(const struct sc_pod *pod);
/* The term index's and every plugin's charge (snapshot.c's charge(), as a hook). */
void sc_cons_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign);
/*
 * Why pod is UnschedulableAndUnresolvable before any node is tried: a field
 * refused at parse time, or a plugin's PreFilter verdict; NULL when none.
 */
const char *sc_cons_refusal(const struct sc_pod *pod);
/*
 * PreEnqueue: the plugin that holds pod back, or NULL; *ret_what (may be
 * NULL) gets what the pod waits for.
 */
const struct sc_plugin_ops *sc_cons_pre_enqueue(const struct sc_pod *pod, const char **ret_what);
/* Neither held back by PreEnqueue nor refused before any node (sc_pod_pending). */
bool sc_cons_admits(const struct sc_pod *pod);
/* Every plugin's PreBind for pod, bound to node, in table order; 0 or -errno. */
int sc_cons_pre_bind(struct sc_ctx *ctx, const struct sc_pod *pod, const char *node);
/* A cycle begins: every plugin's cycle hook; 0 or -errno. */
int sc_cons_cycle(struct pk_sched *s, struct pk_sched_result *res);
/* pod leaves for good (deleted, preempted): every plugin's pod_gone. */
void sc_cons_pod_gone(struct pk_sched *s, const struct sc_pod *pod);
/* Every plugin's why of pod, each appended to b as "; why". */
void sc_cons_why(const struct sc_pod *pod, struct sc_buf *b);
/* pod's group object changed: every plugin's group_changed; 0 or -ENOMEM. */
int sc_cons_group_changed(struct sc_pod *pod);
/* The whole cluster is in (pk_sched_complete): every plugin's complete. */
void sc_cons_complete(struct pk_sched *s);
/*
 * An object of a kind some plugin consumes was added or changed (set) or
 * removed: its handler runs and its hint may requeue.  0 or the handler's
 * -errno; when no plugin consumes the kind, set says -EOPNOTSUPP and
 * remove -ENOENT.
 */
int sc_cons_event_set(struct pk_sched *s, const struct pk_type *kind, json_t *obj);
/* The kinds the plugins consume, in table order, into v (at most max); how many there are. */
size_t sc_cons_kinds(const struct pk_type **v, size_t max);
int sc_cons_event_remove(struct pk_sched *s, enum pk_kind kind, const char *ns, const char *name);
/*
 * What the plugins keep on the snapshot goes (sc_snapshot_fini, through the
 * hooks): the volume catalog (volumes.c), the host ports index (ports.c),
 * the claim table (claims.c).
 */
void sc_vols_free(struct sc_snapshot *snap);
void sc_claims_free(struct sc_snapshot *snap);
void sc_ports_free(struct sc_snapshot *snap);
/*
 * spread.c, for a strategy's node scan: the partition of a pod's only (hard)
 * spread constraint when its domains can be ruled out one by one, or NULL;
 * and whether domain d of it is allowed.  Valid until the next charge.
 */
struct sc_part *sc_spread_hint(struct sc_snapshot *snap, const struct sc_pod *pod);
bool sc_spread_dom_allowed(struct sc_snapshot *snap, const struct sc_pod *pod, int d);

#endif /* PODKERNEL_KERNEL_SCHED_PLUGIN_H */
