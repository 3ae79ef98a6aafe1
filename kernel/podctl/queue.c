/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.c — `podctl queue`: the Kueue queues of a podkerneld at a glance.
 * Three tables from the API: each ClusterQueue (its cohort, pending and
 * admitted workloads, and per flavor and resource its usage against its
 * nominal quota and what it borrows), each LocalQueue (its ClusterQueue
 * and counts), and each pending Job and JobSet in queue order (its
 * ClusterQueue, its position there and why it waits: the position ranked
 * from the queue controller's annotations queue.podkernel.dev/queue-order
 * of the queued Jobs, JobSets and pods, the reason its annotation
 * queue.podkernel.dev/pending-reason).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/podctl/podctl.h"

#define KUEUE "/apis/kueue.x-k8s.io/v1beta2/"
#define QUEUED "?labelSelector=kueue.x-k8s.io%2Fqueue-name"

static const char *str_or(const json_t *obj, const char *path, const char *dflt)
{
	const char *v = pk_get_string(obj, path);

	return v && *v ? v : dflt;
}

static long long int_at(const json_t *obj, const char *path)
{
	return (long long)json_integer_value(pk_get(obj, path));
}

/* The nominal quota of (flavor, resource) in a ClusterQueue's spec, as written ("-": none). */
static const char *nominal(const json_t *cq, const char *flavor, const char *resource, char *buf,
			   size_t n)
{
	size_t i, k, j;
	json_t *g, *f, *r;

	json_array_foreach(pk_get(cq, "spec.resourceGroups"), i, g)
	    json_array_foreach(json_object_get(g, "flavors"), k, f)
	{
		if (strcmp(str_or(f, "name", ""), flavor) != 0)
			continue;
		json_array_foreach(json_object_get(f, "resources"), j, r)
		{
			json_t *q = json_object_get(r, "nominalQuota");

			if (strcmp(str_or(r, "name", ""), resource) != 0)
				continue;
			if (json_is_integer(q))
				snprintf(buf, n, "%lld", (long long)json_integer_value(q));
			else
				snprintf(buf, n, "%s",
					 json_is_string(q) ? json_string_value(q) : "-");
			return buf;
		}
	}
	return "-";
}

static void print_cluster_queues(const json_t *cqs)
{
	size_t i, k, j;
	json_t *cq, *f, *r;

	printf("%-20s %-12s %7s %8s  %-16s %-16s %-14s %s\n", "CLUSTERQUEUE", "COHORT", "PENDING",
	       "ADMITTED", "FLAVOR", "RESOURCE", "USAGE/QUOTA", "BORROWED");
	json_array_foreach(json_object_get(cqs, "items"), i, cq)
	{
		bool any = false;

		json_array_foreach(pk_get(cq, "status.flavorsUsage"), k, f)
		    json_array_foreach(json_object_get(f, "resources"), j, r)
		{
			char q[64], use[96];

			snprintf(use, sizeof(use), "%s/%s", str_or(r, "total", "0"),
				 nominal(cq, str_or(f, "name", ""), str_or(r, "name", ""), q,
					 sizeof(q)));
			printf("%-20s %-12s %7lld %8lld  %-16s %-16s %-14s %s\n",
			       any ? "" : str_or(cq, "metadata.name", "?"),
			       any ? "" : str_or(cq, "spec.cohortName", "-"),
			       int_at(cq, "status.pendingWorkloads"),
			       int_at(cq, "status.admittedWorkloads"), str_or(f, "name", "?"),
			       str_or(r, "name", "?"), use, str_or(r, "borrowed", "0"));
			any = true;
		}
		if (!any)
			printf("%-20s %-12s %7lld %8lld\n", str_or(cq, "metadata.name", "?"),
			       str_or(cq, "spec.cohortName", "-"),
			       int_at(cq, "status.pendingWorkloads"),
			       int_at(cq, "status.admittedWorkloads"));
	}
}

static void print_local_queues(const json_t *lqs)
{
	size_t i;
	json_t *lq;

	printf("\n%-32s %-20s %7s %8s\n", "LOCALQUEUE", "CLUSTERQUEUE", "PENDING", "ADMITTED");
	json_array_foreach(json_object_get(lqs, "items"), i, lq)
	{
		char name[300];

		snprintf(name, sizeof(name), "%s/%s", str_or(lq, "metadata.namespace", "default"),
			 str_or(lq, "metadata.name", "?"));
		printf("%-32s %-20s %7lld %8lld\n", name, str_or(lq, "spec.clusterQueue", "-"),
		       int_at(lq, "status.pendingWorkloads"),
		       int_at(lq, "status.admittedWorkloads"));
	}
}

struct pending {
	const json_t *obj;
	const char *kind, *cq;
	long long position;
};

/* The queue-order values of list's items (of kind) into orders ("Kind/ns/name" -> value). */
static void add_orders(json_t *orders, const json_t *list, const char *kind)
{
	size_t i;
	json_t *o;

	json_array_foreach(json_object_get(list, "items"), i, o)
	{
		const char *v = wb_queue_order(o);
		char key[800];

		pk_obj_key(key, sizeof(key), pk_type_by_kind(kind),
			   str_or(o, "metadata.namespace", ""), str_or(o, "metadata.name", ""));
		if (v)
			json_object_set_new(orders, key, json_string(v));
	}
}

