/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_scenarios.c — runs every scenario of tests/scenarios/ (not the
 * validate/ folder): objects in, expected outcome out.
 *
 * A scenario is one YAML file.  Ordinary documents are API objects, added in
 * file order.  Two generator kinds keep clusters short to write:
 *
 *   kind: Nodes   count: N  namePrefix: P  labels: {...}  allocatable: {...}
 *                 taints: [...]  unschedulable: bool         -> Nodes P0..P(N-1)
 *   kind: Pods    count: N  namePrefix: P  podGroup: G  requests: {...}
 *                 priority: I  nodeName: X  nodeSelector: {...}
 *                 creationTimestamp: T  namespace: NS
 *                 labels: {...}  spec: {...} (merged into each pod's spec)
 *                                                             -> Pods P0..P(N-1)
 *
 * (a %d in namePrefix or nodeName is replaced by the index).  Nodes with
 *   torus: {name: T, shape: 8x8x16, host: 2x2x1, cube: 4x4x4, wraparound: B}
 * are the hosts of one torus (count is its host count), host i at cell i in
 * raster order (x fastest), with the torus labels of topology.h; Pods with
 * nodes: [i, ...] go on hosts P<i> of nodeName P%d (count: the list's length).
 * The last
 * document, kind: Expect, says what must hold after scheduling to quiescence
 * (names are pod names in "default", or "ns/name"; shell globs allowed):
 *
 *   bound: [names]            every match has spec.nodeName
 *   pending: [names]          no match has spec.nodeName
 *   bindings: {pod: node}     exact nodes
 *   sameDomain: [{key: K, pods: [names], value: V}]  one value of K (= V)
 *   distinctDomain: [{key: K, pods: [names]}]  every pod bound, each to a
 *                             different value of K
 *   conditions: [{kind, name, type, status, reason, message}]  message: substring
 *   preempted: [names]        reported preempted; notPreempted: [names]
 *   explain: [substrings]     in the --explain trace
 *   annotations: {pod: {key: value}}  exact annotations of bound pods
 *   claims: {claim: {devices: N, reservedFor: [pods], nodeOf: pod}}
 *                             ResourceClaim "claim" (in "default"; the first
 *                             whose name matches, a glob) has N
 *                             devices in status.allocation (0: unallocated),
 *                             exactly those pods in status.reservedFor, and
 *                             every allocated device is one published for
 *                             the node pod nodeOf is bound to (a slice with
 *                             that nodeName, or a nodeSelector/allNodes one);
 *                             with device: D, every result names device D;
 *                             with consumed: {capacity: quantity}, every
 *                             result is a share (a shareID) that consumed
 *                             exactly those quantities
 *   volumeClaims: {claim: {volumeName: V, selectedNode: N}}  a PersistentVolumeClaim's
 *                             spec.volumeName and selected-node annotation
 *                             after the run ("" for absent)
 *   slices: [{pods: glob, shape: AxBxC, torus: T}]  the matching pods are bound,
 *                             one per host, to a box of that shape (up to
 *                             rotation, across the seam) of torus T (or any
 *                             one torus), and their slice-coords and
 *                             worker-id annotations agree with it
 *
 * An Expect with gatedGangsWait: true runs under that opt-in policy
 * (pk_sched_opts.gated_gangs_wait).
 * Every scenario runs with the snapshot invariant check after every cycle.
 * A file may hold several kind: Expect documents, each with an optional
 * strategy: NAME; each is a separate run of the same objects under that
 * strategy.  Without one, the scenarios at the top (KEP-6012 semantics) run
 * under "kep", those of placement/ under the default strategy, and those of
 * upstream/ (kube-scheduler's plugin tests) under "kep" and under "fit".
 */
#include <check.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/controllers/controllers.h"
#include "kernel/sched/sched.h"
#include "topology/topology.h"

#define SCENARIO_DIR PODKERNEL_SRCDIR "/tests/scenarios"

static char *fmt_name(const char *prefix, size_t i)
{
	const char *at = strstr(prefix, "%d");
	char *s = NULL;

	if (at)
		ck_assert(asprintf(&s, "%.*s%zu%s", (int)(at - prefix), prefix, i, at + 2) >= 0);
	else
		ck_assert(asprintf(&s, "%s%zu", prefix, i) >= 0);
	return s;
}

/* The hosts of one torus, labelled like `podctl board nodes` does. */
static void gen_torus(json_t *gen, json_t *torus, json_t *out)
{
	const char *prefix = json_string_value(json_object_get(gen, "namePrefix"));
	const char *name = json_string_value(json_object_get(torus, "name"));
	const char *ts = json_string_value(json_object_get(torus, "shape"));
	const char *hs = json_string_value(json_object_get(torus, "host"));
	const char *cs = json_string_value(json_object_get(torus, "cube"));
	bool wrap = json_is_true(json_object_get(torus, "wraparound"));
	struct topo_shape chips, host, grid;

	ck_assert(name && ts && hs);
	ck_assert_int_eq(topo_shape_parse(ts, &chips), 0);
	ck_assert_int_eq(topo_shape_parse(hs, &host), 0);
	for (int a = 0; a < TOPO_DIMS; a++)
		grid.dim[a] = chips.dim[a] / host.dim[a];
	for (int64_t i = 0; i < topo_shape_volume(&grid); i++) {
		char *nn = fmt_name(prefix ? prefix : "node-", (size_t)i), coords[48];
		struct topo_coord c;
		json_t *node = json_pack("{s:s, s:s, s:{s:s}, s:{}, s:{}}", "apiVersion", "v1",
					 "kind", "Node", "metadata", "name", nn, "spec", "status");
		json_t *labels = json_deep_copy(json_object_get(gen, "labels"));

		topo_coord_of_index(&grid, i, &c);
		snprintf(coords, sizeof(coords), "%d.%d.%d", c.c[0] * host.dim[0],
			 c.c[1] * host.dim[1], c.c[2] * host.dim[2]);
		if (!labels)
			labels = json_object();
		json_object_set_new(labels, "kubernetes.io/hostname", json_string(nn));
		json_object_set_new(labels, TOPO_LABEL_TORUS, json_string(name));
		json_object_set_new(labels, TOPO_LABEL_TORUS_SHAPE, json_string(ts));
		json_object_set_new(labels, TOPO_LABEL_HOST_SHAPE, json_string(hs));
		if (cs)
			json_object_set_new(labels, TOPO_LABEL_CUBE_SHAPE, json_string(cs));
		json_object_set_new(labels, TOPO_LABEL_WRAPAROUND,
				    json_string(wrap ? "true" : "false"));
		json_object_set_new(labels, TOPO_LABEL_COORDS, json_string(coords));
		json_object_set_new(json_object_get(node, "metadata"), "labels", labels);
		if (json_object_get(gen, "allocatable"))
			json_object_set(json_object_get(node, "status"), "allocatable",
					json_object_get(gen, "allocatable"));
		if (json_object_get(gen, "taints"))
			json_object_set(json_object_get(node, "spec"), "taints",
					json_object_get(gen, "taints"));
		json_array_append_new(out, node);
		free(nn);
	}
}

static void gen_nodes(json_t *gen, json_t *out)
{
	if (json_object_get(gen, "torus")) {
		gen_torus(gen, json_object_get(gen, "torus"), out);
		return;
	}
	size_t n = (size_t)json_integer_value(json_object_get(gen, "count"));
	const char *prefix = json_string_value(json_object_get(gen, "namePrefix"));

	for (size_t i = 0; i < n; i++) {
		char *name = fmt_name(prefix ? prefix : "node-", i);
		json_t *node =
		    json_pack("{s:s, s:s, s:{s:s}, s:{}, s:{}}", "apiVersion", "v1", "kind", "Node",
			      "metadata", "name", name, "spec", "status");
		json_t *labels = json_deep_copy(json_object_get(gen, "labels"));

		if (!labels)
			labels = json_object();
		json_object_set_new(labels, "kubernetes.io/hostname", json_string(name));
		json_object_set_new(json_object_get(node, "metadata"), "labels", labels);
		if (json_object_get(gen, "allocatable"))
			json_object_set(json_object_get(node, "status"), "allocatable",
					json_object_get(gen, "allocatable"));
		if (json_object_get(gen, "taints"))
			json_object_set(json_object_get(node, "spec"), "taints",
					json_object_get(gen, "taints"));
		if (json_is_true(json_object_get(gen, "unschedulable")))
			json_object_set_new(json_object_get(node, "spec"), "unschedulable",
					    json_true());
		json_array_append_new(out, node);
		free(name);
	}
}

static void gen_pods(json_t *gen, json_t *out)
{
	size_t n = (size_t)json_integer_value(json_object_get(gen, "count"));
	const char *prefix = json_string_value(json_object_get(gen, "namePrefix"));
	const char *ns = json_string_value(json_object_get(gen, "namespace"));
	json_t *on = json_object_get(gen, "nodes");
	const char *group = json_string_value(json_object_get(gen, "podGroup"));
	const char *node = json_string_value(json_object_get(gen, "nodeName"));
	const char *ts = json_string_value(json_object_get(gen, "creationTimestamp"));

	if (on)
		n = json_array_size(on);
	for (size_t i = 0; i < n; i++) {
		char *name = fmt_name(prefix ? prefix : "pod-", i);
		json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}",
					"apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
					"namespace", ns ? ns : "default", "spec", "containers",
					"name", "main", "image", "busybox");
		json_t *spec = json_object_get(pod, "spec");

		if (json_object_get(gen, "requests"))
			json_object_set_new(
			    json_array_get(json_object_get(spec, "containers"), 0), "resources",
			    json_pack("{s:O}", "requests", json_object_get(gen, "requests")));
		if (group)
			json_object_set_new(spec, "schedulingGroup",
					    json_pack("{s:s}", "podGroupName", group));
		if (json_object_get(gen, "priority"))
			json_object_set(spec, "priority", json_object_get(gen, "priority"));
		if (json_object_get(gen, "priorityClassName"))
			json_object_set(spec, "priorityClassName",
					json_object_get(gen, "priorityClassName"));
		if (json_object_get(gen, "nodeSelector"))
			json_object_set(spec, "nodeSelector", json_object_get(gen, "nodeSelector"));
		if (json_object_get(gen, "tolerations"))
			json_object_set(spec, "tolerations", json_object_get(gen, "tolerations"));
		if (node) {
			char *nn = fmt_name(
			    node, on ? (size_t)json_integer_value(json_array_get(on, i)) : i);

			if (!strstr(node, "%d")) {
				free(nn);
				nn = strdup(node);
			}
			json_object_set_new(spec, "nodeName", json_string(nn));
			free(nn);
		}
		if (ts)
			json_object_set_new(json_object_get(pod, "metadata"), "creationTimestamp",
					    json_string(ts));
		if (json_object_get(gen, "labels"))
			json_object_set(json_object_get(pod, "metadata"), "labels",
					json_object_get(gen, "labels"));
		if (json_object_get(gen, "spec"))
			json_object_update(spec, json_object_get(gen, "spec"));
		json_array_append_new(out, pod);
		free(name);
	}
}

struct run {
	const char *file;
	json_t *out, *preempted, *expect;
	char *trace;
	int failures;
};

#define FAILF(run, ...)                                                                            \
	do {                                                                                       \
		fprintf(stderr, "%s: ", (run)->file);                                              \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		(run)->failures++;                                                                 \
	} while (0)

static bool pod_matches(json_t *pod, const char *pattern)
{
	char full[512];

	if (pk_kind_of(pod) != PK_KIND_POD)
		return false;
	snprintf(full, sizeof(full), "%s/%s", pk_namespace(pod), pk_name(pod));
	return fnmatch(pattern, strchr(pattern, '/') ? full : pk_name(pod), 0) == 0;
}

/* Calls fn on every pod of arr matching pattern; returns the count. */
static size_t each_pod(json_t *arr, const char *pattern, void (*fn)(struct run *, json_t *, void *),
		       struct run *run, void *arg)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(arr, i, o)
	{
		if (!pod_matches(o, pattern))
			continue;
		n++;
		if (fn)
			fn(run, o, arg);
	}
	return n;
}

