/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lws.c — the LeaderWorkerSet controller: validation refusing what is
 * not implemented by field path, the compiled Workload (a set of gangs under
 * one CompositePodGroup, the escape hatch back to basic, exclusive topology),
 * the pods with LWS's names, labels, annotations and hostnames, LeaderReady
 * and rolling-update surge groups driven by what the lookup finds, and the
 * delegated form under a parent's Workload.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"

static json_t *obj(const char *text)
{
	char err[256] = "";
	json_t *objs = NULL, *o;

	ck_assert_msg(pk_read_buffer("test", text, strlen(text), &objs, err, sizeof(err)) == 0,
		      "bad test YAML: %s", err);
	o = json_incref(json_array_get(objs, 0));
	json_decref(objs);
	return o;
}

static bool errors_have(const struct pk_errors *errs, const char *needle)
{
	for (size_t i = 0; i < errs->n; i++)
		if (strstr(errs->msg[i], needle))
			return true;
	for (size_t i = 0; i < errs->n; i++)
		fprintf(stderr, "  got: %s\n", errs->msg[i]);
	if (!errs->n)
		fprintf(stderr, "  got no errors\n");
	return false;
}

#define HEAD                                                                                       \
	"apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"                         \
	"metadata: {name: llm, namespace: ns}\n"
#define TMPL                                                                                       \
	"    workerTemplate:\n"                                                                    \
	"      metadata: {labels: {app: llm}}\n"                                                   \
	"      spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"

/* The one error the spec after HEAD gets, at its path. */
static void refused(const char *spec, const char *needle)
{
	char text[2048];
	struct pk_errors errs = {0};
	json_t *o;

	snprintf(text, sizeof(text), HEAD "%s", spec);
	o = obj(text);
	ck_assert_int_eq(wb_lws_validate(o, NULL, &errs), -EINVAL);
	ck_assert_msg(errors_have(&errs, needle), "want: %s", needle);
	pk_errors_clear(&errs);
	json_decref(o);
}

static void accepted(const char *spec)
{
	char text[2048];
	struct pk_errors errs = {0};
	json_t *o;

	snprintf(text, sizeof(text), HEAD "%s", spec);
	o = obj(text);
	ck_assert_msg(wb_lws_validate(o, NULL, &errs) == 0, "refused: %s",
		      errs.n ? errs.msg[0] : "?");
	json_decref(o);
}

