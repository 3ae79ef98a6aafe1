/* SPDX-License-Identifier: Apache-2.0 */
/*
 * openb.c — the OpenB format of the Alibaba GPU cluster trace
 * (cluster-trace-gpu-v2023, "Beware of Fragmentation", USENIX ATC '23).
 *
 * A node list (sn, cpu_milli, memory_mib, gpu, model) becomes Node objects
 * offering nvidia.com/gpu, labelled with their model on the accelerator
 * product label.  A pod list (name, cpu_milli, memory_mib, num_gpu,
 * gpu_milli, gpu_spec, creation_time, deletion_time, ...) becomes a trace of
 * one-pod jobs: gpu_spec (models separated by '|') is required node
 * affinity on the product label, and gpu_milli under 1000 on a one-GPU pod
 * is a share of one device (the trace's GPU sharing).
 *
 * Without inflation the rows replay as they are: arrival at creation_time,
 * leaving at deletion_time (never, when empty).  With inflation F, pods are
 * drawn from the rows at random with replacement (the seed fixes the draw)
 * until their accelerator requests reach F times the cluster's, arriving one
 * a second in the order drawn and never leaving: the paper's "workload
 * inflation".  Every value is checked; an error names the line and column.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sim/sim-run.h"
#include "topology/topology.h"

#define OB_MAX_CPU_MILLI 100000000LL /* 100,000 cores */
#define OB_MAX_MEM_MIB (1LL << 30)   /* 1 PiB */
#define OB_MAX_GPUS 1024

/* ---- columns ------------------------------------------------------------------------- */

enum { N_SN, N_CPU, N_MEM, N_GPU, N_MODEL, N_N };
static const char *const node_cols[N_N] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};

enum { P_NAME, P_CPU, P_MEM, P_NGPU, P_GMILLI, P_SPEC, P_CREATE, P_DELETE, P_N };
static const char *const pod_cols[P_N] = {"name",	   "cpu_milli",	   "memory_mib",
					  "num_gpu",	   "gpu_milli",	   "gpu_spec",
					  "creation_time", "deletion_time"};

struct ob_csv {
	const char *buf;
	size_t len, pos, lineno;
	struct sim_csv_line *l;
	int cols[P_N]; /* P_N > N_N */
	char *err;
	size_t errlen;
};

/* The next non-blank, non-comment line, split; 0, 1 at the end, -errno with err set. */
static int ob_next(struct ob_csv *c)
{
	int r;

	while ((r = sim_csv_next_line(c->buf, c->len, &c->pos, c->l)) == 0) {
		c->lineno++;
		if (!c->l->buf[strspn(c->l->buf, " \t")] || c->l->buf[0] == '#')
			continue;
		r = sim_csv_split(c->l);
		if (r < 0)
			snprintf(c->err, c->errlen, "line %zu: %s", c->lineno,
				 r == -E2BIG ? "more than 256 columns" : "unterminated quote");
		return r;
	}
	if (r < 0)
		snprintf(c->err, c->errlen, "line %zu: %s", c->lineno + 1,
			 r == -E2BIG ? "longer than 4096 bytes" : "a NUL byte");
	return r;
}

/* The header: the columns found by name; the first nreq are required. */
static int ob_header(struct ob_csv *c, const char *const *names, int n, int nreq)
{
	int r = ob_next(c);

	if (r == 1) {
		snprintf(c->err, c->errlen, "line 1: header: missing (%s, %s, ...)", names[0],
			 names[1]);
		return -EINVAL;
	}
	if (r < 0)
		return r;
	for (int k = 0; k < n; k++) {
		c->cols[k] = -1;
		for (size_t i = 0; i < c->l->n && c->cols[k] < 0; i++)
			if (strcasecmp(c->l->field[i], names[k]) == 0)
				c->cols[k] = (int)i;
		if (k < nreq && c->cols[k] < 0) {
			snprintf(c->err, c->errlen, "line %zu: header: the column %s is required",
				 c->lineno, names[k]);
			return -EINVAL;
		}
	}
	return 0;
}

static const char *ob_field(const struct ob_csv *c, int k)
{
	return c->cols[k] >= 0 && (size_t)c->cols[k] < c->l->n ? c->l->field[c->cols[k]] : "";
}

static int ob_bad(struct ob_csv *c, const char *col, const char *v, const char *why)
{
	snprintf(c->err, c->errlen, "line %zu: column %s: invalid value \"%.40s\": %s", c->lineno,
		 col, v, why);
	return -EINVAL;
}

