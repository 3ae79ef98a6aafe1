/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c — one discovery pass: hwloc, udev and netlink, then the labels.
 *
 * hwloc is the authority for NUMA and for accelerators whenever it saw PCI
 * devices; udev's list stands in when hwloc has no I/O view (containers
 * without /sys/bus/pci), and otherwise adds the /dev/accel and /dev/vfio
 * nodes and is compared with hwloc's list, each difference becoming a
 * warning and an entry of the disagreement annotation.  A source that cannot
 * be read is a warning: the agent publishes what it found.  The board, when
 * given, adds accelerator IDs, the expected chip and port counts, and the
 * topology labels of the host's place in the cluster.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

static const struct agent_pci *find_bus(const struct agent_pci *v, size_t n, const char *bus)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].bus_id, bus) == 0)
			return &v[i];
	return NULL;
}

static void compare_one_way(json_t *out, const struct agent_pci *a, size_t na, const char *aname,
			    const struct agent_pci *b, size_t nb, const char *bname, bool both)
{
	char msg[256];

	for (size_t i = 0; i < na; i++) {
		const struct agent_pci *o = find_bus(b, nb, a[i].bus_id);

		if (!o) {
			snprintf(msg, sizeof(msg), "%s %04x:%04x: seen by %s, not by %s",
				 a[i].bus_id, a[i].vendor, a[i].device, aname, bname);
			json_array_append_new(out, json_string(msg));
		} else if (both && (o->vendor != a[i].vendor || o->device != a[i].device)) {
			snprintf(msg, sizeof(msg), "%s: %s says %04x:%04x, %s says %04x:%04x",
				 a[i].bus_id, aname, a[i].vendor, a[i].device, bname, o->vendor,
				 o->device);
			json_array_append_new(out, json_string(msg));
		} else if (both && o->numa >= 0 && a[i].numa >= 0 && o->numa != a[i].numa) {
			snprintf(msg, sizeof(msg), "%s: %s says NUMA node %d, %s says %d",
				 a[i].bus_id, aname, a[i].numa, bname, o->numa);
			json_array_append_new(out, json_string(msg));
		}
	}
}

json_t *agent_compare_accels(const struct agent_pci *a, size_t na, const char *aname,
			     const struct agent_pci *b, size_t nb, const char *bname)
{
	json_t *out = json_array();

	if (!out)
		return NULL;
	compare_one_way(out, a, na, aname, b, nb, bname, true);
	compare_one_way(out, b, nb, bname, a, na, aname, false);
	return out;
}

/* Copy udev's device nodes onto hwloc's entries of the same function. */
static void merge_udev_nodes(struct agent_hw *hw, const struct agent_udev_info *u)
{
	for (size_t i = 0; i < hw->naccels; i++) {
		const struct agent_pci *o = find_bus(u->accels, u->naccels, hw->accels[i].bus_id);

		if (!o)
			continue;
		memcpy(hw->accels[i].accel_node, o->accel_node, sizeof(o->accel_node));
		memcpy(hw->accels[i].vfio_group, o->vfio_group, sizeof(o->vfio_group));
		if (o->product[0])
			memcpy(hw->accels[i].product, o->product, sizeof(o->product));
	}
}

static void choose_accels(struct agent_report *r, const char *hwloc_xml)
{
	json_t *diff;

	if (r->hw.pci_count > 0) {
		r->accels = r->hw.accels;
		r->naccels = r->hw.naccels;
		r->accel_source = "hwloc";
	} else if (r->udev.available) {
		r->accels = r->udev.accels;
		r->naccels = r->udev.naccels;
		r->accel_source = "udev";
		pk_errors_add(&r->warnings, "hwloc saw no PCI devices: accelerators from udev");
	} else {
		r->accel_source = "none";
		pk_errors_add(&r->warnings, "no PCI view (hwloc nor udev): no accelerators");
	}
	/* an XML export describes another machine: nothing to compare */
	if (hwloc_xml || r->hw.pci_count == 0 || !r->udev.available)
		return;
	merge_udev_nodes(&r->hw, &r->udev);
	diff = agent_compare_accels(r->hw.accels, r->hw.naccels, "hwloc", r->udev.accels,
				    r->udev.naccels, "udev");
	for (size_t i = 0; diff && i < json_array_size(diff); i++) {
		pk_errors_add(&r->warnings, "discovery disagreement: %s",
			      json_string_value(json_array_get(diff, i)));
		json_array_append(r->disagreement, json_array_get(diff, i));
	}
	json_decref(diff);
}

/* The vendor most accelerators have (the board's on a tie). */
static unsigned main_vendor(const struct agent_report *r, const struct topo_board *board)
{
	unsigned best = 0;
	size_t best_n = 0;

	for (size_t i = 0; i < r->naccels; i++) {
		size_t n = 0;

		for (size_t j = 0; j < r->naccels; j++)
			n += r->accels[j].vendor == r->accels[i].vendor;
		if (n > best_n || (n == best_n && board &&
				   r->accels[i].vendor == topo_board_accel_vendor(board))) {
			best = r->accels[i].vendor;
			best_n = n;
		}
	}
	return best;
}

