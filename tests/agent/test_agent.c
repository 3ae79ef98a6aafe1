/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent.c — podagent's pure pieces: label sanitizing, the NFD file
 * (format, size limit, atomic replacement), the merge patch that removes only
 * owned labels, link aliases, hwloc/udev comparison, and board matching
 * (host identity from flag, environment and hostname; topology labels; the
 * board's accelerator IDs) against the board files in boards/.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"

#define BOARDS PODKERNEL_SRCDIR "/boards/"
#define HWLOC PODKERNEL_SRCDIR "/tests/fixtures/hwloc/"

static struct topo_board *board_load(const char *name)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX] = "";

	ck_assert_ptr_nonnull(b);
	ck_assert_msg(topo_board_load_file(b, name, err, sizeof(err)) == 0, "%s", err);
	return b;
}

/* ---- labels ---------------------------------------------------------------- */

START_TEST(test_labels_valid_and_overwrite)
{
	struct agent_labels l = {0};
	struct pk_errors w = {0};

	ck_assert_int_eq(agent_labels_set(&l, "numa.podkernel.dev/count", "2", &w), 0);
	ck_assert_int_eq(agent_labels_set(&l, "numa.podkernel.dev/count", "4", &w), 0);
	ck_assert_int_eq(agent_labels_set(&l, "plain", "", &w), 0);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_str_eq(agent_labels_get(&l, "numa.podkernel.dev/count"), "4");
	ck_assert_str_eq(agent_labels_get(&l, "plain"), "");
	ck_assert_ptr_null(agent_labels_get(&l, "missing"));
	ck_assert_uint_eq(w.n, 0);
	agent_labels_clear(&l);
	agent_labels_clear(NULL);
	pk_errors_clear(&w);
}
END_TEST

