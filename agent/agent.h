/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.h — libpkagent, the inside of podagent.
 *
 * podagent discovers a host's hardware from three sources and turns it into a
 * Kubernetes v1 Node:
 *
 *   hw.c        hwloc: NUMA nodes, packages, cores, PUs, PCI functions
 *   hwloc_xml.c an --hwloc-xml export read and checked (size, nesting) for hwloc
 *   udev.c      libudev: PCI and accel devices, VFIO groups, hotplug monitor
 *   links.c     libnl-route: network links that are ICI ports, link watch
 *   identity.c  board matching and the host's place in the cluster
 *   labels.c    label sets whose keys and values are always valid
 *   node.c      the v1 Node (labels, capacity, annotations) and link report
 *   nfd.c       Node Feature Discovery features.d file
 *   publish.c   JSON merge patch of the node's labels to an API server
 *   daemon.c    the event loop: signalfd, udev, netlink, timers
 *
 * Conventions as in topology.h: 0 or -errno, ret_* outputs written only on
 * success, destructors accept NULL.  Nothing here prints: warnings are
 * collected in a struct pk_errors the program prints.
 */
#ifndef PODKERNEL_AGENT_H
#define PODKERNEL_AGENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"
#include "kernel/kube/kubeconfig.h"
#include "kernel/lib/log.h"
#include "topology/topology.h"

/* Where node heartbeat Leases live by default (as the kubelet's). */
#define AGENT_LEASE_NAMESPACE "kube-node-lease"

/* ---- the agent's own annotation keys (the contract's are in topology.h) -- */
#define AGENT_ANN_DISAGREE "agent.podkernel.dev/discovery-disagreement"

#define AGENT_NFD_MAX_BYTES (64 * 1024)
/* An hwloc XML export: real ones are under 1 MiB and nest about 20 elements. */
#define AGENT_HWLOC_XML_MAX_BYTES (16 * 1024 * 1024)
#define AGENT_HWLOC_XML_MAX_DEPTH 256

/* ---- PCI functions and their classification ------------------------------ */
struct agent_pci {
	char bus_id[16]; /* "0000:34:00.0" */
	unsigned vendor, device;
	unsigned class_id;   /* base class and subclass: 0x0302 */
	int numa;	     /* OS index of its NUMA node, -1 unknown */
	char accel_node[64]; /* "/dev/accel/accel0" (udev), or "" */
	char vfio_group[64]; /* "/dev/vfio/12" (udev), or "" */
	char product[128];   /* PCI database name: udev's ID_MODEL_FROM_DATABASE, or "" */
};

/*
 * The PCI database's name of vendor:device from udev's hwdb (what udev puts
 * in ID_MODEL_FROM_DATABASE), into buf; -ENOENT when the hwdb does not know it
 * or is not installed.
 */
int agent_pci_product(unsigned vendor, unsigned device, char *buf, size_t len);

/*
 * An accelerator is a PCI function of class 0x0302 (3D controller), 0x0380
 * (other display), 0x1200 (processing accelerator), or one whose IDs the
 * board lists (board may be NULL).  VGA 0x0300 is a display adapter.
 */
bool agent_pci_is_accel(unsigned class_id, unsigned vendor, unsigned device,
			const struct topo_board *board);

/* ---- hwloc --------------------------------------------------------------- */
struct agent_hw {
	int numa_count;
	uint64_t *numa_memory; /* bytes, per NUMA node (logical order) */
	uint64_t memory;       /* total: MemTotal on this machine, the NUMA sum of an export */
	int packages, cores, pus;
	size_t pci_count; /* PCI functions seen (0: no I/O discovery) */
	struct agent_pci *accels;
	size_t naccels;
};

/*
 * Read an hwloc XML export for hwloc: at most AGENT_HWLOC_XML_MAX_BYTES and
 * AGENT_HWLOC_XML_MAX_DEPTH nested elements, else -EINVAL with "FILE: ..." or
 * "FILE:LINE:COL: ..." in err.  *ret_buf is NUL-terminated; free() it.
 */
int agent_hwloc_xml_read(const char *path, char **ret_buf, size_t *ret_len, char *err,
			 size_t errlen);
/*
 * Discover this machine (xml_path NULL) or load an hwloc XML export (read and
 * checked by agent_hwloc_xml_read first).  PCI discovery is enabled;
 * accelerators are classified with the board (may be NULL).  -EINVAL on a
 * bad XML file, -errno otherwise.
 */
int agent_hw_discover(const char *xml_path, const struct topo_board *board, struct agent_hw *ret,
		      char *err, size_t errlen);
void agent_hw_clear(struct agent_hw *hw);
/* MemTotal of a /proc/meminfo file, in bytes (what the kubelet reports). */
int agent_meminfo_total(const char *path, uint64_t *ret_bytes);

