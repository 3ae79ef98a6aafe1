/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_describe.c — `podctl describe`: what a person asks first about an
 * object.  For a group: its children, where its pods landed per topology
 * level and why it is pending; for a node: its domains and what runs there;
 * for a pod: its placement, claims and the scheduler's conditions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/kube/kube.h"
#include "kernel/podctl/podctl-client.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

/* ---- describe
 * ------------------------------------------------------------------------------------ */

static void print_conditions(const json_t *obj)
{
	json_t *conds = pk_get(obj, "status.conditions"), *c;
	size_t i;

	printf("Conditions:\n");
	if (json_array_size(conds) == 0) {
		printf("  <none>\n");
		return;
	}
	json_array_foreach(conds, i, c)
	    printf("  %-38s %-6s %-24s %s\n", json_string_value(json_object_get(c, "type")) ?: "",
		   json_string_value(json_object_get(c, "status")) ?: "",
		   json_string_value(json_object_get(c, "reason")) ?: "",
		   json_string_value(json_object_get(c, "message")) ?: "");
}

static void print_map(const char *title, const json_t *m)
{
	const char *k;
	json_t *v;
	bool first = true;

	printf("%-14s", title);
	json_object_foreach((json_t *)m, k, v)
	{
		char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		printf("%s%s=%s\n", first ? "" : "              ", k, s ? s : json_string_value(v));
		free(s);
		first = false;
	}
	if (first)
		printf("<none>\n");
}

/* Names of every group in the subtree of root (root included), from lists of groups. */
static void subtree(const json_t *groups, const char *root, json_t *ret_set)
{
	size_t i;
	json_t *g;

	json_object_set_new(ret_set, root, json_true());
	json_array_foreach(groups, i, g)
	{
		const char *p = pk_get_string(g, "spec.parentCompositePodGroupName");

		if (p && strcmp(p, root) == 0 && !json_object_get(ret_set, pk_name(g)))
			subtree(groups, pk_name(g), ret_set);
	}
}

static void print_placement(const json_t *pods, const struct ctx *x)
{
	size_t i, j, bound = 0, pending = 0;
	json_t *p, *k;

	json_array_foreach(pods, i, p)
	{
		if (pk_get_string(p, "spec.nodeName"))
			bound++;
		else
			pending++;
	}
	printf("Pods:          %zu bound, %zu pending\n", bound, pending);
	if (!bound)
		return;
	printf("Placement per topology level:\n");
	json_array_foreach(x->levels, j, k)
	{
		json_t *count = json_object();
		const char *key = json_string_value(k), *dom;
		json_t *c;

		json_array_foreach(pods, i, p)
		{
			const char *node = pk_get_string(p, "spec.nodeName");
			json_t *n = node ? json_object_get(x->nodes, node) : NULL;
			const char *v = cl_node_label(n, key);

			if (!node)
				continue;
			v = v ? v : "-";
			json_object_set_new(
			    count, v,
			    json_integer(json_integer_value(json_object_get(count, v)) + 1));
		}
		printf("  %-12s", cl_level_name(key));
		json_object_foreach(count, dom, c)
		    printf(" %s(%lld)", dom, (long long)json_integer_value(c));
		printf("\n");
		json_decref(count);
	}
}

/*
 * Why the group's pods wait, one line per distinct reason with how many pods
 * give it and the first names: a 300-pod gang that waits for one reason is
 * one line, not 300.  At most 8 reasons are shown.
 */
