/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dra-internal.h — the device table and class selectors the allocator
 * (alloc.c) searches, as state.c builds them.
 */
#ifndef PODKERNEL_KERNEL_DRA_INTERNAL_H
#define PODKERNEL_KERNEL_DRA_INTERNAL_H

#include <stdint.h>

#include "kernel/cel/cel.h"
#include "kernel/dra/dra.h"

struct dra_device {
	const char *driver, *pool, *name; /* borrowed from the slice */
	const char *node_name;		  /* the slice's scope: nodeName, */
	const json_t *node_sel;		  /* nodeSelector, */
	bool all;			  /* or allNodes */
	char *key;			  /* "driver/pool/device" */
	struct cel_device cel;
	struct cel_attr *attrs;
	struct cel_capacity *caps;
	char **domains; /* domains split off qualified names (owned) */
	size_t ndomains;
	const json_t *taints; /* the device's taints (DRADeviceTaints), borrowed */
};

struct dra_class {
	const char *name;
	struct cel_program **sel;
	size_t nsel;
	char *err; /* a selector that does not compile: "DeviceClass x: spec.selectors[0]..." */
};

/* Cached selector results per (device, class). */
enum { DRA_UNKNOWN = 0, DRA_NO, DRA_YES, DRA_ERROR };

struct dra_state {
	json_t *classes, *slices; /* name -> object */
	json_t *used;		  /* "driver/pool/device" -> true */
	bool dirty;
	struct dra_device *devs;
	size_t ndev;
	struct dra_class *cls;
	size_t ncls;
	uint8_t *cache; /* [device * ncls + class] */
	/*
	 * Which devices a node may see: node-local ones grouped per node
	 * (local[], node name -> [start, count] in by_node), and the devices of
	 * nodeSelector and allNodes slices (shared[]), each list in table order.
	 */
	int *local, *shared;
	size_t nshared;
	json_t *by_node;	       /* node name -> slot */
	size_t *slot_start, *slot_len; /* per slot: its devices in local[] */
	uint64_t gen;		       /* bumps on every rebuild */
	/* "driver/pool/device" -> device index, and per device whether it is in use */
	json_t *dev_index;
	uint8_t *inuse;
	long cycle_steps; /* search steps of this scheduling cycle (DRA_CYCLE_STEPS) */
};

/* Keep inuse[] in step with used: key k was marked (on) or freed. */
void dra_note_use(struct dra_state *st, const char *k, bool on);

/* Rebuild the device table and classes after a change; 0 or -ENOMEM. */
int dra_state_rebuild(struct dra_state *st);
/* Free the first n devices of an allocation. */
void dra_release_n(struct dra_state *st, const struct dra_allocation *a, size_t n);

#endif /* PODKERNEL_KERNEL_DRA_INTERNAL_H */