START_TEST(lws_validation_refuses_by_path)
{
	accepted("spec:\n  replicas: 2\n  startupPolicy: LeaderCreated\n"
		 "  leaderWorkerTemplate:\n    size: 3\n    restartPolicy: None\n" TMPL
		 "  rolloutStrategy:\n    type: RollingUpdate\n"
		 "    rollingUpdateConfiguration: {maxUnavailable: '50%', maxSurge: 1}\n"
		 "  networkConfig: {subdomainPolicy: UniquePerReplica}\n");
	refused("spec: {replicas: 1}\n", "spec.leaderWorkerTemplate: Required value");
	refused("spec:\n  leaderWorkerTemplate: {size: 2}\n",
		"spec.leaderWorkerTemplate.workerTemplate: Required value");
	refused("spec:\n  replicas: -1\n  leaderWorkerTemplate:\n" TMPL,
		"spec.replicas: Invalid value: -1");
	refused("spec:\n  leaderWorkerTemplate:\n    size: 0\n" TMPL,
		"spec.leaderWorkerTemplate.size: Invalid value: 0");
	refused("spec:\n  replicas: 1000\n  leaderWorkerTemplate:\n    size: 1000\n" TMPL,
		"spec.replicas: Too many");
	refused("spec:\n  leaderWorkerTemplate:\n    restartPolicy: RecreateGroupAfterStart\n" TMPL,
		"spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "
		"\"RecreateGroupAfterStart\"");
	refused("spec:\n  startupPolicy: InOrder\n  leaderWorkerTemplate:\n" TMPL,
		"spec.startupPolicy: Unsupported value");
	refused("spec:\n  leaderWorkerTemplate:\n    subGroupPolicy: {subGroupSize: 2}\n" TMPL,
		"spec.leaderWorkerTemplate.subGroupPolicy: Forbidden: not implemented");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL
		"  rolloutStrategy: {rollingUpdateConfiguration: {partition: 1}}\n",
		"spec.rolloutStrategy.rollingUpdateConfiguration.partition: Forbidden");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL "  rolloutStrategy: {type: Recreate}\n",
		"spec.rolloutStrategy.type: Unsupported value");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL
		"  rolloutStrategy: {rollingUpdateConfiguration: {maxUnavailable: 0}}\n",
		"maxUnavailable: Invalid value: 0: must not be 0 when maxSurge is 0");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL
		"  rolloutStrategy: {rollingUpdateConfiguration: {maxSurge: '150%'}}\n",
		"rollingUpdateConfiguration.maxSurge: Invalid value: \"150%\"");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL "  networkConfig: {subdomainPolicy: X}\n",
		"spec.networkConfig.subdomainPolicy: Unsupported value");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL "  scheduling: {replica: {leader: {}}}\n",
		"spec.scheduling.replica.leader: Forbidden: not implemented");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL
		"  scheduling: {resourceClaims: [{name: a, resourceClaimName: b}]}\n",
		"spec.scheduling.resourceClaims: Forbidden");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL "  scheduling: {bogus: {}}\n",
		"spec.scheduling.bogus: Forbidden: unknown field");
	refused("spec:\n  leaderWorkerTemplate:\n    size: 4\n" TMPL
		"  scheduling: {replica: {schedulingPolicy: {gang: {minCount: 5}}}}\n",
		"spec.scheduling.replica.schedulingPolicy.gang.minCount: Invalid value: 5");
	/* a gang of the leader and its workers cannot wait for the leader to be Ready */
	refused("spec:\n  startupPolicy: LeaderReady\n  leaderWorkerTemplate:\n    size: 2\n" TMPL,
		"spec.startupPolicy: Invalid value: \"LeaderReady\"");
	accepted("spec:\n  startupPolicy: LeaderReady\n  leaderWorkerTemplate:\n    size: 2\n" TMPL
		 "  scheduling: {replica: {schedulingPolicy: {basic: {}}}}\n");
	/* a gang set needs gang groups (KEP-6012) */
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL
		"  scheduling: {schedulingPolicy: {gang: {}}, replica: {schedulingPolicy: "
		"{basic: {}}}}\n",
		"spec.scheduling.replica.schedulingPolicy");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL
		"    leaderTemplate:\n      spec:\n        schedulingGroup: {podGroupName: x}\n"
		"        containers: [{name: c, image: x}]\n",
		"spec.leaderWorkerTemplate.leaderTemplate.spec.schedulingGroup: Forbidden");
	refused("spec:\n  leaderWorkerTemplate:\n" TMPL
		"    leaderTemplate:\n      spec:\n        priorityClassName: high\n"
		"        containers: [{name: c, image: x}]\n",
		"leaderTemplate.spec.priorityClassName: Invalid value: \"high\"");
}
END_TEST

START_TEST(lws_names_and_downward_annotations)
{
	struct pk_errors errs = {0};
	json_t *o = obj("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
			"metadata: {name: a-name-that-is-far-too-long-for-the-pods-it-would-name}\n"
			"spec:\n  leaderWorkerTemplate:\n" TMPL);

	ck_assert_int_eq(wb_lws_validate(o, NULL, &errs), -EINVAL);
	ck_assert(errors_have(&errs, "metadata.name: Invalid value"));
	pk_errors_clear(&errs);
	json_decref(o);
	o = obj("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
		"metadata:\n  name: llm\n  annotations:\n"
		"    scheduling.k8s.io/group-template-name: t\n"
		"spec:\n  leaderWorkerTemplate:\n" TMPL);
	ck_assert_int_eq(wb_lws_validate(o, NULL, &errs), -EINVAL);
	ck_assert(errors_have(&errs, "go together"));
	pk_errors_clear(&errs);
	json_decref(o);
}
END_TEST

/* ---- compiling ------------------------------------------------------------------ */