/* An integer column from lo to hi; an empty one is dflt (or an error when dflt < 0). */
static int ob_int(struct ob_csv *c, const char *const *names, int k, int64_t lo, int64_t hi,
		  int64_t dflt, int64_t *ret)
{
	const char *v = ob_field(c, k);
	char why[96];

	if (!*v && dflt >= 0) {
		*ret = dflt;
		return 0;
	}
	if (sim_csv_int(v, lo, hi, ret) == 0)
		return 0;
	snprintf(why, sizeof(why), "expected a whole number from %lld to %lld", (long long)lo,
		 (long long)hi);
	return ob_bad(c, names[k], v, why);
}

/* ---- nodes --------------------------------------------------------------------------- */

static json_t *ob_node(const char *name, int64_t cpu, int64_t mem_mib, int64_t gpus,
		       const char *model)
{
	char cpu_s[32], mem_s[32], gpu_s[32];
	json_t *res, *n;

	snprintf(cpu_s, sizeof(cpu_s), "%lldm", (long long)cpu);
	snprintf(mem_s, sizeof(mem_s), "%lldMi", (long long)mem_mib);
	snprintf(gpu_s, sizeof(gpu_s), "%lld", (long long)gpus);
	res = json_pack("{s:s,s:s,s:s,s:s}", "cpu", cpu_s, "memory", mem_s, "pods", "110",
			PK_SIM_OPENB_RESOURCE, gpu_s);
	n = res ? json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:O,s:o}}", "apiVersion", "v1", "kind",
			    "Node", "metadata", "name", name, "labels", TOPO_LABEL_HOSTNAME, name,
			    "status", "capacity", res, "allocatable", res)
		: NULL;
	if (n && *model)
		json_object_set_new(pk_get(n, "metadata.labels"), SIM_PRODUCT_LABEL,
				    json_string(model));
	if (!n)
		json_decref(res);
	return n;
}

static int ob_node_row(struct ob_csv *c, json_t *nodes)
{
	const char *name = ob_field(c, N_SN), *model = ob_field(c, N_MODEL);
	int64_t cpu, mem, gpu;
	char why[128];
	json_t *n;

	if (!topo_label_value_valid(name, why, sizeof(why)) || !*name)
		return ob_bad(c, "sn", name, "expected a node name (a label value)");
	if (!topo_label_value_valid(model, why, sizeof(why)))
		return ob_bad(c, "model", model, why);
	if (ob_int(c, node_cols, N_CPU, 0, OB_MAX_CPU_MILLI, -1, &cpu) < 0 ||
	    ob_int(c, node_cols, N_MEM, 0, OB_MAX_MEM_MIB, -1, &mem) < 0 ||
	    ob_int(c, node_cols, N_GPU, 0, OB_MAX_GPUS, -1, &gpu) < 0)
		return -EINVAL;
	if (json_array_size(nodes) >= PK_SIM_OPENB_MAX_NODES) {
		snprintf(c->err, c->errlen, "line %zu: more than %d nodes", c->lineno,
			 PK_SIM_OPENB_MAX_NODES);
		return -E2BIG;
	}
	n = ob_node(name, cpu, mem, gpu, model);
	return n && json_array_append_new(nodes, n) == 0 ? 0 : -ENOMEM;
}

int pk_sim_openb_nodes(const char *buf, size_t len, json_t **ret, char *err, size_t errlen)
{
	struct ob_csv c = {.buf = buf, .len = len, .err = err, .errlen = errlen};
	json_t *nodes = json_array(), *seen = json_object();
	int r;

	c.l = malloc(sizeof(*c.l));
	r = c.l && nodes && seen ? ob_header(&c, node_cols, N_N, N_N) : -ENOMEM;
	while (r == 0 && (r = ob_next(&c)) == 0) {
		r = ob_node_row(&c, nodes);
		if (r == 0 && json_object_get(seen, ob_field(&c, N_SN))) {
			snprintf(err, errlen, "line %zu: column sn: duplicate node \"%.40s\"",
				 c.lineno, ob_field(&c, N_SN));
			r = -EINVAL;
		}
		if (r == 0)
			r = json_object_set_new(seen, ob_field(&c, N_SN), json_true()) ? -ENOMEM
										       : 0;
	}
	free(c.l);
	json_decref(seen);
	if (r == 1 && json_array_size(nodes) == 0) {
		snprintf(err, errlen, "line %zu: no nodes", c.lineno + 1);
		r = -EINVAL;
	}
	if (r < 0) {
		json_decref(nodes);
		return r;
	}
	*ret = nodes;
	return 0;
}

