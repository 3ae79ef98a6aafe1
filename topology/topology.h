/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topology.h — the one public header of libtopo, podkernel's shared library.
 *
 * libtopo knows the things every podkernel program agrees on: Kubernetes label
 * syntax, resource quantities, the board files that describe accelerator
 * hardware, and torus geometry with the occupancy of a torus' hosts.
 *
 * Conventions (see STYLE.md): functions that act return 0 or a negative errno;
 * predicates return bool; lookups return a pointer or NULL.  Outputs are ret_*
 * parameters, last, written only on success.  The library never prints and
 * never exits; errors meant for users come back in a caller-supplied buffer as
 * "FILE:LINE:COL: message" or a field path.  Strings returned by accessors are
 * owned by the object they come from and live as long as it does.
 */
#ifndef PODKERNEL_TOPOLOGY_H
#define PODKERNEL_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Kubernetes names and labels                                               */
/* ------------------------------------------------------------------------ */

#define TOPO_LABEL_NAME_MAX 63
#define TOPO_DNS_SUBDOMAIN_MAX 253

/* RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters. */
bool topo_dns_label_valid(const char *s);
/* RFC 1123 subdomain: dot-separated labels, at most 253 characters. */
bool topo_dns_subdomain_valid(const char *s);

/*
 * Label key "[prefix/]name": name at most 63 characters of [A-Za-z0-9._-],
 * beginning and ending alphanumeric; prefix a DNS subdomain.  On failure and
 * when why is not NULL, a sentence saying what was expected is written there.
 */
bool topo_label_key_valid(const char *key, char *why, size_t whylen);
/* Label value: empty, or at most 63 of [A-Za-z0-9._-] starting/ending alnum. */
bool topo_label_value_valid(const char *value, char *why, size_t whylen);
/*
 * Make a label value valid: characters outside the set become '-', leading and
 * trailing non-alphanumerics are dropped, the result is cut to 63.  Returns 0,
 * or -EINVAL when nothing valid is left (out then holds ""), -ENOSPC when the
 * result does not fit outlen.
 */
int topo_label_value_sanitize(const char *in, char *out, size_t outlen);

/* ------------------------------------------------------------------------ */
/* Node label and annotation keys of the contract (CONTRACT.md)               */
/* ------------------------------------------------------------------------ */

/* Published by podagent, and by `podctl board nodes` for simulated hosts. */
#define TOPO_LABEL_HOSTNAME "kubernetes.io/hostname"
#define TOPO_LABEL_NUMA_COUNT "numa.podkernel.dev/count"
#define TOPO_LABEL_ACCEL_COUNT "accelerator.podkernel.dev/count"
#define TOPO_LABEL_ACCEL_VENDOR "accelerator.podkernel.dev/vendor"
/* The accelerator's product name (PCI database), sanitized to a label value. */
#define TOPO_LABEL_ACCEL_PRODUCT "accelerator.podkernel.dev/product"
/* A node's domain at board level L is the label TOPO_LABEL_LEVEL_PREFIX "L". */
#define TOPO_LABEL_LEVEL_PREFIX "topology.podkernel.dev/"
#define TOPO_LABEL_COORDS TOPO_LABEL_LEVEL_PREFIX "coords"
/* Set by an operator on a Node: the host's index in its board's cluster. */
#define TOPO_LABEL_HOST_INDEX TOPO_LABEL_LEVEL_PREFIX "host-index"
/*
 * Torus geometry on every host of a torus board, what slice placement reads:
 * the torus the host belongs to (its domain at the board's torus level, e.g.
 * "ss1"), the torus, cube and host extents in chips ("8x8x16", "4x4x4",
 * "2x2x1") and whether the torus wraps around ("true"/"false").  With
 * TOPO_LABEL_COORDS they are the labels topo_board_torus_labels() returns.
 */
