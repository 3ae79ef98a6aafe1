/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strand.c — the workload profile and the stranding score of the "fit"
 * strategy: on a heterogeneous accelerator cluster, put a pod where it
 * leaves the fewest accelerators that the pods to come could no longer use.
 *
 * The profile.  Every pod the scheduler sees for the first time is noted
 * (sc_profile_note, from the forest): a pod requesting an accelerator (a
 * scarce resource: anything but pods, cpu, memory, ephemeral-storage and
 * hugepages-*) falls in a class keyed by that resource, its device count
 * and the accelerator models it accepts (the values its nodeSelector or
 * required node affinity allows for accelerator.podkernel.dev/product; none
 * when it accepts any).  A class keeps a decayed count of its pods and the
 * decayed mean CPU and memory they request per device.  Every pod noted
 * multiplies all counts by 2^(-1/SC_PROFILE_HALF_LIFE), so the profile
 * follows the workload of the last few thousand pods; a new class replaces
 * the lightest one when all SC_PROFILE_CLASSES are in use.  CPU-only pods
 * count in the total of pods seen but form no class.
 *
 * The score (after "Beware of Fragmentation", USENIX ATC '23, Fragmentation
 * Gradient Descent).  A node's free accelerators are stranded for a class
 * when the class cannot use them: all of them when the node's model is not
 * one the class accepts, else those left over once as many of the class's
 * pods as the free devices, CPU and memory allow are placed
 * (free - copies x devices).  Devices count one by one (the snapshot's
 * ledger of shares, struct sc_devs): a class of shares uses the part a
 * device has left only where its share fits, a class of whole devices only
 * untouched devices, so a GPU with 0.3 left that no class fits is lost, as
 * in FGD.  The expected stranding of a node is the sum
 * over the classes of their share of the profile times what they find
 * stranded; the score of a placement is how much it raises the node's
 * expected stranding, in devices.  It is lowest where
 *   - the CPU or memory taken still leaves the node's devices usable by a
 *     typical accelerator pod (a CPU-only pod goes where CPU is plentiful,
 *     not onto the last cores of a GPU node), and
 *   - the devices taken are ones the narrower classes could not use anyway:
 *     a model-constrained class sees another model's devices as stranded,
 *     so taking them lowers the score, and taking the last devices of a
 *     model that constrained pods ask for raises it; a node left whole for
 *     the pods that need a whole node keeps its large class's share.
 * Best-fit packs by how full a node gets, blind to what the remaining
 * capacity can still hold: on a mixed cluster it fills the CPU of GPU nodes
 * with CPU-only pods and gives the scarce model's last device to a pod that
 * could have run anywhere.  The score looks at exactly that, and is 0 where
 * the workload could not tell the difference, so packing still decides the
 * rest.
 *
 * Every class of shares counts, however light: the small shares are few,
 * yet they are the only pods a sliver left by a large share fits.  A class
 * of whole devices asking under SC_PROFILE_MIN_SHARE of the devices the
 * profile's pods ask is left out of the stranding part (by devices, not
 * pods: 8-device pods that are 0.4% of the pods ask 4% of the devices), so
 * its cost stays a few dozen multiplications per candidate node.  The model
 * pressure counts every class, however light.
 *
 * Devices no class could use (beside less CPU or memory than any class
 * asks, or a part of a device smaller than any share) are lost for certain,
 * whatever comes: a placement pays SC_LOST_WEIGHT for each it makes so, on
 * top of the classes' stranding, which sees them only as much as each class
 * did not already count the node's devices as stranded for itself.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"
#include "kernel/sched/sched-strand.h"

#define SC_PROFILE_HALF_LIFE 1024.0 /* pods noted */
/*
 * A device taken from a narrower pod is lost for good, while the stranding
 * part is what the next pod alone could not use: the narrow part weighs
 * more.  Calibrated on bench_quality over 20 seeds (README: weights 6 to 16).
 */
