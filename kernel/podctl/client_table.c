/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_table.c — what podctl's client verbs print: the helpers over
 * objects (conditions, phases, topology levels and their keys, a list's
 * items by name) and the tables per kind (pods, nodes, groups, and a
 * generic one for the other kinds), padded to their widest cell as
 * kubectl's are.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl-client.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

/* ---- helpers over objects ---------------------------------------------------------------- */

static const char *cond_status(const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);

	return c ? json_string_value(json_object_get(c, "status")) : NULL;
}

static const char *cond_reason(const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);

	return c ? json_string_value(json_object_get(c, "reason")) : NULL;
}

const char *cl_group_topology(const json_t *g)
{
	json_t *t = json_array_get(pk_get(g, "spec.schedulingConstraints.topology"), 0);
	const char *k = json_string_value(json_object_get(t, "key"));

	return k ? k : json_string_value(json_object_get(t, "level"));
}

static const char *pod_phase(const json_t *pod)
{
	if (pk_get(pod, "metadata.deletionTimestamp"))
		return "Terminating";
	if (pk_get_string(pod, "spec.nodeName"))
		return "Bound";
	if (cond_status(pod, "PodScheduled") &&
	    strcmp(cond_status(pod, "PodScheduled"), "False") == 0)
		return "Pending";
	return "Pending";
}

static bool node_unreachable(const json_t *node)
{
	json_t *taints = pk_get(node, "spec.taints"), *t;
	size_t i;

	json_array_foreach(taints, i, t)
	{
		const char *k = json_string_value(json_object_get(t, "key"));

		if (k && strcmp(k, "node.kubernetes.io/unreachable") == 0)
			return true;
	}
	return false;
}

/* Topology level keys present on nodes: outermost (fewest domains) first, host last. */
json_t *cl_level_keys(const json_t *nodes)
{
	json_t *seen = json_object(), *keys = json_array(), *n, *labels, *v;
	const char *k;
	size_t i;

	json_array_foreach(nodes, i, n)
	{
		labels = pk_get(n, "metadata.labels");
		json_object_foreach(labels, k, v)
		{
			if (!topo_label_is_level(k) || !json_is_string(v))
				continue;
			json_t *vals = json_object_get(seen, k);

			if (!vals) {
				vals = json_object();
				json_object_set_new(seen, k, vals);
			}
			json_object_set_new(vals, json_string_value(v), json_true());
		}
	}
	/* selection sort by domain count */
	while (json_object_size(seen) > 0) {
		const char *best = NULL;
		size_t bestn = 0;

		json_object_foreach(seen, k, v) if (!best || json_object_size(v) < bestn)
		{
			best = k;
			bestn = json_object_size(v);
		}
		json_array_append_new(keys, json_string(best));
		json_object_del(seen, best);
	}
	json_decref(seen);
	return keys;
}

const char *cl_level_name(const char *key)
{
	if (strcmp(key, TOPO_LABEL_HOSTNAME) == 0)
		return "host";
	return strncmp(key, TOPO_LABEL_LEVEL_PREFIX, strlen(TOPO_LABEL_LEVEL_PREFIX)) == 0
		   ? key + strlen(TOPO_LABEL_LEVEL_PREFIX)
		   : key;
}

json_t *cl_index_by_name(const json_t *items)
{
	json_t *m = json_object(), *o;
	size_t i;

	json_array_foreach(items, i, o) if (pk_name(o)) json_object_set(m, pk_name(o), o);
	return m;
}

int cl_list_items(struct http *h, const char *kind, const char *ns, json_t **ret)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	char *path = podctl_type_path(t, ns, NULL, NULL);
	json_t *body = NULL;
	char what[128];
	int r;

	snprintf(what, sizeof(what), "list %s", t->plural);
	r = path ? cl_get_json(h, path, what, &body) : PODCTL_EXIT_FAILURE;
	free(path);
	if (r)
		return r;
	*ret = json_incref(json_object_get(body, "items"));
	json_decref(body);
	if (!*ret)
		*ret = json_array();
	return 0;
}

/* ---- tables -------------------------------------------------------------------------------- */

static void table_row(struct table *t, const char *first, ...)
{
	json_t *row = json_array();
	va_list ap;
	const char *s = first;

	va_start(ap, first);
	for (size_t i = 0; i < t->ncols; i++) {
		json_array_append_new(row, json_string(s ? s : "<none>"));
		s = va_arg(ap, const char *);
	}
	va_end(ap);
	json_array_append_new(t->rows, row);
}

