/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_config.c — libFuzzer target for podkerneld's configuration file
 * (kernel/podkerneld/config.c): any bytes as the file.  A refused file must
 * come with a message naming the file and leave nothing allocated; an
 * accepted one stands for flags the schema knows, each at most once, each
 * with an argument unless it is a switch.  Crashes, leaks, sanitizer
 * reports and broken invariants (an abort) are findings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podkerneld/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkd_config *c = NULL;
	char err[512] = "";
	int r = pkd_config_parse("fuzz.yaml", (const char *)data, size, &c, err, sizeof(err));

	if (r < 0) {
		if (c || (r != -ENOMEM && strncmp(err, "fuzz.yaml", 9) != 0))
			abort();
		return 0;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (!c->flags[i].flag || !*c->flags[i].flag)
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->flags[i].flag, c->flags[j].flag) == 0)
				abort();
	}
	pkd_config_free(c);
	return 0;
}