static json_t *by_name(const json_t *objs, const char *kind, const char *name)
{
	json_t *o;
	size_t i;

	json_array_foreach(
	    objs, i, o) if (strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0 &&
			    strcmp(pk_name(o), name) == 0) return o;
	return NULL;
}

static size_t count_kind(const json_t *objs, const char *kind)
{
	json_t *o;
	size_t i, n = 0;

	json_array_foreach(objs, i, o) n +=
	    strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0;
	return n;
}

static json_t *reconcile(const json_t *lws, const struct wb_lookup *lk)
{
	struct pk_errors errs = {0};
	json_t *out = NULL;

	ck_assert_msg(wb_lws_reconcile(lws, lk, &out, &errs) == 0, "reconcile: %s",
		      errs.n ? errs.msg[0] : "?");
	return out;
}

static const char *str_at(const json_t *o, const char *path)
{
	const char *s = pk_get_string(o, path);

	ck_assert_msg(s, "%s: absent", path);
	return s;
}

static const char *label(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(pk_get(o, "metadata.labels"), key));
}

static const char *annotation(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(pk_get(o, "metadata.annotations"), key));
}

static const char *env(const json_t *pod, const char *name)
{
	json_t *e;
	size_t i;

	json_array_foreach(pk_get(json_array_get(pk_get(pod, "spec.containers"), 0), "env"), i,
			   e) if (strcmp(json_string_value(json_object_get(e, "name")), name) ==
				  0) return json_string_value(json_object_get(e, "value"));
	return NULL;
}

#define LWS2x3                                                                                     \
	"apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"                         \
	"metadata: {name: llm, namespace: ns, uid: u1}\nspec:\n  replicas: 2\n  "                  \
	"leaderWorkerTemplate:\n    size: 3\n" TMPL

/* LWS's default: a set of gangs of size pods under one basic CompositePodGroup. */
START_TEST(lws_compiles_a_set_of_gangs)
{
	json_t *lws = obj(LWS2x3), *out = reconcile(lws, NULL), *wl, *t, *pg, *leader, *worker;

	ck_assert_uint_eq(count_kind(out, "Workload"), 1);
	ck_assert_uint_eq(count_kind(out, "CompositePodGroup"), 1);
	ck_assert_uint_eq(count_kind(out, "PodGroup"), 2);
	ck_assert_uint_eq(count_kind(out, "Pod"), 6);
	wl = by_name(out, "Workload", "llm");
	t = json_array_get(pk_get(wl, "spec.compositePodGroupTemplates"), 0);
	ck_assert_str_eq(str_at(t, "name"), "leaderworkerset");
	ck_assert_ptr_nonnull(pk_get(t, "schedulingPolicy.basic"));
	t = json_array_get(json_object_get(t, "podGroupTemplates"), 0);
	ck_assert_str_eq(str_at(t, "name"), "replica");
	ck_assert_int_eq(json_integer_value(pk_get(t, "schedulingPolicy.gang.minCount")), 3);
	ck_assert_ptr_nonnull(by_name(out, "CompositePodGroup", "llm"));
	pg = by_name(out, "PodGroup", "llm-1");
	ck_assert_ptr_nonnull(pg);
	ck_assert_str_eq(str_at(pg, "spec.parentCompositePodGroupName"), "llm");
	ck_assert_str_eq(str_at(pg, "metadata.ownerReferences.0.kind"), "LeaderWorkerSet");
	leader = by_name(out, "Pod", "llm-1");
	worker = by_name(out, "Pod", "llm-1-2");
	ck_assert_ptr_nonnull(leader);
	ck_assert_ptr_nonnull(worker);
	ck_assert_ptr_null(by_name(out, "Pod", "llm-1-3"));
	ck_assert_str_eq(str_at(worker, "spec.schedulingGroup.podGroupName"), "llm-1");
	ck_assert_str_eq(label(worker, WB_LWS_LABEL_NAME), "llm");
	ck_assert_str_eq(label(worker, WB_LWS_LABEL_GROUP_INDEX), "1");
	ck_assert_str_eq(label(worker, WB_LWS_LABEL_WORKER_INDEX), "2");
	ck_assert_str_eq(label(leader, WB_LWS_LABEL_WORKER_INDEX), "0");
	ck_assert_str_eq(label(worker, "app"), "llm");
	ck_assert_str_eq(label(worker, WB_LWS_LABEL_GROUP_KEY),
			 label(leader, WB_LWS_LABEL_GROUP_KEY));
	ck_assert_str_ne(label(leader, WB_LWS_LABEL_GROUP_KEY),
			 label(by_name(out, "Pod", "llm-0"), WB_LWS_LABEL_GROUP_KEY));
	ck_assert_str_eq(annotation(worker, WB_LWS_ANNOTATION_SIZE), "3");
	ck_assert_str_eq(annotation(worker, WB_LWS_ANNOTATION_LEADER), "llm-1");
	ck_assert_ptr_null(annotation(leader, WB_LWS_ANNOTATION_LEADER));
	ck_assert_str_eq(str_at(worker, "spec.hostname"), "llm-1-2");
	ck_assert_str_eq(str_at(worker, "spec.subdomain"), "llm");
	ck_assert_str_eq(env(worker, "LWS_LEADER_ADDRESS"), "llm-1.llm.ns");
	ck_assert_str_eq(env(worker, "LWS_WORKER_INDEX"), "2");
	ck_assert_str_eq(env(worker, "LWS_GROUP_SIZE"), "3");
	json_decref(out);
	json_decref(lws);
}
END_TEST

