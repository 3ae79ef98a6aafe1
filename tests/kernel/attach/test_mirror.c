/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_mirror.c — the attach-mode mirror as the scheduling loop sees it:
 * which pods it shows (its own, bound ones of other schedulers, not
 * finished ones), the events a relist turns into, workload kinds served
 * under another group, and the source calls the loop makes; queues refused
 * without the queue controller's pass to hand them to.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/attach/attach-internal.h"

struct seen {
	json_t *log; /* ["ADDED Pod default/a rv", ...] */
};

static int record(const struct pk_source_event *ev, void *arg)
{
	struct seen *s = arg;
	char line[256];

	snprintf(line, sizeof(line), "%s %s %s/%s %llu", pk_event_type_to_string(ev->type),
		 ev->kind->kind, pk_namespace(ev->object) ? pk_namespace(ev->object) : "",
		 pk_name(ev->object), (unsigned long long)ev->rv);
	json_array_append_new(s->log, json_string(line));
	return 0;
}

/* Every event after *pos, as lines; *pos moves on. */
static json_t *drain(struct at_mirror *m, uint64_t *pos)
{
	struct seen s = {json_array()};
	uint64_t last = 0;

	ck_assert_int_eq(at_mirror_source_ops.events_since(m, *pos, 0, record, &s, &last), 0);
	*pos = last;
	return s.log;
}

static json_t *pod(const char *name, const char *rv, const char *sched, const char *node,
		   const char *phase)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{},s:{}}", "apiVersion", "v1", "kind",
			      "Pod", "metadata", "name", name, "namespace", "default",
			      "resourceVersion", rv, "spec", "status");

	if (sched)
		pk_set(p, "spec.schedulerName", json_string(sched));
	if (node)
		pk_set(p, "spec.nodeName", json_string(node));
	if (phase)
		pk_set(p, "status.phase", json_string(phase));
	return p;
}

static void expect(json_t *log, const char *const *want, size_t n)
{
	ck_assert_uint_eq(json_array_size(log), n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(json_string_value(json_array_get(log, i)), want[i]);
	json_decref(log);
}

START_TEST(test_pods_of_other_schedulers)
{
	struct at_mirror *m = NULL;
	uint64_t pos = 0;
	json_t *p, *got = NULL;

	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	/* ours, pending: shown; another scheduler's, pending: hidden */
	p = pod("mine", "10", "podkernel", NULL, NULL);
	at_mirror_event(m, &pk_type_pod, KUBE_ADDED, p);
	json_decref(p);
	p = pod("theirs", "11", NULL, NULL, NULL); /* absent: default-scheduler */
	at_mirror_event(m, &pk_type_pod, KUBE_ADDED, p);
	json_decref(p);
	ck_assert_int_eq(at_mirror_get(m, &pk_type_pod, "default", "theirs", &got), -ENOENT);
	/* theirs bound: it takes capacity now */
	p = pod("theirs", "12", "default-scheduler", "n1", NULL);
	at_mirror_event(m, &pk_type_pod, KUBE_MODIFIED, p);
	json_decref(p);
	/* ours finished: gone for the scheduler */
	p = pod("mine", "13", "podkernel", "n1", "Succeeded");
	at_mirror_event(m, &pk_type_pod, KUBE_MODIFIED, p);
	json_decref(p);
	static const char *const want[] = {
	    "ADDED Pod default/mine 10",
	    "ADDED Pod default/theirs 12",
	    "DELETED Pod default/mine 10",
	};
	expect(drain(m, &pos), want, 3);
	ck_assert_int_eq(at_mirror_get(m, &pk_type_pod, "default", "theirs", &got), 0);
	ck_assert_str_eq(pk_get_string(got, "spec.nodeName"), "n1");
	json_decref(got);
	at_mirror_free(m);
}
END_TEST

START_TEST(test_relist_turns_into_events)
{
	struct at_mirror *m = NULL;
	uint64_t pos = 0;
	json_t *items = json_array(), *list, *n;

	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	for (int i = 0; i < 3; i++) {
		char name[8], rv[8];

		snprintf(name, sizeof(name), "n%d", i);
		snprintf(rv, sizeof(rv), "%d", i + 1);
		json_array_append_new(items, json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1",
						       "kind", "Node", "metadata", "name", name,
						       "resourceVersion", rv));
	}
	at_mirror_replace(m, &pk_type_node, items);
	json_decref(drain(m, &pos));
	/* after a 410: n0 unchanged, n1 changed, n2 gone, n3 new (new trees: the
	 * mirror shares the objects it was given, which are never changed) */
	json_array_remove(items, 2);
	n = json_deep_copy(json_array_get(items, 1));
	pk_set(n, "metadata.resourceVersion", json_string("20"));
	json_array_set_new(items, 1, n);
	json_array_append_new(items,
			      json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "Node",
					"metadata", "name", "n3", "resourceVersion", "21"));
	at_mirror_replace(m, &pk_type_node, items);
	static const char *const want[] = {
	    "MODIFIED Node /n1 20",
	    "ADDED Node /n3 21",
	    "DELETED Node /n2 3",
	};
	expect(drain(m, &pos), want, 3);
	/* the loop's list sees the new state */
	char *cont = NULL;

	ck_assert_int_eq(at_mirror_source_ops.list(m, &pk_type_node, NULL, &list, &cont), 0);
	ck_assert_ptr_null(cont);
	ck_assert_uint_eq(json_array_size(list), 3);
	json_decref(list);
	json_decref(items);
	at_mirror_free(m);
}
END_TEST

