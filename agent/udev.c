/* SPDX-License-Identifier: Apache-2.0 */
/*
 * udev.c — the device manager's view of accelerators, and hotplug.
 *
 * Enumerates the pci subsystem (vendor, device and class from sysfs
 * attributes, falling back to the PCI_ID / PCI_CLASS properties), the accel
 * class (/dev/accel/accel*, mapped to its PCI parent) and VFIO groups
 * (/dev/vfio/N, mapped back through each function's iommu_group link).  The
 * result is compared with hwloc's by the report.  A udev monitor on the same
 * subsystems tells the daemon when to look again.
 */
#include <errno.h>
#include <libgen.h>
#include <libudev.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

static unsigned hex_attr(struct udev_device *dev, const char *attr, bool *ok)
{
	const char *s = udev_device_get_sysattr_value(dev, attr);
	char *end;
	unsigned long v;

	*ok = false;
	if (!s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 16);
	if (errno || end == s)
		return 0;
	*ok = true;
	return (unsigned)v;
}

/* vendor, device and 16-bit class of a pci device; false when unknown. */
static bool pci_ids(struct udev_device *dev, unsigned *vendor, unsigned *device, unsigned *class_id)
{
	bool okv, okd, okc;
	const char *id, *cls;

	*vendor = hex_attr(dev, "vendor", &okv);
	*device = hex_attr(dev, "device", &okd);
	*class_id = hex_attr(dev, "class", &okc) >> 8;
	if (okv && okd && okc)
		return true;
	/* removed devices have no attributes left: use the event's properties */
	id = udev_device_get_property_value(dev, "PCI_ID");
	cls = udev_device_get_property_value(dev, "PCI_CLASS");
	if (!id || !cls || sscanf(id, "%x:%x", vendor, device) != 2)
		return false;
	*class_id = (unsigned)(strtoul(cls, NULL, 16) >> 8);
	return true;
}

static int push_pci(struct agent_udev_info *info, size_t *cap, const struct agent_pci *p)
{
	if (info->naccels == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct agent_pci *n = realloc(info->accels, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		info->accels = n;
		*cap = ncap;
	}
	info->accels[info->naccels++] = *p;
	return 0;
}

static struct agent_pci *find_accel(struct agent_udev_info *info, const char *bus_id)
{
	for (size_t i = 0; i < info->naccels; i++)
		if (strcmp(info->accels[i].bus_id, bus_id) == 0)
			return &info->accels[i];
	return NULL;
}

static void read_iommu_group(struct udev_device *dev, struct agent_pci *p)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/iommu_group", udev_device_get_syspath(dev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	snprintf(p->vfio_group, sizeof(p->vfio_group), "/dev/vfio/%.40s", basename(target));
}

typedef int (*scan_fn)(struct udev_device *dev, struct agent_udev_info *info, void *arg);

static int scan_subsystem(struct udev *udev, const char *subsystem, scan_fn fn,
			  struct agent_udev_info *info, void *arg)
{
	struct udev_enumerate *e = udev_enumerate_new(udev);
	struct udev_list_entry *entry;
	int r = 0;

	if (!e)
		return -ENOMEM;
	if (udev_enumerate_add_match_subsystem(e, subsystem) < 0 ||
	    udev_enumerate_scan_devices(e) < 0) {
		udev_enumerate_unref(e);
		return -EIO;
	}
	udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e))
	{
		struct udev_device *dev =
		    udev_device_new_from_syspath(udev, udev_list_entry_get_name(entry));

		if (!dev)
			continue;
		r = fn(dev, info, arg);
		udev_device_unref(dev);
		if (r < 0)
			break;
	}
	udev_enumerate_unref(e);
	return r;
}

struct pci_scan {
	const struct topo_board *board;
	size_t cap;
};

static int scan_pci(struct udev_device *dev, struct agent_udev_info *info, void *arg)
{
	struct pci_scan *s = arg;
	struct agent_pci p = {.numa = -1};
	const char *numa;

	info->pci_count++;
	if (!pci_ids(dev, &p.vendor, &p.device, &p.class_id) ||
	    !agent_pci_is_accel(p.class_id, p.vendor, p.device, s->board))
		return 0;
	snprintf(p.bus_id, sizeof(p.bus_id), "%s", udev_device_get_sysname(dev));
	/* udevd stores the hwdb's names in its database (20-pci-vendor-model.rules) */
	if (udev_device_get_property_value(dev, "ID_MODEL_FROM_DATABASE"))
		snprintf(p.product, sizeof(p.product), "%s",
			 udev_device_get_property_value(dev, "ID_MODEL_FROM_DATABASE"));
	numa = udev_device_get_sysattr_value(dev, "numa_node");
	if (numa)
		p.numa = atoi(numa) >= 0 ? atoi(numa) : -1;
	read_iommu_group(dev, &p);
	return push_pci(info, &s->cap, &p);
}

static int scan_accel(struct udev_device *dev, struct agent_udev_info *info, void *arg)
{
	struct udev_device *pci = udev_device_get_parent_with_subsystem_devtype(dev, "pci", NULL);
	const char *node = udev_device_get_devnode(dev);
	struct agent_pci *p;

	(void)arg;
	info->accel_nodes++;
	if (!pci || !node)
		return 0;
	p = find_accel(info, udev_device_get_sysname(pci));
	if (p)
		snprintf(p->accel_node, sizeof(p->accel_node), "%s", node);
	return 0;
}

