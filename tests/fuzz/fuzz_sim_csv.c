/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_sim_csv.c — libFuzzer target for the simulator's CSV trace reader:
 * read any bytes as a trace.  A rejected trace must come with an error
 * naming a line; an accepted one must hold at most as many jobs as the input
 * has lines, and is replayed on a two-host cluster with its times clamped
 * short, so the parsed values drive the simulator too.  Crashes, leaks,
 * sanitizer reports and broken invariants (an abort) are findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sim/sim.h"

static json_t *nodes(void)
{
	json_t *a = json_array();

	for (int i = 0; i < 2; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s,s:s,s:s}}}",
						   "apiVersion", "v1", "kind", "Node", "metadata",
						   "name", i ? "n1" : "n0", "status", "allocatable",
						   "cpu", "8", "memory", "64Gi", "example.com/acc",
						   "4", "pods", "110"));
	return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pk_sim_trace *t = NULL;
	char err[512] = "";
	size_t lines = 1;
	int r = pk_sim_trace_parse_csv((const char *)data, size, &t, err, sizeof(err));

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (r < 0) {
		if (strncmp(err, "line ", 5) != 0 || t)
			abort();
		return 0;
	}
	if (pk_sim_trace_jobs(t) >= lines)
		abort();
	if (pk_sim_trace_jobs(t) <= 64) {
		struct pk_sim_opts o = {
		    .max_retries = 1, .until_ms = 3600 * 1000, .seed = 1, .failure_rate = 0.3};
		json_t *n = nodes(), *rep = NULL;

		if (pk_sim_run(&o, n, t, &rep, NULL, err, sizeof(err)) < 0 &&
		    strstr(err, "Out of memory"))
			abort();
		json_decref(rep);
		json_decref(n);
	}
	pk_sim_trace_free(t);
	return 0;
}
