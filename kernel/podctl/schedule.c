/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl schedule — offline scheduling of object files (CONTRACT.md).
 *
 * Reads every -f file, expands Jobs and JobSets into the Workload, groups and
 * pods they compile into, validates each object statically (exit 2 with
 * "FILE: field.path: ..." messages), then runs the scheduling core to
 * quiescence (pk_sched_run, with the resource claim controller as the run's
 * controller, pk_claims_pass) and prints one kind: List with every object after
 * the run.  Preempted pods are left out and named on stderr.  --explain sends
 * the scheduler's recursive trace to stderr; --strategy picks a placement
 * strategy by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"
#include "kernel/podctl/podctl.h"
#include "kernel/sched/sched.h"

#define MAX_FILES 256

static void usage(FILE *f)
{
	fputs("Usage: podctl schedule -f FILE [-f FILE ...] [-o json|yaml] [--explain] "
	      "[--strategy NAME]\n"
	      "                       [--max-input-size SIZE] [--gated-gangs-wait]\n"
	      "  " PODCTL_MAX_INPUT_HELP "\n"
	      "  --gated-gangs-wait  a gang waits while any member has scheduling gates\n"
	      "                      (default: gated members count toward minCount and the\n"
	      "                      others are placed, as kube-scheduler does)\n"
	      "Strategies:",
	      f);
	for (size_t i = 0; i < pk_sched_strategy_count(); i++)
		fprintf(f, " %s%s", pk_sched_strategy_name(i), i == 0 ? " (default)" : "");
	fputc('\n', f);
}

static const char *arg_value(int *i, int argc, char **argv, const char *s, const char *l)
{
	const char *a = argv[*i];
	size_t n;

	if ((s && strcmp(a, s) == 0) || strcmp(a, l) == 0)
		return *i + 1 < argc ? argv[++*i] : NULL;
	n = strlen(l);
	if (strncmp(a, l, n) == 0 && a[n] == '=')
		return a + n + 1;
	return NULL;
}

static bool has_workload_kinds(const json_t *objects)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o)
	{
		enum pk_kind k = pk_kind_of(o);

		if (k == PK_KIND_JOB || k == PK_KIND_JOBSET || k == PK_KIND_LEADER_WORKER_SET)
			return true;
	}
	return false;
}

/*
 * Nodes are most of a cluster and scheduling only reads them: each file's are
 * kept as compact text (pk_compact_object) from the moment they are
 * validated, so only one file's trees exist at a time; the scheduler reads
 * them back one by one and pk_write_list writes them out as they were.
 */
static int compact_nodes(json_t *objs)
{
	size_t i;
	json_t *o, *c;

	json_array_foreach(objs, i, o)
	{
		if (pk_kind_of(o) != PK_KIND_NODE)
			continue;
		if (!(c = pk_compact_object(o)) || json_array_set_new(objs, i, c) < 0)
			return -ENOMEM;
	}
	return 0;
}

static bool is_namespace(const json_t *o)
{
	const char *kind = json_string_value(json_object_get(o, "kind"));

	return kind && strcmp(kind, "Namespace") == 0;
}

/*
 * A Namespace is kept for its labels (an affinity term's namespaceSelector
 * reads them): it needs a name, and labels that are strings.
 */
static int validate(json_t *o, struct pk_errors *errs)
{
	const char *k;
	json_t *v, *labels = pk_get(o, "metadata.labels");

	if (!is_namespace(o))
		return pk_validate(o, errs);
	if (!pk_name(o) || !*pk_name(o))
		pk_errors_add(errs, "metadata.name: Required value");
	if (labels && !json_is_object(labels))
		pk_errors_add(errs, "metadata.labels: Invalid value: must be an object");
	json_object_foreach(json_is_object(labels) ? labels : NULL, k, v) if (!json_is_string(v))
	    pk_errors_add(errs, "metadata.labels.%s: Invalid value: must be a string", k);
	return errs->n ? -EINVAL : 0;
}

