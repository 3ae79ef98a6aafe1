/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_cache.c — what the queue controller's pass reads, kept between
 * passes, as Kueue keeps its queues and cache.
 *
 * The first pass lists the queues, flavors, Cohorts, Namespaces, priority
 * classes, queued Jobs, JobSets and pods and the pod groups; every later
 * pass applies the store's change stream since then (pk_store_events_since)
 * instead.  A stream lost (-PK_STORE_EGONE: older than the ring) lists
 * again.  A workload's requests are decoded once per version of it.
 *
 * A pending workload that the pass tried and did not admit for want of
 * quota or of room on the cluster is parked (Kueue's inadmissible list)
 * with why it waits, until something that could change the answer
 * happens: a queue, flavor, Cohort, Namespace or priority class changed
 * (beyond its status), the workload itself changed, what is admitted in its
 * ClusterQueue's quota changed (its ClusterQueue's, or any cohort's when it
 * is in one), or, when it waited for room, anything on the cluster (Nodes,
 * pods, anything but Events and Leases).  Within a pass an admission or
 * eviction under a quota unparks the workloads of that quota for the rest
 * of the pass.  StrictFIFO ClusterQueues, fair sharing and pod workloads
 * are never parked: their answer depends on more than that.
 *
 * The pass's own admission of a Job or JobSet (nothing preempted for it)
 * bumps its quota's generation when the write succeeds, and the write's
 * echo on the change stream, known by the resourceVersion the write got
 * back (as an informer knows its own writes), is no change: the workloads
 * of that quota tried after the admission, judged with it, stay parked
 * after the pass, and the next pass does not visit the quota again for it.
 * Those parked before it, under the generation before, are not parked any
 * more: their quota is visited again.
 *
 * A pass visits only the quota keys (a ClusterQueue, or all those in
 * cohorts) whose inputs changed since the last pass (q_cache_plan): a Job
 * or JobSet of it added, changed beyond its status or removed, one left
 * unparked by its last visit, or waiting for room where the cluster
 * changed.  The others' workloads are not read (each key's members are
 * kept, fed by the change stream), their counts and usage are those their
 * last visit recorded (q_cache_record).  A change of configuration, queued
 * pods or fair sharing makes the pass visit everything, as a fresh
 * controller's first pass does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/controllers/queues-internal.h"
#include "kernel/sched/sched.h"

enum {
	M_CQS,
	M_LQS,
	M_FLAVORS,
	M_NAMESPACES,
	M_COHORTS,
	M_CLASSES,
	M_WPCS,
	M_JOBS,
	M_JOBSETS,
	M_PODS,
	M_GROUPS,
	M_N
};

static const enum pk_kind kinds[] = {
    PK_KIND_CLUSTER_QUEUE,
    PK_KIND_LOCAL_QUEUE,
    PK_KIND_RESOURCE_FLAVOR,
    PK_KIND_NAMESPACE,
    PK_KIND_COHORT,
    PK_KIND_PRIORITY_CLASS,
    PK_KIND_WORKLOAD_PRIORITY_CLASS,
    PK_KIND_JOB,
    PK_KIND_JOBSET,
    PK_KIND_POD,
    PK_KIND_POD_GROUP,
    PK_KIND_COMPOSITE_POD_GROUP,
};

static void known_free(void *v);

struct q_cache {
	bool listed;
	uint64_t rv;	   /* the change stream is applied up to here */
	json_t *maps[M_N]; /* key -> object (M_GROUPS: "Kind/ns/name") */
	json_t *cluster;   /* kind -> "ns/name" -> object: what placement reads (NULL: not
			      listed yet, at the first placement check) */
	json_t *sorted;	   /* kind -> its cluster objects in the store's order (q_cache_place), kept
			      as they change (sorted_note) */
	struct pk_map known[2]; /* Jobs', JobSets' "ns/name" -> struct q_known */
	json_t *gens;		/* quota key (q_cache_quota_key) -> generation */
	json_int_t config_gen;	/* queues, flavors, Cohorts, Namespaces, classes, groups */
	json_int_t cluster_gen; /* anything placement reads */
	struct pk_sched_decoded *decoded; /* the cluster's Nodes and pods, decoded for placement */
	struct pk_claims_seen claims;	  /* what the placement runs' claims passes saw */
	struct pk_sched *sched; /* the last pass's placement scheduler, carried (q_cache_carry) */
	json_t *held;		/* what it holds; NULL with it */
	json_t *members;	/* quota key (Q_NO_QUOTA: none) -> {"0ns/name" (a Job), "1ns/name"
				   (a JobSet): true}; NULL: rebuilt at the next pass */
	json_t *changed;	/* quota keys whose workloads or admissions changed since */
	json_t *results;	/* quota key -> what its last visit found (q_cache_record) */
	json_t *own; /* "0ns/name" (a Job), "1ns/name" (a JobSet) -> {"rv": the resourceVersion
			the pass's own write of it got back, "noted": its pending annotations
			only}: its echo on the stream is no change */
	json_int_t pass_config; /* config_gen at the last pass recorded (-1: none) */
	json_t *gauges;		/* ClusterQueue -> its Kueue gauges' lines and what they read */
	struct q_tree *tree;	/* the last pass's quota tree (q_cache_tree), its usage aside */
	json_int_t tree_config; /* config_gen it was built at */
	struct pk_queues_stats stats;
};

/* A pending workload parked: why it waits, and the generations its answer holds for. */
struct q_park {
	bool on, place; /* place: it waits for room (else for quota) */
	char *cq, *why;
	json_int_t config, quota, cluster;
};

/* A Job's or JobSet's workload as the last pass read it, for the same version of it. */
struct q_known {
	json_t *obj;	/* that version (a reference: w's strings are borrowed from it) */
	json_t *prev;	/* the one w's strings are borrowed from, when obj is the echo of the
			   pass's own pending annotations on it (own_noted); else NULL */
	json_int_t gen; /* config_gen then (priority and inadmissible depend on it) */
	bool workload;	/* false: not one (not queued, finished, being deleted) */
	struct q_workload w;
	struct q_park park;
	char *noted; /* the reason this version was found to carry, with its queue order */
};

static int map_of(const struct pk_type *t)
{
	for (size_t i = 0; t && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i] == t->pk)
			return i >= M_GROUPS ? M_GROUPS : (int)i;
	return -1;
}

