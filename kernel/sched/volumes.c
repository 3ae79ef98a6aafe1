/* SPDX-License-Identifier: Apache-2.0 */
/*
 * volumes.c — persistent volumes (kube-scheduler's VolumeBinding,
 * VolumeRestrictions, VolumeZone and NodeVolumeLimits).
 *
 * The catalog (struct sc_vols, one per scheduler, snap->vols) holds what
 * scheduling reads of PersistentVolumeClaims, PersistentVolumes,
 * StorageClasses and CSINodes; a pod's state names its claims (its
 * persistentVolumeClaim volumes, and "<pod>-<volume>" for each generic
 * ephemeral volume) and its inline CSI volumes.
 *
 * Before any node is tried (PreFilter), a pod whose claim is missing, being
 * deleted, bound to a missing volume, of a missing class, or unbound in
 * Immediate mode is held: UnschedulableAndUnresolvable with a message that
 * names the claim (its PreFilter).  The hold is computed again whenever the
 * catalog changed, and a change wakes the queue (s->gen).
 *
 * Filter, per claim:
 *   - bound (spec.volumeName): the volume's required node affinity and its
 *     zone and region labels must admit the node;
 *   - unbound, WaitForFirstConsumer: a claim already given a node
 *     (volume.kubernetes.io/selected-node, or assumed by a member of the
 *     same gang) fits that node only; else a free static volume of the
 *     claim's class, access modes, volume mode, size and selector whose
 *     affinity admits the node (the smallest such, then by name), else the
 *     class's provisioner (not kubernetes.io/no-provisioner) where its
 *     allowedTopologies admit the node;
 *   - ReadWriteOncePod: no other bound or assumed pod uses the claim;
 *   - CSI attach limits: the node's distinct volumes of each driver, with
 *     the pod's new ones, stay within CSINode spec.drivers[].allocatable.count.
 * charge() follows the snapshot's undo log: a pod's +1 takes the volume it
 * chose for each unbound claim (assumed: no other claim may take it, and
 * every pod sharing the claim goes where it is), counts the claim's users
 * and attaches its CSI volumes to the node; -1 gives back exactly that.
 * When a placement is committed the assumptions become the claim's own
 * (spec.volumeName, or the selected node) and the result carries them as
 * PK_SCHED_VOLUME_CLAIM actions ahead of the pod's binding.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-result.h"
#include "kernel/sched/sched-snapshot.h"

#define NO_PROVISIONER "kubernetes.io/no-provisioner"

enum { MODE_RWO = 1, MODE_ROX = 2, MODE_RWX = 4, MODE_RWOP = 8 };

struct vclaim {
	char *ns, *name;
	bool present;  /* false: gone, kept while pods still count on it */
	bool deleting; /* metadata.deletionTimestamp */
	char *cls;     /* spec.storageClassName ("" for none) */
	char *volume;  /* spec.volumeName, NULL: unbound */
	char *selected;
	char *owner_uid; /* controller ownerReference (generic ephemeral volumes) */
	unsigned modes;
	bool block;
	int64_t request; /* bytes */
	bool has_sel;
	struct sc_lsel sel;
	/* bound or assumed pods using it; the volume or node assumed for it */
	int users;
	int refs;
	struct vpv *pv;
	int node;
};

struct vpv {
	char *name, *cls;
	bool available; /* not Released or Failed, not being deleted */
	int64_t capacity;
	unsigned modes;
	bool block;
	char *ref_ns, *ref_name; /* spec.claimRef */
	struct sc_sel_term *terms;
	size_t nterms;
	bool has_affinity;
	struct sc_labels labels;
	char *driver, *handle; /* spec.csi */
	struct vclaim *assumed_by;
};

struct vclass {
	char *name, *provisioner;
	bool wffc;
	struct sc_sel_term *topo; /* allowedTopologies (terms ORed), none: anywhere */
	size_t ntopo;
};

struct vdriver {
	char *name;
	int64_t count;
};
struct vcsinode {
	struct vdriver *d;
	size_t n;
};

struct vattach {
	char *driver, *handle;
	int count;
};
struct vnode {
	struct vattach *v;
	size_t n, cap;
};

struct sc_vols {
	struct pk_map claims, pvs, classes, csinodes;
	struct sc_vec pv_all;
	struct pk_map bound_to; /* volume name -> claim whose spec.volumeName names it */
	uint64_t version;
	struct vnode *nodes;
	size_t nnodes;
};

/* A pod's volumes. */
struct vref {
	char *claim;	    /* claim name (namespace: the pod's) */
	char *path;	    /* field path, for messages */
	bool ephemeral;	    /* generic ephemeral: owned by the pod */
	bool took;	    /* this pod's charge holds a ref on the claim's assumption */
	char *drv, *handle; /* inline CSI volume (claim NULL) */
};
struct vpod {
	struct sc_vols *cat;
	char *uid;
	struct vref *v;
	size_t n;
	uint64_t ver;
	char *hold;
	bool held_valid;
	struct vattach *charged; /* what +1 attached, to give back on -1 */
	size_t ncharged;
	int charged_node;
	bool users_counted;
};

/* ---- small helpers -------------------------------------------------------------- */

static void terms_free(struct sc_sel_term *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < t[i].nreqs; k++) {
			free(t[i].reqs[k].key);
			for (size_t j = 0; j < t[i].reqs[k].nvalues; j++)
				free(t[i].reqs[k].values[j]);
			free(t[i].reqs[k].values);
		}
		free(t[i].reqs);
	}
	free(t);
}

static int op_of(const char *op)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

	for (int i = 0; op && i < 6; i++)
		if (strcmp(op, ops[i]) == 0)
			return i;
	return -1;
}

/*
 * Node selector terms from a JSON list: exprs_key names the list of
 * requirements of each term ("matchExpressions", or "matchLabelExpressions"
 * of a TopologySelectorTerm, whose requirements are In).  -EINVAL on a bad
 * operator, -ENOMEM.
 */