/* ---- pods ---------------------------------------------------------------------------- */

/* gpu_spec: models separated by '|', each a label value; duplicates dropped. */
static int ob_models(struct ob_csv *c, const char *spec, struct sim_job *j)
{
	char buf[PK_SIM_MAX_LINE + 1], *save = NULL, why[128];
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	j->models = calloc(strlen(spec) / 2 + 2, sizeof(*j->models));
	if (!j->models)
		return -ENOMEM;
	for (char *m = strtok_r(buf, "|", &save); m; m = strtok_r(NULL, "|", &save)) {
		bool dup = false;

		if (!*m || !topo_label_value_valid(m, why, sizeof(why)))
			return ob_bad(c, "gpu_spec", spec,
				      "expected models (label values) separated by '|'");
		for (size_t i = 0; i < n; i++)
			dup |= strcmp(j->models[i], m) == 0;
		if (!dup && !(j->models[n++] = strdup(m)))
			return -ENOMEM;
	}
	if (!n)
		return ob_bad(c, "gpu_spec", spec, "expected models separated by '|'");
	return 0;
}

static int ob_pod_row(struct ob_csv *c, struct sim_job *j)
{
	int64_t cpu, mem, ngpu, gmilli, created, deleted;
	const char *spec = ob_field(c, P_SPEC);

	if (ob_int(c, pod_cols, P_CPU, 0, OB_MAX_CPU_MILLI, -1, &cpu) < 0 ||
	    ob_int(c, pod_cols, P_MEM, 0, OB_MAX_MEM_MIB, -1, &mem) < 0 ||
	    ob_int(c, pod_cols, P_NGPU, 0, OB_MAX_GPUS, -1, &ngpu) < 0 ||
	    ob_int(c, pod_cols, P_GMILLI, 0, 1000, 0, &gmilli) < 0 ||
	    ob_int(c, pod_cols, P_CREATE, 0, 100000000000LL, 0, &created) < 0 ||
	    ob_int(c, pod_cols, P_DELETE, 0, 100000000000LL, 0, &deleted) < 0)
		return -EINVAL;
	if (ngpu > 1 && gmilli != 1000)
		return ob_bad(c, "gpu_milli", ob_field(c, P_GMILLI),
			      "a pod of several GPUs takes whole ones (1000)");
	if (ngpu == 1 && gmilli == 0)
		return ob_bad(c, "gpu_milli", ob_field(c, P_GMILLI),
			      "a one-GPU pod takes 1 to 1000 of it");
	if (*ob_field(c, P_DELETE) && deleted < created)
		return ob_bad(c, "deletion_time", ob_field(c, P_DELETE),
			      "before the pod's creation_time");
	j->cpu_milli = cpu;
	j->mem_milli = mem * 1048576 * 1000;
	j->accel_milli = ngpu == 1 ? gmilli : ngpu * 1000;
	j->shared = ngpu == 1 && gmilli < 1000;
	j->arrival_ms = created * 1000;
	j->duration_ms = *ob_field(c, P_DELETE) ? (deleted - created) * 1000 : 0;
	if (*spec && ngpu > 0)
		return ob_models(c, spec, j);
	return 0;
}

static int ob_rows(struct ob_csv *c, struct pk_sim_trace *t, size_t max_pods)
{
	int r = ob_header(c, pod_cols, P_N, P_GMILLI + 1);

	while (r == 0 && (r = ob_next(c)) == 0) {
		struct sim_job *j;

		if (t->n >= max_pods) {
			snprintf(c->err, c->errlen,
				 "line %zu: more than %zu pods (--max-total-pods raises the limit)",
				 c->lineno, max_pods);
			return -E2BIG;
		}
		r = sim_trace_add(t, &j);
		if (r == 0)
			r = ob_pod_row(c, j);
	}
	return r == 1 ? 0 : r;
}

static int ob_copy(const struct sim_job *from, struct sim_job *to)
{
	size_t n = 0;

	*to = *from;
	to->model = to->topology = NULL;
	to->objects = NULL;
	to->models = NULL;
	while (from->models && from->models[n])
		n++;
	if (!n)
		return 0;
	to->models = calloc(n + 1, sizeof(*to->models));
	for (size_t i = 0; to->models && i < n; i++)
		if (!(to->models[i] = strdup(from->models[i])))
			return -ENOMEM;
	return to->models ? 0 : -ENOMEM;
}

