/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues.c — Kueue admission in a simulation run, by the queue controller's
 * own pass.
 *
 * The pass (kernel/controllers/queues.c, handed in as opts->queue_ops) reads
 * and writes a store, so a run with queues keeps a scratch store that
 * mirrors the simulated cluster: the queue objects, the board's nodes, every
 * pod the scheduler bound (with its node and requests, not yet finished)
 * and, for each queued job of the trace (a CSV row with a tenant), a Job in
 * the tenant's namespace, suspended and labelled with its LocalQueue.  The
 * store's clock is the virtual one, so the pass orders by arrival as the
 * appliance does.  Changes are gathered and written in one transaction
 * before each pass.  After the events of an instant, when something changed
 * and a queued job waits, the pass runs once: a Job it admitted (its
 * admission annotation, spec.suspend false) has its pods handed to the
 * scheduler with the node selector and tolerations its flavor put in the
 * template; one it preempted is taken out of the scheduler and waits again.
 * A job that completes (or fails for good) is deleted from the store, which
 * gives its quota back.
 *
 * The Job of a CSV row j is "j<index>" (zero-padded, so that name order is
 * index order), with parallelism and completions the row's pods, a gang of
 * all of them when more than one (the row's topology its constraint), the
 * row's requests and model; a row's priority is the value of the
 * WorkloadPriorityClass its Job names (one made per value), which orders
 * the queue and decides preemption for quota, while its pods keep the
 * row's priority in the scheduler.  Its pods run in the scheduler as every CSV
 * job's do (namespace t<index>); in the mirror they are "<job>-p<k>" in the
 * tenant's namespace, labelled job-name, so that the pass's preemption
 * knows whose they are.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/builder/builder.h"
#include "kernel/sim/queues-internal.h"

static const char *const queue_kinds[] = {"ResourceFlavor", "ClusterQueue", "LocalQueue",
					  "Cohort",	    "Namespace",    "PriorityClass"};

static int64_t q_clock(void *arg)
{
	return ((const struct sim_queues *)arg)->now_s;
}

static void job_name(const struct sim_queues *q, uint32_t j, char *buf, size_t n)
{
	snprintf(buf, n, "j%0*u", q->width, j);
}

bool sim_q_queued(const struct sim_run *s, uint32_t j)
{
	return s->q && s->q->lq[j] >= 0;
}

/* ---- the mirror's writes ----------------------------------------------------------- */

static struct pk_store_edit *edit_new(struct sim_queues *q, json_t *owned)
{
	struct pk_store_edit *e;

	if (!owned)
		return NULL;
	if (q->ned == q->caped) {
		size_t cap = q->caped ? q->caped * 2 : 256;
		struct pk_store_edit *ed = realloc(q->ed, cap * sizeof(*ed));
		json_t **eo = ed ? realloc(q->edobj, cap * sizeof(*eo)) : NULL;

		if (ed)
			q->ed = ed;
		if (!ed || !eo) {
			json_decref(owned);
			return NULL;
		}
		q->edobj = eo;
		q->caped = cap;
	}
	e = &q->ed[q->ned];
	memset(e, 0, sizeof(*e));
	q->edobj[q->ned++] = owned;
	return e;
}

static int edit_create(struct sim_queues *q, json_t *obj)
{
	struct pk_store_edit *e = edit_new(q, obj);

	if (!e)
		return -ENOMEM;
	e->op = PK_STORE_EDIT_CREATE;
	e->create = obj;
	return 0;
}

static int edit_delete(struct sim_queues *q, const struct pk_type *t, const char *ns,
		       const char *name)
{
	json_t *o = json_pack("{s:s?,s:s}", "ns", ns, "name", name);
	struct pk_store_edit *e = edit_new(q, o);

	if (!e)
		return -ENOMEM;
	e->op = PK_STORE_EDIT_DELETE;
	e->kind = t;
	e->ns = json_string_value(json_object_get(o, "ns"));
	e->name = json_string_value(json_object_get(o, "name"));
	return 0;
}

/* Write the gathered edits in one transaction; a failure (but deleting what is gone) is said. */
static int flush(struct sim_run *s)
{
	struct sim_queues *q = s->q;
	int r;

	if (!q->ned)
		return 0;
	q->now_s = SIM_EPOCH_S + s->now / 1000;
	r = pk_store_edit_batch(q->store, q->ed, q->ned);
	for (size_t i = 0; i < q->ned; i++) {
		struct pk_store_edit *e = &q->ed[i];

		if (r == 0 && e->rc < 0 && !(e->op == PK_STORE_EDIT_DELETE && e->rc == -ENOENT)) {
			if (!s->err[0])
				snprintf(s->err, sizeof(s->err), "queues: %s %s/%s: %s",
					 e->create ? pk_get_string(e->create, "kind")
						   : e->kind->kind,
					 e->create ? pk_namespace(e->create) : e->ns,
					 e->create ? pk_name(e->create) : e->name,
					 e->message[0] ? e->message : strerror(-e->rc));
			r = e->rc;
		}
		json_decref(e->object);
		json_decref(q->edobj[i]);
	}
	q->ned = 0;
	return r;
}

/* ---- objects ----------------------------------------------------------------------- */

/*
 * The WorkloadPriorityClass of a queued row's priority v: "sim-priority-V"
 * ("sim-priority-minus-V" below 0), of value v, which the row's Job names.
 */
static void priority_class(int32_t v, char *buf, size_t n)
{
	snprintf(buf, n, "sim-priority-%s%lld", v < 0 ? "minus-" : "",
		 v < 0 ? -(long long)v : (long long)v);
}

/* The suspended, queued Job of CSV row j. */
static json_t *job_object(const struct sim_run *s, uint32_t j)
{
	const struct sim_job *job = &s->trace->jobs[j];
	const char *lq = strchr(s->q->lq_names[s->q->lq[j]], '/') + 1;
	json_t *req = json_object(), *o, *spec;
	char name[32];

	job_name(s->q, j, name, sizeof(name));
	if (!req)
		return NULL;
	sim_set_requests(req, s->resource, job->accel_milli, job->cpu_milli, job->mem_milli);
	o = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:i,s:i,s:b,s:{s:{s:[{s:s,s:s,s:{s:o}}],"
		      "s:s}}}}",
		      "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name,
		      "namespace", job->tenant, "labels", WB_LABEL_QUEUE_NAME, lq, "spec",
		      "parallelism", (int)job->pods, "completions", (int)job->pods, "suspend", 1,
		      "template", "spec", "containers", "name", "c", "image", "sim", "resources",
		      "requests", req, "restartPolicy", "Never");
	spec = pk_get(o, "spec.template.spec");
	if (spec && job->model)
		json_object_set_new(spec, "nodeSelector",
				    json_pack("{s:s}", SIM_PRODUCT_LABEL, job->model));
	if (o && job->has_priority) {
		char wpc[64];

		priority_class(job->priority, wpc, sizeof(wpc));
		json_object_set_new(pk_get(o, "metadata.labels"), "kueue.x-k8s.io/priority-class",
				    json_string(wpc));
	}
	if (o && job->pods > 1)
		pk_set(o, "spec.scheduling.schedulingPolicy",
		       json_pack("{s:{s:i}}", "gang", "minCount", (int)job->pods));
	if (o && job->pods > 1 && job->topology)
		pk_set(o, "spec.scheduling.schedulingConstraints",
		       json_pack("{s:[{s:s}]}", "topology", "key", job->topology));
	return o;
}

/* Pod k of job j as the mirror holds it: bound to its node, its requests. */
static json_t *pod_object(const struct sim_run *s, uint32_t j, int32_t k, char *ns, char *name,
			  size_t n)
{
	struct sim_req q = sim_pod_req(s, j, k);
	json_t *req = json_object(), *o;
	char pod[320], job[32];

	sim_pod_name(s, j, k, pod, sizeof(pod));
	if (sim_q_queued(s, j)) {
		job_name(s->q, j, job, sizeof(job));
		snprintf(ns, 64, "%s", s->trace->jobs[j].tenant);
		snprintf(name, n, "%s-%s", job, pod);
	} else {
		snprintf(ns, 64, "t%u", j);
		snprintf(name, n, "%s", pod);
	}
	if (!req)
		return NULL;
	sim_set_requests(req, s->resource, q.accel, q.cpu, q.mem);
	o = json_pack("{s:s,s:s,s:{s:s,s:s,s:{}},s:{s:s,s:[{s:s,s:s,s:{s:o}}]}}", "apiVersion",
		      "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns, "labels",
		      "spec", "nodeName", s->node_names[s->runs[j].node[k]], "containers", "name",
		      "c", "image", "sim", "resources", "requests", req);
	if (o && sim_q_queued(s, j))
		json_object_set_new(pk_get(o, "metadata.labels"), "job-name", json_string(job));
	return o;
}

void sim_q_pod(struct sim_run *s, uint32_t j, int32_t k, bool bound)
{
	struct sim_queues *q = s->q;
	struct sim_req rq;
	char ns[64], name[400];
	int r;

	if (!q)
		return;
	rq = sim_pod_req(s, j, k);
	if (q->tenant[j] >= 0) {
		int64_t *u = &q->ten_used[(size_t)q->tenant[j] * Q_RES], sign = bound ? 1 : -1;

		u[0] += sign * rq.accel;
		u[1] += sign * rq.cpu;
		u[2] += sign * rq.mem;
	}
	if (bound) {
		r = edit_create(q, pod_object(s, j, k, ns, name, sizeof(name)));
	} else {
		json_decref(pod_object(s, j, k, ns, name, sizeof(name)));
		r = edit_delete(q, &pk_type_pod, ns, name);
		q->dirty = true; /* room for what waits */
	}
	if (r < 0 && !s->err[0])
		snprintf(s->err, sizeof(s->err), "queues: the mirror: %s", strerror(-r));
}

/* ---- admission accounting ---------------------------------------------------------- */

static void charge(struct sim_run *s, uint32_t j, int64_t sign)
{
	struct sim_queues *q = s->q;
	const struct sim_job *job = &s->trace->jobs[j];
	int64_t *u;

	if (q->cq[j] < 0)
		return;
	u = &q->cq_used[(size_t)q->cq[j] * Q_RES];
	u[0] += sign * job->pods * job->accel_milli;
	u[1] += sign * job->pods * job->cpu_milli;
	u[2] += sign * job->pods * job->mem_milli;
	if (sign < 0)
		q->cq[j] = -1;
}

int sim_q_arrive(struct sim_run *s, uint32_t j)
{
	struct sim_queues *q = s->q;

	s->runs[j].state = SIM_QUEUED;
	q->npending++;
	q->dirty = true;
	return edit_create(q, job_object(s, j));
}

void sim_q_job_end(struct sim_run *s, uint32_t j)
{
	char name[32];

	if (!s->q)
		return;
	s->q->dirty = true;
	if (!sim_q_queued(s, j))
		return;
	charge(s, j, -1);
	job_name(s->q, j, name, sizeof(name));
	if (edit_delete(s->q, &pk_type_job, s->trace->jobs[j].tenant, name) < 0 && !s->err[0])
		snprintf(s->err, sizeof(s->err), "queues: the mirror: %s", strerror(ENOMEM));
}

void sim_q_started(struct sim_run *s, uint32_t j, int64_t t)
{
	struct sim_queues *q = s->q;
	int64_t waited;

	if (!q || !sim_q_queued(s, j) || q->admit_at[j] < 0)
		return;
	waited = t - q->admit_at[j];
	q->count.unplaceable_ms += waited;
	if (waited > q->count.unplaceable_max_ms)
		q->count.unplaceable_max_ms = waited;
	q->admit_at[j] = -1;
}

void sim_q_node_lost(struct sim_run *s, int32_t node)
{
	if (s->q && edit_delete(s->q, &pk_type_node, NULL, s->node_names[node]) < 0 && !s->err[0])
		snprintf(s->err, sizeof(s->err), "queues: the mirror: %s", strerror(ENOMEM));
}

/* ---- the pass ---------------------------------------------------------------------- */

static int cq_index(const struct sim_queues *q, const char *admission)
{
	size_t n = strcspn(admission, "/");

	for (size_t i = 0; i < q->ncq; i++)
		if (strlen(q->cqs[i]) == n && strncmp(q->cqs[i], admission, n) == 0)
			return (int)i;
	return -1;
}

/* Job j, admitted by the pass as stored: its pods go to the scheduler with its flavor. */
static int admit_job(struct sim_run *s, uint32_t j, const json_t *stored, const char *admission)
{
	struct sim_queues *q = s->q;
	const json_t *spec = pk_get(stored, "spec.template.spec");
	struct sim_jobrun *r = &s->runs[j];

	json_decref(r->flavor);
	r->flavor = json_pack("{s:O?,s:O?}", "nodeSelector", json_object_get(spec, "nodeSelector"),
			      "tolerations", json_object_get(spec, "tolerations"));
	q->cq[j] = cq_index(q, admission);
	charge(s, j, 1);
	q->admit_at[j] = s->now;
	q->now_admitted[q->nnow++] = j;
	q->npending--;
	q->count.admitted++;
	if (q->admissions)
		fprintf(q->admissions, "%.3f Job %s/%s %s\n", (double)s->now / 1000.0,
			pk_namespace(stored), pk_name(stored), admission);
	return sim_submit(s, j);
}

/* Job j, preempted by the pass: out of the scheduler, queued again. */
static void evict_job(struct sim_run *s, uint32_t j)
{
	sim_withdraw(s, j);
	charge(s, j, -1);
	s->runs[j].state = SIM_QUEUED;
	s->q->admit_at[j] = -1;
	s->q->npending++;
	s->q->count.preempted++;
	s->count.preempted_jobs++;
}

/* One Job the pass left as stored: admitted, or preempted, as the run did not know. */
static int take(struct sim_run *s, const json_t *o)
{
	const char *name = pk_name(o),
		   *adm = json_string_value(json_object_get(pk_get(o, "metadata.annotations"),
							    WB_ANNOTATION_QUEUE_ADMISSION));
	bool admitted = adm && strchr(adm, '/') && !json_is_true(pk_get(o, "spec.suspend"));
	char *end = NULL;
	unsigned long j = name && name[0] == 'j' ? strtoul(name + 1, &end, 10) : ULONG_MAX;
	enum sim_state st;

	if (j >= s->trace->n || *end || !sim_q_queued(s, (uint32_t)j))
		return 0;
	st = s->runs[j].state;
	if (admitted && st == SIM_QUEUED)
		return admit_job(s, (uint32_t)j, o, adm);
	if (!admitted && (st == SIM_WAITING || st == SIM_RUNNING))
		evict_job(s, (uint32_t)j);
	return 0;
}

/* The Jobs the pass wrote (name -> last state), from the store's change stream. */
static int changed_job(const struct pk_store_event *ev, void *arg)
{
	if (ev->type != PK_EVENT_DELETED && pk_kind_of(ev->object) == PK_KIND_JOB)
		json_object_set(arg, pk_name(ev->object), ev->object);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(pk_name(*(json_t *const *)a), pk_name(*(json_t *const *)b));
}

/*
 * What the pass decided, read back: the Jobs it wrote since rv (the whole
 * listing when the change stream no longer holds them), in name (so index)
 * order.
 */
static int read_back(struct sim_run *s, uint64_t rv)
{
	json_t *changed = json_object(), *items = NULL, *o;
	const char *k;
	json_t **v = NULL;
	size_t i, n = 0;
	int r = changed ? pk_store_events_since(s->q->store, rv, 0, changed_job, changed, NULL)
			: -ENOMEM;

	if (r == -PK_STORE_EGONE)
		r = pk_store_list(s->q->store, &pk_type_job, NULL, NULL, &items, NULL, NULL);
	else if (r == 0 && !(v = malloc((json_object_size(changed) + 1) * sizeof(*v))))
		r = -ENOMEM;
	json_object_foreach(r == 0 && v ? changed : NULL, k, o) v[n++] = o;
	if (v)
		qsort(v, n, sizeof(*v), by_name);
	for (i = 0; r == 0 && i < n; i++)
		r = take(s, v[i]);
	json_array_foreach(r == 0 ? items : NULL, i, o) if (r == 0) r = take(s, o);
	free(v);
	json_decref(items);
	json_decref(changed);
	return r;
}

int sim_q_pass(struct sim_run *s)
{
	struct sim_queues *q = s->q;
	struct timespec a, b;
	uint64_t rv;
	int r;

	if (!q || !q->dirty || !q->npending)
		return 0;
	q->dirty = false;
	r = flush(s);
	if (r < 0)
		return r;
	rv = pk_store_rv(q->store);
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = q->ctl ? 0 : q->ops->open(q->store, q->quota_first, &q->ctl);
	if (r == 0)
		r = q->ops->pass(q->ctl);
	clock_gettime(CLOCK_MONOTONIC, &b);
	q->count.pass_ns +=
	    (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	if (q->pass_ns_out)
		*q->pass_ns_out +=
		    (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	q->count.passes++;
	if (r < 0) {
		snprintf(s->err, sizeof(s->err), "queues: the admission pass: %s", strerror(-r));
		return r;
	}
	return read_back(s, rv);
}

int sim_q_after(struct sim_run *s)
{
	struct sim_queues *q = s->q;

	if (!q)
		return 0;
	/* admitted at this instant and not placed by its cycles: admitted but unplaceable now */
	for (size_t i = 0; i < q->nnow; i++)
		if (s->runs[q->now_admitted[i]].state != SIM_RUNNING)
			q->count.unplaceable++;
	q->nnow = 0;
	return sim_q_sample(s, s->now);
}

/* ---- setting up ---------------------------------------------------------------------- */

static bool queue_kind(const char *kind)
{
	for (size_t i = 0; kind && i < sizeof(queue_kinds) / sizeof(queue_kinds[0]); i++)
		if (strcmp(kind, queue_kinds[i]) == 0)
			return true;
	return false;
}

static int str_index(char **v, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], x) == 0)
			return (int)i;
	return -1;
}

/* The LocalQueues and ClusterQueues of the queue objects, each ClusterQueue's nominal quota. */
static int index_queues(struct sim_run *s, const json_t *objs)
{
	struct sim_queues *q = s->q;
	size_t i, n = json_array_size(objs);
	json_t *o;

	q->lq_names = calloc(n + 1, sizeof(char *));
	q->lq_cq = calloc(n + 1, sizeof(char *));
	q->cqs = calloc(n + 1, sizeof(char *));
	if (!q->lq_names || !q->lq_cq || !q->cqs)
		return -ENOMEM;
	json_array_foreach(objs, i, o)
	{
		const char *kind = pk_get_string(o, "kind");

		if (!queue_kind(kind) || !pk_name(o)) {
			snprintf(s->err, sizeof(s->err),
				 "queues: object %zu: kind %s: not a queue object (ResourceFlavor, "
				 "ClusterQueue, LocalQueue, Cohort, Namespace, PriorityClass)",
				 i, kind ? kind : "(none)");
			return -EINVAL;
		}
		if (strcmp(kind, "ClusterQueue") == 0 && !(q->cqs[q->ncq++] = strdup(pk_name(o))))
			return -ENOMEM;
		if (strcmp(kind, "LocalQueue") == 0) {
			const char *cq = pk_get_string(o, "spec.clusterQueue");

			q->lq_names[q->nlq] = malloc(strlen(pk_name(o)) + 80);
			q->lq_cq[q->nlq] = strdup(cq ? cq : "");
			if (!q->lq_names[q->nlq] || !q->lq_cq[q->nlq])
				return -ENOMEM;
			sprintf(q->lq_names[q->nlq++], "%.63s/%s",
				pk_namespace(o) ? pk_namespace(o) : "default", pk_name(o));
		}
	}
	return 0;
}

static void add_nominal(struct sim_run *s, size_t c, const json_t *cq)
{
	const char *names[Q_RES] = {s->resource, "cpu", "memory"};
	size_t i, k, m;
	json_t *g, *f, *res;

	json_array_foreach(pk_get(cq, "spec.resourceGroups"), i, g)
	    json_array_foreach(json_object_get(g, "flavors"), k, f) json_array_foreach(
		json_object_get(f, "resources"), m, res) for (int x = 0; x < Q_RES; x++)
	{
		const char *rn = pk_get_string(res, "name");

		if (rn && strcmp(rn, names[x]) == 0)
			s->q->nominal[c * Q_RES + (size_t)x] += sim_quantity(res, "nominalQuota");
	}
}

/* Each queued job's LocalQueue (the tenant's only one when the row names none) and tenant. */
static int resolve_jobs(struct sim_run *s)
{
	struct sim_queues *q = s->q;

	for (uint32_t j = 0; j < s->trace->n; j++) {
		const struct sim_job *job = &s->trace->jobs[j];
		size_t nt = strlen(job->tenant ? job->tenant : "");
		int found = -1, n = 0;

		q->lq[j] = q->tenant[j] = q->cq[j] = -1;
		q->admit_at[j] = -1;
		if (!job->tenant)
			continue;
		for (size_t i = 0; i < q->nlq; i++) {
			const char *lq = q->lq_names[i];

			if (strncmp(lq, job->tenant, nt) || lq[nt] != '/')
				continue;
			if (!job->queue || strcmp(lq + nt + 1, job->queue) == 0) {
				found = (int)i;
				n++;
			}
		}
		if (n != 1) {
			snprintf(s->err, sizeof(s->err),
				 "job %u: %s LocalQueue %s%s%s in the queues (tenant %s)", j,
				 n ? "more than one" : "no", job->queue ? job->queue : "",
				 job->queue ? " " : "", n ? "(name it in the queue column)" : "",
				 job->tenant);
			return -EINVAL;
		}
		q->lq[j] = found;
		q->tenant[j] = str_index(q->tenants, q->nten, job->tenant);
		if (q->tenant[j] < 0) {
			if (!(q->tenants[q->nten] = strdup(job->tenant)))
				return -ENOMEM;
			q->tenant[j] = (int32_t)q->nten++;
		}
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * The scratch store: in memory (/dev/shm) when there is one and TMPDIR is
 * unset, else under TMPDIR (or /tmp); removed when the run ends.
 */
static int open_store(struct sim_run *s)
{
	static const struct pk_store_open_opts base = {.admission = wb_admission,
						       .nadmission = WB_ADMISSION_N};
	struct pk_store_open_opts o = base;
	const char *tmp = getenv("TMPDIR");
	struct sim_queues *q = s->q;
	char err[256] = "";
	int r;

	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(q->dir, sizeof(q->dir), "%s/podkernel-sim-XXXXXX", tmp);
	if (!mkdtemp(q->dir)) {
		snprintf(s->err, sizeof(s->err), "queues: a scratch store in %s: %s", tmp,
			 strerror(errno));
		q->dir[0] = '\0';
		return -EIO;
	}
	o.creation_clock = q_clock;
	o.creation_clock_arg = q;
	r = pk_store_open_opts(q->dir, &o, &q->store, err, sizeof(err));
	if (r < 0)
		snprintf(s->err, sizeof(s->err), "queues: the scratch store: %s", err);
	return r;
}

/* A WorkloadPriorityClass for each priority a queued row gives (priority_class). */
static int priority_classes(struct sim_run *s)
{
	json_t *seen = json_object();
	int r = seen ? 0 : -ENOMEM;

	for (uint32_t j = 0; r == 0 && j < s->trace->n; j++) {
		const struct sim_job *job = &s->trace->jobs[j];
		char name[64];

		if (!sim_q_queued(s, j) || !job->has_priority)
			continue;
		priority_class(job->priority, name, sizeof(name));
		if (json_object_get(seen, name))
			continue;
		r = json_object_set_new(seen, name, json_true()) < 0 ? -ENOMEM : 0;
		if (r == 0)
			r = edit_create(s->q, json_pack("{s:s,s:s,s:{s:s},s:i}", "apiVersion",
							"kueue.x-k8s.io/v1beta2", "kind",
							"WorkloadPriorityClass", "metadata", "name",
							name, "value", (int)job->priority));
	}
	json_decref(seen);
	return r;
}

/* The mirror's first contents: the nodes, the tenants' Namespaces, the queue objects. */
static int fill(struct sim_run *s, const json_t *nodes, const json_t *objs)
{
	struct sim_queues *q = s->q;
	size_t i;
	json_t *o;
	int r = 0;

	json_array_foreach(nodes, i, o) if (r == 0) r = edit_create(q, json_deep_copy(o));
	for (size_t t = 0; r == 0 && t < q->nten; t++) {
		bool given = false;

		json_array_foreach(objs, i, o) given |=
		    strcmp(pk_get_string(o, "kind"), "Namespace") == 0 &&
		    strcmp(pk_name(o), q->tenants[t]) == 0;
		if (!given)
			r = edit_create(q,
					json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind",
						  "Namespace", "metadata", "name", q->tenants[t]));
	}
	json_array_foreach(objs, i, o) if (r == 0) r = edit_create(q, json_deep_copy(o));
	if (r == 0)
		r = priority_classes(s);
	return r < 0 ? r : flush(s);
}

static int alloc_jobs(struct sim_queues *q, size_t n)
{
	n = n ? n : 1;
	q->lq = malloc(n * sizeof(*q->lq));
	q->tenant = malloc(n * sizeof(*q->tenant));
	q->cq = malloc(n * sizeof(*q->cq));
	q->admit_at = malloc(n * sizeof(*q->admit_at));
	q->now_admitted = malloc(n * sizeof(*q->now_admitted));
	q->tenants = calloc(n, sizeof(*q->tenants));
	return q->lq && q->tenant && q->cq && q->admit_at && q->now_admitted && q->tenants
		   ? 0
		   : -ENOMEM;
}

int sim_q_new(struct sim_run *s, const struct pk_sim_opts *opts, const json_t *nodes)
{
	struct sim_queues *q;
	int r;

	for (uint32_t j = 0; !opts->queues && j < s->trace->n; j++)
		if (s->trace->jobs[j].tenant) {
			snprintf(s->err, sizeof(s->err),
				 "job %u names a tenant: queues are needed (--queues)", j);
			return -EINVAL;
		}
	if (!opts->queues)
		return 0;
	if (!opts->queue_ops || !json_is_array(opts->queues))
		return -EINVAL;
	if (!(q = calloc(1, sizeof(*q))))
		return -ENOMEM;
	s->q = q;
	q->ops = opts->queue_ops;
	q->quota_first = opts->quota_first;
	q->admissions = opts->admissions;
	q->pass_ns_out = opts->queue_pass_ns;
	q->width = snprintf(NULL, 0, "%zu", s->trace->n > 1 ? s->trace->n - 1 : 0);
	q->now_s = SIM_EPOCH_S;
	r = alloc_jobs(q, s->trace->n);
	if (r == 0)
		r = index_queues(s, opts->queues);
	if (r == 0)
		r = resolve_jobs(s);
	if (r == 0)
		r = sim_q_stats_new(q);
	for (size_t i = 0, c = 0; r == 0 && i < json_array_size(opts->queues); i++)
		if (strcmp(pk_get_string(json_array_get(opts->queues, i), "kind"),
			   "ClusterQueue") == 0)
			add_nominal(s, c++, json_array_get(opts->queues, i));
	for (size_t i = 0; r == 0 && i < s->nnodes; i++) {
		q->cap[0] += s->nodes[i].cap.accel;
		q->cap[1] += s->nodes[i].cap.cpu;
		q->cap[2] += s->nodes[i].cap.mem;
	}
	if (r == 0)
		r = open_store(s);
	if (r == 0)
		r = fill(s, nodes, opts->queues);
	return r;
}

void sim_q_free(struct sim_run *s)
{
	struct sim_queues *q = s->q;

	if (!q)
		return;
	for (size_t i = 0; i < q->ned; i++)
		json_decref(q->edobj[i]);
	free(q->ed);
	free(q->edobj);
	if (q->ctl)
		q->ops->close(q->ctl);
	pk_store_close(q->store);
	if (q->dir[0])
		nftw(q->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	for (size_t i = 0; i < q->nlq; i++) {
		free(q->lq_names[i]);
		free(q->lq_cq[i]);
	}
	for (size_t i = 0; i < q->ncq; i++)
		free(q->cqs[i]);
	for (size_t i = 0; q->tenants && i < q->nten; i++)
		free(q->tenants[i]);
	free(q->lq_names);
	free(q->lq_cq);
	free(q->cqs);
	free(q->tenants);
	free(q->lq);
	free(q->tenant);
	free(q->cq);
	free(q->admit_at);
	free(q->now_admitted);
	free(q->nominal);
	free(q->cq_used);
	free(q->ten_used);
	free(q->cq_held);
	free(q->share_held);
	free(q->cq_area);
	free(q->share_area);
	free(q->share_peak);
	free(q->cq_peak);
	free(q->st);
	free(q->sv);
	free(q);
	s->q = NULL;
}