static int terms_parse(json_t *list, const char *exprs_key, struct sc_sel_term **ret, size_t *ret_n)
{
	size_t n = json_array_size(list);
	struct sc_sel_term *t = calloc(n + 1, sizeof(*t));

	*ret = t;
	*ret_n = 0;
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++, (*ret_n)++) {
		json_t *term = json_array_get(list, i);
		json_t *ex = json_object_get(term, exprs_key),
		       *fi = json_object_get(term, "matchFields");
		size_t ne = json_array_size(ex), nf = json_array_size(fi);

		t[i].reqs = calloc(ne + nf + 1, sizeof(*t[i].reqs));
		if (!t[i].reqs)
			return -ENOMEM;
		for (size_t k = 0; k < ne + nf; k++, t[i].nreqs++) {
			json_t *e = k < ne ? json_array_get(ex, k) : json_array_get(fi, k - ne);
			json_t *vals = json_object_get(e, "values");
			struct sc_sel_req *r = &t[i].reqs[k];
			int op = strcmp(exprs_key, "matchLabelExpressions") == 0
				     ? PK_SEL_IN
				     : op_of(json_string_value(json_object_get(e, "operator")));

			r->key = sc_strdup(json_string_value(json_object_get(e, "key")));
			r->values = calloc(json_array_size(vals) + 1, sizeof(char *));
			if (!r->values)
				return -ENOMEM;
			if (op < 0 || !r->key)
				return -EINVAL;
			r->op = (enum pk_selector_op)op;
			r->field = k >= ne;
			for (size_t j = 0; j < json_array_size(vals); j++, r->nvalues++) {
				const char *v = json_string_value(json_array_get(vals, j));

				if (!v)
					return -EINVAL;
				if (!(r->values[j] = strdup(v)))
					return -ENOMEM;
			}
		}
	}
	return 0;
}

static bool terms_admit(const struct sc_sel_term *t, size_t n, const struct sc_node *node)
{
	for (size_t i = 0; i < n; i++)
		if (sc_node_matches_term(&t[i], node))
			return true;
	return false;
}

static unsigned modes_of(json_t *list)
{
	static const char *const names[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
					    "ReadWriteOncePod"};
	unsigned m = 0;

	for (size_t i = 0; i < json_array_size(list); i++)
		for (int k = 0; k < 4; k++)
			if (json_is_string(json_array_get(list, i)) &&
			    strcmp(json_string_value(json_array_get(list, i)), names[k]) == 0)
				m |= 1u << k;
	return m;
}

static int64_t bytes_of(json_t *q)
{
	int64_t milli = -1;

	if (json_is_integer(q) && json_integer_value(q) >= 0 &&
	    json_integer_value(q) <= INT64_MAX / 1000)
		milli = json_integer_value(q) * 1000;
	else if (!json_is_string(q) || topo_quantity_parse(json_string_value(q), &milli) < 0)
		return -1;
	if (milli < 0)
		return -1;
	return milli / 1000 + (milli % 1000 != 0);
}

static bool streq0(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* ---- the catalog ------------------------------------------------------------------ */

static void claim_free_v(void *p);
static void class_free_v(void *p);
static void csinode_free_v(void *p);

/* The catalogue, made on first use; its claims, classes and CSINodes are its own. */
static struct sc_vols *cat_of(struct pk_sched *s)
{
	struct sc_vols *cat = s->snap.vols;

	if (!cat && (cat = calloc(1, sizeof(*cat)))) {
		cat->claims = (struct pk_map)PK_MAP_INIT(claim_free_v);
		cat->classes = (struct pk_map)PK_MAP_INIT(class_free_v);
		cat->csinodes = (struct pk_map)PK_MAP_INIT(csinode_free_v);
		s->snap.vols = cat;
	}
	return cat;
}

static void claim_fields_free(struct vclaim *c)
{
	free(c->cls);
	free(c->volume);
	free(c->selected);
	free(c->owner_uid);
	sc_lsel_clear(&c->sel);
	c->cls = c->volume = c->selected = c->owner_uid = NULL;
	c->has_sel = false;
}

static void claim_free(struct vclaim *c)
{
	if (!c)
		return;
	claim_fields_free(c);
	free(c->ns);
	free(c->name);
	free(c);
}

static void pv_free(struct vpv *v)
{
	if (!v)
		return;
	free(v->name);
	free(v->cls);
	free(v->ref_ns);
	free(v->ref_name);
	terms_free(v->terms, v->nterms);
	sc_labels_clear(&v->labels);
	free(v->driver);
	free(v->handle);
	free(v);
}

static void class_free(struct vclass *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->provisioner);
	terms_free(c->topo, c->ntopo);
	free(c);
}

static void csinode_free(struct vcsinode *c)
{
	for (size_t i = 0; c && i < c->n; i++)
		free(c->d[i].name);
	if (c)
		free(c->d);
	free(c);
}

static void claim_free_v(void *p)
{
	claim_free(p);
}
static void class_free_v(void *p)
{
	class_free(p);
}
static void csinode_free_v(void *p)
{
	csinode_free(p);
}

void sc_vols_free(struct sc_snapshot *snap)
{
	struct sc_vols *cat = snap->vols;

	if (!cat)
		return;
	pk_map_free(&cat->claims);
	pk_map_free(&cat->classes);
	pk_map_free(&cat->csinodes);
	for (size_t i = 0; i < cat->pv_all.n; i++)
		pv_free(cat->pv_all.v[i]);
	sc_vec_free(&cat->pv_all);
	pk_map_free(&cat->pvs);
	pk_map_free(&cat->bound_to);
	for (size_t i = 0; i < cat->nnodes; i++) {
		for (size_t k = 0; k < cat->nodes[i].n; k++) {
			free(cat->nodes[i].v[k].driver);
			free(cat->nodes[i].v[k].handle);
		}
		free(cat->nodes[i].v);
	}
	free(cat->nodes);
	free(cat);
	snap->vols = NULL;
}