static uint64_t ob_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Draws from base until the accelerators requested reach target (milli). */
static int ob_inflate(const struct pk_sim_trace *base, const struct pk_sim_openb_opts *o,
		      int64_t target, struct pk_sim_trace *t, char *err, size_t errlen)
{
	uint64_t rng = o->seed;
	int64_t asked = 0;
	bool any = false;

	for (size_t i = 0; i < base->n; i++)
		any |= base->jobs[i].accel_milli > 0;
	if (!any || target <= 0) {
		snprintf(err, errlen, "--inflate: %s",
			 any ? "the nodes have no accelerators" : "no pod requests accelerators");
		return -EINVAL;
	}
	while (asked < target) {
		const struct sim_job *from = &base->jobs[ob_rand(&rng) % base->n];
		struct sim_job *j;
		int r;

		if (t->n >= o->max_pods) {
			snprintf(
			    err, errlen,
			    "--inflate %g: more than %zu pods (--max-total-pods raises the limit)",
			    o->inflate, o->max_pods);
			return -E2BIG;
		}
		r = sim_trace_add(t, &j);
		if (r == 0)
			r = ob_copy(from, j);
		if (r < 0)
			return r;
		j->arrival_ms = (int64_t)(t->n - 1) * 1000;
		j->duration_ms = 0;
		asked += j->accel_milli;
	}
	return 0;
}

static int64_t cluster_accel(const json_t *nodes)
{
	int64_t total = 0, m;
	size_t i;
	json_t *n;

	json_array_foreach(nodes, i, n)
	{
		const char *v = json_string_value(
		    json_object_get(pk_get(n, "status.allocatable"), PK_SIM_OPENB_RESOURCE));

		if (v && topo_quantity_parse(v, &m) == 0 && m > 0)
			total += m;
	}
	return total;
}

int pk_sim_openb_pods(const char *buf, size_t len, const struct pk_sim_openb_opts *o,
		      const json_t *nodes, struct pk_sim_trace **ret, char *err, size_t errlen)
{
	struct ob_csv c = {.buf = buf, .len = len, .err = err, .errlen = errlen};
	size_t max = o && o->max_pods ? o->max_pods : PK_SIM_OPENB_MAX_PODS;
	struct pk_sim_trace *base = NULL, *t = NULL;
	int r = sim_trace_new(&base);

	c.l = malloc(sizeof(*c.l));
	if (r == 0 && !c.l)
		r = -ENOMEM;
	if (r == 0)
		r = ob_rows(&c, base, o && o->inflate > 0 ? PK_SIM_MAX_JOBS : max);
	free(c.l);
	if (r == 0 && base->n == 0) {
		snprintf(err, errlen, "line %zu: no pods", c.lineno + 1);
		r = -EINVAL;
	}
	if (r == 0 && o && o->inflate > 0) {
		struct pk_sim_openb_opts io = *o;

		io.max_pods = max;
		r = sim_trace_new(&t);
		if (r == 0)
			r = ob_inflate(base, &io,
				       (int64_t)(o->inflate * (double)cluster_accel(nodes)), t, err,
				       errlen);
		pk_sim_trace_free(base);
		base = t;
	}
	if (r < 0) {
		pk_sim_trace_free(base);
		return r;
	}
	*ret = base;
	return 0;
}

int pk_sim_openb_load(const char *nodes_path, const char *pods_path,
		      const struct pk_sim_openb_opts *o, json_t **ret_nodes,
		      struct pk_sim_trace **ret_trace, char *err, size_t errlen)
{
	char *buf = NULL, sub[480] = "";
	size_t len = 0;
	json_t *nodes = NULL;
	const char *where = nodes_path;
	int r = sim_read_all(nodes_path, &buf, &len, err, errlen);

	if (r == 0) {
		r = pk_sim_openb_nodes(buf, len, &nodes, sub, sizeof(sub));
		free(buf);
		buf = NULL;
	}
	if (r == 0) {
		where = pods_path;
		r = sim_read_all(pods_path, &buf, &len, err, errlen);
	}
	if (r == 0 && (r = pk_sim_openb_pods(buf, len, o, nodes, ret_trace, sub, sizeof(sub))) == 0)
		*ret_nodes = nodes;
	free(buf);
	if (r < 0) {
		if (sub[0])
			snprintf(err, errlen, "%s: %s", where, sub);
		json_decref(nodes);
	}
	return r;
}
