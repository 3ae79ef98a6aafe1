/* SPDX-License-Identifier: Apache-2.0 */
/* podctl board verify — placeholder until the link verifier lands in this build. */
#include <stdio.h>

#include "topology/tools/board_verify.h"

int podctl_board_verify(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("podctl board verify: not in this build\n", stderr);
	return 1;
}