START_TEST(test_labels_sanitized_or_dropped)
{
	struct agent_labels l = {0};
	struct pk_errors w = {0};
	char longv[200];

	/* bad keys never get in */
	ck_assert_int_eq(agent_labels_set(&l, "Bad Key/with space", "x", &w), -EINVAL);
	ck_assert_int_eq(agent_labels_set(&l, "UPPER_.dev/name", "x", &w), -EINVAL);
	ck_assert_int_eq(agent_labels_set(&l, "a.dev/-leading", "x", &w), -EINVAL);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_uint_eq(w.n, 3);
	ck_assert_ptr_nonnull(strstr(w.msg[0], "Bad Key/with space"));
	/* bad values are made valid */
	ck_assert_int_eq(agent_labels_set(&l, "k1", "Tesla V100/SXM2 (16GB)", &w), 0);
	ck_assert(topo_label_value_valid(agent_labels_get(&l, "k1"), NULL, 0));
	ck_assert_str_eq(agent_labels_get(&l, "k1"), "Tesla-V100-SXM2--16GB");
	memset(longv, 'a', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	ck_assert_int_eq(agent_labels_set(&l, "k2", longv, &w), 0);
	ck_assert_uint_eq(strlen(agent_labels_get(&l, "k2")), TOPO_LABEL_NAME_MAX);
	/* nothing valid left: dropped */
	ck_assert_int_eq(agent_labels_set(&l, "k3", "///", &w), -EINVAL);
	ck_assert_ptr_null(agent_labels_get(&l, "k3"));
	ck_assert_uint_eq(w.n, 6);
	for (size_t i = 0; i < l.n; i++) {
		ck_assert(topo_label_key_valid(l.key[i], NULL, 0));
		ck_assert(topo_label_value_valid(l.value[i], NULL, 0));
	}
	agent_labels_clear(&l);
	pk_errors_clear(&w);
}
END_TEST

/* ---- NFD ------------------------------------------------------------------- */

START_TEST(test_nfd_format)
{
	struct agent_labels l = {0};
	char *text;
	size_t len;

	agent_labels_set(&l, "kubernetes.io/hostname", "tpu-h0", NULL);
	agent_labels_set(&l, "accelerator.podkernel.dev/count", "4", NULL);
	agent_labels_set(&l, "topology.podkernel.dev/cube", "cube0", NULL);
	agent_labels_set(&l, "topology.kubernetes.io/zone", "z1", NULL);
	agent_labels_set(&l, "feature.node.kubernetes.io/tpu", "true", NULL);
	ck_assert_int_eq(agent_nfd_format(&l, 1700000000, &text, &len), 0);
	/* nfd-master denies kubernetes.io and its subdomains but feature.node's */
	ck_assert_ptr_null(strstr(text, "hostname"));
	ck_assert_ptr_null(strstr(text, "topology.kubernetes.io"));
	ck_assert_ptr_nonnull(strstr(text, "\nfeature.node.kubernetes.io/tpu=true\n"));
	ck_assert_uint_eq(strlen(text), len);
	ck_assert_ptr_nonnull(strstr(text, "\n# +expiry-time=2023-11-14T22:13:20Z\n"));
	ck_assert_ptr_nonnull(strstr(text, "\naccelerator.podkernel.dev/count=4\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ntopology.podkernel.dev/cube=cube0\n"));
	/* the directive comes before every label */
	ck_assert(strstr(text, "+expiry-time") < strstr(text, "accelerator."));
	free(text);
	agent_labels_clear(&l);
}
END_TEST

START_TEST(test_nfd_size_limit)
{
	struct agent_labels l = {0};
	char key[64], value[64], *text = NULL;
	size_t len;

	memset(value, 'v', 63);
	value[63] = '\0';
	for (int i = 0; i < 700; i++) { /* 700 lines of 108 bytes > 64 KiB */
		snprintf(key, sizeof(key), "feature.podkernel.dev/k%04d-padding-padding", i);
		ck_assert_int_eq(agent_labels_set(&l, key, value, NULL), 0);
	}
	ck_assert_int_eq(agent_nfd_format(&l, 0, &text, &len), -EFBIG);
	ck_assert_ptr_null(text);
	ck_assert_int_eq(agent_nfd_write("/tmp", "never", &l, 0), -EFBIG);
	ck_assert_int_eq(access("/tmp/never", F_OK), -1);
	agent_labels_clear(&l);
}
END_TEST

START_TEST(test_nfd_atomic_write)
{
	struct agent_labels l = {0};
	char dir[] = "/tmp/podagent-nfd-XXXXXX", path[256], buf[512];
	struct dirent *de;
	FILE *f;
	DIR *d;
	size_t n;
	int files = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	agent_labels_set(&l, "a.dev/x", "1", NULL);
	ck_assert_int_eq(agent_nfd_write(dir, "podagent", &l, 0), 0);
	agent_labels_set(&l, "a.dev/x", "2", NULL);
	ck_assert_int_eq(agent_nfd_write(dir, "podagent", &l, 0), 0);
	snprintf(path, sizeof(path), "%s/podagent", dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "a.dev/x=2\n"));
	ck_assert_ptr_null(strstr(buf, "a.dev/x=1"));
	d = opendir(dir);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
			files++;
	closedir(d);
	ck_assert_int_eq(files, 1); /* no dot-file left behind */
	ck_assert_int_eq(agent_nfd_write(dir, "../escape", &l, 0), -EINVAL);
	unlink(path);
	rmdir(dir);
	agent_labels_clear(&l);
}
END_TEST

/* The directory is created like mkdir -p; a file in the way is -ENOTDIR. */
START_TEST(test_nfd_creates_dir)
{
	struct agent_labels l = {0};
	char dir[] = "/tmp/podagent-nfd-XXXXXX", path[256];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	agent_labels_set(&l, "a.dev/x", "1", NULL);
	snprintf(path, sizeof(path), "%s/a/b/features.d", dir);
	ck_assert_int_eq(agent_nfd_write(path, "podagent", &l, 0), 0);
	snprintf(path, sizeof(path), "%s/a/b/features.d/podagent", dir);
	ck_assert_int_eq(access(path, R_OK), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/file", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(agent_nfd_write(path, "podagent", &l, 0), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/file/sub", dir);
	ck_assert_int_eq(agent_mkdir_p(path), -ENOTDIR);
	ck_assert_int_eq(agent_mkdir_p(""), -EINVAL);
	snprintf(path, sizeof(path), "%s/file", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/a/b/features.d", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a", dir);
	rmdir(path);
	ck_assert_int_eq(rmdir(dir), 0);
	agent_labels_clear(&l);
}
END_TEST