#define TOPO_LABEL_TORUS TOPO_LABEL_LEVEL_PREFIX "torus"
#define TOPO_LABEL_TORUS_SHAPE TOPO_LABEL_LEVEL_PREFIX "torus-shape"
#define TOPO_LABEL_CUBE_SHAPE TOPO_LABEL_LEVEL_PREFIX "cube-shape"
#define TOPO_LABEL_HOST_SHAPE TOPO_LABEL_LEVEL_PREFIX "host-shape"
#define TOPO_LABEL_WRAPAROUND TOPO_LABEL_LEVEL_PREFIX "wraparound"
/*
 * A PodGroup asks for a TPU slice with TOPO_ANN_SLICE_SHAPE ("4x4x8", chips
 * along x, y, z); each pod bound into the slice gets its host's position in
 * the slice (TOPO_ANN_SLICE_COORDS, "x.y.z" in chips) and its rank
 * (TOPO_ANN_WORKER_ID, x fastest, then y, then z).
 */
#define TOPO_ANN_SLICE_SHAPE "scheduling.podkernel.dev/slice-shape"
#define TOPO_ANN_SLICE_COORDS "scheduling.podkernel.dev/slice-coords"
#define TOPO_ANN_WORKER_ID "scheduling.podkernel.dev/worker-id"
/*
 * A pod without spec.schedulingGroup names its PodGroup (in its own
 * namespace) with this label; the scheduler-plugins coscheduling key is read
 * as well.  spec.schedulingGroup wins; a label naming another group is
 * invalid.
 */
#define TOPO_LABEL_POD_GROUP "scheduling.podkernel.dev/pod-group"
/* On a PodGroup or CompositePodGroup: the value of its topology key it was placed in before
 * (a repair places it there again first, when the domain has room). */
#define TOPO_ANNOTATION_HOME_DOMAIN "scheduling.podkernel.dev/home-domain"
#define TOPO_LABEL_POD_GROUP_COSCHED "scheduling.x-k8s.io/pod-group"
/* JSON array of {"pciBusId","vendorId","deviceId","numaNode"}. */
#define TOPO_ANN_DEVICES "accelerator.podkernel.dev/devices"
/* RFC 3339 time of podagent's last publish; podkerneld watches nodes carrying it. */
#define TOPO_ANN_HEARTBEAT "agent.podkernel.dev/heartbeat"
/* podagent's ICI link report (a LinkReport object as JSON). */
#define TOPO_ANN_LINKS "ici.podkernel.dev/links"
/* Comma-separated label keys podagent set (and may remove) on its Node. */
#define TOPO_ANN_AGENT_OWNED "agent.podkernel.dev/owned-labels"

/* ------------------------------------------------------------------------ */
/* PCI vendors                                                                */
/* ------------------------------------------------------------------------ */

#define TOPO_PCI_VENDOR_LABEL_MAX 8
/*
 * Value of the accelerator.podkernel.dev/vendor label for a PCI vendor ID:
 * "nvidia", "amd", "google", "intel", or the ID as 4 hex digits written into
 * buf (which is then returned).  Named vendors return a static string.
 */
const char *topo_pci_vendor_label(unsigned vendor, char buf[TOPO_PCI_VENDOR_LABEL_MAX]);

/* ------------------------------------------------------------------------ */
/* Resource quantities                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Quantities are kept as exact integers of milli-units ("500m" -> 500,
 * "2" -> 2000, "1Ki" -> 1024000).  Accepted: optional sign, digits with an
 * optional fraction, then a decimal SI suffix (m k M G T P E), a binary suffix
 * (Ki Mi Gi Ti Pi Ei) or an exponent (e3, E-2); n and u are accepted too.
 * Digits beyond a milli-unit round away from zero as Kubernetes' MilliValue()
 * does ("1u" -> 1, "-0.0001" -> -1).  The result is exact for any number of
 * digits.  -EINVAL on syntax or text over 128 characters, -ERANGE when the
 * magnitude exceeds INT64_MAX milli-units (so every "E" quantity but 0).
 */
int topo_quantity_parse(const char *s, int64_t *ret_milli);

