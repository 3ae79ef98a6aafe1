/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl — podkernel's command line.  Offline scheduling and compilation of
 * object files, board tools for hardware teams, and a client of podkerneld.
 * This file only parses the global options and dispatches to a subcommand.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podctl/podctl.h"

static void usage(FILE *f)
{
	fputs("Usage: podctl [CLIENT OPTIONS] COMMAND [ARGS...]\n"
	      "\n"
	      "Offline:\n"
	      "  schedule -f FILE... [-o json|yaml] [--explain] [--strategy NAME]\n"
	      "           [--gated-gangs-wait]\n"
	      "  compile  -f FILE [-o json|yaml]    Jobs, JobSets, LWS -> Workload, groups, pods\n"
	      "  validate -f FILE...                static validation\n"
	      "  simulate --board FILE --trace FILE [--strategy fit,kep] [-o report.html|json]\n"
	      "                                     replay a trace on a virtual clock\n"
	      "  (each also takes --max-input-size SIZE: the largest input file, default 256Mi)\n"
	      "Boards:\n"
	      "  board check|show|nodes|verify|occupancy ...\n"
	      "  store check FILE                   a podkerneld store's integrity (podkernel.db)\n"
	      "  store backup|restore [--data-dir DIR] FILE   online backup; restore (stopped)\n"
	      "Appliance client (podkerneld):\n"
	      "  apply -f FILE | get KIND[,KIND] [NAME] | delete KIND NAME | describe KIND NAME\n"
	      "  top [--level LEVEL]                requests against allocatable per domain\n"
	      "  map [--color auto|always|never] [--width N] [DOMAIN...]   placement map\n"
	      "  queue                              ClusterQueues, LocalQueues, pending workloads\n"
	      "Shell:\n"
	      "  completion bash|zsh                a completion script: source <(podctl "
	      "completion bash)\n"
	      "\n"
	      "Client options (as kubectl's):\n"
	      "  --kubeconfig FILE     else $KUBECONFIG (a ':' list), else ~/.kube/config\n"
	      "  --context NAME        else the kubeconfig's current-context\n"
	      "  --cluster NAME | --user NAME   override the context's\n"
	      "  --server URL          else $PODKERNEL_SERVER, the kubeconfig, "
	      "http://127.0.0.1:6443\n"
	      "  --token TOKEN         else $PODKERNEL_TOKEN, the kubeconfig's token or tokenFile\n"
	      "  --certificate-authority FILE   else the kubeconfig's CA, else $PODKERNEL_CA_FILE\n"
	      "  --client-certificate FILE --client-key FILE\n"
	      "  --insecure-skip-tls-verify\n"
	      "\n"
	      "Exit: 0 ok, 2 bad usage or input, 1 other failure.\n",
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

/* --name VALUE or --name=VALUE of the client options (kubectl's names). */
static bool global_option(int *i, int argc, char **argv, struct podctl_globals *g)
{
	const struct {
		const char *name;
		const char **dst;
	} opts[] = {
	    {"--server", &g->server},
	    {"--token", &g->token},
	    {"--kubeconfig", &g->kubeconfig},
	    {"--context", &g->kube.context},
	    {"--cluster", &g->kube.cluster},
	    {"--user", &g->kube.user},
	    {"--certificate-authority", &g->kube.ca_file},
	    {"--client-certificate", &g->kube.cert_file},
	    {"--client-key", &g->kube.key_file},
	};

	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		size_t n = strlen(opts[k].name);
		const char *v;

		if (strncmp(argv[*i], opts[k].name, n) != 0 || (argv[*i][n] && argv[*i][n] != '='))
			continue;
		v = option_value(i, argc, argv, opts[k].name);
		if (!v)
			return false;
		*opts[k].dst = v;
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct podctl_globals g = {
	    .server = getenv("PODKERNEL_SERVER"),
	    .token = getenv("PODKERNEL_TOKEN"),
	    .env_ca_file = getenv("PODKERNEL_CA_FILE"),
	};
	int i;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return PODCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("podctl %s\n", PODKERNEL_VERSION);
			return PODCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--insecure-skip-tls-verify") == 0 ||
		    strcmp(argv[i], "--insecure-skip-tls-verify=true") == 0) {
			g.kube.insecure = true;
			continue;
		}
		if (global_option(&i, argc, argv, &g))
			continue;
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
	if (strcmp(argv[0], "simulate") == 0)
		return podctl_simulate(argc, argv);
	if (strcmp(argv[0], "validate") == 0)
		return podctl_validate(argc, argv);
	if (strcmp(argv[0], "compile") == 0)
		return podctl_compile(argc, argv);
	if (strcmp(argv[0], "board") == 0)
		return podctl_board(argc, argv);
	if (strcmp(argv[0], "completion") == 0)
		return podctl_completion(argc, argv);
	if (strcmp(argv[0], "store") == 0)
		return podctl_store(argc, argv);
	if (strcmp(argv[0], "help") == 0) {
		usage(stdout);
		return PODCTL_EXIT_OK;
	}
	return podctl_client(&g, argc, argv);
}