#define SC_NARROW_WEIGHT 10.0
#define SC_PROFILE_MIN_SHARE 0.005 /* of the devices the profile's pods ask */
/*
 * The weight of a class's lighter point (mean minus one standard deviation
 * of its requests) against its heavier one.  What a class's light pods can
 * still use is what counts most: the score itself sends them to the nodes
 * with little CPU left, so devices the heavy pods could not use there are
 * not lost.  Weighing both points alike strands the 8 devices of a node
 * whose CPU a large CPU-only pod takes down to 32 cores, and sends that pod
 * to a 2-device node instead, whose devices are then lost for certain.
 */
#define SC_LIGHT_WEIGHT 0.75
/*
 * The weight of the devices a placement leaves lost to every pod (struct
 * sc_strand's least requests), on top of the classes' stranding.  The
 * classes weigh what the next pod could not use, against what each could
 * not use before: a node whose CPU the heavier pods would not find looks
 * half lost already, and taking its last cores costs little there, though
 * the devices left beside them are then lost for certain, while a part of a
 * device left beside free CPU is used by the shares to come.  Measured on
 * the OpenB multigpu40 trace, seeds 1 to 10: 0.5, 0.7 and 1 gain 0.1 to 0.4
 * point (0.5 the most on most seeds), 0.3 loses some of it on one seed.
 */
#define SC_LOST_WEIGHT 0.5

bool sc_res_is_accelerator(const char *name)
{
	static const char *const common[] = {"pods", "cpu", "memory", "ephemeral-storage"};

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (strcmp(name, common[i]) == 0)
			return false;
	return strncmp(name, "hugepages-", 10) != 0;
}

static int res_find(const struct sc_snapshot *snap, const char *name)
{
	for (int r = 0; r < snap->nres; r++)
		if (snap->res_name[r] && strcmp(snap->res_name[r], name) == 0)
			return r;
	return -1;
}

/* The values of a required In on the model label; false when there is none. */
static bool req_models(const struct sc_sel_term *t, const char **out, int *n)
{
	bool found = false;

	for (size_t i = 0; i < t->nreqs; i++) {
		const struct sc_sel_req *q = &t->reqs[i];

		if (q->field || q->op != PK_SEL_IN || strcmp(q->key, SC_MODEL_LABEL) != 0)
			continue;
		for (size_t v = 0; v < q->nvalues; v++) {
			bool dup = false;

			for (int j = 0; j < *n; j++)
				dup |= strcmp(out[j], q->values[v]) == 0;
			if (dup)
				continue;
			if (*n == SC_PROFILE_MODELS)
				return false; /* accepts too many to be narrow */
			out[(*n)++] = q->values[v];
		}
		found = true;
	}
	return found;
}

/*
 * The models a pod accepts (at most SC_PROFILE_MODELS, names borrowed from
 * the pod): its nodeSelector's value, else the union over its node
 * affinity terms when every term names models.  0: any model.
 */
static int pod_models(const struct sc_pod *p, const char **out)
{
	int n = 0;

	for (size_t i = 0; i < p->nsel; i++)
		if (strcmp(p->sel[i].key, SC_MODEL_LABEL) == 0) {
			out[0] = p->sel[i].value;
			return 1;
		}
	for (size_t t = 0; t < p->nterms; t++)
		if (!req_models(&p->terms[t], out, &n))
			return 0;
	return n;
}

static bool same_models(const struct sc_profile_class *c, const char **m, int n)
{
	if (c->nmodels != n)
		return false;
	for (int i = 0; i < n; i++) {
		bool in = false;

		for (int j = 0; j < n; j++)
			in |= strcmp(c->models[j], m[i]) == 0;
		if (!in)
			return false;
	}
	return true;
}

static void class_clear(struct sc_profile_class *c)
{
	for (int i = 0; i < c->nmodels; i++)
		free(c->models[i]);
	memset(c, 0, sizeof(*c));
}