static void key_of(int m, const char *kind, const json_t *obj, char *key, size_t n)
{
	if (m == M_GROUPS)
		pk_obj_key(key, n, pk_type_by_kind(kind), pk_namespace(obj), pk_name(obj));
	else if (pk_type_of(kinds[m])->namespaced)
		snprintf(key, n, "%s/%s", pk_namespace(obj), pk_name(obj));
	else
		snprintf(key, n, "%s", pk_name(obj));
}

/* Whether the pass reads obj at all: Jobs, JobSets and pods only when queued. */
static bool wanted(int m, const json_t *obj)
{
	if (m == M_JOBS || m == M_JOBSETS)
		return wb_queue_name(obj) != NULL;
	if (m == M_PODS)
		return pk_pod_queue_name(obj) != NULL;
	return true;
}

/*
 * What is kept of obj (a new reference, NULL on ENOMEM): the object itself,
 * but of a PodGroup or CompositePodGroup only what the pass reads (every
 * group of the cluster is kept, and a whole object of each would cost more
 * than the rest of the cache): a Kueue pod group's (labelled
 * Q_LABEL_KUEUE_POD_GROUP, which the pass deletes once its pods are gone)
 * kind, names, uid, resourceVersion, label and deletionTimestamp; any
 * group's parent; of another group only that it exists (true).
 */
static json_t *kept(int m, const json_t *obj)
{
	static const char *const paths[] = {"apiVersion",
					    "kind",
					    "metadata.name",
					    "metadata.namespace",
					    "metadata.uid",
					    "metadata.resourceVersion",
					    "metadata.deletionTimestamp"};
	const char *label = json_string_value(
	    json_object_get(ctl_at(obj, "metadata", "labels"), Q_LABEL_KUEUE_POD_GROUP));
	json_t *parent = ctl_at(obj, "spec", "parentCompositePodGroupName"), *g;
	bool ok = true;

	if (m != M_GROUPS)
		return json_incref((json_t *)obj);
	if (!label && !parent)
		return json_true();
	if (!(g = json_object()))
		return NULL;
	for (size_t i = 0; label && i < sizeof(paths) / sizeof(paths[0]); i++) {
		json_t *v = pk_get(obj, paths[i]);

		if (v)
			ok &= pk_set(g, paths[i], json_incref(v)) == 0;
	}
	if (label)
		ok &= pk_set(g, "metadata.labels",
			     json_pack("{s:s}", Q_LABEL_KUEUE_POD_GROUP, label)) == 0;
	if (parent)
		ok &= pk_set(g, "spec.parentCompositePodGroupName", json_incref(parent)) == 0;
	if (!ok) {
		json_decref(g);
		return NULL;
	}
	return g;
}

/*
 * Every object of t (matching labels, NULL: all) to fn, a page at a time:
 * never every object parsed at once.
 */
#define Q_LIST_PAGE 256
static int list_paged(struct pk_store *store, const struct pk_type *t,
		      const struct pk_selector *labels,
		      int (*fn)(void *arg, const struct pk_type *t, const json_t *obj), void *arg)
{
	char *token = NULL;
	int r;

	do {
		struct pk_store_list_opts o = {
		    .labels = labels, .limit = Q_LIST_PAGE, .continue_token = token};
		json_t *items = NULL, *obj;
		char *next = NULL;
		size_t i;

		r = pk_store_list(store, t, NULL, &o, &items, NULL, &next);
		free(token);
		token = next;
		json_array_foreach(r == 0 ? items : NULL, i, obj) if (r == 0) r = fn(arg, t, obj);
		json_decref(items);
	} while (r == 0 && token);
	free(token);
	return r;
}

static void cache_reset(struct q_cache *c)
{
	for (int m = 0; m < M_N; m++) {
		json_decref(c->maps[m]);
		c->maps[m] = json_object();
	}
	json_decref(c->gens);
	json_decref(c->cluster);
	c->cluster = NULL;
	json_decref(c->sorted);
	c->sorted = NULL;
	for (int i = 0; i < 2; i++) {
		pk_map_free(&c->known[i]);
		c->known[i] = (struct pk_map)PK_MAP_INIT(known_free);
	}
	c->gens = json_object();
	c->listed = false;
	pk_sched_free(c->sched);
	json_decref(c->held);
	c->sched = NULL;
	c->held = NULL;
	json_decref(c->members);
	json_decref(c->results);
	c->members = c->results = NULL;
	c->pass_config = -1;
}

void q_cache_free(struct q_cache *c)
{
	if (!c)
		return;
	for (int m = 0; m < M_N; m++)
		json_decref(c->maps[m]);
	json_decref(c->cluster);
	json_decref(c->sorted);
	for (int i = 0; i < 2; i++)
		pk_map_free(&c->known[i]);
	json_decref(c->gens);
	json_decref(c->members);
	json_decref(c->changed);
	json_decref(c->results);
	json_decref(c->own);
	json_decref(c->gauges);
	pk_sched_free(c->sched);
	json_decref(c->held);
	pk_sched_decoded_free(c->decoded);
	pk_claims_seen_clear(&c->claims);
	q_tree_free(c->tree);
	free(c);
}

/* Whether placement reads objects of kind (queues_place.c: pk_sched_kinds(), Topology). */
static bool placement_reads(const struct pk_type *kind)
{
	return pk_sched_reads(kind) || kind == &pk_type_topology;
}

/* a's and b's order in the store: namespace, then name. */
static int cmp_ns_name(const json_t *a, const char *ns, const char *name)
{
	int c = strcmp(pk_namespace(a) ? pk_namespace(a) : "", ns);

	return c ? c : strcmp(pk_name(a) ? pk_name(a) : "", name);
}

/*
 * obj put in (or, gone, taken out of) v, its kind's objects in the store's
 * order (q_cache_place), where it goes; false when v cannot follow (it is
 * to be sorted again).
 */
