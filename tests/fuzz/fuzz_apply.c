/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_apply.c — libFuzzer target for server-side apply (kernel/server/apply.c)
 * as a node applies to its own Node.  The input is a configuration (YAML or
 * JSON); its kind, apiVersion and name are set to those of Node n1, which the
 * admin registered with a taint, a cordon and a restricted label (and owns
 * through managedFields).  It is applied as the node's manager, forced or not
 * (the input's first byte), as a dry run, with NodeRestriction judging the
 * object it produces.  Findings: crashes, sanitizer reports, leaks; an apply
 * that succeeds with an object NodeRestriction refuses (a node changing
 * through apply what a merge patch may not); and an apply that holds more
 * than a fixed multiple of its input and the live object (mem_ceiling.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/server/server-internal.h"
#include "tests/fuzz/mem_ceiling.h"

#define NODE "n1"
/* What an apply may hold: a multiple of the configuration and the live object. */
#define APPLY_FACTOR 256
#define APPLY_FLOOR (8u << 20)

static struct pk_store *store;
static char workdir[64];

static void cleanup(void)
{
	static const char *const files[] = {"podkernel.db", "podkernel.db-wal", "podkernel.db-shm"};
	pk_store_close(store);
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%s", workdir, files[i]);
		unlink(path);
	}
	rmdir(workdir);
}

static int admit_node(void *arg, const json_t *live, const json_t *next, struct pk_errors *errs)
{
	(void)arg;
	return pk_srv_admission_node_write(NODE, live, next, errs);
}

static void init(void)
{
	char dir[] = "/dev/shm/pk-fuzz-apply-XXXXXX", dir2[] = "/tmp/pk-fuzz-apply-XXXXXX";
	char *d = mkdtemp(dir), err[256];
	if (!d)
		d = mkdtemp(dir2);
	if (!d || pk_store_open_opts(d, NULL, &store, err, sizeof(err)) < 0)
		abort();
	snprintf(workdir, sizeof(workdir), "%s", d);
	atexit(cleanup);
	json_t *node = json_loads(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" NODE "\","
	    "\"labels\":{\"node-restriction.kubernetes.io/pool\":\"gold\",\"example.com/"
	    "r\":\"1\"}},"
	    "\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"admin\",\"effect\":"
	    "\"NoSchedule\"}]}}",
	    0, NULL);
	struct pk_store_write_opts wo = {0};
	struct pk_srv_apply_req q = {.store = store,
				     .t = pk_type_by_kind("Node"),
				     .name = NODE,
				     .manager = "admin",
				     .config = node,
				     .wo = &wo};
	struct pk_errors errs = {0};
	json_t *out = NULL, *conflicts = NULL;
	bool created = false;
	if (!node || pk_srv_apply(&q, &errs, &out, &conflicts, &created) < 0)
		abort();
	json_decref(out);
	json_decref(conflicts);
	json_decref(node);
	pk_errors_clear(&errs);
}

/* The configuration of an input: Node n1 whatever it says. */
static json_t *config_of(const uint8_t *data, size_t size)
{
	json_t *cfg = NULL;
	char err[64];
	if (pk_parse_document("fuzz", (const char *)data, size, &cfg, err, sizeof(err)) < 0 ||
	    !json_is_object(cfg)) {
		json_decref(cfg);
		return NULL;
	}
	json_object_set_new(cfg, "apiVersion", json_string("v1"));
	json_object_set_new(cfg, "kind", json_string("Node"));
	json_t *meta = json_object_get(cfg, "metadata");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(cfg, "metadata", meta);
	}
	json_object_set_new(meta, "name", json_string(NODE));
	json_object_del(meta, "namespace");
	json_object_del(meta, "managedFields");
	return cfg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!store)
		init();
	if (!size)
		return 0;
	json_t *cfg = config_of(data + 1, size - 1), *live = NULL, *out = NULL, *conflicts = NULL;
	if (!cfg || pk_store_get(store, &pk_type_node, NULL, NODE, &live) < 0) {
		json_decref(cfg);
		return 0;
	}
	char *live_text = json_dumps(live, JSON_COMPACT);
	size_t bound = APPLY_FLOOR + APPLY_FACTOR * (size + (live_text ? strlen(live_text) : 0));
	free(live_text);
	struct pk_store_write_opts wo = {.dry_run = true};
	struct pk_srv_apply_req q = {.store = store,
				     .t = pk_type_by_kind("Node"),
				     .name = NODE,
				     .manager = "kubelet",
				     .config = cfg,
				     .force = data[0] & 1,
				     .wo = &wo,
				     .admit = admit_node};
	struct pk_errors errs = {0};
	bool created = false;
	mc_begin();
	int rc = pk_srv_apply(&q, &errs, &out, &conflicts, &created);
	size_t peak = mc_end();
	pk_errors_clear(&errs);
	if (rc == 0 && pk_srv_admission_node_write(NODE, live, out, &errs) < 0) {
		fprintf(stderr, "fuzz_apply: the apply produced what NodeRestriction refuses: %s\n",
			errs.n ? errs.msg[0] : "");
		abort();
	}
	if (peak > bound) {
		fprintf(stderr, "fuzz_apply: %zu bytes applied holding %zu bytes (bound %zu)\n",
			size, peak, bound);
		abort();
	}
	pk_errors_clear(&errs);
	json_decref(out);
	json_decref(conflicts);
	json_decref(live);
	json_decref(cfg);
	return 0;
}
