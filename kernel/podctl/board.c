/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board.c — `podctl board check|show|nodes|verify`.
 *
 * Parses the subcommand's arguments, loads the board with libtopo and hands
 * it to the summary (board_show.c), the Node objects of kernel/api
 * (board_nodes.c) or the link verifier (board_verify.c).  Exit codes follow
 * CONTRACT.md: 0 success, 2 bad usage or an invalid board (the loader's
 * FILE:LINE:COL message on stderr), 1 any other failure (a file that cannot
 * be read, output that cannot be written).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

#define MAX_SUPERSLICES 4096

static void usage(FILE *f)
{
	fputs("Usage: podctl board check FILE...\n"
	      "       podctl board show FILE [--superslices N]\n"
	      "       podctl board nodes FILE [-o json|yaml] [--superslices N]\n"
	      "       podctl board verify FILE --links REPORT\n"
	      "       podctl board occupancy -f FILE [-f FILE...] [--superslice NAME] [--map]\n"
	      "\n"
	      "check   validate board files; errors as FILE:LINE:COL: message\n"
	      "show    summary: chips, hosts, cubes, levels, label keys\n"
	      "nodes   the v1 Nodes (a List) of the board's simulated cluster, with the\n"
	      "        labels podagent publishes; --superslices N sets how many outermost\n"
	      "        domains the cluster has (default: the board's count)\n"
	      "verify  the board's expected ICI wiring against a podagent link report\n"
	      "occupancy  used and free boxes of each superslice from a file of Nodes and Pods\n",
	      f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("podctl board: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage(stderr);
	return PODCTL_EXIT_USAGE;
}

/* Load one board; prints the error and returns the exit code on failure. */
static int load(const char *path, struct topo_board **ret)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX] = "";
	int r;

	if (!b) {
		fputs("podctl board: out of memory\n", stderr);
		return PODCTL_EXIT_FAILURE;
	}
	r = topo_board_load_file(b, path, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "%s\n", err[0] ? err : strerror(-r));
		topo_board_free(b);
		return podctl_input_exit(r);
	}
	*ret = b;
	return PODCTL_EXIT_OK;
}

static int cmd_check(int argc, char **argv)
{
	int worst = PODCTL_EXIT_OK;

	if (argc < 2)
		return usage_error("check needs a FILE%s", "");
	for (int i = 1; i < argc; i++) {
		struct topo_board *b;
		int rc = load(argv[i], &b);

		if (rc == PODCTL_EXIT_OK) {
			printf("%s: ok\n", argv[i]);
			topo_board_free(b);
		} else if (rc == PODCTL_EXIT_USAGE || worst == PODCTL_EXIT_OK) {
			/* An invalid board outranks an unreadable file. */
			worst = rc;
		}
	}
	return worst;
}

static int parse_superslices(const char *s, int *ret)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > MAX_SUPERSLICES)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

struct opts {
	const char *file;
	enum pk_format fmt;
	int superslices;
};

/* FILE [-o json|yaml] [--superslices N], in any order; -o only when allowed. */
static int parse_opts(int argc, char **argv, bool allow_output, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 ||
		    strcmp(a, "--superslices") == 0) {
			if (i + 1 >= argc)
				return usage_error("%s needs a value", a);
			v = argv[++i];
		} else if (strncmp(a, "-o=", 3) == 0 || strncmp(a, "--output=", 9) == 0 ||
			   strncmp(a, "--superslices=", 14) == 0) {
			v = strchr(a, '=') + 1;
		}
		if (v && strncmp(a, "--superslices", 13) == 0) {
			if (parse_superslices(v, &o->superslices) < 0)
				return usage_error("--superslices: expected a number from 1 to "
						   "4096, got '%s'",
						   v);
		} else if (v && allow_output) {
			if (strcmp(v, "json") == 0)
				o->fmt = PK_FORMAT_JSON;
			else if (strcmp(v, "yaml") == 0)
				o->fmt = PK_FORMAT_YAML;
			else
				return usage_error("-o: expected json or yaml, got '%s'", v);
		} else if (v || (a[0] == '-' && a[1])) {
			return usage_error("unknown option '%s'", a);
		} else if (o->file) {
			return usage_error("one FILE only, got '%s' as well", a);
		} else {
			o->file = a;
		}
	}
	if (!o->file)
		return usage_error("%s needs a FILE", argv[0]);
	return PODCTL_EXIT_OK;
}

