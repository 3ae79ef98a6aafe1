/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-slice.h — TPU slices (slice.c): the torus occupancy index, an
 * extension of the snapshot that sc_slices_register() adds, and through it
 * the placement of slice-shape leaves.  A leaf with a slice-shape annotation
 * places its pods as one free box of hosts of one torus (every strategy's
 * leaf placement hands it over through the snapshot's extension); the index
 * hears of every pod the snapshot adds to or takes from a node.  Private to
 * kernel/sched; its unit test reads the index to corrupt it on purpose and
 * see the snapshot's invariant checker catch it.
 */
#ifndef PODKERNEL_KERNEL_SCHED_SLICE_H
#define PODKERNEL_KERNEL_SCHED_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/sched/sched-snapshot.h"
#include "topology/topology.h"

/* Register the index with a snapshot (pk_sched_new): 0 or -E2BIG. */
int sc_slices_register(struct sc_snapshot *snap);
/* The index itself, built on first use; NULL on ENOMEM or when not registered. */
struct sc_slices *sc_snapshot_slices(struct sc_snapshot *snap);

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