static struct vclaim *claim_get(const struct sc_vols *cat, const char *ns, const char *name)
{
	char *k = sc_key(ns, name);
	struct vclaim *c = k ? pk_map_get(&cat->claims, k) : NULL;

	free(k);
	return c;
}

static void unbind_name(struct sc_vols *cat, struct vclaim *c)
{
	if (c->volume && pk_map_get(&cat->bound_to, c->volume) == c)
		pk_map_del(&cat->bound_to, c->volume);
}

static int claim_read(struct vclaim *c, json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec"), *refs, *sel;
	const char *vn = json_string_value(json_object_get(spec, "volumeName"));
	json_t *ann = pk_get(obj, "metadata.annotations");
	const char *selected = json_string_value(json_object_get(ann, PK_SCHED_ANN_SELECTED_NODE));
	struct sc_buf why = {0};

	c->present = true;
	c->deleting = pk_get(obj, "metadata.deletionTimestamp") != NULL;
	c->cls = dup_or_empty(json_string_value(json_object_get(spec, "storageClassName")));
	c->volume = vn && *vn ? strdup(vn) : NULL;
	c->selected = selected && *selected ? strdup(selected) : NULL;
	c->modes = modes_of(json_object_get(spec, "accessModes"));
	c->block = streq0(json_string_value(json_object_get(spec, "volumeMode")), "Block");
	c->request = bytes_of(pk_get(spec, "resources.requests.storage"));
	refs = pk_get(obj, "metadata.ownerReferences");
	for (size_t i = 0; i < json_array_size(refs); i++) {
		json_t *r = json_array_get(refs, i);

		if (json_is_true(json_object_get(r, "controller")) && !c->owner_uid)
			c->owner_uid = sc_strdup(json_string_value(json_object_get(r, "uid")));
	}
	sel = json_object_get(spec, "selector");
	if (json_is_object(sel)) {
		c->has_sel = true;
		if (sc_lsel_parse(sel, "spec.selector", &c->sel, &why) == -EINVAL) {
			/* validation refuses it; an unparsable selector matches no volume */
			sc_lsel_clear(&c->sel);
			c->sel.null = true;
		}
		sc_buf_free(&why);
	}
	return c->cls && (!vn || !*vn || c->volume) && (!selected || !*selected || c->selected)
		   ? 0
		   : -ENOMEM;
}

static int add_claim(struct sc_vols *cat, json_t *obj)
{
	const char *ns = pk_namespace(obj), *name = pk_name(obj);
	struct vclaim *c = claim_get(cat, ns ? ns : "default", name);
	char *k;
	int r;

	if (c) {
		unbind_name(cat, c);
		claim_fields_free(c);
	} else {
		c = calloc(1, sizeof(*c));
		k = sc_key(ns ? ns : "default", name);
		if (!c || !k || !(c->ns = strdup(ns ? ns : "default")) ||
		    !(c->name = strdup(name)) || pk_map_put(&cat->claims, k, c) < 0) {
			free(k);
			claim_free(c);
			return -ENOMEM;
		}
		free(k);
		c->node = -1;
	}
	r = claim_read(c, obj);
	if (r == 0 && c->volume)
		r = pk_map_put(&cat->bound_to, c->volume, c);
	if (r == 0 && c->volume && c->refs > 0) {
		/* bound meanwhile: the assumption is the claim's own now */
		if (c->pv)
			c->pv->assumed_by = NULL;
		c->pv = NULL;
		c->node = -1;
		c->refs = 0;
	}
	return r;
}

static void remove_claim(struct sc_vols *cat, const char *ns, const char *name)
{
	struct vclaim *c = claim_get(cat, ns, name);
	char *k;

	if (!c)
		return;
	unbind_name(cat, c);
	if (c->users > 0 || c->refs > 0) {
		c->present = false; /* pods still count on it: kept, held as missing */
		return;
	}
	k = sc_key(ns, name);
	if (k)
		pk_map_del(&cat->claims, k); /* the map frees it */
	else
		c->present = false; /* out of memory: kept, held as missing */
	free(k);
}

static int pv_read(struct vpv *v, json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec"), *ref = json_object_get(spec, "claimRef");
	const char *phase = pk_get_string(obj, "status.phase");
	json_t *terms = pk_get(spec, "nodeAffinity.required.nodeSelectorTerms");
	int r;

	v->cls = dup_or_empty(json_string_value(json_object_get(spec, "storageClassName")));
	v->available = !pk_get(obj, "metadata.deletionTimestamp") &&
		       !(phase && (strcmp(phase, "Released") == 0 || strcmp(phase, "Failed") == 0));
	v->capacity = bytes_of(pk_get(spec, "capacity.storage"));
	v->modes = modes_of(json_object_get(spec, "accessModes"));
	v->block = streq0(json_string_value(json_object_get(spec, "volumeMode")), "Block");
	if (json_is_object(ref)) {
		const char *rns = json_string_value(json_object_get(ref, "namespace"));

		v->ref_ns = strdup(rns && *rns ? rns : "default");
		v->ref_name = sc_strdup(json_string_value(json_object_get(ref, "name")));
	}
	v->driver = sc_strdup(pk_get_string(spec, "csi.driver"));
	v->handle = sc_strdup(pk_get_string(spec, "csi.volumeHandle"));
	v->has_affinity = json_is_array(terms);
	r = terms_parse(terms, "matchExpressions", &v->terms, &v->nterms);
	if (r == -EINVAL) { /* validation refuses it: a volume no node admits */
		terms_free(v->terms, v->nterms);
		v->terms = NULL;
		v->nterms = 0;
		r = 0;
	}
	if (r == 0)
		r = sc_labels_parse(obj, &v->labels);
	return r == 0 && v->cls ? 0 : -ENOMEM;
}

