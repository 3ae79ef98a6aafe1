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
	/*
	 * Consumable capacity (KEP-5075): a device with allowMultipleAllocations
	 * is shared; per capacity (parallel to caps[]) its request policy and
	 * what the committed shares consume of it.
	 */
	bool multi;
	struct dra_policy *pol;
	int64_t *consumed;
};

#define DRA_MAX_VALID_VALUES 10 /* requestPolicy.validValues (upstream's limit) */

/* A capacity's requestPolicy (KEP-5075), quantities in milli-units. */
struct dra_policy {
	const char *key; /* the capacity's name as the slice writes it (borrowed) */
	int64_t value;
	int fmt; /* enum topo_quantity_format of the value as written */
	bool has_default, has_range, has_max, has_values;
	int64_t def, min, max, step; /* step 0: none */
	int64_t values[DRA_MAX_VALID_VALUES];
	size_t nvalues;
};

/* A request's capacity.requests, read by the allocator. */
#define DRA_MAX_CAP_REQ 32
struct dra_cap_req {
	const char *name[DRA_MAX_CAP_REQ];
	int64_t milli[DRA_MAX_CAP_REQ];
	size_t n;
};

/* Read capacity cap (its name key, its value in milli-units) into p. */
void dra_read_policy(struct dra_policy *p, const char *key, int64_t value, const json_t *cap);
/*
 * What a request consumes of device d, per capacity (ret[ncaps]): the
 * requested amount rounded up by the policy, the policy's default, or the
 * whole capacity.  false when the device cannot serve the request (a
 * requested capacity it lacks, an amount the policy does not allow or more
 * than the capacity).
 */
bool dra_consumption(const struct dra_device *d, const struct dra_cap_req *q, int64_t *ret);
/* Recount what device i's committed shares consume (from st->used), and its DRA_NO_DEFAULT. */
void dra_recount(struct dra_state *st, size_t i);
/* A share ID (UUID form) not yet used on the device with key k. */
void dra_share_id(struct dra_state *st, const char *k, char buf[37]);

struct dra_class {
	const char *name;
	struct cel_program **sel;
	size_t nsel;
	char *err; /* a selector that does not compile: "DeviceClass x: spec.selectors[0]..." */
};

/*
 * A device's inuse[] bits: allocated whole, or (a shared device) its shares
 * leave less than a request that names no capacity consumes.
 */
enum { DRA_WHOLE = 1, DRA_NO_DEFAULT = 2 };

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
	uint8_t *inuse;	    /* DRA_WHOLE | DRA_NO_DEFAULT */
	long cycle_steps;   /* search steps of this scheduling cycle (DRA_CYCLE_STEPS) */
	uint64_t share_seq; /* share IDs handed out */
};

/*
 * Devices in use: used maps "driver/pool/device" to true (a device allocated
 * whole) or, for a shared device, to {shareID: {capacity: quantity}}.
 * Keep inuse[] (and a shared device's consumed[]) in step with used: key k
 * was marked (on) or freed.
 */
void dra_note_use(struct dra_state *st, const char *k, bool on);

/* Rebuild the device table and classes after a change; 0 or -ENOMEM. */
int dra_state_rebuild(struct dra_state *st);
/* Free the first n devices of an allocation. */
void dra_release_n(struct dra_state *st, const struct dra_allocation *a, size_t n);

#endif /* PODKERNEL_KERNEL_DRA_INTERNAL_H */