/* The escape hatch back to pod-by-pod scheduling, and a gang of groups on request. */
START_TEST(lws_escape_hatch_and_gang_set)
{
	json_t *lws = obj(HEAD "spec:\n  replicas: 3\n  leaderWorkerTemplate:\n    size: 2\n" TMPL
			       "  scheduling: {replica: {schedulingPolicy: {basic: {}}}}\n");
	json_t *out = reconcile(lws, NULL), *t;

	t = json_array_get(pk_get(by_name(out, "Workload", "llm"),
				  "spec.compositePodGroupTemplates.0.podGroupTemplates"),
			   0);
	ck_assert_ptr_nonnull(pk_get(t, "schedulingPolicy.basic"));
	ck_assert_ptr_null(pk_get(t, "schedulingPolicy.gang"));
	ck_assert_ptr_nonnull(
	    pk_get(by_name(out, "PodGroup", "llm-2"), "spec.schedulingPolicy.basic"));
	json_decref(out);
	json_decref(lws);
	lws = obj(HEAD
		  "spec:\n  replicas: 3\n  leaderWorkerTemplate:\n    size: 2\n" TMPL
		  "  scheduling:\n    schedulingPolicy: {gang: {}}\n    disruptionMode: {all: {}}\n"
		  "    replica: {schedulingConstraints: {topology: [{key: rack}]}}\n");
	out = reconcile(lws, NULL);
	t = by_name(out, "CompositePodGroup", "llm");
	ck_assert_int_eq(json_integer_value(pk_get(t, "spec.schedulingPolicy.gang.minGroupCount")),
			 3);
	t = by_name(out, "PodGroup", "llm-0");
	ck_assert_int_eq(json_integer_value(pk_get(t, "spec.schedulingPolicy.gang.minCount")), 2);
	ck_assert_str_eq(str_at(t, "spec.schedulingConstraints.topology.0.key"), "rack");
	ck_assert_ptr_nonnull(pk_get(t, "spec.disruptionMode.all"));
	json_decref(out);
	json_decref(lws);
}
END_TEST