static void forget_pv(struct sc_vols *cat, struct vpv *v)
{
	void *value;

	for (size_t i = 0; pk_map_next(&cat->claims, &i, NULL, &value);) {
		struct vclaim *c = value;

		if (c && c->pv == v)
			c->pv = NULL; /* the claim's pods keep their node; nothing else fits */
	}
	pk_map_del(&cat->pvs, v->name);
	sc_vec_remove(&cat->pv_all, v);
	pv_free(v);
}

static int add_pv(struct sc_vols *cat, json_t *obj)
{
	struct vpv *old = pk_map_get(&cat->pvs, pk_name(obj)), *v = calloc(1, sizeof(*v));
	int r;

	if (!v || !(v->name = strdup(pk_name(obj)))) {
		pv_free(v);
		return -ENOMEM;
	}
	r = pv_read(v, obj);
	if (r == 0 && old) {
		v->assumed_by = old->assumed_by;
		if (v->assumed_by)
			v->assumed_by->pv = v;
		old->assumed_by = NULL;
		forget_pv(cat, old);
	}
	if (r == 0 && (r = sc_vec_push(&cat->pv_all, v)) == 0 &&
	    (r = pk_map_put(&cat->pvs, v->name, v)) < 0)
		sc_vec_remove(&cat->pv_all, v);
	if (r < 0)
		pv_free(v);
	return r;
}

static int add_class(struct sc_vols *cat, json_t *obj)
{
	struct vclass *c = calloc(1, sizeof(*c));
	const char *mode = json_string_value(json_object_get(obj, "volumeBindingMode"));
	int r;

	if (!c || !(c->name = strdup(pk_name(obj))) ||
	    !(c->provisioner =
		  dup_or_empty(json_string_value(json_object_get(obj, "provisioner"))))) {
		class_free(c);
		return -ENOMEM;
	}
	c->wffc = mode && strcmp(mode, "WaitForFirstConsumer") == 0;
	r = terms_parse(json_object_get(obj, "allowedTopologies"), "matchLabelExpressions",
			&c->topo, &c->ntopo);
	if (r == 0)
		r = pk_map_put(&cat->classes, c->name, c);
	if (r < 0) {
		class_free(c);
		return r == -EINVAL ? 0 : r; /* validation refuses it */
	}
	return 0; /* the one it replaced, if any, is freed */
}

static int add_csinode(struct sc_vols *cat, json_t *obj)
{
	json_t *drivers = pk_get(obj, "spec.drivers");
	struct vcsinode *c = calloc(1, sizeof(*c));

	if (!c || !(c->d = calloc(json_array_size(drivers) + 1, sizeof(*c->d)))) {
		csinode_free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < json_array_size(drivers); i++) {
		json_t *d = json_array_get(drivers, i), *cnt = pk_get(d, "allocatable.count");
		const char *name = json_string_value(json_object_get(d, "name"));

		if (!name || !json_is_integer(cnt))
			continue; /* no count: no limit */
		if (!(c->d[c->n].name = strdup(name))) {
			csinode_free(c);
			return -ENOMEM;
		}
		c->d[c->n++].count = json_integer_value(cnt);
	}
	if (pk_map_put(&cat->csinodes, pk_name(obj), c) < 0) {
		csinode_free(c);
		return -ENOMEM;
	}
	return 0; /* the one it replaced, if any, is freed */
}

/* A PersistentVolumeClaim, PersistentVolume, StorageClass or CSINode came or changed. */
static int vols_set(struct pk_sched *s, json_t *obj)
{
	struct sc_vols *cat = cat_of(s);
	int r = -EINVAL;

	if (!cat)
		return -ENOMEM;
	if (!pk_name(obj))
		return -EINVAL;
	switch (pk_kind_of(obj)) {
	case PK_KIND_PERSISTENT_VOLUME_CLAIM:
		r = add_claim(cat, obj);
		break;
	case PK_KIND_PERSISTENT_VOLUME:
		r = add_pv(cat, obj);
		break;
	case PK_KIND_STORAGE_CLASS:
		r = add_class(cat, obj);
		break;
	case PK_KIND_CSI_NODE:
		r = add_csinode(cat, obj);
		break;
	default:
		break;
	}
	cat->version++;
	/* a claim bound or a volume come may let a held pod go */
	return r < 0 ? r : SC_HINT_QUEUE;
}

static int vols_remove(struct pk_sched *s, enum pk_kind kind, const char *ns, const char *name)
{
	struct sc_vols *cat = s->snap.vols;
	void *v;

	if (!cat)
		return -ENOENT;
	cat->version++;
	switch (kind) {
	case PK_KIND_PERSISTENT_VOLUME_CLAIM:
		if (!claim_get(cat, ns && *ns ? ns : "default", name))
			return -ENOENT;
		remove_claim(cat, ns && *ns ? ns : "default", name);
		return SC_HINT_QUEUE;
	case PK_KIND_PERSISTENT_VOLUME:
		if (!(v = pk_map_get(&cat->pvs, name)))
			return -ENOENT;
		forget_pv(cat, v);
		return SC_HINT_QUEUE;
	case PK_KIND_STORAGE_CLASS:
		if (!pk_map_get(&cat->classes, name))
			return -ENOENT;
		pk_map_del(&cat->classes, name);
		return SC_HINT_QUEUE;
	case PK_KIND_CSI_NODE:
		if (!pk_map_get(&cat->csinodes, name))
			return -ENOENT;
		pk_map_del(&cat->csinodes, name);
		return SC_HINT_QUEUE;
	default:
		return -ENOENT;
	}
}

/* ---- a pod's volumes ------------------------------------------------------------- */

static int ref_add(struct vpod *st, const char *claim, const char *path, bool eph, const char *drv,
		   const char *handle)
{
	struct vref *v = realloc(st->v, (st->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	st->v = v;
	v = &st->v[st->n++];
	*v = (struct vref){.claim = sc_strdup(claim),
			   .path = strdup(path),
			   .ephemeral = eph,
			   .drv = sc_strdup(drv),
			   .handle = sc_strdup(handle)};
	return v->path && (!claim || v->claim) && (!drv || v->drv) && (!handle || v->handle)
		   ? 0
		   : -ENOMEM;
}

static void vpod_free(struct vpod *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i].claim);
		free(st->v[i].path);
		free(st->v[i].drv);
		free(st->v[i].handle);
	}
	free(st->v);
	free(st->uid);
	free(st->hold);
	for (size_t i = 0; i < st->ncharged; i++) {
		free(st->charged[i].driver);
		free(st->charged[i].handle);
	}
	free(st->charged);
	free(st);
}

