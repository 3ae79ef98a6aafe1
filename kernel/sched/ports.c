/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ports.c — host ports (kube-scheduler's NodePorts): a pod asking for
 * hostPort P over protocol X on host IP A cannot go on a node where a bound
 * or assumed pod uses P/X on A, or on 0.0.0.0, or (when A is 0.0.0.0) on any
 * address.  Ports come from spec.containers[*].ports and from restartable
 * init containers (sidecars); a hostNetwork pod's containerPort is its
 * hostPort when it names none (kube-apiserver's defaulting).  The ports in use are kept per node (a
 * small list each, only on nodes that have any), charged on assume and revert like capacity, so a
 * gang's members and a victim's removal are seen.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

struct hport {
	char ip[48];
	char proto[8];
	int32_t port;
};

struct ports {
	size_t n;
	struct hport p[];
};

/* Per node: ports in use, with how many pods use each. */
struct node_ports {
	struct used {
		struct hport hp;
		int count;
	} * v;
	size_t n, cap;
};
struct ports_index {
	struct node_ports *nodes;
	size_t nnodes;
};

/*
 * A port's host port; on the host's network (hostNetwork) one without is its
 * containerPort, as kube-apiserver's defaulting (pk_pod_default_host_ports)
 * makes it.  NULL when the port takes none.
 */
static json_t *host_port_of(json_t *p, bool host_network)
{
	json_t *hp = json_object_get(p, "hostPort");

	if (!hp || json_is_null(hp) || (json_is_integer(hp) && json_integer_value(hp) == 0))
		hp = host_network ? json_object_get(p, "containerPort") : NULL;
	return hp;
}

static int parse_container_ports(json_t *c, const char *path, size_t ci, bool host_network,
				 struct ports **sp, struct sc_buf *why)
{
	json_t *ports = json_object_get(c, "ports");

	for (size_t i = 0; i < json_array_size(ports); i++) {
		json_t *p = json_array_get(ports, i), *hp = host_port_of(p, host_network);
		const char *ip = json_string_value(json_object_get(p, "hostIP"));
		const char *proto = json_string_value(json_object_get(p, "protocol"));
		struct ports *v;

		if (!hp)
			continue;
		if (!json_is_integer(hp) || json_integer_value(hp) < 1 ||
		    json_integer_value(hp) > 65535 || (ip && strlen(ip) >= 48) ||
		    (proto && strcmp(proto, "TCP") != 0 && strcmp(proto, "UDP") != 0 &&
		     strcmp(proto, "SCTP") != 0)) {
			sc_buf_printf(why,
				      "%s[%zu].ports[%zu]: hostPort 1-65535, protocol TCP, UDP "
				      "or SCTP, hostIP an address expected",
				      path, ci, i);
			return -EINVAL;
		}
		if (*sp && (*sp)->n >= SC_CONS_MAX_TERMS) {
			sc_buf_printf(why, "%s: more than %d host ports", path, SC_CONS_MAX_TERMS);
			return -EINVAL;
		}
		v = realloc(*sp, sizeof(**sp) + ((*sp ? (*sp)->n : 0) + 1) * sizeof(struct hport));
		if (!v)
			return -ENOMEM;
		if (!*sp)
			v->n = 0;
		*sp = v;
		memset(&v->p[v->n], 0, sizeof(v->p[0]));
		snprintf(v->p[v->n].ip, sizeof(v->p[0].ip), "%s", ip && *ip ? ip : "0.0.0.0");
		snprintf(v->p[v->n].proto, sizeof(v->p[0].proto), "%s", proto ? proto : "TCP");
		v->p[v->n++].port = (int32_t)json_integer_value(hp);
	}
	return 0;
}

static int ports_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *spec = json_object_get(obj, "spec");
	json_t *cs = json_object_get(spec, "containers"),
	       *ics = json_object_get(spec, "initContainers");
	bool hn = json_is_true(json_object_get(spec, "hostNetwork"));
	struct ports *sp = NULL;
	int r = 0;

	(void)s;
	for (size_t i = 0; i < json_array_size(cs) && r == 0; i++)
		r = parse_container_ports(json_array_get(cs, i), "spec.containers", i, hn, &sp,
					  why);
	for (size_t i = 0; i < json_array_size(ics) && r == 0; i++) {
		json_t *c = json_array_get(ics, i);
		const char *rp = json_string_value(json_object_get(c, "restartPolicy"));

		if (rp && strcmp(rp, "Always") == 0)
			r = parse_container_ports(c, "spec.initContainers", i, hn, &sp, why);
	}
	if (r < 0) {
		free(sp);
		return r;
	}
	pod->cons->state[SC_PLUGIN_PORTS] = sp;
	return 0;
}