/* ---- libudev ------------------------------------------------------------- */
struct agent_udev_info {
	bool available; /* libudev could enumerate */
	size_t pci_count;
	struct agent_pci *accels;
	size_t naccels;
	size_t accel_nodes; /* /dev/accel/accel* devices seen */
	size_t vfio_groups; /* /dev/vfio/N groups seen */
};

/* Enumerate PCI, accel and vfio devices.  Problems go to warnings. */
int agent_udev_discover(const struct topo_board *board, struct agent_udev_info *ret,
			struct pk_errors *warnings);
void agent_udev_clear(struct agent_udev_info *info);

/* A udev monitor on the pci, accel and vfio subsystems. */
struct agent_udev_monitor;
int agent_udev_monitor_new(struct agent_udev_monitor **ret);
int agent_udev_monitor_fd(const struct agent_udev_monitor *m);
/* Drain pending events; *ret_relevant is true when an accelerator-relevant
 * device was added, removed or changed. */
int agent_udev_monitor_drain(struct agent_udev_monitor *m, const struct topo_board *board,
			     bool *ret_relevant);
void agent_udev_monitor_free(struct agent_udev_monitor *m);

/* ---- links (libnl) -------------------------------------------------------- */
struct agent_link {
	char name[32];
	char operstate[16]; /* "up", "down", "lowerlayerdown", ... */
	bool carrier;
	char peer[128]; /* from the alias "peer=<host>/<port>", or "" */
};

struct agent_links {
	bool available;
	struct agent_link *v;
	size_t n;
};

/*
 * Is name an ICI port?  With a board: it is one of the board's port names.
 * Without: it starts with "ici".
 */
bool agent_link_is_ici(const char *name, const struct topo_board *board);
/* Parse "peer=<host>/<port>" out of an alias ("a b peer=h/p c" works too). */
int agent_link_parse_alias(const char *alias, char *peer, size_t peerlen);
int agent_links_discover(const struct topo_board *board, struct agent_links *ret,
			 struct pk_errors *warnings);
void agent_links_clear(struct agent_links *links);

struct agent_link_watch;
int agent_link_watch_new(const struct topo_board *board, struct agent_link_watch **ret);
int agent_link_watch_fd(const struct agent_link_watch *w);
/* Process pending netlink messages; ret_changed when a link changed. */
int agent_link_watch_process(struct agent_link_watch *w, bool *ret_changed);
void agent_link_watch_free(struct agent_link_watch *w);

/* ---- host identity and board matching ------------------------------------- */
enum agent_id_source {
	AGENT_ID_NONE,
	AGENT_ID_FLAG,	   /* --host-index */
	AGENT_ID_LABEL,	   /* TOPO_LABEL_HOST_INDEX on the Node, set by an operator */
	AGENT_ID_ICI,	   /* the ICI neighbours' published indexes */
	AGENT_ID_HOSTNAME, /* the board's hostname pattern */
};

struct agent_identity {
	enum agent_id_source source;
	int64_t index; /* -1 when unknown */
	int superslices;
	struct topo_host host; /* valid when index >= 0 */
};

/* What the host knows about its place besides its name. */
struct agent_id_hints {
	int64_t host_index;		 /* --host-index, or -1 */
	const char *label;		 /* the Node's TOPO_LABEL_HOST_INDEX, or NULL */
	const struct agent_links *links; /* ICI links and their peers, or NULL */
	const json_t *peers;		 /* {"node": host index} of known peers, or NULL */
};

/*
 * Find the host's index in the board's cluster: hints->host_index (>= 0 when
 * given), else the operator's label, else the ICI neighbours, else the node
 * name against the board's hostname pattern (never the environment).
 * -ENOENT when nothing says; -EINVAL on a bad label or disagreeing links;
 * -ERANGE when the index is outside the board.  hints may be NULL.
 */
int agent_identity_resolve(const struct topo_board *board, const struct agent_id_hints *hints,
			   const char *node_name, struct agent_identity *ret, char *err,
			   size_t errlen);
/* Index of the host named name in the board's cluster (searches the pattern's
 * outer domain); -ENOENT. */
int agent_board_find_host(const struct topo_board *board, const char *name, int64_t *ret_index,
			  int *ret_superslices);

/* ---- label sets ----------------------------------------------------------- */
struct agent_labels {
	char **key, **value;
	size_t n, cap;
};

/*
 * Set key=value.  An invalid key is dropped; an invalid value is sanitized
 * (topo_label_value_sanitize) or, when nothing valid is left, dropped.  Either
 * is reported in warnings.  Returns 0, -EINVAL when dropped, -ENOMEM.
 */