/* Inline volumes whose conflicts (VolumeRestrictions) are not implemented. */
static const char *const disk_sources[] = {"gcePersistentDisk", "awsElasticBlockStore", "rbd",
					   "iscsi", NULL};
/* Inline in-tree volumes NodeVolumeLimits counts through CSI migration: not counted here. */
static const char *const migrated_sources[] = {"azureDisk", "cinder", "vsphereVolume",
					       "portworxVolume", NULL};

static int vol_entry(struct vpod *st, const struct sc_pod *pod, json_t *v, size_t i,
		     struct sc_buf *why)
{
	json_t *pvc = json_object_get(v, "persistentVolumeClaim"), *csi = json_object_get(v, "csi");
	const char *vname = json_string_value(json_object_get(v, "name"));
	char path[96], *claim = NULL, *handle = NULL;
	int r = 0;

	for (const char *const *d = disk_sources; *d; d++)
		if (json_object_get(v, *d)) {
			sc_buf_printf(why,
				      "spec.volumes[%zu].%s: disk conflicts of in-tree volumes "
				      "(VolumeRestrictions) are not implemented by this scheduler",
				      i, *d);
			return -EINVAL;
		}
	for (const char *const *d = migrated_sources; *d; d++)
		if (json_object_get(v, *d)) {
			sc_buf_printf(why,
				      "spec.volumes[%zu].%s: attach limits of in-tree volumes "
				      "(NodeVolumeLimits) are not implemented by this scheduler",
				      i, *d);
			return -EINVAL;
		}
	if (pvc) {
		const char *cn = json_string_value(json_object_get(pvc, "claimName"));

		snprintf(path, sizeof(path), "spec.volumes[%zu].persistentVolumeClaim", i);
		if (!cn || !*cn) {
			sc_buf_printf(why, "%s.claimName: Required value", path);
			return -EINVAL;
		}
		return ref_add(st, cn, path, false, NULL, NULL);
	}
	if (json_object_get(v, "ephemeral")) {
		snprintf(path, sizeof(path), "spec.volumes[%zu].ephemeral", i);
		if (!vname || asprintf(&claim, "%s-%s", pod->name, vname) < 0) {
			sc_buf_printf(why, "spec.volumes[%zu].name: Required value", i);
			return -EINVAL;
		}
		r = ref_add(st, claim, path, true, NULL, NULL);
		free(claim);
		return r;
	}
	if (json_is_object(csi)) {
		snprintf(path, sizeof(path), "spec.volumes[%zu].csi", i);
		if (asprintf(&handle, "%s/%s/%s", pod->ns, pod->name, vname ? vname : "") < 0)
			return -ENOMEM;
		r = ref_add(st, NULL, path, false,
			    json_string_value(json_object_get(csi, "driver")), handle);
		free(handle);
	}
	return r;
}

static int vols_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *vols = pk_get(obj, "spec.volumes");
	struct vpod *st;
	int r = 0;

	if (!json_array_size(vols))
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st || !(st->cat = cat_of(s))) {
		free(st);
		return -ENOMEM;
	}
	st->charged_node = -1;
	st->uid = sc_strdup(pk_get_string(obj, "metadata.uid"));
	for (size_t i = 0; i < json_array_size(vols) && r == 0; i++)
		r = vol_entry(st, pod, json_array_get(vols, i), i, why);
	if (r < 0 || !st->n) {
		vpod_free(st);
		return r;
	}
	pod->cons->state[SC_PLUGIN_VOLUMES] = st;
	return 0;
}

static void vols_release(struct pk_sched *s, struct sc_pod *pod)
{
	(void)s;
	vpod_free(pod->cons->state[SC_PLUGIN_VOLUMES]);
	pod->cons->state[SC_PLUGIN_VOLUMES] = NULL;
}

static struct vpod *vpod_of(const struct sc_pod *pod)
{
	return pod->cons ? pod->cons->state[SC_PLUGIN_VOLUMES] : NULL;
}

static const struct vclass *class_of(const struct sc_vols *cat, const struct vclaim *c)
{
	return *c->cls ? pk_map_get(&cat->classes, c->cls) : NULL;
}

/* PreFilter: why the pod cannot be tried on any node, or NULL. */
static char *hold_of(const struct sc_pod *pod, const struct vpod *st)
{
	const struct sc_vols *cat = st->cat;
	char *m = NULL;

	for (size_t i = 0; i < st->n && !m; i++) {
		const struct vref *v = &st->v[i];
		const struct vclaim *c = v->claim ? claim_get(cat, pod->ns, v->claim) : NULL;
		const struct vclass *cls;
		int n = 0;

		if (!v->claim)
			continue;
		if (!c || !c->present)
			n = v->ephemeral
				? asprintf(&m,
					   "%s: waiting for the ephemeral volume controller to "
					   "create persistentvolumeclaim \"%s\"",
					   v->path, v->claim)
				: asprintf(&m, "%s: persistentvolumeclaim \"%s\" not found",
					   v->path, v->claim);
		else if (c->deleting)
			n = asprintf(&m, "%s: persistentvolumeclaim \"%s\" is being deleted",
				     v->path, v->claim);
		else if (v->ephemeral &&
			 (!st->uid || !c->owner_uid || strcmp(st->uid, c->owner_uid)))
			n = asprintf(&m,
				     "%s: persistentvolumeclaim \"%s\" was not created for the pod "
				     "(the pod is not its owner)",
				     v->path, v->claim);
		else if (c->volume && !pk_map_get(&cat->pvs, c->volume))
			n = asprintf(&m,
				     "%s: persistentvolumeclaim \"%s\" is bound to non-existent "
				     "persistentvolume \"%s\"",
				     v->path, v->claim, c->volume);
		else if (!c->volume && *c->cls && !(cls = class_of(cat, c)))
			n = asprintf(&m,
				     "%s: storageclass.storage.k8s.io \"%s\" of "
				     "persistentvolumeclaim \"%s\" not found",
				     v->path, c->cls, v->claim);
		else if (!c->volume && !(*c->cls && class_of(cat, c)->wffc))
			n = asprintf(&m,
				     "%s: pod has unbound immediate PersistentVolumeClaims: "
				     "persistentvolumeclaim \"%s\" waits for its volume",
				     v->path, v->claim);
		if (n < 0)
			return NULL;
	}
	return m;
}