static void ports_release(struct pk_sched *s, struct sc_pod *pod)
{
	(void)s;
	free(pod->cons->state[SC_PLUGIN_PORTS]);
	pod->cons->state[SC_PLUGIN_PORTS] = NULL;
}

static bool conflicts(const struct hport *a, const struct hport *b)
{
	if (a->port != b->port || strcmp(a->proto, b->proto) != 0)
		return false;
	return strcmp(a->ip, "0.0.0.0") == 0 || strcmp(b->ip, "0.0.0.0") == 0 ||
	       strcmp(a->ip, b->ip) == 0;
}

static enum sc_misfit ports_filter(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	const struct ports *sp = pod->cons ? pod->cons->state[SC_PLUGIN_PORTS] : NULL;
	const struct ports_index *ix = snap->ports;
	const struct node_ports *np;

	if (!sp || !ix || (size_t)node >= ix->nnodes)
		return SC_FIT;
	np = &ix->nodes[node];
	for (size_t i = 0; i < sp->n; i++)
		for (size_t k = 0; k < np->n; k++)
			if (np->v[k].count > 0 && conflicts(&sp->p[i], &np->v[k].hp))
				return SC_MISFIT_PORTS;
	return SC_FIT;
}

void sc_ports_free(struct sc_snapshot *snap)
{
	struct ports_index *ix = snap->ports;

	for (size_t i = 0; ix && i < ix->nnodes; i++)
		free(ix->nodes[i].v);
	if (ix)
		free(ix->nodes);
	free(ix);
	snap->ports = NULL;
}

static struct node_ports *node_ports(struct sc_snapshot *snap, int node)
{
	struct ports_index *ix = snap->ports;

	if (!ix && !(ix = snap->ports = calloc(1, sizeof(*ix))))
		return NULL;
	if ((size_t)node >= ix->nnodes) {
		size_t n = snap->nnodes > (size_t)node ? snap->nnodes : (size_t)node + 1;
		struct node_ports *v = realloc(ix->nodes, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + ix->nnodes, 0, (n - ix->nnodes) * sizeof(*v));
		ix->nodes = v;
		ix->nnodes = n;
	}
	return &ix->nodes[node];
}

/*
 * A port entry is kept (count 0) once made, so a revert never allocates:
 * charge cannot fail half-way.  An allocation failure on +1 leaves the port
 * unrecorded (the filter then misses a conflict kubelet will report).
 */
static void ports_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign)
{
	const struct ports *sp = pod->cons->state[SC_PLUGIN_PORTS];
	struct node_ports *np;

	if (!sp || !(np = node_ports(snap, node)))
		return;
	for (size_t i = 0; i < sp->n; i++) {
		size_t k;

		for (k = 0; k < np->n; k++)
			if (memcmp(&np->v[k].hp, &sp->p[i], sizeof(sp->p[i])) == 0)
				break;
		if (k == np->n) {
			if (sign < 0)
				continue;
			if (np->n == np->cap) {
				size_t cap = np->cap ? 2 * np->cap : 4;
				struct used *v = realloc(np->v, cap * sizeof(*v));

				if (!v)
					continue;
				np->v = v;
				np->cap = cap;
			}
			np->v[np->n++] = (struct used){.hp = sp->p[i]};
		}
		np->v[k].count += sign;
	}
}

const struct sc_plugin_ops sc_plugin_ports = {
    .name = "NodePorts",
    .parse = ports_parse,
    .release = ports_release,
    .filter = ports_filter,
    .charge = ports_charge,
};
