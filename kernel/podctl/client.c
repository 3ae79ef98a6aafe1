/* SPDX-License-Identifier: Apache-2.0 */
/* podctl client commands — placeholder until the appliance client lands. */
#include <stdio.h>

#include "kernel/podctl/podctl.h"

int podctl_client(const struct podctl_globals *g, int argc, char **argv)
{
	(void)g;
	(void)argc;
	fprintf(stderr, "podctl: unknown command '%s' (try --help)\n", argv[0]);
	return PODCTL_EXIT_USAGE;
}
