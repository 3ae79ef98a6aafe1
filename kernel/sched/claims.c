/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claims.c — Dynamic Resource Allocation (kube-scheduler's DynamicResources
 * plugin): a pod's spec.resourceClaims are ResourceClaims whose devices the
 * allocator (kernel/dra) finds on the node the pod is placed on.
 *
 * A pod claim names its ResourceClaim (resourceClaimName) or a template
 * (resourceClaimTemplateName), whose generated claim the pod's
 * status.resourceClaimStatuses records once the claim controller made it.
 * A claim that does not exist (yet) keeps the pod pending with a message
 * naming it.  A PodGroup's spec.resourceClaims (KEP-6089) are claims of every
 * pod of the group, shared as a claim several pods name is: taken from the
 * group object (its status.resourceClaimStatuses for a template's claim)
 * whenever the pod is looked at, and named "PodGroup NS/NAME claim C" in
 * messages.
 *
 * The claims the scheduler knows are kept here (struct sc_dra, in the
 * snapshot) with the DeviceClasses and ResourceSlices the allocator reads.
 * A claim holds devices while a pod charged on a node uses it, or while the
 * API says it is allocated.  charge(+1) of the first user allocates an
 * unallocated claim on the user's node and marks its devices in use;
 * charge(-1) of the last user frees them again unless the API holds them.
 * Since charge follows the snapshot's undo log, a gang's members see each
 * other's tentative allocations, a shared claim is allocated once (the
 * later sharers must fit its node selector), and a reverted gang holds no
 * device.  Preemption's simulated removal of a victim frees the devices of
 * a claim whose last user it was, even an allocated one: the claim
 * controller deallocates a claim nobody reserves.
 *
 * When a placement is committed, each claim it allocated or reserved is
 * handed back as an action (PK_SCHED_CLAIM: status.allocation and
 * status.reservedFor) placed before the bindings; the scheduler's own view
 * takes it at once.  A pod that leaves (deleted or preempted) drops its
 * reservation; a claim no pod reserves any more is deallocated, told by an
 * action of the next cycle.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/dra/dra.h"
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-result.h"
#include "kernel/sched/sched-snapshot.h"

#define RESERVED_MAX 256 /* upstream's ResourceClaimReservedForMaxSize */

struct sc_claim {
	char *key;    /* "ns/name" */
	json_t *obj;  /* the ResourceClaim as last seen; NULL once deleted */
	bool has_api; /* the API (or a committed result) says it is allocated */
	struct dra_allocation api;
	json_t *api_json;    /* that status.allocation */
	json_t *reserved;    /* status.reservedFor */
	struct sc_vec users; /* pods charged on a node that use it */
	bool held;	     /* cur's devices are marked in use */
	bool freed;	     /* its last user's simulated removal freed it */
	bool zombie;	     /* deleted while in use: freed with its last user */
	struct dra_allocation cur;
	uint64_t bound_stamp; /* the cycle whose PreBind wrote its allocation */
	/* a claim of one request for count devices of a class: checked by counting */
	char *simple_class, simple_req[64];
	int64_t simple_count;
};

struct sc_dra {
	struct dra_state *st;
	struct pk_map claims; /* key -> struct sc_claim * */
	struct sc_vec all;    /* every entry, zombies included */
	json_t *dealloc;      /* keys of claims to deallocate, told by the next cycle */
	/* per snapshot node: its slot in the device index, for the state's generation */
	struct node_slot {
		const char *name; /* the node's name pointer when cached */
		int slot;
	} * slots;
	size_t nslots;
	uint64_t slots_gen;
};

struct claim_ref {
	char *name;		/* "pod claim NAME" or "PodGroup NS/G claim NAME" */
	char *key;		/* "ns/claim", or NULL: the template's claim is not made yet */
	char *tmpl;		/* resourceClaimTemplateName, or NULL */
	struct sc_claim *entry; /* the entry this pod is charged on */
};

/*
 * A pod's claims: its own (refs[0..npod)) and then its PodGroup's (up to n),
 * taken from the group as its claims_gen says (group_gen) whenever no group
 * claim is charged; gbad says why the group's claims cannot be used.
 */
struct claims_pod {
	char *uid;
	char why[512]; /* the last filter failure */
	char gbad[400];
	uint64_t group_gen;
	size_t npod, n;
	struct claim_ref refs[];
};

/* ---- the claim table ------------------------------------------------------------- */

static struct sc_dra *dra_of(struct sc_snapshot *snap)
{
	struct sc_dra *d = snap->dra;

	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (dra_state_new(&d->st) < 0 || !(d->dealloc = json_array())) {
		dra_state_free(d->st);
		free(d);
		return NULL;
	}
	snap->dra = d;
	return d;
}

