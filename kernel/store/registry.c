/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry.c — the write rules every writer goes through.
 *
 * Mirrors kube-apiserver's registry strategies for the kinds podkerneld
 * serves: identity checks (kind, apiVersion, names, labels), defaulting (uid,
 * creationTimestamp, generation, namespace, disruptionMode, priority from the
 * named or the globalDefault PriorityClass, the CompositePodGroup protection
 * finalizer, a Pod's phase and qosClass, a hostNetwork pod's host ports),
 * pk_validate(), optimistic concurrency, status subresource separation and
 * graceful deletion through finalizers.  Each public call takes the store
 * lock, runs in one SQLite transaction (store.c) and returns after the
 * commit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "kernel/lib/macro.h"
#include "kernel/store/store-internal.h"
#include "topology/topology.h"

#define CASCADE_MAX_DEPTH 8

static void at_rfc3339(time_t now, char buf[32])
{
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void now_rfc3339(char buf[32])
{
	at_rfc3339(time(NULL), buf);
}

static void new_uid(char buf[37])
{
	unsigned char b[16];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)((ts.tv_nsec >> (i % 4 * 8)) ^ (rand() & 0xff));
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(buf, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static json_t *meta_of(json_t *obj)
{
	return json_object_get(obj, "metadata");
}

static bool is_group(const struct pk_type *t)
{
	return t->pk == PK_KIND_POD_GROUP || t->pk == PK_KIND_COMPOSITE_POD_GROUP;
}

static bool deleting(json_t *obj)
{
	return pk_store_meta_str(obj, "deletionTimestamp") != NULL;
}

static size_t finalizer_count(json_t *obj)
{
	return json_array_size(json_object_get(meta_of(obj), "finalizers"));
}

static void finalizer_drop(json_t *obj, const char *name)
{
	json_t *fins = json_object_get(meta_of(obj), "finalizers");
	for (size_t i = json_array_size(fins); i-- > 0;)
		if (strcmp(json_string_value(json_array_get(fins, i)) ?: "", name) == 0)
			json_array_remove(fins, i);
	if (fins && json_array_size(fins) == 0)
		json_object_del(meta_of(obj), "finalizers");
}

static void finalizer_ensure(json_t *obj, const char *name)
{
	json_t *meta = meta_of(obj);
	json_t *fins = json_object_get(meta, "finalizers");
	if (!json_is_array(fins)) {
		fins = json_array();
		json_object_set_new(meta, "finalizers", fins);
	}
	size_t i;
	json_t *f;
	json_array_foreach(fins, i, f) if (strcmp(json_string_value(f) ?: "", name) == 0) return;
	json_array_append_new(fins, json_string(name));
}

static void check_string_map(json_t *meta, const char *field, bool labels, struct pk_errors *errs)
{
	json_t *map = json_object_get(meta, field);
	if (!map)
		return;
	if (!json_is_object(map)) {
		pk_errors_add(errs, "metadata.%s: Invalid value: expected a map of strings", field);
		return;
	}
	const char *k;
	json_t *v;
	json_object_foreach(map, k, v)
	{
		char why[160];
		if (!json_is_string(v))
			pk_errors_add(errs, "metadata.%s[%s]: Invalid value: expected a string",
				      field, k);
		else if (labels && !topo_label_key_valid(k, why, sizeof(why)))
			pk_errors_add(errs, "metadata.%s: Invalid value: \"%s\": %s", field, k,
				      why);
		else if (labels && !topo_label_value_valid(json_string_value(v), why, sizeof(why)))
			pk_errors_add(errs, "metadata.%s[%s]: Invalid value: \"%s\": %s", field, k,
				      json_string_value(v), why);
	}
}

/* Keys and values of metadata.annotations together, as kube-apiserver counts them. */
static void check_annotations_size(json_t *meta, struct pk_errors *errs)
{
	size_t total = 0;
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(meta, "annotations"), k, v) total +=
	    strlen(k) + json_string_length(v);
	if (total > PK_STORE_ANNOTATIONS_MAX)
		pk_errors_add(errs,
			      "metadata.annotations: Too long: must have at most %d bytes (%zu)",
			      PK_STORE_ANNOTATIONS_MAX, total);
}

/* The stored uid against the one a writer expects (NULL or "": no check). */
static int check_uid(const json_t *old, const char *want, struct pk_errors *errs)
{
	const char *have = pk_store_meta_str(old, "uid");
	if (!want || !*want || (have && strcmp(want, have) == 0))
		return 0;
	pk_errors_add(errs,
		      "metadata.uid: Precondition failed: UID in precondition: %s, UID in "
		      "object meta: %s",
		      want, have ? have : "");
	return -PK_STORE_ECONFLICT;
}

/* A resource also served at a second group/version, stored as written. */
static bool other_version_ok(const struct pk_type *t, const char *av)
{
	return (t->pk == PK_KIND_PRIORITY_CLASS && strcmp(av, "scheduling.k8s.io/v1alpha3") == 0) ||
	       (t->pk == PK_KIND_EVENT && strcmp(av, "events.k8s.io/v1") == 0);
}

/* kind/apiVersion/metadata shape; names; namespace defaulting. */
static int check_identity(const struct pk_type *t, json_t *obj, struct pk_errors *errs)
{
	char want[96];
	snprintf(want, sizeof(want), "%s%s%s", t->group, *t->group ? "/" : "", t->version);
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	if (!av)
		json_object_set_new(obj, "apiVersion", json_string(want));
	else if (strcmp(av, want) != 0 && !other_version_ok(t, av)) {
		pk_errors_add(errs,
			      "apiVersion: Unsupported value: \"%s\": supported values: \"%s\"", av,
			      want);
		return -EINVAL;
	}
	json_t *meta = meta_of(obj);
	if (!json_is_object(meta)) {
		pk_errors_add(errs, "metadata: Required value");
		return -EINVAL;
	}
	const char *name = pk_store_meta_str(obj, "name");
	if (!name || !topo_dns_subdomain_valid(name)) {
		pk_errors_add(errs,
			      "metadata.name: %s%s%s: a lowercase RFC 1123 subdomain is expected",
			      name ? "Invalid value: \"" : "Required value", name ? name : "",
			      name ? "\"" : "");
		return -EINVAL;
	}
	if (t->namespaced) {
		const char *ns = pk_store_meta_str(obj, "namespace");
		if (!ns)
			json_object_set_new(meta, "namespace", json_string("default"));
		else if (!topo_dns_label_valid(ns)) {
			pk_errors_add(errs, "metadata.namespace: Invalid value: \"%s\"", ns);
			return -EINVAL;
		}
	} else {
		json_object_del(meta, "namespace");
	}
	check_string_map(meta, "labels", true, errs);
	check_string_map(meta, "annotations", false, errs);
	check_annotations_size(meta, errs);
	pk_validate_owner_references(obj, errs);
	json_t *fins = json_object_get(meta, "finalizers");
	size_t i;
	json_t *f;
	if (fins && !json_is_array(fins))
		pk_errors_add(errs,
			      "metadata.finalizers: Invalid value: expected a list of strings");
	json_array_foreach(fins, i, f) if (!json_is_string(f))
	    pk_errors_add(errs, "metadata.finalizers[%zu]: Invalid value: expected a string", i);
	return errs->n ? -EINVAL : 0;
}

/* spec.priority from spec.priorityClassName, or from the globalDefault class. */
static int default_priority(struct pk_store *st, json_t *obj, struct pk_errors *errs)
{
	json_t *spec = json_object_get(obj, "spec");
	if (!json_is_object(spec))
		return 0;
	const char *pcname = json_string_value(json_object_get(spec, "priorityClassName"));
	json_t *pc = NULL;
	if (pcname) {
		pc = pk_store_cache_get(st, &pk_type_priority_class, "", pcname);
		if (!pc)
			pc = pk_store_db_get(st, "PriorityClass", "", pcname);
		if (!pc) {
			pk_errors_add(errs,
				      "spec.priorityClassName: Not found: \"%s\": no PriorityClass "
				      "with that name",
				      pcname);
			return -EINVAL;
		}
	} else if (!json_object_get(spec, "priority")) {
		pc = pk_store_cache_default_pc(st);
		if (pc)
			json_object_set(spec, "priorityClassName",
					json_object_get(meta_of(pc), "name"));
	}
	if (pc && !json_object_get(spec, "priority")) {
		json_t *value = json_object_get(pc, "value");
		json_object_set_new(
		    spec, "priority",
		    json_integer(json_is_integer(value) ? json_integer_value(value) : 0));
	}
	json_decref(pc);
	return 0;
}

/*
 * A new Pod's status, as kube-apiserver's pod strategy writes it on create:
 * phase Pending (a phase the writer gave is kept: the stand-in for a
 * kubelet, and stores copied from a cluster, create pods that already ran)
 * and the qosClass computed from its resources.
 */
static void default_pod_status(json_t *obj)
{
	json_t *status = json_object_get(obj, "status");

	if (!json_is_object(status)) {
		status = json_object();
		json_object_set_new(obj, "status", status);
	}
	if (!status)
		return;
	if (!json_is_string(json_object_get(status, "phase")))
		json_object_set_new(status, "phase", json_string("Pending"));
	json_object_set_new(status, "qosClass", json_string(pk_pod_qos_class(obj)));
}

static void default_kind(const struct pk_type *t, json_t *obj)
{
	if (t->pk == PK_KIND_NAMESPACE && !json_object_get(obj, "status"))
		json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
	if (t->pk == PK_KIND_POD) {
		default_pod_status(obj);
		pk_pod_default_host_ports(obj);	 /* out of memory: left as it came */
		pk_pod_default_queue_gate(obj);	 /* Kueue's webhook: a queued pod waits gated */
		pk_pod_default_kueue_group(obj); /* a Kueue pod group is a PodGroup */
	}
	if (!is_group(t))
		return;
	json_t *spec = json_object_get(obj, "spec");
	if (!spec) {
		spec = json_object();
		json_object_set_new(obj, "spec", spec);
	}
	if (json_is_object(spec) && !json_object_get(spec, "disruptionMode"))
		json_object_set_new(spec, "disruptionMode", json_pack("{s:{}}", "single"));
	if (t->pk == PK_KIND_COMPOSITE_POD_GROUP)
		finalizer_ensure(obj, PK_STORE_GROUP_FINALIZER);
}

/*
 * Static validation of every write, then the admission rules of its kind the
 * store was opened with (pk_store_open_opts: the workload builder's admit
 * Jobs and JobSets, their scheduling intent and its update rules, KEP-6089),
 * each adding field-path messages to errs.
 */
static int validate(const struct pk_store *st, const struct pk_type *t, json_t *obj,
		    const json_t *old, bool by_user, struct pk_errors *errs)
{
	int rc;

	if (!t->validate)
		return 0;
	rc = pk_validate(obj, errs) < 0 ? -EINVAL : 0;
	for (size_t i = 0; i < st->nadmission; i++) {
		const struct pk_admission *a = &st->admission[i];

		if (a->kind == t->pk && a->admit(obj, old, errs) < 0)
			rc = -EINVAL;
		if (a->kind == t->pk && by_user && a->admit_user &&
		    a->admit_user(obj, old, errs) < 0)
			rc = -EINVAL;
	}
	return rc;
}

static const struct pk_type *type_of_obj(const json_t *obj, struct pk_errors *errs)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const struct pk_type *t = pk_type_by_kind(kind);
	if (!t)
		pk_errors_add(errs, "kind: %s%s%s",
			      kind ? "Unsupported value: \"" : "Required value", kind ? kind : "",
			      kind ? "\"" : "");
	return t;
}

