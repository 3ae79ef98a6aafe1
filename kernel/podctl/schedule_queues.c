/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schedule_queues.c — Kueue admission for `podctl schedule`, by the very
 * pass standalone podkerneld's queue controller runs (pk_queues_pass()), so
 * that the same input is admitted the same way: the objects the pass reads
 * (the queue kinds, Namespaces, PriorityClasses, Jobs and JobSets, and
 * what its placement check reads) are created in a scratch store in input
 * order, one pass runs on it, and each queued Job and JobSet of the input
 * takes the spec and annotations the pass left it: admitted ones run,
 * pending ones stay suspended with their position and reason; the
 * PodGroup the pass made for a Kueue pod group it admitted is added.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/store/store.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"
#include "kernel/lib/log.h"
#include "kernel/podctl/podctl.h"

static const char *const read_kinds[] = {
    "ResourceFlavor",
    "ClusterQueue",
    "LocalQueue",
    "Cohort",
    "Namespace",
    "PriorityClass",
    "WorkloadPriorityClass",
    "Job",
    "JobSet",
    "Node",
    "Pod",
    "PodGroup",
    "CompositePodGroup",
    "Workload",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
};

static bool read_by_pass(const json_t *o)
{
	const char *kind = pk_get_string(o, "kind");

	for (size_t i = 0; kind && i < sizeof(read_kinds) / sizeof(read_kinds[0]); i++)
		if (strcmp(kind, read_kinds[i]) == 0)
			return true;
	return false;
}

bool podctl_queues_present(const json_t *objects)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o)
	{
		enum pk_kind k = pk_kind_of(o);

		if (k == PK_KIND_CLUSTER_QUEUE || k == PK_KIND_LOCAL_QUEUE ||
		    ((k == PK_KIND_JOB || k == PK_KIND_JOBSET) && wb_queue_name(o)) ||
		    (k == PK_KIND_POD && pk_pod_queue_name(o)))
			return true;
	}
	return false;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The pass's outcome for a queued Job, JobSet or Pod: its spec and annotations. */
static void take_back(struct pk_store *st, json_t *o)
{
	json_t *stored = NULL;

	if (pk_store_get(st, pk_type_by_kind(pk_get_string(o, "kind")),
			 pk_namespace(o) ? pk_namespace(o) : "default", pk_name(o), &stored) < 0)
		return;
	json_object_set(o, "spec", json_object_get(stored, "spec"));
	if (pk_get(stored, "metadata.annotations"))
		json_object_set(json_object_get(o, "metadata"), "annotations",
				pk_get(stored, "metadata.annotations"));
	json_decref(stored);
}

/* Create what the pass reads (an object kept as compact text is read back). */
static int fill(struct pk_store *st, const json_t *objects, char *err, size_t errlen)
{
	size_t i;
	json_t *item;

	json_array_foreach(objects, i, item)
	{
		struct pk_errors errs = {0};
		json_t *o = json_is_string(item) ? json_loads(json_string_value(item), 0, NULL)
						 : json_incref(item);
		int r;

		if (!o || !read_by_pass(o)) {
			json_decref(o);
			continue;
		}
		r = pk_store_create(st, o, &errs, NULL);
		json_decref(o);
		if (r < 0 && r != -EEXIST) {
			snprintf(err, errlen, "object %zu: %s", i,
				 errs.n ? errs.msg[0] : pk_errno_text(-r));
			pk_errors_clear(&errs);
			return r;
		}
		pk_errors_clear(&errs);
	}
	return 0;
}

/* Whether objects has a PodGroup ns/name. */
static bool has_group(const json_t *objects, const char *ns, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i,
			   o) if (pk_kind_of(o) == PK_KIND_POD_GROUP &&
				  strcmp(pk_name(o) ?: "", name) == 0 &&
				  strcmp(pk_namespace(o) ?: "default", ns) == 0) return true;
	return false;
}

/* The PodGroups the pass made for the Kueue pod groups it admitted, added to objects. */
static int add_made_groups(struct pk_store *st, json_t *objects)
{
	size_t i, n = json_array_size(objects);

	for (i = 0; i < n; i++) {
		const json_t *o = json_array_get(objects, i);
		const char *g = pk_kind_of(o) == PK_KIND_POD ? pk_pod_kueue_group(o, NULL) : NULL;
		const char *ns = pk_namespace(o) ? pk_namespace(o) : "default";
		json_t *made = NULL;

		if (!g || has_group(objects, ns, g) ||
		    pk_store_get(st, &pk_type_pod_group, ns, g, &made) < 0)
			continue;
		if (json_array_append_new(objects, made) < 0)
			return -ENOMEM;
	}
	return 0;
}

int podctl_queues_admit(json_t *objects, char *err, size_t errlen)
{
	static const struct pk_store_open_opts opts = {.admission = wb_admission,
						       .nadmission = WB_ADMISSION_N};
	const char *tmp = getenv("TMPDIR");
	struct pk_store *st = NULL;
	char dir[512];
	size_t i;
	json_t *o;
	int r;

	snprintf(dir, sizeof(dir), "%s/podkernel-queues-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(err, errlen, "a scratch store in %s: %s", tmp && *tmp ? tmp : "/tmp",
			 pk_errno_text(errno));
		return -EIO;
	}
	r = pk_store_open_opts(dir, &opts, &st, err, errlen);
	if (r == 0)
		r = fill(st, objects, err, errlen);
	if (r == 0)
		r = pk_queues_pass(st);
	json_array_foreach(r == 0 ? objects : NULL, i, o)
	{
		enum pk_kind k = pk_kind_of(o);

		if (((k == PK_KIND_JOB || k == PK_KIND_JOBSET) && wb_queue_name(o)) ||
		    (k == PK_KIND_POD && pk_pod_queue_name(o)))
			take_back(st, o);
	}
	if (r == 0)
		r = add_made_groups(st, objects);
	if (st)
		pk_store_close(st);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (r < 0 && !*err)
		snprintf(err, errlen, "%s", pk_errno_text(-r));
	return r;
}