static void entry_free(struct sc_claim *e)
{
	free(e->key);
	json_decref(e->obj);
	dra_allocation_clear(&e->api);
	json_decref(e->api_json);
	json_decref(e->reserved);
	sc_vec_free(&e->users);
	dra_allocation_clear(&e->cur);
	free(e->simple_class);
	free(e);
}

void sc_claims_free(struct sc_snapshot *snap)
{
	struct sc_dra *d = snap->dra;

	if (!d)
		return;
	for (size_t i = 0; i < d->all.n; i++)
		entry_free(d->all.v[i]);
	sc_vec_free(&d->all);
	free(d->slots);
	pk_map_free(&d->claims);
	dra_state_free(d->st);
	json_decref(d->dealloc);
	free(d);
	snap->dra = NULL;
}

/* The node as the allocator sees it; kv has room for the labels or is malloc'ed. */
static struct pk_kv *node_view(const struct sc_node *n, struct dra_node *dn, struct pk_kv *buf,
			       size_t cap)
{
	struct pk_kv *kv = n->nlabels <= cap ? buf : malloc(n->nlabels * sizeof(*kv));

	if (!kv)
		return NULL;
	for (size_t i = 0; i < n->nlabels; i++)
		kv[i] = (struct pk_kv){n->labels[i].key, n->labels[i].value};
	*dn = (struct dra_node){.name = n->name, .labels = kv, .nlabels = n->nlabels};
	return kv;
}

/* Hold or free the entry's devices as its users and the API say. */
static void entry_sync(struct sc_snapshot *snap, struct sc_claim *e, int node)
{
	struct sc_dra *d = snap->dra;
	bool want = e->users.n > 0 || (e->has_api && !e->freed && !e->zombie);

	if (want && !e->held) {
		int r = -EINVAL;

		if (e->has_api) {
			r = dra_allocation_parse(e->api_json, &e->cur);
		} else if (node >= 0 && (size_t)node < snap->nnodes && e->obj) {
			struct pk_kv buf[64], *kv;
			struct dra_node dn;

			kv = node_view(snap->nodes[node], &dn, buf, 64);
			r = kv ? dra_allocate(d->st, e->obj, &dn, &e->cur, NULL, 0) : -ENOMEM;
			if (kv != buf)
				free(kv);
		}
		if (r == 0 && dra_commit(d->st, &e->cur) == 0)
			e->held = true;
		else
			dra_allocation_clear(&e->cur);
	} else if (!want && e->held) {
		dra_release(d->st, &e->cur);
		dra_allocation_clear(&e->cur);
		e->held = false;
	}
}

static void entry_drop(struct sc_dra *d, struct sc_claim *e)
{
	sc_vec_remove(&d->all, e);
	entry_free(e);
}

/* status.allocation of a claim object into e (replacing what the API said). */
static void entry_read_status(struct sc_snapshot *snap, struct sc_claim *e, json_t *obj)
{
	json_t *alloc = pk_get(obj, "status.allocation"), *res = pk_get(obj, "status.reservedFor");
	struct dra_allocation a = {0};
	bool has = json_is_object(alloc) && dra_allocation_parse(alloc, &a) == 0;

	if (e->held && (!has || !e->has_api || !dra_allocation_same(&a, &e->cur))) {
		/* what the API says wins over what this scheduler held */
		dra_release(snap->dra->st, &e->cur);
		dra_allocation_clear(&e->cur);
		e->held = false;
	}
	dra_allocation_clear(&e->api);
	json_decref(e->api_json);
	e->api = a;
	e->api_json = has ? json_incref(alloc) : NULL;
	e->has_api = has;
	json_decref(e->reserved);
	e->reserved = json_is_array(res) ? json_deep_copy(res) : json_array();
	e->freed = false;
}

/*
 * Is the claim one `exactly` request of count devices of a class, nothing
 * else (no selectors, constraints, admin access)?  Then a node is checked by
 * counting its free devices of the class (dra_free_count) instead of a search.
 */