/* The class of (res, devices, models), made (or taking the lightest's place). */
static struct sc_profile_class *class_of(struct sc_profile *pr, int res, int64_t devices,
					 const char **m, int n)
{
	struct sc_profile_class *c = NULL;

	for (int i = 0; i < pr->n; i++)
		if (pr->c[i].res == res && pr->c[i].devices == devices &&
		    same_models(&pr->c[i], m, n))
			return &pr->c[i];
	if (pr->n < SC_PROFILE_CLASSES) {
		c = &pr->c[pr->n++];
	} else {
		c = &pr->c[0];
		for (int i = 1; i < pr->n; i++)
			if (pr->c[i].weight < c->weight)
				c = &pr->c[i];
		pr->total -= c->weight;
		class_clear(c);
	}
	for (int i = 0; i < n; i++) {
		c->models[i] = strdup(m[i]);
		if (!c->models[i]) {
			class_clear(c);
			c->res = -1;
			return NULL;
		}
		c->nmodels++;
	}
	c->res = res;
	c->devices = devices;
	return c;
}

void sc_profile_note(struct sc_profile *pr, const struct sc_snapshot *snap, const struct sc_pod *p)
{
	const double decay = exp2(-1.0 / SC_PROFILE_HALF_LIFE);
	const char *m[SC_PROFILE_MODELS];
	struct sc_profile_class *c;
	int res = -1, n, cpu = res_find(snap, "cpu"), mem = res_find(snap, "memory");

	pr->seen++;
	for (int r = 1; r < snap->nres && res < 0; r++)
		if (p->req[r] > 0 && sc_res_is_accelerator(snap->res_name[r]))
			res = r;
	if (res < 0)
		return;
	pr->total = 0;
	for (int i = 0; i < pr->n; i++) {
		pr->c[i].weight *= decay;
		pr->c[i].cpu *= decay;
		pr->c[i].mem *= decay;
		pr->c[i].cpu2 *= decay;
		pr->c[i].mem2 *= decay;
		pr->total += pr->c[i].weight;
	}
	n = pod_models(p, m);
	c = class_of(pr, res, p->req[res], m, n);
	if (!c)
		return; /* ENOMEM: the profile misses one pod */
	double cv = cpu >= 0 ? (double)p->req[cpu] : 0, mv = mem >= 0 ? (double)p->req[mem] : 0;

	c->weight += 1;
	c->cpu += cv;
	c->mem += mv;
	c->cpu2 += cv * cv;
	c->mem2 += mv * mv;
	pr->total += 1;
}

void sc_profile_fini(struct sc_profile *pr)
{
	for (int i = 0; i < pr->n; i++)
		class_clear(&pr->c[i]);
	pr->n = 0;
	free(pr->pressure);
	pr->pressure = NULL;
	pr->pcap = 0;
}

/* The two points mean -/+ standard deviation of a decayed sum and sum of squares. */
static void spread(double sum, double sum2, double w, double out[2])
{
	double mean = sum / w, var = sum2 / w - mean * mean, sd = var > 0 ? sqrt(var) : 0;

	out[0] = mean - sd > 0 ? mean - sd : 0;
	out[1] = mean + sd;
}

static int dom_of(const struct sc_part *part, const char *value)
{
	for (int d = 0; d < part->ndom; d++)
		if (strcmp(part->values[d], value) == 0)
			return d;
	return -1;
}

/*
 * A node's free devices of r, less the parts of shared devices smaller than
 * the least share asked (milli): a part no pod fits is lost to every pod.
 */
static double devices_usable(const struct sc_node *n, int r, int64_t least)
{
	const struct sc_devs *d = sc_node_devs(n, r);
	double g;

	if (!d)
		return (double)sc_sub(n->alloc[r], n->used[r]);
	g = 1000.0 * sc_devs_untouched(d);
	for (int i = 0; i < d->n; i++)
		if (d->free[i] < 1000 && d->free[i] >= least)
			g += (double)d->free[i];
	return g;
}