START_TEST(test_nfd_keys)
{
	ck_assert(!agent_nfd_key_allowed("kubernetes.io/hostname"));
	ck_assert(!agent_nfd_key_allowed("node.kubernetes.io/instance-type"));
	ck_assert(!agent_nfd_key_allowed("k8s.io/x"));
	ck_assert(!agent_nfd_key_allowed("node-role.k8s.io/x"));
	ck_assert(agent_nfd_key_allowed("feature.node.kubernetes.io/x"));
	ck_assert(agent_nfd_key_allowed("sub.feature.node.kubernetes.io/x"));
	ck_assert(agent_nfd_key_allowed("profile.node.kubernetes.io/x"));
	ck_assert(agent_nfd_key_allowed("accelerator.podkernel.dev/count"));
	ck_assert(agent_nfd_key_allowed("notkubernetes.io/x")); /* not a subdomain */
	ck_assert(agent_nfd_key_allowed("plain"));
}
END_TEST

/* ---- merge patch ------------------------------------------------------------ */

START_TEST(test_merge_patch_owned_only)
{
	json_t *node = json_pack(
	    "{s:s, s:{s:s, s:{s:s, s:s}, s:{s:s}}}", "kind", "Node", "metadata", "name", "n1",
	    "labels", "numa.podkernel.dev/count", "2", "kubernetes.io/hostname", "n1",
	    "annotations", TOPO_ANN_AGENT_OWNED, "kubernetes.io/hostname,numa.podkernel.dev/count");
	json_t *owned =
	    json_pack("[s, s, s]", "numa.podkernel.dev/count", "accelerator.podkernel.dev/vendor",
		      "topology.podkernel.dev/cube");
	json_t *patch = agent_merge_patch(node, owned);
	json_t *labels = pk_get(patch, "metadata.labels");
	json_t *ann = pk_get(patch, "metadata.annotations");

	ck_assert_str_eq(json_string_value(json_object_get(labels, "numa.podkernel.dev/count")),
			 "2");
	ck_assert(json_is_null(json_object_get(labels, "accelerator.podkernel.dev/vendor")));
	ck_assert(json_is_null(json_object_get(labels, "topology.podkernel.dev/cube")));
	ck_assert_uint_eq(json_object_size(labels), 4);
	/* the agent's own annotations: set, or null when absent now */
	ck_assert(json_is_string(json_object_get(ann, TOPO_ANN_AGENT_OWNED)));
	ck_assert(json_is_null(json_object_get(ann, AGENT_ANN_DISAGREE)));
	ck_assert_ptr_null(json_object_get(patch, "status")); /* kubelet's, not ours */
	json_decref(patch);
	json_decref(owned);
	json_decref(node);
}
END_TEST

START_TEST(test_status_patch)
{
	json_t *node = json_pack("{s:{s:{s:s, s:s}, s:{s:s}}}", "status", "capacity", "cpu", "16",
				 "nvidia.com/gpu", "4", "allocatable", "cpu", "16");
	json_t *server = json_pack("{s:{s:{s:s, s:s}}}", "status", "capacity", "cpu", "8",
				   "google.com/tpu", "4");
	json_t *patch = agent_status_patch(node, server);
	json_t *cap = pk_get(patch, "status.capacity");

	ck_assert_str_eq(json_string_value(json_object_get(cap, "cpu")), "16");
	ck_assert_str_eq(json_string_value(json_object_get(cap, "nvidia.com/gpu")), "4");
	ck_assert(json_is_null(json_object_get(cap, "google.com/tpu")));
	ck_assert_uint_eq(json_object_size(pk_get(patch, "status.allocatable")), 1);
	ck_assert_ptr_null(json_object_get(patch, "metadata"));
	json_decref(patch);
	json_decref(server);
	json_decref(node);
}
END_TEST

