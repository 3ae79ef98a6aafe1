/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board-internal.h — the inside of struct topo_board, shared by board.c (the
 * accessors, host enumeration and ICI wiring) and board_yaml.c (the loader).
 * Private to libtopo; everything outside uses topology.h.
 */
#ifndef PODKERNEL_TOPOLOGY_BOARD_INTERNAL_H
#define PODKERNEL_TOPOLOGY_BOARD_INTERNAL_H

#include "topology/topology.h"

/* Limits for hostile board files. */
#define BOARD_MAX_BYTES (1024 * 1024)
#define BOARD_MAX_LIST 256	  /* device IDs, ports, allocatable entries */
#define BOARD_MAX_STRING 1024	  /* any scalar */
#define BOARD_MAX_COUNT 4096	  /* domains of a level per parent domain */
#define BOARD_MAX_HOSTS (1 << 17) /* hosts in a simulated cluster */
#define BOARD_MAX_CHIPS (1 << 16) /* chips in one superslice torus */
#define BOARD_MAX_CHIPS_PER_HOST 64
#define BOARD_MAX_NUMA 64
#define BOARD_IFNAME_MAX 15	/* IFNAMSIZ - 1 */
#define BOARD_MAX_FLOW_DEPTH 32 /* [ and { nesting */

/* Torus shapes a level can be tiled by. */
enum board_shape {
	BOARD_SHAPE_NONE = -1,
	BOARD_SHAPE_SUPERSLICE,
	BOARD_SHAPE_CUBE,
	BOARD_SHAPE_HOST,
	_BOARD_SHAPE_MAX,
};

enum board_shape topo__board_shape_from_string(const char *s);

struct board_level {
	char *name;   /* "superslice", also the hostname placeholder {superslice} */
	char *key;    /* node label key */
	char *prefix; /* label values are prefix + ordinal, joined by '-' */
	enum board_shape shape;
	int count;     /* domains per parent domain (outermost: in the cluster) */
	int64_t hosts; /* hosts inside one domain of this level */
};

/* One ICI port of a host: which chip, axis and direction it leaves from. */
struct board_port {
	char *name;
	int chip; /* chip index in the host shape, row-major */
	int axis; /* 0..2 */
	int dir;  /* -1 or +1 */
};

struct topo_board {
	bool loaded;
	char *name;
	char *description;

	char *resource;
	unsigned vendor;
	unsigned *devices;
	size_t ndevices;
	int chips_per_host;
	int numa;

	bool has_torus;
	bool wrap;
	struct topo_shape shapes[_BOARD_SHAPE_MAX];

	char **alloc_names;
	int64_t *alloc_milli;
	size_t nalloc;

	struct board_level levels[TOPO_BOARD_MAX_LEVELS];
	size_t nlevels;
	int torus_level; /* first level tiled by the superslice torus, or -1 */

	int ports_per_chip;
	struct board_port *ports;
	size_t nports;

	char *hostname_pattern;

	/* spec.dra: the DRA driver of the chips, and of a level's channels */
	char *dra_driver;
	bool dra_shareable;	  /* spec.dra.shareable: devices shared by fractions */
	char *dra_channel_driver; /* NULL: no channels */
	int dra_channel_level;
};

/* Release everything a load filled in and return the board to "new". */
void topo__board_reset(struct topo_board *board);

/*
 * Work out what the loader does not read: hosts per level, the torus level,
 * the ports of a host.  Fills err with a message on inconsistency (without a
 * position; the loader adds it) and returns -EINVAL.
 */
int topo__board_finish(struct topo_board *board, char *err, size_t errlen);

/* Number of ICI ports a host has by its shape (the length ici.ports must have). */
size_t topo__board_host_port_count(const struct topo_board *board);
/* The (chip, axis, dir) of host port number i, in port order. */
int topo__board_host_port(const struct topo_board *board, size_t i, struct board_port *ret);

#endif