/* ---- create --------------------------------------------------------------- */
static int generate_name(json_t *obj)
{
	json_t *meta = meta_of(obj);
	const char *prefix = pk_store_meta_str(obj, "generateName");
	if (!json_is_object(meta) || pk_store_meta_str(obj, "name") || !prefix)
		return 0;
	static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
	unsigned char r[5];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	char name[300];
	int n = snprintf(name, sizeof(name), "%.240s", prefix);
	for (size_t i = 0; i < sizeof(r); i++)
		name[n++] = alnum[r[i] % (sizeof(alnum) - 1)];
	name[n] = '\0';
	json_object_set_new(meta, "name", json_string(name));
	return 0;
}

/* The Namespace ns (read only), or NULL. */
static json_t *namespace_of(struct pk_store *st, const char *ns)
{
	json_t *obj = ns ? pk_store_cache_get(st, &pk_type_namespace, "", ns) : NULL;

	return obj ? obj : pk_store_db_get(st, "Namespace", "", ns);
}

static int create_locked(struct pk_store *st, json_t *obj, bool by_user, struct pk_errors *errs,
			 struct txn *tx)
{
	const struct pk_type *t = type_of_obj(obj, errs);
	if (!t)
		return -EINVAL;
	int rc = generate_name(obj);
	if (rc == 0)
		rc = check_identity(t, obj, errs);
	if (rc < 0)
		return rc;
	json_t *old =
	    pk_store_db_get(st, t->kind, pk_store_ns_key(t, pk_store_meta_str(obj, "namespace")),
			    pk_store_meta_str(obj, "name"));
	if (old) {
		json_decref(old);
		return -EEXIST;
	}
	json_t *nsobj =
	    t->namespaced ? namespace_of(st, pk_store_meta_str(obj, "namespace")) : NULL;
	bool terminating = nsobj && deleting(nsobj);
	json_decref(nsobj);
	if (terminating) {
		pk_errors_add(errs,
			      "metadata.namespace: Forbidden: unable to create new content in "
			      "namespace %s because it is being terminated",
			      pk_store_meta_str(obj, "namespace"));
		return -EPERM;
	}
	json_t *meta = meta_of(obj);
	char buf[40];
	new_uid(buf);
	json_object_set_new(meta, "uid", json_string(buf));
	at_rfc3339(st->creation_clock ? (time_t)st->creation_clock(st->creation_clock_arg)
				      : time(NULL),
		   buf);
	json_object_set_new(meta, "creationTimestamp", json_string(buf));
	json_object_set_new(meta, "generation", json_integer(1));
	json_object_del(meta, "deletionTimestamp");
	if (t->pk == PK_KIND_POD || is_group(t))
		rc = default_priority(st, obj, errs);
	if (rc < 0)
		return rc;
	default_kind(t, obj);
	rc = validate(st, t, obj, NULL, by_user, errs);
	if (rc < 0)
		return rc;
	rc = pk_store_txn_begin(st, tx);
	if (rc == 0)
		rc = pk_store_txn_put(st, tx, obj, PK_EVENT_ADDED);
	if (rc == 0)
		return pk_store_txn_commit(st, tx);
	pk_store_txn_abort(st, tx);
	return rc;
}