static void want_bound(struct run *run, json_t *pod, void *arg)
{
	bool bound = pk_get_string(pod, "spec.nodeName") != NULL;

	if (bound != (arg != NULL))
		FAILF(run, "pod %s: expected %s, is %s", pk_name(pod), arg ? "bound" : "pending",
		      bound ? pk_get_string(pod, "spec.nodeName") : "pending");
}

static void check_list(struct run *run, const char *field, void *want)
{
	size_t i;
	json_t *pat;

	json_array_foreach(json_object_get(run->expect, field), i, pat)
	{
		if (!each_pod(run->out, json_string_value(pat), want_bound, run, want))
			FAILF(run, "%s: no pod matches %s", field, json_string_value(pat));
	}
}

static json_t *node_named(struct run *run, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(run->out, i, o) if (pk_kind_of(o) == PK_KIND_NODE &&
					       strcmp(pk_name(o), name) == 0) return o;
	return NULL;
}

struct domain_check {
	const char *key;
	const char *value;
};

static void same_domain(struct run *run, json_t *pod, void *arg)
{
	struct domain_check *d = arg;
	const char *node = pk_get_string(pod, "spec.nodeName");
	json_t *n = node ? node_named(run, node) : NULL;
	const char *v =
	    n ? json_string_value(json_object_get(pk_get(n, "metadata.labels"), d->key)) : NULL;

	if (!v) {
		FAILF(run, "sameDomain %s: pod %s is not on a labelled node", d->key, pk_name(pod));
		return;
	}
	if (!d->value)
		d->value = v;
	else if (strcmp(d->value, v) != 0)
		FAILF(run, "sameDomain %s: pod %s in %s, expected %s", d->key, pk_name(pod), v,
		      d->value);
}

