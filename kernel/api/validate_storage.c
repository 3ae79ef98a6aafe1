/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_storage.c — static validation of the storage kinds the scheduler
 * reads: PersistentVolumeClaim and PersistentVolume (core v1), StorageClass
 * and CSINode (storage.k8s.io/v1), with kube-apiserver's field paths and
 * messages (ValidatePersistentVolumeClaim, ValidatePersistentVolume,
 * ValidateStorageClass, ValidateCSINode) for the fields scheduling reads:
 * access modes, storage requests and capacity, volume mode, class names,
 * claim references, node affinity, a PersistentVolume's one volume source,
 * binding modes, allowed topologies and CSI drivers' attach counts.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "topology/topology.h"

#define MAX_PARAMETERS 512
#define MAX_TOPOLOGY_TERMS 64
#define MAX_DRIVERS 64

struct vctx {
	struct pk_path p;
	struct pk_errors *errs;
	char text[128];
};

static void fail(struct vctx *v, const char *key, const char *fmt, const char *detail)
{
	size_t old = key ? pk_path_key(&v->p, key) : v->p.len;
	char msg[640];

	snprintf(msg, sizeof(msg), fmt, detail ? detail : "");
	pk_errors_add(v->errs, "%s: %s", v->p.s, msg);
	pk_path_pop(&v->p, old);
}

static json_t *object_at(struct vctx *v, const json_t *obj, const char *key)
{
	json_t *x = json_object_get(obj, key);

	if (x && !json_is_null(x) && !json_is_object(x))
		fail(v, key, "Invalid value: must be an object%s", NULL);
	return json_is_object(x) ? x : NULL;
}

static json_t *array_at(struct vctx *v, const json_t *obj, const char *key, size_t max)
{
	json_t *x = json_object_get(obj, key);
	char n[32];

	if (x && !json_is_null(x) && !json_is_array(x))
		fail(v, key, "Invalid value: must be a list%s", NULL);
	if (!json_is_array(x))
		return NULL;
	if (json_array_size(x) > max) {
		snprintf(n, sizeof(n), "%zu", max);
		fail(v, key, "Too many: must have at most %s items", n);
	}
	return x;
}

static const char *string_at(struct vctx *v, const json_t *obj, const char *key, bool required)
{
	json_t *x = json_object_get(obj, key);

	if (x && !json_is_null(x) && !json_is_string(x)) {
		fail(v, key, "Invalid value: %s: must be a string",
		     pk_value_text(x, v->text, sizeof(v->text)));
		return NULL;
	}
	if (required && (!x || json_is_null(x) || !*json_string_value(x))) {
		fail(v, key, "Required value%s", NULL);
		return NULL;
	}
	return json_string_value(x);
}

/* s is one of the NULL-terminated values, else "Unsupported value". */
static void one_of(struct vctx *v, const char *key, const char *s, const char *const *values)
{
	char msg[256];
	size_t n = 0;

	if (!s)
		return;
	for (const char *const *x = values; *x; x++)
		if (strcmp(s, *x) == 0)
			return;
	n += (size_t)snprintf(msg, sizeof(msg), "\"%.64s\": supported values: ", s);
	for (const char *const *x = values; *x && n < sizeof(msg); x++)
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s\"%s\"", x == values ? "" : ", ",
				      *x);
	fail(v, key, "Unsupported value: %s", msg);
}

static void check_subdomain(struct vctx *v, const char *key, const char *s)
{
	if (s && *s && !topo_dns_subdomain_valid(s))
		fail(v, key,
		     "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower "
		     "case alphanumeric characters, '-' or '.', and must start and end with an "
		     "alphanumeric character",
		     s);
}

/* obj[key] ("path[key]"), a quantity that must be above zero (storage). */
static void positive_quantity(struct vctx *v, const json_t *obj, const char *key)
{
	json_t *q = json_object_get(obj, key);
	size_t old = pk_path_mapkey(&v->p, key);
	int64_t milli;

	if (!q || json_is_null(q))
		fail(v, NULL, "Required value%s", NULL);
	else if (pk_quantity_of(q, &milli) < 0)
		fail(v, NULL, "Invalid value: %s: must be a valid quantity",
		     pk_value_text(q, v->text, sizeof(v->text)));
	else if (milli <= 0)
		fail(v, NULL, "Invalid value: %s: must be greater than zero",
		     pk_value_text(q, v->text, sizeof(v->text)));
	pk_path_pop(&v->p, old);
}