/* The exclusive-topology annotation: the group in one domain, other groups out. */
START_TEST(lws_exclusive_topology)
{
	json_t *lws =
	    obj("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
		"metadata:\n  name: llm\n  namespace: ns\n  annotations:\n"
		"    leaderworkerset.sigs.k8s.io/exclusive-topology: topology.podkernel.dev/cube\n"
		"spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 2\n" TMPL
		"  networkConfig: {subdomainPolicy: UniquePerReplica}\n");
	json_t *out = reconcile(lws, NULL), *pod, *aff, *anti;
	const char *key;

	ck_assert_str_eq(
	    str_at(by_name(out, "PodGroup", "llm-1"), "spec.schedulingConstraints.topology.0.key"),
	    "topology.podkernel.dev/cube");
	pod = by_name(out, "Pod", "llm-1-1");
	key = label(pod, WB_LWS_LABEL_GROUP_KEY);
	aff = pk_get(pod,
		     "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.0");
	anti = pk_get(
	    pod, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.0");
	ck_assert_str_eq(str_at(aff, "topologyKey"), "topology.podkernel.dev/cube");
	ck_assert_str_eq(str_at(aff, "labelSelector.matchExpressions.0.values.0"), key);
	ck_assert_str_eq(str_at(anti, "labelSelector.matchExpressions.0.operator"), "Exists");
	ck_assert_str_eq(str_at(anti, "labelSelector.matchExpressions.1.operator"), "NotIn");
	ck_assert_str_eq(annotation(pod, WB_LWS_ANNOTATION_EXCLUSIVE),
			 "topology.podkernel.dev/cube");
	ck_assert_str_eq(str_at(pod, "spec.subdomain"), "llm-1");
	ck_assert_str_eq(env(pod, "LWS_LEADER_ADDRESS"), "llm-1.llm-1.ns");
	json_decref(out);
	json_decref(lws);
}
END_TEST

/* A lookup over a list of pods that "exist". */
static json_t *lookup_pods(void *userdata, enum pk_kind kind, const char *ns, const char *name)
{
	(void)ns;
	return kind == PK_KIND_POD ? by_name(userdata, "Pod", name) : NULL;
}

static void set_ready(json_t *pod, const char *status)
{
	json_object_set_new(pod, "status",
			    json_pack("{s:s,s:[{s:s,s:s}]}", "phase", "Running", "conditions",
				      "type", "Ready", "status", status));
}

/* LeaderReady: a group's workers come once its leader is Ready. */
START_TEST(lws_leader_ready_waits_for_the_leader)
{
	json_t *lws = obj(HEAD "spec:\n  replicas: 2\n  startupPolicy: LeaderReady\n"
			       "  leaderWorkerTemplate:\n    size: 3\n" TMPL
			       "  scheduling: {replica: {schedulingPolicy: {basic: {}}}}\n");
	json_t *existing = reconcile(lws, NULL), *out;
	struct wb_lookup lk = {lookup_pods, existing};

	/* offline, nothing is Ready: the leaders only */
	ck_assert_uint_eq(count_kind(existing, "Pod"), 2);
	set_ready(by_name(existing, "Pod", "llm-1"), "True");
	set_ready(by_name(existing, "Pod", "llm-0"), "False");
	out = reconcile(lws, &lk);
	ck_assert_uint_eq(count_kind(out, "Pod"), 4);
	ck_assert_ptr_nonnull(by_name(out, "Pod", "llm-1-2"));
	ck_assert_ptr_null(by_name(out, "Pod", "llm-0-1"));
	json_decref(out);
	json_decref(existing);
	json_decref(lws);
}
END_TEST

/* A rolling update with maxSurge: surge groups at the next indices while old ones run. */
START_TEST(lws_surge_groups_follow_the_indices)
{
	json_t *old = obj(LWS2x3 "  rolloutStrategy: {rollingUpdateConfiguration: {maxSurge: 1, "
				 "maxUnavailable: 0}}\n");
	json_t *lws = json_deep_copy(old), *existing = reconcile(old, NULL), *out, *p;
	struct wb_lookup lk = {lookup_pods, existing};
	char rev_old[WB_LWS_REVISION_LEN], rev_new[WB_LWS_REVISION_LEN];
	size_t i;

	json_object_set_new(pk_get(lws, "spec.leaderWorkerTemplate.workerTemplate.metadata.labels"),
			    "v", json_string("2"));
	wb_lws_revision(old, rev_old);
	wb_lws_revision(lws, rev_new);
	ck_assert_str_ne(rev_old, rev_new);
	ck_assert_str_eq(label(by_name(existing, "Pod", "llm-0"), WB_LWS_LABEL_REVISION), rev_old);
	/* nothing changed: no surge */
	out = reconcile(old, &lk);
	ck_assert_uint_eq(count_kind(out, "PodGroup"), 2);
	json_decref(out);
	/* the template changed while the groups run the old one: one surge group, new */
	out = reconcile(lws, &lk);
	ck_assert_uint_eq(count_kind(out, "PodGroup"), 3);
	ck_assert_str_eq(label(by_name(out, "Pod", "llm-2-2"), WB_LWS_LABEL_REVISION), rev_new);
	json_decref(out);
	/* every group updated and Ready: the surge group is no longer wanted */
	json_decref(existing);
	existing = reconcile(lws, NULL);
	lk.userdata = existing;
	json_array_foreach(existing, i, p) if (strcmp(json_string_value(json_object_get(p, "kind")),
						      "Pod") == 0) set_ready(p, "True");
	out = reconcile(lws, &lk);
	ck_assert_uint_eq(count_kind(out, "PodGroup"), 2);
	json_decref(out);
	json_decref(existing);
	json_decref(lws);
	json_decref(old);
}
END_TEST

/* Delegated: the set's group and its groups from a parent's Workload (serving story). */
START_TEST(lws_delegated_under_a_parent)
{
	json_t *wl = obj("apiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\n"
			 "metadata: {name: serve, namespace: ns}\nspec:\n"
			 "  compositePodGroupTemplates:\n  - name: root\n"
			 "    schedulingPolicy: {basic: {}}\n    compositePodGroupTemplates:\n"
			 "    - name: prefill\n      schedulingPolicy: {gang: {minGroupCount: 2}}\n"
			 "      podGroupTemplates:\n      - name: prefill-gang\n"
			 "        schedulingPolicy: {gang: {minCount: 2}}\n");
	json_t *objs = json_pack("[o]", wl), *lws, *out, *cpg, *pg;
	struct wb_lookup lk = {NULL, NULL};
	struct pk_errors errs = {0};

	lws = obj("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
		  "metadata:\n  name: pre\n  namespace: ns\n  annotations:\n"
		  "    scheduling.k8s.io/workload-name: serve\n"
		  "    scheduling.k8s.io/group-template-name: prefill\n"
		  "    scheduling.k8s.io/parent-compositepodgroup: serve\n"
		  "spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 2\n" TMPL);
	json_array_append(objs, lws);
	ck_assert_int_eq(wb_expand_objects(objs, &out, &errs), 0);
	ck_assert_uint_eq(count_kind(out, "Workload"), 1);
	cpg = by_name(out, "CompositePodGroup", "pre");
	ck_assert_str_eq(str_at(cpg, "spec.parentCompositePodGroupName"), "serve");
	ck_assert_str_eq(str_at(cpg, "spec.workloadRef.templateName"), "prefill");
	pg = by_name(out, "PodGroup", "pre-1");
	ck_assert_str_eq(str_at(pg, "spec.workloadRef.templateName"), "prefill-gang");
	ck_assert_str_eq(str_at(pg, "spec.parentCompositePodGroupName"), "pre");
	ck_assert_uint_eq(count_kind(out, "Pod"), 4);
	json_decref(out);
	/* a template that is not a composite of one leaf is refused by the annotation */
	json_object_set_new(pk_get(lws, "metadata.annotations"),
			    "scheduling.k8s.io/group-template-name", json_string("prefill-gang"));
	ck_assert_int_eq(wb_lws_reconcile(lws, &lk, &out, &errs), -ENOENT);
	ck_assert(errors_have(&errs, "Not found"));
	pk_errors_clear(&errs);
	json_decref(lws);
	json_decref(objs);
}
END_TEST

static bool has_name(const json_t *names, const char *name)
{
	json_t *n;
	size_t i;

	json_array_foreach(names, i, n) if (strcmp(json_string_value(n), name) == 0) return true;
	return false;
}

static json_t *ready_pods(const json_t *lws)
{
	json_t *objs = reconcile(lws, NULL), *pods = json_array(), *p;
	size_t i;

	json_array_foreach(objs, i,
			   p) if (strcmp(json_string_value(json_object_get(p, "kind")), "Pod") == 0)
	{
		set_ready(p, "True");
		json_array_append(pods, p);
	}
	json_decref(objs);
	return pods;
}

/* A pod that ends takes its group with it (RecreateGroupOnPodRestart), or alone (None). */
START_TEST(lws_status_restarts_groups)
{
	json_t *lws = obj(LWS2x3), *pods = ready_pods(lws), *none;
	struct wb_lws_update u = {0};

	ck_assert_int_eq(wb_lws_status(lws, pods, "2026-01-01T00:00:00Z", &u), 0);
	ck_assert_uint_eq(json_array_size(u.delete_pods), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(u.status, "readyReplicas")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(u.status, "replicas")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(u.status, "updatedReplicas")), 2);
	ck_assert_str_eq(str_at(u.status, "conditions.0.type"), "Available");
	ck_assert_str_eq(str_at(u.status, "conditions.0.status"), "True");
	ck_assert_str_eq(u.event_reason, "AllGroupsReady");
	ck_assert_str_eq(u.event_note,
			 "All replicas are ready, with 2 groups ready of total 2 groups");
	/* the same status again: nothing to write, no Event */
	json_object_set(lws, "status", u.status);
	wb_lws_update_clear(&u);
	ck_assert_int_eq(wb_lws_status(lws, pods, "2026-01-01T00:00:00Z", &u), 0);
	ck_assert_ptr_null(u.status);
	ck_assert_ptr_null(u.event_reason);
	wb_lws_update_clear(&u);
	json_object_set_new(json_object_get(by_name(pods, "Pod", "llm-0-1"), "status"), "phase",
			    json_string("Failed"));
	ck_assert_int_eq(wb_lws_status(lws, pods, "2026-01-01T00:00:00Z", &u), 0);
	ck_assert_uint_eq(json_array_size(u.delete_pods), 3);
	ck_assert(has_name(u.delete_pods, "llm-0"));
	ck_assert(has_name(u.delete_groups, "llm-0"));
	ck_assert_int_eq(json_integer_value(json_object_get(u.status, "readyReplicas")), 1);
	wb_lws_update_clear(&u);
	none = json_deep_copy(lws);
	json_object_set_new(pk_get(none, "spec.leaderWorkerTemplate"), "restartPolicy",
			    json_string("None"));
	ck_assert_int_eq(wb_lws_status(none, pods, "2026-01-01T00:00:00Z", &u), 0);
	ck_assert_uint_eq(json_array_size(u.delete_pods), 1);
	ck_assert(has_name(u.delete_pods, "llm-0-1"));
	ck_assert_uint_eq(json_array_size(u.delete_groups), 0);
	wb_lws_update_clear(&u);
	/* a deleted worker: the group goes whole */
	json_array_remove(pods, 1); /* llm-0-1, the one that failed */
	ck_assert_ptr_null(by_name(pods, "Pod", "llm-0-1"));
	ck_assert_int_eq(wb_lws_status(lws, pods, "2026-01-01T00:00:00Z", &u), 0);
	ck_assert(has_name(u.delete_groups, "llm-0"));
	wb_lws_update_clear(&u);
	json_decref(none);
	json_decref(pods);
	json_decref(lws);
}
END_TEST