struct distinct_check {
	const char *key;
	json_t *seen; /* value -> pod name */
};

static void distinct_domain(struct run *run, json_t *pod, void *arg)
{
	struct distinct_check *d = arg;
	const char *node = pk_get_string(pod, "spec.nodeName");
	json_t *n = node ? node_named(run, node) : NULL;
	const char *v =
	    n ? json_string_value(json_object_get(pk_get(n, "metadata.labels"), d->key)) : NULL;
	json_t *other;

	if (!v) {
		FAILF(run, "distinctDomain %s: pod %s is not on a labelled node", d->key,
		      pk_name(pod));
		return;
	}
	if ((other = json_object_get(d->seen, v)))
		FAILF(run, "distinctDomain %s: pods %s and %s both in %s", d->key,
		      json_string_value(other), pk_name(pod), v);
	json_object_set_new(d->seen, v, json_string(pk_name(pod)));
}

static void check_distinct(struct run *run)
{
	size_t i, k;
	json_t *e, *pat;

	json_array_foreach(json_object_get(run->expect, "distinctDomain"), i, e)
	{
		struct distinct_check d = {.key = json_string_value(json_object_get(e, "key")),
					   .seen = json_object()};

		json_array_foreach(
		    json_object_get(e, "pods"), k,
		    pat) if (!each_pod(run->out, json_string_value(pat), distinct_domain, run, &d))
		    FAILF(run, "distinctDomain: no pod matches %s", json_string_value(pat));
		json_decref(d.seen);
	}
}

