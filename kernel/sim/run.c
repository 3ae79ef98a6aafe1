/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.c — a run's state from its options, nodes and trace.
 *
 * The nodes go to a new scheduler in the order given, and are indexed:
 * capacity (allocatable accelerators, CPU, memory), their superslice and
 * box from the label keys of the options.  The accelerator resource is the
 * first extended resource (a name with a '/') the nodes offer.  Object jobs
 * get their pod names and requests read once; the smallest CPU and memory
 * request of a pod asking accelerators sets what "stranded" means.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched.h"
#include "kernel/sim/sim-run.h"

static int64_t alloc_q(const json_t *node, const char *key)
{
	const char *v = json_string_value(json_object_get(pk_get(node, "status.allocatable"), key));
	int64_t m = 0;

	return v && topo_quantity_parse(v, &m) == 0 ? m : 0;
}

void sim_find_resource(const json_t *nodes, char *buf, size_t len)
{
	size_t i;
	json_t *n, *v;
	const char *k;

	json_array_foreach(nodes, i, n)
	{
		json_object_foreach(pk_get(n, "status.allocatable"), k, v)
		{
			if (strchr(k, '/') && strncmp(k, "hugepages-", 10) != 0) {
				snprintf(buf, len, "%s", k);
				return;
			}
		}
	}
	snprintf(buf, len, "accelerator.podkernel.dev/none");
}

/* Index of value in map (added when new, its number from *count). */
static int32_t index_of(json_t *map, const char *value, size_t *count)
{
	json_t *v = json_object_get(map, value);

	if (v)
		return (int32_t)json_integer_value(v);
	json_object_set_new(map, value, json_integer((json_int_t)*count));
	return (int32_t)(*count)++;
}

static const json_t *sort_nodes;

static int by_name(const void *a, const void *b)
{
	return strcmp(pk_name(json_array_get(sort_nodes, *(const size_t *)a)),
		      pk_name(json_array_get(sort_nodes, *(const size_t *)b)));
}

/*
 * The nodes go to the scheduler in name order, as the appliance lists them
 * from its store: where placements tie, both pick the same node.
 */
static int sched_nodes(struct sim_run *s, const json_t *nodes)
{
	size_t n = json_array_size(nodes), *order = malloc((n ? n : 1) * sizeof(*order));
	int r = order ? 0 : -ENOMEM;

	for (size_t i = 0; order && i < n; i++)
		order[i] = i;
	sort_nodes = nodes;
	if (order)
		qsort(order, n, sizeof(*order), by_name);
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct pk_errors errs = {0};
		json_t *node = json_array_get(nodes, order[i]);

		r = pk_sched_add(s->sched, node, &errs);
		if (r < 0)
			snprintf(s->err, sizeof(s->err), "node %s: %s", pk_name(node) ?: "?",
				 errs.n ? errs.msg[0] : strerror(-r));
		pk_errors_clear(&errs);
	}
	free(order);
	return r;
}

static int add_nodes(struct sim_run *s, const struct pk_sim_opts *o, const json_t *nodes)
{
	json_t *ss_map = json_object(), *dom_map = json_object(), *n;
	size_t i;
	int r = 0;

	s->nnodes = json_array_size(nodes);
	s->nodes = calloc(s->nnodes ? s->nnodes : 1, sizeof(*s->nodes));
	s->node_names = calloc(s->nnodes ? s->nnodes : 1, sizeof(char *));
	s->domain_free = calloc(s->nnodes ? s->nnodes : 1, sizeof(int32_t));
	s->domain_ss = calloc(s->nnodes ? s->nnodes : 1, sizeof(int32_t));
	s->ss_names = calloc(SIM_MAX_SS, sizeof(char *));
	if (!ss_map || !dom_map || !s->nodes || !s->node_names || !s->domain_free ||
	    !s->domain_ss || !s->ss_names)
		r = -ENOMEM;
	json_array_foreach(nodes, i, n)
	{
		struct pk_errors errs = {0};
		struct sim_node *sn = &s->nodes[i];
		const json_t *labels = pk_get(n, "metadata.labels");
		const char *ss = o->superslice_key
				     ? json_string_value(json_object_get(labels, o->superslice_key))
				     : NULL;
		const char *dom = o->domain_key
				      ? json_string_value(json_object_get(labels, o->domain_key))
				      : NULL;

		if (r < 0)
			break;
		(void)errs;
		s->node_names[i] = strdup(pk_name(n) ? pk_name(n) : "");
		if (r < 0 || !s->node_names[i])
			break;
		json_object_set_new(s->node_index, s->node_names[i], json_integer((json_int_t)i));
		sn->cap = (struct sim_req){alloc_q(n, s->resource), alloc_q(n, "cpu"),
					   alloc_q(n, "memory")};
		s->total_accel += sn->cap.accel;
		sn->ss = index_of(ss_map, ss ? ss : "", &s->nss);
		if (sn->ss < SIM_MAX_SS && !s->ss_names[sn->ss])
			s->ss_names[sn->ss] = strdup(ss ? ss : "");
		sn->domain = index_of(dom_map, dom ? dom : ss ? ss : "", &s->ndomains);
		s->domain_ss[sn->domain] = sn->ss;
		s->domain_free[sn->domain]++;
	}
	json_decref(ss_map);
	json_decref(dom_map);
	return r == 0 ? sched_nodes(s, nodes) : r;
}

