/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-strand.h — the workload profile and the stranding score (strand.c):
 * the accelerator pods seen, by class, and how much a placement raises the
 * devices those classes could no longer use.  Private to kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_STRAND_H
#define PODKERNEL_KERNEL_SCHED_STRAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/sched/sched-common.h"

struct sc_node;
struct sc_part;
struct sc_pod;
struct sc_snapshot;

/* The node label naming a node's accelerator model (podagent publishes it). */
#define SC_MODEL_LABEL "accelerator.podkernel.dev/product"
#define SC_PROFILE_CLASSES 64 /* classes of accelerator pods kept */
#define SC_PROFILE_MODELS 4   /* accepted models a class names at most */

/*
 * Accelerator pods of one resource, device count (a share of one device
 * under 1000 milli) and set of accepted models.
 */
struct sc_profile_class {
	int res;	 /* the accelerator's resource id */
	int64_t devices; /* per pod (milli) */
	char *models[SC_PROFILE_MODELS];
	int nmodels;	   /* 0: any model */
	double weight;	   /* decayed count of its pods */
	double cpu, mem;   /* decayed sums of their requests (milli): / weight is the mean */
	double cpu2, mem2; /* decayed sums of their squares, for the spread */
};
/* The profile's classes that weigh, ready for scoring one root's pods. */
struct sc_strand {
	struct sc_strand_class {
		const struct sc_profile_class *c;
		double share;	       /* of the profile */
		double cpu[2], mem[2]; /* requests per pod: mean -/+ standard deviation (milli) */
		double inv_dev, inv_cpu[2], inv_mem[2]; /* their inverses (0 for 0) */
	} k[SC_PROFILE_CLASSES];
	int n;
	int cpu, mem; /* resource ids, -1 when unknown */
	/* The least any class asks (its lighter point, less 1e-9 of it; milli):
	 * CPU and memory per pod, devices per pod.  Below them a node's
	 * devices are lost. */
	double least_cpu, least_mem, least_dev;
	int nres;
	/* Model pressure: the partition by model, and per resource r and model
	 * domain d, pressure[r * ndom + d] (NULL when no class names a model). */
	struct sc_part *models;
	const double *pressure;
};
struct sc_profile {
	struct sc_profile_class c[SC_PROFILE_CLASSES];
	int n;
	double total;	  /* sum of the weights */
	uint64_t seen;	  /* pods noted, CPU-only ones included */
	double *pressure; /* scoring buffer (sc_strand_prepare), pcap doubles */
	size_t pcap;
	struct sc_strand strand; /* prepared at seen == strand_seen, for nres resources */
	uint64_t strand_seen;
	int strand_nres;
};
/* A pod seen for the first time. */
void sc_profile_note(struct sc_profile *pr, const struct sc_snapshot *snap, const struct sc_pod *p);
void sc_profile_fini(struct sc_profile *pr);
/* Whether a resource is an accelerator (scarce): not pods, cpu, memory, storage, hugepages. */
bool sc_res_is_accelerator(const char *name);

/*
 * The classes that weigh, ready for scoring (rebuilt only when pods were
 * noted since), with the model pressure of the snapshot's free capacity now.
 * Owned by the profile, valid until the next call.
 */
const struct sc_strand *sc_strand_prepare(struct sc_profile *pr, struct sc_snapshot *snap);
/*
 * How much placing pod on node (free_: its free capacity now) raises the
 * devices the profile's classes could no longer use there (may be
 * negative); lower is better.
 */
double sc_strand_score(const struct sc_strand *st, const struct sc_node *node,
		       const struct sc_pod *pod, const int64_t *free_);
/* Whether sc_strand_score is 0 for every placement (no class weighs, no model pressure). */
bool sc_strand_flat(const struct sc_strand *st);

#endif