/* Words joined by single dashes ("GH100 [H100 SXM5 80GB]" -> "GH100-H100-SXM5-80GB"). */
static int words_label(const char *in, char *out, size_t outlen)
{
	char joined[256];
	size_t n = 0;

	for (const char *p = in; *p && n + 2 < sizeof(joined); p++) {
		bool word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_';

		if (word)
			joined[n++] = *p;
		else if (n > 0 && joined[n - 1] != '-')
			joined[n++] = '-';
	}
	joined[n] = '\0';
	return topo_label_value_sanitize(joined, out, outlen);
}

/*
 * The product name of the main vendor's first accelerator (the PCI
 * database's, as udev or hwloc gave it, else the hwdb), as a label value:
 * "GH100 [H100 SXM5 80GB]" becomes "GH100-H100-SXM5-80GB".
 */
static void product_label(struct agent_report *r, unsigned vendor)
{
	char clean[TOPO_LABEL_NAME_MAX + 1], name[128] = "";

	for (size_t i = 0; i < r->naccels; i++) {
		const struct agent_pci *a = &r->accels[i];
		const char *product = a->product;

		if (a->vendor != vendor)
			continue;
		if (!product[0] && agent_pci_product(a->vendor, a->device, name, sizeof(name)) == 0)
			product = name;
		if (product[0] && words_label(product, clean, sizeof(clean)) == 0 && clean[0])
			agent_labels_set(&r->labels, TOPO_LABEL_ACCEL_PRODUCT, clean, &r->warnings);
		return;
	}
}

static void board_checks(struct agent_report *r, const struct topo_board *board)
{
	size_t nports = topo_board_ici_port_count(board), missing = 0;
	int chips = topo_board_chips_per_host(board);
	char names[4 * (TOPO_LABEL_NAME_MAX + 2) + 1] = "";
	size_t len = 0;

	if (chips > 0 && (size_t)chips != r->naccels)
		pk_errors_add(&r->warnings,
			      "board %s: expected %d accelerators per host, found %zu",
			      topo_board_name(board), chips, r->naccels);
	if (!r->links.available)
		return;
	for (size_t i = 0; i < nports; i++) {
		const char *port = topo_board_ici_port_name(board, i);
		bool found = false;

		for (size_t j = 0; j < r->links.n && !found; j++)
			found = strcmp(r->links.v[j].name, port) == 0;
		if (found)
			continue;
		if (missing++ < 4)
			len += snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
					port);
	}
	if (missing)
		pk_errors_add(&r->warnings, "board %s: %zu of %zu ICI ports not found: %s%s",
			      topo_board_name(board), missing, nports, names,
			      missing > 4 ? ", ..." : "");
}

/* {"node": index} of the ICI peers whose Node published its host index. */
static json_t *known_peers(const struct agent_report *r, const struct agent_config *cfg)
{
	json_t *peers;

	if (!cfg->peer_index || !r->links.available)
		return NULL;
	peers = json_object();
	for (size_t i = 0; peers && i < r->links.n; i++) {
		const char *peer = r->links.v[i].peer, *slash = strchr(peer, '/');
		char host[sizeof(r->links.v[i].peer)];
		int64_t idx;

		if (!slash)
			continue;
		snprintf(host, sizeof(host), "%.*s", (int)(slash - peer), peer);
		if (!json_object_get(peers, host) &&
		    cfg->peer_index(cfg->lookup_arg, host, &idx) == 0)
			json_object_set_new(peers, host, json_integer(idx));
	}
	return peers;
}

static int compute_labels(struct agent_report *r, const struct agent_config *cfg)
{
	const struct topo_board *board = cfg->board;
	struct agent_labels *l = &r->labels;
	struct agent_id_hints hints = {.host_index = cfg->host_index, .links = &r->links};
	json_t *peers;
	char buf[64];
	char err[TOPO_ERR_MAX];
	int q;

	agent_labels_set(l, TOPO_LABEL_HOSTNAME, r->node_name, &r->warnings);
	if (r->hw.numa_count > 0) {
		snprintf(buf, sizeof(buf), "%d", r->hw.numa_count);
		agent_labels_set(l, TOPO_LABEL_NUMA_COUNT, buf, &r->warnings);
	}
	snprintf(buf, sizeof(buf), "%zu", r->naccels);
	agent_labels_set(l, TOPO_LABEL_ACCEL_COUNT, buf, &r->warnings);
	if (r->naccels > 0) {
		char vbuf[TOPO_PCI_VENDOR_LABEL_MAX];

		agent_labels_set(l, TOPO_LABEL_ACCEL_VENDOR,
				 topo_pci_vendor_label(main_vendor(r, board), vbuf), &r->warnings);
		product_label(r, main_vendor(r, board));
	}
	if (!board) {
		if (cfg->host_index >= 0)
			pk_errors_add(&r->warnings,
				      "--host-index without --board: no topology labels");
		return 0;
	}
	board_checks(r, board);
	hints.peers = peers = cfg->host_index < 0 ? known_peers(r, cfg) : NULL;
	if (cfg->host_index < 0 && cfg->node_label)
		hints.label = cfg->node_label(cfg->lookup_arg, r->node_name, TOPO_LABEL_HOST_INDEX);
	q = agent_identity_resolve(board, &hints, r->node_name, &r->id, err, sizeof(err));
	json_decref(peers);
	if (q < 0) {
		r->id.index = -1;
		pk_errors_add(&r->warnings, "board %s: %s", topo_board_name(board), err);
		return 0;
	}
	for (size_t i = 0; i < topo_board_level_count(board) && i < TOPO_BOARD_MAX_LEVELS; i++) {
		const char *key = topo_board_level_key(board, i);

		/* the host level's key is the node name's, which stays the node's */
		if (key && r->id.host.domain[i][0] && strcmp(key, TOPO_LABEL_HOSTNAME) != 0)
			agent_labels_set(l, key, r->id.host.domain[i], &r->warnings);
	}
	struct topo_label tl[TOPO_TORUS_LABELS];
	int ntl = topo_board_torus_labels(board, &r->id.host, tl);

	for (int i = 0; i < ntl; i++)
		agent_labels_set(l, tl[i].key, tl[i].value, &r->warnings);
	return 0;
}