static void check_access_modes(struct vctx *v, const json_t *spec, bool required)
{
	static const char *const modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
					    "ReadWriteOncePod", NULL};
	json_t *am = array_at(v, spec, "accessModes", 4), *m;
	bool rwop = false;
	size_t i, old;

	if (required && json_array_size(am) == 0) {
		fail(v, "accessModes", "Required value: at least 1 access mode is required%s",
		     NULL);
		return;
	}
	old = pk_path_key(&v->p, "accessModes");
	json_array_foreach(am, i, m)
	{
		size_t o2 = pk_path_index(&v->p, i);

		if (!json_is_string(m))
			fail(v, NULL, "Invalid value: must be a string%s", NULL);
		else
			one_of(v, NULL, json_string_value(m), modes);
		rwop = rwop ||
		       (json_is_string(m) && strcmp(json_string_value(m), "ReadWriteOncePod") == 0);
		pk_path_pop(&v->p, o2);
	}
	if (rwop && json_array_size(am) > 1)
		fail(v, NULL, "Forbidden: may not use ReadWriteOncePod with other access modes%s",
		     NULL);
	pk_path_pop(&v->p, old);
}

static void check_volume_mode(struct vctx *v, const json_t *spec)
{
	static const char *const modes[] = {"Block", "Filesystem", NULL};

	one_of(v, "volumeMode", string_at(v, spec, "volumeMode", false), modes);
}

