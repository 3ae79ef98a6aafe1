/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slice-internal.h — the torus occupancy index of slice placement (slice.c).
 * Private to kernel/sched; its unit test includes it to corrupt the index on
 * purpose and see the snapshot's invariant checker catch it.
 */
#ifndef PODKERNEL_KERNEL_SCHED_SLICE_INTERNAL_H
#define PODKERNEL_KERNEL_SCHED_SLICE_INTERNAL_H

#include "kernel/sched/sched-internal.h"
#include "topology/topology.h"

#define SLICE_FILTER_RETRIES 64 /* hosts a search may block for failed filters */

struct sc_torus {
	char *name;
	struct topo_shape chips, host, grid;
	bool wrap;
	struct topo_occ *occ;
	int *cell_node; /* per cell: node index, -1 for a missing host */
	int nlive;	/* nodes mapped into this torus */
	/* the last unrestricted search, valid while the grid's version is cver */
	bool cvalid;
	uint64_t cver;
	struct topo_shape cext[6];
	size_t cn;
	int cfound;
	struct topo_box cbox;
	struct topo_box_rank crank;
};

struct sc_slices {
	struct sc_torus *t;
	int nt;
	size_t nnodes;
	int *node_torus;     /* per node: torus index or -1 */
	int *node_cell;	     /* per node: cell index in its torus */
	bool *blocked;	     /* per node: counts as busy for good (cordoned) */
	unsigned char *mark; /* per node scratch, zero between uses */
	int *scope;	     /* per torus scratch: nodes in scope */
};

#endif
