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

/* s is one of the NULL-terminated values, else "Unsupported value". */
static void one_of(struct pk_vctx *v, const char *key, const char *s, const char *const *values)
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
	pk_vctx_fail(v, key, "Unsupported value: %s", msg);
}

static void check_subdomain(struct pk_vctx *v, const char *key, const char *s)
{
	if (s && *s && !topo_dns_subdomain_valid(s))
		pk_vctx_fail(
		    v, key,
		    "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower "
		    "case alphanumeric characters, '-' or '.', and must start and end with an "
		    "alphanumeric character",
		    s);
}

/* obj[key] ("path[key]"), a quantity that must be above zero (storage). */
static void positive_quantity(struct pk_vctx *v, const json_t *obj, const char *key)
{
	json_t *q = json_object_get(obj, key);
	size_t old = pk_path_mapkey(&v->p, key);
	int64_t milli;

	if (!q || json_is_null(q))
		pk_vctx_fail(v, NULL, "Required value%s", NULL);
	else if (pk_quantity_of(q, &milli) < 0)
		pk_vctx_fail(v, NULL, "Invalid value: %s: must be a valid quantity",
			     pk_value_text(q, v->text, sizeof(v->text)));
	else if (milli <= 0)
		pk_vctx_fail(v, NULL, "Invalid value: %s: must be greater than zero",
			     pk_value_text(q, v->text, sizeof(v->text)));
	pk_path_pop(&v->p, old);
}

static void check_access_modes(struct pk_vctx *v, const json_t *spec, bool required)
{
	static const char *const modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
					    "ReadWriteOncePod", NULL};
	json_t *am = pk_vctx_array(v, spec, "accessModes", 4), *m;
	bool rwop = false;
	size_t i, old;

	if (required && json_array_size(am) == 0) {
		pk_vctx_fail(v, "accessModes",
			     "Required value: at least 1 access mode is required%s", NULL);
		return;
	}
	old = pk_path_key(&v->p, "accessModes");
	json_array_foreach(am, i, m)
	{
		size_t o2 = pk_path_index(&v->p, i);

		if (!json_is_string(m))
			pk_vctx_fail(v, NULL, "Invalid value: must be a string%s", NULL);
		else
			one_of(v, NULL, json_string_value(m), modes);
		rwop = rwop ||
		       (json_is_string(m) && strcmp(json_string_value(m), "ReadWriteOncePod") == 0);
		pk_path_pop(&v->p, o2);
	}
	if (rwop && json_array_size(am) > 1)
		pk_vctx_fail(v, NULL,
			     "Forbidden: may not use ReadWriteOncePod with other access modes%s",
			     NULL);
	pk_path_pop(&v->p, old);
}

static void check_volume_mode(struct pk_vctx *v, const json_t *spec)
{
	static const char *const modes[] = {"Block", "Filesystem", NULL};

	one_of(v, "volumeMode", pk_vctx_string(v, spec, "volumeMode", false), modes);
}