static void entry_simple(struct sc_claim *e)
{
	json_t *reqs = pk_get(e->obj, "spec.devices.requests"), *r = json_array_get(reqs, 0);
	json_t *ex = json_object_get(r, "exactly"), *v, *count;
	const char *k, *cls = pk_get_string(ex, "deviceClassName"),
		       *mode = pk_get_string(ex, "allocationMode");

	free(e->simple_class);
	e->simple_class = NULL;
	if (json_array_size(reqs) != 1 ||
	    json_array_size(pk_get(e->obj, "spec.devices.constraints")) || !cls ||
	    (mode && strcmp(mode, "ExactCount") != 0))
		return;
	json_object_foreach(ex, k, v) if (strcmp(k, "deviceClassName") != 0 &&
					  strcmp(k, "allocationMode") != 0 &&
					  strcmp(k, "count") != 0) return;
	count = json_object_get(ex, "count");
	e->simple_count = count ? json_integer_value(count) : 1;
	if ((count && !json_is_integer(count)) || e->simple_count < 1 || e->simple_count > 32)
		return;
	snprintf(e->simple_req, sizeof(e->simple_req), "%s", pk_get_string(r, "name") ?: "");
	e->simple_class = strdup(cls);
}

/* The ResourceClaim, DeviceClass or ResourceSlice obj came or changed (an event). */
static int claims_set(struct pk_sched *s, json_t *obj)
{
	struct sc_snapshot *snap = &s->snap;
	struct sc_dra *d = dra_of(snap);
	enum pk_kind kind = pk_kind_of(obj);
	struct sc_claim *e;
	char *key;
	int r;

	if (!d)
		return -ENOMEM;
	/* devices or claims changed: pending pods may fit */
	if (kind != PK_KIND_RESOURCE_CLAIM)
		return (r = dra_state_set(d->st, obj)) < 0 ? r : SC_HINT_QUEUE;
	key = sc_key(pk_namespace(obj), pk_name(obj));
	if (!key)
		return -ENOMEM;
	e = pk_map_get(&d->claims, key);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || sc_vec_push(&d->all, e) < 0) {
			free(e);
			free(key);
			return -ENOMEM;
		}
		e->key = key;
		key = NULL;
		if ((r = pk_map_put(&d->claims, e->key, e)) < 0) {
			entry_drop(d, e);
			return r;
		}
	}
	free(key);
	json_decref(e->obj);
	e->obj = json_incref(obj);
	entry_simple(e);
	entry_read_status(snap, e, obj);
	entry_sync(snap, e, -1);
	return SC_HINT_QUEUE;
}

static int claims_remove(struct pk_sched *s, enum pk_kind kind, const char *ns, const char *name)
{
	struct sc_dra *d = s->snap.dra;
	struct sc_claim *e;
	char *key;

	if (!d)
		return -ENOENT;
	if (kind != PK_KIND_RESOURCE_CLAIM) {
		int r = dra_state_remove(d->st, kind, name);

		return r < 0 ? r : SC_HINT_QUEUE;
	}
	key = sc_key(ns && *ns ? ns : "default", name);
	e = key ? pk_map_get(&d->claims, key) : NULL;
	free(key);
	if (!e)
		return -ENOENT;
	pk_map_del(&d->claims, e->key);
	json_decref(e->obj);
	e->obj = NULL;
	e->zombie = true;
	entry_sync(&s->snap, e, -1);
	if (!e->users.n)
		entry_drop(d, e);
	return SC_HINT_QUEUE;
}

/* ---- the pod's claims ------------------------------------------------------------ */

/* The claim status.resourceClaimStatuses records for pod claim name (NULL: none). */
static json_t *claim_status(json_t *obj, const char *name, bool *found)
{
	json_t *st = pk_get(obj, "status.resourceClaimStatuses"), *x;
	size_t i;

	*found = false;
	json_array_foreach(st, i, x)
	{
		const char *n = pk_get_string(x, "name");

		if (n && strcmp(n, name) == 0) {
			*found = true;
			return json_object_get(x, "resourceClaimName");
		}
	}
	return NULL;
}

static void ref_clear(struct claim_ref *ref)
{
	free(ref->name);
	free(ref->key);
	free(ref->tmpl);
	*ref = (struct claim_ref){0};
}

static void pod_free(struct claims_pod *cp)
{
	if (!cp)
		return;
	for (size_t i = 0; i < cp->n; i++)
		ref_clear(&cp->refs[i]);
	free(cp->uid);
	free(cp);
}

/* Is ref's claim one of refs[0..n) already?  Then once is enough. */
static bool ref_seen(const struct claim_ref *refs, size_t n, const struct claim_ref *ref)
{
	for (size_t k = 0; ref->key && k < n; k++)
		if (refs[k].key && strcmp(refs[k].key, ref->key) == 0)
			return true;
	return false;
}

