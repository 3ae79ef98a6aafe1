/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl validate — static validation of object files.
 *
 *   podctl validate -f FILE [-f FILE ...]
 *
 * Every file is read with the object codec (YAML or JSON, multi-document,
 * Lists flattened) and every object is checked with pk_validate().  Problems
 * go to stderr, one per line, as "FILE: Kind/name: field.path: message", or
 * "FILE:LINE:COL: message" when the file does not parse.  Two objects of the
 * same kind, namespace and name across all files are reported as duplicates.
 * All files are checked before the exit status is decided: 0 when everything
 * is valid (a "FILE: N objects valid" line per file on stdout), 2 when
 * anything is invalid or a file is missing, 1 on other I/O failures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/builder/builder.h"
#include "kernel/podctl/podctl.h"

static void usage(FILE *f)
{
	fputs("Usage: podctl validate -f FILE [-f FILE ...] [--max-input-size SIZE]\n"
	      "\n"
	      "Checks Kubernetes-shaped objects (YAML or JSON) without a server.\n"
	      "Errors: FILE: Kind/name: field.path: message (exit 2).\n"
	      "  " PODCTL_MAX_INPUT_HELP "\n",
	      f);
}

/* "Kind/name", or "Kind #i" for an object without a name. */
static void describe(const json_t *obj, size_t index, char *buf, size_t len)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *name = pk_name(obj);

	if (!kind || !*kind)
		kind = "object";
	if (name && *name)
		snprintf(buf, len, "%s/%s", kind, name);
	else
		snprintf(buf, len, "%s #%zu", kind, index + 1);
}

/* Reports a second object with the same kind, namespace and name. */
static int check_duplicate(json_t *seen, const json_t *obj, const char *file, const char *what)
{
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));
	const char *name = pk_name(obj), *first;
	char key[800];

	/* a kind not served is reported by the validation already */
	if (!t || !name || !*name || !pk_obj_key(key, sizeof(key), t, pk_namespace(obj), name))
		return 0;
	first = json_string_value(json_object_get(seen, key));
	if (first) {
		fprintf(stderr, "%s: %s: metadata.name: Duplicate value: \"%s\" (also in %s)\n",
			file, what, name, first);
		return 1;
	}
	return json_object_set_new(seen, key, json_string(file)) < 0 ? -ENOMEM : 0;
}

/*
 * The object model's static rules, and for Jobs and JobSets the workload
 * builder's rules of their scheduling intent (allow-lists, cross-field rules).
 */
static int validate_object(const json_t *obj, struct pk_errors *errs)
{
	int r = pk_validate(obj, errs);

	switch (pk_kind_of(obj)) {
	case PK_KIND_JOB:
		if (wb_job_validate(obj, NULL, errs) < 0)
			r = -EINVAL;
		break;
	case PK_KIND_JOBSET:
		if (wb_jobset_validate(obj, NULL, errs) < 0)
			r = -EINVAL;
		break;
	case PK_KIND_LEADER_WORKER_SET:
		if (wb_lws_validate(obj, NULL, errs) < 0)
			r = -EINVAL;
		break;
	default:
		break;
	}
	return r;
}

/* Validate one file: 0 valid, 1 invalid objects, or -errno when unreadable. */
static int validate_file(const char *file, size_t max_bytes, json_t *seen)
{
	struct pk_errors errs = {0};
	char err[1024], what[320];
	json_t *objs, *obj;
	size_t i;
	int ret, bad = 0;

	ret = pk_read_file_max(file, max_bytes, &objs, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s%s\n", err[0] ? err : strerror(-ret),
			ret == -EFBIG ? "; --max-input-size raises the limit" : "");
		return ret;
	}
	json_array_foreach(objs, i, obj)
	{
		describe(obj, i, what, sizeof(what));
		if (validate_object(obj, &errs) < 0) {
			char prefix[1400];

			snprintf(prefix, sizeof(prefix), "%s: %s", file, what);
			pk_errors_print(&errs, stderr, prefix);
			pk_errors_clear(&errs);
			bad = 1;
		}
		if (check_duplicate(seen, obj, file, what) != 0)
			bad = 1;
	}
	if (!bad)
		printf("%s: %zu object%s valid\n", file, json_array_size(objs),
		       json_array_size(objs) == 1 ? "" : "s");
	json_decref(objs);
	return bad;
}

int podctl_validate(int argc, char **argv)
{
	const char **files = calloc((size_t)argc + 1, sizeof(*files));
	size_t nfiles = 0, max_bytes = 0;
	json_t *seen = json_object();
	int status = PODCTL_EXIT_OK;

	if (!files || !seen) {
		free(files);
		json_decref(seen);
		return PODCTL_EXIT_FAILURE;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			goto out;
		} else if ((v = podctl_max_input_arg(&i, argc, argv))) {
			if ((status = podctl_max_input_size("validate", v, &max_bytes)) != 0)
				goto out;
		} else if ((strcmp(a, "-f") == 0 || strcmp(a, "--filename") == 0) && i + 1 < argc) {
			files[nfiles++] = argv[++i];
		} else if (strncmp(a, "--filename=", 11) == 0 && a[11]) {
			files[nfiles++] = a + 11;
		} else if (strncmp(a, "-f", 2) == 0 && a[2] && a[2] != '-') {
			files[nfiles++] = a + 2 + (a[2] == '=');
		} else {
			fprintf(stderr, "podctl validate: unknown or incomplete argument '%s'\n",
				a);
			usage(stderr);
			status = PODCTL_EXIT_USAGE;
			goto out;
		}
	}
	if (!nfiles) {
		fputs("podctl validate: at least one -f FILE is required\n", stderr);
		usage(stderr);
		status = PODCTL_EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < nfiles; i++) {
		int ret = validate_file(files[i], max_bytes, seen);

		if (ret == 1 || (ret < 0 && podctl_input_exit(ret) == PODCTL_EXIT_USAGE)) {
			if (status == PODCTL_EXIT_OK)
				status = PODCTL_EXIT_USAGE;
		} else if (ret < 0) {
			status = PODCTL_EXIT_FAILURE;
		}
	}
out:
	free(files);
	json_decref(seen);
	return status;
}