/* A NodeSelector (required node affinity of a volume). */
static void check_node_selector(struct pk_vctx *v, const json_t *sel)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist",
					  "Gt", "Lt",	 NULL};
	json_t *terms = pk_vctx_array(v, sel, "nodeSelectorTerms", 64), *t;
	size_t i, old;

	if (json_array_size(terms) == 0) {
		pk_vctx_fail(v, "nodeSelectorTerms",
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
			json_t *exprs = pk_vctx_array(v, t, list, 64), *e;
			size_t k, o3 = pk_path_key(&v->p, list);

			json_array_foreach(exprs, k, e)
			{
				size_t o4 = pk_path_index(&v->p, k);
				const char *key = pk_vctx_string(v, e, "key", true);
				const char *op = pk_vctx_string(v, e, "operator", true);
				json_t *vals = pk_vctx_array(v, e, "values", 64);
				char why[256];

				one_of(v, "operator", op, ops);
				if (key && pass == 0 &&
				    !topo_label_key_valid(key, why, sizeof(why)))
					pk_vctx_fail(v, "key", "Invalid value: %s", why);
				if (key && pass == 1 && strcmp(key, "metadata.name") != 0)
					pk_vctx_fail(v, "key",
						     "Invalid value: %s: supported: metadata.name",
						     key);
				if (op && (!strcmp(op, "In") || !strcmp(op, "NotIn")) &&
				    !json_array_size(vals))
					pk_vctx_fail(
					    v, "values",
					    "Required value: must be specified when `operator` is "
					    "'In' or 'NotIn'%s",
					    NULL);
				if (op && (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) &&
				    json_array_size(vals))
					pk_vctx_fail(
					    v, "values",
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

static void validate_claim(struct pk_vctx *v, const json_t *obj)
{
	json_t *spec = pk_vctx_object(v, obj, "spec"), *res;
	size_t old = pk_path_key(&v->p, "spec");

	if (!spec) {
		pk_vctx_fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	check_access_modes(v, spec, !json_object_get(spec, "dataSourceRef"));
	res = pk_vctx_object(v, spec, "resources");
	{
		size_t o1 = pk_path_key(&v->p, "resources");
		json_t *req = pk_vctx_object(v, res, "requests");

		positive_quantity(v, req, "storage");
		pk_path_pop(&v->p, o1);
	}
	check_volume_mode(v, spec);
	check_subdomain(v, "storageClassName", pk_vctx_string(v, spec, "storageClassName", false));
	pk_vctx_string(v, spec, "volumeName", false);
	pk_vctx_object(v, spec, "selector");
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

static void check_pv_source(struct pk_vctx *v, const json_t *spec)
{
	const char *found = NULL;

	for (const char *const *s = pv_sources; *s; s++) {
		if (!json_object_get(spec, *s) || json_is_null(json_object_get(spec, *s)))
			continue;
		if (found) {
			pk_vctx_fail(v, *s, "Forbidden: may not specify more than 1 volume type%s",
				     NULL);
			continue;
		}
		found = *s;
	}
	if (!found) {
		pk_vctx_fail(v, NULL, "Required value: must specify a volume type%s", NULL);
		return;
	}
	if (strcmp(found, "csi") == 0) {
		json_t *csi = pk_vctx_object(v, spec, "csi");
		size_t old = pk_path_key(&v->p, "csi");

		pk_vctx_string(v, csi, "driver", true);
		pk_vctx_string(v, csi, "volumeHandle", true);
		pk_path_pop(&v->p, old);
	}
	if (strcmp(found, "local") == 0) {
		json_t *local = pk_vctx_object(v, spec, "local");
		size_t old = pk_path_key(&v->p, "local");

		pk_vctx_string(v, local, "path", true);
		pk_path_pop(&v->p, old);
		if (!json_object_get(spec, "nodeAffinity"))
			pk_vctx_fail(v, "nodeAffinity",
				     "Required value: Local volumes require node "
				     "affinity%s",
				     NULL);
	}
}

static void validate_volume(struct pk_vctx *v, const json_t *obj)
{
	static const char *const reclaim[] = {"Delete", "Recycle", "Retain", NULL};
	json_t *spec = pk_vctx_object(v, obj, "spec"), *cap, *na, *ref;
	size_t old = pk_path_key(&v->p, "spec");

	if (!spec) {
		pk_vctx_fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	check_access_modes(v, spec, true);
	cap = pk_vctx_object(v, spec, "capacity");
	if (!cap) {
		pk_vctx_fail(v, "capacity", "Required value%s", NULL);
	} else {
		size_t o2 = pk_path_key(&v->p, "capacity");

		positive_quantity(v, cap, "storage");
		pk_path_pop(&v->p, o2);
	}
	check_volume_mode(v, spec);
	check_subdomain(v, "storageClassName", pk_vctx_string(v, spec, "storageClassName", false));
	one_of(v, "persistentVolumeReclaimPolicy",
	       pk_vctx_string(v, spec, "persistentVolumeReclaimPolicy", false), reclaim);
	check_pv_source(v, spec);
	ref = pk_vctx_object(v, spec, "claimRef");
	if (ref) {
		size_t o2 = pk_path_key(&v->p, "claimRef");

		pk_vctx_string(v, ref, "name", true);
		pk_vctx_string(v, ref, "namespace", false);
		pk_path_pop(&v->p, o2);
	}
	na = pk_vctx_object(v, spec, "nodeAffinity");
	if (na) {
		size_t o2 = pk_path_key(&v->p, "nodeAffinity");
		json_t *req = pk_vctx_object(v, na, "required");

		if (req) {
			size_t o3 = pk_path_key(&v->p, "required");

			check_node_selector(v, req);
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_topologies(struct pk_vctx *v, const json_t *obj)
{
	json_t *terms = pk_vctx_array(v, obj, "allowedTopologies", MAX_TOPOLOGY_TERMS), *t;
	size_t i, old = pk_path_key(&v->p, "allowedTopologies");

	json_array_foreach(terms, i, t)
	{
		size_t o2 = pk_path_index(&v->p, i), k;
		json_t *exprs = pk_vctx_array(v, t, "matchLabelExpressions", 64), *e;
		json_t *keys = json_object();

		if (!json_array_size(exprs))
			pk_vctx_fail(v, "matchLabelExpressions",
				     "Required value: must contain at least one requirement%s",
				     NULL);
		pk_path_key(&v->p, "matchLabelExpressions");
		json_array_foreach(exprs, k, e)
		{
			size_t o3 = pk_path_index(&v->p, k);
			const char *key = pk_vctx_string(v, e, "key", true);
			json_t *vals = pk_vctx_array(v, e, "values", 64);
			char why[256];

			if (key && !topo_label_key_valid(key, why, sizeof(why)))
				pk_vctx_fail(v, "key", "Invalid value: %s", why);
			if (key && json_object_get(keys, key))
				pk_vctx_fail(v, "key", "Duplicate value: \"%s\"", key);
			else if (key)
				json_object_set_new(keys, key, json_true());
			if (!json_array_size(vals))
				pk_vctx_fail(v, "values",
					     "Required value: must specify as least one value%s",
					     NULL);
			for (size_t x = 0; x < json_array_size(vals); x++)
				if (!json_is_string(json_array_get(vals, x)))
					pk_vctx_fail(v, "values",
						     "Invalid value: must be strings%s", NULL);
			pk_path_pop(&v->p, o3);
		}
		json_decref(keys);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void validate_class(struct pk_vctx *v, const json_t *obj)
{
	static const char *const modes[] = {"Immediate", "WaitForFirstConsumer", NULL};
	static const char *const reclaim[] = {"Delete", "Retain", NULL};
	const char *prov = pk_vctx_string(v, obj, "provisioner", true);
	json_t *params = pk_vctx_object(v, obj, "parameters"), *x;
	const char *k;
	char why[256];

	if (prov && !topo_label_key_valid(prov, why, sizeof(why)))
		pk_vctx_fail(v, "provisioner", "Invalid value: %s", why);
	if (json_object_size(params) > MAX_PARAMETERS)
		pk_vctx_fail(v, "parameters", "Too many: must have at most 512 items%s", NULL);
	json_object_foreach(params, k, x)
	{
		if (!json_is_string(x)) {
			size_t old = pk_path_key(&v->p, "parameters");

			pk_path_mapkey(&v->p, k);
			pk_vctx_fail(v, NULL, "Invalid value: must be a string%s", NULL);
			pk_path_pop(&v->p, old);
		}
	}
	one_of(v, "volumeBindingMode", pk_vctx_string(v, obj, "volumeBindingMode", false), modes);
	one_of(v, "reclaimPolicy", pk_vctx_string(v, obj, "reclaimPolicy", false), reclaim);
	check_topologies(v, obj);
}

static void validate_csinode(struct pk_vctx *v, const json_t *obj)
{
	json_t *spec = pk_vctx_object(v, obj, "spec"), *drivers, *d;
	json_t *names = json_object();
	size_t i, old = pk_path_key(&v->p, "spec");

	drivers = pk_vctx_array(v, spec, "drivers", MAX_DRIVERS);
	if (!spec)
		pk_vctx_fail(v, NULL, "Required value%s", NULL);
	pk_path_key(&v->p, "drivers");
	json_array_foreach(drivers, i, d)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *name = pk_vctx_string(v, d, "name", true);
		json_t *alloc = pk_vctx_object(v, d, "allocatable"), *count;
		char why[256];

		pk_vctx_string(v, d, "nodeID", true);
		if (name && !topo_label_key_valid(name, why, sizeof(why)))
			pk_vctx_fail(v, "name", "Invalid value: %s", why);
		if (name && json_object_get(names, name))
			pk_vctx_fail(v, "name", "Duplicate value: \"%s\"", name);
		else if (name)
			json_object_set_new(names, name, json_true());
		count = json_object_get(alloc, "count");
		if (count && !json_is_null(count) &&
		    (!json_is_integer(count) || json_integer_value(count) < 0)) {
			size_t o3 = pk_path_key(&v->p, "allocatable");

			pk_vctx_fail(v, "count",
				     "Invalid value: must be greater than or equal to 0%s", NULL);
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	json_decref(names);
	pk_path_pop(&v->p, old);
}

void pk_validate_storage(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_vctx v = {.errs = errs};

	pk_validate_meta(obj, t, errs);
	switch (t->pk) {
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