static bool sorted_note(json_t *v, const json_t *obj, bool gone)
{
	const char *ns = pk_namespace(obj) ? pk_namespace(obj) : "", *name = pk_name(obj);
	size_t lo = 0, hi = json_array_size(v);
	int c = 1;

	if (!name)
		return false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		c = cmp_ns_name(json_array_get(v, mid), ns, name);
		if (c == 0) {
			lo = mid;
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (c == 0)
		return gone ? json_array_remove(v, lo) == 0
			    : json_array_set(v, lo, (json_t *)obj) == 0;
	return gone || json_array_insert(v, lo, (json_t *)obj) == 0;
}

/* obj (of kind) as placement sees it now: kept, or (gone, or a pod not holding a node) not. */
static int cluster_note(struct q_cache *c, const struct pk_type *kind, const json_t *obj, bool gone)
{
	json_t *m = json_object_get(c->cluster, kind->kind),
	       *v = json_object_get(c->sorted, kind->kind);
	char key[600];

	gone |= kind == &pk_type_pod && !q_place_holds_node(obj);
	if (v && !sorted_note(v, obj, gone))
		json_object_del(c->sorted, kind->kind); /* sorted again at the next need */
	if (!m && json_object_set_new(c->cluster, kind->kind, m = json_object()) < 0)
		return -ENOMEM;
	q_join(key, sizeof(key), pk_namespace(obj) ? pk_namespace(obj) : "", pk_name(obj));
	if (gone)
		return json_object_del(m, key), 0;
	return json_object_set(m, key, (json_t *)obj) < 0 ? -ENOMEM : 0;
}

/*
 * What placement reads, listed (once: the change stream keeps it, replaying
 * from before the listing what came after; a change applied twice in order
 * ends where it would once).
 */
static int cluster_listed(void *arg, const struct pk_type *t, const json_t *obj)
{
	return cluster_note(arg, t, obj, false);
}

static int cluster_list(struct pk_store *store, struct q_cache *c)
{
	const struct pk_type *const *k = pk_sched_kinds(), *const topo[] = {&pk_type_topology,
									    NULL};
	int r = (c->cluster = json_object()) ? 0 : -ENOMEM;

	for (int pass = 0; r == 0 && pass < 2; pass++, k = topo)
		for (; r == 0 && *k; k++)
			r = list_paged(store, *k, NULL, cluster_listed, c);
	return r;
}

/* One listed object into its map, when the pass reads it. */
static int cache_listed(void *arg, const struct pk_type *t, const json_t *obj)
{
	struct q_cache *c = arg;
	int m = map_of(t);
	char key[800];

	if (!wanted(m, obj))
		return 0;
	key_of(m, t->kind, obj, key, sizeof(key));
	return json_object_set_new(c->maps[m], key, kept(m, obj)) < 0 ? -ENOMEM : 0;
}

/* Everything, from a full listing; the stream is applied from before it. */
static int cache_list(struct pk_ctl *ctl, struct q_cache *c)
{
	uint64_t rv = pk_store_rv(ctl->store);
	struct pk_sel_req req = {.key = (char *)PK_KUEUE_LABEL_QUEUE_NAME, .op = PK_SELOP_EXISTS};
	const struct pk_selector queued[1] = {{.reqs = &req, .nreqs = 1}};

	cache_reset(c);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const struct pk_type *t = pk_type_of(kinds[k]);
		int m = map_of(t);
		int r;

		if (!c->maps[m])
			return -ENOMEM;
		/* of the pods only the queued ones, the others passed over unparsed
		 * (pk_selector_may_match_text): most of a cluster's objects */
		r = list_paged(ctl->store, t, m == M_PODS ? queued : NULL, cache_listed, c);
		if (r == -ENOMEM)
			return r;
		if (r < 0 && m >= M_JOBS)
			return -EIO;
		/* else a queue kind not served: none */
	}
	if (!c->gens)
		return -ENOMEM;
	c->rv = rv;
	c->listed = true;
	c->config_gen++;
	c->cluster_gen++;
	c->stats.lists++;
	return 0;
}

/* ---- what a change invalidates -------------------------------------------------- */

/* a and b alike but for their status and the metadata the pass does not read. */
static bool same_but_status(const json_t *a, const json_t *b)
{
	static const char *const meta[] = {"labels", "annotations", "deletionTimestamp",
					   "creationTimestamp", "ownerReferences"};
	const json_t *ma = json_object_get(a, "metadata"), *mb = json_object_get(b, "metadata");
	const char *k;
	json_t *v;

	if (!a || !b ||
	    json_object_size(a) - !!json_object_get(a, "status") !=
		json_object_size(b) - !!json_object_get(b, "status"))
		return false; /* (a status added or taken away alone is a change of status) */
	json_object_foreach((json_t *)a, k, v)
	{
		if (strcmp(k, "status") != 0 && strcmp(k, "metadata") != 0 &&
		    !json_equal(v, json_object_get(b, k)))
			return false;
	}
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		const json_t *x = json_object_get(ma, meta[i]), *y = json_object_get(mb, meta[i]);

		if ((x || y) && !(x && y && json_equal(x, y)))
			return false;
	}
	return true;
}

/* Whether obj (a Job or JobSet) holds quota, as far as a change to it can tell. */
static bool holds(const json_t *obj)
{
	return obj && json_object_get(ctl_at(obj, "metadata", "annotations"),
				      WB_ANNOTATION_QUEUE_ADMISSION) != NULL;
}

const char *q_cache_quota_key(const json_t *cqs, const char *cq)
{
	const json_t *obj = cq ? json_object_get(cqs, cq) : NULL;
	const json_t *cohort = json_object_get(json_object_get(obj, "spec"), "cohortName");

	if (!obj)
		return NULL;
	return json_is_string(cohort) ? "" : cq; /* cohorts: one key for all */
}

/* The quota of obj's ClusterQueue (through its LocalQueue) changed. */
static void bump_quota_of(struct q_cache *c, const json_t *obj, bool pod)
{
	const char *q = obj ? (pod ? pk_pod_queue_name(obj) : wb_queue_name(obj)) : NULL;
	char key[600];
	const char *qk;

	if (!q)
		return;
	q_join(key, sizeof(key), pk_namespace(obj), q);
	qk = q_cache_quota_key(c->maps[M_CQS], ctl_at_string(json_object_get(c->maps[M_LQS], key),
							     "spec", "clusterQueue"));
	if (qk)
		json_object_set_new(
		    c->gens, qk,
		    json_integer(json_integer_value(json_object_get(c->gens, qk)) + 1));
}

static bool done(int m, const json_t *obj)
{
	return obj && (m == M_JOBS ? wb_job_finished(obj) : wb_jobset_finished(obj));
}