/* spec.resourceClaims[i] of obj (a pod or a PodGroup) into ref, named "<what>NAME". */
static int parse_ref(json_t *obj, json_t *pc, size_t i, const char *ns, const char *what,
		     struct claim_ref *ref, struct sc_buf *why)
{
	const char *name = pk_get_string(pc, "name"), *cn = pk_get_string(pc, "resourceClaimName"),
		   *tn = pk_get_string(pc, "resourceClaimTemplateName");
	json_t *gen;
	bool found;

	if (!name || !*name || (!cn == !tn)) {
		sc_buf_printf(why,
			      "spec.resourceClaims[%zu]: a name and exactly one of "
			      "resourceClaimName and resourceClaimTemplateName required",
			      i);
		return -EINVAL;
	}
	if (asprintf(&ref->name, "%s%s", what, name) < 0) {
		ref->name = NULL;
		return -ENOMEM;
	}
	if (tn) {
		if (!(ref->tmpl = strdup(tn)))
			return -ENOMEM;
		gen = claim_status(obj, name, &found);
		if (found && !json_is_string(gen))
			return 1; /* the controller says no claim is needed */
		cn = json_string_value(gen);
	}
	if (cn && !(ref->key = sc_key(ns, cn)))
		return -ENOMEM;
	return 0;
}

/* Does the pod's PodGroup have claims, or is it not seen yet (then it may)? */
static bool group_may_have_claims(struct pk_sched *s, const struct sc_pod *pod)
{
	const struct sc_group *g =
	    pod->group_key ? sc_forest_find(&s->forest, pod->group_key, false) : NULL;

	return pod->group_key && (!g || !g->present || g->spec.claims_obj);
}

static int claims_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *pcs = pk_get(obj, "spec.resourceClaims");
	size_t n = json_array_size(pcs);
	struct claims_pod *cp;
	const char *uid = pk_get_string(obj, "metadata.uid");
	int r = 0;

	if (!n && !group_may_have_claims(s, pod))
		return 0;
	if (n > SC_CONS_MAX_TERMS) {
		sc_buf_printf(why, "spec.resourceClaims: more than %d claims", SC_CONS_MAX_TERMS);
		return -EINVAL;
	}
	cp = calloc(1, sizeof(*cp) + n * sizeof(cp->refs[0]));
	if (!cp || (uid && !(cp->uid = strdup(uid)))) {
		pod_free(cp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct claim_ref *ref = &cp->refs[cp->n];

		r = parse_ref(obj, json_array_get(pcs, i), i, pod->ns, "pod claim ", ref, why);
		if (r < 0)
			break;
		if (r == 0 && !ref_seen(cp->refs, cp->n, ref)) {
			cp->n++;
		} else {
			ref_clear(ref);
			r = 0;
		}
	}
	cp->npod = cp->n;
	if (r < 0) {
		pod_free(cp);
		return r;
	}
	pod->cons->state[SC_PLUGIN_CLAIMS] = cp;
	return 0;
}

static void claims_release(struct pk_sched *s, struct sc_pod *pod)
{
	(void)s;
	pod_free(pod->cons->state[SC_PLUGIN_CLAIMS]);
	pod->cons->state[SC_PLUGIN_CLAIMS] = NULL;
}

/* The pod's PodGroup says claims now: a slot for them, should the pod have none. */
static int claims_group_changed(struct sc_pod *pod)
{
	if (pod->cons && pod->cons->state[SC_PLUGIN_CLAIMS])
		return 0;
	if (!pod->cons && !(pod->cons = calloc(1, sizeof(*pod->cons))))
		return -ENOMEM;
	pod->cons->state[SC_PLUGIN_CLAIMS] = calloc(1, sizeof(struct claims_pod));
	return pod->cons->state[SC_PLUGIN_CLAIMS] ? 0 : -ENOMEM;
}

/* The group's claims into cp (from refs[npod]); cp may move.  gbad says what failed. */
static struct claims_pod *group_refs(struct claims_pod *cp, const struct sc_group *g)
{
	json_t *pcs = pk_get(g->spec.claims_obj, "spec.resourceClaims");
	size_t ng = json_array_size(pcs);
	struct claims_pod *ncp;
	char what[600];
	int r = 0;