static int finish(int rc, json_t *obj, struct pk_errors *local, json_t **ret)
{
	pk_errors_clear(local);
	if (rc == 0 && ret)
		*ret = obj;
	else
		json_decref(obj);
	return rc;
}

int pk_store_create(struct pk_store *st, const json_t *in, struct pk_errors *errs, json_t **ret)
{
	return pk_store_create_opts(st, in, NULL, errs, ret);
}

int pk_store_create_opts(struct pk_store *st, const json_t *in,
			 const struct pk_store_write_opts *opts, struct pk_errors *errs,
			 json_t **ret)
{
	struct pk_errors local = {0};
	json_t *obj = json_deep_copy(in);
	if (!obj || !json_is_object(obj))
		return finish(obj ? -EINVAL : -ENOMEM, obj, &local, ret);
	struct txn tx = {.dry_run = opts && opts->dry_run};
	pk_store_writer_enter(st);
	int rc = create_locked(st, obj, opts && opts->by_user, errs ? errs : &local, &tx);
	int crc = pk_store_writer_leave(st, &tx);
	rc = rc < 0 ? rc : crc;
	return finish(rc, obj, &local, ret);
}

int pk_store_create_batch(struct pk_store *st, json_t *const *objs, size_t n, int *rcs)
{
	struct txn *txs = calloc(n ? n : 1, sizeof(*txs));
	json_t **copies = calloc(n ? n : 1, sizeof(*copies));
	int crc = -ENOMEM;

	for (size_t i = 0; !(txs && copies) && i < n; i++)
		rcs[i] = -ENOMEM;
	if (!txs || !copies)
		goto out;
	pk_store_writer_enter(st);
	for (size_t i = 0; i < n; i++) {
		struct pk_errors errs = {0};

		copies[i] = json_deep_copy(objs[i]);
		rcs[i] = !copies[i] ? -ENOMEM
			 : !json_is_object(copies[i])
			     ? -EINVAL
			     : create_locked(st, copies[i], false, &errs, &txs[i]);
		pk_errors_clear(&errs);
	}
	crc = pk_store_writer_leave_many(st, txs, n);
	for (size_t i = 0; i < n; i++) {
		if (crc < 0 && rcs[i] == 0)
			rcs[i] = crc;
		pk_store_txn_release(&txs[i]);
		json_decref(copies[i]);
	}
out:
	free(txs);
	free(copies);
	return crc < 0 ? -EIO : 0;
}