enum topo_quantity_format {
	TOPO_QUANTITY_DECIMAL_SI, /* "500m", "64", "2k", "1500M" */
	TOPO_QUANTITY_BINARY_SI,  /* "256Gi" where exact, else decimal */
};
/* Canonical text of a quantity; -ENOSPC when buf is too small. */
int topo_quantity_format(int64_t milli, enum topo_quantity_format fmt, char *buf, size_t len);
/* The format a parsed string was written in (binary when it used Ki..Ei). */
enum topo_quantity_format topo_quantity_format_of(const char *s);

/* ------------------------------------------------------------------------ */
/* Torus geometry                                                             */
/* ------------------------------------------------------------------------ */

#define TOPO_DIMS 3

struct topo_shape {
	int dim[TOPO_DIMS]; /* x, y, z; every dim >= 1 */
};

struct topo_coord {
	int c[TOPO_DIMS];
};

/* "4x4x4", "8x8x16", "2x2x1"; -EINVAL otherwise. */
int topo_shape_parse(const char *s, struct topo_shape *ret_shape);
int topo_shape_format(const struct topo_shape *shape, char *buf, size_t len);
int64_t topo_shape_volume(const struct topo_shape *shape);
/* True when inner tiles outer exactly along every axis. */
bool topo_shape_divides(const struct topo_shape *inner, const struct topo_shape *outer);

/* Row-major index (x fastest) of a coordinate in a shape, and back. */
int64_t topo_coord_index(const struct topo_shape *shape, const struct topo_coord *c);
void topo_coord_of_index(const struct topo_shape *shape, int64_t index, struct topo_coord *ret);
bool topo_coord_in(const struct topo_shape *shape, const struct topo_coord *c);

/* The block (host, cube) holding chip c: c divided by block, per axis. */
void topo_coord_block(const struct topo_coord *c, const struct topo_shape *block,
		      struct topo_coord *ret);

/*
 * A rotation of a slice: its chip extents laid along the torus axes.  Torus
 * axis a carries slice axis axis[a], so ext.dim[a] = slice.dim[axis[a]].
 */
struct topo_rotation {
	struct topo_shape ext; /* chips along the torus axes */
	int axis[TOPO_DIMS];
};

/*
 * The distinct rotations (axis permutations, identity first) of a slice of
 * chips that tile into whole hosts of shape host and fit inside torus.
 * Writes at most 6 to ret and returns how many (0: the slice cannot be laid
 * out on that board, either because no permutation tiles into whole hosts
 * or because none fits).
 */
int topo_slice_rotations(const struct topo_shape *slice, const struct topo_shape *host,
			 const struct topo_shape *torus, struct topo_rotation ret[6]);

/* ------------------------------------------------------------------------ */
/* Torus occupancy                                                            */
/* ------------------------------------------------------------------------ */

/*
 * Which hosts (cells) of one torus are busy, with a 3-D summed-area table so
 * that "is this box free" costs eight lookups, and the free-box searches of
 * slice placement (see occupancy.c).  Cells are hosts: a torus of 8x8x16
 * chips with 2x2x1 hosts is a grid of 4x4x16 cells.  Each cell holds a count
 * of users (pods, or anything else that makes a host unavailable); a cell is
 * busy while its count is positive.  Counts change one at a time
 * (topo_occ_add); the table is refreshed lazily on the next query.  Boxes are
 * given in cells; along wrapping axes a box may cross the seam (its origin
 * is still inside the grid).  Lifecycle: topo_occ_new() -> topo_occ_add() /
 * queries -> topo_occ_free().
 */
struct topo_occ;

struct topo_box {
	struct topo_coord origin; /* cell of the box's low corner, inside the grid */
	struct topo_shape ext;	  /* cells per axis */
};

/*
 * Rank of a free box for placement, lower is better, broken first: broken
 * counts the cells of blocks (cubes) that are entirely free now and that the
 * box would use only in part, plus the whole torus when it is entirely free
 * (Slurm torus3d's fragmentation cost: a box that fits inside used blocks
 * keeps the free ones whole); exposed counts the free cells touching the
 * box's faces (busy cells and the faces of a torus without wraparound do
 * not count), so boxes pack against what is already used.  A box with
 * neither is perfect: nothing ranks better.
 */