/*
 * Per model domain, the free devices of resource r that the lightest
 * class's pods could still use (out[d], milli): a node's free devices count
 * up to what its free CPU and memory hold at the smallest requests per
 * device any class of r makes; devices left without them are lost to every
 * pod, so a model whose free devices are all stranded is under pressure.
 */
static void usable_free(const struct sc_strand *st, const struct sc_snapshot *snap, int r,
			double *out)
{
	const struct sc_part *part = st->models;
	double cpu_dev = -1, mem_dev = -1;
	int64_t least = 1000; /* the smallest share asked */

	for (int i = 0; i < st->n; i++) {
		const struct sc_strand_class *k = &st->k[i];
		double c = k->cpu[0] * k->inv_dev, m = k->mem[0] * k->inv_dev;

		if (k->c->res != r)
			continue;
		cpu_dev = cpu_dev < 0 || c < cpu_dev ? c : cpu_dev;
		mem_dev = mem_dev < 0 || m < mem_dev ? m : mem_dev;
		if (k->c->devices < least)
			least = k->c->devices;
	}
	for (int d = 0; d < part->ndom; d++) {
		out[d] = 0;
		for (int j = part->start[d]; j < part->start[d + 1]; j++) {
			const struct sc_node *n = snap->nodes[part->order[j]];
			double g = devices_usable(n, r, least);

			if (st->cpu >= 0 && cpu_dev > 0)
				g = fmin(g, (double)sc_sub(n->alloc[st->cpu], n->used[st->cpu]) /
						cpu_dev);
			if (st->mem >= 0 && mem_dev > 0)
				g = fmin(g, (double)sc_sub(n->alloc[st->mem], n->used[st->mem]) /
						mem_dev);
			out[d] += g > 0 ? g : 0;
		}
	}
}

/* Whether a class of the profile counts in the model pressure (whatever its weight). */
static bool class_live(const struct sc_profile_class *c, int nres)
{
	return c->weight > 0 && c->res >= 0 && c->res < nres && c->devices > 0;
}

/*
 * Model pressure per resource and model: the share of the device demand
 * that only that model serves (its constrained classes, a class naming m
 * models counting 1/m for each; every class of the profile counts here,
 * however light: the narrow pods of a model often split into many light
 * classes, by device count or share, that only add up on the model), times
 * the free devices of the cluster,
 * over the model's free devices, at most 1 (free: usable_free).  Taking a
 * device of a model under pressure 1 takes one a narrower pod will miss.
 * One pass over the nodes with the model label per call.
 */
static void model_pressure(struct sc_strand *st, struct sc_profile *pr, struct sc_snapshot *snap)
{
	double demand[SC_MAX_RES] = {0}, *p, *u;
	size_t need;
	bool any = false;

	for (int i = 0; i < pr->n; i++) {
		if (!class_live(&pr->c[i], st->nres))
			continue;
		demand[pr->c[i].res] += pr->c[i].weight * (double)pr->c[i].devices;
		any |= pr->c[i].nmodels > 0;
	}
	if (!any || !(st->models = sc_snapshot_part(snap, SC_MODEL_LABEL)) || !st->models->ndom)
		return;
	need = (size_t)snap->nres * (size_t)st->models->ndom;
	if (2 * need > pr->pcap) { /* the pressures, then the usable devices of one resource */
		p = realloc(pr->pressure, 2 * need * sizeof(*p));
		if (!p)
			return; /* ENOMEM: score without the models */
		pr->pressure = p;
		pr->pcap = 2 * need;
	}
	p = pr->pressure;
	u = p + need;
	memset(p, 0, need * sizeof(*p));
	for (int i = 0; i < pr->n; i++) { /* constrained demand per model */
		const struct sc_profile_class *c = &pr->c[i];

		if (!class_live(c, st->nres))
			continue;
		for (int m = 0; m < c->nmodels; m++) {
			int d = dom_of(st->models, c->models[m]);

			if (d >= 0)
				p[c->res * st->models->ndom + d] +=
				    c->weight * (double)c->devices / c->nmodels / demand[c->res];
		}
	}
	for (int r = 0; r < snap->nres; r++) {
		double *pr_r = p + r * st->models->ndom, all = 0;

		if (demand[r] <= 0)
			continue;
		usable_free(st, snap, r, u);
		for (int d = 0; d < st->models->ndom; d++)
			all += u[d];
		for (int d = 0; d < st->models->ndom; d++)
			pr_r[d] = u[d] <= 0 ? 1 : fmin(1, pr_r[d] * all / u[d]);
	}
	st->pressure = p;
}