/* ---- delete (and the cascade up the group tree) ---------------------------- */
static void mark_deleting(json_t *obj)
{
	if (deleting(obj))
		return;
	char buf[32];
	now_rfc3339(buf);
	json_object_set_new(meta_of(obj), "deletionTimestamp", json_string(buf));
	/* kube-apiserver: setting deletionTimestamp is a change of the desired state */
	json_int_t gen = json_integer_value(json_object_get(meta_of(obj), "generation"));
	if (gen > 0)
		json_object_set_new(meta_of(obj), "generation", json_integer(gen + 1));
}

static int remove_cascade(struct pk_store *st, struct txn *tx, json_t *obj, int depth);

/* A terminating namespace goes with its last object. */
static int namespace_gc(struct pk_store *st, struct txn *tx, const char *ns)
{
	json_t *nsobj = ns ? pk_store_db_get(st, "Namespace", "", ns) : NULL;
	int rc = 0;
	if (nsobj && deleting(nsobj) && finalizer_count(nsobj) == 0 &&
	    pk_store_db_namespace_empty(st, ns))
		rc = pk_store_txn_remove(st, tx, nsobj);
	json_decref(nsobj);
	return rc;
}

/* Remove obj; a group's parent that waits for its last child goes with it. */
static int remove_cascade(struct pk_store *st, struct txn *tx, json_t *obj, int depth)
{
	int rc = pk_store_txn_remove(st, tx, obj);
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));
	const char *ns = pk_store_meta_str(obj, "namespace");
	if (rc < 0 || !t || depth >= CASCADE_MAX_DEPTH)
		return rc;
	const char *parent_name = json_string_value(
	    json_object_get(json_object_get(obj, "spec"), "parentCompositePodGroupName"));
	if (!is_group(t) || !parent_name)
		return t->namespaced ? namespace_gc(st, tx, ns) : 0;
	json_t *parent = pk_store_db_get(st, "CompositePodGroup", ns, parent_name);
	if (!parent || !deleting(parent) || pk_store_db_has_children(st, ns, parent_name)) {
		json_decref(parent);
		return namespace_gc(st, tx, ns);
	}
	finalizer_drop(parent, PK_STORE_GROUP_FINALIZER);
	if (finalizer_count(parent) == 0)
		rc = remove_cascade(st, tx, parent, depth + 1);
	else
		rc = pk_store_txn_put(st, tx, parent, PK_EVENT_MODIFIED);
	json_decref(parent);
	return rc == 0 ? namespace_gc(st, tx, ns) : rc;
}

/*
 * The deletion rules for one fetched object inside an open transaction:
 * finalizers keep it (marked), otherwise it goes.  *ret_changed says whether
 * anything was written.
 */
static int delete_obj(struct pk_store *st, struct txn *tx, const struct pk_type *t, json_t *obj,
		      bool *ret_changed)
{
	const char *ns = pk_store_meta_str(obj, "namespace"),
		   *name = pk_store_meta_str(obj, "name");
	json_t *before = json_deep_copy(obj);
	if (t->pk == PK_KIND_COMPOSITE_POD_GROUP) {
		if (pk_store_db_has_children(st, ns, name))
			finalizer_ensure(obj, PK_STORE_GROUP_FINALIZER);
		else
			finalizer_drop(obj, PK_STORE_GROUP_FINALIZER);
	}
	/* Deleting again what is already waiting for its finalizers changes nothing. */
	bool unchanged = deleting(obj) && finalizer_count(obj) > 0 && json_equal(before, obj);
	json_decref(before);
	*ret_changed = !unchanged;
	if (unchanged)
		return 0;
	if (finalizer_count(obj) > 0) {
		mark_deleting(obj);
		return pk_store_txn_put(st, tx, obj, PK_EVENT_MODIFIED);
	}
	return remove_cascade(st, tx, obj, 0);
}

static bool protected_namespace(const char *name)
{
	return strcmp(name, "default") == 0 || strcmp(name, "kube-system") == 0 ||
	       strcmp(name, "kube-public") == 0 || strcmp(name, "kube-node-lease") == 0;
}