	if (cp->npod + ng > SC_CONS_MAX_TERMS) {
		snprintf(cp->gbad, sizeof(cp->gbad),
			 "PodGroup %s: spec.resourceClaims: more than %d claims with the pod's own",
			 g->key, SC_CONS_MAX_TERMS);
		return cp;
	}
	ncp = realloc(cp, sizeof(*cp) + (cp->npod + ng) * sizeof(cp->refs[0]));
	if (!ncp) {
		snprintf(cp->gbad, sizeof(cp->gbad), "PodGroup %s: claims: out of memory", g->key);
		return cp;
	}
	cp = ncp;
	snprintf(what, sizeof(what), "PodGroup %s claim ", g->key);
	for (size_t i = 0; i < ng && r >= 0; i++) {
		struct claim_ref *ref = &cp->refs[cp->n];
		struct sc_buf why = {0};

		*ref = (struct claim_ref){0};
		r = parse_ref(g->spec.claims_obj, json_array_get(pcs, i), i, g->ns, what, ref,
			      &why);
		if (r < 0)
			snprintf(cp->gbad, sizeof(cp->gbad), "PodGroup %s: %s", g->key,
				 r == -ENOMEM ? "out of memory"
				 : why.s      ? why.s
					      : "bad claim");
		sc_buf_free(&why);
		if (r == 0 && !ref_seen(cp->refs, cp->n, ref))
			cp->n++;
		else
			ref_clear(ref);
	}
	return cp;
}

/*
 * The pod's claims with its PodGroup's as the group now says; kept as they
 * are while one of the group's claims is charged for the pod.
 */
static struct claims_pod *pod_claims(const struct sc_pod *pod)
{
	struct claims_pod *cp = pod->cons ? pod->cons->state[SC_PLUGIN_CLAIMS] : NULL;
	const struct sc_group *g = pod->group;
	uint64_t gen =
	    g && g->present && !g->composite && g->spec.claims_obj ? g->spec.claims_gen : 0;

	if (!cp || cp->group_gen == gen)
		return cp;
	for (size_t i = cp->npod; i < cp->n; i++)
		if (cp->refs[i].entry)
			return cp;
	while (cp->n > cp->npod)
		ref_clear(&cp->refs[--cp->n]);
	cp->gbad[0] = 0;
	if (gen)
		cp = group_refs(cp, g);
	cp->group_gen = gen;
	pod->cons->state[SC_PLUGIN_CLAIMS] = cp;
	return cp;
}

/* ---- filter and charge ----------------------------------------------------------- */

static bool reserved_by(const json_t *reserved, const struct sc_pod *pod)
{
	json_t *x;
	size_t i;

	json_array_foreach(reserved, i, x)
	{
		const char *n = pk_get_string(x, "name"), *res = pk_get_string(x, "resource");

		if (n && strcmp(n, pod->name) == 0 && (!res || strcmp(res, "pods") == 0))
			return true;
	}
	return false;
}

/* Could pod use the held claim e on node dn?  0, or -ENOSPC with why. */
static int held_fits(const struct sc_claim *e, const struct sc_pod *pod, const struct dra_node *dn,
		     char *why, size_t whylen)
{
	size_t reserved = json_array_size(e->reserved);

	if (!dra_allocation_admits(&e->cur, dn)) {
		snprintf(why, whylen,
			 "ResourceClaim %s: allocated for nodes that do not include node %s",
			 e->key, dn->name);
		return -ENOSPC;
	}
	if ((reserved >= RESERVED_MAX || e->users.n >= RESERVED_MAX) &&
	    !reserved_by(e->reserved, pod)) {
		snprintf(why, whylen, "ResourceClaim %s: reservedFor holds its maximum of %d pods",
			 e->key, RESERVED_MAX);
		return -ENOSPC;
	}
	return 0;
}

/*
 * The fast check of the only unallocated claim of a pod when it is simple:
 * SC_FIT, SC_MISFIT_CLAIM with why, or -1 to search instead.
 */
/* The device-index slot of snapshot node i (cached per node and generation). */
static int node_slot(struct sc_dra *d, int i, const struct dra_node *dn)
{
	uint64_t gen = dra_state_generation(d->st);

	if (gen != d->slots_gen) {
		free(d->slots);
		d->slots = NULL;
		d->nslots = 0;
		d->slots_gen = gen;
	}
	if ((size_t)i >= d->nslots) {
		size_t n = (size_t)i + 1 > 2 * d->nslots ? (size_t)i + 1 : 2 * d->nslots;
		struct node_slot *v = realloc(d->slots, n * sizeof(*v));

		if (!v)
			return DRA_SLOT_LOOKUP;
		memset(v + d->nslots, 0, (n - d->nslots) * sizeof(*v));
		d->slots = v;
		d->nslots = n;
	}
	if (d->slots[i].name != dn->name) {
		d->slots[i].name = dn->name;
		d->slots[i].slot = dra_node_slot(d->st, dn->name);
	}
	return d->slots[i].slot;
}