static void prepare_classes(struct sc_strand *st, const struct sc_profile *pr,
			    const struct sc_snapshot *snap)
{
	double demand = 0;

	st->n = 0;
	st->nres = snap->nres;
	st->cpu = res_find(snap, "cpu");
	st->mem = res_find(snap, "memory");
	for (int i = 0; i < pr->n; i++)
		if (class_live(&pr->c[i], snap->nres))
			demand += pr->c[i].weight * (double)pr->c[i].devices;
	for (int i = 0; i < pr->n && pr->total > 0; i++) {
		const struct sc_profile_class *c = &pr->c[i];
		struct sc_strand_class *k;

		if (!class_live(c, snap->nres) ||
		    (c->devices >= 1000 &&
		     c->weight * (double)c->devices < SC_PROFILE_MIN_SHARE * demand))
			continue;
		k = &st->k[st->n++];
		k->c = c;
		k->share = c->weight / pr->total;
		spread(c->cpu, c->cpu2, c->weight, k->cpu);
		spread(c->mem, c->mem2, c->weight, k->mem);
		/* the least requests are means: a relative 1e-9 absorbs their rounding */
		if (st->n == 1 || k->cpu[0] * (1 - 1e-9) < st->least_cpu)
			st->least_cpu = k->cpu[0] * (1 - 1e-9);
		if (st->n == 1 || k->mem[0] * (1 - 1e-9) < st->least_mem)
			st->least_mem = k->mem[0] * (1 - 1e-9);
		if (st->n == 1 || (double)c->devices < st->least_dev)
			st->least_dev = (double)c->devices;
		k->inv_dev = 1.0 / (double)c->devices;
		for (int j = 0; j < 2; j++) {
			k->inv_cpu[j] = k->cpu[j] > 0 ? 1.0 / k->cpu[j] : 0;
			k->inv_mem[j] = k->mem[j] > 0 ? 1.0 / k->mem[j] : 0;
		}
	}
}

const struct sc_strand *sc_strand_prepare(struct sc_profile *pr, struct sc_snapshot *snap)
{
	struct sc_strand *st = &pr->strand;

	if (pr->strand_seen != pr->seen || pr->strand_nres != snap->nres || !pr->seen) {
		prepare_classes(st, pr, snap);
		pr->strand_seen = pr->seen;
		pr->strand_nres = snap->nres;
	}
	st->models = NULL;
	st->pressure = NULL;
	model_pressure(st, pr, snap);
	return st;
}

static bool model_ok(const struct sc_profile_class *c, const char *model)
{
	if (!c->nmodels)
		return true;
	for (int i = 0; model && i < c->nmodels; i++)
		if (strcmp(c->models[i], model) == 0)
			return true;
	return false;
}

/*
 * A node's free devices of one resource as the pods to come find them:
 * untouched devices and the parts shares left of the others (milli), so a
 * class of shares uses a part only where it fits, and a class of whole
 * devices never does.  g is their sum.
 */
struct dev_view {
	int res, untouched, np;
	double g;
	int64_t part[SC_DEV_MAX];
};