static void check_domains(struct run *run)
{
	size_t i, k;
	json_t *e, *pat;

	json_array_foreach(json_object_get(run->expect, "sameDomain"), i, e)
	{
		struct domain_check d = {
		    .key = json_string_value(json_object_get(e, "key")),
		    .value = json_string_value(json_object_get(e, "value")),
		};

		json_array_foreach(
		    json_object_get(e, "pods"), k,
		    pat) if (!each_pod(run->out, json_string_value(pat), same_domain, run, &d))
		    FAILF(run, "sameDomain: no pod matches %s", json_string_value(pat));
	}
}

static void check_bindings(struct run *run)
{
	const char *pod;
	json_t *node;

	json_object_foreach(json_object_get(run->expect, "bindings"), pod, node)
	{
		size_t i;
		json_t *o;
		bool seen = false;

		json_array_foreach(run->out, i, o)
		{
			const char *got;

			if (!pod_matches(o, pod))
				continue;
			seen = true;
			got = pk_get_string(o, "spec.nodeName");
			if (!got || strcmp(got, json_string_value(node)) != 0)
				FAILF(run, "pod %s: expected on %s, got %s", pod,
				      json_string_value(node), got ? got : "pending");
		}
		if (!seen)
			FAILF(run, "bindings: no pod %s", pod);
	}
}

static void check_conditions(struct run *run)
{
	size_t i, k;
	json_t *e, *o;

	json_array_foreach(json_object_get(run->expect, "conditions"), i, e)
	{
		const char *kind = json_string_value(json_object_get(e, "kind"));
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *type = json_string_value(json_object_get(e, "type"));
		bool seen = false;

		json_array_foreach(run->out, k, o)
		{
			json_t *c;
			const char *f[] = {"status", "reason"};

			if (strcmp(json_string_value(json_object_get(o, "kind")) ?: "", kind) !=
				0 ||
			    fnmatch(name, pk_name(o) ?: "", 0) != 0)
				continue;
			seen = true;
			c = pk_condition_get(o, type);
			if (!c) {
				FAILF(run, "%s %s: no condition %s", kind, pk_name(o), type);
				continue;
			}
			for (size_t j = 0; j < 2; j++) {
				const char *want = json_string_value(json_object_get(e, f[j]));
				const char *got = json_string_value(json_object_get(c, f[j]));

				if (want && (!got || strcmp(want, got) != 0))
					FAILF(run, "%s %s: %s %s is %s, expected %s", kind,
					      pk_name(o), type, f[j], got ? got : "(none)", want);
			}
			const char *msg = json_string_value(json_object_get(e, "message"));
			const char *got = json_string_value(json_object_get(c, "message"));

			if (msg && (!got || !strstr(got, msg)))
				FAILF(run, "%s %s: %s message \"%s\" lacks \"%s\"", kind,
				      pk_name(o), type, got ? got : "", msg);
		}
		if (!seen)
			FAILF(run, "conditions: no %s %s", kind, name);
	}
}