/* The cluster the options ask for must exist: hosts within the limits. */
static int check_cluster(const struct topo_board *b, const struct opts *o)
{
	int64_t n = topo_board_host_count(b, o->superslices);

	if (n > 0)
		return PODCTL_EXIT_OK;
	fprintf(stderr, "podctl board: %s: %d outermost domains make more hosts than supported\n",
		o->file, o->superslices);
	return PODCTL_EXIT_USAGE;
}

static int cmd_show(int argc, char **argv)
{
	struct opts o = {0};
	struct topo_board *b;
	int rc = parse_opts(argc, argv, false, &o), r;

	if (rc == PODCTL_EXIT_OK)
		rc = load(o.file, &b);
	if (rc != PODCTL_EXIT_OK)
		return rc;
	rc = check_cluster(b, &o);
	if (rc == PODCTL_EXIT_OK) {
		r = podctl_board_show(stdout, b, o.superslices);
		if (r < 0) {
			fprintf(stderr, "podctl board show: %s: %s\n", o.file, strerror(-r));
			rc = PODCTL_EXIT_FAILURE;
		}
	}
	topo_board_free(b);
	return rc;
}

static int cmd_nodes(int argc, char **argv)
{
	struct opts o = {.fmt = PK_FORMAT_JSON};
	struct topo_board *b;
	json_t *items, *list;
	int rc = parse_opts(argc, argv, true, &o), r;

	if (rc == PODCTL_EXIT_OK)
		rc = load(o.file, &b);
	if (rc != PODCTL_EXIT_OK)
		return rc;
	rc = check_cluster(b, &o);
	if (rc != PODCTL_EXIT_OK)
		goto out;
	r = pk_board_nodes_json(b, o.superslices, &items);
	if (r < 0) {
		fprintf(stderr, "podctl board nodes: %s: %s%s\n", o.file, strerror(-r),
			r == -ENAMETOOLONG ? " (a host name or label value is over 63 characters)"
					   : "");
		rc = r == -ENAMETOOLONG || r == -EINVAL ? PODCTL_EXIT_USAGE : PODCTL_EXIT_FAILURE;
		goto out;
	}
	list = pk_list_new(items);
	r = list ? pk_write(stdout, list, o.fmt) : -ENOMEM;
	if (r == 0 && fflush(stdout) != 0)
		r = -EIO;
	if (r < 0) {
		fprintf(stderr, "podctl board nodes: writing output: %s\n", strerror(-r));
		rc = PODCTL_EXIT_FAILURE;
	}
	json_decref(list);
out:
	topo_board_free(b);
	return rc;
}

int podctl_board(int argc, char **argv)
{
	const char *sub;

	if (argc < 2)
		return usage_error("missing subcommand%s", "");
	sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		usage(stdout);
		return PODCTL_EXIT_OK;
	}
	for (int i = 2; i < argc && strcmp(sub, "verify") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return PODCTL_EXIT_OK;
		}
	if (strcmp(sub, "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(sub, "show") == 0)
		return cmd_show(argc - 1, argv + 1);
	if (strcmp(sub, "nodes") == 0)
		return cmd_nodes(argc - 1, argv + 1);
	if (strcmp(sub, "verify") == 0)
		return podctl_board_verify(argc - 1, argv + 1);
	if (strcmp(sub, "occupancy") == 0)
		return podctl_board_occupancy(argc - 1, argv + 1);
	return usage_error("unknown subcommand '%s'", sub);
}