static void view_of(struct dev_view *v, const struct sc_node *node, int r, int64_t free_)
{
	const struct sc_devs *d = sc_node_devs(node, r);

	v->res = r;
	v->np = 0;
	v->g = free_ > 0 ? (double)free_ : 0;
	if (!d) { /* no share on it: whole devices */
		v->untouched = free_ > 0 ? (int)(free_ / 1000) : 0;
		if (free_ > 0 && free_ % 1000)
			v->part[v->np++] = free_ % 1000;
		return;
	}
	v->untouched = sc_devs_untouched(d);
	for (int i = 0; i < d->n; i++)
		if (d->free[i] > 0 && d->free[i] < 1000)
			v->part[v->np++] = d->free[i];
}

/* The view once a request of q milli is placed, as the node's ledger would place it. */
static void view_take(struct dev_view *v, int64_t q)
{
	int64_t f = q % 1000;
	int i;

	v->untouched -= (int)(q / 1000);
	v->g -= (double)q;
	if (!f)
		return;
	i = sc_devs_pick(v->part, v->np, 0, f);
	if (i >= 0) {
		v->part[i] -= f;
	} else if (v->np < SC_DEV_MAX) {
		v->untouched--;
		v->part[v->np++] = 1000 - f;
	}
}

/* How many pods of dev milli the view's devices hold. */
static double dev_copies(const struct dev_view *v, int64_t dev)
{
	double c = 0;

	if (v->untouched <= 0 && !v->np)
		return 0;
	if (dev >= 1000)
		return v->untouched > 0 ? floor((double)v->untouched / (double)((dev + 999) / 1000))
					: 0;
	for (int i = 0; i < v->np; i++)
		c += (double)(v->part[i] / dev);
	return c + (v->untouched > 0 ? (double)v->untouched * (double)(1000 / dev) : 0);
}

/*
 * Of g free devices with cpu and mem free, holding dc pods of class k by
 * devices alone, those its pods cannot use (milli), at its point j of CPU
 * and memory requests (inverses given: multiplications only).
 */
static double stranded_at(const struct sc_strand_class *k, int j, double g, double dc, double cpu,
			  double mem)
{
	double copies = dc;

	if (k->inv_cpu[j] > 0)
		copies = fmin(copies, floor(cpu * k->inv_cpu[j]));
	if (k->inv_mem[j] > 0)
		copies = fmin(copies, floor(mem * k->inv_mem[j]));
	if (copies < 0)
		copies = 0;
	return g - copies * (double)k->c->devices;
}

/* The same over the class's two points, the lighter weighing SC_LIGHT_WEIGHT. */
static double stranded(const struct sc_strand_class *k, const struct dev_view *v, double cpu,
		       double mem)
{
	double dc;

	if (v->g <= 0)
		return 0;
	dc = dev_copies(v, k->c->devices);
	return SC_LIGHT_WEIGHT * stranded_at(k, 0, v->g, dc, cpu, mem) +
	       (1 - SC_LIGHT_WEIGHT) * stranded_at(k, 1, v->g, dc, cpu, mem);
}

/*
 * Of a view's devices, with cpu and mem free beside them, those no class
 * could use (milli): all of them below the least CPU or memory any class
 * asks, else the parts of shared devices smaller than the least share.
 */
static double lost_to_all(const struct sc_strand *st, const struct dev_view *v, double cpu,
			  double mem)
{
	double lost = 0;

	if (v->g <= 0)
		return 0;
	if ((st->cpu >= 0 && cpu < st->least_cpu) || (st->mem >= 0 && mem < st->least_mem))
		return v->g;
	for (int i = 0; i < v->np; i++)
		if ((double)v->part[i] < st->least_dev)
			lost += (double)v->part[i];
	return lost;
}