/* Delete everything in the namespace, then the namespace itself once empty. */
static int delete_namespace(struct pk_store *st, struct txn *tx, json_t *nsobj)
{
	const char *ns = pk_store_meta_str(nsobj, "name");
	int rc = 0;
	for (const struct pk_type *const *p_t = pk_types, *t; rc == 0 && (t = *p_t); p_t++) {
		if (!t->namespaced)
			continue;
		json_t *names = pk_store_db_names(st, t->kind, ns);
		size_t i;
		json_t *n;
		json_array_foreach(names, i, n)
		{
			/* Fetched again: an earlier cascade may have removed it. */
			json_t *obj = pk_store_db_get(st, t->kind, ns, json_string_value(n));
			bool changed;
			if (obj)
				rc = delete_obj(st, tx, t, obj, &changed);
			json_decref(obj);
			if (rc < 0)
				break;
		}
		json_decref(names);
	}
	json_t *now = rc == 0 ? pk_store_db_get(st, "Namespace", "", ns) : NULL;
	if (now && pk_store_db_namespace_empty(st, ns) && finalizer_count(now) == 0) {
		rc = pk_store_txn_remove(st, tx, now);
	} else if (now) {
		mark_deleting(now);
		json_t *status = json_object_get(now, "status");
		if (!json_is_object(status)) {
			status = json_object();
			json_object_set_new(now, "status", status);
		}
		json_object_set_new(status, "phase", json_string("Terminating"));
		rc = pk_store_txn_put(st, tx, now, PK_EVENT_MODIFIED);
	}
	/* Hand back the final state. */
	if (rc == 0 && now) {
		json_object_clear(nsobj);
		json_object_update(nsobj, now);
	}
	json_decref(now);
	return rc;
}

/* What propagationPolicy asks of the owner itself before the deletion rules. */
static int propagate(struct pk_store *st, struct txn *tx, const struct pk_type *t, json_t *obj,
		     enum pk_propagation how)
{
	if (how == PK_PROPAGATE_ORPHAN)
		return pk_store_orphan_dependents(st, tx, t, obj);
	if (how == PK_PROPAGATE_FOREGROUND)
		finalizer_ensure(obj, PK_STORE_FOREGROUND_FINALIZER);
	return 0;
}

static int delete_locked(struct pk_store *st, const struct pk_type *t, const char *ns,
			 const char *name, const struct pk_store_write_opts *o, struct txn *tx,
			 struct pk_errors *errs, json_t **ret)
{
	const char *precondition_rv = o->precondition_rv, *precondition_uid = o->precondition_uid;

	json_t *obj = pk_store_db_get(st, t->kind, ns, name);
	if (!obj)
		return -ENOENT;
	if (check_uid(obj, precondition_uid, errs) < 0) {
		json_decref(obj);
		return -PK_STORE_ECONFLICT;
	}
	if (precondition_rv && *precondition_rv &&
	    strcmp(precondition_rv, pk_store_meta_str(obj, "resourceVersion") ?: "") != 0) {
		json_decref(obj);
		return -PK_STORE_ECONFLICT;
	}
	bool is_ns = t->pk == PK_KIND_NAMESPACE;
	if (is_ns && protected_namespace(name)) {
		pk_errors_add(errs, "metadata.name: Forbidden: namespace \"%s\" may not be deleted",
			      name);
		json_decref(obj);
		return -EPERM;
	}
	bool changed = true;
	int rc = pk_store_txn_begin(st, tx);
	if (rc == 0 && !is_ns)
		rc = propagate(st, tx, t, obj, o->propagation);
	if (rc == 0)
		rc = is_ns ? delete_namespace(st, tx, obj) : delete_obj(st, tx, t, obj, &changed);
	if (rc == 0)
		rc = pk_store_txn_commit(st, tx);
	else
		pk_store_txn_abort(st, tx);
	if (rc == 0)
		*ret = obj;
	else
		json_decref(obj);
	return rc;
}

int pk_store_delete_opts(struct pk_store *st, const struct pk_type *t, const char *ns,
			 const char *name, const struct pk_store_write_opts *opts,
			 struct pk_errors *errs, json_t **ret)
{
	static const struct pk_store_write_opts none = {0};
	const struct pk_store_write_opts *o = opts ? opts : &none;

	t = pk_type_stored(t);
	if (!t || !name)
		return -EINVAL;
	json_t *obj = NULL;
	struct txn tx = {.dry_run = o->dry_run};
	struct pk_errors local = {0};
	pk_store_writer_enter(st);
	int rc =
	    delete_locked(st, t, pk_store_ns_key(t, ns), name, o, &tx, errs ? errs : &local, &obj);
	int crc = pk_store_writer_leave(st, &tx);
	rc = rc < 0 ? rc : crc;
	pk_errors_clear(&local);
	if (rc == 0 && ret)
		*ret = obj;
	else
		json_decref(obj);
	return rc;
}

/* ---- update and patch -------------------------------------------------------- */
/* a and b equal but for the key skip (both objects), or equal. */
static bool equal_but(const json_t *a, const json_t *b, const char *skip)
{
	const char *key;
	json_t *v;
	size_t na = 0, nb = 0;

	if (!json_is_object(a) || !json_is_object(b))
		return json_equal(a, b);
	json_object_foreach((json_t *)a, key, v)
	{
		if (strcmp(key, skip) == 0)
			continue;
		na++;
		if (!json_equal(v, json_object_get(b, key)))
			return false;
	}
	json_object_foreach((json_t *)b, key, v)
	{
		nb += strcmp(key, skip) != 0;
	}
	return na == nb;
}

