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
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/kube/kubeconfig.h"

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
	case EINVAL:
	case ENOENT:
	case ENOTDIR:
	case EISDIR:
	case EACCES:
	case ENAMETOOLONG:
	case EFBIG:
	case E2BIG:
		return PODCTL_EXIT_USAGE;
	default:
		return PODCTL_EXIT_FAILURE;
	}
}

/*
 * --max-input-size SIZE of the offline commands (schedule, validate,
 * compile): the largest input file, e.g. 512Mi (default PK_MAX_FILE_BYTES).
 * Prints the usage error itself; returns 0 or PODCTL_EXIT_USAGE.
 */
#define PODCTL_MAX_INPUT_HELP                                                                      \
	"--max-input-size SIZE  largest input file, e.g. 512Mi or 1Gi (default 256Mi)"
/* argv[*i] is --max-input-size: its value ("--max-input-size=V" or the next
 * argument, consumed), "" when it is missing; NULL when argv[*i] is another flag. */
static inline const char *podctl_max_input_arg(int *i, int argc, char **argv)
{
	static const char flag[] = "--max-input-size";
	const char *a = argv[*i];

	if (strcmp(a, flag) == 0)
		return *i + 1 < argc ? argv[++*i] : "";
	if (strncmp(a, flag, sizeof(flag) - 1) == 0 && a[sizeof(flag) - 1] == '=')
		return a + sizeof(flag);
	return NULL;
}

static inline int podctl_max_input_size(const char *cmd, const char *v, size_t *ret_bytes)
{
	if (pk_parse_size(v, ret_bytes) == 0)
		return 0;
	fprintf(stderr,
		"podctl %s: --max-input-size: expected a size in bytes such as 512Mi, got '%s'\n",
		cmd, v ? v : "");
	return PODCTL_EXIT_USAGE;
}

struct kube_client;
struct kube_conn;

struct podctl_globals {
	const char *server;	/* --server, $PODKERNEL_SERVER, or NULL */
	const char *token;	/* --token, $PODKERNEL_TOKEN, or NULL */
	const char *kubeconfig; /* --kubeconfig, or NULL ($KUBECONFIG, ~/.kube/config) */
	/* --context, --cluster, --user, --certificate-authority,
	 * --client-certificate, --client-key, --insecure-skip-tls-verify */
	struct pk_kube_overrides kube;
	const char *env_ca_file; /* $PODKERNEL_CA_FILE: a CA when nothing else names one */
	/* the client commands' kernel/kube client and connection (client.c opens them) */
	struct kube_client *client;
	struct kube_conn *conn;
};

int podctl_schedule(int argc, char **argv); /* schedule.c */
int podctl_simulate(int argc, char **argv); /* simulate.c */
int podctl_validate(int argc, char **argv); /* validate.c */
int podctl_compile(int argc, char **argv);  /* compile.c */
/* apply, get, delete, describe, top, map, queue (client.c); opens g->client first */
int podctl_client(struct podctl_globals *g, int argc, char **argv);
/* GET path from the server as JSON (client.c; failures reported, exit code returned). */
int podctl_get_json(const struct podctl_globals *g, const char *path, const char *what,
		    json_t **ret);
/* map: the placement map in the terminal (map.c), called by podctl_client */
int podctl_map(const struct podctl_globals *g, int argc, char **argv);
/*
 * Offline Kueue admission (schedule_queues.c): whether objects hold queues
 * or queued Jobs or JobSets; and the standalone queue controller's pass run
 * once on them (in a scratch store under $TMPDIR), each queued Job and
 * JobSet of objects taking the spec and annotations the pass left it
 * (admitted: unsuspended, its flavors in its pod templates; pending:
 * suspended, its position and reason).  -errno, err says why (an object the
 * store refuses, such as a Job created with the admission annotation).
 */
bool podctl_queues_present(const json_t *objects);
int podctl_queues_admit(json_t *objects, char *err, size_t errlen);
/* queue: ClusterQueues, LocalQueues and pending workloads (queue.c), called by podctl_client */
int podctl_queue(const struct podctl_globals *g, int argc, char **argv);
/* board check|show|nodes|verify|occupancy (board.c) */
int podctl_board(int argc, char **argv);
/* podctl completion bash|zsh: the shell completion script on stdout. */
int podctl_completion(int argc, char **argv);
/* store check FILE: a podkerneld store's integrity (store_check.c). */
int podctl_store(int argc, char **argv);
/* `podctl store backup|restore [--data-dir DIR] FILE` (store_backup.c). */
int podctl_store_copy(int argc, char **argv);
/* `podctl board occupancy` (board_occupancy.c): argv[0] is "occupancy". */
int podctl_board_occupancy(int argc, char **argv);
/* board verify, argv starting at "verify" (board_verify.c) */
int podctl_board_verify(int argc, char **argv);

struct topo_board;
/* The human summary of `podctl board show` (board_show.c); 0 or -errno. */
int podctl_board_show(FILE *f, const struct topo_board *board, int superslices);

#endif