/* Columns padded by 3 spaces (kubectl's tab writer), each at least minw wide. */
void cl_table_print_min(struct table *t, bool header, size_t minw)
{
	size_t w[16] = {0}, i, c;
	json_t *row;

	json_array_foreach(t->rows, i, row) for (c = 0; c < t->ncols && c < 16; c++)
	{
		size_t n = strlen(json_string_value(json_array_get(row, c)));

		if (n > w[c])
			w[c] = n;
	}
	json_array_foreach(t->rows, i, row)
	{
		if (i == 0 && !header)
			continue;
		for (c = 0; c < t->ncols && c < 16; c++)
			printf(c + 1 < t->ncols ? "%-*s   " : "%-*s",
			       c + 1 < t->ncols ? (int)(w[c] + 3 < minw ? minw - 3 : w[c]) : 0,
			       json_string_value(json_array_get(row, c)));
		printf("\n");
	}
}

void cl_table_print(struct table *t, bool header)
{
	cl_table_print_min(t, header, 0);
}

/* A node's label; for the host level a node without it is its own domain. */
const char *cl_node_label(const json_t *node, const char *key)
{
	const char *v;

	if (!node)
		return NULL;
	v = json_string_value(json_object_get(pk_get(node, "metadata.labels"), key));
	return v || strcmp(key, TOPO_LABEL_HOSTNAME) != 0 ? v : pk_name(node);
}

static void pod_row(struct ctx *x, struct table *t, const json_t *p)
{
	const char *node = pk_get_string(p, "spec.nodeName");
	const json_t *n = node && x->nodes ? json_object_get(x->nodes, node) : NULL;
	char a[32], where[256] = "";

	podctl_age(p, time(NULL), a, sizeof(a));
	if (x->o->output && strcmp(x->o->output, "wide") == 0) {
		size_t i;
		json_t *k;

		json_array_foreach(x->levels, i, k)
		{
			const char *v = cl_node_label(n, json_string_value(k));
			size_t len = strlen(where);

			snprintf(where + len, sizeof(where) - len, "%s%s", len ? "/" : "",
				 v ? v : "-");
		}
		table_row(t, pk_namespace(p), pk_name(p), pod_phase(p), node ? node : "<none>",
			  pk_pod_group_name(p), *where ? where : "-", a);
	} else {
		table_row(t, pk_namespace(p), pk_name(p), pod_phase(p), node ? node : "<none>",
			  pk_pod_group_name(p), a);
	}
}

static void node_row(struct ctx *x, struct table *t, const json_t *n)
{
	const char *ready = cond_status(n, "Ready");
	const char *status = node_unreachable(n)		    ? "Unreachable"
			     : ready && strcmp(ready, "False") == 0 ? "NotReady"
								    : "Ready";
	char where[256] = "", a[32], alloc[256] = "";
	size_t i;
	json_t *k;

	json_array_foreach(x->levels, i, k)
	{
		const char *v = cl_node_label(n, json_string_value(k));
		size_t len = strlen(where);

		snprintf(where + len, sizeof(where) - len, "%s%s", len ? "/" : "", v ? v : "-");
	}
	if (pk_get_string(n, "spec.unschedulable") || json_is_true(pk_get(n, "spec.unschedulable")))
		status = "SchedulingDisabled";
	podctl_age(n, time(NULL), a, sizeof(a));
	json_t *ann = pk_get(n, "metadata.annotations");
	const char *kind = json_object_get(ann, PK_ANN_SIMULATED)	? "simulated"
			   : json_object_get(ann, TOPO_ANN_AGENT_OWNED) ? "podagent"
									: "static";
	if (x->o->output && strcmp(x->o->output, "wide") == 0) {
		const char *key;
		json_t *v;

		json_object_foreach(pk_get(n, "status.allocatable"), key, v)
		{
			size_t len = strlen(alloc);

			snprintf(alloc + len, sizeof(alloc) - len, "%s%s=%s", len ? "," : "", key,
				 json_string_value(v) ? json_string_value(v) : "?");
		}
		table_row(t, "", pk_name(n), status, *where ? where : "-", kind, alloc, a);
	} else {
		table_row(t, "", pk_name(n), status, *where ? where : "-", kind, a);
	}
}

static void group_row(struct ctx *x, struct table *t, const json_t *g)
{
	const char *ctype =
	    strcmp(json_string_value(json_object_get(g, "kind")) ?: "", "CompositePodGroup") == 0
		? "CompositePodGroupInitiallyScheduled"
		: "PodGroupInitiallyScheduled";
	const char *st = cond_status(g, ctype), *reason = cond_reason(g, ctype);
	char pol[64], sched[96], a[32];

	(void)x;
	podctl_policy_text(g, pol, sizeof(pol));
	snprintf(sched, sizeof(sched), "%s%s%s%s", st ? st : "-", reason ? " (" : "",
		 reason ? reason : "", reason ? ")" : "");
	podctl_age(g, time(NULL), a, sizeof(a));
	table_row(t, pk_namespace(g), pk_name(g), pol, cl_group_topology(g) ?: "-",
		  pk_get_string(g, "spec.parentCompositePodGroupName") ?: "-", sched, a);
}

