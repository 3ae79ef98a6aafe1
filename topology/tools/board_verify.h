/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_verify.h — `podctl board verify FILE --links REPORT`: the board's
 * expected ICI wiring against a podagent link report.  Called by the board
 * command dispatcher (board_cmd.c) with argv starting at "verify"; returns the
 * podctl exit code.
 */
#ifndef PODKERNEL_TOPOLOGY_TOOLS_BOARD_VERIFY_H
#define PODKERNEL_TOPOLOGY_TOOLS_BOARD_VERIFY_H

int podctl_board_verify(int argc, char **argv);

#endif
