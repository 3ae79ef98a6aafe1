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

static Suite *suite(void)
{
	Suite *s = suite_create("lws");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, lws_validation_refuses_by_path);
	tcase_add_test(tc, lws_names_and_downward_annotations);
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
