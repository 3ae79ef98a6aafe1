/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace.c — reading a simulation trace: CSV rows or objects.
 *
 * CSV is what published cluster traces look like: a header row, then one job
 * per row.  Columns are found by name in the header (case and surrounding
 * blanks ignored); arrival and duration are required, pods, accelerators,
 * cpu, memory, model and priority optional, anything else ignored.  Fields
 * may be quoted ("a,b", "" for a quote).  Blank lines and lines starting
 * with '#' are skipped.  Every value is checked: a bad one is an error that
 * names the line and the column, and nothing of the trace is kept.
 *
 * An object trace groups objects into jobs: each Job and JobSet (compiled
 * by the workload builder into its groups and pods), each root
 * CompositePodGroup or PodGroup with its child groups and the pods bound to
 * them, and each standalone pod.  The job's timing is read from annotations
 * on its root object.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/lib/file.h"
#include "kernel/sim/sim-internal.h"
#include "topology/topology.h"

int sim_trace_new(struct pk_sim_trace **ret)
{
	struct pk_sim_trace *t = calloc(1, sizeof(*t));

	if (!t || !(t->classes = json_array())) {
		free(t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

int sim_trace_add(struct pk_sim_trace *t, struct sim_job **ret)
{
	if (t->n >= PK_SIM_MAX_JOBS)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct sim_job *j = realloc(t->jobs, cap * sizeof(*j));

		if (!j)
			return -ENOMEM;
		t->jobs = j;
		t->cap = cap;
	}
	*ret = &t->jobs[t->n++];
	memset(*ret, 0, sizeof(**ret));
	(*ret)->pods = 1;
	(*ret)->max_retries = -1;
	return 0;
}

void pk_sim_trace_free(struct pk_sim_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->jobs[i].model);
		free(t->jobs[i].topology);
		free(t->jobs[i].tenant);
		free(t->jobs[i].queue);
		for (size_t m = 0; t->jobs[i].models && t->jobs[i].models[m]; m++)
			free(t->jobs[i].models[m]);
		free(t->jobs[i].models);
		json_decref(t->jobs[i].objects);
	}
	free(t->jobs);
	json_decref(t->classes);
	free(t);
}

size_t pk_sim_trace_jobs(const struct pk_sim_trace *t)
{
	return t ? t->n : 0;
}

uint64_t pk_sim_trace_pods(const struct pk_sim_trace *t)
{
	uint64_t n = 0;

	for (size_t i = 0; t && i < t->n; i++)
		n += t->jobs[i].pods > 0 ? (uint64_t)t->jobs[i].pods : 0;
	return n;
}

int pk_sim_trace_job(const struct pk_sim_trace *t, size_t i, struct pk_sim_job_info *ret)
{
	const struct sim_job *j;

	if (!t || i >= t->n || !ret)
		return -EINVAL;
	j = &t->jobs[i];
	*ret = (struct pk_sim_job_info){.pods = j->pods,
					.accel_milli = j->accel_milli,
					.cpu_milli = j->cpu_milli,
					.mem_milli = j->mem_milli,
					.model = j->model,
					.models = (const char *const *)j->models};
	return 0;
}

int pk_sim_parse_seconds(const char *s, int64_t *ret_ms)
{
	char *end;
	double v, unit = 1;

	if (!s)
		return -EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	switch (*end) {
	case 's':
		end++;
		break;
	case 'm':
		unit = 60, end++;
		break;
	case 'h':
		unit = 3600, end++;
		break;
	case 'd':
		unit = 86400, end++;
		break;
	}
	while (isspace((unsigned char)*end))
		end++;
	if (*end || v * unit > 1e11) /* about 3,000 years */
		return -EINVAL;
	*ret_ms = (int64_t)llround(v * unit * 1000.0);
	return 0;
}

/* ---- CSV ----------------------------------------------------------------------------- */

enum csv_col {
	C_ARRIVAL,
	C_DURATION,
	C_PODS,
	C_ACCEL,
	C_CPU,
	C_MEMORY,
	C_MODEL,
	C_PRIORITY,
	C_TOPOLOGY,
	C_TENANT,
	C_QUEUE,
	C_N
};
static const char *const col_names[C_N] = {"arrival",  "duration", "pods",  "accelerators",
					   "cpu",      "memory",   "model", "priority",
					   "topology", "tenant",   "queue"};