/* Read and validate every file; objects of all files go into one array. */
static int load(const char **files, size_t nfiles, size_t max_bytes, json_t *all)
{
	int rc = 0;

	for (size_t f = 0; f < nfiles; f++) {
		char err[1024];
		json_t *objs = NULL;
		size_t i;
		json_t *o;

		int r = pk_read_file_max(files[f], max_bytes, &objs, err, sizeof(err));

		if (r < 0) {
			fprintf(stderr, "podctl schedule: %s%s\n", *err ? err : strerror(-r),
				r == -EFBIG ? "; --max-input-size raises the limit" : "");
			return podctl_input_exit(r);
		}
		json_array_foreach(objs, i, o)
		{
			struct pk_errors errs = {0};

			if (validate(o, &errs) < 0) {
				char prefix[512];

				snprintf(prefix, sizeof(prefix), "%s: %s %s: ", files[f],
					 json_string_value(json_object_get(o, "kind")) ?: "object",
					 pk_name(o) ?: "(unnamed)");
				pk_errors_print(&errs, stderr, prefix);
				rc = PODCTL_EXIT_USAGE;
			}
			pk_errors_clear(&errs);
			if (pk_kind_of(o) == PK_KIND_POD && pk_pod_default_host_ports(o) < 0)
				rc = PODCTL_EXIT_FAILURE;
		}
		if (rc == PODCTL_EXIT_OK && compact_nodes(objs) < 0)
			rc = PODCTL_EXIT_FAILURE;
		json_array_extend(all, objs);
		json_decref(objs);
	}
	return rc;
}

/* What the queues decided, on stderr: each queued Job, JobSet or Pod admitted, or pending and why.
 */
static void print_admissions(const json_t *objects)
{
	json_t *positions = wb_queue_positions(objects), *o; /* from the queue-order keys */
	size_t i;

	json_array_foreach(objects, i, o)
	{
		const json_t *ann = pk_get(o, "metadata.annotations");
		const char *adm =
		    json_string_value(json_object_get(ann, WB_ANNOTATION_QUEUE_ADMISSION));
		const char *why =
		    json_string_value(json_object_get(ann, "queue.podkernel.dev/pending-reason"));
		char key[800], pos[24] = "-";
		bool pod = pk_kind_of(o) == PK_KIND_POD;

		pk_obj_key(key, sizeof(key), pk_type_of(pk_kind_of(o)), pk_namespace(o),
			   pk_name(o));
		if (json_is_integer(json_object_get(positions, key)))
			snprintf(pos, sizeof(pos), "%lld",
				 (long long)json_integer_value(json_object_get(positions, key)));

		if (pod ? !pk_pod_queue_name(o)
			: (pk_kind_of(o) != PK_KIND_JOB && pk_kind_of(o) != PK_KIND_JOBSET) ||
			      !wb_queue_name(o))
			continue;
		if (adm && (pod ? !pk_get(o, "spec.schedulingGates")
				: !json_is_true(pk_get(o, "spec.suspend"))))
			fprintf(stderr, "admitted: %s %s/%s by %s\n",
				pk_kind_to_string(pk_kind_of(o)), pk_namespace(o) ?: "default",
				pk_name(o), adm);
		else
			fprintf(stderr, "pending: %s %s/%s (position %s): %s\n",
				pk_kind_to_string(pk_kind_of(o)), pk_namespace(o) ?: "default",
				pk_name(o), pos, why ? why : "not admitted");
	}
	json_decref(positions);
}

