/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tables_kinds.c — the columns `kubectl get` shows for each kind.
 *
 * The built-in kinds have upstream's columns (kubernetes
 * pkg/printers/internalversion/printers.go): Pods (READY STATUS RESTARTS,
 * with podkernel's GROUP and PRIORITY among the wide ones), Nodes (STATUS
 * ROLES AGE VERSION), Events (LAST SEEN TYPE REASON OBJECT MESSAGE), Jobs
 * (STATUS COMPLETIONS DURATION), ResourceClaims (STATE), ResourceSlices
 * (NODE DRIVER POOL).  A custom resource upstream has the printer columns
 * of its CustomResourceDefinition: JobSet's those of the JobSet project's
 * CRD, the KEP-6012 kinds those of the CRDs attach mode installs, which are
 * generated from these same specs (a JSONPath per column; a column with a
 * cell function only is served here and not in the CRD).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"

#define CELL_STR(o, path) json_string(pk_get_string(o, path) ?: "")

static json_t *cell_name(json_t *o)
{
	return CELL_STR(o, "metadata.name");
}

static json_t *cell_age(json_t *o)
{
	return pk_srv_cell_since(pk_get_string(o, "metadata.creationTimestamp"));
}

static json_t *condition(json_t *o, const char *type)
{
	size_t i;
	json_t *c;

	json_array_foreach(pk_get(o, "status.conditions"), i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));
		if (t && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static bool condition_true(json_t *o, const char *type)
{
	const char *s = json_string_value(json_object_get(condition(o, type), "status"));
	return s && strcmp(s, "True") == 0;
}

static int64_t int_at(json_t *o, const char *path, int64_t dflt)
{
	json_t *v = pk_get(o, path);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* ---- Nodes ------------------------------------------------------------------ */
static json_t *cell_node_status(json_t *o)
{
	json_t *ready = condition(o, "Ready");
	const char *s = json_string_value(json_object_get(ready, "status"));
	char buf[64];

	snprintf(buf, sizeof(buf), "%s%s",
		 !ready			       ? "Unknown"
		 : s && strcmp(s, "True") == 0 ? "Ready"
					       : "NotReady",
		 json_is_true(pk_get(o, "spec.unschedulable")) ? ",SchedulingDisabled" : "");
	return json_string(buf);
}

static int strcmp_p(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* node-role.kubernetes.io/ROLE labels and kubernetes.io/role, sorted, unique. */
static json_t *cell_node_roles(json_t *o)
{
	const char *roles[32], *k;
	size_t n = 0, len = 0;
	json_t *v;
	char buf[512] = "";

	json_object_foreach(pk_get(o, "metadata.labels"), k, v)
	{
		const char *role = NULL;
		if (strncmp(k, "node-role.kubernetes.io/", 24) == 0 && k[24])
			role = k + 24;
		else if (strcmp(k, "kubernetes.io/role") == 0 && json_string_length(v))
			role = json_string_value(v);
		if (role && n < ELEMENTSOF(roles))
			roles[n++] = role;
	}
	qsort(roles, n, sizeof(*roles), strcmp_p);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(roles[i], roles[i - 1]) != 0)
			len +=
			    (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0,
					     "%s%s", len ? "," : "", roles[i]);
	return json_string(n ? buf : "<none>");
}

static json_t *node_address(json_t *o, const char *type)
{
	size_t i;
	json_t *a;

	json_array_foreach(pk_get(o, "status.addresses"), i, a)
	{
		const char *t = json_string_value(json_object_get(a, "type"));
		if (t && strcmp(t, type) == 0 && json_is_string(json_object_get(a, "address")))
			return json_copy(json_object_get(a, "address"));
	}
	return json_string("<none>");
}

static json_t *cell_node_internal_ip(json_t *o)
{
	return node_address(o, "InternalIP");
}

static json_t *cell_node_external_ip(json_t *o)
{
	return node_address(o, "ExternalIP");
}

static json_t *node_info(json_t *o, const char *field)
{
	char path[64];
	snprintf(path, sizeof(path), "status.nodeInfo.%s", field);
	const char *s = pk_get_string(o, path);
	return json_string(s && *s ? s : "<unknown>");
}

static json_t *cell_node_os(json_t *o)
{
	return node_info(o, "osImage");
}

static json_t *cell_node_kernel(json_t *o)
{
	return node_info(o, "kernelVersion");
}

static json_t *cell_node_runtime(json_t *o)
{
	return node_info(o, "containerRuntimeVersion");
}

/* ---- Pods ------------------------------------------------------------------- */
static json_t *cell_pod_ready(json_t *o)
{
	size_t i, ready = 0;
	json_t *cs;
	char buf[48];

	json_array_foreach(pk_get(o, "status.containerStatuses"), i, cs) ready +=
	    json_is_true(json_object_get(cs, "ready"));
	snprintf(buf, sizeof(buf), "%zu/%zu", ready, json_array_size(pk_get(o, "spec.containers")));
	return json_string(buf);
}

/* The reason a container waits or ended, the last one's winning, as upstream's printPod. */
static const char *container_reason(json_t *o, const char *reason)
{
	size_t i;
	json_t *cs;

	json_array_foreach(pk_get(o, "status.containerStatuses"), i, cs)
	{
		const char *w = pk_get_string(cs, "state.waiting.reason");
		const char *t = pk_get_string(cs, "state.terminated.reason");
		if (w && *w)
			reason = w;
		else if (t && *t)
			reason = t;
	}
	return reason;
}

static json_t *cell_pod_status(json_t *o)
{
	const char *reason = pk_get_string(o, "status.reason");

	if (!reason || !*reason)
		reason = pk_get_string(o, "status.phase");
	reason = container_reason(o, reason && *reason ? reason : "Pending");
	if (pk_get_string(o, "metadata.deletionTimestamp"))
		reason = strcmp(reason, "NodeLost") == 0 ? "Unknown" : "Terminating";
	return json_string(reason);
}

static json_t *cell_pod_restarts(json_t *o)
{
	size_t i;
	json_t *cs;
	int64_t n = 0;
	char buf[32];

	json_array_foreach(pk_get(o, "status.containerStatuses"), i, cs) n +=
	    int_at(cs, "restartCount", 0);
	snprintf(buf, sizeof(buf), "%lld", (long long)n);
	return json_string(buf);
}

static json_t *str_or_none(json_t *o, const char *path)
{
	const char *s = pk_get_string(o, path);
	return json_string(s && *s ? s : "<none>");
}

static json_t *cell_pod_ip(json_t *o)
{
	return str_or_none(o, "status.podIP");
}

static json_t *cell_pod_node(json_t *o)
{
	return str_or_none(o, "spec.nodeName");
}

static json_t *cell_pod_nominated(json_t *o)
{
	return str_or_none(o, "status.nominatedNodeName");
}

static json_t *cell_pod_gates(json_t *o)
{
	size_t i, n = json_array_size(pk_get(o, "spec.readinessGates")), ok = 0;
	json_t *g;
	char buf[48];

	if (!n)
		return json_string("<none>");
	json_array_foreach(pk_get(o, "spec.readinessGates"), i, g) ok +=
	    condition_true(o, json_string_value(json_object_get(g, "conditionType")) ?: "");
	snprintf(buf, sizeof(buf), "%zu/%zu", ok, n);
	return json_string(buf);
}

static json_t *cell_pod_group(json_t *o)
{
	return json_string(pk_pod_group_name(o) ?: "<none>");
}

static json_t *cell_priority(json_t *o)
{
	return json_integer(int_at(o, "spec.priority", 0));
}

/* ---- Events ----------------------------------------------------------------- */
/* firstTimestamp, or eventTime (an Event of the events.k8s.io API) */
static const char *event_first(json_t *o)
{
	const char *first = pk_get_string(o, "firstTimestamp");
	return first && *first ? first : pk_get_string(o, "eventTime");
}

static json_t *cell_event_last(json_t *o)
{
	const char *last = pk_get_string(o, "lastTimestamp");
	if (pk_get(o, "series"))
		last = pk_get_string(o, "series.lastObservedTime");
	return pk_srv_cell_since(last && *last ? last : event_first(o));
}

static json_t *cell_event_first(json_t *o)
{
	return pk_srv_cell_since(event_first(o));
}

static json_t *cell_event_object(json_t *o)
{
	const char *kind = pk_get_string(o, "involvedObject.kind") ?: "";
	const char *name = pk_get_string(o, "involvedObject.name");
	char buf[512];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s", kind);

	for (size_t i = 0; i < n && i < sizeof(buf); i++)
		buf[i] = (char)(buf[i] >= 'A' && buf[i] <= 'Z' ? buf[i] - 'A' + 'a' : buf[i]);
	if (name && *name && n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "/%s", name);
	return json_string(buf);
}

static json_t *cell_event_subobject(json_t *o)
{
	return CELL_STR(o, "involvedObject.fieldPath");
}

/* upstream's formatEventSource: component (or reportingController), then host or instance */
static json_t *cell_event_source(json_t *o)
{
	const char *comp = pk_get_string(o, "source.component");
	const char *host = pk_get_string(o, "source.host");
	char buf[512];

	if (!comp || !*comp) {
		comp = pk_get_string(o, "reportingComponent");
		host = pk_get_string(o, "reportingInstance");
	}
	snprintf(buf, sizeof(buf), "%s%s%s", comp ?: "", host && *host ? ", " : "",
		 host && *host ? host : "");
	return json_string(buf);
}

static json_t *cell_event_message(json_t *o)
{
	return CELL_STR(o, "message");
}

static json_t *cell_event_count(json_t *o)
{
	int64_t n = pk_get(o, "series") ? int_at(o, "series.count", 0) : int_at(o, "count", 0);
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", (long long)(n ? n : 1));
	return json_string(buf);
}

static json_t *cell_event_type(json_t *o)
{
	return CELL_STR(o, "type");
}

static json_t *cell_event_reason(json_t *o)
{
	return CELL_STR(o, "reason");
}

/* ---- Jobs ------------------------------------------------------------------- */
static json_t *cell_job_status(json_t *o)
{
	static const char *const order[] = {"Complete",	 "Failed",	  NULL,
					    "Suspended", "FailureTarget", "SuccessCriteriaMet"};

	for (size_t i = 0; i < ELEMENTSOF(order); i++) {
		if (!order[i] && pk_get_string(o, "metadata.deletionTimestamp"))
			return json_string("Terminating");
		if (order[i] && condition_true(o, order[i]))
			return json_string(order[i]);
	}
	return json_string("Running");
}

static json_t *cell_job_completions(json_t *o)
{
	int64_t ok = int_at(o, "status.succeeded", 0), par = int_at(o, "spec.parallelism", 0);
	char buf[64];

	if (json_is_integer(pk_get(o, "spec.completions")))
		snprintf(buf, sizeof(buf), "%lld/%lld", (long long)ok,
			 (long long)int_at(o, "spec.completions", 0));
	else if (par > 1)
		snprintf(buf, sizeof(buf), "%lld/1 of %lld", (long long)ok, (long long)par);
	else
		snprintf(buf, sizeof(buf), "%lld/1", (long long)ok);
	return json_string(buf);
}

static json_t *cell_job_duration(json_t *o)
{
	int64_t start, end;
	char buf[32];

	if (pk_time_parse(pk_get_string(o, "status.startTime"), &start) < 0)
		return json_string("");
	if (pk_time_parse(pk_get_string(o, "status.completionTime"), &end) < 0)
		end = (int64_t)time(NULL);
	pk_srv_human_duration(end - start, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *cell_job_containers(json_t *o)
{
	size_t i, len = 0;
	json_t *c;
	char buf[512] = "";

	json_array_foreach(pk_get(o, "spec.template.spec.containers"), i, c) len +=
	    (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s",
			     i ? "," : "", json_string_value(json_object_get(c, "name")) ?: "");
	return json_string(buf);
}

static json_t *cell_job_images(json_t *o)
{
	size_t i, len = 0;
	json_t *c;
	char buf[1024] = "";

	json_array_foreach(pk_get(o, "spec.template.spec.containers"), i, c) len +=
	    (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s",
			     i ? "," : "", json_string_value(json_object_get(c, "image")) ?: "");
	return json_string(buf);
}

/* upstream's FormatLabelSelector, for matchLabels ("<none>" when empty) */
static json_t *cell_job_selector(json_t *o)
{
	const char *k;
	json_t *v;
	size_t len = 0;
	char buf[1024] = "";

	json_object_foreach(pk_get(o, "spec.selector.matchLabels"), k, v) len +=
	    (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s=%s",
			     len ? "," : "", k, json_string_value(v) ?: "");
	return json_string(len ? buf : "<none>");
}

/* ---- ResourceClaims --------------------------------------------------------- */
/* upstream's resourceClaimState: deleted, pending, allocated, reserved, deallocating */
static json_t *cell_claim_state(json_t *o)
{
	bool deleted = pk_get_string(o, "metadata.deletionTimestamp") != NULL;
	const char *states[3];
	size_t n = 0, len = 0;
	char buf[64] = "";

	if (deleted)
		states[n++] = "deleted";
	if (!json_is_object(pk_get(o, "status.allocation"))) {
		if (!deleted)
			states[n++] = "pending";
	} else {
		states[n++] = "allocated";
		if (json_array_size(pk_get(o, "status.reservedFor")))
			states[n++] = "reserved";
		else if (deleted || json_is_true(pk_get(o, "status.deallocationRequested")))
			states[n++] = "deallocating";
	}
	for (size_t i = 0; i < n; i++)
		len +=
		    (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", states[i]);
	return json_string(buf);
}

static json_t *cell_slice_node(json_t *o)
{
	return str_or_none(o, "spec.nodeName");
}

/* ---- PodGroups, PriorityClasses, Namespaces ---------------------------------- */
static json_t *cell_policy(json_t *o)
{
	return json_string(pk_get(o, "spec.schedulingPolicy.gang") ? "gang" : "basic");
}

static json_t *cell_pc_value(json_t *o)
{
	return json_integer(int_at(o, "value", 0));
}

static json_t *cell_pc_default(json_t *o)
{
	return json_boolean(json_is_true(json_object_get(o, "globalDefault")));
}

static json_t *cell_ns_status(json_t *o)
{
	return json_string(pk_get_string(o, "status.phase") ?: "Active");
}

/* ---- PodDisruptionBudgets ----------------------------------------------------- */
/* An int-or-percent bound as kubectl prints it, N/A when unset. */
static json_t *cell_bound(json_t *o, const char *path)
{
	json_t *v = pk_get(o, path);
	char buf[32];

	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		return json_string(buf);
	}
	return json_string(json_is_string(v) ? json_string_value(v) : "N/A");
}

static json_t *cell_pdb_min(json_t *o)
{
	return cell_bound(o, "spec.minAvailable");
}

static json_t *cell_pdb_max(json_t *o)
{
	return cell_bound(o, "spec.maxUnavailable");
}

static json_t *cell_pdb_allowed(json_t *o)
{
	return json_integer(int_at(o, "status.disruptionsAllowed", 0));
}

#define NAME_COL                                                                                   \
	{                                                                                          \
		"Name", "string", 0, cell_name, NULL, "Name of the object."                        \
	}
#define AGE_COL                                                                                    \
	{                                                                                          \
		"Age", "date", 0, cell_age, ".metadata.creationTimestamp",                         \
		    "Time since the object was "                                                   \
		    "created."                                                                     \
	}

static const struct pk_srv_column node_cols[] = {
    NAME_COL,
    {"Status", "string", 0, cell_node_status, NULL, "The status of the node."},
    {"Roles", "string", 0, cell_node_roles, NULL, "The roles of the node."},
    AGE_COL,
    {"Version", "string", 0, NULL, ".status.nodeInfo.kubeletVersion", "Kubelet version."},
    {"Internal-IP", "string", 1, cell_node_internal_ip, NULL, "The node's internal IP."},
    {"External-IP", "string", 1, cell_node_external_ip, NULL, "The node's external IP."},
    {"OS-Image", "string", 1, cell_node_os, NULL, "The node's OS image."},
    {"Kernel-Version", "string", 1, cell_node_kernel, NULL, "The node's kernel version."},
    {"Container-Runtime", "string", 1, cell_node_runtime, NULL, "The node's container runtime."},
    {NULL}};
static const struct pk_srv_column pod_cols[] = {
    NAME_COL,
    {"Ready", "string", 0, cell_pod_ready, NULL, "Ready containers of all."},
    {"Status", "string", 0, cell_pod_status, NULL, "The aggregate status of the containers."},
    {"Restarts", "string", 0, cell_pod_restarts, NULL, "Restarts of the containers."},
    AGE_COL,
    {"IP", "string", 1, cell_pod_ip, NULL, "The pod's IP address."},
    {"Node", "string", 1, cell_pod_node, NULL, "The node the pod is bound to."},
    {"Nominated Node", "string", 1, cell_pod_nominated, NULL, "The node nominated by preemption."},
    {"Readiness Gates", "string", 1, cell_pod_gates, NULL, "Readiness gates met of all."},
    {"Group", "string", 1, cell_pod_group, NULL, "The pod group the pod is scheduled with."},
    {"Priority", "integer", 1, cell_priority, NULL, "The pod's priority."},
    {NULL}};
static const struct pk_srv_column event_cols[] = {
    {"Last Seen", "string", 0, cell_event_last, NULL, "When the event was last seen."},
    {"Type", "string", 0, cell_event_type, NULL, "Normal or Warning."},
    {"Reason", "string", 0, cell_event_reason, NULL, "Why the action was taken."},
    {"Object", "string", 0, cell_event_object, NULL, "The object the event is about."},
    {"Subobject", "string", 1, cell_event_subobject, NULL, "The field of the object."},
    {"Source", "string", 1, cell_event_source, NULL, "The component that reported it."},
    {"Message", "string", 0, cell_event_message, NULL, "What happened."},
    {"First Seen", "string", 1, cell_event_first, NULL, "When the event was first seen."},
    {"Count", "string", 1, cell_event_count, NULL, "How many times it happened."},
    {"Name", "string", 1, cell_name, NULL, "Name of the event."},
    {NULL}};
static const struct pk_srv_column job_cols[] = {
    NAME_COL,
    {"Status", "string", 0, cell_job_status, NULL, "The status of the job."},
    {"Completions", "string", 0, cell_job_completions, NULL, "Succeeded of desired completions."},
    {"Duration", "string", 0, cell_job_duration, NULL, "How long the job ran."},
    AGE_COL,
    {"Containers", "string", 1, cell_job_containers, NULL, "The containers of the template."},
    {"Images", "string", 1, cell_job_images, NULL, "The images of the template."},
    {"Selector", "string", 1, cell_job_selector, NULL, "The job's pod selector."},
    {NULL}};
/* the JobSet project's CRD columns */
static const struct pk_srv_column jobset_cols[] = {
    NAME_COL,
    {"TerminalState", "string", 0, NULL, ".status.terminalState", "Final state of JobSet"},
    {"Restarts", "string", 0, NULL, ".status.restarts", "Number of restarts"},
    {"Completed", "string", 0, NULL, ".status.conditions[?(@.type==\"Completed\")].status", NULL},
    {"Suspended", "string", 0, NULL, ".spec.suspend", "JobSet suspended"},
    AGE_COL,
    {NULL}};
/* the LeaderWorkerSet project's CRD columns */
static const struct pk_srv_column lws_cols[] = {
    NAME_COL,
    {"Ready", "integer", 0, NULL, ".status.readyReplicas", "Number of ready replicas"},
    {"Desired", "integer", 0, NULL, ".spec.replicas", "Number of desired replicas"},
    {"Up-to-date", "integer", 0, NULL, ".status.updatedReplicas", "Number of up-to-date replicas"},
    AGE_COL,
    {NULL}};
static const struct pk_srv_column claim_cols[] = {
    NAME_COL,
    {"State", "string", 0, cell_claim_state, NULL,
     "A summary of the current state (allocated, pending, reserved, etc.)."},
    AGE_COL,
    {NULL}};
static const struct pk_srv_column slice_cols[] = {
    NAME_COL,
    {"Node", "string", 0, cell_slice_node, NULL, "The node the devices are on."},
    {"Driver", "string", 0, NULL, ".spec.driver", "The driver that publishes the devices."},
    {"Pool", "string", 0, NULL, ".spec.pool.name", "The pool of the devices."},
    AGE_COL,
    {NULL}};
static const struct pk_srv_column group_cols[] = {
    NAME_COL,
    {"Policy", "string", 0, cell_policy, NULL, "gang or basic."},
    {"Min", "integer", 0, NULL, ".spec.schedulingPolicy.gang.minCount",
     "The gang's minimum member count."},
    {"Scheduled", "string", 0, NULL,
     ".status.conditions[?(@.type==\"PodGroupInitiallyScheduled\")].status",
     "Whether the group was scheduled."},
    AGE_COL,
    {"Parent", "string", 1, NULL, ".spec.parentCompositePodGroupName",
     "The composite pod group it belongs to."},
    {"Workload", "string", 1, NULL, ".spec.workloadRef.workloadName", "Its Workload."},
    {"Priority", "integer", 1, NULL, ".spec.priority", "The group's priority."},
    {NULL}};
static const struct pk_srv_column composite_cols[] = {
    NAME_COL,
    {"Policy", "string", 0, cell_policy, NULL, "gang or basic."},
    {"Min", "integer", 0, NULL, ".spec.schedulingPolicy.gang.minGroupCount",
     "The gang's minimum group count."},
    {"Scheduled", "string", 0, NULL,
     ".status.conditions[?(@.type==\"CompositePodGroupInitiallyScheduled\")].status",
     "Whether the group was scheduled."},
    AGE_COL,
    {"Parent", "string", 1, NULL, ".spec.parentCompositePodGroupName",
     "The composite pod group it belongs to."},
    {"Workload", "string", 1, NULL, ".spec.workloadRef.workloadName", "Its Workload."},
    {"Priority", "integer", 1, NULL, ".spec.priority", "The group's priority."},
    {NULL}};
static const struct pk_srv_column pc_cols[] = {
    NAME_COL,
    {"Value", "integer", 0, cell_pc_value, NULL, "The priority value."},
    {"Global-Default", "boolean", 0, cell_pc_default, NULL, "The default of pods without one."},
    AGE_COL,
    {NULL}};
static const struct pk_srv_column ns_cols[] = {
    NAME_COL,
    {"Status", "string", 0, cell_ns_status, NULL, "Active or Terminating."},
    AGE_COL,
    {NULL}};
static const struct pk_srv_column pdb_cols[] = {
    NAME_COL,
    {"Min Available", "string", 0, cell_pdb_min, NULL, "The pods that must stay available."},
    {"Max Unavailable", "string", 0, cell_pdb_max, NULL, "The pods that may be unavailable."},
    {"Allowed Disruptions", "integer", 0, cell_pdb_allowed, NULL,
     "How many pods may be disrupted now."},
    AGE_COL,
    {NULL}};
static const struct pk_srv_column default_cols[] = {NAME_COL, AGE_COL, {NULL}};

/* The kinds with columns of their own, by their rows; the rest get NAME and AGE. */
static const struct {
	const struct pk_type *type;
	const struct pk_srv_column *cols;
} kinds[] = {
    {&pk_type_node, node_cols},
    {&pk_type_pod, pod_cols},
    {&pk_type_event, event_cols},
    {&pk_type_event_v1, event_cols},
    {&pk_type_namespace, ns_cols},
    {&pk_type_job, job_cols},
    {&pk_type_jobset, jobset_cols},
    {&pk_type_leader_worker_set, lws_cols},
    {&pk_type_resource_claim, claim_cols},
    {&pk_type_resource_slice, slice_cols},
    {&pk_type_pod_group, group_cols},
    {&pk_type_composite_pod_group, composite_cols},
    {&pk_type_priority_class, pc_cols},
    {&pk_type_pod_disruption_budget, pdb_cols},
};

const struct pk_srv_column *pk_srv_columns_of(const struct pk_type *t)
{
	for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
		if (kinds[i].type == t)
			return kinds[i].cols;
	return default_cols;
}