struct topo_box_rank {
	int64_t broken;
	int64_t exposed;
};

/*
 * grid: cells per axis (each at least 1, volume at most 2^24); block: cells
 * per block (a cube), dividing grid, or NULL for none; wrap: whether the
 * torus closes along every axis.  NULL on bad arguments or ENOMEM.
 */
struct topo_occ *topo_occ_new(const struct topo_shape *grid, const struct topo_shape *block,
			      bool wrap);
void topo_occ_free(struct topo_occ *occ);
/* An independent copy (for a search with extra cells blocked); NULL on ENOMEM. */
struct topo_occ *topo_occ_dup(const struct topo_occ *occ);
const struct topo_shape *topo_occ_grid(const struct topo_occ *occ);
bool topo_occ_wrap(const struct topo_occ *occ);
/* Add delta (may be negative) to a cell's count; -EINVAL outside the grid. */
int topo_occ_add(struct topo_occ *occ, const struct topo_coord *cell, int delta);
int topo_occ_count(const struct topo_occ *occ, const struct topo_coord *cell);
int64_t topo_occ_busy_cells(const struct topo_occ *occ);
/* Bumps whenever a cell turns busy or free. */
uint64_t topo_occ_version(const struct topo_occ *occ);
/* Busy cells inside a box (wrapping where allowed); -EINVAL for a bad box. */
int64_t topo_occ_box_busy(struct topo_occ *occ, const struct topo_box *box);
/* The placement rank of a free box (its cells must be free). */
void topo_occ_box_rank(struct topo_occ *occ, const struct topo_box *box, struct topo_box_rank *ret);
/* -1, 0, 1: a ranks better, the same, worse than b. */
int topo_box_rank_cmp(const struct topo_box_rank *a, const struct topo_box_rank *b);

enum topo_box_policy {
	TOPO_BOX_BEST,	/* the best rank; ties: first extent, then first origin */
	TOPO_BOX_FIRST, /* the first free box: extents in order, origins z, y, x */
};
/*
 * Search free boxes of any of the n extents exts (cells), origins in raster
 * order (x fastest).  accept, when not NULL, vetoes candidates (e.g. a box
 * must contain given cells).  Returns 1 with the box (and its rank when
 * ret_rank is not NULL), 0 when no free box exists, -EINVAL on bad extents.
 */
int topo_occ_find_box(struct topo_occ *occ, const struct topo_shape *exts, size_t n,
		      enum topo_box_policy policy,
		      bool (*accept)(const struct topo_box *box, void *arg), void *arg,
		      struct topo_box *ret_box, struct topo_box_rank *ret_rank);
/*
 * The largest free box by cells (ties: first found, extents by increasing
 * x then y), or 0 when every cell is busy.  Cached until a cell changes.
 */
int topo_occ_largest_free_box(struct topo_occ *occ, struct topo_box *ret_box);
/*
 * Cover the cells that are busy (or free) with disjoint boxes, each grown
 * greedily from its first cell in raster order along x, then y, then z
 * (no wraparound): what `podctl board occupancy` prints.  Calls fn for each
 * until it returns non-zero, which is returned; 0 after the last; -ENOMEM.
 */
int topo_occ_cover(const struct topo_occ *occ, bool busy,
		   int (*fn)(const struct topo_box *box, void *arg), void *arg);
/*
 * Invariant checker: busy and block counts agree with the cells, and a
 * table that is not pending a refresh agrees with a recomputation.  0 or
 * -EUCLEAN with why filled.
 */
int topo_occ_check(const struct topo_occ *occ, char *why, size_t whylen);

/* ------------------------------------------------------------------------ */
/* Boards                                                                     */
/* ------------------------------------------------------------------------ */

/*
 * A board describes one kind of hardware (see the boards/ folder and README.md):
 * accelerator, chips per host, torus shapes, ICI ports and wiring, host
 * allocatable, topology levels with their node label keys, and how many
 * domains a simulated cluster has.  Lifecycle: topo_board_new() ->
 * topo_board_load_file() or topo_board_load_buffer() -> accessors ->
 * topo_board_free().  Accessors on a board that is not loaded return NULL/0.
 */
