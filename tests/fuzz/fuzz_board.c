/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_board.c — libFuzzer target for the board loader: read any bytes as a
 * board file.  A rejected board must come with a "fuzz:LINE:COL: message"
 * error; an accepted one is exercised: a sample of hosts is enumerated and
 * their ICI wiring must be symmetric (the peer of the peer is the port).
 * Crashes, leaks, sanitizer reports and broken invariants (an abort) are
 * findings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"

static void exercise(const struct topo_board *b)
{
	int64_t n = topo_board_host_count(b, 0);
	int64_t step = n > 64 ? n / 64 : 1;

	if (n <= 0)
		abort();
	for (int64_t h = 0; h < n; h += step) {
		struct topo_host host;
		int r = topo_board_host(b, 0, h, &host);

		if (r == -ENAMETOOLONG)
			continue;
		if (r < 0 || !topo_label_value_valid(host.name, NULL, 0))
			abort();
		for (size_t p = 0; p < topo_board_ici_port_count(b); p++) {
			int64_t ph, bh;
			size_t pp, bp;

			if (topo_board_ici_peer(b, 0, h, p, &ph, &pp) != 0)
				continue;
			if (topo_board_ici_peer(b, 0, ph, pp, &bh, &bp) != 0 || bh != h || bp != p)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX] = "";
	int r;

	if (!b)
		return 0;
	r = topo_board_load_buffer(b, "fuzz", (const char *)data, size, err, sizeof(err));
	if (r == 0)
		exercise(b);
	else if (r == -EINVAL && strncmp(err, "fuzz:", 5) != 0)
		abort();
	topo_board_free(b);
	return 0;
}