/* The quota key of a queued Job's or JobSet's ClusterQueue, through its LocalQueue. */
static const char *member_key_of(const struct q_cache *c, const char *ns, const char *q)
{
	const char *qk;
	const json_t *lq;
	char key[600];

	if (!q)
		return Q_NO_QUOTA;
	q_join(key, sizeof(key), ns, q);
	lq = json_object_get(c->maps[M_LQS], key);
	qk = q_cache_quota_key(c->maps[M_CQS], json_string_value(json_object_get(
						   json_object_get(lq, "spec"), "clusterQueue")));
	return qk ? qk : Q_NO_QUOTA;
}

static const char *member_key(const struct q_cache *c, const json_t *obj)
{
	return member_key_of(c, pk_namespace(obj), wb_queue_name(obj));
}

/* The member key of workloads in turn: the last one's again for the same LocalQueue. */
struct member_memo {
	const char *ns, *q, *qk;
};

static const char *member_key_w(const struct q_cache *c, const struct q_workload *w,
				struct member_memo *m)
{
	if (!m->qk || !w->ns || !w->queue || strcmp(m->ns, w->ns) || strcmp(m->q, w->queue)) {
		m->qk = member_key_of(c, w->ns, w->queue);
		m->ns = w->ns ? w->ns : "";
		m->q = w->queue ? w->queue : "";
	}
	return m->qk;
}

/* obj (a Job: m M_JOBS, or a JobSet) in (add) or out of its quota key's members. */
static void member_set(struct q_cache *c, int m, const char *key, const json_t *obj, bool add)
{
	const char *qk = member_key(c, obj);
	json_t *set = json_object_get(c->members, qk);
	char mk[800];

	snprintf(mk, sizeof(mk), "%c%s", m == M_JOBS ? '0' : '1', key);
	if (!add) {
		json_object_del(set, mk);
		return;
	}
	if (!set && json_object_set_new(c->members, qk, set = json_object()) < 0)
		set = NULL;
	if (!set || json_object_set_new(set, mk, json_true()) < 0) {
		json_decref(c->members); /* rebuilt by the next pass, which visits everything */
		c->members = NULL;
	}
}

/* The members of every quota key, from the listings: the pass after it visits them all. */
static int members_build(struct q_cache *c)
{
	const char *k;
	json_t *o;

	json_decref(c->members);
	if (!(c->members = json_object()))
		return -ENOMEM;
	for (int m = M_JOBS; c->members && m <= M_JOBSETS; m++)
		json_object_foreach(c->maps[m], k, o) member_set(c, m, k, o, true);
	return c->members ? 0 : -ENOMEM;
}

/* A Job or JobSet changed (old, now: NULL when none): its members, its quota key changed. */
static void member_change(struct q_cache *c, int m, const char *key, const json_t *old,
			  const json_t *now, bool own)
{
	bool moved = !own && (!same_but_status(old, now) || done(m, old) != done(m, now));

	if (!c->members)
		return;
	if (old)
		member_set(c, m, key, old, false);
	if (now)
		member_set(c, m, key, now, true);
	if (moved && c->changed && old)
		json_object_set_new(c->changed, member_key(c, old), json_true());
	if (moved && c->changed && now)
		json_object_set_new(c->changed, member_key(c, now), json_true());
}

static void note_change(struct q_cache *c, int m, const json_t *old, const json_t *now)
{
	switch (m) {
	case M_JOBS:
	case M_JOBSETS:
		if ((holds(old) || holds(now)) &&
		    (!same_but_status(old, now) || done(m, old) != done(m, now))) {
			bump_quota_of(c, old, false);
			bump_quota_of(c, now, false);
		}
		break;
	case M_PODS:
		c->cluster_gen++;
		bump_quota_of(c, old, true);
		bump_quota_of(c, now, true);
		break;
	case M_GROUPS:
		c->cluster_gen++;
		c->config_gen++;
		break;
	default:
		if (!same_but_status(old, now))
			c->config_gen++;
	}
}

/* Kinds whose changes no answer of the pass depends on. */
static bool quiet_kind(const struct pk_type *kind)
{
	return !kind || kind == &pk_type_event || kind == &pk_type_lease;
}

/*
 * Whether obj (a Job: m M_JOBS, or a JobSet) is the version the pass's own
 * admission wrote (q_cache_admitted), as informers know their own writes:
 * by the resourceVersion the write got back.  That pass counted it
 * already, and bumped its quota's generation then.
 */
static int own_echo(struct q_cache *c, int m, const char *key, const json_t *obj)
{
	char mk[800];
	const char *rv, *mine;
	const json_t *e;
	int own;

	if (!c->own || json_object_size(c->own) == 0)
		return 0;
	snprintf(mk, sizeof(mk), "%c%s", m == M_JOBS ? '0' : '1', key);
	if (!(e = json_object_get(c->own, mk)))
		return 0;
	mine = json_string_value(json_object_get(e, "rv"));
	rv = ctl_at_string(obj, "metadata", "resourceVersion");
	own = !rv || !mine || strcmp(rv, mine) != 0	  ? 0
	      : json_is_true(json_object_get(e, "noted")) ? 2
							  : 1;
	json_object_del(c->own, mk); /* any later version is another writer's */
	return own;
}

/*
 * The echo of the pass's own pending annotations on a Job or JobSet (now),
 * whose version before (old) is the one its workload was decoded from: the
 * workload is the same (its requests, order, admission; its status is the
 * version before's too), known as now's (old kept: its strings are
 * borrowed).  Whether now carries the reason it was noted with is looked at
 * again.
 */
static void own_noted(struct q_cache *c, int m, const char *key, json_t *old, json_t *now)
{
	struct q_known *k = pk_map_get(&c->known[m == M_JOBS ? 0 : 1], key);

	if (!k || !old || !now || k->obj != old)
		return;
	if (k->prev)
		json_decref(k->obj); /* (an echo before: w's strings are prev's) */
	else
		k->prev = k->obj;
	k->obj = json_incref(now);
	k->w.obj = now;
	free(k->noted);
	k->noted = NULL;
}