/* ---- links ------------------------------------------------------------------ */

START_TEST(test_link_alias)
{
	char peer[32];

	ck_assert_int_eq(agent_link_parse_alias("peer=tpu-h1/ici3", peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "tpu-h1/ici3");
	ck_assert_int_eq(agent_link_parse_alias("rack=r1 peer=h2/p0,x=y", peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "h2/p0");
	ck_assert_int_eq(agent_link_parse_alias("notpeer=h/p", peer, sizeof(peer)), -ENOENT);
	ck_assert_int_eq(agent_link_parse_alias("peer=nohost", peer, sizeof(peer)), -EINVAL);
	ck_assert_int_eq(agent_link_parse_alias("", peer, sizeof(peer)), -ENOENT);
	ck_assert_int_eq(
	    agent_link_parse_alias("peer=a-very-long-host-name-indeed/ici0", peer, sizeof(peer)),
	    -ENAMETOOLONG);
	ck_assert(agent_link_is_ici("ici3", NULL));
	ck_assert(!agent_link_is_ici("eth0", NULL));
}
END_TEST

START_TEST(test_compare_accels)
{
	struct agent_pci a[2] = {{"0000:01:00.0", 0x10de, 0x2330, 0x0302, 0},
				 {"0000:02:00.0", 0x10de, 0x2330, 0x0302, 1}};
	struct agent_pci b[2] = {{"0000:01:00.0", 0x10de, 0x2330, 0x0302, 0},
				 {"0000:03:00.0", 0x10de, 0x2330, 0x0302, 1}};
	json_t *d = agent_compare_accels(a, 2, "hwloc", b, 2, "udev");

	ck_assert_uint_eq(json_array_size(d), 2);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(d, 0)),
				     "0000:02:00.0 10de:2330: seen by hwloc, not by udev"));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(d, 1)),
				     "0000:03:00.0 10de:2330: seen by udev, not by hwloc"));
	json_decref(d);
	d = agent_compare_accels(a, 2, "hwloc", a, 2, "udev");
	ck_assert_uint_eq(json_array_size(d), 0);
	json_decref(d);
}
END_TEST

/* ---- boards ------------------------------------------------------------------ */

START_TEST(test_board_ids)
{
	struct topo_board *b = board_load(BOARDS "tpu-cube.yaml");

	/* a co-processor class function counts when the board lists its IDs */
	ck_assert(agent_pci_is_accel(0x0b40, 0x1ae0, 0x005e, b));
	ck_assert(!agent_pci_is_accel(0x0b40, 0x1ae0, 0x0042, b));
	ck_assert(agent_link_is_ici("ici2zp", b));
	ck_assert(!agent_link_is_ici("ici9", b));
	topo_board_free(b);
}
END_TEST