int sim_csv_split(struct sim_csv_line *l)
{
	char *r = l->buf, *w = l->buf;

	l->n = 0;
	for (;;) {
		if (l->n == SIM_CSV_MAX_FIELDS)
			return -E2BIG;
		l->field[l->n++] = w;
		while (*r == ' ' || *r == '\t')
			r++;
		if (*r == '"') {
			for (r++;; r++) {
				if (!*r)
					return -EINVAL;
				if (*r == '"' && r[1] == '"')
					*w++ = *r++;
				else if (*r == '"')
					break;
				else
					*w++ = *r;
			}
			r++;
			while (*r == ' ' || *r == '\t')
				r++;
			if (*r && *r != ',')
				return -EINVAL;
		} else {
			while (*r && *r != ',')
				*w++ = *r++;
			while (w > l->field[l->n - 1] && (w[-1] == ' ' || w[-1] == '\t'))
				w--;
		}
		if (!*r) {
			*w = '\0';
			return 0;
		}
		*w++ = '\0';
		r++;
	}
}

static int csv_header(struct sim_csv_line *l, int cols[C_N], char *err, size_t errlen)
{
	for (int c = 0; c < C_N; c++)
		cols[c] = -1;
	for (size_t i = 0; i < l->n; i++)
		for (int c = 0; c < C_N; c++)
			if (strcasecmp(l->field[i], col_names[c]) == 0 && cols[c] < 0)
				cols[c] = (int)i;
	for (int c = 0; c <= C_DURATION; c++)
		if (cols[c] < 0) {
			snprintf(err, errlen, "line 1: header: the column %s is required",
				 col_names[c]);
			return -EINVAL;
		}
	return 0;
}

static int csv_quantity(const char *v, int64_t *ret)
{
	if (topo_quantity_parse(v, ret) < 0 || *ret < 0)
		return -EINVAL;
	return 0;
}

int sim_csv_int(const char *v, int64_t lo, int64_t hi, int64_t *ret)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -EINVAL;
	*ret = x;
	return 0;
}

/* One value of a row into the job; -EINVAL with what is wrong in why. */
static int csv_value(struct sim_job *j, int c, const char *v, const char **why)
{
	int64_t x;
	char vwhy[128];

	switch (c) {
	case C_ARRIVAL:
	case C_DURATION:
		*why = "expected seconds (a non-negative number)";
		return pk_sim_parse_seconds(v, c == C_ARRIVAL ? &j->arrival_ms : &j->duration_ms);
	case C_PODS:
		*why = "expected a whole number of pods from 1 to 100000";
		if (sim_csv_int(v, 1, PK_SIM_MAX_GANG, &x) < 0)
			return -EINVAL;
		j->pods = (int32_t)x;
		return 0;
	case C_ACCEL:
		*why = "expected a whole number of accelerators";
		if (csv_quantity(v, &j->accel_milli) < 0 || j->accel_milli % 1000)
			return -EINVAL;
		return 0;
	case C_CPU:
	case C_MEMORY:
		*why = "expected a non-negative Kubernetes quantity";
		return csv_quantity(v, c == C_CPU ? &j->cpu_milli : &j->mem_milli);
	case C_MODEL:
		*why = "expected a label value (63 characters of [A-Za-z0-9_.-])";
		if (!topo_label_value_valid(v, vwhy, sizeof(vwhy)))
			return -EINVAL;
		free(j->model);
		j->model = strdup(v);
		return j->model ? 0 : -ENOMEM;
	case C_TOPOLOGY:
		*why = "expected a node label key (a gang of all the pods in one domain)";
		if (strlen(v) > 253 ||
		    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			      "0123456789-_./") != strlen(v))
			return -EINVAL;
		free(j->topology);
		j->topology = strdup(v);
		return j->topology ? 0 : -ENOMEM;
	case C_TENANT:
	case C_QUEUE:
		*why = c == C_TENANT ? "expected a namespace name (a DNS label)"
				     : "expected a LocalQueue name (a DNS subdomain)";
		if (c == C_TENANT ? !topo_dns_label_valid(v) : !topo_dns_subdomain_valid(v))
			return -EINVAL;
		free(c == C_TENANT ? j->tenant : j->queue);
		if (c == C_TENANT)
			j->tenant = strdup(v);
		else
			j->queue = strdup(v);
		return (c == C_TENANT ? j->tenant : j->queue) ? 0 : -ENOMEM;
	case C_PRIORITY:
		*why = "expected a 32-bit integer";
		if (sim_csv_int(v, INT32_MIN, INT32_MAX, &x) < 0)
			return -EINVAL;
		j->priority = (int32_t)x;
		j->has_priority = true;
		return 0;
	}
	return 0;
}