static void print_pending_reasons(const json_t *pods)
{
	json_t *by_reason = json_object(), *p, *names; /* message -> [names] */
	const char *m;
	size_t i, total = 0, shown = 0;

	if (!by_reason)
		return;
	json_array_foreach(pods, i, p)
	{
		if (pk_get_string(p, "spec.nodeName"))
			continue;
		json_t *c = pk_condition_get(p, "PodScheduled");
		m = c ? json_string_value(json_object_get(c, "message")) : NULL;
		m = m ? m : "not yet attempted";
		names = json_object_get(by_reason, m);
		if (!names) {
			names = json_array();
			json_object_set_new(by_reason, m, names);
		}
		json_array_append_new(names, json_string(pk_name(p)));
		total++;
	}
	if (total)
		printf("Pending pods: %zu\n", total);
	json_object_foreach(by_reason, m, names)
	{
		size_t n = json_array_size(names);
		if (shown++ == 8) {
			printf("  ... and %zu more reasons\n", json_object_size(by_reason) - 8);
			break;
		}
		printf("  ");
		for (size_t k = 0; k < n && k < 3; k++)
			printf("%s%s", k ? ", " : "", json_string_value(json_array_get(names, k)));
		if (n > 3)
			printf(" and %zu more", n - 3);
		printf(" (%zu pod%s): %s\n", n, n == 1 ? "" : "s", m);
	}
	json_decref(by_reason);
}

static int describe_group(struct ctx *x, const json_t *g)
{
	json_t *pgs = NULL, *cpgs = NULL, *pods = NULL, *all, *set = json_object(), *mine;
	const char *ns = pk_namespace(g);
	char pol[64];
	size_t i;
	json_t *o;
	int r;

	if ((r = cl_list_items(x->h, "PodGroup", ns, &pgs)) ||
	    (r = cl_list_items(x->h, "CompositePodGroup", ns, &cpgs)) ||
	    (r = cl_list_items(x->h, "Pod", ns, &pods)))
		goto out;
	all = json_array();
	json_array_extend(all, pgs);
	json_array_extend(all, cpgs);
	subtree(all, pk_name(g), set);
	podctl_policy_text(g, pol, sizeof(pol));
	printf("Policy:        %s\n", pol);
	printf("Topology:      %s\n", cl_group_topology(g) ?: "<none>");
	printf("Disruption:    %s\n", pk_get(g, "spec.disruptionMode.all") ? "all" : "single");
	printf("Parent:        %s\n",
	       pk_get_string(g, "spec.parentCompositePodGroupName") ?: "<none>");
	printf("Workload:      %s (template %s)\n",
	       pk_get_string(g, "spec.workloadRef.workloadName") ?: "<none>",
	       pk_get_string(g, "spec.workloadRef.templateName") ?: "-");
	printf("Children:     ");
	size_t nchild = 0;

	json_array_foreach(all, i, o)
	{
		const char *p = pk_get_string(o, "spec.parentCompositePodGroupName");

		if (p && strcmp(p, pk_name(g)) == 0) {
			char cp[64];

			podctl_policy_text(o, cp, sizeof(cp));
			printf(" %s[%s]", pk_name(o), cp);
			nchild++;
		}
	}
	printf("%s\n", nchild ? "" : " <none>");
	mine = json_array();
	json_array_foreach(pods, i, o)
	{
		const char *pg = pk_pod_group_name(o);

		if (pg && json_object_get(set, pg))
			json_array_append(mine, o);
	}
	print_placement(mine, x);
	print_pending_reasons(mine);
	print_conditions(g);
	json_decref(mine);
	json_decref(all);
out:
	json_decref(set);
	json_decref(pgs);
	json_decref(cpgs);
	json_decref(pods);
	return r;
}