/*
 * Everything but metadata and status differs?  With binding, a Pod's
 * spec.nodeName is left out: pods/binding does not change the generation.
 */
static bool spec_changed(const json_t *a, const json_t *b, bool binding)
{
	const char *key;
	json_t *v;
	size_t na = 0, nb = 0;

	/* compared key by key where they are: no copy of either object */
	json_object_foreach((json_t *)a, key, v)
	{
		json_t *w;

		if (strcmp(key, "metadata") == 0 || strcmp(key, "status") == 0)
			continue;
		na++;
		w = json_object_get(b, key);
		if (!w)
			return true;
		if (binding && strcmp(key, "spec") == 0 ? !equal_but(v, w, "nodeName")
							: !json_equal(v, w))
			return true;
	}
	json_object_foreach((json_t *)b, key, v)
	{
		nb += strcmp(key, "metadata") != 0 && strcmp(key, "status") != 0;
	}
	return na != nb;
}

/*
 * metadata.generation as kube-apiserver keeps it: the stored one, plus one
 * when the desired state (anything outside metadata and status) changed.
 */
static void set_generation(json_t *next, const json_t *old, bool binding)
{
	json_t *om = json_object_get(old, "metadata");
	json_int_t gen = json_integer_value(json_object_get(om, "generation"));

	json_object_set_new(meta_of(next), "generation",
			    json_integer(gen + (spec_changed(old, next, binding) ? 1 : 0)));
}

static void keep_field(json_t *dst, json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);
	if (v)
		json_object_set(dst, key, v);
	else
		json_object_del(dst, key);
}

/*
 * The metadata no write may change, kept from the stored object: identity,
 * lifecycle stamps, the version (generation follows set_generation()).  An
 * update's name already is the stored one (it was looked up by it).
 */
static const char *const fixed_meta[] = {
    "name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "resourceVersion",
};

static void keep_fixed_meta(json_t *m, json_t *om)
{
	for (size_t i = 0; i < ELEMENTSOF(fixed_meta); i++)
		keep_field(m, om, fixed_meta[i]);
}

/* Build the object to store from the old one and the request (obj, changed in place). */
static json_t *merge_update(const struct pk_type *t, json_t *old, json_t *obj,
			    enum pk_store_sub sub)
{
	json_t *next;
	if (sub == PK_SUB_STATUS) {
		next = json_deep_copy(old);
		keep_field(next, obj, "status");
	} else {
		next = json_incref(obj);
		if (t->has_status)
			keep_field(next, old, "status");
	}
	json_t *m = meta_of(next), *om = meta_of(old);
	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(next, "metadata", m);
	}
	keep_fixed_meta(m, om);
	set_generation(next, old, false);
	return next;
}

static int update_locked(struct pk_store *st, json_t *obj, enum pk_store_sub sub,
			 const struct pk_store_write_opts *opts, struct pk_errors *errs,
			 struct txn *tx, json_t **ret)
{
	const struct pk_type *t = type_of_obj(obj, errs);
	if (!t)
		return -EINVAL;
	int rc = check_identity(t, obj, errs);
	if (rc < 0)
		return rc;
	json_t *old =
	    pk_store_db_get(st, t->kind, pk_store_ns_key(t, pk_store_meta_str(obj, "namespace")),
			    pk_store_meta_str(obj, "name"));
	if (!old)
		return -ENOENT;
	const char *want = pk_store_meta_str(obj, "resourceVersion");
	if (want && *want && strcmp(want, pk_store_meta_str(old, "resourceVersion") ?: "") != 0) {
		json_decref(old);
		return -PK_STORE_ECONFLICT;
	}
	/* A uid in the body is a precondition too: it never changes. */
	if (check_uid(old, opts ? opts->precondition_uid : NULL, errs) < 0 ||
	    check_uid(old, pk_store_meta_str(obj, "uid"), errs) < 0) {
		json_decref(old);
		return -PK_STORE_ECONFLICT;
	}
	json_t *next = merge_update(t, old, obj, sub);
	rc = next ? 0 : -ENOMEM;
	if (rc == 0 && t->pk == PK_KIND_POD && sub == PK_SUB_MAIN) {
		rc = pk_pod_update_check(next, old, errs);
		if (rc == 0 && opts && opts->by_user)
			rc = pk_pod_queue_user_update(next, old, errs);
		set_generation(next, old, false);
	}
	if (rc == 0)
		rc = validate(st, t, next, old, opts && opts->by_user, errs);
	if (rc == 0 && json_equal(next, old)) {
		*ret = next;
		json_decref(old);
		return 0;
	}
	if (rc == 0)
		rc = pk_store_txn_begin(st, tx);
	if (rc == 0) {
		if (deleting(next) && finalizer_count(next) == 0)
			rc = remove_cascade(st, tx, next, 0);
		else
			rc = pk_store_txn_put(st, tx, next, PK_EVENT_MODIFIED);
		rc = rc == 0 ? pk_store_txn_commit(st, tx) : (pk_store_txn_abort(st, tx), rc);
	} else if (tx->savepoint) {
		pk_store_txn_abort(st, tx);
	}
	json_decref(old);
	if (rc == 0)
		*ret = next;
	else
		json_decref(next);
	return rc;
}