/* PreFilter: a claim missing, deleted, bound to a missing volume, ... names it. */
static const char *vols_pre_filter(const struct sc_pod *pod)
{
	struct vpod *st = vpod_of(pod);

	if (!st)
		return NULL;
	if (!st->held_valid || st->ver != st->cat->version) {
		free(st->hold);
		st->hold = hold_of(pod, st);
		st->ver = st->cat->version;
		st->held_valid = true;
	}
	return st->hold;
}

/* ---- matching a claim to a volume ------------------------------------------------ */

static bool pv_admits(const struct vpv *v, const struct sc_node *node)
{
	static const char *const zone_keys[] = {
	    "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
	    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"};

	if (v->has_affinity && !terms_admit(v->terms, v->nterms, node))
		return false;
	for (size_t k = 0; k < 4; k++) { /* VolumeZone: "z1__z2" lists zones */
		const char *want = sc_labels_get(&v->labels, zone_keys[k]), *have;
		bool ok = false;

		if (!want)
			continue;
		have = sc_node_label(node, zone_keys[k]);
		for (const char *p = want; have && p && !ok;) {
			const char *e = strstr(p, "__");
			size_t len = e ? (size_t)(e - p) : strlen(p);

			ok = strlen(have) == len && strncmp(have, p, len) == 0;
			p = e ? e + 2 : NULL;
		}
		if (!ok)
			return false;
	}
	return true;
}

static bool pv_free_for(const struct sc_vols *cat, const struct vpv *v, const struct vclaim *c)
{
	const struct vclaim *b = pk_map_get(&cat->bound_to, v->name);

	if (!v->available || (b && b != c) || (v->assumed_by && v->assumed_by != c))
		return false;
	return !v->ref_name || (strcmp(v->ref_name, c->name) == 0 && strcmp(v->ref_ns, c->ns) == 0);
}

/*
 * FindMatchingVolume: the smallest free volume that satisfies c on node, or
 * NULL.  A volume pre-bound to c (its claimRef) is c's whatever its class
 * and labels; where its node affinity fails, nothing on that node is.
 */
static struct vpv *match_pv(const struct sc_vols *cat, const struct vclaim *c,
			    const struct sc_node *node, struct vpv *const *skip, size_t nskip)
{
	struct vpv *best = NULL;

	for (size_t i = 0; i < cat->pv_all.n; i++) {
		struct vpv *v = cat->pv_all.v[i];
		bool skipped = false;

		for (size_t k = 0; k < nskip; k++)
			skipped = skipped || skip[k] == v;
		if (skipped || v->block != c->block || (v->modes & c->modes) != c->modes ||
		    v->capacity < c->request || !pv_free_for(cat, v, c))
			continue;
		if (v->ref_name)
			return pv_admits(v, node) ? v : NULL; /* pre-bound to this claim */
		if (strcmp(v->cls, c->cls) != 0 ||
		    (c->has_sel && !sc_lsel_match(&c->sel, &v->labels)) || !pv_admits(v, node))
			continue;
		if (!best || v->capacity < best->capacity ||
		    (v->capacity == best->capacity && strcmp(v->name, best->name) < 0))
			best = v;
	}
	return best;
}

static bool can_provision(const struct vclass *cls, const struct sc_node *node)
{
	if (!cls || !*cls->provisioner || strcmp(cls->provisioner, NO_PROVISIONER) == 0)
		return false;
	return !cls->ntopo || terms_admit(cls->topo, cls->ntopo, node);
}

/*
 * What claim c of a pod gets on node: *ret_pv a volume, or NULL to be
 * provisioned there.  False when nothing fits.  skip: volumes the pod's
 * earlier claims took.
 */
static bool claim_fits(const struct sc_vols *cat, const struct vclaim *c,
		       const struct sc_node *node, struct vpv *const *skip, size_t nskip,
		       struct vpv **ret_pv)
{
	const struct vpv *bound = c->volume ? pk_map_get(&cat->pvs, c->volume) : NULL;

	*ret_pv = NULL;
	if (c->volume)
		return bound && pv_admits(bound, node);
	if (c->refs > 0) {
		*ret_pv = c->pv;
		return c->pv ? pv_admits(c->pv, node) : c->node == node->index;
	}
	if (c->selected)
		return strcmp(c->selected, node->name) == 0;
	*ret_pv = match_pv(cat, c, node, skip, nskip);
	return *ret_pv || can_provision(class_of(cat, c), node);
}

/* ---- attach limits --------------------------------------------------------------- */

static struct vnode *vnode_of(struct sc_vols *cat, size_t nnodes, int node)
{
	if ((size_t)node >= cat->nnodes) {
		size_t n = nnodes > (size_t)node ? nnodes : (size_t)node + 1;
		struct vnode *v = realloc(cat->nodes, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + cat->nnodes, 0, (n - cat->nnodes) * sizeof(*v));
		cat->nodes = v;
		cat->nnodes = n;
	}
	return &cat->nodes[node];
}

static bool attached(const struct sc_vols *cat, int node, const char *drv, const char *handle)
{
	const struct vnode *vn = (size_t)node < cat->nnodes ? &cat->nodes[node] : NULL;

	for (size_t i = 0; vn && i < vn->n; i++)
		if (vn->v[i].count > 0 && strcmp(vn->v[i].driver, drv) == 0 &&
		    strcmp(vn->v[i].handle, handle) == 0)
			return true;
	return false;
}

static int64_t attached_count(const struct sc_vols *cat, int node, const char *drv)
{
	const struct vnode *vn = (size_t)node < cat->nnodes ? &cat->nodes[node] : NULL;
	int64_t n = 0;

	for (size_t i = 0; vn && i < vn->n; i++)
		n += vn->v[i].count > 0 && strcmp(vn->v[i].driver, drv) == 0;
	return n;
}

/* The CSI volume (driver, handle) of ref i on node, given the volume chosen. */
static bool csi_of(const struct sc_vols *cat, const struct sc_pod *pod, const struct vref *v,
		   const struct vclaim *c, const struct vpv *pv, char *handle, size_t len,
		   const char **ret_drv)
{
	const struct vclass *cls;

	if (!v->claim) {
		*ret_drv = v->drv;
		snprintf(handle, len, "%s", v->handle);
		return v->drv != NULL;
	}
	if (pv && pv->driver && pv->handle) {
		*ret_drv = pv->driver;
		snprintf(handle, len, "%s", pv->handle);
		return true;
	}
	if (c && !c->volume && !pv && (cls = class_of(cat, c)) && *cls->provisioner) {
		*ret_drv = cls->provisioner; /* to be provisioned: one new volume per claim */
		snprintf(handle, len, "claim:%s/%s", pod->ns, c->name);
		return true;
	}
	return false;
}

static bool within_limits(const struct sc_vols *cat, const struct sc_pod *pod,
			  const struct vpod *st, const struct sc_node *node,
			  struct vpv *const *chosen)
{
	const struct vcsinode *cn = pk_map_get(&cat->csinodes, node->name);

	if (!cn || !cn->n)
		return true;
	for (size_t d = 0; d < cn->n; d++) {
		int64_t add = 0;

		for (size_t i = 0; i < st->n; i++) {
			const struct vclaim *c =
			    st->v[i].claim ? claim_get(cat, pod->ns, st->v[i].claim) : NULL;
			const char *drv = NULL;
			char handle[512];

			if (!csi_of(cat, pod, &st->v[i], c, chosen[i], handle, sizeof(handle),
				    &drv) ||
			    strcmp(drv, cn->d[d].name) != 0 ||
			    attached(cat, node->index, drv, handle))
				continue;
			add++;
		}
		if (add && attached_count(cat, node->index, cn->d[d].name) + add > cn->d[d].count)
			return false;
	}
	return true;
}

/* ---- filter and charge ------------------------------------------------------------ */

#define VOL_MAX 64 /* volumes of one pod that the filter weighs at once */

/*
 * Each ref's volume on node (chosen[i]: the bound, assumed or matched
 * volume; NULL for one to be provisioned, or inline), or the misfit.
 */
static enum sc_misfit choose(const struct sc_vols *cat, const struct sc_pod *pod,
			     const struct vpod *st, const struct sc_node *node, struct vpv **chosen)
{
	struct vpv *taken[VOL_MAX];
	size_t ntaken = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct vclaim *c =
		    st->v[i].claim ? claim_get(cat, pod->ns, st->v[i].claim) : NULL;
		size_t k;

		chosen[i] = NULL;
		if (!c)
			continue; /* inline; or held (the hold says why) */
		for (k = 0; k < i; k++)
			if (st->v[k].claim && strcmp(st->v[k].claim, st->v[i].claim) == 0)
				break;
		if (k < i) {
			chosen[i] = chosen[k]; /* the same claim twice */
			continue;
		}
		if ((c->modes & MODE_RWOP) && c->users > 0)
			return SC_MISFIT_VOLUME_RWOP;
		if (!claim_fits(cat, c, node, taken, ntaken, &chosen[i]))
			return c->volume ? SC_MISFIT_VOLUME_AFFINITY : SC_MISFIT_VOLUME_BINDING;
		if (c->volume)
			chosen[i] = pk_map_get(&cat->pvs, c->volume);
		else if (chosen[i] && c->refs == 0)
			taken[ntaken++] = chosen[i];
	}
	return SC_FIT;
}

