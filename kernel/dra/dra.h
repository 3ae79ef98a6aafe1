/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dra.h — the structured-parameters allocator of Dynamic Resource Allocation
 * (resource.k8s.io/v1): which devices of the published ResourceSlices satisfy
 * a ResourceClaim for a pod on a given node.
 *
 * A state holds the DeviceClasses and ResourceSlices (the objects as the API
 * serves them) and the devices in use.  Devices come from the newest
 * complete generation of each pool only (a pool's slices of its highest
 * spec.pool.generation, as many as spec.pool.resourceSliceCount says); a
 * node sees the devices of slices with its nodeName, of slices whose
 * nodeSelector matches its labels, and of allNodes slices.
 *
 * dra_allocate() finds devices for every request of a claim's spec:
 * `exactly` (deviceClassName, selectors, allocationMode ExactCount with count
 * or All) and `firstAvailable` (the first subrequest that can be satisfied),
 * with constraints[].matchAttribute across the requests they name, never a
 * device in use or one picked twice.  Class selectors are evaluated once per
 * (device, class) and cached.  The result names each device (request,
 * driver, pool, device) and the node selector the allocation binds its
 * users to (the node for node-local devices, a slice's nodeSelector, or none).
 * dra_commit() marks the devices in use, dra_release() frees them.
 *
 * Consumable capacity (KEP-5075): a device with allowMultipleAllocations is
 * shared by allocations while its capacity lasts; each of its results
 * carries a shareID and the consumedCapacity (requests' capacity.requests
 * rounded up by the capacity's requestPolicy, its default, or the whole
 * capacity), and dra_commit()/dra_release() count them in and out.
 *
 * What the allocator does not implement (adminAccess, per-device node
 * selection) is refused with -EOPNOTSUPP and a message naming the field
 * path: never ignored.
 */
#ifndef PODKERNEL_KERNEL_DRA_H
#define PODKERNEL_KERNEL_DRA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"

struct dra_state;

int dra_state_new(struct dra_state **ret);
void dra_state_free(struct dra_state *st); /* accepts NULL */

/*
 * Add or replace a DeviceClass or ResourceSlice (other kinds: -EINVAL); the
 * state keeps a reference to obj.  Remove one by kind and name (-ENOENT).
 */
int dra_state_set(struct dra_state *st, json_t *obj);
int dra_state_remove(struct dra_state *st, enum pk_kind kind, const char *name);

/* The node a claim is allocated for: its name and labels (borrowed). */
struct dra_node {
	const char *name;
	const struct pk_kv *labels;
	size_t nlabels;
};

struct dra_result {
	char *request; /* "gpu" or "nic/fast" for a subrequest */
	char *driver, *pool, *device;
	/* a share of a device with allowMultipleAllocations, else both NULL */
	char *share_id;
	json_t *consumed; /* capacity name -> quantity string (owned) */
};

struct dra_allocation {
	struct dra_result *results;
	size_t nresults;
	char *node_name;       /* all users on this node (node-local devices), or NULL */
	json_t *node_selector; /* or the nodes this selector matches (owned), or NULL */
};
void dra_allocation_clear(struct dra_allocation *a);
/* The allocation as status.allocation of a ResourceClaim (new reference). */
json_t *dra_allocation_json(const struct dra_allocation *a);
/*
 * The reverse: a ResourceClaim's status.allocation read back (devices.results
 * and nodeSelector).  0, -EINVAL when a result lacks driver, pool or device,
 * -ENOMEM.
 */
int dra_allocation_parse(const json_t *alloc, struct dra_allocation *ret);
/* Do a and b name the same devices in the same order? */
bool dra_allocation_same(const struct dra_allocation *a, const struct dra_allocation *b);
/* May a user of allocation a run on node (its node name and node selector)? */
bool dra_allocation_admits(const struct dra_allocation *a, const struct dra_node *node);

/*
 * Allocate the claim (a ResourceClaim object, or a bare ResourceClaimSpec
 * under "spec") for node.  0 and *ret; -ENOSPC when the devices do not fit,
 * -ENOENT when a DeviceClass is missing, -EINVAL when a selector does not
 * compile or evaluate, -EOPNOTSUPP for a feature not implemented: why says
 * which request and why ("request gpu: no device of class gpu.example.com
 * is free on node n1 (8 match, 8 in use)"), with field paths and, for CEL,
 * the expression and column.
 */
int dra_allocate(struct dra_state *st, const json_t *claim, const struct dra_node *node,
		 struct dra_allocation *ret, char *why, size_t whylen);
/*
 * The searches of one scheduling cycle share a budget of DRA_CYCLE_STEPS
 * steps (each search also has its own): hostile claims cost a bounded delay
 * per cycle, however many nodes and claims they are tried on.  Once it is
 * spent, dra_allocate() fails at once (-ENOSPC, said so in why) until the
 * next dra_cycle_begin().
 */
#define DRA_CYCLE_STEPS 1000000
void dra_cycle_begin(struct dra_state *st);
/*
 * The fast check of a claim that is one request for count devices of a
 * class: how many devices of class_name visible to node are free, counting
 * up to want (a shared device is free while its shares leave what a request
 * naming no capacity consumes).  -ENOENT: no such class; -EINVAL: a selector
 * of the class does not compile or evaluate (dra_allocate() says which).
 */
int dra_free_count(struct dra_state *st, const char *class_name, const struct dra_node *node,
		   int slot, size_t want);
/* The same, counting the devices of the class whether allocated or free. */
int dra_match_count(struct dra_state *st, const char *class_name, const struct dra_node *node,
		    int slot, size_t want);
/*
 * The slot of a node's own devices in the state's index (-1: none), for
 * dra_free_count (DRA_SLOT_LOOKUP: find it by node->name).  Slots hold until
 * the state's generation changes (a DeviceClass or ResourceSlice changed).
 */
#define DRA_SLOT_LOOKUP (-2)
int dra_node_slot(struct dra_state *st, const char *name);
uint64_t dra_state_generation(struct dra_state *st);
/*
 * Mark an allocation's devices in use (-EBUSY if one already is, or a
 * share's consumed capacity no longer fits), or free them.
 */
int dra_commit(struct dra_state *st, const struct dra_allocation *a);
void dra_release(struct dra_state *st, const struct dra_allocation *a);
/* Devices that count now (newest complete generations), for tests and tools. */
size_t dra_device_count(struct dra_state *st);
/* Whether a node selector (core/v1 NodeSelector) matches the node. */
bool dra_node_selector_match(const json_t *sel, const struct dra_node *node);

#endif /* PODKERNEL_KERNEL_DRA_H */
