/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_verify.c — `podctl board verify BOARD --links REPORT`.
 *
 * REPORT holds link reports, YAML or JSON, one or many (a List): podagent
 * LinkReport objects or Nodes carrying one.  The comparison itself is
 * kernel/api/board_links.c; this file parses the arguments, reads the files,
 * prints each mismatch and the tally.  Exit 0 when everything matches, 1 on
 * any mismatch, 2 on bad input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

enum { VERIFY_OK = 0, VERIFY_MISMATCH = 1, VERIFY_USAGE = 2 };

/* ---- command ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: podctl board verify BOARD --links REPORT [--superslices N]\n"
	      "REPORT: podagent LinkReports or Nodes (YAML or JSON, a List for many hosts).\n"
	      "Exit 0 when the wiring matches, 1 on a mismatch, 2 on bad input.\n",
	      f);
}

struct verify_args {
	const char *board, *links;
	int superslices;
};

static int parse(int argc, char **argv, struct verify_args *a)
{
	for (int i = 1; i < argc; i++) {
		char *end;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 1;
		}
		if (strcmp(argv[i], "--links") == 0 && i + 1 < argc) {
			a->links = argv[++i];
		} else if (strncmp(argv[i], "--links=", 8) == 0) {
			a->links = argv[i] + 8;
		} else if (strcmp(argv[i], "--superslices") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > 4096) {
				fprintf(stderr,
					"podctl board verify: --superslices: expected 1..4096\n");
				return -EINVAL;
			}
			a->superslices = (int)v;
		} else if (argv[i][0] != '-' && !a->board) {
			a->board = argv[i];
		} else {
			fprintf(stderr, "podctl board verify: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!a->board || !a->links) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

int podctl_board_verify(int argc, char **argv)
{
	struct verify_args a = {0};
	struct topo_board *board = NULL;
	struct pk_board_links *c = NULL;
	struct pk_link_tally t = {0};
	json_t *objs = NULL;
	char err[TOPO_ERR_MAX + 128];
	int r, rc = VERIFY_USAGE;

	r = parse(argc, argv, &a);
	if (r != 0)
		return r > 0 ? VERIFY_OK : VERIFY_USAGE;
	board = topo_board_new();
	if (!board) {
		rc = VERIFY_MISMATCH;
		goto out;
	}
	if (topo_board_load_file(board, a.board, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	if (topo_board_ici_port_count(board) == 0) {
		fprintf(stderr, "%s: board %s has no ICI ports to verify\n", a.board,
			topo_board_name(board));
		goto out;
	}
	if (pk_read_file(a.links, &objs, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	r = pk_board_links_new(board, a.superslices, &c);
	if (r < 0) {
		fprintf(stderr, "%s: cannot enumerate the board's hosts: %s\n", a.board,
			strerror(-r));
		rc = r == -ENOMEM ? VERIFY_MISMATCH : VERIFY_USAGE;
		goto out;
	}
	if (json_array_size(objs) == 0) {
		fprintf(stderr, "%s: no link reports\n", a.links);
		goto out;
	}
	if (pk_board_links_verify(c, objs, stdout, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", a.links, err);
		goto out;
	}
	printf("%d hosts, %d ports: %d ok, %d missing, %d wrong peer, %d down, %d unexpected, "
	       "%d unknown\n",
	       t.hosts, t.ports, t.ok, t.missing, t.wrong, t.down, t.unexpected, t.unknown);
	rc = t.missing || t.wrong || t.down || t.unexpected || t.unknown ? VERIFY_MISMATCH
									 : VERIFY_OK;
out:
	json_decref(objs);
	pk_board_links_free(c);
	topo_board_free(board);
	return rc;
}