static int csv_row(struct pk_sim_trace *t, struct sim_csv_line *l, const int cols[C_N],
		   size_t lineno, char *err, size_t errlen)
{
	struct sim_job *j;
	int r = sim_trace_add(t, &j);

	if (r == -E2BIG) {
		snprintf(err, errlen, "line %zu: more than %d jobs", lineno, PK_SIM_MAX_JOBS);
		return r;
	}
	if (r < 0)
		return r;
	for (int c = 0; c < C_N; c++) {
		const char *why = "";
		const char *v = cols[c] >= 0 && (size_t)cols[c] < l->n ? l->field[cols[c]] : "";

		if (!*v) {
			if (c <= C_DURATION) {
				snprintf(err, errlen, "line %zu: column %s: required value", lineno,
					 col_names[c]);
				return -EINVAL;
			}
			continue;
		}
		r = csv_value(j, c, v, &why);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			snprintf(err, errlen, "line %zu: column %s: invalid value \"%.40s\": %s",
				 lineno, col_names[c], v, why);
			return -EINVAL;
		}
	}
	if (j->queue && !j->tenant && !(j->tenant = strdup("default")))
		return -ENOMEM;
	return 0;
}

int sim_csv_next_line(const char *buf, size_t len, size_t *pos, struct sim_csv_line *l)
{
	size_t start = *pos, end = start, n;

	if (start >= len)
		return 1;
	while (end < len && buf[end] != '\n')
		end++;
	*pos = end < len ? end + 1 : end;
	n = end - start;
	if (n && buf[start + n - 1] == '\r')
		n--;
	if (n > PK_SIM_MAX_LINE)
		return -E2BIG;
	if (memchr(buf + start, '\0', n))
		return -EINVAL;
	memcpy(l->buf, buf + start, n);
	l->buf[n] = '\0';
	return 0;
}