START_TEST(test_identity_sources)
{
	struct topo_board *b = board_load(BOARDS "tpu-cube.yaml");
	struct agent_identity id;
	struct agent_id_hints h = {.host_index = 5};
	char err[256];

	ck_assert_int_eq(agent_identity_resolve(b, &h, "whatever", &id, err, sizeof(err)), 0);
	ck_assert_int_eq(id.source, AGENT_ID_FLAG);
	ck_assert_int_eq(id.index, 5);
	ck_assert_str_eq(id.host.coords, "2.0.1");
	ck_assert_str_eq(id.host.name, "tpu-cube0-h5");

	/* never the environment: TPU_WORKER_ID is a rank inside a TPU job */
	setenv("TPU_WORKER_ID", "15", 1);
	setenv("PODKERNEL_HOST_INDEX", "15", 1);
	ck_assert_int_eq(agent_identity_resolve(b, NULL, "whatever", &id, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, TOPO_LABEL_HOST_INDEX));
	unsetenv("TPU_WORKER_ID");
	unsetenv("PODKERNEL_HOST_INDEX");

	/* an operator's label on the Node */
	h = (struct agent_id_hints){.host_index = -1, .label = "14"};
	ck_assert_int_eq(agent_identity_resolve(b, &h, "tpu-cube0-h3", &id, err, sizeof(err)), 0);
	ck_assert_int_eq(id.source, AGENT_ID_LABEL);
	ck_assert_int_eq(id.index, 14);
	h.label = "x1";
	ck_assert_int_eq(agent_identity_resolve(b, &h, "n", &id, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, TOPO_LABEL_HOST_INDEX));

	ck_assert_int_eq(agent_identity_resolve(b, NULL, "tpu-cube0-h12", &id, err, sizeof(err)),
			 0);
	ck_assert_int_eq(id.source, AGENT_ID_HOSTNAME);
	ck_assert_int_eq(id.index, 12);
	ck_assert_int_eq(agent_identity_resolve(b, NULL, "node-7", &id, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "tpu-cube{cube}-h{host}"));
	ck_assert_int_eq(agent_identity_resolve(b, NULL, "tpu-cube0-h99", &id, err, sizeof(err)),
			 -ENOENT);
	h = (struct agent_id_hints){.host_index = 1 << 30};
	ck_assert_int_eq(agent_identity_resolve(b, &h, NULL, &id, err, sizeof(err)), -ERANGE);
	topo_board_free(b);
}
END_TEST