/* A rolling update from the highest index, within maxUnavailable. */
START_TEST(lws_status_rolls_groups_within_max_unavailable)
{
	json_t *old = obj(LWS2x3), *pods = ready_pods(old), *lws = json_deep_copy(old);
	struct wb_lws_update u = {0};

	json_object_set_new(pk_get(lws, "spec.leaderWorkerTemplate.workerTemplate.metadata.labels"),
			    "v", json_string("2"));
	/* maxUnavailable 1 (the default): one Ready group at a time, the highest first */
	ck_assert_int_eq(wb_lws_status(lws, pods, "2026-01-01T00:00:00Z", &u), 0);
	ck_assert_int_eq(u.rolled, 1);
	ck_assert(has_name(u.delete_groups, "llm-1"));
	ck_assert(has_name(u.delete_pods, "llm-1-2"));
	ck_assert(!has_name(u.delete_pods, "llm-0"));
	ck_assert_str_eq(str_at(u.status, "conditions.2.type"), "UpdateInProgress");
	ck_assert_str_eq(str_at(u.status, "conditions.2.status"), "True");
	ck_assert_str_eq(str_at(u.status, "conditions.2.reason"), "GroupsUpdating");
	ck_assert_str_eq(str_at(u.status, "conditions.0.status"), "False"); /* Available */
	ck_assert_str_eq(str_at(u.status, "conditions.1.status"), "True");  /* Progressing */
	wb_lws_update_clear(&u);
	/* maxUnavailable 0, maxSurge 1: nothing goes until a surge group is Ready */
	json_object_set_new(json_object_get(lws, "spec"), "rolloutStrategy",
			    json_pack("{s:{s:i,s:i}}", "rollingUpdateConfiguration",
				      "maxUnavailable", 0, "maxSurge", 1));
	ck_assert_int_eq(wb_lws_status(lws, pods, "2026-01-01T00:00:00Z", &u), 0);
	ck_assert_int_eq(u.rolled, 0);
	wb_lws_update_clear(&u);
	json_decref(lws);
	json_decref(pods);
	json_decref(old);
}
END_TEST