static enum sc_misfit vols_filter(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	const struct vpod *st = vpod_of(pod);
	struct vpv *chosen[VOL_MAX];
	enum sc_misfit m;

	if (!st || node < 0 || (size_t)node >= snap->nnodes)
		return SC_FIT;
	if (st->n > VOL_MAX)
		return SC_MISFIT_VOLUME_LIMIT;
	m = choose(st->cat, pod, st, snap->nodes[node], chosen);
	if (m == SC_FIT && !within_limits(st->cat, pod, st, snap->nodes[node], chosen))
		m = SC_MISFIT_VOLUME_LIMIT;
	return m;
}

static void attach(struct sc_vols *cat, size_t nnodes, struct vpod *st, int node, const char *drv,
		   const char *handle)
{
	struct vnode *vn = vnode_of(cat, nnodes, node);
	struct vattach *a;
	size_t k;

	if (!vn)
		return;
	for (k = 0; k < vn->n; k++)
		if (strcmp(vn->v[k].driver, drv) == 0 && strcmp(vn->v[k].handle, handle) == 0)
			break;
	if (k == vn->n) {
		if (vn->n == vn->cap) {
			size_t cap = vn->cap ? 2 * vn->cap : 4;
			struct vattach *v = realloc(vn->v, cap * sizeof(*v));

			if (!v)
				return;
			vn->v = v;
			vn->cap = cap;
		}
		vn->v[vn->n] = (struct vattach){strdup(drv), strdup(handle), 0};
		if (!vn->v[vn->n].driver || !vn->v[vn->n].handle) {
			free(vn->v[vn->n].driver);
			free(vn->v[vn->n].handle);
			return;
		}
		vn->n++;
	}
	a = realloc(st->charged, (st->ncharged + 1) * sizeof(*a));
	if (!a)
		return;
	st->charged = a;
	a[st->ncharged] = (struct vattach){strdup(drv), strdup(handle), 1};
	if (!a[st->ncharged].driver || !a[st->ncharged].handle) {
		free(a[st->ncharged].driver);
		free(a[st->ncharged].handle);
		return;
	}
	st->ncharged++;
	vn->v[k].count++;
}