static void check_preempted(struct run *run)
{
	size_t i;
	json_t *pat;

	json_array_foreach(json_object_get(run->expect, "preempted"), i, pat)
	{
		if (!each_pod(run->preempted, json_string_value(pat), NULL, run, NULL))
			FAILF(run, "expected %s preempted", json_string_value(pat));
		if (each_pod(run->out, json_string_value(pat), NULL, run, NULL))
			FAILF(run, "preempted %s still in the output", json_string_value(pat));
	}
	json_array_foreach(
	    json_object_get(run->expect, "notPreempted"), i,
	    pat) if (each_pod(run->preempted, json_string_value(pat), NULL, run, NULL))
	    FAILF(run, "%s preempted, expected not", json_string_value(pat));
}

static void check_explain(struct run *run)
{
	size_t i;
	json_t *s;

	json_array_foreach(json_object_get(run->expect, "explain"), i,
			   s) if (!strstr(run->trace ? run->trace : "", json_string_value(s)))
	    FAILF(run, "explain trace lacks \"%s\"", json_string_value(s));
}

static void check_annotations(struct run *run)
{
	const char *pod, *key;
	json_t *want, *v;

	json_object_foreach(json_object_get(run->expect, "annotations"), pod, want)
	{
		size_t i, seen = 0;
		json_t *o;

		json_array_foreach(run->out, i, o)
		{
			json_t *ann =
			    json_object_get(json_object_get(o, "metadata"), "annotations");

			if (!pod_matches(o, pod))
				continue;
			seen++;
			json_object_foreach(want, key, v)
			{
				const char *got = json_string_value(json_object_get(ann, key));

				if (!got || strcmp(got, json_string_value(v)) != 0)
					FAILF(run, "pod %s: annotation %s is %s, expected %s",
					      pk_name(o), key, got ? got : "(none)",
					      json_string_value(v));
			}
		}
		if (!seen)
			FAILF(run, "annotations: no pod %s", pod);
	}
}

static void check_volume_claims(struct run *run)
{
	const char *claim;
	json_t *want;

	json_object_foreach(json_object_get(run->expect, "volumeClaims"), claim, want)
	{
		size_t i, seen = 0;
		json_t *o;

		json_array_foreach(run->out, i, o)
		{
			const char *vol = pk_get_string(o, "spec.volumeName"), *node;
			const char *wv = json_string_value(json_object_get(want, "volumeName"));
			const char *wn = json_string_value(json_object_get(want, "selectedNode"));

			if (pk_kind_of(o) != PK_KIND_PERSISTENT_VOLUME_CLAIM ||
			    strcmp(pk_name(o), claim) != 0)
				continue;
			seen++;
			node = json_string_value(
			    json_object_get(pk_get(o, "metadata.annotations"),
					    "volume.kubernetes.io/selected-node"));
			if (wv && strcmp(vol ? vol : "", wv) != 0)
				FAILF(run, "claim %s: volumeName %s, expected %s", claim,
				      vol ? vol : "(none)", wv);
			if (wn && strcmp(node ? node : "", wn) != 0)
				FAILF(run, "claim %s: selected node %s, expected %s", claim,
				      node ? node : "(none)", wn);
		}
		if (!seen)
			FAILF(run, "volumeClaims: no claim %s", claim);
	}
}

static int coords_of(json_t *o, const char *key, int c[3])
{
	const char *v = json_string_value(
	    json_object_get(json_object_get(json_object_get(o, "metadata"),
					    key[0] == 't' ? "labels" : "annotations"),
			    key));

	return v && sscanf(v, "%d.%d.%d", &c[0], &c[1], &c[2]) == 3 ? 0 : -1;
}

struct slice_pod {
	int node[3], slice[3], worker;
};