/* Devices the pod takes from narrower pods: its devices times its model's pressure. */
static double narrow_cost(const struct sc_strand *st, const struct sc_node *node,
			  const struct sc_pod *pod)
{
	int d = st->models->node_dom[node->index];
	double s = 0;

	if (d < 0)
		return 0;
	for (int r = 1; r < st->nres; r++)
		if (pod->req[r] > 0)
			s += (double)pod->req[r] * st->pressure[r * st->models->ndom + d];
	return SC_NARROW_WEIGHT * s;
}

double sc_strand_score(const struct sc_strand *st, const struct sc_node *node,
		       const struct sc_pod *pod, const int64_t *free_)
{
	double cpu = st->cpu >= 0 ? (double)free_[st->cpu] : 0;
	double mem = st->mem >= 0 ? (double)free_[st->mem] : 0;
	double cpu_req = st->cpu >= 0 ? (double)pod->req[st->cpu] : 0;
	double mem_req = st->mem >= 0 ? (double)pod->req[st->mem] : 0;
	struct dev_view before = {.res = -1}, after;
	const char *model = NULL;
	bool have_model = false;
	double s = 0;

	for (int i = 0; i < st->n; i++) {
		const struct sc_strand_class *k = &st->k[i];
		int r = k->c->res;

		if (free_[r] <= 0 || (pod->req[r] <= 0 && cpu_req <= 0 && mem_req <= 0))
			continue; /* nothing to strand, or nothing taken */
		if (k->c->nmodels && !have_model) {
			model = sc_node_label(node, SC_MODEL_LABEL);
			have_model = true;
		}
		if (!model_ok(k->c, model))
			continue;
		if (before.res != r) {
			view_of(&before, node, r, free_[r]);
			after.res = r;
			after.untouched = before.untouched;
			after.np = before.np;
			after.g = before.g;
			memcpy(after.part, before.part, (size_t)before.np * sizeof(*after.part));
			view_take(&after, pod->req[r]);
		}
		s += k->share * (stranded(k, &after, cpu - cpu_req, mem - mem_req) -
				 stranded(k, &before, cpu, mem));
	}
	/* on the last classes' resource: none is lost without parts or below the least requests */
	if (before.res >= 0 && (before.np || after.np || cpu - cpu_req < st->least_cpu ||
				mem - mem_req < st->least_mem))
		s += SC_LOST_WEIGHT * (lost_to_all(st, &after, cpu - cpu_req, mem - mem_req) -
				       lost_to_all(st, &before, cpu, mem));
	if (st->pressure)
		s += narrow_cost(st, node, pod);
	return s / 1000.0;
}

bool sc_strand_flat(const struct sc_strand *st)
{
	return !st || (!st->n && !st->pressure);
}

size_t pk_sched_profile(const struct pk_sched *s, struct pk_sched_profile_entry *ret, size_t max)
{
	const struct sc_profile *pr = &s->profile;
	size_t n = 0;

	for (int i = 0; i < pr->n && n < max; i++) {
		const struct sc_profile_class *c = &pr->c[i];
		struct pk_sched_profile_entry *e = &ret[n];
		size_t len = 0;

		if (c->weight <= 0 || c->res < 0 || c->res >= s->snap.nres)
			continue;
		memset(e, 0, sizeof(*e));
		snprintf(e->resource, sizeof(e->resource), "%s", s->snap.res_name[c->res]);
		e->devices = (double)c->devices / 1000.0;
		for (int m = 0; m < c->nmodels && len < sizeof(e->models); m++)
			len += (size_t)snprintf(e->models + len, sizeof(e->models) - len, "%s%s",
						m ? "," : "", c->models[m]);
		e->share = pr->total > 0 ? c->weight / pr->total : 0;
		/* milli over milli devices: units per device */
		e->cpu_per_device = c->devices ? c->cpu / c->weight / (double)c->devices : 0;
		e->memory_per_device = c->devices ? c->mem / c->weight / (double)c->devices : 0;
		n++;
	}
	return n;
}

uint64_t pk_sched_profile_seen(const struct pk_sched *s)
{
	return s->profile.seen;
}