int pk_sim_trace_parse_csv(const char *buf, size_t len, struct pk_sim_trace **ret, char *err,
			   size_t errlen)
{
	struct pk_sim_trace *t = NULL;
	struct sim_csv_line *l = malloc(sizeof(*l));
	int cols[C_N], r;
	size_t pos = 0, lineno = 0;
	bool header = false;

	if (!l || sim_trace_new(&t) < 0) {
		free(l);
		return -ENOMEM;
	}
	while ((r = sim_csv_next_line(buf, len, &pos, l)) == 0) {
		lineno++;
		if (!l->buf[strspn(l->buf, " \t")] || l->buf[0] == '#')
			continue;
		r = sim_csv_split(l);
		if (r < 0) {
			snprintf(err, errlen, "line %zu: %s", lineno,
				 r == -E2BIG ? "more than 256 columns" : "unterminated quote");
			break;
		}
		r = header ? csv_row(t, l, cols, lineno, err, errlen)
			   : csv_header(l, cols, err, errlen);
		header = true;
		if (r < 0)
			break;
	}
	if (r == -E2BIG && !*err)
		snprintf(err, errlen, "line %zu: longer than %d bytes", lineno + 1,
			 PK_SIM_MAX_LINE);
	else if (r == -EINVAL && !*err)
		snprintf(err, errlen, "line %zu: a NUL byte", lineno + 1);
	if (r == 1 && !header) {
		snprintf(err, errlen, "line 1: header: missing (arrival, duration, ...)");
		r = -EINVAL;
	}
	free(l);
	if (r < 0) {
		pk_sim_trace_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

/* ---- objects -------------------------------------------------------------------------- */

static int timing(const json_t *obj, const char *path, struct sim_job *j, struct pk_errors *errs)
{
	const json_t *ann = pk_get(obj, "metadata.annotations");
	const char *a = json_string_value(json_object_get(ann, PK_SIM_ANN_ARRIVAL));
	const char *d = json_string_value(json_object_get(ann, PK_SIM_ANN_DURATION));
	int r = 0;

	if (a && pk_sim_parse_seconds(a, &j->arrival_ms) < 0) {
		pk_errors_add(
		    errs,
		    "%s.metadata.annotations[" PK_SIM_ANN_ARRIVAL
		    "]: Invalid value: \"%.40s\": expected seconds (90, 1.5, 30m, 2h, 1d)",
		    path, a);
		r = -EINVAL;
	}
	if (d && pk_sim_parse_seconds(d, &j->duration_ms) < 0) {
		pk_errors_add(
		    errs,
		    "%s.metadata.annotations[" PK_SIM_ANN_DURATION
		    "]: Invalid value: \"%.40s\": expected seconds (90, 1.5, 30m, 2h, 1d)",
		    path, d);
		r = -EINVAL;
	}
	return r;
}

static size_t count_pods(const json_t *objects)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(objects, i, o) n += pk_kind_of(o) == PK_KIND_POD;
	return n;
}

/* A Job or JobSet: its groups and pods, as the builder compiles them. */
static int compile_owner(const json_t *obj, struct sim_job *j, struct pk_errors *errs)
{
	json_t *in = json_pack("[O]", obj), *out = NULL, *keep = json_array(), *o;
	size_t i;
	int r = in && keep ? wb_expand_objects(in, &out, errs) : -ENOMEM;

	json_array_foreach(out, i, o)
	{
		enum pk_kind k = pk_kind_of(o);

		if (k == PK_KIND_POD || k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP)
			json_array_append(keep, o);
	}
	json_decref(in);
	json_decref(out);
	if (r < 0) {
		json_decref(keep);
		return r;
	}
	j->objects = keep;
	j->pods = (int32_t)count_pods(keep);
	return 0;
}

/* The root group a group or pod belongs to ("" for a standalone pod). */
static const char *root_of(const json_t *groups, const char *name)
{
	for (int depth = 0; name && depth < 16; depth++) {
		const json_t *g = json_object_get(groups, name);
		const char *parent =
		    g ? pk_get_string(g, "spec.parentCompositePodGroupName") : NULL;

		if (!parent)
			return name;
		name = parent;
	}
	return name;
}

static int add_owner_job(struct pk_sim_trace *t, const json_t *o, const char *path,
			 struct pk_errors *errs)
{
	struct sim_job *j;
	int r = sim_trace_add(t, &j);

	if (r < 0)
		return r;
	if (timing(o, path, j, errs) < 0)
		return -EINVAL;
	/* how often a failed attempt is placed again: the owner's own policy */
	json_t *limit = pk_kind_of(o) == PK_KIND_JOBSET
			    ? pk_get(o, "spec.failurePolicy.maxRestarts")
			    : pk_get(o, "spec.backoffLimit");

	if (json_is_integer(limit) && json_integer_value(limit) >= 0 &&
	    json_integer_value(limit) <= INT32_MAX)
		j->max_retries = (int32_t)json_integer_value(limit);
	else if (pk_kind_of(o) == PK_KIND_JOBSET)
		j->max_retries = 0; /* maxRestarts defaults to 0 */
	return compile_owner(o, j, errs);
}

/* Bare groups and pods: one job per root group (groups and pods by root name). */
static int add_bare_jobs(struct pk_sim_trace *t, const json_t *objects, const json_t *groups,
			 struct pk_errors *errs)
{
	json_t *index = json_object(), *o;
	size_t i;
	int r = 0;

	json_array_foreach(objects, i, o)
	{
		enum pk_kind k = pk_kind_of(o);
		const char *g = k == PK_KIND_POD
				    ? pk_get_string(o, "spec.schedulingGroup.podGroupName")
				    : pk_name(o);
		const char *root = g ? root_of(groups, g) : NULL;
		bool is_root = k != PK_KIND_POD ? root && strcmp(root, pk_name(o)) == 0 : !g;
		json_t *slot = root ? json_object_get(index, root) : NULL;
		struct sim_job *j;
		char path[48];

		if (k != PK_KIND_POD && k != PK_KIND_POD_GROUP && k != PK_KIND_COMPOSITE_POD_GROUP)
			continue;
		snprintf(path, sizeof(path), "items[%zu]", i);
		if (!slot) {
			if ((r = sim_trace_add(t, &j)) < 0 || !(j->objects = json_array()))
				break;
			j->pods = 0;
			if (root)
				json_object_set_new(index, root,
						    json_integer((json_int_t)t->n - 1));
		} else {
			j = &t->jobs[json_integer_value(slot)];
		}
		if ((is_root || k == PK_KIND_POD) && timing(o, path, j, errs) < 0)
			r = -EINVAL;
		json_array_append(j->objects, o);
		j->pods += k == PK_KIND_POD;
	}
	json_decref(index);
	return r;
}

int pk_sim_trace_from_objects(const json_t *objects, struct pk_sim_trace **ret,
			      struct pk_errors *errs)
{
	struct pk_sim_trace *t = NULL;
	json_t *groups = json_object(), *o;
	size_t i;
	int r = groups ? sim_trace_new(&t) : -ENOMEM;

	json_array_foreach(objects, i, o)
	{
		enum pk_kind k = pk_kind_of(o);
		char path[48];

		snprintf(path, sizeof(path), "items[%zu]", i);
		if (r < 0)
			break;
		if (k == PK_KIND_JOB || k == PK_KIND_JOBSET) {
			if (add_owner_job(t, o, path, errs) < 0)
				r = -EINVAL;
		} else if (k == PK_KIND_WORKLOAD) {
			continue; /* read by nothing in a simulation (groups name it only) */
		} else if (k == PK_KIND_PRIORITY_CLASS) {
			json_array_append(t->classes, o);
		} else if (k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP) {
			json_object_set(groups, pk_name(o) ? pk_name(o) : "", o);
		} else if (k != PK_KIND_POD) {
			pk_errors_add(errs,
				      "%s.kind: Unsupported value: \"%s\": a trace holds Jobs, "
				      "JobSets, groups, pods and PriorityClasses (nodes come from "
				      "the board)",
				      path, json_string_value(json_object_get(o, "kind")) ?: "");
			r = -EINVAL;
		}
	}
	if (r == 0)
		r = add_bare_jobs(t, objects, groups, errs);
	json_decref(groups);
	if (r < 0) {
		pk_sim_trace_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

int sim_read_all(const char *path, char **ret, size_t *ret_len, char *err, size_t errlen)
{
	int r = pk_read_input(path, PK_MAX_FILE_BYTES, ret, ret_len);

	if (r == -EFBIG)
		snprintf(err, errlen, "%s: larger than %zu MiB", path, PK_MAX_FILE_BYTES >> 20);
	else if (r == -EIO)
		snprintf(err, errlen, "%s: read error", path);
	else if (r < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	return r;
}

int pk_sim_trace_load(const char *path, struct pk_sim_trace **ret, char *err, size_t errlen)
{
	size_t n = strlen(path);

	if (n > 4 && strcasecmp(path + n - 4, ".csv") == 0) {
		char *buf = NULL;
		size_t len = 0;
		int r = sim_read_all(path, &buf, &len, err, errlen);

		if (r < 0)
			return r;
		r = pk_sim_trace_parse_csv(buf, len, ret, err, errlen);
		free(buf);
		return r;
	}
	json_t *objects = NULL;
	struct pk_errors errs = {0};
	int r = pk_read_file(path, &objects, err, errlen);

	if (r < 0)
		return r;
	r = pk_sim_trace_from_objects(objects, ret, &errs);
	if (r < 0)
		snprintf(err, errlen, "%s%s", errs.n ? errs.msg[0] : strerror(-r),
			 errs.n > 1 ? " (and more)" : "");
	pk_errors_clear(&errs);
	json_decref(objects);
	return r;
}