/* Is there a rotation and origin taking every pod's slice coords to its host? */
static bool slice_consistent(const struct slice_pod *sp, size_t n, const int torus[3])
{
	static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
					{1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

	for (int p = 0; p < 6; p++) {
		bool ok = true;
		int origin[3];

		for (int a = 0; a < 3; a++)
			origin[a] = sp[0].node[a] - sp[0].slice[perms[p][a]];
		for (size_t i = 0; i < n && ok; i++)
			for (int a = 0; a < 3; a++)
				ok = ok && ((origin[a] + sp[i].slice[perms[p][a]]) % torus[a] +
					    torus[a]) %
						   torus[a] ==
					       sp[i].node[a];
		if (ok)
			return true;
	}
	return false;
}

static void check_one_slice(struct run *run, json_t *e)
{
	const char *glob = json_string_value(json_object_get(e, "pods"));
	const char *shape = json_string_value(json_object_get(e, "shape"));
	const char *want_torus = json_string_value(json_object_get(e, "torus"));
	struct topo_shape s, host, chips;
	struct slice_pod sp[1024];
	const char *torus = NULL;
	size_t n = 0, i;
	json_t *o;
	bool *seen;

	ck_assert(glob && shape && topo_shape_parse(shape, &s) == 0);
	json_array_foreach(run->out, i, o)
	{
		json_t *node;
		const char *t, *w;

		if (!pod_matches(o, glob) || n >= 1024)
			continue;
		node = pk_get_string(o, "spec.nodeName")
			   ? node_named(run, pk_get_string(o, "spec.nodeName"))
			   : NULL;
		if (!node) {
			FAILF(run, "slice %s: pod %s is not bound", glob, pk_name(o));
			return;
		}
		t = json_string_value(
		    json_object_get(json_object_get(json_object_get(node, "metadata"), "labels"),
				    TOPO_LABEL_TORUS));
		w = json_string_value(
		    json_object_get(json_object_get(json_object_get(o, "metadata"), "annotations"),
				    TOPO_ANN_WORKER_ID));
		if (torus && t && strcmp(torus, t) != 0)
			FAILF(run, "slice %s: pods in tori %s and %s", glob, torus, t);
		torus = t;
		if (coords_of(node, TOPO_LABEL_COORDS, sp[n].node) < 0 ||
		    coords_of(o, TOPO_ANN_SLICE_COORDS, sp[n].slice) < 0 || !w) {
			FAILF(run, "slice %s: pod %s lacks coordinates or worker id", glob,
			      pk_name(o));
			return;
		}
		sp[n].worker = atoi(w);
		topo_shape_parse(json_string_value(json_object_get(
				     json_object_get(json_object_get(node, "metadata"), "labels"),
				     TOPO_LABEL_HOST_SHAPE)),
				 &host);
		topo_shape_parse(json_string_value(json_object_get(
				     json_object_get(json_object_get(node, "metadata"), "labels"),
				     TOPO_LABEL_TORUS_SHAPE)),
				 &chips);
		n++;
	}
	if (want_torus && (!torus || strcmp(torus, want_torus) != 0))
		FAILF(run, "slice %s: in torus %s, expected %s", glob, torus ? torus : "(none)",
		      want_torus);
	if ((int64_t)n * topo_shape_volume(&host) != topo_shape_volume(&s)) {
		FAILF(run, "slice %s: %zu pods for a %s slice", glob, n, shape);
		return;
	}
	seen = calloc(n, sizeof(bool));
	for (i = 0; i < n; i++) {
		/* worker id = rank of the slice coords, x fastest, in host units of the
		 * slice frame; every rank once */
		int w = sp[i].worker;

		if (w < 0 || (size_t)w >= n || seen[w])
			FAILF(run, "slice %s: worker id %d repeated or out of range", glob, w);
		else
			seen[w] = true;
		for (int a = 0; a < 3; a++)
			if (sp[i].slice[a] < 0 || sp[i].slice[a] >= s.dim[a])
				FAILF(run, "slice %s: slice coords outside %s", glob, shape);
	}
	free(seen);
	for (i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (!memcmp(sp[i].node, sp[j].node, sizeof(sp[i].node)))
				FAILF(run, "slice %s: two pods on one host", glob);
	if (!slice_consistent(sp, n, chips.dim))
		FAILF(run, "slice %s: hosts do not form a %s box matching the slice coords", glob,
		      shape);
}

static void check_slices(struct run *run)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(run->expect, "slices"), i, e) check_one_slice(run, e);
}

static json_t *object_named(struct run *run, enum pk_kind kind, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(run->out, i, o) if (pk_kind_of(o) == kind &&
					       fnmatch(name, pk_name(o), 0) == 0) return o;
	return NULL;
}

/* Is device driver/pool/name published by a slice node may use? */
static bool device_for_node(struct run *run, json_t *res, const char *node)
{
	size_t i, k;
	json_t *o, *d;

	json_array_foreach(run->out, i, o)
	{
		const char *nn = pk_get_string(o, "spec.nodeName");

		if (pk_kind_of(o) != PK_KIND_RESOURCE_SLICE ||
		    strcmp(pk_get_string(o, "spec.driver") ?: "",
			   pk_get_string(res, "driver") ?: "-") != 0 ||
		    strcmp(pk_get_string(o, "spec.pool.name") ?: "",
			   pk_get_string(res, "pool") ?: "-") != 0 ||
		    (nn && strcmp(nn, node) != 0))
			continue;
		json_array_foreach(pk_get(o, "spec.devices"), k,
				   d) if (strcmp(pk_get_string(d, "name") ?: "",
						 pk_get_string(res, "device") ?: "-") ==
					  0) return true;
	}
	return false;
}

