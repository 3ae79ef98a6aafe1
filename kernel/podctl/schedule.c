/* SPDX-License-Identifier: Apache-2.0 */
/* podctl schedule — placeholder until its module lands; replaced by the real command. */
#include <stdio.h>

#include "kernel/podctl/podctl.h"

int podctl_schedule(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("podctl: 'schedule' is not in this build yet\n", stderr);
	return PODCTL_EXIT_FAILURE;
}