static int scan_vfio(struct udev_device *dev, struct agent_udev_info *info, void *arg)
{
	const char *name = udev_device_get_sysname(dev);

	(void)arg;
	if (name && strcmp(name, "vfio") != 0)
		info->vfio_groups++;
	return 0;
}

/* An IOMMU group is a VFIO group only when its /dev/vfio/N device exists. */
static void keep_existing_groups(struct udev *udev, struct agent_udev_info *info)
{
	for (size_t i = 0; i < info->naccels; i++) {
		struct agent_pci *p = &info->accels[i];
		struct udev_device *g;

		if (!p->vfio_group[0])
			continue;
		g = udev_device_new_from_subsystem_sysname(udev, "vfio",
							   p->vfio_group + strlen("/dev/vfio/"));
		if (!g)
			p->vfio_group[0] = '\0';
		udev_device_unref(g);
	}
}

int agent_udev_discover(const struct topo_board *board, struct agent_udev_info *ret,
			struct pk_errors *warnings)
{
	struct agent_udev_info info = {0};
	struct pci_scan s = {.board = board};
	struct udev *udev = udev_new();
	int r;

	if (!udev) {
		pk_errors_add(warnings, "udev: cannot connect to the device manager");
		*ret = info;
		return 0;
	}
	r = scan_subsystem(udev, "pci", scan_pci, &info, &s);
	if (r == 0)
		r = scan_subsystem(udev, "accel", scan_accel, &info, NULL);
	if (r == 0)
		r = scan_subsystem(udev, "vfio", scan_vfio, &info, NULL);
	if (r == 0)
		keep_existing_groups(udev, &info);
	udev_unref(udev);
	if (r == -ENOMEM) {
		agent_udev_clear(&info);
		return r;
	}
	if (r < 0)
		pk_errors_add(warnings, "udev: enumeration failed: %s", strerror(-r));
	else if (info.pci_count == 0)
		pk_errors_add(warnings, "udev: no PCI devices visible (no /sys?)");
	info.available = r == 0 && info.pci_count > 0;
	*ret = info;
	return 0;
}

void agent_udev_clear(struct agent_udev_info *info)
{
	if (!info)
		return;
	free(info->accels);
	memset(info, 0, sizeof(*info));
}

/* ---- hotplug monitor ------------------------------------------------------ */

struct agent_udev_monitor {
	struct udev *udev;
	struct udev_monitor *mon;
};

int agent_udev_monitor_new(struct agent_udev_monitor **ret)
{
	struct agent_udev_monitor *m = calloc(1, sizeof(*m));
	static const char *const subsystems[] = {"pci", "accel", "vfio"};

	if (!m)
		return -ENOMEM;
	m->udev = udev_new();
	if (m->udev)
		m->mon = udev_monitor_new_from_netlink(m->udev, "udev");
	if (!m->mon) {
		agent_udev_monitor_free(m);
		return -EIO;
	}
	for (size_t i = 0; i < 3; i++)
		udev_monitor_filter_add_match_subsystem_devtype(m->mon, subsystems[i], NULL);
	if (udev_monitor_enable_receiving(m->mon) < 0) {
		agent_udev_monitor_free(m);
		return -EIO;
	}
	*ret = m;
	return 0;
}

int agent_udev_monitor_fd(const struct agent_udev_monitor *m)
{
	return m ? udev_monitor_get_fd(m->mon) : -1;
}

static bool event_relevant(struct udev_device *dev, const struct topo_board *board)
{
	const char *subsystem = udev_device_get_subsystem(dev);
	unsigned vendor, device, class_id;

	if (!subsystem || strcmp(subsystem, "pci") != 0)
		return true; /* accel and vfio devices always matter */
	if (!pci_ids(dev, &vendor, &device, &class_id))
		return true; /* cannot tell: look again */
	return agent_pci_is_accel(class_id, vendor, device, board);
}

int agent_udev_monitor_drain(struct agent_udev_monitor *m, const struct topo_board *board,
			     bool *ret_relevant)
{
	struct udev_device *dev;
	bool relevant = false;

	if (!m)
		return -EINVAL;
	while ((dev = udev_monitor_receive_device(m->mon))) {
		if (event_relevant(dev, board))
			relevant = true;
		udev_device_unref(dev);
	}
	*ret_relevant = relevant;
	return 0;
}

void agent_udev_monitor_free(struct agent_udev_monitor *m)
{
	if (!m)
		return;
	udev_monitor_unref(m->mon);
	udev_unref(m->udev);
	free(m);
}

int agent_pci_product(unsigned vendor, unsigned device, char *buf, size_t len)
{
	struct udev *udev = udev_new();
	struct udev_hwdb *hwdb = udev ? udev_hwdb_new(udev) : NULL;
	struct udev_list_entry *e;
	char modalias[64];
	int r = -ENOENT;

	snprintf(modalias, sizeof(modalias), "pci:v%08Xd%08X", vendor & 0xffff, device & 0xffff);
	udev_list_entry_foreach(e, hwdb ? udev_hwdb_get_properties_list_entry(hwdb, modalias, 0)
					: NULL)
	{
		if (strcmp(udev_list_entry_get_name(e), "ID_MODEL_FROM_DATABASE") == 0 &&
		    udev_list_entry_get_value(e)) {
			snprintf(buf, len, "%s", udev_list_entry_get_value(e));
			r = 0;
		}
	}
	udev_hwdb_unref(hwdb);
	udev_unref(udev);
	return r;
}