/* device: D and consumed: {capacity: quantity} of every result of claim name. */
static void check_shares(struct run *run, const char *name, json_t *want, json_t *results)
{
	const char *dev = pk_get_string(want, "device"), *cap;
	json_t *cons = json_object_get(want, "consumed"), *x, *q;
	size_t i;

	json_array_foreach(results, i, x)
	{
		if (dev && strcmp(pk_get_string(x, "device") ?: "", dev) != 0)
			FAILF(run, "claim %s: device %s allocated, expected %s", name,
			      pk_get_string(x, "device") ?: "-", dev);
		if (cons && !pk_get_string(x, "shareID"))
			FAILF(run, "claim %s: result %zu has no shareID", name, i);
		json_object_foreach(cons, cap, q)
		{
			const char *got = json_string_value(
			    json_object_get(json_object_get(x, "consumedCapacity"), cap));

			if (!got || strcmp(got, json_string_value(q) ?: "") != 0)
				FAILF(run, "claim %s: consumed %s %s, expected %s", name, cap,
				      got ? got : "nothing", json_string_value(q) ?: "-");
		}
	}
}

static void check_one_claim(struct run *run, const char *name, json_t *want)
{
	json_t *c = object_named(run, PK_KIND_RESOURCE_CLAIM, name), *x;
	json_t *results = pk_get(c, "status.allocation.devices.results");
	json_t *reserved = pk_get(c, "status.reservedFor");
	json_t *wres = json_object_get(want, "reservedFor");
	const char *of = pk_get_string(want, "nodeOf");
	size_t i;

	if (!c) {
		FAILF(run, "claims: no ResourceClaim %s", name);
		return;
	}
	if (json_object_get(want, "devices") &&
	    json_array_size(results) !=
		(size_t)json_integer_value(json_object_get(want, "devices")))
		FAILF(run, "claim %s: %zu devices allocated, expected %lld", name,
		      json_array_size(results),
		      (long long)json_integer_value(json_object_get(want, "devices")));
	if (wres && json_array_size(wres) != json_array_size(reserved))
		FAILF(run, "claim %s: reserved for %zu pods, expected %zu", name,
		      json_array_size(reserved), json_array_size(wres));
	json_array_foreach(wres, i, x)
	{
		bool found = false;
		size_t k;
		json_t *r;

		json_array_foreach(reserved, k, r) found =
		    found || strcmp(pk_get_string(r, "name") ?: "", json_string_value(x)) == 0;
		if (!found)
			FAILF(run, "claim %s: not reserved for %s", name, json_string_value(x));
	}
	check_shares(run, name, want, results);
	if (of) {
		json_t *pod = object_named(run, PK_KIND_POD, of);
		const char *node = pod ? pk_get_string(pod, "spec.nodeName") : NULL;

		if (!node)
			FAILF(run, "claim %s: pod %s is not bound", name, of);
		json_array_foreach(results, i, x) if (node && !device_for_node(run, x, node))
		    FAILF(run, "claim %s: device %s is not on node %s", name,
			  pk_get_string(x, "device"), node);
	}
}

static void check_claims(struct run *run)
{
	const char *name;
	json_t *want;

	json_object_foreach(json_object_get(run->expect, "claims"), name, want)
	    check_one_claim(run, name, want);
}

/* One run of the objects with one expectation under one strategy. */
static int run_expect(const char *path, json_t *objects, json_t *expect, const char *strategy)
{
	struct run run = {.file = path, .expect = expect};
	struct pk_errors errs = {0};
	size_t tlen = 0;
	FILE *trace = open_memstream(&run.trace, &tlen);
	struct pk_sched_opts opts = {
	    .check = true, .explain = trace, .strategy = strategy, .controllers = pk_claims_pass};
	int r;

	opts.gated_gangs_wait = json_is_true(json_object_get(expect, "gatedGangsWait"));

	r = pk_sched_run(objects, &opts, &run.out, &run.preempted, &errs);
	fclose(trace);
	if (r < 0) {
		pk_errors_print(&errs, stderr, path);
		FAILF(&run, "pk_sched_run (strategy %s) failed: %d",
		      strategy ? strategy : "default", r);
	} else {
		check_list(&run, "bound", (void *)1);
		check_list(&run, "pending", NULL);
		check_bindings(&run);
		check_domains(&run);
		check_distinct(&run);
		check_conditions(&run);
		check_preempted(&run);
		check_explain(&run);
		check_annotations(&run);
		check_claims(&run);
		check_slices(&run);
		check_volume_claims(&run);
	}
	if (run.failures)
		fprintf(stderr, "%s: the failures above are under strategy %s\n", path,
			strategy ? strategy : "(default)");
	if ((run.failures || getenv("SCENARIO_ALWAYS")) && getenv("SCENARIO_TRACE"))
		fprintf(stderr, "--- trace of %s (%s)\n%s", path, strategy ? strategy : "default",
			run.trace ? run.trace : "");
	if (run.failures && getenv("SCENARIO_OUT")) {
		char *s = pk_write_string(run.out, PK_FORMAT_YAML);

		fprintf(stderr, "--- output of %s\n%s", path, s ? s : "");
		free(s);
	}
	pk_errors_clear(&errs);
	json_decref(run.out);
	json_decref(run.preempted);
	free(run.trace);
	return run.failures;
}