/*
 * Labels other tools publish, for users who already select on them (README,
 * "Compatible labels"): NVIDIA GPU Feature Discovery's count, product and
 * presence on NVIDIA hosts; GKE's TPU topology (the torus the host belongs
 * to) on torus boards.  Values come from podkernel's own discovery.
 */
static void compatible_labels(struct agent_report *r, const struct agent_config *cfg)
{
	const struct topo_board *board = cfg->board;
	const char *product = agent_labels_get(&r->labels, TOPO_LABEL_ACCEL_PRODUCT);
	char buf[64];

	if ((cfg->compat & AGENT_COMPAT_NVIDIA) && r->naccels > 0 &&
	    main_vendor(r, board) == 0x10de) {
		size_t n = 0;

		for (size_t i = 0; i < r->naccels; i++)
			n += r->accels[i].vendor == 0x10de;
		snprintf(buf, sizeof(buf), "%zu", n);
		agent_labels_set(&r->labels, "nvidia.com/gpu.present", "true", &r->warnings);
		agent_labels_set(&r->labels, "nvidia.com/gpu.count", buf, &r->warnings);
		if (product)
			agent_labels_set(&r->labels, "nvidia.com/gpu.product", product,
					 &r->warnings);
	}
	if ((cfg->compat & AGENT_COMPAT_GKE) && board && topo_board_has_torus(board) &&
	    r->id.index >= 0 &&
	    topo_shape_format(topo_board_superslice_shape(board), buf, sizeof(buf)) == 0)
		agent_labels_set(&r->labels, "cloud.google.com/gke-tpu-topology", buf,
				 &r->warnings);
}

int agent_report_build(const struct agent_config *cfg, struct agent_report *ret, char *err,
		       size_t errlen)
{
	struct agent_report r = {.id = {.index = -1}};
	char herr[512];
	int q;

	if (!cfg->node_name || !topo_dns_subdomain_valid(cfg->node_name)) {
		snprintf(err, errlen,
			 "node name \"%.253s\": expected a DNS subdomain "
			 "(lowercase letters, digits, '-', '.')",
			 cfg->node_name ? cfg->node_name : "");
		return -EINVAL;
	}
	snprintf(r.node_name, sizeof(r.node_name), "%s", cfg->node_name);
	r.disagreement = json_array();
	if (!r.disagreement)
		return -ENOMEM;
	q = agent_hw_discover(cfg->hwloc_xml, cfg->board, &r.hw, herr, sizeof(herr));
	if (q < 0 && cfg->hwloc_xml) {
		snprintf(err, errlen, "%s", herr);
		agent_report_clear(&r);
		return q == -ENOMEM ? q : -EINVAL;
	}
	if (q < 0)
		pk_errors_add(&r.warnings, "%s", herr);
	if (cfg->use_udev && (q = agent_udev_discover(cfg->board, &r.udev, &r.warnings)) < 0)
		goto fail;
	if (cfg->use_netlink && (q = agent_links_discover(cfg->board, &r.links, &r.warnings)) < 0)
		goto fail;
	choose_accels(&r, cfg->hwloc_xml);
	compute_labels(&r, cfg);
	compatible_labels(&r, cfg);
	*ret = r;
	return 0;
fail:
	snprintf(err, errlen, "discovery: %s", strerror(-q));
	agent_report_clear(&r);
	return q;
}

void agent_report_clear(struct agent_report *r)
{
	if (!r)
		return;
	agent_hw_clear(&r->hw);
	agent_udev_clear(&r->udev);
	agent_links_clear(&r->links);
	json_decref(r->disagreement);
	agent_labels_clear(&r->labels);
	pk_errors_clear(&r->warnings);
	memset(r, 0, sizeof(*r));
	r->id.index = -1;
}