static void detach_all(struct sc_vols *cat, struct vpod *st)
{
	struct vnode *vn =
	    (size_t)st->charged_node < cat->nnodes ? &cat->nodes[st->charged_node] : NULL;

	for (size_t i = 0; i < st->ncharged; i++) {
		for (size_t k = 0; vn && k < vn->n; k++)
			if (strcmp(vn->v[k].driver, st->charged[i].driver) == 0 &&
			    strcmp(vn->v[k].handle, st->charged[i].handle) == 0) {
				vn->v[k].count--;
				break;
			}
		free(st->charged[i].driver);
		free(st->charged[i].handle);
	}
	st->ncharged = 0;
	st->charged_node = -1;
}

static void charge_add(struct sc_snapshot *snap, const struct sc_pod *pod, struct vpod *st,
		       int node)
{
	struct sc_vols *cat = st->cat;
	const struct sc_node *n = snap->nodes[node];
	struct vpv *chosen[VOL_MAX] = {0};

	if (st->n <= VOL_MAX)
		choose(cat, pod, st, n, chosen);
	for (size_t i = 0; i < st->n; i++) {
		struct vclaim *c = st->v[i].claim ? claim_get(cat, pod->ns, st->v[i].claim) : NULL;
		const char *drv = NULL;
		char handle[512];

		st->v[i].took = false;
		if (c) {
			c->users++;
			if (!c->volume && !c->selected && class_of(cat, c) &&
			    class_of(cat, c)->wffc) {
				if (c->refs++ == 0) {
					c->pv = i < VOL_MAX ? chosen[i] : NULL;
					c->node = c->pv ? -1 : node;
					if (c->pv)
						c->pv->assumed_by = c;
				}
				st->v[i].took = true;
			}
		}
		if (csi_of(cat, pod, &st->v[i], c,
			   c && c->refs > 0 ? c->pv
			   : i < VOL_MAX    ? chosen[i]
					    : NULL,
			   handle, sizeof(handle), &drv))
			attach(cat, snap->nnodes, st, node, drv, handle);
	}
	st->users_counted = true;
	st->charged_node = node;
}

static void charge_sub(const struct sc_pod *pod, struct vpod *st)
{
	struct sc_vols *cat = st->cat;

	detach_all(cat, st);
	for (size_t i = st->n; i-- > 0;) {
		struct vclaim *c = st->v[i].claim ? claim_get(cat, pod->ns, st->v[i].claim) : NULL;

		if (!c)
			continue;
		if (c->users > 0)
			c->users--;
		if (st->v[i].took && c->refs > 0 && --c->refs == 0) {
			if (c->pv)
				c->pv->assumed_by = NULL;
			c->pv = NULL;
			c->node = -1;
		}
		st->v[i].took = false;
		if (!c->present && c->users == 0 && c->refs == 0)
			remove_claim(cat, c->ns, c->name);
	}
	st->users_counted = false;
}

/* The pod's state is the plugin's own: charge keeps what it took there. */
static void vols_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign)
{
	struct vpod *st = vpod_of(pod);

	if (!st || node < 0 || (size_t)node >= snap->nnodes)
		return;
	if (sign < 0) {
		if (st->users_counted)
			charge_sub(pod, st);
		return;
	}
	if (st->users_counted)
		charge_sub(pod, st); /* never charged twice at once */
	charge_add(snap, pod, st, node);
}

/* PreBind: the pod's assumed volumes become its claims' own, as actions. */
static int vols_pre_bind(struct sc_ctx *ctx, const struct sc_pod *pod, const char *node)
{
	struct pk_sched_result *res = ctx->res;
	struct vpod *st = vpod_of(pod);
	int r = 0;

	for (size_t i = 0; st && i < st->n && r == 0; i++) {
		struct vclaim *c =
		    st->v[i].claim ? claim_get(st->cat, pod->ns, st->v[i].claim) : NULL;

		if (!c || !st->v[i].took || c->refs == 0)
			continue;
		if (c->pv) {
			free(c->volume);
			if (!(c->volume = strdup(c->pv->name)))
				return -ENOMEM;
			c->pv->assumed_by = NULL;
			r = pk_map_put(&st->cat->bound_to, c->volume, c);
			if (r == 0)
				r = sc_result_volume_claim(res, c->ns, c->name, c->volume, NULL);
		} else {
			free(c->selected);
			if (!(c->selected = strdup(node)))
				return -ENOMEM;
			r = sc_result_volume_claim(res, c->ns, c->name, NULL, node);
		}
		c->pv = NULL;
		c->node = -1;
		c->refs = 0;
		st->v[i].took = false;
	}
	return r;
}

static const struct sc_plugin_event vols_events[] = {
    {.kind = &pk_type_storage_class, .set = vols_set, .remove = vols_remove},
    {.kind = &pk_type_csi_node, .set = vols_set, .remove = vols_remove},
    {.kind = &pk_type_persistent_volume, .set = vols_set, .remove = vols_remove},
    {.kind = &pk_type_persistent_volume_claim, .set = vols_set, .remove = vols_remove},
};

const struct sc_plugin_ops sc_plugin_volumes = {
    .name = "VolumeBinding",
    .parse = vols_parse,
    .release = vols_release,
    .pre_filter = vols_pre_filter,
    .filter = vols_filter,
    .charge = vols_charge,
    .pre_bind = vols_pre_bind,
    .events = vols_events,
    .nevents = sizeof(vols_events) / sizeof(vols_events[0]),
};