int agent_labels_set(struct agent_labels *l, const char *key, const char *value,
		     struct pk_errors *warnings);
const char *agent_labels_get(const struct agent_labels *l, const char *key);
void agent_labels_clear(struct agent_labels *l);

/* ---- the whole report ----------------------------------------------------- */
/* Compatible label sets (--compatible-labels). */
enum {
	AGENT_COMPAT_NVIDIA = 1 << 0, /* nvidia.com/gpu.{present,count,product} (GFD) */
	AGENT_COMPAT_GKE = 1 << 1,    /* cloud.google.com/gke-tpu-topology */
};

struct agent_config {
	const char *node_name;
	const char *hwloc_xml;
	const struct topo_board *board;
	int64_t host_index; /* -1: not given */
	bool use_udev;
	bool use_netlink;
	unsigned compat; /* AGENT_COMPAT_* label sets to publish too */
	/*
	 * Lookups on the API server for the host index (NULL offline): a label of
	 * a Node (the pointer stays valid until the next lookup), and the host
	 * index a peer Node published in its link report.
	 */
	const char *(*node_label)(void *arg, const char *node, const char *key);
	int (*peer_index)(void *arg, const char *node, int64_t *ret_index);
	void *lookup_arg;
};

struct agent_report {
	char node_name[TOPO_DNS_SUBDOMAIN_MAX + 1];
	struct agent_hw hw;
	struct agent_udev_info udev;
	struct agent_links links;
	/* the accelerators published: hwloc's when it saw PCI, else udev's */
	const struct agent_pci *accels;
	size_t naccels;
	const char *accel_source; /* "hwloc", "udev" or "none" */
	json_t *disagreement;	  /* array of strings, hwloc vs udev */
	struct agent_identity id;
	struct agent_labels labels;
	struct pk_errors warnings;
	int nfd_rc; /* agent_cycle: 0, or the -errno of writing the NFD file */
};

/*
 * Run every discovery and compute the labels.  A missing source (no udev, no
 * netlink, no permission) is a warning, never an error; only an unreadable
 * --hwloc-xml or a bad node name fails (-EINVAL).
 */
int agent_report_build(const struct agent_config *cfg, struct agent_report *ret, char *err,
		       size_t errlen);
void agent_report_clear(struct agent_report *r);

/* Compare two accelerator lists by PCI bus ID; one message per difference. */
json_t *agent_compare_accels(const struct agent_pci *a, size_t na, const char *aname,
			     const struct agent_pci *b, size_t nb, const char *bname);

/* The v1 Node of a report (new reference). */
json_t *agent_node_json(const struct agent_report *r, const struct topo_board *board);
/* The devices annotation value: [{"pciBusId","vendorId","deviceId","numaNode"}]. */
json_t *agent_devices_json(const struct agent_pci *accels, size_t n);
/*
 * The link report (README "Link reports"):
 * {"apiVersion":"podkernel.dev/v1alpha1","kind":"LinkReport","host":NAME,
 *  "hostIndex":N (when known),"links":[{"port","operstate","carrier","peer"}]}
 */
json_t *agent_link_report_json(const struct agent_report *r);

/* ---- NFD features.d -------------------------------------------------------- */
/*
 * Write labels as "key=value" lines with a "# +expiry-time=" directive
 * (RFC 3339, now + ttl) to dir/name atomically (dot-file, fsync, rename).
 * Only keys nfd-master accepts are written (agent_nfd_key_allowed): the
 * kubernetes.io and k8s.io namespaces are Kubernetes' own (nfd-master always
 * denies kubernetes.io/hostname).  -EFBIG when the file would exceed 64 KiB.
 * agent_nfd_write creates dir like mkdir -p.
 */
bool agent_nfd_key_allowed(const char *key);
int agent_nfd_format(const struct agent_labels *l, int64_t expiry, char **ret_text,
		     size_t *ret_len);
int agent_nfd_write(const char *dir, const char *name, const struct agent_labels *l,
		    int64_t expiry);
/* mkdir -p DIR (0755): 0, or -errno (-ENOTDIR when a component is not a directory). */
int agent_mkdir_p(const char *dir);

/* ---- publishing ----------------------------------------------------------- */
struct agent_publisher;

/*
 * How the publisher behaves; where it publishes and with which credentials
 * is a struct pk_kube_credentials (kernel/kube/kubeconfig.h), from flags, a
 * kubeconfig or the pod's service account (kube_credentials_in_cluster()).
 */