static int fast_check(struct sc_dra *d, struct claims_pod *cp, const struct claim_ref *ref,
		      struct sc_claim *e, const struct dra_node *dn, int node)
{
	int n = dra_free_count(d->st, e->simple_class, dn, node_slot(d, node, dn),
			       (size_t)e->simple_count);

	if (n < 0)
		return -1; /* no class, a selector error: the search says it */
	if (n >= e->simple_count)
		return SC_FIT;
	/* why, in the allocator's words (counted only on a misfit) */
	int match = dra_match_count(d->st, e->simple_class, dn, node_slot(d, node, dn), SIZE_MAX);

	if (match <= 0)
		snprintf(cp->why, sizeof(cp->why),
			 "%s: ResourceClaim %s: request %s: no device of class %s matches on "
			 "node %s",
			 ref->name, e->key, e->simple_req, e->simple_class, dn->name);
	else
		snprintf(cp->why, sizeof(cp->why),
			 "%s: ResourceClaim %s: request %s: devices taken: %d of class %s match "
			 "on node %s, %d free, %lld wanted",
			 ref->name, e->key, e->simple_req, match, e->simple_class, dn->name, n,
			 (long long)e->simple_count);
	return SC_MISFIT_CLAIM;
}

static enum sc_misfit filter_on(struct sc_snapshot *snap, const struct sc_pod *pod,
				struct claims_pod *cp, const struct dra_node *dn, int node)
{
	struct sc_dra *d = snap->dra;
	struct dra_allocation tmp[SC_CONS_MAX_TERMS];
	struct sc_claim *es[SC_CONS_MAX_TERMS];
	size_t ntmp = 0, unheld = 0;
	enum sc_misfit m = SC_FIT;
	char why[400];

	if (cp->gbad[0]) {
		snprintf(cp->why, sizeof(cp->why), "%s", cp->gbad);
		return SC_MISFIT_CLAIM;
	}
	for (size_t i = 0; i < cp->n; i++) {
		es[i] = cp->refs[i].key && d ? pk_map_get(&d->claims, cp->refs[i].key) : NULL;
		unheld += es[i] && !es[i]->held;
	}
	for (size_t i = 0; i < cp->n && m == SC_FIT; i++) {
		const struct claim_ref *ref = &cp->refs[i];
		struct sc_claim *e = es[i];
		int r;

		if (e && !e->held && unheld == 1 && e->simple_class &&
		    (r = fast_check(d, cp, ref, e, dn, node)) >= 0) {
			m = (enum sc_misfit)r;
			continue;
		}
		m = SC_MISFIT_CLAIM;
		if (!ref->key) {
			snprintf(cp->why, sizeof(cp->why),
				 "%s: waiting for the ResourceClaim of template %s to "
				 "be created",
				 ref->name, ref->tmpl);
		} else if (!e) {
			snprintf(cp->why, sizeof(cp->why), "%s: ResourceClaim %s not found",
				 ref->name, ref->key);
		} else if (e->held) {
			if (held_fits(e, pod, dn, why, sizeof(why)) == 0)
				m = SC_FIT;
			else
				snprintf(cp->why, sizeof(cp->why), "%s: %s", ref->name, why);
		} else if ((r = dra_allocate(d->st, e->obj, dn, &tmp[ntmp], why, sizeof(why))) <
			   0) {
			snprintf(cp->why, sizeof(cp->why), "%s: ResourceClaim %s: %s", ref->name,
				 e->key, r == -ENOMEM ? "out of memory" : why);
		} else if (dra_commit(d->st, &tmp[ntmp]) < 0) {
			dra_allocation_clear(&tmp[ntmp]);
			snprintf(cp->why, sizeof(cp->why), "%s: ResourceClaim %s: devices taken",
				 ref->name, e->key);
		} else {
			ntmp++;
			m = SC_FIT;
		}
	}
	while (ntmp > 0) {
		dra_release(d->st, &tmp[--ntmp]);
		dra_allocation_clear(&tmp[ntmp]);
	}
	return m;
}

static enum sc_misfit claims_filter(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	struct claims_pod *cp = pod_claims(pod);
	struct pk_kv buf[64], *kv;
	struct dra_node dn;
	enum sc_misfit m;

	if (!cp || (!cp->n && !cp->gbad[0]))
		return SC_FIT;
	kv = node_view(snap->nodes[node], &dn, buf, 64);
	if (!kv)
		return SC_MISFIT_CLAIM;
	m = filter_on(snap, pod, cp, &dn, node);
	if (kv != buf)
		free(kv);
	return m;
}

