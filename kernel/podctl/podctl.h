/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl.h — the subcommands of podctl.  main.c parses the global options and
 * hands argv (starting at the subcommand name) to one of these.  Each returns
 * the process exit code of CONTRACT.md: 0 success, 2 bad usage or invalid
 * input, 1 any other failure.
 */
#ifndef PODKERNEL_PODCTL_H
#define PODKERNEL_PODCTL_H

#include <errno.h>
#include <jansson.h>

#include "kernel/api/kubeconfig.h"

enum {
	PODCTL_EXIT_OK = 0,
	PODCTL_EXIT_FAILURE = 1,
	PODCTL_EXIT_USAGE = 2,
};

/*
 * Exit code for a failure to read an input the user named: a file that is
 * missing, not a file, unreadable or not valid is bad input (2); anything
 * else (out of memory, an I/O error) is another failure (1).
 */
static inline int podctl_input_exit(int r)
{
	switch (-r) {
	case EINVAL: case ENOENT: case ENOTDIR: case EISDIR: case EACCES:
	case ENAMETOOLONG: case EFBIG: case E2BIG:
		return PODCTL_EXIT_USAGE;
	default:
		return PODCTL_EXIT_FAILURE;
	}
}

struct podctl_globals {
	const char *server; /* --server, $PODKERNEL_SERVER, or NULL */
	const char *token;  /* --token, $PODKERNEL_TOKEN, or NULL */
	const char *kubeconfig; /* --kubeconfig, or NULL ($KUBECONFIG, ~/.kube/config) */
	/* --context, --cluster, --user, --certificate-authority ($PODKERNEL_CA_FILE),
	 * --client-certificate, --client-key, --insecure-skip-tls-verify */
	struct pk_kube_overrides kube;
	/* the server and credentials the client commands use (client.c resolves them) */
	struct pk_kube_credentials creds;
};

int podctl_schedule(int argc, char **argv);  /* schedule.c */
int podctl_validate(int argc, char **argv);  /* validate.c */
int podctl_compile(int argc, char **argv);   /* compile.c */
/* apply, get, delete, describe, top (client.c); resolves g->creds first */
int podctl_client(struct podctl_globals *g, int argc, char **argv);
/* GET path from the server as JSON (client.c; failures reported, exit code returned). */
int podctl_get_json(const struct podctl_globals *g, const char *path, const char *what,
		    json_t **ret);
/* map: the placement map in the terminal (map.c), called by podctl_client */
int podctl_map(const struct podctl_globals *g, int argc, char **argv);
/* board check|show|nodes|verify (topology/tools/board_cmd.c) */
int podctl_board(int argc, char **argv);

#endif
