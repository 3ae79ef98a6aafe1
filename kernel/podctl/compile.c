/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl compile — run the Job and JobSet controllers offline.
 *
 *   podctl compile -f FILE [-o json|yaml]
 *
 * Reads the objects of FILE, replaces every Job and JobSet by the Workload,
 * groups and pods it compiles into (other objects, such as a parent's
 * Workload that a delegated JobSet refers to, pass through), and prints one
 * kind: List.  Invalid input: field-path errors prefixed by the file name on
 * stderr and exit 2; unreadable file: exit 1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/podctl/podctl.h"

static void compile_usage(FILE *f)
{
	fputs("Usage: podctl compile -f FILE [-o json|yaml] [--max-input-size SIZE]\n"
	      "Compile the Jobs, JobSets and LeaderWorkerSets of FILE into the Workload,\n"
	      "groups and pods they create (KEP-6089) and print them as a kind: List.\n"
	      "  " PODCTL_MAX_INPUT_HELP "\n",
	      f);
}

static const char *arg_value(int *i, int argc, char **argv, const char *short_name,
			     const char *long_name)
{
	const char *a = argv[*i];
	size_t n = strlen(long_name);

	if (strcmp(a, short_name) == 0 || strcmp(a, long_name) == 0)
		return *i + 1 < argc ? argv[++*i] : NULL;
	if (strncmp(a, long_name, n) == 0 && a[n] == '=')
		return a + n + 1;
	if (strncmp(a, short_name, 2) == 0 && a[2])
		return a + 2;
	return NULL;
}

int podctl_compile(int argc, char **argv)
{
	const char *file = NULL, *output = "json";
	enum pk_format fmt = PK_FORMAT_JSON;
	struct pk_errors errs = {0};
	json_t *objects = NULL, *out = NULL, *list;
	char err[512];
	size_t max_bytes = 0;
	int i, r;

	for (i = 1; i < argc; i++) {
		const char *v;

		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			compile_usage(stdout);
			return PODCTL_EXIT_OK;
		}
		if ((v = podctl_max_input_arg(&i, argc, argv))) {
			if ((r = podctl_max_input_size("compile", v, &max_bytes)) != 0)
				return r;
			continue;
		}
		if (strncmp(argv[i], "-f", 2) == 0 || strncmp(argv[i], "--filename", 10) == 0) {
			v = arg_value(&i, argc, argv, "-f", "--filename");
			if (!v || file) {
				fprintf(stderr, "podctl compile: %s\n",
					v ? "exactly one -f FILE" : "-f needs a FILE");
				return PODCTL_EXIT_USAGE;
			}
			file = v;
			continue;
		}
		if (strncmp(argv[i], "-o", 2) == 0 || strncmp(argv[i], "--output", 8) == 0) {
			output = arg_value(&i, argc, argv, "-o", "--output");
			if (!output) {
				fputs("podctl compile: -o needs json or yaml\n", stderr);
				return PODCTL_EXIT_USAGE;
			}
			continue;
		}
		fprintf(stderr, "podctl compile: unknown argument '%s'\n", argv[i]);
		compile_usage(stderr);
		return PODCTL_EXIT_USAGE;
	}
	if (!file) {
		compile_usage(stderr);
		return PODCTL_EXIT_USAGE;
	}
	if (strcmp(output, "yaml") == 0) {
		fmt = PK_FORMAT_YAML;
	} else if (strcmp(output, "json") != 0) {
		fprintf(stderr, "podctl compile: -o: unsupported output format '%s' (json, yaml)\n",
			output);
		return PODCTL_EXIT_USAGE;
	}
	r = pk_read_file_max(file, max_bytes, &objects, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "%s%s\n", *err ? err : strerror(-r),
			r == -EFBIG ? "; --max-input-size raises the limit" : "");
		return podctl_input_exit(r);
	}
	r = wb_expand_objects(objects, &out, &errs);
	json_decref(objects);
	if (r < 0) {
		if (errs.n)
			pk_errors_print(&errs, stderr, file);
		else
			fprintf(stderr, "%s: %s\n", file, strerror(-r));
		pk_errors_clear(&errs);
		return r == -EINVAL ? PODCTL_EXIT_USAGE : PODCTL_EXIT_FAILURE;
	}
	pk_errors_clear(&errs);
	list = pk_list_new(out);
	if (!list || pk_write(stdout, list, fmt) < 0 || fflush(stdout) != 0) {
		json_decref(list);
		fprintf(stderr, "podctl compile: cannot write the output\n");
		return PODCTL_EXIT_FAILURE;
	}
	json_decref(list);
	return PODCTL_EXIT_OK;
}
