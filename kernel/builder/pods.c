/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pods.c — stamping out the pods of a Job from its pod template.
 *
 * Pods are named <job>-<index> and emitted in index order.  They carry no
 * creationTimestamp of their own (the scheduler then keeps the order in which
 * they were read), except the Job's when it has one, so that the order is
 * stable either way.  The Job's labels (job-name, controller-uid, and for
 * Indexed Jobs the completion index) are added to the template's labels.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"

static int set_label(json_t *labels, const char *key, const char *value)
{
	return json_object_set_new(labels, key, json_string(value));
}

static json_t *pod_labels(const json_t *job, const json_t *tmeta, const char *job_name,
			  int64_t index)
{
	json_t *labels =
	    wb_obj(tmeta, "labels") ? json_deep_copy(wb_obj(tmeta, "labels")) : json_object();
	const char *uid = wb_str(wb_obj(job, "metadata"), "uid");
	const char *mode = wb_str(wb_obj(job, "spec"), "completionMode");
	int r = 0;

	if (!labels)
		return NULL;
	r |= set_label(labels, "batch.kubernetes.io/job-name", job_name);
	r |= set_label(labels, "job-name", job_name);
	if (uid) {
		r |= set_label(labels, "batch.kubernetes.io/controller-uid", uid);
		r |= set_label(labels, "controller-uid", uid);
	}
	if (mode && strcmp(mode, "Indexed") == 0) {
		char idx[24];

		snprintf(idx, sizeof(idx), "%lld", (long long)index);
		r |= set_label(labels, "batch.kubernetes.io/job-completion-index", idx);
	}
	if (r) {
		json_decref(labels);
		return NULL;
	}
	return labels;
}

static json_t *stamp_one(const json_t *job, const char *job_name, const char *namespace,
			 int64_t index, const char *pod_group, const struct wb_owner *owner)
{
	const json_t *tmpl = wb_obj(wb_obj(job, "spec"), "template");
	const json_t *tmeta = wb_obj(tmpl, "metadata"), *tspec = wb_obj(tmpl, "spec");
	const char *created = wb_str(wb_obj(job, "metadata"), "creationTimestamp");
	char name[320];
	json_t *pod, *meta, *spec, *labels;

	snprintf(name, sizeof(name), "%s-%lld", job_name, (long long)index);
	pod = wb_object_new("v1", "Pod", name, namespace, owner);
	if (!pod)
		return NULL;
	meta = json_object_get(pod, "metadata");
	labels = pod_labels(job, tmeta, job_name, index);
	if (!labels || json_object_set_new(meta, "labels", labels) < 0)
		goto fail;
	if (wb_obj(tmeta, "annotations") &&
	    json_object_set_new(meta, "annotations", json_deep_copy(wb_obj(tmeta, "annotations"))) <
		0)
		goto fail;
	if (created && json_object_set_new(meta, "creationTimestamp", json_string(created)) < 0)
		goto fail;
	spec = tspec ? json_deep_copy(tspec) : json_object();
	if (!spec || json_object_set_new(pod, "spec", spec) < 0)
		goto fail;
	if (pod_group && json_object_set_new(spec, "schedulingGroup",
					     json_pack("{s:s}", "podGroupName", pod_group)) < 0)
		goto fail;
	return pod;
fail:
	json_decref(pod);
	return NULL;
}

int wb_stamp_pods(const json_t *job, const char *job_name, const char *namespace, int64_t count,
		  const char *pod_group, const struct wb_owner *owner, json_t *out)
{
	int64_t i;

	if (count < 0 || count > WB_MAX_PODS)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		json_t *pod = stamp_one(job, job_name, namespace, i, pod_group, owner);

		if (!pod || json_array_append_new(out, pod) < 0)
			return -ENOMEM;
	}
	return 0;
}