static int describe_node(struct ctx *x, const json_t *n)
{
	json_t *pods = NULL, *p;
	size_t i;
	const char *k;
	json_t *v;
	int r = cl_list_items(x->h, "Pod", NULL, &pods);

	if (r)
		return r;
	print_map("Labels:", pk_get(n, "metadata.labels") ?: json_object());
	printf("Taints:       ");
	json_array_foreach(pk_get(n, "spec.taints"), i, v)
	    printf(" %s:%s", json_string_value(json_object_get(v, "key")) ?: "",
		   json_string_value(json_object_get(v, "effect")) ?: "");
	printf("%s\n", json_array_size(pk_get(n, "spec.taints")) ? "" : " <none>");
	printf("Allocated resources (requests of bound pods / allocatable):\n");
	json_object_foreach(pk_get(n, "status.allocatable"), k, v)
	{
		int64_t used = 0, total = podctl_quantity_milli(json_string_value(v));
		char a[32], b[32];

		json_array_foreach(pods, i, p)
		{
			const char *node = pk_get_string(p, "spec.nodeName");

			if (node && strcmp(node, pk_name(n)) == 0)
				used += strcmp(k, "pods") == 0 ? 1000 : podctl_pod_request(p, k);
		}
		podctl_fmt_qty(used, k, a, sizeof(a));
		podctl_fmt_qty(total, k, b, sizeof(b));
		printf("  %-20s %s / %s\n", k, a, b);
	}
	printf("Pods:\n");
	json_array_foreach(pods, i, p)
	{
		const char *node = pk_get_string(p, "spec.nodeName");

		if (node && strcmp(node, pk_name(n)) == 0)
			printf("  %s/%s (group %s)\n", pk_namespace(p), pk_name(p),
			       pk_pod_group_name(p) ?: "-");
	}
	print_conditions(n);
	json_decref(pods);
	return 0;
}

/* The claim of claim pc of p (a Pod or a PodGroup): its resourceClaimName, or p's status's. */
static const char *pod_claim_name(const json_t *p, const json_t *pc)
{
	const char *name = pk_get_string(pc, "name") ?: "";
	json_t *x;
	size_t i;

	if (pk_get_string(pc, "resourceClaimName"))
		return pk_get_string(pc, "resourceClaimName");
	json_array_foreach(pk_get(p, "status.resourceClaimStatuses"), i,
			   x) if (strcmp(pk_get_string(x, "name") ?: "", name) ==
				  0) return pk_get_string(x, "resourceClaimName");
	return NULL;
}

/* GET path into *ret (200 only). */
static int get_object(struct ctx *x, const char *fmt, const char *ns, const char *name,
		      json_t **ret)
{
	char *path = NULL;
	long st = 0;
	int r;

	*ret = NULL;
	if (asprintf(&path, fmt, ns, name) < 0)
		return -ENOMEM;
	r = cl_http_do(x->h, "GET", path, NULL, NULL, &st, ret);
	free(path);
	if (r < 0 || st != 200) {
		json_decref(*ret);
		*ret = NULL;
		return r < 0 ? r : -ENOENT;
	}
	return 0;
}

/* The claims of p's spec.resourceClaims (what says whose: "" or " (PodGroup)"). */
/*
 * One allocated device: request, driver/pool/device and, for a share of a
 * device with consumable capacity, what it consumed and its shareID.
 */
static void print_result(const json_t *r)
{
	json_t *cons = json_object_get(r, "consumedCapacity"), *q;
	const char *name;

	printf("    %-18s %s/%s/%s", pk_get_string(r, "request") ?: "",
	       pk_get_string(r, "driver") ?: "", pk_get_string(r, "pool") ?: "",
	       pk_get_string(r, "device") ?: "");
	json_object_foreach(cons, name, q) printf(" %s=%s", name, json_string_value(q) ?: "?");
	if (pk_get_string(r, "shareID"))
		printf(" (share %s)", pk_get_string(r, "shareID"));
	printf("\n");
}

static void print_claim_list(struct ctx *x, const json_t *p, const char *what, bool *header)
{
	json_t *pc;
	size_t i;

	json_array_foreach(pk_get(p, "spec.resourceClaims"), i, pc)
	{
		const char *cn = pod_claim_name(p, pc);
		json_t *c = NULL, *res, *r;
		char label[300];
		size_t k;

		if (!*header)
			printf("Claims:\n");
		*header = true;
		snprintf(label, sizeof(label), "%s%s", pk_get_string(pc, "name") ?: "", what);
		printf("  %-20s ", label);
		if (!cn) {
			printf("%s (not created yet)\n",
			       pk_get_string(pc, "resourceClaimTemplateName") ?: "-");
			continue;
		}
		if (get_object(x, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s",
			       pk_namespace(p), cn, &c) < 0) {
			printf("%s (not found)\n", cn);
			continue;
		}
		res = pk_get(c, "status.allocation.devices.results");
		printf("%s%s\n", cn, json_array_size(res) ? "" : " (not allocated)");
		json_array_foreach(res, k, r) print_result(r);
		json_decref(c);
	}
}