int pk_store_update_opts(struct pk_store *st, const json_t *in, enum pk_store_sub sub,
			 const struct pk_store_write_opts *opts, struct pk_errors *errs,
			 json_t **ret)
{
	struct pk_errors local = {0};
	json_t *obj = json_deep_copy(in), *out = NULL;
	if (!obj || !json_is_object(obj))
		return finish(obj ? -EINVAL : -ENOMEM, obj, &local, ret);
	struct txn tx = {.dry_run = opts && opts->dry_run};
	pk_store_writer_enter(st);
	int rc = update_locked(st, obj, sub, opts, errs ? errs : &local, &tx, &out);
	int crc = pk_store_writer_leave(st, &tx);
	rc = rc < 0 ? rc : crc;
	json_decref(obj);
	return finish(rc, out, &local, ret);
}

int pk_store_patch(struct pk_store *st, const struct pk_type *t, const char *ns, const char *name,
		   enum pk_patch_type type, const json_t *patch, enum pk_store_sub sub,
		   struct pk_errors *errs, json_t **ret)
{
	return pk_store_patch_opts(st, t, ns, name, type, patch, sub, NULL, errs, ret);
}

int pk_store_patch_opts(struct pk_store *st, const struct pk_type *t, const char *ns,
			const char *name, enum pk_patch_type type, const json_t *patch,
			enum pk_store_sub sub, const struct pk_store_write_opts *opts,
			struct pk_errors *errs, json_t **ret)
{
	struct pk_errors local = {0};
	struct pk_errors *e = errs ? errs : &local;

	t = pk_type_stored(t);
	if (!t || !name)
		return -EINVAL;
	json_t *out = NULL;
	struct txn tx = {.dry_run = opts && opts->dry_run};
	pk_store_writer_enter(st);
	json_t *old = pk_store_db_get(st, t->kind, pk_store_ns_key(t, ns), name), *next = NULL;
	char err[256] = "";
	int rc = old ? pk_patch_apply(old, type, patch, &next, err, sizeof(err)) : -ENOENT;
	if (rc < 0 && old)
		pk_errors_add(e, "patch%s: %s", type == PK_PATCH_JSON ? "" : " body", err);
	if (rc == 0 && !json_is_object(next)) {
		pk_errors_add(e, "patch: the result is not an object");
		rc = -EINVAL;
	}
	if (rc == 0) {
		/* Identity comes from the URL; a resourceVersion in the patch is a precondition. */
		keep_field(next, old, "kind");
		json_t *m = meta_of(next);
		if (!json_is_object(m)) {
			m = json_object();
			json_object_set_new(next, "metadata", m);
		}
		keep_field(m, meta_of(old), "name");
		keep_field(m, meta_of(old), "namespace");
		json_t *prv = json_object_get(
		    type == PK_PATCH_JSON ? NULL : json_object_get(patch, "metadata"),
		    "resourceVersion");
		if (!json_is_string(prv))
			keep_field(m, meta_of(old), "resourceVersion");
		rc = update_locked(st, next, sub, opts, e, &tx, &out);
	}
	int crc = pk_store_writer_leave(st, &tx);
	rc = rc < 0 ? rc : crc;
	json_decref(old);
	json_decref(next);
	return finish(rc, out, &local, ret);
}

/* ---- batched edits -------------------------------------------------------------- */
/* What an edit may not change: identity, lifecycle stamps, the version. */
static void keep_identity(json_t *next, json_t *old, bool binding)
{
	json_t *m = meta_of(next), *om = meta_of(old);

	keep_field(next, old, "kind");
	keep_field(next, old, "apiVersion");
	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(next, "metadata", m);
	}
	keep_fixed_meta(m, om);
	set_generation(next, old, binding);
}

/*
 * The edit's new state written (unless unchanged), then the deletion if
 * asked.  A plain write's event keeps next itself, which goes back to the
 * caller unchanged from here on (read-only, see pk_store_edit_batch()):
 * no copy of each object for the watchers.
 */
static int edit_write(struct pk_store *st, struct txn *tx, const struct pk_type *t, json_t *old,
		      json_t *next, bool delete_after)
{
	bool changed = !json_equal(next, old);
	int rc = pk_store_txn_begin(st, tx);

	if (rc == 0 && changed) {
		if (deleting(next) && finalizer_count(next) == 0) {
			rc = remove_cascade(st, tx, next, 0);
		} else {
			tx->share = !delete_after;
			rc = pk_store_txn_put(st, tx, next, PK_EVENT_MODIFIED);
			tx->share = false;
		}
	}
	if (rc == 0 && delete_after) {
		bool deleted_changed;

		rc = delete_obj(st, tx, t, next, &deleted_changed);
	}
	if (rc == 0)
		return pk_store_txn_commit(st, tx);
	pk_store_txn_abort(st, tx);
	return rc;
}

/* The first of errs into the edit's message. */
static void edit_message(struct pk_store_edit *e, struct pk_errors *errs)
{
	if (errs->n)
		snprintf(e->message, sizeof(e->message), "%s", errs->msg[0]);
	pk_errors_clear(errs);
}

/* A CREATE edit: a copy of e->create by the rules of pk_store_create(). */
static int edit_create(struct pk_store *st, struct pk_store_edit *e, struct txn *tx)
{
	struct pk_errors errs = {0};
	json_t *obj = json_deep_copy(e->create);
	int rc;

	/* the event keeps obj itself: it goes back read only (e->object) */
	tx->share = true;
	rc = !obj		    ? -ENOMEM
	     : !json_is_object(obj) ? -EINVAL
				    : create_locked(st, obj, false, &errs, tx);
	tx->share = false;

	edit_message(e, &errs);
	if (rc == 0)
		e->object = obj;
	else
		json_decref(obj);
	return rc;
}