/* The ICI neighbours: a peer that published its index places this host. */
START_TEST(test_identity_from_ici)
{
	struct topo_board *b = board_load(BOARDS "tpu-cube.yaml");
	struct agent_link v[2] = {{.operstate = "up", .carrier = true},
				  {.operstate = "up", .carrier = true}};
	struct agent_links links = {.available = true, .v = v, .n = 2};
	json_t *peers = json_object();
	struct agent_id_hints h = {.host_index = -1, .links = &links, .peers = peers};
	struct agent_identity id;
	int64_t peer[2];
	size_t pport[2];
	char err[256];

	/* host 5's ports 0 and 3 are cabled to these peers and ports */
	for (int i = 0; i < 2; i++) {
		size_t port = i == 0 ? 0 : 3;

		ck_assert_int_eq(topo_board_ici_peer(b, 1, 5, port, &peer[i], &pport[i]), 0);
		snprintf(v[i].name, sizeof(v[i].name), "%s", topo_board_ici_port_name(b, port));
		snprintf(v[i].peer, sizeof(v[i].peer), "peer%d/%s", i,
			 topo_board_ici_port_name(b, pport[i]));
	}
	/* no peer known yet: the name decides (here: nothing) */
	ck_assert_int_eq(agent_identity_resolve(b, &h, "node-x", &id, err, sizeof(err)), -ENOENT);
	json_object_set_new(peers, "peer0", json_integer(peer[0]));
	ck_assert_msg(agent_identity_resolve(b, &h, "node-x", &id, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_int_eq(id.source, AGENT_ID_ICI);
	ck_assert_int_eq(id.index, 5);
	ck_assert_str_eq(id.host.coords, "2.0.1");
	/* ICI wins over a name that says otherwise */
	json_object_set_new(peers, "peer1", json_integer(peer[1]));
	ck_assert_int_eq(agent_identity_resolve(b, &h, "tpu-cube0-h9", &id, err, sizeof(err)), 0);
	ck_assert_int_eq(id.index, 5);
	/* a peer that says another place: the links disagree */
	json_object_set_new(peers, "peer1", json_integer((peer[1] + 1) % 16));
	ck_assert_int_eq(agent_identity_resolve(b, &h, "node-x", &id, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "ICI"), "%s", err);
	json_decref(peers);
	topo_board_free(b);
}
END_TEST

START_TEST(test_find_host_nested_levels)
{
	struct topo_board *b = board_load(BOARDS "gpu-cluster.yaml");
	struct topo_board *ss = board_load(BOARDS "tpu-superslice.yaml");
	struct topo_host h;
	int64_t index;
	int n;

	/* block 1, rack 2, host 3: 1*32 + 2*8 + 3 */
	ck_assert_int_eq(agent_board_find_host(b, "gpu-b1-r2-n3", &index, &n), 0);
	ck_assert_int_eq(index, 51);
	ck_assert_int_eq(agent_board_find_host(b, "gpu-b1-r2-n9", &index, &n), -ENOENT);
	/* a superslice past the board's default cluster size */
	ck_assert_int_eq(topo_board_host(ss, 6, 5 * 256 + 17, &h), 0);
	ck_assert_int_eq(agent_board_find_host(ss, h.name, &index, &n), 0);
	ck_assert_int_eq(index, 5 * 256 + 17);
	ck_assert_int_ge(n, 6);
	topo_board_free(b);
	topo_board_free(ss);
}
END_TEST

START_TEST(test_report_with_board)
{
	struct topo_board *b = board_load(BOARDS "tpu-cube.yaml");
	struct agent_config cfg = {
	    .node_name = "tpu-cube0-h5",
	    .hwloc_xml = HWLOC "24em64t-2n6c2t-pci.xml",
	    .board = b,
	    .host_index = -1,
	};
	struct agent_report r;
	char err[256];
	bool warned = false;
	json_t *node;

	ck_assert_int_eq(agent_report_build(&cfg, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(agent_labels_get(&r.labels, "topology.podkernel.dev/cube"), "cube0");
	ck_assert_str_eq(agent_labels_get(&r.labels, TOPO_LABEL_COORDS), "2.0.1");
	ck_assert_str_eq(agent_labels_get(&r.labels, TOPO_LABEL_HOSTNAME), "tpu-cube0-h5");
	ck_assert_str_eq(agent_labels_get(&r.labels, TOPO_LABEL_ACCEL_COUNT), "3");
	ck_assert_str_eq(agent_labels_get(&r.labels, TOPO_LABEL_NUMA_COUNT), "2");
	for (size_t i = 0; i < r.warnings.n; i++)
		warned |=
		    strstr(r.warnings.msg[i], "expected 4 accelerators per host, found 3") != NULL;
	ck_assert_msg(warned, "no chip-count warning");
	node = agent_node_json(&r, b);
	/* the board's resource name; allocatable never above what was found */
	ck_assert_str_eq(
	    json_string_value(json_object_get(pk_get(node, "status.capacity"), "google.com/tpu")),
	    "3");
	ck_assert_str_eq(json_string_value(
			     json_object_get(pk_get(node, "status.allocatable"), "google.com/tpu")),
			 "3");
	ck_assert_str_eq(
	    json_string_value(json_object_get(pk_get(node, "status.allocatable"), "cpu")), "24");
	json_decref(node);
	agent_report_clear(&r);

	cfg.node_name = "Not_A_Node";
	ck_assert_int_eq(agent_report_build(&cfg, &r, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "Not_A_Node"));
	topo_board_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent");
	TCase *tc = tcase_create("agent");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_labels_valid_and_overwrite);
	tcase_add_test(tc, test_labels_sanitized_or_dropped);
	tcase_add_test(tc, test_nfd_format);
	tcase_add_test(tc, test_nfd_size_limit);
	tcase_add_test(tc, test_nfd_atomic_write);
	tcase_add_test(tc, test_nfd_creates_dir);
	tcase_add_test(tc, test_nfd_keys);
	tcase_add_test(tc, test_merge_patch_owned_only);
	tcase_add_test(tc, test_status_patch);
	tcase_add_test(tc, test_link_alias);
	tcase_add_test(tc, test_compare_accels);
	tcase_add_test(tc, test_board_ids);
	tcase_add_test(tc, test_identity_sources);
	tcase_add_test(tc, test_identity_from_ici);
	tcase_add_test(tc, test_find_host_nested_levels);
	tcase_add_test(tc, test_report_with_board);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