/* A NodeSelector (required node affinity of a volume). */
static void check_node_selector(struct vctx *v, const json_t *sel)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist",
					  "Gt", "Lt",	 NULL};
	json_t *terms = array_at(v, sel, "nodeSelectorTerms", 64), *t;
	size_t i, old;

	if (json_array_size(terms) == 0) {
		fail(v, "nodeSelectorTerms",
		     "Required value: must have at least one node selector "
		     "term%s",
		     NULL);
		return;
	}
	old = pk_path_key(&v->p, "nodeSelectorTerms");
	json_array_foreach(terms, i, t)
	{
		size_t o2 = pk_path_index(&v->p, i);

		for (int pass = 0; pass < 2 && json_is_object(t); pass++) {
			const char *list = pass ? "matchFields" : "matchExpressions";
			json_t *exprs = array_at(v, t, list, 64), *e;
			size_t k, o3 = pk_path_key(&v->p, list);

			json_array_foreach(exprs, k, e)
			{
				size_t o4 = pk_path_index(&v->p, k);
				const char *key = string_at(v, e, "key", true);
				const char *op = string_at(v, e, "operator", true);
				json_t *vals = array_at(v, e, "values", 64);
				char why[256];

				one_of(v, "operator", op, ops);
				if (key && pass == 0 &&
				    !topo_label_key_valid(key, why, sizeof(why)))
					fail(v, "key", "Invalid value: %s", why);
				if (key && pass == 1 && strcmp(key, "metadata.name") != 0)
					fail(v, "key",
					     "Invalid value: %s: supported: metadata.name", key);
				if (op && (!strcmp(op, "In") || !strcmp(op, "NotIn")) &&
				    !json_array_size(vals))
					fail(v, "values",
					     "Required value: must be specified when `operator` is "
					     "'In' or 'NotIn'%s",
					     NULL);
				if (op && (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) &&
				    json_array_size(vals))
					fail(v, "values",
					     "Forbidden: may not be specified when `operator` is "
					     "'Exists' or 'DoesNotExist'%s",
					     NULL);
				pk_path_pop(&v->p, o4);
			}
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void validate_claim(struct vctx *v, const json_t *obj)
{
	json_t *spec = object_at(v, obj, "spec"), *res;
	size_t old = pk_path_key(&v->p, "spec");

	if (!spec) {
		fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	check_access_modes(v, spec, !json_object_get(spec, "dataSourceRef"));
	res = object_at(v, spec, "resources");
	{
		size_t o1 = pk_path_key(&v->p, "resources");
		json_t *req = object_at(v, res, "requests");

		positive_quantity(v, req, "storage");
		pk_path_pop(&v->p, o1);
	}
	check_volume_mode(v, spec);
	check_subdomain(v, "storageClassName", string_at(v, spec, "storageClassName", false));
	string_at(v, spec, "volumeName", false);
	object_at(v, spec, "selector");
	pk_path_pop(&v->p, old);
}

/* The volume sources of a PersistentVolumeSpec (one, and only one). */
static const char *const pv_sources[] = {
    "hostPath",
    "local",
    "csi",
    "nfs",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "fc",
    "flexVolume",
    "flocker",
    "glusterfs",
    "iscsi",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
    NULL,
};

static void check_pv_source(struct vctx *v, const json_t *spec)
{
	const char *found = NULL;

	for (const char *const *s = pv_sources; *s; s++) {
		if (!json_object_get(spec, *s) || json_is_null(json_object_get(spec, *s)))
			continue;
		if (found) {
			fail(v, *s, "Forbidden: may not specify more than 1 volume type%s", NULL);
			continue;
		}
		found = *s;
	}
	if (!found) {
		fail(v, NULL, "Required value: must specify a volume type%s", NULL);
		return;
	}
	if (strcmp(found, "csi") == 0) {
		json_t *csi = object_at(v, spec, "csi");
		size_t old = pk_path_key(&v->p, "csi");

		string_at(v, csi, "driver", true);
		string_at(v, csi, "volumeHandle", true);
		pk_path_pop(&v->p, old);
	}
	if (strcmp(found, "local") == 0) {
		json_t *local = object_at(v, spec, "local");
		size_t old = pk_path_key(&v->p, "local");

		string_at(v, local, "path", true);
		pk_path_pop(&v->p, old);
		if (!json_object_get(spec, "nodeAffinity"))
			fail(v, "nodeAffinity",
			     "Required value: Local volumes require node "
			     "affinity%s",
			     NULL);
	}
}

static void validate_volume(struct vctx *v, const json_t *obj)
{
	static const char *const reclaim[] = {"Delete", "Recycle", "Retain", NULL};
	json_t *spec = object_at(v, obj, "spec"), *cap, *na, *ref;
	size_t old = pk_path_key(&v->p, "spec");

	if (!spec) {
		fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	check_access_modes(v, spec, true);
	cap = object_at(v, spec, "capacity");
	if (!cap) {
		fail(v, "capacity", "Required value%s", NULL);
	} else {
		size_t o2 = pk_path_key(&v->p, "capacity");

		positive_quantity(v, cap, "storage");
		pk_path_pop(&v->p, o2);
	}
	check_volume_mode(v, spec);
	check_subdomain(v, "storageClassName", string_at(v, spec, "storageClassName", false));
	one_of(v, "persistentVolumeReclaimPolicy",
	       string_at(v, spec, "persistentVolumeReclaimPolicy", false), reclaim);
	check_pv_source(v, spec);
	ref = object_at(v, spec, "claimRef");
	if (ref) {
		size_t o2 = pk_path_key(&v->p, "claimRef");

		string_at(v, ref, "name", true);
		string_at(v, ref, "namespace", false);
		pk_path_pop(&v->p, o2);
	}
	na = object_at(v, spec, "nodeAffinity");
	if (na) {
		size_t o2 = pk_path_key(&v->p, "nodeAffinity");
		json_t *req = object_at(v, na, "required");

		if (req) {
			size_t o3 = pk_path_key(&v->p, "required");

			check_node_selector(v, req);
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_topologies(struct vctx *v, const json_t *obj)
{
	json_t *terms = array_at(v, obj, "allowedTopologies", MAX_TOPOLOGY_TERMS), *t;
	size_t i, old = pk_path_key(&v->p, "allowedTopologies");

	json_array_foreach(terms, i, t)
	{
		size_t o2 = pk_path_index(&v->p, i), k;
		json_t *exprs = array_at(v, t, "matchLabelExpressions", 64), *e;
		json_t *keys = json_object();

		if (!json_array_size(exprs))
			fail(v, "matchLabelExpressions",
			     "Required value: must contain at least one requirement%s", NULL);
		pk_path_key(&v->p, "matchLabelExpressions");
		json_array_foreach(exprs, k, e)
		{
			size_t o3 = pk_path_index(&v->p, k);
			const char *key = string_at(v, e, "key", true);
			json_t *vals = array_at(v, e, "values", 64);
			char why[256];

			if (key && !topo_label_key_valid(key, why, sizeof(why)))
				fail(v, "key", "Invalid value: %s", why);
			if (key && json_object_get(keys, key))
				fail(v, "key", "Duplicate value: \"%s\"", key);
			else if (key)
				json_object_set_new(keys, key, json_true());
			if (!json_array_size(vals))
				fail(v, "values",
				     "Required value: must specify as least one value%s", NULL);
			for (size_t x = 0; x < json_array_size(vals); x++)
				if (!json_is_string(json_array_get(vals, x)))
					fail(v, "values", "Invalid value: must be strings%s", NULL);
			pk_path_pop(&v->p, o3);
		}
		json_decref(keys);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void validate_class(struct vctx *v, const json_t *obj)
{
	static const char *const modes[] = {"Immediate", "WaitForFirstConsumer", NULL};
	static const char *const reclaim[] = {"Delete", "Retain", NULL};
	const char *prov = string_at(v, obj, "provisioner", true);
	json_t *params = object_at(v, obj, "parameters"), *x;
	const char *k;
	char why[256];

	if (prov && !topo_label_key_valid(prov, why, sizeof(why)))
		fail(v, "provisioner", "Invalid value: %s", why);
	if (json_object_size(params) > MAX_PARAMETERS)
		fail(v, "parameters", "Too many: must have at most 512 items%s", NULL);
	json_object_foreach(params, k, x)
	{
		if (!json_is_string(x)) {
			size_t old = pk_path_key(&v->p, "parameters");

			pk_path_mapkey(&v->p, k);
			fail(v, NULL, "Invalid value: must be a string%s", NULL);
			pk_path_pop(&v->p, old);
		}
	}
	one_of(v, "volumeBindingMode", string_at(v, obj, "volumeBindingMode", false), modes);
	one_of(v, "reclaimPolicy", string_at(v, obj, "reclaimPolicy", false), reclaim);
	check_topologies(v, obj);
}

static void validate_csinode(struct vctx *v, const json_t *obj)
{
	json_t *spec = object_at(v, obj, "spec"), *drivers, *d;
	json_t *names = json_object();
	size_t i, old = pk_path_key(&v->p, "spec");

	drivers = array_at(v, spec, "drivers", MAX_DRIVERS);
	if (!spec)
		fail(v, NULL, "Required value%s", NULL);
	pk_path_key(&v->p, "drivers");
	json_array_foreach(drivers, i, d)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *name = string_at(v, d, "name", true);
		json_t *alloc = object_at(v, d, "allocatable"), *count;
		char why[256];

		string_at(v, d, "nodeID", true);
		if (name && !topo_label_key_valid(name, why, sizeof(why)))
			fail(v, "name", "Invalid value: %s", why);
		if (name && json_object_get(names, name))
			fail(v, "name", "Duplicate value: \"%s\"", name);
		else if (name)
			json_object_set_new(names, name, json_true());
		count = json_object_get(alloc, "count");
		if (count && !json_is_null(count) &&
		    (!json_is_integer(count) || json_integer_value(count) < 0)) {
			size_t o3 = pk_path_key(&v->p, "allocatable");

			fail(v, "count", "Invalid value: must be greater than or equal to 0%s",
			     NULL);
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	json_decref(names);
	pk_path_pop(&v->p, old);
}

void pk_validate_storage(const json_t *obj, enum pk_kind kind, struct pk_errors *errs)
{
	struct vctx v = {.errs = errs};

	switch (kind) {
	case PK_KIND_PERSISTENT_VOLUME_CLAIM:
		validate_claim(&v, obj);
		break;
	case PK_KIND_PERSISTENT_VOLUME:
		validate_volume(&v, obj);
		break;
	case PK_KIND_STORAGE_CLASS:
		validate_class(&v, obj);
		break;
	case PK_KIND_CSI_NODE:
		validate_csinode(&v, obj);
		break;
	default:
		break;
	}
}
