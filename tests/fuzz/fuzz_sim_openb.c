/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_sim_openb.c — libFuzzer target for the OpenB readers: the first
 * byte picks the node list or the pod list reader (with or without
 * inflation), the rest is the file.  A rejected file must come with an
 * error naming a line and nothing returned; an accepted node list holds at
 * most as many nodes as the input has lines; an accepted pod list of a few
 * pods is levelled on a two-node cluster, so the parsed values drive the
 * replay too.  Crashes, leaks, sanitizer reports and broken invariants (an
 * abort) are findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sim/sim.h"

static const char cluster[] = "sn,cpu_milli,memory_mib,gpu,model\n"
			      "a,64000,262144,2,T4\n"
			      "b,96000,393216,8,V100M32\n";

static void pods(const char *buf, size_t len, bool inflate, size_t lines)
{
	struct pk_sim_openb_opts o = {.inflate = inflate ? 1.3 : 0, .seed = 1, .max_pods = 2000};
	struct pk_sim_trace *t = NULL;
	json_t *nodes = NULL;
	char err[512] = "";
	int r = pk_sim_openb_nodes(cluster, sizeof(cluster) - 1, &nodes, err, sizeof(err));

	if (r < 0)
		abort();
	r = pk_sim_openb_pods(buf, len, &o, nodes, &t, err, sizeof(err));
	if (r < 0) {
		if ((strncmp(err, "line ", 5) != 0 && strncmp(err, "--inflate", 9) != 0) || t)
			abort();
	} else {
		double levels[2] = {1.0, 1.3}, alloc[2];
		struct pk_sim_opts so = {.strategy = "fit"};

		if (!inflate && pk_sim_trace_jobs(t) >= lines)
			abort();
		if (pk_sim_trace_jobs(t) <= 64 &&
		    pk_sim_levels(&so, nodes, t, levels, 2, alloc, err, sizeof(err)) == 0 &&
		    (alloc[0] < 0 || alloc[0] > 1 || alloc[1] < alloc[0]))
			abort();
		pk_sim_trace_free(t);
	}
	json_decref(nodes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data + 1;
	size_t len = size ? size - 1 : 0, lines = 1;
	json_t *nodes = NULL;
	char err[512] = "";

	if (!size)
		return 0;
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	if (data[0] % 3 == 0) {
		int r = pk_sim_openb_nodes(buf, len, &nodes, err, sizeof(err));

		if (r < 0 && (strncmp(err, "line ", 5) != 0 || nodes))
			abort();
		if (r == 0 && json_array_size(nodes) >= lines)
			abort();
		json_decref(nodes);
		return 0;
	}
	pods(buf, len, data[0] % 3 == 2, lines);
	return 0;
}
