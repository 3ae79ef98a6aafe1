/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl — podkernel's command line.  Offline scheduling and compilation of
 * object files, board tools for hardware teams, and a client of podkerneld.
 * This file only parses the global options and dispatches to a subcommand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podctl/podctl.h"

static void usage(FILE *f)
{
	fputs("Usage: podctl [--server URL] [--token TOKEN] COMMAND [ARGS...]\n"
	      "\n"
	      "Offline:\n"
	      "  schedule -f FILE... [-o json|yaml] [--explain] [--strategy NAME]\n"
	      "  compile  -f FILE [-o json|yaml]    Jobs/JobSets -> Workload, groups, pods\n"
	      "  validate -f FILE...                static validation\n"
	      "Boards:\n"
	      "  board check|show|nodes|verify FILE ...\n"
	      "Appliance client (podkerneld):\n"
	      "  apply -f FILE | get KIND [NAME] | delete KIND NAME | describe KIND NAME | top\n"
	      "\n"
	      "--server defaults to $PODKERNEL_SERVER or http://127.0.0.1:6443;\n"
	      "--token to $PODKERNEL_TOKEN.  Exit: 0 ok, 2 bad usage or input, 1 other failure.\n",
	      f);
}

static const char *option_value(int *i, int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(argv[*i], name) == 0) {
		if (*i + 1 >= argc)
			return NULL;
		return argv[++*i];
	}
	if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct podctl_globals g = {
		.server = getenv("PODKERNEL_SERVER"),
		.token = getenv("PODKERNEL_TOKEN"),
	};
	int i;

	if (!g.server || !*g.server)
		g.server = "http://127.0.0.1:6443";
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *v;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return PODCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("podctl %s\n", PODKERNEL_VERSION);
			return PODCTL_EXIT_OK;
		}
		if (strncmp(argv[i], "--server", 8) == 0 && (v = option_value(&i, argc, argv, "--server"))) {
			g.server = v;
			continue;
		}
		if (strncmp(argv[i], "--token", 7) == 0 && (v = option_value(&i, argc, argv, "--token"))) {
			g.token = v;
			continue;
		}
		fprintf(stderr, "podctl: unknown or incomplete option '%s'\n", argv[i]);
		usage(stderr);
		return PODCTL_EXIT_USAGE;
	}
	if (i >= argc) {
		usage(stderr);
		return PODCTL_EXIT_USAGE;
	}
	argc -= i;
	argv += i;
	if (strcmp(argv[0], "schedule") == 0)
		return podctl_schedule(argc, argv);
	if (strcmp(argv[0], "validate") == 0)
		return podctl_validate(argc, argv);
	if (strcmp(argv[0], "compile") == 0)
		return podctl_compile(argc, argv);
	if (strcmp(argv[0], "board") == 0)
		return podctl_board(argc, argv);
	if (strcmp(argv[0], "help") == 0) {
		usage(stdout);
		return PODCTL_EXIT_OK;
	}
	return podctl_client(&g, argc, argv);
}