/*
 * Every kind: Expect document is one run; its optional strategy field names
 * the strategy (else default_strategy: "kep" for the KEP scenarios at the
 * top, the default strategy for placement/).
 */
static int run_scenario(const char *path, const char *default_strategy)
{
	char err[1024];
	json_t *docs = NULL, *objects = json_array(), *expects = json_array(), *o;
	size_t i;
	int failures = 0;

	ck_assert_msg(pk_read_file(path, &docs, err, sizeof(err)) == 0, "%s", err);
	json_array_foreach(docs, i, o)
	{
		const char *kind = json_string_value(json_object_get(o, "kind")) ?: "";

		if (strcmp(kind, "Nodes") == 0)
			gen_nodes(o, objects);
		else if (strcmp(kind, "Pods") == 0)
			gen_pods(o, objects);
		else if (strcmp(kind, "Expect") == 0)
			json_array_append(expects, o);
		else
			json_array_append(objects, o);
	}
	ck_assert_msg(json_array_size(expects) > 0, "%s: no kind: Expect document", path);
	json_array_foreach(objects, i, o)
	{
		struct pk_errors verrs = {0};
		const char *kind = json_string_value(json_object_get(o, "kind"));

		/* a Namespace is kept for its labels, as podctl schedule keeps it */
		if (!(kind && strcmp(kind, "Namespace") == 0) && pk_validate(o, &verrs) < 0) {
			pk_errors_print(&verrs, stderr, path);
			failures++;
		}
		pk_errors_clear(&verrs);
	}
	json_array_foreach(expects, i, o)
	{
		const char *st = json_string_value(json_object_get(o, "strategy"));

		failures += run_expect(path, objects, o, st ? st : default_strategy);
	}
	json_decref(expects);
	json_decref(objects);
	json_decref(docs);
	return failures;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every *.yaml of dir (sorted); returns the number of files run. */
static size_t run_dir(const char *dir, const char *default_strategy, int *failures)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[512];
	size_t n = 0;
	const char *only = getenv("SCENARIO");

	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((e = readdir(d)) && n < 512) {
		size_t len = strlen(e->d_name);

		if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0)
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!only || strstr(names[i], only)) {
			int f = run_scenario(path, default_strategy);

			fprintf(stderr, "%-50s %s\n", names[i], f ? "FAIL" : "ok");
			*failures += f;
		}
		free(names[i]);
	}
	return n;
}

START_TEST(test_all_scenarios)
{
	int failures = 0;
	/* SCENARIO_STRATEGY=fit shows how another strategy does on them. */
	const char *st = getenv("SCENARIO_STRATEGY");
	size_t n = run_dir(SCENARIO_DIR, st ? st : "kep", &failures);

	ck_assert_msg(getenv("SCENARIO") || n >= 10, "only %zu scenarios found", n);
	ck_assert_int_eq(failures, 0);
}
END_TEST

START_TEST(test_placement_scenarios)
{
	int failures = 0;
	size_t n = run_dir(SCENARIO_DIR "/placement", NULL, &failures);

	ck_assert_msg(getenv("SCENARIO") || n >= 4, "only %zu placement scenarios found", n);
	ck_assert_int_eq(failures, 0);
}
END_TEST

START_TEST(test_slice_scenarios)
{
	int failures = 0;
	size_t n = run_dir(SCENARIO_DIR "/slices", NULL, &failures);

	ck_assert_msg(getenv("SCENARIO") || n >= 4, "only %zu slice scenarios found", n);
	ck_assert_int_eq(failures, 0);
}
END_TEST

/*
 * upstream/: edge cases of kube-scheduler's plugin tests, each file naming
 * the test it mirrors; every expectation holds under both strategies.
 */
START_TEST(test_upstream_scenarios)
{
	static const char *const strategies[] = {"kep", "fit"};
	int failures = 0;

	for (size_t i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++) {
		size_t n = run_dir(SCENARIO_DIR "/upstream", strategies[i], &failures);

		ck_assert_msg(getenv("SCENARIO") || n >= 8, "only %zu upstream scenarios found", n);
	}
	ck_assert_int_eq(failures, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scenarios");
	TCase *tc = tcase_create("scenarios");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_all_scenarios);
	tcase_add_test(tc, test_placement_scenarios);
	tcase_add_test(tc, test_slice_scenarios);
	tcase_add_test(tc, test_upstream_scenarios);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