static void claims_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign)
{
	struct claims_pod *cp = sign > 0 ? pod_claims(pod) : pod->cons->state[SC_PLUGIN_CLAIMS];
	struct sc_dra *d = snap->dra;

	if (!cp || !d)
		return;
	for (size_t i = 0; i < cp->n; i++) {
		struct claim_ref *ref = &cp->refs[i];
		struct sc_claim *e;

		if (sign > 0) {
			e = ref->key ? pk_map_get(&d->claims, ref->key) : NULL;
			if (!e || sc_vec_push(&e->users, (void *)pod) < 0)
				continue;
			ref->entry = e;
			e->freed = false;
			entry_sync(snap, e, node);
			continue;
		}
		if (!(e = ref->entry))
			continue;
		ref->entry = NULL;
		sc_vec_remove(&e->users, pod);
		if (!e->users.n && snap->removing && e->has_api)
			e->freed = true;
		entry_sync(snap, e, node);
		if (e->zombie && !e->users.n)
			entry_drop(d, e);
	}
}

/* Why the pod's claims did not fit, when they are among its last misfits. */
static const char *claims_why(const struct sc_pod *pod)
{
	const struct claims_pod *cp = pod->cons ? pod->cons->state[SC_PLUGIN_CLAIMS] : NULL;

	if (!pod->cycle.fail || !pod->cycle.fail->misfit[SC_MISFIT_CLAIM])
		return NULL;
	return cp && cp->why[0] ? cp->why : NULL;
}

/* ---- results --------------------------------------------------------------------- */

/* e's status.reservedFor with every user added (new reference). */
static json_t *reserved_with_users(const struct sc_claim *e)
{
	json_t *v = json_deep_copy(e->reserved);

	for (size_t i = 0; v && i < e->users.n && json_array_size(v) < RESERVED_MAX; i++) {
		const struct sc_pod *p = e->users.v[i];
		const struct claims_pod *cp = p->cons ? p->cons->state[SC_PLUGIN_CLAIMS] : NULL;
		json_t *r;

		if (reserved_by(v, p))
			continue;
		r = json_pack("{s:s, s:s}", "resource", "pods", "name", p->name);
		if (r && cp && cp->uid)
			json_object_set_new(r, "uid", json_string(cp->uid));
		if (!r || json_array_append_new(v, r) < 0) {
			json_decref(v);
			return NULL;
		}
	}
	return v;
}

static int emit_claim(struct pk_sched_result *res, struct sc_claim *e)
{
	json_t *alloc = e->has_api ? json_incref(e->api_json) : dra_allocation_json(&e->cur);
	json_t *reserved = reserved_with_users(e), *status = NULL;
	int r = -ENOMEM;

	if (alloc && reserved)
		status = json_pack("{s:O, s:O}", "allocation", alloc, "reservedFor", reserved);
	if (status) {
		const char *ns_end = strchr(e->key, '/');
		char ns[256];

		snprintf(ns, sizeof(ns), "%.*s", (int)(ns_end - e->key), e->key);
		r = sc_result_claim(res, ns, ns_end + 1, status);
	}
	if (r == 0 && !e->has_api) {
		/* the scheduler's view takes its own result at once */
		struct dra_allocation a = {0};

		if (dra_allocation_parse(alloc, &a) == 0) {
			e->api = a;
			e->api_json = json_incref(alloc);
			e->has_api = true;
		}
	}
	if (r == 0) {
		json_decref(e->reserved);
		e->reserved = json_incref(reserved);
	}
	json_decref(status);
	json_decref(alloc);
	json_decref(reserved);
	return r;
}

/*
 * PreBind: the claims pod's placement allocated or reserved, as actions
 * ahead of its binding; a claim its gang shares is written once a cycle.
 */
static int claims_pre_bind(struct sc_ctx *ctx, const struct sc_pod *pod, const char *node)
{
	struct claims_pod *cp = pod->cons ? pod->cons->state[SC_PLUGIN_CLAIMS] : NULL;
	int r = 0;

	(void)node;
	for (size_t k = 0; cp && k < cp->n && r == 0; k++) {
		struct sc_claim *e = cp->refs[k].entry;

		if (!e || !e->held || e->bound_stamp == ctx->stamp)
			continue;
		e->bound_stamp = ctx->stamp;
		r = emit_claim(ctx->res, e);
	}
	return r;
}