/* Object jobs: pod names and requests; every job: the stranded thresholds. */
static int index_jobs(struct sim_run *s)
{
	for (size_t j = 0; j < s->trace->n; j++) {
		const struct sim_job *job = &s->trace->jobs[j];
		struct sim_jobrun *r = &s->runs[j];
		size_t i, k = 0;
		json_t *o;

		r->started_at = r->last_batch = -1;
		s->delay_ms[j] = -1;
		if (job->objects) {
			r->names = calloc(job->pods ? job->pods : 1, sizeof(char *));
			r->req = calloc(job->pods ? job->pods : 1, sizeof(*r->req));
			if (!r->names || !r->req)
				return -ENOMEM;
			json_array_foreach(job->objects, i, o) if (pk_kind_of(o) == PK_KIND_POD)
			{
				r->req[k] = (struct sim_req){0};
				r->names[k] = strdup(pk_name(o) ? pk_name(o) : "");
				if (!r->names[k])
					return -ENOMEM;
				r->req[k++] = sim_pod_requests(o, s->resource);
			}
		}
		for (int32_t p = 0; p < job->pods; p++) {
			struct sim_req q = sim_pod_req(s, (uint32_t)j, p);

			if (q.accel <= 0)
				continue;
			if (q.cpu > 0 && (s->min_cpu == 0 || q.cpu < s->min_cpu))
				s->min_cpu = q.cpu;
			if (q.mem > 0 && (s->min_mem == 0 || q.mem < s->min_mem))
				s->min_mem = q.mem;
			if (!job->objects)
				break; /* a CSV job's pods are all alike */
		}
	}
	return 0;
}

static int add_classes(struct sim_run *s)
{
	size_t i;
	json_t *c;

	json_array_foreach(s->trace->classes, i, c)
	{
		struct pk_errors errs = {0};
		int r = pk_sched_add(s->sched, c, &errs);

		pk_errors_clear(&errs);
		if (r < 0)
			return r;
	}
	return 0;
}

int sim_run_new(const struct pk_sim_opts *o, const json_t *nodes, const struct pk_sim_trace *t,
		struct sim_run **ret)
{
	struct sim_run *s = calloc(1, sizeof(*s));
	/* the run reads the bindings and preemptions of the cycles, not their messages */
	struct pk_sched_opts so = {.strategy = o->strategy, .quiet_failures = true};
	int r;

	if (!s)
		return -ENOMEM;
	*ret = s;
	s->trace = t;
	s->label = o->label ? o->label : "";
	s->strategy = o->strategy ? o->strategy : pk_sched_strategy_name(0);
	s->seed = o->seed;
	s->rng = o->seed ^ 0x5eed5eed5eed5eedULL;
	s->until_ms = o->until_ms;
	s->start_delay_ms = o->start_delay_ms;
	s->failure_rate = o->failure_rate;
	s->max_retries = o->max_retries < 0 ? 3 : o->max_retries;
	s->stride = 1;
	s->bindings = o->bindings;
	for (size_t i = 0; i < SIM_MAX_SS; i++)
		s->frag_min[i] = INT32_MAX;
	sim_find_resource(nodes, s->resource, sizeof(s->resource));
	r = pk_sched_new(&so, &s->sched);
	if (r == -ENOENT)
		snprintf(s->err, sizeof(s->err), "unknown strategy %s", o->strategy);
	if (r < 0)
		return r == -ENOENT ? -EINVAL : r;
	s->node_index = json_object();
	s->loss_unknown = json_array();
	s->runs = calloc(t->n ? t->n : 1, sizeof(*s->runs));
	s->delay_ms = calloc(t->n ? t->n : 1, sizeof(int64_t));
	s->samples = calloc(SIM_MAX_SAMPLES, sizeof(*s->samples));
	if (!s->node_index || !s->loss_unknown || !s->runs || !s->delay_ms || !s->samples)
		return -ENOMEM;
	r = add_nodes(s, o, nodes);
	if (r == 0)
		r = add_classes(s);
	if (r == 0)
		r = index_jobs(s);
	if (r == 0) {
		s->held.alloc = 0;
		sim_largest_free(s, s->held.frag);
	}
	return r;
}

void sim_run_free(struct sim_run *s)
{
	if (!s)
		return;
	for (size_t j = 0; s->runs && j < s->trace->n; j++) {
		struct sim_jobrun *r = &s->runs[j];

		for (int32_t k = 0; r->names && k < s->trace->jobs[j].pods; k++)
			free(r->names[k]);
		free(r->names);
		free(r->req);
		free(r->node);
		free(r->bind_at);
		json_decref(r->homes);
		json_decref(r->flavor);
	}
	sim_q_free(s);
	for (size_t i = 0; s->node_names && i < s->nnodes; i++)
		free(s->node_names[i]);
	for (size_t i = 0; s->ss_names && i < SIM_MAX_SS; i++)
		free(s->ss_names[i]);
	free(s->ss_names);
	free(s->node_names);
	free(s->nodes);
	free(s->domain_free);
	free(s->domain_ss);
	free(s->runs);
	free(s->delay_ms);
	free(s->samples);
	free(s->ev);
	json_decref(s->node_index);
	json_decref(s->loss_unknown);
	pk_sched_free(s->sched);
	free(s);
}