struct agent_publish_config {
	bool status;		     /* also own status.capacity/allocatable (no kubelet) */
	bool register_node;	     /* create the Node when missing (no kubelet registers it) */
	const char *lease_namespace; /* NULL: AGENT_LEASE_NAMESPACE */
	int lease_duration_s;	     /* the Lease's leaseDurationSeconds (default 40) */
	int resync_s;		     /* send an unchanged patch again after this long (300) */
	int retries;		     /* attempts per publish, >= 1 */
	long backoff_ms;	     /* first retry delay */
	long backoff_max_ms;	     /* cap */
	long timeout_ms;	     /* per request */
};

/*
 * A publisher talking to creds->server (http:// or https://, else -EINVAL)
 * through the project's one Kubernetes client (kernel/kube: the same TLS,
 * client certificate and token handling as attach mode; a token file is
 * re-read as it rotates).  Takes over the strings of creds (cleared, also on
 * failure).
 */
int agent_publisher_new(const struct agent_publish_config *cfg, struct pk_kube_credentials *creds,
			struct agent_publisher **ret);
void agent_publisher_free(struct agent_publisher *p);
/*
 * Stop waiting between retries as soon as fd is readable (the daemon passes
 * its SIGTERM/SIGINT signalfd, so a shutdown is not held up by backoff);
 * agent_publish then returns -ECANCELED.  -1 (the default) waits out the
 * backoff.
 */
void agent_publisher_set_cancel_fd(struct agent_publisher *p, int fd);
/*
 * Publish the node: GET it once to learn the labels it owned before (the
 * TOPO_ANN_AGENT_OWNED annotation), then PATCH (application/merge-patch+json)
 * its labels, setting labels it owned and no longer has to null; nothing is
 * sent when the patch and status equal the last accepted ones (until
 * resync_s).  A missing Node is -ENOENT, or created with register_node.
 * Retries with capped exponential backoff.  -EIO after the last attempt,
 * -EACCES on 401/403, -EPROTO on other HTTP errors, -ECANCELED when the
 * cancel descriptor became readable during a backoff.
 */
int agent_publish(struct agent_publisher *p, const json_t *node, char *err, size_t errlen);
/*
 * Lookups for the host index (agent_config's callbacks, arg a publisher):
 * a label of the Node (read again after resync_s), and the hostIndex of a
 * peer Node's link report annotation (-ENOENT when it has none).
 */
const char *agent_publisher_node_label(void *publisher, const char *node, const char *key);
int agent_publisher_peer_index(void *publisher, const char *node, int64_t *ret_index);
/*
 * Renew the node's Lease (namespace lease_namespace, named after the node):
 * merge-patch holderIdentity, leaseDurationSeconds and renewTime, creating
 * the Lease on 404.  One attempt (the daemon renews every interval).
 */
int agent_lease_renew(struct agent_publisher *p, const char *node_name, char *err, size_t errlen);
/* The merge patch agent_publish would send, given the keys owned before. */
json_t *agent_merge_patch(const json_t *node, const json_t *owned_before);
/* The /status merge patch: node's capacity and allocatable, null for every
 * other resource server_node has there. */
json_t *agent_status_patch(const json_t *node, const json_t *server_node);

/* ---- daemon ---------------------------------------------------------------- */
/*
 * health.c: GET /healthz (and /livez) on --health-listen ADDR:PORT, 200 while
 * the daemon's last discovery cycle ended within three intervals, 503 with the age otherwise.
 */
struct agent_health;
int agent_health_start(const char *listen, int interval_s, struct agent_health **ret, char *err,
		       size_t errlen);
uint16_t agent_health_port(const struct agent_health *h);
/* The loop finished a cycle (thread-safe). */
void agent_health_cycle_done(struct agent_health *h);
void agent_health_stop(struct agent_health *h); /* accepts NULL */

struct agent_daemon_config {
	struct agent_config agent;
	int interval_s;	 /* periodic republish */
	int debounce_ms; /* quiet time after udev/netlink events */
	const char *nfd_dir;
	int nfd_ttl_s;
	struct agent_publisher *publisher; /* may be NULL */
	bool lease;			   /* renew the node's Lease every cycle (daemon only) */
	struct agent_health *health;	   /* told after every cycle; may be NULL */
	/* called after each cycle (r NULL when discovery failed; err says why) */
	void (*on_report)(const struct agent_report *r, int publish_rc, const char *err, void *arg);
	/* messages of the loop itself (a watch that could not start, ...) */
	pk_log_fn *log;
	void *arg;
};

/*
 * Publish at start, then after debounced udev and netlink events and every
 * interval; returns 0 on SIGTERM or SIGINT (blocked and read by signalfd).
 */
int agent_daemon_run(const struct agent_daemon_config *cfg);
/* One cycle: build, write the NFD file, publish.  Used by --once too. */
int agent_cycle(const struct agent_daemon_config *cfg, struct agent_report *ret_report,
		int *ret_publish_rc, char *err, size_t errlen);

#endif /* PODKERNEL_AGENT_H */