static int run(json_t *objects, const struct pk_sched_opts *opts, enum pk_format fmt)
{
	struct pk_errors errs = {0};
	json_t *preempted = NULL;
	size_t i;
	json_t *o;
	int r;

	r = pk_sched_run_in_place(objects, opts, &preempted, &errs);
	if (r < 0) {
		if (errs.n) {
			pk_errors_print(&errs, stderr, "podctl schedule: ");
			pk_errors_clear(&errs);
			return PODCTL_EXIT_USAGE;
		}
		fprintf(stderr, "podctl schedule: %s\n", strerror(-r));
		return r == -EINVAL || r == -E2BIG ? PODCTL_EXIT_USAGE : PODCTL_EXIT_FAILURE;
	}
	json_array_foreach(preempted, i, o)
	    fprintf(stderr, "preempted: %s/%s\n", pk_namespace(o) ?: "default", pk_name(o) ?: "");
	json_decref(preempted);
	return pk_write_list(stdout, objects, fmt) == 0 && fflush(stdout) == 0
		   ? PODCTL_EXIT_OK
		   : PODCTL_EXIT_FAILURE;
}

int podctl_schedule(int argc, char **argv)
{
	const char *files[MAX_FILES];
	size_t nfiles = 0;
	struct pk_sched_opts opts = {.controllers = pk_claims_pass};
	enum pk_format fmt = PK_FORMAT_JSON;
	json_t *objects, *expanded = NULL;
	size_t max_bytes = 0;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *v;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return PODCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--explain") == 0) {
			opts.explain = stderr;
		} else if (strcmp(argv[i], "--gated-gangs-wait") == 0) {
			opts.gated_gangs_wait = true;
		} else if ((v = arg_value(&i, argc, argv, "-f", "--filename"))) {
			if (nfiles == MAX_FILES) {
				fprintf(stderr, "podctl schedule: more than %d files\n", MAX_FILES);
				return PODCTL_EXIT_USAGE;
			}
			files[nfiles++] = v;
		} else if ((v = arg_value(&i, argc, argv, "-o", "--output"))) {
			if (strcmp(v, "json") == 0) {
				fmt = PK_FORMAT_JSON;
			} else if (strcmp(v, "yaml") == 0) {
				fmt = PK_FORMAT_YAML;
			} else {
				fprintf(stderr,
					"podctl schedule: -o: expected json or yaml, got '%s'\n",
					v);
				return PODCTL_EXIT_USAGE;
			}
		} else if ((v = arg_value(&i, argc, argv, NULL, "--strategy"))) {
			opts.strategy = v;
		} else if ((v = arg_value(&i, argc, argv, NULL, "--max-input-size"))) {
			if ((rc = podctl_max_input_size("schedule", v, &max_bytes)) != 0)
				return rc;
		} else {
			fprintf(stderr, "podctl schedule: unknown or incomplete argument '%s'\n",
				argv[i]);
			usage(stderr);
			return PODCTL_EXIT_USAGE;
		}
	}
	if (!nfiles) {
		usage(stderr);
		return PODCTL_EXIT_USAGE;
	}
	{
		struct pk_sched *probe = NULL;

		if (pk_sched_new(&opts, &probe) < 0) {
			fprintf(stderr, "podctl schedule: --strategy: unknown strategy '%s'\n",
				opts.strategy);
			usage(stderr);
			return PODCTL_EXIT_USAGE;
		}
		pk_sched_free(probe);
	}
	objects = json_array();
	if (!objects)
		return PODCTL_EXIT_FAILURE;
	rc = load(files, nfiles, max_bytes, objects);
	if (rc == PODCTL_EXIT_OK && podctl_queues_present(objects)) {
		char err[1024] = "";

		if (podctl_queues_admit(objects, err, sizeof(err)) < 0) {
			fprintf(stderr, "podctl schedule: queues: %s\n", err);
			rc = PODCTL_EXIT_USAGE;
		} else {
			print_admissions(objects);
		}
	}
	if (rc == PODCTL_EXIT_OK && has_workload_kinds(objects)) {
		struct pk_errors errs = {0};

		if (wb_expand_objects(objects, &expanded, &errs) < 0) {
			pk_errors_print(&errs, stderr, "podctl schedule: ");
			rc = PODCTL_EXIT_USAGE;
		} else {
			json_decref(objects);
			objects = expanded;
		}
		pk_errors_clear(&errs);
	}
	if (rc == PODCTL_EXIT_OK)
		rc = run(objects, &opts, fmt);
	json_decref(objects);
	return rc;
}