START_TEST(test_workload_group_and_waits)
{
	struct at_mirror *m = NULL;
	json_t *pg = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "apiVersion", "example.com/v1alpha3",
			       "kind", "PodGroup", "metadata", "name", "g", "namespace", "ns",
			       "resourceVersion", "5");
	json_t *got = NULL;

	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	/* nothing new: the wait times out; an event ends it */
	ck_assert_int_eq(at_mirror_source_ops.wait(m, 0, 20), -ETIMEDOUT);
	at_mirror_event(m, &pk_type_pod_group, KUBE_ADDED, pg);
	ck_assert_int_eq(at_mirror_source_ops.wait(m, 0, 1000), 0);
	ck_assert_uint_eq(at_mirror_source_ops.rv(m), 1);
	ck_assert_int_eq(at_mirror_source_ops.get(m, &pk_type_pod_group, "ns", "g", &got), 0);
	ck_assert_str_eq(json_string_value(json_object_get(got, "apiVersion")),
			 "scheduling.k8s.io/v1alpha3");
	ck_assert_int_eq(pk_kind_of(got), PK_KIND_POD_GROUP);
	/* the cluster's object itself is untouched */
	ck_assert_str_eq(json_string_value(json_object_get(pg, "apiVersion")),
			 "example.com/v1alpha3");
	json_decref(got);
	at_mirror_close(m);
	ck_assert_int_eq(at_mirror_source_ops.wait(m, 1, 1000), -ECANCELED);
	json_decref(pg);
	at_mirror_free(m);
}
END_TEST

START_TEST(test_api_table)
{
	struct at_api api;
	char path[512];

	ck_assert_int_eq(at_api_init(&api, "scheduling.k8s.io"), -EINVAL);
	ck_assert_int_eq(at_api_init(&api, "/v1"), -EINVAL);
	ck_assert_int_eq(at_api_init(&api, "a/b/c"), -EINVAL);
	ck_assert_int_eq(at_api_init(&api, "example.com/v1beta1"), 0);
	ck_assert_int_eq(kube_resource_path(at_api_resource(&api, &pk_type_pod_group), "ns", "g",
					    "status", path, sizeof(path)),
			 0);
	ck_assert_str_eq(path, "/apis/example.com/v1beta1/namespaces/ns/podgroups/g/status");
	ck_assert_int_eq(kube_resource_path(at_api_resource(&api, &pk_type_pod), "ns", "p",
					    "binding", path, sizeof(path)),
			 0);
	ck_assert_str_eq(path, "/api/v1/namespaces/ns/pods/p/binding");
	ck_assert_int_eq(kube_resource_path(at_api_resource(&api, &pk_type_node), "ignored", NULL,
					    NULL, path, sizeof(path)),
			 0);
	ck_assert_str_eq(path, "/api/v1/nodes");
	ck_assert_ptr_null(at_api_resource(&api, &pk_type_job));
	/* an informer's copy of a watched resource names its row */
	struct kube_resource copy = *at_api_resource(&api, &pk_type_pod_group);
	struct kube_resource other = {"PodGroup", "scheduling.k8s.io", "v1alpha3", "podgroups",
				      true};

	ck_assert_ptr_eq(at_api_type(&api, &copy), &pk_type_pod_group);
	ck_assert_ptr_null(at_api_type(&api, &other)); /* moved to example.com/v1beta1 */
	ck_assert_ptr_null(at_api_type(&api, NULL));
}
END_TEST

