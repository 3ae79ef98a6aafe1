/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission.c — NodeRestriction for a node's writes to its own Node.
 *
 * Authorisation (auth.c) already limits a node identity (system:node:NAME in
 * system:nodes) to its own Node.  This is the second half of kube-apiserver's
 * NodeRestriction admission plugin, the rules on what that write may change:
 *   - on create, no spec.configSource and no label outside the kubelet's set: nothing under
 *     node-restriction.kubernetes.io/, and no kubernetes.io or k8s.io label
 *     (those domains and their subdomains) other than the well-known kubelet
 *     labels and the kubelet.kubernetes.io / node.kubernetes.io namespaces;
 *     taints given at registration are allowed;
 *   - on update, the same for every label added, changed or removed, and no
 *     change at all to spec.taints, metadata.ownerReferences or (to a new
 *     value) spec.configSource;
 *   - beyond upstream: no change to spec.unschedulable.  Here the scheduler
 *     reads the cordon straight from that field (no controller turns it into a
 *     taint the node could not touch), so a node clearing it would steer work
 *     to itself exactly as removing a taint would.
 * The refusal names the node and the offending field or labels (HTTP 403).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/server/server-internal.h"

static const char *const kubelet_labels[] = {
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
};
static const char *const kubelet_namespaces[] = {"kubelet.kubernetes.io", "node.kubernetes.io"};

/* Is the label's prefix (before '/') domain or a subdomain of it? */
static bool in_domain(const char *key, const char *domain)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return false;
	size_t n = (size_t)(slash - key), d = strlen(domain);
	if (n == d)
		return memcmp(key, domain, d) == 0;
	return n > d && key[n - d - 1] == '.' && memcmp(key + n - d, domain, d) == 0;
}

static bool forbidden_label(const char *key)
{
	if (in_domain(key, "node-restriction.kubernetes.io"))
		return true;
	if (!in_domain(key, "kubernetes.io") && !in_domain(key, "k8s.io"))
		return false;
	for (size_t i = 0; i < sizeof(kubelet_labels) / sizeof(kubelet_labels[0]); i++)
		if (strcmp(key, kubelet_labels[i]) == 0)
			return false;
	for (size_t i = 0; i < sizeof(kubelet_namespaces) / sizeof(kubelet_namespaces[0]); i++)
		if (in_domain(key, kubelet_namespaces[i]))
			return false;
	return true;
}

static json_t *labels_of(const json_t *obj)
{
	return json_object_get(json_object_get(obj, "metadata"), "labels");
}

/* Labels that differ between a and b (either may be NULL) and may not be touched. */
static void forbidden_changes(const json_t *a, const json_t *b, char *out, size_t outlen)
{
	const char *k;
	json_t *v;
	out[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		const json_t *x = pass ? b : a, *y = pass ? a : b;
		json_object_foreach((json_t *)x, k, v)
		{
			json_t *w = json_object_get(y, k);
			if ((w && json_equal(v, w)) || !forbidden_label(k) || (pass && w))
				continue;
			size_t len = strlen(out);
			snprintf(out + len, outlen - len, "%s%s", len ? ", " : "", k);
		}
	}
}

static bool field_changed(const json_t *next, const json_t *old, const char *top, const char *field)
{
	json_t *a = json_object_get(json_object_get(next, top), field);
	json_t *b = json_object_get(json_object_get(old, top), field);
	if (!a || !b)
		return a != b && !(json_is_array(a ? a : b) && json_array_size(a ? a : b) == 0) &&
		       !json_is_null(a ? a : b) && !json_is_false(a ? a : b);
	return !json_equal(a, b);
}

bool pk_srv_admission_node_name(const struct pk_identity *who, const char **ret_name)
{
	static const char prefix[] = "system:node:";
	for (size_t i = 0; who && i < who->ngroups; i++)
		if (strcmp(who->groups[i], "system:masters") == 0)
			return false;
	for (size_t i = 0; who && i < who->ngroups; i++)
		if (strcmp(who->groups[i], "system:nodes") == 0 &&
		    strncmp(who->user, prefix, sizeof(prefix) - 1) == 0) {
			*ret_name = who->user + sizeof(prefix) - 1;
			return true;
		}
	return false;
}

bool pk_srv_admission_node_lease_elsewhere(const struct pk_server *srv,
					   const struct pk_identity *who, const char *verb,
					   const struct pk_type *t, const char *ns)
{
	const char *node;

	if (!verb || !t || t->pk != PK_KIND_LEASE || !pk_srv_admission_node_name(who, &node))
		return false;
	if (strcmp(verb, "get") == 0 || strcmp(verb, "list") == 0 || strcmp(verb, "watch") == 0)
		return false;
	return !ns || strcmp(ns, srv->node_lease_ns) != 0;
}

int pk_srv_admission_node_write(const char *node, const json_t *old, const json_t *next,
				struct pk_errors *errs)
{
	char bad[1024];
	forbidden_changes(labels_of(next), labels_of(old), bad, sizeof(bad));
	if (*bad) {
		pk_errors_add(errs,
			      "metadata.labels: Forbidden: node \"%s\" is not allowed to %s "
			      "labels: %s",
			      node, old ? "modify" : "set", bad);
		return -EPERM;
	}
	json_t *cs = json_object_get(json_object_get(next, "spec"), "configSource");
	if (!old && cs && !json_is_null(cs)) {
		pk_errors_add(errs,
			      "spec.configSource: Forbidden: node \"%s\" is not allowed to create "
			      "its Node with a configSource",
			      node);
		return -EPERM;
	}
	if (!old)
		return 0;
	static const struct {
		const char *top, *field, *path;
	} fixed[] = {
	    {"spec", "taints", "spec.taints"},
	    {"spec", "unschedulable", "spec.unschedulable"},
	    {"metadata", "ownerReferences", "metadata.ownerReferences"},
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (field_changed(next, old, fixed[i].top, fixed[i].field)) {
			pk_errors_add(errs,
				      "%s: Forbidden: node \"%s\" is not allowed to modify %s",
				      fixed[i].path, node, fixed[i].field);
			return -EPERM;
		}
	if (cs && !json_is_null(cs) && field_changed(next, old, "spec", "configSource")) {
		pk_errors_add(errs,
			      "spec.configSource: Forbidden: node \"%s\" is not allowed to "
			      "update configSource to a new non-nil configSource",
			      node);
		return -EPERM;
	}
	return 0;
}