static int apply_event(const struct pk_store_event *ev, void *arg)
{
	struct q_cache *c = arg;
	const char *kind = ev->kind ? ev->kind->kind : NULL;
	int m = map_of(ev->kind);
	char key[800];
	json_t *old;
	bool keep;
	int own;

	if (c->cluster && ev->kind && placement_reads(ev->kind) &&
	    cluster_note(c, ev->kind, ev->object, ev->type == PK_EVENT_DELETED) < 0)
		return -ENOMEM;
	if (m < 0) {
		if (!quiet_kind(ev->kind))
			c->cluster_gen++;
		return 0;
	}
	if (m == M_PODS && !pk_pod_queue_name(ev->object))
		c->cluster_gen++;
	key_of(m, kind, ev->object, key, sizeof(key));
	old = json_object_get(c->maps[m], key);
	keep = ev->type != PK_EVENT_DELETED && wanted(m, ev->object);
	own = keep && (m == M_JOBS || m == M_JOBSETS) ? own_echo(c, m, key, ev->object) : 0;
	if ((old || keep) && !own)
		note_change(c, m, old, keep ? ev->object : NULL);
	if ((old || keep) && (m == M_JOBS || m == M_JOBSETS))
		member_change(c, m, key, old, keep ? ev->object : NULL, own != 0);
	if (!keep && (m == M_JOBS || m == M_JOBSETS))
		pk_map_del(&c->known[m == M_JOBS ? 0 : 1], key);
	json_incref(old); /* (for own_noted) */
	if (!keep) {
		json_object_del(c->maps[m], key);
	} else if (json_object_set_new(c->maps[m], key, kept(m, ev->object)) < 0) {
		json_decref(old);
		return -ENOMEM;
	}
	if (own == 2)
		own_noted(c, m, key, old, json_object_get(c->maps[m], key));
	json_decref(old);
	return 0;
}

int q_cache_sync(struct pk_ctl *ctl)
{
	struct q_cache *c = ctl->qcache;
	uint64_t last = 0;
	int r;

	if (!c) {
		c = ctl->qcache = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
	}
	c->stats.passes++;
	if (!c->listed)
		return cache_list(ctl, c);
	r = pk_store_events_since(ctl->store, c->rv, 0, apply_event, c, &last);
	if (r == -PK_STORE_EGONE || r < 0)
		return cache_list(ctl, c); /* the stream lost: everything again */
	c->rv = last;
	return 0;
}

/*
 * Whether a and b are the same version of a workload as far as its requests
 * and its admission go (b may carry other pending annotations, a status).
 */
static bool same_workload(const json_t *a, const json_t *b)
{
	static const char *const paths[] = {"spec", "metadata.labels", "metadata.deletionTimestamp",
					    "metadata.creationTimestamp"};

	if (a == b)
		return true;
	if (!a || !b ||
	    json_object_get(ctl_at(b, "metadata", "annotations"), WB_ANNOTATION_QUEUE_ADMISSION) ||
	    json_object_get(ctl_at(a, "metadata", "annotations"), WB_ANNOTATION_QUEUE_ADMISSION))
		return false;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const json_t *x = pk_get(a, paths[i]), *y = pk_get(b, paths[i]);

		if ((x || y) && !(x && y && json_equal(x, y)))
			return false;
	}
	return true;
}

/* ---- the pass's view ------------------------------------------------------------ */

static int cmp_pod(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c =
	    strcmp(pk_namespace(x) ? pk_namespace(x) : "", pk_namespace(y) ? pk_namespace(y) : "");

	return c ? c : strcmp(pk_name(x) ? pk_name(x) : "", pk_name(y) ? pk_name(y) : "");
}

