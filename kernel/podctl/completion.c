/* SPDX-License-Identifier: Apache-2.0 */
/*
 * completion.c — `podctl completion bash|zsh`: a shell completion script.
 *
 * The script completes the command words, the board subcommands, the kinds
 * `get`, `describe` and `delete` take (every served kind's plural and short
 * names, from the one kinds table, so a new kind completes without an edit
 * here), the output formats after -o, and files after -f and --board.  zsh
 * runs the same function through bashcompinit, as kubectl's zsh script did
 * before it grew its own.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl.h"

static const char COMMANDS[] = "schedule compile validate simulate board apply get delete "
			       "describe top map queue completion help";
static const char BOARD_COMMANDS[] = "check show nodes verify occupancy";

/* Every served kind's plural and short names, space-separated. */
static void print_kinds(FILE *f)
{
	for (const struct pk_type *const *p_t = pk_types, *t; (t = *p_t); p_t++) {
		fprintf(f, " %s", t->plural);
		for (const char *p = t->short_names; p && *p;) {
			size_t n = strcspn(p, ",");
			fprintf(f, " %.*s", (int)n, p);
			p += n + (p[n] == ',');
		}
	}
}

static void print_bash(FILE *f)
{
	fputs("# podctl completion (bash): source <(podctl completion bash)\n"
	      "_podctl()\n{\n"
	      "\tlocal cur prev cmd i\n"
	      "\tcur=${COMP_WORDS[COMP_CWORD]}\n"
	      "\tprev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tcmd=\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tcase ${COMP_WORDS[i]} in\n"
	      "\t\t--server|--token|--kubeconfig|--context|--cluster|--user|"
	      "--certificate-authority|--client-certificate|--client-key) ((i++)) ;;\n"
	      "\t\t-*) ;;\n"
	      "\t\t*) cmd=${COMP_WORDS[i]}; break ;;\n"
	      "\t\tesac\n"
	      "\tdone\n"
	      "\tcase $prev in\n"
	      "\t-f|--filename|--board|--trace|--kubeconfig|--certificate-authority|"
	      "--client-certificate|--client-key|--links)\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
	      "\t-o|--output) COMPREPLY=($("
	      "compgen -W \"wide json yaml jsonpath= custom-columns=\" -- \"$cur\"))\n"
	      "\t\t[[ $COMPREPLY == *= ]] && compopt -o nospace 2>/dev/null; return ;;\n"
	      "\t--strategy) COMPREPLY=($(compgen -W \"fit kep\" -- \"$cur\")); return ;;\n"
	      "\t--color) COMPREPLY=($(compgen -W \"auto always never\" -- \"$cur\")); return ;;\n"
	      "\tesac\n"
	      "\tcase $cmd in\n",
	      f);
	fprintf(f, "\t'') COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n", COMMANDS);
	fprintf(
	    f,
	    "\tboard) [ \"$prev\" = board ] && COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n",
	    BOARD_COMMANDS);
	/* get takes kinds separated by commas (pods,pg): complete the last one */
	fputs("\tget|describe|delete)\n"
	      "\t\tif [ \"$prev\" = \"$cmd\" ]; then\n"
	      "\t\t\tlocal pre=\n"
	      "\t\t\t[ \"$cmd\" = get ] && [[ $cur == *,* ]] && pre=${cur%,*},\n"
	      "\t\t\tCOMPREPLY=($(compgen -P \"$pre\" -W \"",
	      f);
	print_kinds(f);
	fputs("\" -- \"${cur#\"$pre\"}\"))\n"
	      "\t\tfi ;;\n"
	      "\tcompletion) COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")) ;;\n"
	      "\tesac\n"
	      "}\n"
	      "complete -o default -F _podctl podctl\n",
	      f);
}

int podctl_completion(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "bash") != 0 && strcmp(argv[1], "zsh") != 0)) {
		fprintf(stderr, "usage: podctl completion bash|zsh\n");
		return PODCTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "zsh") == 0)
		fputs("#compdef podctl\n"
		      "# podctl completion (zsh): source <(podctl completion zsh)\n"
		      "autoload -U +X bashcompinit && bashcompinit\n",
		      stdout);
	print_bash(stdout);
	return PODCTL_EXIT_OK;
}