static bool never(void *arg)
{
	(void)arg;
	return false;
}

/*
 * The write backend when the cluster does not answer (nothing listens on
 * the port): a re-read falls back to the mirror's copy so the scheduler
 * keeps the object; a backend that may not write (not the leader) sends
 * nothing and says so for every object.
 */
START_TEST(test_remote_offline_and_fenced)
{
	struct pk_kube_credentials creds = {.server = strdup("http://127.0.0.1:1")};
	struct kube_client *c = NULL;
	struct at_mirror *m = NULL;
	struct at_api api;
	struct at_remote_stats stats = {0};
	struct pk_writer *w = NULL;
	const struct pk_write_result *res = NULL;
	size_t n = 0;
	json_t *p = pod("p", "7", "podkernel", NULL, NULL), *got = NULL;

	ck_assert_int_eq(kube_client_new(&creds, &c), 0);
	ck_assert_int_eq(at_mirror_new("podkernel", &m), 0);
	ck_assert_int_eq(at_api_init(&api, PK_ATTACH_DEFAULT_WORKLOAD_API), 0);
	at_mirror_event(m, &pk_type_pod, KUBE_ADDED, p);
	json_decref(p);
	struct at_remote_config cfg = {
	    .client = c, .api = &api, .mirror = m, .may_write = never, .stats = &stats};

	ck_assert_int_eq(at_remote_writer_new(&cfg, &w), 0);
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "p", &got), 0);
	ck_assert_str_eq(pk_get_string(got, "metadata.resourceVersion"), "7");
	json_decref(got);
	ck_assert_int_eq(pk_writer_get(w, &pk_type_pod, "default", "q", &got), -ENOENT);
	ck_assert_int_eq(pk_writer_get(w, &pk_type_job, "default", "j", &got), -EINVAL);

	struct pk_write_ref ref = {&pk_type_pod, "default", "p", 7};

	ck_assert_int_eq(pk_writer_batch_begin(w), 0);
	ck_assert_int_eq(pk_writer_bind(w, &ref, "n1", NULL), 0);
	ck_assert_int_eq(pk_writer_batch_commit(w, &res, &n), -EPERM);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(res[0].error, -EPERM);
	ck_assert_uint_eq(atomic_load(&stats.bindings), 0);
	pk_writer_free(w);
	at_mirror_free(m);
	kube_client_free(c);
}
END_TEST

static int no_pass(const struct pk_queues_scratch *s, const struct pk_queues_pass_opts *o,
		   json_t **ret_before, json_t **ret_after, char *err, size_t errlen)
{
	(void)s, (void)o, (void)ret_before, (void)ret_after, (void)err, (void)errlen;
	return -ENOTSUP;
}

/* --queues=podkernel needs the pass the program hands over; refused before connecting. */
START_TEST(test_queues_need_the_pass)
{
	struct pk_attach_config cfg = {.kubeconfig = "/nonexistent/kubeconfig", .queues = true};
	struct pk_attach *a = NULL;
	char err[256] = "";

	ck_assert_int_eq(pk_attach_start(&cfg, &a, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(a);
	ck_assert_ptr_nonnull(strstr(err, "--queues=podkernel"));
	cfg.queue_pass = no_pass; /* given: the kubeconfig is what fails next */
	err[0] = '\0';
	ck_assert_int_eq(pk_attach_start(&cfg, &a, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(a);
	ck_assert_ptr_null(strstr(err, "--queues=podkernel"));
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/kubeconfig"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach-mirror");
	TCase *tc = tcase_create("mirror");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_pods_of_other_schedulers);
	tcase_add_test(tc, test_relist_turns_into_events);
	tcase_add_test(tc, test_workload_group_and_waits);
	tcase_add_test(tc, test_api_table);
	tcase_add_test(tc, test_remote_offline_and_fenced);
	tcase_add_test(tc, test_queues_need_the_pass);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