/* Malformed objects and pods are errors, never crashes. */
START_TEST(lws_hostile_objects)
{
	static const char *const specs[] = {
	    "spec: []\n",
	    "spec: {leaderWorkerTemplate: []}\n",
	    "spec: {leaderWorkerTemplate: {workerTemplate: {spec: {containers: [1, x]}}}}\n",
	    "spec: {replicas: x, leaderWorkerTemplate: {size: '3', workerTemplate: {}}}\n",
	    "spec: {leaderWorkerTemplate: {workerTemplate: {}}, scheduling: {replica: []}}\n",
	    "spec: {leaderWorkerTemplate: {workerTemplate: {}}, rolloutStrategy: "
	    "{rollingUpdateConfiguration: {maxSurge: '%'}}}\n",
	    "spec: {leaderWorkerTemplate: {workerTemplate: {}}, networkConfig: []}\n",
	};
	json_t *pods =
	    json_pack("[{s:s,s:{s:s,s:{s:s,s:s}}},{s:s,s:{s:s,s:{s:s}}},i]", "kind", "Pod",
		      "metadata", "name", "llm-0", "labels", WB_LWS_LABEL_GROUP_INDEX,
		      "99999999999", WB_LWS_LABEL_WORKER_INDEX, "-1", "kind", "Pod", "metadata",
		      "name", "llm-1", "labels", WB_LWS_LABEL_GROUP_INDEX, "1", 7);

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		char text[1024];
		struct pk_errors errs = {0};
		struct wb_lws_update u = {0};
		json_t *o, *out = NULL;
		int r;

		snprintf(text, sizeof(text), HEAD "%s", specs[i]);
		o = obj(text);
		r = wb_lws_reconcile(o, NULL, &out, &errs);
		ck_assert_msg(r == 0 || r == -EINVAL, "spec %zu: %d", i, r);
		json_decref(out);
		pk_errors_clear(&errs);
		r = wb_lws_status(o, pods, "2026-01-01T00:00:00Z", &u);
		ck_assert_msg(r == 0 || r == -EINVAL, "status %zu: %d", i, r);
		wb_lws_update_clear(&u);
		json_decref(o);
	}
	json_decref(pods);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("lws");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, lws_validation_refuses_by_path);
	tcase_add_test(tc, lws_names_and_downward_annotations);
	tcase_add_test(tc, lws_compiles_a_set_of_gangs);
	tcase_add_test(tc, lws_escape_hatch_and_gang_set);
	tcase_add_test(tc, lws_exclusive_topology);
	tcase_add_test(tc, lws_leader_ready_waits_for_the_leader);
	tcase_add_test(tc, lws_surge_groups_follow_the_indices);
	tcase_add_test(tc, lws_delegated_under_a_parent);
	tcase_add_test(tc, lws_status_restarts_groups);
	tcase_add_test(tc, lws_status_rolls_groups_within_max_unavailable);
	tcase_add_test(tc, lws_hostile_objects);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