struct topo_board;

#define TOPO_ERR_MAX 512
#define TOPO_BOARD_MAX_LEVELS 6

struct topo_board *topo_board_new(void);
void topo_board_free(struct topo_board *board);
/*
 * Errors: "FILE:LINE:COL: path: message" in err.  -EINVAL bad board (file
 * over 1 MiB included), -EIO/-ENOENT/-EISDIR io, -EBUSY when already loaded.
 * A failed load leaves the board as it was.
 */
int topo_board_load_file(struct topo_board *board, const char *path, char *err, size_t errlen);
int topo_board_load_buffer(struct topo_board *board, const char *name, const char *buf, size_t len,
			   char *err, size_t errlen);

const char *topo_board_name(const struct topo_board *board);
const char *topo_board_description(const struct topo_board *board);
/* Extended resource name of the accelerator, e.g. "google.com/tpu". */
const char *topo_board_accel_resource(const struct topo_board *board);
/* PCI vendor ID (e.g. 0x1ae0) and the device IDs the board lists. */
unsigned topo_board_accel_vendor(const struct topo_board *board);
size_t topo_board_accel_device_count(const struct topo_board *board);
unsigned topo_board_accel_device(const struct topo_board *board, size_t i);
/* True when vendor:device is an accelerator by this board's ID list. */
bool topo_board_is_accel(const struct topo_board *board, unsigned vendor, unsigned device);
int topo_board_chips_per_host(const struct topo_board *board);
int topo_board_numa_per_host(const struct topo_board *board);

/* Torus shapes; has_torus is false for boards without one (GPU racks). */
bool topo_board_has_torus(const struct topo_board *board);
const struct topo_shape *topo_board_host_shape(const struct topo_board *board);
const struct topo_shape *topo_board_cube_shape(const struct topo_board *board);
const struct topo_shape *topo_board_superslice_shape(const struct topo_board *board);
bool topo_board_wraparound(const struct topo_board *board);

/* Host allocatable: resource names and quantities (milli-units). */
size_t topo_board_allocatable_count(const struct topo_board *board);
const char *topo_board_allocatable_name(const struct topo_board *board, size_t i);
int64_t topo_board_allocatable_milli(const struct topo_board *board, size_t i);

/*
 * spec.dra (optional): the DRA driver that publishes one device per chip
 * (NULL: none), and the driver of the channels published once per domain of
 * a level (the level's index; NULL and -1: none).  Shareable (spec.dra.
 * shareable: true): the chips are published as devices several allocations
 * share (consumable capacity `share`, one chip = 1, in steps of 10m).
 */
const char *topo_board_dra_driver(const struct topo_board *board);
bool topo_board_dra_shareable(const struct topo_board *board);
const char *topo_board_dra_channel_driver(const struct topo_board *board);
int topo_board_dra_channel_level(const struct topo_board *board);

/* Topology levels, outermost first, host level last. */
size_t topo_board_level_count(const struct topo_board *board);
const char *topo_board_level_name(const struct topo_board *board, size_t i);
const char *topo_board_level_key(const struct topo_board *board, size_t i);
/*
 * Domains of level i in the board's own simulated cluster, all of them (for
 * the outermost: its count; tpu-superslice: 2, 32, 512).
 */
int topo_board_level_domains(const struct topo_board *board, size_t i);

/*
 * ICI ports: links per chip, and the host's ports (the links that leave the
 * host) with their netdev names.  Port order: chips of the host shape
 * row-major (x fastest), then axes x, y, z, then direction -, +.
 */
int topo_board_ici_ports_per_chip(const struct topo_board *board);
size_t topo_board_ici_port_count(const struct topo_board *board);
const char *topo_board_ici_port_name(const struct topo_board *board, size_t i);

/* Hostname pattern ("tpu-ss{superslice}-h{host}") the agent parses, or NULL. */
const char *topo_board_hostname_pattern(const struct topo_board *board);

