/* SPDX-License-Identifier: Apache-2.0 */
/*
 * domain_internal.h — the inside of struct topo_domain_tree (domain.c).
 * Private to libtopo; its unit test includes it to corrupt trees on purpose
 * and see the invariant checker catch it.
 */
#ifndef PODKERNEL_TOPOLOGY_DOMAIN_INTERNAL_H
#define PODKERNEL_TOPOLOGY_DOMAIN_INTERNAL_H

#include "topology/topology.h"

/* Hostile-input limits: levels per tree, caller node indices. */
#define DOMAIN_MAX_LEVELS 16
#define DOMAIN_MAX_NODES (1 << 24)

struct domain {
	char *value;  /* NULL for the root */
	int level;    /* -1 for the root */
	int parent;   /* -1 for the root */
	int child_start, child_count;
	int node_start, node_count; /* range in tree->perm */
};

/* Open-addressing hash from (int, string) to an int. */
struct slot {
	int key;
	const char *str;
	int val; /* -1: empty */
};

struct strhash {
	struct slot *slots;
	size_t cap, used;
};

struct topo_domain_tree {
	char **keys;
	size_t nlevels;
	bool built;
	bool broken; /* a build failed half-way: only free() is left */

	struct domain *dom;
	size_t ndom, domcap;
	struct strhash by_parent; /* (parent, value) -> domain while adding */
	struct strhash by_level;  /* (level, value) -> first domain once built */

	/* Nodes: by caller index, the domain it hangs from (deepest level it has). */
	int *attach;
	size_t nattach; /* size of attach[] (max caller index + 1) */
	size_t nnodes;
	int *perm; /* caller node indices in depth-first order, once built */
	int *level_start, *level_size;
};

#endif