static void other_row(struct ctx *x, struct table *t, const json_t *o)
{
	char a[32], extra[128] = "-";
	const char *kind = json_string_value(json_object_get(o, "kind")) ?: "";

	(void)x;
	podctl_age(o, time(NULL), a, sizeof(a));
	const struct pk_type *ty = pk_type_by_kind(kind);
	enum pk_kind k = ty ? ty->pk : PK_KIND_UNKNOWN;

	if (k == PK_KIND_PRIORITY_CLASS)
		snprintf(extra, sizeof(extra), "value=%lld%s",
			 (long long)json_integer_value(json_object_get(o, "value")),
			 json_is_true(json_object_get(o, "globalDefault")) ? " globalDefault" : "");
	else if (k == PK_KIND_JOB)
		snprintf(extra, sizeof(extra), "parallelism=%lld",
			 json_is_integer(pk_get(o, "spec.parallelism"))
			     ? (long long)json_integer_value(pk_get(o, "spec.parallelism"))
			     : 1LL);
	else if (k == PK_KIND_JOBSET)
		snprintf(extra, sizeof(extra), "replicatedJobs=%zu",
			 json_array_size(pk_get(o, "spec.replicatedJobs")));
	else if (k == PK_KIND_LEADER_WORKER_SET)
		snprintf(
		    extra, sizeof(extra), "replicas=%lld size=%lld",
		    json_is_integer(pk_get(o, "spec.replicas"))
			? (long long)json_integer_value(pk_get(o, "spec.replicas"))
			: 1LL,
		    json_is_integer(pk_get(o, "spec.leaderWorkerTemplate.size"))
			? (long long)json_integer_value(pk_get(o, "spec.leaderWorkerTemplate.size"))
			: 1LL);
	else if (k == PK_KIND_WORKLOAD)
		snprintf(extra, sizeof(extra), "templates=%zu",
			 json_array_size(pk_get(o, "spec.compositePodGroupTemplates")) +
			     json_array_size(pk_get(o, "spec.podGroupTemplates")));
	table_row(t, pk_namespace(o), pk_name(o), extra, a);
}

row_fn cl_table_for(const struct pk_type *ty, struct ctx *x, struct table *t)
{
	bool wide = x->o->output && strcmp(x->o->output, "wide") == 0;

	t->rows = json_array();
	switch (ty->pk) {
	case PK_KIND_POD:
		t->ncols = wide ? 7 : 6;
		if (wide) {
			char lv[256] = "";
			size_t i;
			json_t *k;

			json_array_foreach(x->levels, i, k)
			{
				size_t len = strlen(lv);

				snprintf(lv + len, sizeof(lv) - len, "%s%s", len ? "/" : "",
					 cl_level_name(json_string_value(k)));
			}
			char *hdr = *lv ? strdup(lv) : strdup("TOPOLOGY");

			for (char *c = hdr; c && *c; c++)
				*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
			table_row(t, "NAMESPACE", "NAME", "STATUS", "NODE", "GROUP", hdr ?: "",
				  "AGE");
			free(hdr);
		} else {
			table_row(t, "NAMESPACE", "NAME", "STATUS", "NODE", "GROUP", "AGE");
		}
		return pod_row;
	case PK_KIND_NODE:
		t->ncols = wide ? 7 : 6;
		if (wide)
			table_row(t, "", "NAME", "STATUS", "TOPOLOGY", "SOURCE", "ALLOCATABLE",
				  "AGE");
		else
			table_row(t, "", "NAME", "STATUS", "TOPOLOGY", "SOURCE", "AGE");
		return node_row;
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		t->ncols = 7;
		table_row(t, "NAMESPACE", "NAME", "POLICY", "TOPOLOGY", "PARENT", "SCHEDULED",
			  "AGE");
		return group_row;
	default:
		t->ncols = 4;
		table_row(t, "NAMESPACE", "NAME", "INFO", "AGE");
		return other_row;
	}
}

/* Drop the NAMESPACE column unless -A (and always for cluster-scoped kinds). */
void cl_table_trim(struct table *t, bool keep_ns)
{
	size_t i;
	json_t *row;

	if (keep_ns)
		return;
	json_array_foreach(t->rows, i, row) json_array_remove(row, 0);
	t->ncols--;
}
