/* SPDX-License-Identifier: Apache-2.0 */
/* podctl board — placeholder until the board tools land. */
#include <stdio.h>

#include "kernel/podctl/podctl.h"

int podctl_board(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("podctl: 'board' is not in this build yet\n", stderr);
	return PODCTL_EXIT_FAILURE;
}