/*
 * Resource claims: each pod claim and each claim of the pod's PodGroup (which
 * its pods share), its ResourceClaim and the devices allocated.
 */
static void print_claims(struct ctx *x, const json_t *p)
{
	const char *g = pk_pod_group_name(p);
	json_t *group = NULL;
	bool header = false;

	print_claim_list(x, p, "", &header);
	if (g && get_object(x, "/apis/scheduling.k8s.io/v1alpha3/namespaces/%s/podgroups/%s",
			    pk_namespace(p), g, &group) == 0)
		print_claim_list(x, group, " (PodGroup)", &header);
	json_decref(group);
}

static int describe_pod(struct ctx *x, const json_t *p)
{
	const char *node = pk_get_string(p, "spec.nodeName");
	json_t *n = node ? json_object_get(x->nodes, node) : NULL, *k;
	size_t i;

	printf("Node:          %s\n", node ?: "<none>");
	printf("Status:        %s\n", pk_get_string(p, "status.phase") ?: "<none>");
	printf("QoS Class:     %s\n", pk_get_string(p, "status.qosClass") ?: "<none>");
	printf("Group:         %s\n", pk_pod_group_name(p) ?: "<none>");
	printf("Priority:      %lld\n", (long long)json_integer_value(pk_get(p, "spec.priority")));
	if (n) {
		printf("Topology:     ");
		json_array_foreach(x->levels, i, k)
		{
			const char *v = cl_node_label(n, json_string_value(k));

			printf(" %s=%s", cl_level_name(json_string_value(k)), v ?: "-");
		}
		printf("\n");
	}
	print_claims(x, p);
	print_conditions(p);
	return 0;
}

int cl_cmd_describe(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	struct ctx x = {.h = h, .o = &o};
	int r = cl_parse_opts(h, argc, argv, &o);
	const struct pk_type *ty;
	json_t *obj = NULL;

	if (r)
		return r;
	if (o.nargs != 2)
		return cl_usage_error("usage: podctl describe KIND NAME [-n NS]");
	ty = podctl_resolve_kind(o.args[0]);
	if (!ty)
		return cl_usage_error("describe: unknown kind '%s'", o.args[0]);
	char *path = podctl_type_path(ty, o.ns, o.args[1], NULL);

	r = path ? cl_get_json(h, path, o.args[1], &obj) : PODCTL_EXIT_FAILURE;
	free(path);
	if (r == 0)
		r = cl_load_nodes(&x);
	if (r)
		goto out;
	printf("Name:          %s\n", pk_name(obj));
	if (ty->namespaced)
		printf("Namespace:     %s\n", pk_namespace(obj));
	printf("Kind:          %s\n", ty->kind);
	printf("Created:       %s\n", pk_get_string(obj, "metadata.creationTimestamp") ?: "-");
	switch (ty->pk) {
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		r = describe_group(&x, obj);
		break;
	case PK_KIND_NODE:
		r = describe_node(&x, obj);
		break;
	case PK_KIND_POD:
		r = describe_pod(&x, obj);
		break;
	default: {
		char *s = pk_write_string(pk_get(obj, "spec") ?: json_object(), PK_FORMAT_YAML);

		printf("Spec:\n%s", s ? s : "");
		free(s);
		print_conditions(obj);
	}
	}
out:
	json_decref(obj);
	json_decref(x.nodes);
	json_decref(x.levels);
	return r;
}
