/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hw.c — what hwloc says about the host: NUMA nodes with their memory,
 * packages, cores, PUs, and the PCI functions that are accelerators.
 *
 * The topology is loaded with I/O discovery on (every PCI function kept) from
 * this machine (sysfs, through hwloc's Linux backend) or from an XML export.  Accelerators are
 * classified by PCI class and the board's ID list, one per PCI function: OS devices below a
 * function (cuda0, opencl0d0, nvml0) are never looked at, so they cannot count
 * twice.  A function's NUMA node is that of its first non-I/O ancestor.
 *
 * Capacity is counted as the kubelet does: the machine's memory is MemTotal
 * of /proc/meminfo (hwloc's NUMA totals leave out memory the kernel keeps,
 * and inside a cgroup only what is allowed), and every PU of the machine
 * counts, also those outside the container's cpuset (hwloc's
 * include-disallowed flag).  An XML export is another machine: its own
 * totals stand; it is read and checked by hwloc_xml.c before hwloc parses it.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

bool agent_pci_is_accel(unsigned class_id, unsigned vendor, unsigned device,
			const struct topo_board *board)
{
	switch (class_id) {
	case 0x0302: /* 3D controller */
	case 0x0380: /* other display controller */
	case 0x1200: /* processing accelerator */
		return true;
	default:
		break;
	}
	return board && topo_board_is_accel(board, vendor, device);
}

/* OS index of the single NUMA node near obj, or -1. */
static int pci_numa(hwloc_topology_t topo, hwloc_obj_t obj)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);

	if (!anc || !anc->nodeset)
		return -1;
	if (hwloc_bitmap_weight(anc->nodeset) == 1)
		return hwloc_bitmap_first(anc->nodeset);
	/* a machine with one NUMA node puts devices under the machine object */
	if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) == 1)
		return (int)hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, 0)->os_index;
	return -1;
}

static int collect_pci(hwloc_topology_t topo, const struct topo_board *board, struct agent_hw *hw)
{
	size_t cap = 0;

	for (hwloc_obj_t o = hwloc_get_next_pcidev(topo, NULL); o;
	     o = hwloc_get_next_pcidev(topo, o)) {
		const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;
		struct agent_pci *a;

		hw->pci_count++;
		if (!agent_pci_is_accel(p->class_id, p->vendor_id, p->device_id, board))
			continue;
		if (hw->naccels == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct agent_pci *n = realloc(hw->accels, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			hw->accels = n;
			cap = ncap;
		}
		a = &hw->accels[hw->naccels++];
		memset(a, 0, sizeof(*a));
		snprintf(a->bus_id, sizeof(a->bus_id), "%04x:%02x:%02x.%01x",
			 (unsigned)p->domain & 0xffff, p->bus, p->dev, p->func & 0x7);
		a->vendor = p->vendor_id;
		a->device = p->device_id;
		a->class_id = p->class_id;
		a->numa = pci_numa(topo, o);
		/* exports made with libpciaccess carry the PCI database's name */
		if (hwloc_obj_get_info_by_name(o, "PCIDevice"))
			snprintf(a->product, sizeof(a->product), "%s",
				 hwloc_obj_get_info_by_name(o, "PCIDevice"));
	}
	return 0;
}

static int collect(hwloc_topology_t topo, const struct topo_board *board, struct agent_hw *hw)
{
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);

	hw->numa_count = n > 0 ? n : 1;
	hw->numa_memory = calloc((size_t)hw->numa_count, sizeof(*hw->numa_memory));
	if (!hw->numa_memory)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);

		hw->numa_memory[i] = o->attr ? o->attr->numanode.local_memory : 0;
		hw->memory += hw->numa_memory[i];
	}
	if (hw->memory == 0)
		hw->memory = hwloc_get_root_obj(topo)->total_memory;
	hw->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	hw->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	hw->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	return collect_pci(topo, board, hw);
}

/* MemTotal of a /proc/meminfo text, in bytes; -ENOENT when absent. */
int agent_meminfo_total(const char *path, uint64_t *ret_bytes)
{
	FILE *f = fopen(path, "re");
	char line[256];
	unsigned long long kb;
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1 && kb > 0 &&
		    kb < UINT64_MAX / 1024) {
			*ret_bytes = (uint64_t)kb * 1024;
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

int agent_hw_discover(const char *xml_path, const struct topo_board *board, struct agent_hw *ret,
		      char *err, size_t errlen)
{
	struct agent_hw hw = {0};
	hwloc_topology_t topo;
	char *xml = NULL;
	size_t xml_len = 0;
	int r;

	/* checked for size and nesting before hwloc sees it (hwloc_xml.c) */
	if (xml_path && (r = agent_hwloc_xml_read(xml_path, &xml, &xml_len, err, errlen)) < 0)
		return r;
	if (hwloc_topology_init(&topo) < 0) {
		free(xml);
		snprintf(err, errlen, "hwloc: cannot initialise a topology");
		return -ENOMEM;
	}
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	/* the whole machine, not only the cpuset this process may use */
	hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	/*
	 * The Linux backend reads PCI functions from sysfs itself; the libpciaccess
	 * component adds nothing the agent uses and leaks at every load.
	 */
	if (!xml_path)
		hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
					      "pci");
	if (xml && hwloc_topology_set_xmlbuffer(topo, xml, (int)xml_len + 1) < 0) {
		snprintf(err, errlen, "%s: hwloc cannot read XML exports", xml_path);
		r = -EINVAL;
		goto out;
	}
	if (hwloc_topology_load(topo) < 0) {
		snprintf(err, errlen, "%s: not a valid hwloc XML export",
			 xml_path ? xml_path : "hwloc");
		r = xml_path ? -EINVAL : -EIO;
		goto out;
	}
	r = collect(topo, board, &hw);
	if (r == 0 && !xml_path)
		agent_meminfo_total("/proc/meminfo", &hw.memory);
	if (r < 0) {
		snprintf(err, errlen, "hwloc: %s", strerror(-r));
		agent_hw_clear(&hw);
		goto out;
	}
	*ret = hw;
out:
	hwloc_topology_destroy(topo);
	free(xml);
	return r;
}

void agent_hw_clear(struct agent_hw *hw)
{
	if (!hw)
		return;
	free(hw->numa_memory);
	free(hw->accels);
	memset(hw, 0, sizeof(*hw));
}