/* A cycle begins: its device searches share one budget; deallocations owed are told. */
static int claims_cycle(struct pk_sched *s, struct pk_sched_result *res)
{
	struct sc_dra *d = s->snap.dra;
	json_t *k;
	size_t i;
	int r = 0;

	if (d)
		dra_cycle_begin(d->st);
	if (!d || !json_array_size(d->dealloc))
		return 0;
	json_array_foreach(d->dealloc, i, k)
	{
		struct sc_claim *e = pk_map_get(&d->claims, json_string_value(k));
		const char *slash;
		char ns[256];
		json_t *status;

		if (!e || e->has_api || e->users.n || r < 0)
			continue;
		slash = strchr(e->key, '/');
		snprintf(ns, sizeof(ns), "%.*s", (int)(slash - e->key), e->key);
		status = json_object();
		r = status ? sc_result_claim(res, ns, slash + 1, status) : -ENOMEM;
		json_decref(status);
	}
	json_array_clear(d->dealloc);
	return r;
}

static void dealloc_unreserved(struct pk_sched *s, struct sc_claim *e,
			       const struct sc_pod *leaving);

/* Pod leaves for good (deleted, preempted): its reservations go. */
static void claims_pod_gone(struct pk_sched *s, const struct sc_pod *pod)
{
	struct claims_pod *cp = pod_claims(pod);
	struct sc_dra *d = s->snap.dra;

	for (size_t i = 0; cp && d && i < cp->n; i++) {
		struct sc_claim *e =
		    cp->refs[i].key ? pk_map_get(&d->claims, cp->refs[i].key) : NULL;
		size_t k;
		json_t *x;

		if (!e)
			continue;
		json_array_foreach(e->reserved, k, x)
		{
			if (pk_get_string(x, "name") &&
			    strcmp(pk_get_string(x, "name"), pod->name) == 0) {
				json_array_remove(e->reserved, k);
				break;
			}
		}
		dealloc_unreserved(s, e, pod);
	}
}

/*
 * An allocated claim no pod reserves and none but leaving (or none) uses:
 * the claim controller deallocates it, told by the next cycle.
 */
static void dealloc_unreserved(struct pk_sched *s, struct sc_claim *e, const struct sc_pod *leaving)
{
	if (!e->has_api || json_array_size(e->reserved) ||
	    !(e->users.n == 0 || (e->users.n == 1 && e->users.v[0] == leaving)))
		return;
	e->has_api = false;
	dra_allocation_clear(&e->api);
	json_decref(e->api_json);
	e->api_json = NULL;
	json_array_append_new(s->snap.dra->dealloc, json_string(e->key));
	entry_sync(&s->snap, e, -1);
	s->gen++;
}

/* Is reservedFor entry x of the claim of key ("ns/name") a pod the scheduler lacks? */
static bool reserved_pod_gone(const struct pk_sched *s, const char *key, const json_t *x)
{
	const char *slash = strchr(key, '/'), *res = pk_get_string(x, "resource");
	const char *name = pk_get_string(x, "name");
	char *pk = NULL;
	bool gone;

	if (!slash || !name || (res && strcmp(res, "pods") != 0))
		return false;
	if (asprintf(&pk, "%.*s/%s", (int)(slash - key), key, name) < 0)
		return false;
	gone = !pk_map_get(&s->forest.pods, pk);
	free(pk);
	return gone;
}

static void claims_complete(struct pk_sched *s)
{
	struct sc_dra *d = s->snap.dra;

	for (size_t i = 0; d && i < d->all.n; i++) {
		struct sc_claim *e = d->all.v[i];
		size_t before = json_array_size(e->reserved);

		if (!e->obj || !before)
			continue;
		for (size_t k = before; k-- > 0;)
			if (reserved_pod_gone(s, e->key, json_array_get(e->reserved, k)))
				json_array_remove(e->reserved, k);
		if (json_array_size(e->reserved) != before)
			dealloc_unreserved(s, e, NULL);
	}
}

static const struct sc_plugin_event claims_events[] = {
    {.kind = &pk_type_device_class, .set = claims_set, .remove = claims_remove},
    {.kind = &pk_type_resource_slice, .set = claims_set, .remove = claims_remove},
    {.kind = &pk_type_resource_claim, .set = claims_set, .remove = claims_remove},
};

const struct sc_plugin_ops sc_plugin_claims = {
    .name = "DynamicResources",
    .parse = claims_parse,
    .release = claims_release,
    .filter = claims_filter,
    .charge = claims_charge,
    .pre_bind = claims_pre_bind,
    .cycle = claims_cycle,
    .pod_gone = claims_pod_gone,
    .why = claims_why,
    .group_changed = claims_group_changed,
    .complete = claims_complete,
    .events = claims_events,
    .nevents = sizeof(claims_events) / sizeof(claims_events[0]),
};