/* A DELETE edit: by the rules of pk_store_delete_opts(), with its preconditions. */
static int edit_delete(struct pk_store *st, const struct pk_type *t, struct pk_store_edit *e,
		       struct txn *tx)
{
	struct pk_errors errs = {0};
	char rv[24] = "";
	struct pk_store_write_opts o = {.precondition_uid = e->precondition_uid,
					.precondition_rv = rv,
					.propagation = e->propagation};
	json_t *obj = NULL;
	int rc;

	if (e->precondition_rv)
		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)e->precondition_rv);
	rc = delete_locked(st, t, pk_store_ns_key(t, e->ns), e->name, &o, tx, &errs, &obj);
	edit_message(e, &errs);
	if (rc == 0)
		e->object = obj;
	else if (rc == -PK_STORE_ECONFLICT)
		e->object = pk_store_db_get(st, t->kind, pk_store_ns_key(t, e->ns), e->name);
	return rc;
}

/*
 * What an edit changes: a copy of old (shared: read only).  shallow: a copy
 * of its metadata and status, a new spec holding the same fields, and the
 * rest shared (see pk_store_edit.apply_shallow).
 */
static json_t *copy_for_edit(const json_t *old, bool shallow)
{
	static const char *const copied[] = {"metadata", "status"};
	json_t *next, *spec;

	if (!shallow)
		return json_deep_copy(old);
	next = json_copy((json_t *)old);
	for (size_t i = 0; next && i < ELEMENTSOF(copied); i++) {
		json_t *v = json_object_get(old, copied[i]);

		if (v && json_object_set_new(next, copied[i], json_deep_copy(v)) < 0) {
			json_decref(next);
			return NULL;
		}
	}
	spec = json_object_get(old, "spec");
	if (next && json_is_object(spec) &&
	    json_object_set_new(next, "spec", json_copy(spec)) < 0) {
		json_decref(next);
		return NULL;
	}
	return next;
}

/*
 * The kinds an apply_shallow edit copies shallowly: those whose validation
 * and admission only read the object (a pod's; a Job's or JobSet's, which
 * the queue controller writes at each admission and pending reason).
 */
static bool shallow_kind(const struct pk_type *t)
{
	return t->pk == PK_KIND_POD || t->pk == PK_KIND_JOB || t->pk == PK_KIND_JOBSET;
}

static int edit_locked(struct pk_store *st, struct pk_store_edit *e, struct txn *tx)
{
	const struct pk_type *t = pk_type_stored(e->kind);
	struct pk_errors errs = {0};
	json_t *old, *next;
	int rc;

	if (e->op == PK_STORE_EDIT_CREATE)
		return e->create ? edit_create(st, e, tx) : -EINVAL;
	if (!t || !e->name || (e->op == PK_STORE_EDIT_MODIFY && !e->apply))
		return -EINVAL;
	if (e->op == PK_STORE_EDIT_DELETE)
		return edit_delete(st, t, e, tx);
	/* the tree the store last wrote, read only, else the row parsed */
	old = pk_store_cache_get(st, t, e->ns, e->name);
	if (!old)
		old = pk_store_db_get(st, t->kind, pk_store_ns_key(t, e->ns), e->name);
	if (!old)
		return -ENOENT;
	if ((e->precondition_rv && pk_store_obj_rv(old) != e->precondition_rv) ||
	    check_uid(old, e->precondition_uid, &errs) < 0) {
		edit_message(e, &errs);
		e->object = old;
		return -PK_STORE_ECONFLICT;
	}
	next = copy_for_edit(old, e->apply_shallow && shallow_kind(t));
	rc = next ? e->apply(next, e->arg) : -ENOMEM;
	if (rc == 0 && !json_is_object(next))
		rc = -EINVAL;
	if (rc == 0) {
		keep_identity(next, old, t->pk == PK_KIND_POD);
		rc = validate(st, t, next, old, false, &errs);
		edit_message(e, &errs);
	}
	if (rc == 0)
		rc = edit_write(st, tx, t, old, next, e->delete_after);
	if (rc == 0) {
		e->object = next;
		json_decref(old);
		return 0;
	}
	json_decref(next);
	if (rc == -PK_STORE_ECONFLICT)
		e->object = old;
	else
		json_decref(old);
	return rc;
}

int pk_store_edit_batch(struct pk_store *st, struct pk_store_edit *edits, size_t n)
{
	struct txn *txs = calloc(n ? n : 1, sizeof(*txs));
	int crc;

	if (!txs)
		return -ENOMEM;
	pk_store_writer_enter(st);
	for (size_t i = 0; i < n; i++) {
		edits[i].object = NULL;
		edits[i].message[0] = '\0';
		edits[i].rc = edit_locked(st, &edits[i], &txs[i]);
	}
	crc = pk_store_writer_leave_many(st, txs, n);
	for (size_t i = 0; crc < 0 && i < n; i++) {
		if (edits[i].rc == 0) {
			json_decref(edits[i].object);
			edits[i].object = NULL;
			edits[i].rc = crc;
		}
	}
	for (size_t i = 0; i < n; i++)
		pk_store_txn_release(&txs[i]);
	free(txs);
	return crc < 0 ? -EIO : 0;
}