/* By ClusterQueue, then position (those without one last), then name. */
static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	int c = strcmp(x->cq, y->cq);

	if (c == 0 && x->position != y->position)
		c = !x->position ? 1 : !y->position ? -1 : (x->position > y->position) * 2 - 1;
	return c ? c
		 : strcmp(str_or(x->obj, "metadata.name", ""), str_or(y->obj, "metadata.name", ""));
}

/*
 * Pending: queued and not admitted (no admission annotation, or suspended);
 * positions from the queue-order keys (wb_queue_positions_of).
 */
static size_t collect(const json_t *list, const char *kind, const json_t *lqs,
		      const json_t *positions, struct pending *out, size_t n)
{
	size_t i, k;
	json_t *o, *lq;

	json_array_foreach(json_object_get(list, "items"), i, o)
	{
		const json_t *ann = pk_get(o, "metadata.annotations");
		const char *q = json_string_value(
		    json_object_get(pk_get(o, "metadata.labels"), "kueue.x-k8s.io/queue-name"));
		const char *cq = "-";
		char key[800];

		if (!q || (json_object_get(ann, "queue.podkernel.dev/admission") &&
			   !json_is_true(pk_get(o, "spec.suspend"))))
			continue;
		json_array_foreach(json_object_get(lqs, "items"), k,
				   lq) if (strcmp(str_or(lq, "metadata.name", ""), q) == 0 &&
					   strcmp(str_or(lq, "metadata.namespace", ""),
						  str_or(o, "metadata.namespace", "")) == 0) cq =
		    str_or(lq, "spec.clusterQueue", "-");
		pk_obj_key(key, sizeof(key), pk_type_by_kind(kind),
			   str_or(o, "metadata.namespace", ""), str_or(o, "metadata.name", ""));
		out[n++] = (struct pending){
		    o, kind, cq, (long long)json_integer_value(json_object_get(positions, key))};
	}
	return n;
}

static int print_pending(const json_t *jobs, const json_t *jobsets, const json_t *pods,
			 const json_t *lqs)
{
	size_t n = json_array_size(json_object_get(jobs, "items")) +
		   json_array_size(json_object_get(jobsets, "items"));
	struct pending *p = calloc(n ? n : 1, sizeof(*p));
	json_t *orders = json_object(), *positions = NULL;

	if (orders) { /* queued pods take places in their ClusterQueues too */
		add_orders(orders, jobs, "Job");
		add_orders(orders, jobsets, "JobSet");
		add_orders(orders, pods, "Pod");
		positions = wb_queue_positions_of(orders);
	}
	json_decref(orders);
	if (!p || !positions) {
		free(p);
		json_decref(positions);
		return PODCTL_EXIT_FAILURE;
	}
	n = collect(jobs, "Job", lqs, positions, p, 0);
	n = collect(jobsets, "JobSet", lqs, positions, p, n);
	qsort(p, n, sizeof(*p), cmp_pending);
	printf("\n%-40s %-20s %8s  %s\n", "PENDING", "CLUSTERQUEUE", "POSITION", "REASON");
	for (size_t i = 0; i < n; i++) {
		char name[400], pos[24] = "-";
		const char *why =
		    json_string_value(json_object_get(pk_get(p[i].obj, "metadata.annotations"),
						      "queue.podkernel.dev/pending-reason"));

		snprintf(name, sizeof(name), "%s %s/%s", p[i].kind,
			 str_or(p[i].obj, "metadata.namespace", "default"),
			 str_or(p[i].obj, "metadata.name", "?"));
		if (p[i].position)
			snprintf(pos, sizeof(pos), "%lld", p[i].position);
		printf("%-40s %-20s %8s  %s\n", name, p[i].cq, pos, why ? why : "-");
	}
	json_decref(positions);
	free(p);
	return PODCTL_EXIT_OK;
}

int podctl_queue(const struct podctl_globals *g, int argc, char **argv)
{
	json_t *cqs = NULL, *lqs = NULL, *jobs = NULL, *jobsets = NULL, *pods = NULL;
	int r;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "podctl: usage: podctl queue\n");
		return PODCTL_EXIT_USAGE;
	}
	r = podctl_get_json(g, KUEUE "clusterqueues", "ClusterQueues", &cqs);
	if (r == 0)
		r = podctl_get_json(g, KUEUE "localqueues", "LocalQueues", &lqs);
	if (r == 0)
		r = podctl_get_json(g, "/apis/batch/v1/jobs" QUEUED, "Jobs", &jobs);
	if (r == 0)
		r = podctl_get_json(g, "/apis/jobset.x-k8s.io/v1alpha2/jobsets" QUEUED, "JobSets",
				    &jobsets);
	if (r == 0)
		r = podctl_get_json(g, "/api/v1/pods" QUEUED, "Pods", &pods);
	if (r == 0) {
		print_cluster_queues(cqs);
		print_local_queues(lqs);
		r = print_pending(jobs, jobsets, pods, lqs);
	}
	json_decref(cqs);
	json_decref(lqs);
	json_decref(jobs);
	json_decref(jobsets);
	json_decref(pods);
	return r;
}
