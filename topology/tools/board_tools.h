/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_tools.h — the pieces of `podctl board` that tests call directly:
 * the Node objects of a board's simulated cluster and the summary text.
 */
#ifndef PODKERNEL_TOPOLOGY_TOOLS_BOARD_TOOLS_H
#define PODKERNEL_TOPOLOGY_TOOLS_BOARD_TOOLS_H

#include <jansson.h>
#include <stdio.h>

#include "topology/topology.h"


/*
 * The v1 Node podagent would publish for host index of a cluster of
 * superslices outermost domains (0: the board's count): labels, capacity and
 * allocatable.  Returns 0 or -errno (-ERANGE past the last host).
 */
int board_node_json(const struct topo_board *board, int superslices, int64_t index,
		    json_t **ret_node);
/* Every Node of the cluster, in host order, as a JSON array. */
int board_nodes_json(const struct topo_board *board, int superslices, json_t **ret_items);

/* The human summary of `podctl board show`. */
int board_show(FILE *f, const struct topo_board *board, int superslices);

#endif