/*
 * A host of the board's cluster: its index (0..hosts-1), name, coordinates and
 * domain at every level, as podagent would publish them.  Domain values join
 * each level's prefix and ordinal from the outermost level ("ss1-c15",
 * "b0-r3"); the host level's domain is the host name.  Hosts are numbered
 * depth-first (all hosts of a cube, then the next cube); inside a torus the
 * ordinals of tiles are row-major, x fastest.
 */
struct topo_host {
	int64_t index;
	char name[TOPO_LABEL_NAME_MAX + 1];
	struct topo_coord coord; /* host coordinates in chip units; zero without torus */
	char coords[48];	 /* label value, e.g. "4.0.12" */
	char domain[TOPO_BOARD_MAX_LEVELS][TOPO_LABEL_NAME_MAX + 1]; /* per level */
};

/*
 * Hosts in the simulated cluster (all levels' domains multiplied out).
 * superslices sets the count of the outermost level, whatever its name; 0 or
 * less means the board's own count.  -ERANGE over 4096 outermost domains or
 * 131072 (2^17) hosts; 0 when the board is not loaded.
 */
int64_t topo_board_host_count(const struct topo_board *board, int superslices);
/*
 * Host number index of a simulated cluster; -ERANGE past the end,
 * -ENAMETOOLONG when its name or a label value would exceed 63 characters.
 */
int topo_board_host(const struct topo_board *board, int superslices, int64_t index,
		    struct topo_host *ret);

/*
 * Expected ICI wiring: for host index and port i, the peer host index and peer
 * port it must be cabled to: the port on the torus neighbour facing back, so
 * the peer of the peer is the port itself.  -ENOENT when that port is not
 * wired (edge of a torus without wraparound, board without ICI), -ERANGE when
 * host is past the end.
 */
int topo_board_ici_peer(const struct topo_board *board, int superslices, int64_t host, size_t port,
			int64_t *ret_peer_host, size_t *ret_peer_port);

/* A node label (key is a static string). */
struct topo_label {
	const char *key;
	char value[TOPO_LABEL_NAME_MAX + 1];
};
#define TOPO_TORUS_LABELS 6
/*
 * The torus labels of host h of a torus board: TOPO_LABEL_COORDS and the
 * geometry keys above.  Returns how many were written (0 for a board
 * without torus), -EINVAL when the board is not loaded.
 */
int topo_board_torus_labels(const struct topo_board *board, const struct topo_host *h,
			    struct topo_label ret[TOPO_TORUS_LABELS]);
/* True for the keys of topo_board_torus_labels(): no board level may use them. */
bool topo_label_torus_reserved(const char *key);
/*
 * True for a topology.podkernel.dev/ key that names a domain level (cube,
 * superslice, ...): not the host's coordinates, its torus geometry or its
 * host index, which are per-host facts rather than domains.
 */
bool topo_label_is_level(const char *key);

/* What a node's torus labels say (the reading side of topo_board_torus_labels). */
struct topo_torus_host {
	char torus[TOPO_LABEL_NAME_MAX + 1]; /* TOPO_LABEL_TORUS */
	struct topo_shape chips, cube, host;
	bool has_cube; /* a valid cube-shape that tiles the torus by hosts */
	bool wrap;
	struct topo_coord cell; /* host position in hosts: coords / host shape */
};
#define TOPO_TORUS_MAX_CHIPS 65536 /* chips in one torus, as the board loader allows */
/*
 * Read a node's torus labels through get (a label's value or NULL).  0, or
 * -ENOENT when the node is no torus host (a label missing), -EINVAL when the
 * labels are malformed or disagree (coordinates outside the torus or not on a
 * host boundary, a host shape that does not tile the torus, a torus over
 * TOPO_TORUS_MAX_CHIPS chips).
 */
int topo_torus_host_parse(const char *(*get)(const char *key, void *arg), void *arg,
			  struct topo_torus_host *ret);

#ifdef __cplusplus
}
#endif

#endif /* PODKERNEL_TOPOLOGY_H */