/* The queued pods, in the store's order (namespace, then name). */
static json_t *pods_array(const json_t *map)
{
	size_t n = json_object_size(map), i = 0;
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *out = json_array(), *o;
	const char *k;

	if (!v || !out) {
		free(v);
		json_decref(out);
		return NULL;
	}
	json_object_foreach((json_t *)map, k, o) v[i++] = o;
	qsort(v, n, sizeof(*v), cmp_pod);
	for (i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	return out;
}

int q_cache_view(struct pk_ctl *ctl, struct q_state *s)
{
	struct q_cache *c = ctl->qcache;

	s->cache = c;
	s->cqs = json_incref(c->maps[M_CQS]);
	s->lqs = json_incref(c->maps[M_LQS]);
	s->flavors = json_incref(c->maps[M_FLAVORS]);
	s->namespaces = json_incref(c->maps[M_NAMESPACES]);
	s->cohorts = json_incref(c->maps[M_COHORTS]);
	s->classes = json_incref(c->maps[M_CLASSES]);
	s->wpcs = json_incref(c->maps[M_WPCS]);
	s->jobs = json_incref(c->maps[M_JOBS]);
	s->jobsets = json_incref(c->maps[M_JOBSETS]);
	s->groups = json_incref(c->maps[M_GROUPS]);
	s->pods = pods_array(c->maps[M_PODS]);
	return s->pods ? 0 : -ENOMEM;
}

/* ---- the incremental pass ---------------------------------------------------------- */

static void visit(struct q_state *s, const char *qk)
{
	if (s->visit && !json_object_get(s->visit, qk) &&
	    json_object_set_new(s->visit, qk, json_true()) < 0) {
		json_decref(s->visit); /* no memory: everything */
		s->visit = NULL;
	}
}

/*
 * Whether this pass visits every ClusterQueue: the first, one after the
 * queues, flavors, Cohorts, Namespaces or classes changed, one with queued
 * pods or fair sharing (their answers depend on more than their own quota).
 */
static bool pass_full(const struct q_cache *c)
{
	const char *k;
	json_t *o;

	if (!c->members || !c->results || c->pass_config != c->config_gen ||
	    json_object_size(c->maps[M_PODS]) > 0)
		return true;
	json_object_foreach(c->maps[M_CQS], k, o)
	{
		if (json_is_object(ctl_at(o, "spec", "fairSharing")))
			return true;
	}
	return false;
}

int q_cache_plan(struct q_state *s)
{
	struct q_cache *c = s->cache;
	const char *k;
	json_t *o;
	bool full = pass_full(c);

	c->pass_config = -1; /* recorded again when the pass completes */
	if (!c->changed && !(c->changed = json_object()))
		return -ENOMEM;
	if (full) {
		json_object_clear(c->changed);
		return members_build(c);
	}
	if (!(s->visit = json_object()))
		return -ENOMEM;
	visit(s, Q_NO_QUOTA);
	json_object_foreach(c->changed, k, o) visit(s, k);
	json_object_foreach(c->results, k, o)
	{
		if (!json_is_true(json_object_get(o, "settled")) ||
		    (json_is_true(json_object_get(o, "place")) &&
		     json_integer_value(json_object_get(o, "cluster")) != c->cluster_gen))
			visit(s, k);
	}
	json_object_foreach(c->members, k, o)
	{
		if (!json_object_get(c->results, k))
			visit(s, k);
		else if (s->visit && !json_object_get(s->visit, k))
			c->stats.skipped += json_object_size(o);
	}
	json_object_clear(c->changed);
	return 0;
}

bool q_cache_visits(const struct q_state *s, const char *qk)
{
	return !s->visit || json_object_get(s->visit, qk ? qk : Q_NO_QUOTA);
}

json_t **q_cache_gauges(const struct q_state *s)
{
	return s->cache ? &s->cache->gauges : NULL;
}

json_t *q_cache_members(const struct q_state *s, const char *qk)
{
	return json_object_get(s->cache->members, qk);
}

/* The quota key of a key of the pass's counts or usage: a ClusterQueue's, "ns/lq" a LocalQueue's.
 */
static const char *count_key(const struct q_state *s, const char *key)
{
	const char *cq = key;
	const char *qk;

	if (strchr(key, '/'))
		cq = ctl_at_string(json_object_get(s->lqs, key), "spec", "clusterQueue");
	qk = q_cache_quota_key(s->cqs, cq);
	return qk ? qk : Q_NO_QUOTA;
}

/* Each entry of the pass's map (s->counts, usage, lqusage) into its quota key's results. */
static void record_split(const struct q_state *s, json_t *res, json_t *map, const char *field)
{
	const char *k;
	json_t *v;

	json_object_foreach(map, k, v)
	{
		json_t *r = json_object_get(res, count_key(s, k));

		if (r)
			json_object_set(q_sub(r, field), k, v);
	}
}

/* A quota key's results kept from its last visit, into the pass's maps. */
static void record_merge(struct q_state *s, const json_t *r)
{
	static const char *const fields[] = {"counts", "usage", "lqusage"};
	json_t *maps[] = {s->counts, s->usage, s->lqusage}, *v;
	const char *k;

	for (size_t i = 0; i < 3; i++)
		json_object_foreach(json_object_get(r, fields[i]), k, v)
		    json_object_set(maps[i], k, v);
}

/* Whether w, pending, is parked (its answer holds until something it waits on changes). */
static bool settled(const struct q_workload *w, bool *ret_place)
{
	const struct q_park *p = w->known ? &w->known->park : NULL;

	if (w->admitted)
		return true;
	*ret_place |= p && p->on && p->place;
	return p && p->on && !w->preempted;
}

/*
 * Whether w is parked under a quota generation older than its quota's now:
 * parked before the pass's own admission under it, it is tried again.
 */
static bool stale(const struct q_state *s, const struct q_workload *w)
{
	const struct q_park *p = w->known ? &w->known->park : NULL;
	const char *qk;

	if (w->admitted || !p || !p->on)
		return false;
	qk = q_cache_quota_key(s->cqs, p->cq);
	return !qk || p->quota != json_integer_value(json_object_get(s->cache->gens, qk));
}

void q_cache_record(struct q_state *s)
{
	struct q_cache *c = s->cache;
	json_t *res = json_object(), *o, *r;
	struct member_memo memo = {0};
	const char *k;
	bool ok = res != NULL;

	json_object_foreach(c->members, k, o) if (q_cache_visits(s, k)) ok &=
	    json_object_set_new(res, k, json_object()) == 0;
	json_object_foreach(s->cqs, k, o)
	{
		const char *qk = q_cache_quota_key(s->cqs, k);

		if (q_cache_visits(s, qk) && !json_object_get(res, qk))
			ok &= json_object_set_new(res, qk, json_object()) == 0;
	}
	ok &= json_object_set_new(res, Q_NO_QUOTA, json_object()) == 0;
	for (size_t i = 0; ok && i < s->nw; i++) {
		const struct q_workload *w = &s->w[i];
		bool place = false, done;

		if (w->kind == PK_KIND_POD ||
		    !(r = json_object_get(res, member_key_w(c, w, &memo))))
			continue;
		done = settled(w, &place) && !stale(s, w);
		if (!done)
			json_object_set_new(r, "unsettled", json_true());
		if (place)
			json_object_set_new(r, "place", json_true());
	}
	json_object_foreach(ok ? res : NULL, k, r)
	{
		json_object_set_new(r, "settled",
				    json_boolean(!json_object_get(r, "unsettled") &&
						 !json_is_true(json_object_get(s->dirty, k))));
		json_object_set_new(r, "cluster", json_integer(c->cluster_gen));
	}
	record_split(s, res, s->counts, "counts");
	record_split(s, res, s->usage, "usage");
	record_split(s, res, s->lqusage, "lqusage");
	json_object_foreach(ok ? c->results : NULL, k, r)
	{
		if (!q_cache_visits(s, k)) {
			record_merge(s, r);
			ok &= json_object_set(res, k, r) == 0;
		}
	}
	json_decref(c->results);
	c->results = ok ? res : NULL;
	if (!ok)
		json_decref(res);
	c->pass_config = ok ? c->config_gen : -1;
}

/* An object of the cluster's maps by its key, "ns/name" ("/name": cluster-scoped). */
struct keyed {
	const char *key;
	json_t *obj;
};

/* Namespace, then name, as cmp_pod orders them, read from the keys. */
static int cmp_keyed(const void *a, const void *b)
{
	const char *x = ((const struct keyed *)a)->key, *y = ((const struct keyed *)b)->key;
	size_t nx = strcspn(x, "/"), ny = strcspn(y, "/");
	int c = memcmp(x, y, nx < ny ? nx : ny);

	if (c == 0 && nx != ny)
		return nx < ny ? -1 : 1;
	return c ? c : strcmp(x[nx] ? x + nx + 1 : "", y[ny] ? y + ny + 1 : "");
}

/* The objects of map (key -> object) in the store's order: namespace, then name. */
static json_t *sorted_of(const json_t *map)
{
	size_t n = json_object_size(map), i = 0;
	struct keyed *v = calloc(n ? n : 1, sizeof(*v));
	json_t *out = v ? json_array() : NULL, *o;
	const char *k;

	json_object_foreach(out ? (json_t *)map : NULL, k, o) v[i++] = (struct keyed){k, o};
	if (out)
		qsort(v, n, sizeof(*v), cmp_keyed);
	for (i = 0; out && i < n; i++)
		if (json_array_append(out, v[i].obj) < 0) {
			json_decref(out);
			out = NULL;
		}
	free(v);
	return out;
}

/* The cluster's objects of kind in the store's order, after out: sorted once per change. */
static int append_sorted(struct q_cache *c, json_t *out, const char *kind)
{
	json_t *v = json_object_get(c->sorted, kind);

	if (!v) {
		if (!(v = sorted_of(json_object_get(c->cluster, kind))))
			return -ENOMEM;
		if (json_object_set_new(c->sorted, kind, v) < 0)
			return -ENOMEM; /* it freed v */
	}
	return json_array_extend(out, v) < 0 ? -ENOMEM : 0;
}

int q_cache_place(struct pk_store *store, struct q_state *s, struct q_place **ret)
{
	json_t *base = json_array(), *topologies = json_object(), *o;
	const json_t *topo;
	const char *k;
	int r = base && topologies ? 0 : -ENOMEM;

	if (r == 0 && !s->cache->sorted && !(s->cache->sorted = json_object()))
		r = -ENOMEM;
	if (r == 0 && !s->cache->cluster && (r = cluster_list(store, s->cache)) < 0) {
		json_decref(s->cache->cluster);
		s->cache->cluster = NULL;
		json_object_clear(s->cache->sorted);
	}
	topo = s->cache->cluster ? json_object_get(s->cache->cluster, "Topology") : NULL;

	for (const struct pk_type *const *kind = pk_sched_kinds(); r == 0 && *kind; kind++)
		if (*kind != &pk_type_pod)
			r = append_sorted(s->cache, base, (*kind)->kind);
	if (r == 0)
		r = append_sorted(s->cache, base, "Pod");
	json_object_foreach((json_t *)topo, k, o) if (r == 0) r =
	    json_object_set(topologies, pk_name(o), o) < 0 ? -ENOMEM : 0;
	if (r < 0) {
		json_decref(base);
		json_decref(topologies);
		return r;
	}
	/* what no check decoded since the last pass's is gone from the cluster */
	if (!s->cache->decoded && pk_sched_decoded_new(&s->cache->decoded) < 0)
		s->cache->decoded = NULL;
	pk_sched_decoded_sweep(s->cache->decoded);
	r = q_place_from(base, topologies, ret);
	if (r == 0) {
		q_place_set_decoded(*ret, s->cache->decoded);
		q_place_set_claims(*ret, &s->cache->claims);
	}
	if (r == 0 && s->cache->sched) { /* the last pass's scheduler, fed what changed since */
		q_place_carry_in(*ret, s->cache->sched, s->cache->held);
	} else {
		pk_sched_free(s->cache->sched);
		json_decref(s->cache->held);
	}
	s->cache->sched = NULL;
	s->cache->held = NULL;
	return r;
}

int q_cache_tree(struct q_state *s)
{
	struct q_cache *c = s->cache;

	if (c && c->tree && c->tree_config == c->config_gen) {
		s->tree = c->tree;
		c->tree = NULL;
		return q_tree_reuse(s->tree, s->cqs, s->cohorts);
	}
	if (c) {
		q_tree_free(c->tree);
		c->tree = NULL;
		c->tree_config = c->config_gen;
	}
	return q_tree_new(s->cqs, s->cohorts, &s->tree);
}

void q_cache_carry(struct q_state *s)
{
	struct q_cache *c = s->cache;

	if (c && s->tree && !c->tree &&
	    q_tree_reuse(s->tree, NULL, NULL) == 0) { /* built at tree_config (q_cache_tree) */
		c->tree = s->tree;
		s->tree = NULL;
	}
	if (!c || !s->place)
		return;
	pk_sched_free(c->sched);
	json_decref(c->held);
	c->stats.carried += q_place_carried(s->place);
	q_place_carry_out(s->place, &c->sched, &c->held);
}

static void known_free(void *v)
{
	struct q_known *k = v;

	json_decref(k->obj);
	json_decref(k->prev);
	json_decref(k->w.requests);
	json_decref(k->w.flavors);
	free(k->w.cq);
	free(k->w.inadmissible);
	free(k->park.cq);
	free(k->park.why);
	free(k->noted);
	free(k);
}

static struct pk_map *known_map(struct q_cache *c, enum pk_kind kind)
{
	return &c->known[kind == PK_KIND_JOB ? 0 : 1];
}

/* *w a copy of t (its strings duplicated, its JSON referenced); false: no memory. */
static bool copy_workload(struct q_workload *w, const struct q_workload *t)
{
	*w = *t;
	w->requests = json_incref(t->requests);
	w->flavors = json_incref(t->flavors);
	w->cq = t->cq ? strdup(t->cq) : NULL;
	w->inadmissible = t->inadmissible ? strdup(t->inadmissible) : NULL;
	w->why = NULL;
	w->known = NULL;
	return (!t->cq || w->cq) && (!t->inadmissible || w->inadmissible);
}

int q_cache_known(struct q_state *s, enum pk_kind kind, const char *key, const json_t *obj,
		  struct q_workload *w)
{
	struct q_known *k = s->cache ? pk_map_get(known_map(s->cache, kind), key) : NULL;

	if (!k || k->obj != obj || k->gen != s->cache->config_gen)
		return 0;
	if (!k->workload)
		return 2;
	if (!copy_workload(w, &k->w))
		return -ENOMEM;
	w->known = k;
	return 1;
}

bool q_cache_decoded(struct q_state *s, enum pk_kind kind, const char *key, struct q_workload *w,
		     bool *ret_priority)
{
	struct q_known *k = s->cache ? pk_map_get(known_map(s->cache, kind), key) : NULL;

	*ret_priority = false;
	if (!k || !k->workload || !same_workload(k->obj, w->obj))
		return false;
	w->requests = json_incref(k->w.requests);
	if (k->gen != s->cache->config_gen)
		return true; /* the classes may have changed: its priority is read again */
	w->priority = k->w.priority;
	w->inadmissible = k->w.inadmissible ? strdup(k->w.inadmissible) : NULL;
	*ret_priority = true;
	return true;
}

void q_cache_keep(struct q_state *s, enum pk_kind kind, const char *key, json_t *obj,
		  struct q_workload *w, bool decoded)
{
	struct q_known *k, *was;

	if (!s->cache)
		return;
	if (decoded)
		s->cache->stats.decodes++;
	was = pk_map_get(known_map(s->cache, kind), key);
	k = calloc(1, sizeof(*k));
	if (!k)
		return;
	k->obj = json_incref(obj);
	k->gen = s->cache->config_gen;
	k->workload = w != NULL;
	if (w && was && was->workload && same_workload(was->obj, obj)) {
		k->park = was->park; /* only its status or pending annotations changed */
		was->park = (struct q_park){0};
	}
	if ((w && !copy_workload(&k->w, w)) || pk_map_put(known_map(s->cache, kind), key, k) < 0) {
		known_free(k);
		return;
	}
	if (w)
		w->known = k;
}

/* ---- parking ---------------------------------------------------------------------- */

/* Whether w could be parked at all (see the top of the file). */
static bool parkable(const struct q_state *s, const struct q_workload *w, const char *cq)
{
	const char *strategy =
	    ctl_at_string(json_object_get(s->cqs, cq), "spec", "queueingStrategy");

	return s->cache && w->known && !s->fair && w->kind != PK_KIND_POD &&
	       !(strategy && strcmp(strategy, "StrictFIFO") == 0);
}

static void park_clear(struct q_park *p)
{
	free(p->cq);
	free(p->why);
	*p = (struct q_park){0};
}

void q_cache_park(struct q_state *s, const struct q_workload *w, const char *cq, bool place,
		  const char *why)
{
	struct q_cache *c = s->cache;
	const char *qk = q_cache_quota_key(s->cqs, cq);
	struct q_park *p = w->known ? &w->known->park : NULL;

	if (!c || !p)
		return;
	park_clear(p);
	if (!qk || !why || !parkable(s, w, cq) || json_is_true(json_object_get(s->dirty, qk)))
		return; /* (after the pass's own admission under qk, under its generation) */
	*p = (struct q_park){.on = true,
			     .place = place,
			     .cq = strdup(cq),
			     .why = strdup(why),
			     .config = c->config_gen,
			     .quota = json_integer_value(json_object_get(c->gens, qk)),
			     .cluster = c->cluster_gen};
	if (!p->cq || !p->why)
		park_clear(p);
}

void q_cache_unpark(struct q_state *s, const struct q_workload *w)
{
	(void)s;
	if (w->known)
		park_clear(&w->known->park);
}

const char *q_cache_parked(struct q_state *s, const struct q_workload *w, const char *cq)
{
	struct q_cache *c = s->cache;
	const struct q_park *p = w->known ? &w->known->park : NULL;
	const char *qk;

	if (!c || !p || !p->on || strcmp(p->cq, cq) != 0 || p->config != c->config_gen ||
	    (p->place && p->cluster != c->cluster_gen) || !parkable(s, w, cq))
		return NULL;
	qk = q_cache_quota_key(s->cqs, cq);
	if (!qk || json_object_get(s->dirty, qk) ||
	    p->quota != json_integer_value(json_object_get(c->gens, qk)))
		return NULL;
	c->stats.parked++;
	return p->why;
}

bool q_cache_noted(const struct q_workload *w)
{
	const struct q_known *k = w->known;

	return k && k->obj == w->obj && k->noted && w->why && strcmp(k->noted, w->why) == 0;
}

void q_cache_note(const struct q_workload *w)
{
	struct q_known *k = w->known;

	if (!k || k->obj != w->obj || !w->why)
		return;
	free(k->noted);
	k->noted = strdup(w->why);
}

void q_cache_dirty(struct q_state *s, const char *cq)
{
	const char *qk = q_cache_quota_key(s->cqs, cq);

	if (qk && s->dirty)
		json_object_set_new(s->dirty, qk, json_true());
}

bool q_cache_dirty_by_others(const struct q_state *s, const char *cq)
{
	const char *qk = q_cache_quota_key(s->cqs, cq);

	return !qk || !s->dirty || json_is_true(json_object_get(s->dirty, qk));
}

/* The pass's own write of a Job or JobSet, as written (its echo is no change); false: not kept. */
static bool own_write(struct q_cache *c, enum pk_kind kind, const char *ns, const char *name,
		      const json_t *written, bool noted)
{
	const char *rv = ctl_at_string(written, "metadata", "resourceVersion");
	char mk[800];

	if (!c || !rv || !ns || !name || (kind != PK_KIND_JOB && kind != PK_KIND_JOBSET) ||
	    (!c->own && !(c->own = json_object())))
		return false;
	snprintf(mk, sizeof(mk), "%c%s/%s", kind == PK_KIND_JOB ? '0' : '1', ns, name);
	return json_object_set_new(c->own, mk, json_pack("{s:s,s:b}", "rv", rv, "noted", noted)) ==
	       0;
}

void q_cache_noted_write(struct pk_ctl *ctl, const struct pk_type *kind, const char *ns,
			 const char *name, const json_t *written)
{
	if (kind)
		own_write(ctl->qcache, kind->pk, ns, name, written, true);
}

void q_cache_admitted(struct q_state *s, const char *cq, const struct q_workload *w,
		      const json_t *written)
{
	struct q_cache *c = s->cache;
	const char *qk = q_cache_quota_key(s->cqs, cq);
	json_int_t gen = json_integer_value(json_object_get(c ? c->gens : NULL, qk));

	if (!c || !qk || !s->dirty || !own_write(c, w->kind, w->ns, w->name, written, false))
		return; /* (dirty as any change: its echo bumps the generation) */
	if (json_object_set_new(c->gens, qk, json_integer(gen + 1)) < 0 ||
	    json_object_set_new(s->dirty, qk, json_false()) < 0) {
		json_object_clear(c->own); /* their echoes are changes, as any */
		json_object_set_new(s->dirty, qk, json_true());
	}
}

void q_cache_tried(struct q_state *s, bool place)
{
	if (s->cache && place)
		s->cache->stats.placements++;
	else if (s->cache)
		s->cache->stats.tries++;
}

int q_cache_sorted_agree(const struct pk_ctl *ctl)
{
	const struct q_cache *c = ctl->qcache;
	const char *k;
	json_t *v;
	int n = 0;

	json_object_foreach(c ? c->sorted : NULL, k, v)
	{
		json_t *fresh = sorted_of(json_object_get(c->cluster, k));
		bool same = fresh && json_array_size(fresh) == json_array_size(v);

		for (size_t i = 0; same && i < json_array_size(v); i++)
			same = json_array_get(fresh, i) == json_array_get(v, i);
		json_decref(fresh);
		if (!same)
			return -1;
		n++;
	}
	return n;
}

void q_cache_stats(const struct pk_ctl *ctl, struct pk_queues_stats *ret)
{
	*ret = ctl->qcache ? ctl->qcache->stats : (struct pk_queues_stats){0};
}
