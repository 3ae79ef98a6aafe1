/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats.c — setting up a run and measuring it.
 *
 * Every binding and release updates the node it touches, and with it three
 * running totals: accelerators allocated; accelerators stranded (free chips
 * on a host whose free CPU or memory is below the smallest CPU or memory
 * request of any accelerator pod of the trace, so that no pod of the trace
 * could use them); and per box (the domain_key level, e.g. a cube or a rack)
 * the hosts that are entirely free, whose largest box per superslice is the
 * fragmentation measure.  After each instant a sample records them; time
 * integrals give the means.  A series keeps at most SIM_MAX_SAMPLES points:
 * when full, every other point is dropped and from then on only every
 * stride-th sample is kept, so a long run still draws its whole span.
 *
 * The report is built from integers and from ratios rounded to 1e-4, so
 * that the same run gives the same bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched.h"
#include "kernel/sim/sim-run.h"

void sim_set_requests(json_t *requests, const char *resource, int64_t accel, int64_t cpu,
		      int64_t mem)
{
	char buf[40];

	if (accel > 0) {
		if (accel % 1000) /* a share of one device */
			snprintf(buf, sizeof(buf), "%lldm", (long long)accel);
		else
			snprintf(buf, sizeof(buf), "%lld", (long long)(accel / 1000));
		json_object_set_new(requests, resource, json_string(buf));
	}
	if (cpu > 0) {
		snprintf(buf, sizeof(buf), "%lldm", (long long)cpu);
		json_object_set_new(requests, "cpu", json_string(buf));
	}
	if (mem > 0) {
		topo_quantity_format(mem, TOPO_QUANTITY_BINARY_SI, buf, sizeof(buf));
		json_object_set_new(requests, "memory", json_string(buf));
	}
}

int64_t sim_quantity(const json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));
	int64_t m = 0;

	if (v && topo_quantity_parse(v, &m) == 0)
		return m;
	if (json_is_integer(json_object_get(obj, key)))
		return json_integer_value(json_object_get(obj, key)) * 1000;
	return 0;
}

/* A pod's requests: its containers' summed (init containers aside). */
struct sim_req sim_pod_requests(const json_t *pod, const char *resource)
{
	struct sim_req q = {0};
	size_t i;
	json_t *c;

	json_array_foreach(pk_get(pod, "spec.containers"), i, c)
	{
		json_t *req = pk_get(c, "resources.requests");

		q.accel += sim_quantity(req, resource);
		q.cpu += sim_quantity(req, "cpu");
		q.mem += sim_quantity(req, "memory");
	}
	return q;
}

struct sim_req sim_pod_req(const struct sim_run *s, uint32_t j, int32_t k)
{
	const struct sim_job *job = &s->trace->jobs[j];

	if (s->runs[j].req)
		return s->runs[j].req[k];
	return (struct sim_req){job->accel_milli, job->cpu_milli, job->mem_milli};
}

/* ---- per node ------------------------------------------------------------------------- */

static int64_t node_stranded(const struct sim_run *s, const struct sim_node *n)
{
	int64_t free_accel = n->cap.accel - n->used.accel;

	if (n->lost || free_accel <= 0)
		return 0;
	if ((s->min_cpu > 0 && n->cap.cpu - n->used.cpu < s->min_cpu) ||
	    (s->min_mem > 0 && n->cap.mem - n->used.mem < s->min_mem))
		return free_accel;
	return 0;
}

static void node_changed(struct sim_run *s, struct sim_node *n, int32_t pods_before)
{
	int64_t st = node_stranded(s, n);

	s->stranded += st - n->stranded;
	n->stranded = st;
	if (n->domain >= 0 && !n->lost && (pods_before == 0) != (n->pods == 0))
		s->domain_free[n->domain] += n->pods == 0 ? 1 : -1;
}

void sim_stats_take(struct sim_run *s, int32_t node, struct sim_req req)
{
	struct sim_node *n = &s->nodes[node];
	int32_t before = n->pods;

	n->used.accel += req.accel;
	n->used.cpu += req.cpu;
	n->used.mem += req.mem;
	n->pods++;
	s->alloc += req.accel;
	node_changed(s, n, before);
}

void sim_stats_release(struct sim_run *s, int32_t node, struct sim_req req)
{
	struct sim_node *n = &s->nodes[node];
	int32_t before = n->pods;

	n->used.accel -= req.accel;
	n->used.cpu -= req.cpu;
	n->used.mem -= req.mem;
	n->pods--;
	s->alloc -= req.accel;
	node_changed(s, n, before);
}

void sim_stats_node_lost(struct sim_run *s, int32_t node)
{
	struct sim_node *n = &s->nodes[node];

	if (n->lost)
		return;
	if (n->domain >= 0 && n->pods == 0)
		s->domain_free[n->domain]--;
	n->lost = true;
	s->total_accel -= n->cap.accel;
	node_changed(s, n, n->pods);
}

void sim_stats_delay(struct sim_run *s, uint32_t j, int64_t delay_ms)
{
	s->delay_ms[j] = delay_ms < 0 ? 0 : delay_ms;
}

/* ---- samples ---------------------------------------------------------------------------- */

void sim_largest_free(const struct sim_run *s, int32_t out[SIM_MAX_SS])
{
	memset(out, 0, sizeof(int32_t) * SIM_MAX_SS);
	for (size_t d = 0; d < s->ndomains; d++) {
		int32_t ss = s->domain_ss[d];

		if (ss < SIM_MAX_SS && s->domain_free[d] > out[ss])
			out[ss] = s->domain_free[d];
	}
}

int sim_stats_sample(struct sim_run *s, int64_t t)
{
	struct sim_sample smp = {.t = t, .alloc = s->alloc, .stranded = s->stranded};
	double dt = (double)(t - s->last_t);

	/* integrals over [last_t, t) of what held since the last instant */
	s->alloc_area += dt * (double)s->held.alloc;
	s->stranded_area += dt * (double)s->held.stranded;
	for (size_t i = 0; i < s->nss && i < SIM_MAX_SS; i++)
		s->frag_area[i] += dt * (double)s->held.frag[i];
	sim_largest_free(s, smp.frag);
	s->held = smp;
	if (s->alloc > s->peak_alloc)
		s->peak_alloc = s->alloc;
	if (s->stranded > s->peak_stranded)
		s->peak_stranded = s->stranded;
	for (size_t i = 0; i < s->nss && i < SIM_MAX_SS; i++)
		if (smp.frag[i] < s->frag_min[i])
			s->frag_min[i] = smp.frag[i];
	s->last_t = t;
	if (s->skip++ % s->stride != 0)
		return 0;
	if (s->nsamples == SIM_MAX_SAMPLES) {
		for (size_t i = 0; i < SIM_MAX_SAMPLES / 2; i++)
			s->samples[i] = s->samples[2 * i];
		s->nsamples = SIM_MAX_SAMPLES / 2;
		s->stride *= 2;
		s->skip = 1;
	}
	s->samples[s->nsamples++] = smp;
	return 0;
}
