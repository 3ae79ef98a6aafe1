/* SPDX-License-Identifier: Apache-2.0 */
/*
 * qos.c — a Pod's quality of service class (status.qosClass).
 *
 * kube-apiserver computes it once, when the pod is created
 * (ComputePodQOS): only cpu and memory count, and only quantities above
 * zero.  With pod-level resources (spec.resources, even empty) those
 * decide; otherwise
 * the requests and limits of every container and init container are summed
 * per resource, a missing request taken from the limit beside it as
 * upstream's defaulting does (for containers and pod-level alike).  No request and no limit: BestEffort.  A
 * limit for both cpu and memory in every container (or at pod level), and
 * the summed requests equal to the summed limits: Guaranteed.  Otherwise
 * Burstable.
 */
#include <string.h>

#include "kernel/api/api-internal.h"

enum { QOS_CPU, QOS_MEMORY, QOS_N };

struct qos_sums {
	int64_t req[QOS_N], lim[QOS_N];
	bool has_req[QOS_N], has_lim[QOS_N];
	bool guaranteed; /* every part so far has a cpu and a memory limit */
};

/* milli of a positive quantity of a counted resource in list, or 0. */
static int64_t qos_amount(const json_t *list, int r)
{
	int64_t milli = 0;
	const json_t *v = json_object_get(list, r == QOS_CPU ? "cpu" : "memory");

	if (!v || pk_quantity_of(v, &milli) < 0 || milli <= 0)
		return 0;
	return milli;
}

static void qos_add(int64_t *sum, bool *has, int64_t milli)
{
	if (milli <= 0)
		return;
	*sum = *has && *sum > INT64_MAX - milli ? INT64_MAX : *sum + milli;
	*has = true;
}

/*
 * One part's resources: a container's or the pod's own (requests
 * defaulted from limits).  Limits present in the part but not for both cpu and
 * memory, or no limits at all in a container, rule Guaranteed out.
 */
static void qos_part(struct qos_sums *s, const json_t *res, bool container)
{
	const json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
	bool both = true;

	for (int r = 0; r < QOS_N; r++) {
		int64_t l = qos_amount(lim, r), q = qos_amount(req, r);

		if (!json_object_get(req, r == QOS_CPU ? "cpu" : "memory"))
			q = l;
		qos_add(&s->req[r], &s->has_req[r], q);
		qos_add(&s->lim[r], &s->has_lim[r], l);
		both = both && l > 0;
	}
	if (!both && (container || json_object_size(lim) > 0))
		s->guaranteed = false;
}

static void qos_containers(struct qos_sums *s, const json_t *list)
{
	size_t i;
	json_t *c;

	json_array_foreach(list, i, c) qos_part(s, json_object_get(c, "resources"), true);
}

const char *pk_pod_qos_class(const json_t *pod)
{
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *podres = json_object_get(spec, "resources");
	struct qos_sums s = {.guaranteed = true};
	size_t nreq = 0, nlim = 0;

	if (json_is_object(podres)) {
		qos_part(&s, podres, false);
	} else {
		qos_containers(&s, json_object_get(spec, "containers"));
		qos_containers(&s, json_object_get(spec, "initContainers"));
	}
	for (int r = 0; r < QOS_N; r++) {
		nreq += s.has_req[r];
		nlim += s.has_lim[r];
		if (s.has_req[r] && (!s.has_lim[r] || s.lim[r] != s.req[r]))
			s.guaranteed = false;
	}
	if (!nreq && !nlim)
		return "BestEffort";
	return s.guaranteed && nreq == nlim ? "Guaranteed" : "Burstable";
}
