/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pci.c — names podkernel publishes for PCI vendors.  The value of the
 * accelerator.podkernel.dev/vendor label is one of a few well-known names, or
 * the vendor ID as four hex digits; podagent (from real hardware) and the
 * board tools (from a board file) both use this one table so that a simulated
 * node and a real one carry the same label.
 */
#include <stdio.h>

#include "topology/topology.h"

static const struct {
	unsigned id;
	const char *name;
} vendor_names[] = {
    {0x10de, "nvidia"}, {0x1002, "amd"}, {0x1022, "amd"}, {0x1ae0, "google"}, {0x8086, "intel"},
};

const char *topo_pci_vendor_label(unsigned vendor, char buf[TOPO_PCI_VENDOR_LABEL_MAX])
{
	for (size_t i = 0; i < sizeof(vendor_names) / sizeof(vendor_names[0]); i++)
		if (vendor_names[i].id == vendor)
			return vendor_names[i].name;
	snprintf(buf, TOPO_PCI_VENDOR_LABEL_MAX, "%04x", vendor & 0xffff);
	return buf;
}
