/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What an update may change in a Pod (kube-apiserver's pod strategy), how
 * metadata.generation moves (a binding does not bump it; a spec edit does,
 * and a deletion does), and the PodGroup a pod names by label.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "kernel/store/store.h"

static char dir[256];
static struct pk_store *st;

static void setup(void)
{
	char err[256];

	snprintf(dir, sizeof(dir), "/dev/shm/pk-podrules-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/pk-podrules-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
	}
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
}

static void teardown(void)
{
	char cmd[300];

	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static json_t *make_pod(const char *name)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s,s:{s:{s:s}}}],s:[{s:s}],"
			      "s:[{s:s,s:s}]}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
			      "namespace", "default", "spec", "containers", "name", "c", "image",
			      "busybox", "resources", "requests", "cpu", "1", "schedulingGates",
			      "name", "wait", "tolerations", "key", "a", "operator", "Exists");
	json_t *out = NULL;

	ck_assert_int_eq(pk_store_create(st, p, NULL, &out), 0);
	json_decref(p);
	return out;
}

/* PATCH (merge) the pod; the rc, and the messages joined into msg. */
static int patch(const char *name, const char *body, char *msg, size_t len)
{
	json_error_t jerr;
	json_t *pt = json_loads(body, 0, &jerr);
	struct pk_errors errs = {0};
	int rc;

	ck_assert_ptr_nonnull(pt);
	rc = pk_store_patch(st, &pk_type_pod, "default", name, PK_PATCH_MERGE, pt, PK_SUB_MAIN,
			    &errs, NULL);
	msg[0] = '\0';
	for (size_t i = 0; i < errs.n; i++)
		snprintf(msg + strlen(msg), len - strlen(msg), "%s\n", errs.msg[i]);
	pk_errors_clear(&errs);
	json_decref(pt);
	return rc;
}

static json_int_t generation(const char *kind, const char *name)
{
	json_t *o = NULL;
	json_int_t g;

	ck_assert_int_eq(pk_store_get(st, pk_type_by_kind(kind), "default", name, &o), 0);
	g = json_integer_value(pk_get(o, "metadata.generation"));
	json_decref(o);
	return g;
}

static int bind_n1(json_t *pod, void *arg)
{
	(void)arg;
	pk_set(pod, "spec.nodeName", json_string("n1"));
	return pk_condition_set(pod, "PodScheduled", "True", "", "", 0);
}

START_TEST(test_pod_spec_immutable)
{
	char msg[2048];

	json_decref(make_pod("p"));
	ck_assert_int_eq(patch("p", "{\"spec\":{\"nodeName\":\"n2\"}}", msg, sizeof(msg)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "spec.nodeName: Forbidden"));
	ck_assert_int_eq(patch("p",
			       "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
			       "\"resources\":{\"requests\":{\"cpu\":\"64\"}}}]}}",
			       msg, sizeof(msg)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "spec: Forbidden: pod updates may not change fields"));
	/* What upstream lets change. */
	ck_assert_int_eq(patch("p",
			       "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:2\","
			       "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
			       msg, sizeof(msg)),
			 0);
	ck_assert_int_eq(generation("Pod", "p"), 2);
	ck_assert_int_eq(patch("p", "{\"spec\":{\"activeDeadlineSeconds\":60}}", msg, sizeof(msg)),
			 0);
	ck_assert_int_eq(patch("p", "{\"spec\":{\"activeDeadlineSeconds\":90}}", msg, sizeof(msg)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "spec.activeDeadlineSeconds"));
	ck_assert_int_eq(patch("p",
			       "{\"spec\":{\"tolerations\":[{\"key\":\"a\",\"operator\":"
			       "\"Exists\"},{\"key\":\"b\",\"operator\":\"Exists\"}]}}",
			       msg, sizeof(msg)),
			 0);
	ck_assert_int_eq(patch("p", "{\"spec\":{\"tolerations\":[]}}", msg, sizeof(msg)), -EINVAL);
	/* Gated: the node selector may narrow; gates may only go. */
	ck_assert_int_eq(
	    patch("p", "{\"spec\":{\"nodeSelector\":{\"zone\":\"a\"}}}", msg, sizeof(msg)), 0);
	ck_assert_int_eq(
	    patch("p", "{\"spec\":{\"nodeSelector\":{\"zone\":\"b\"}}}", msg, sizeof(msg)),
	    -EINVAL);
	ck_assert_int_eq(patch("p",
			       "{\"spec\":{\"schedulingGates\":[{\"name\":\"wait\"},"
			       "{\"name\":\"more\"}]}}",
			       msg, sizeof(msg)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "new scheduling gate 'more'"));
	ck_assert_int_eq(patch("p", "{\"spec\":{\"schedulingGates\":null}}", msg, sizeof(msg)), 0);
	ck_assert_int_eq(patch("p", "{\"spec\":{\"nodeSelector\":{\"zone\":\"a\",\"x\":\"y\"}}}",
			       msg, sizeof(msg)),
			 -EINVAL);
	/* Labels and annotations stay free, and do not bump the generation. */
	json_int_t g = generation("Pod", "p");
	ck_assert_int_eq(patch("p", "{\"metadata\":{\"labels\":{\"k\":\"v\"}}}", msg, sizeof(msg)),
			 0);
	ck_assert_int_eq(generation("Pod", "p"), g);
}
END_TEST

START_TEST(test_binding_keeps_generation)
{
	json_t *p = make_pod("b"), *got = NULL;
	struct pk_store_edit e = {
	    .kind = &pk_type_pod, .ns = "default", .name = "b", .apply = bind_n1};

	json_decref(p);
	ck_assert_int_eq(pk_store_edit_batch(st, &e, 1), 0);
	ck_assert_int_eq(e.rc, 0);
	json_decref(e.object);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "b", &got), 0);
	ck_assert_str_eq(pk_get_string(got, "spec.nodeName"), "n1");
	ck_assert_int_eq(json_integer_value(pk_get(got, "metadata.generation")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(pk_condition_get(got, "PodScheduled"),
							    "observedGeneration")),
			 1);
	json_decref(got);
}
END_TEST

START_TEST(test_typed_client_keeps_group)
{
	json_t *p =
	    json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:[{s:s,s:s}],s:{s:s}}}", "apiVersion", "v1",
		      "kind", "Pod", "metadata", "name", "g", "labels",
		      "scheduling.podkernel.dev/pod-group", "pg", "spec", "containers", "name", "c",
		      "image", "busybox", "schedulingGroup", "podGroupName", "pg");
	json_t *out = NULL;
	struct pk_errors errs = {0};

	ck_assert_int_eq(pk_store_create(st, p, NULL, &out), 0);
	/* A client that does not know the field sends the pod back without it. */
	json_object_del(json_object_get(out, "spec"), "schedulingGroup");
	json_object_set_new(json_object_get(out, "metadata"), "annotations",
			    json_pack("{s:s}", "edited", "yes"));
	json_decref(p);
	p = out;
	ck_assert_int_eq(pk_store_update_opts(st, p, PK_SUB_MAIN, NULL, NULL, &out), 0);
	ck_assert_str_eq(pk_get_string(out, "spec.schedulingGroup.podGroupName"), "pg");
	ck_assert_str_eq(pk_pod_group_name(out), "pg");
	json_decref(p);
	json_decref(out);
	/* A label naming another group than the spec is refused. */
	p = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:[{s:s,s:s}],s:{s:s}}}", "apiVersion", "v1",
		      "kind", "Pod", "metadata", "name", "h", "labels",
		      "scheduling.x-k8s.io/pod-group", "other", "spec", "containers", "name", "c",
		      "image", "busybox", "schedulingGroup", "podGroupName", "pg");
	ck_assert_int_eq(pk_store_create(st, p, &errs, NULL), -EINVAL);
	ck_assert_ptr_nonnull(
	    strstr(errs.msg[0], "metadata.labels[scheduling.x-k8s.io/pod-group]"));
	pk_errors_clear(&errs);
	json_decref(p);
	/* The coscheduling label alone names the group. */
	p = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
		      "Pod", "metadata", "name", "i", "labels", "scheduling.x-k8s.io/pod-group",
		      "pg2", "spec", "containers", "name", "c", "image", "busybox");
	ck_assert_int_eq(pk_store_create(st, p, NULL, &out), 0);
	ck_assert_str_eq(pk_pod_group_name(out), "pg2");
	json_decref(out);
	json_decref(p);
}
END_TEST

START_TEST(test_propagation)
{
	json_t *owner = NULL, *dep, *got = NULL;
	struct pk_store_write_opts orphan = {.propagation = PK_PROPAGATE_ORPHAN};
	struct pk_store_write_opts fg = {.propagation = PK_PROPAGATE_FOREGROUND};
	json_t *cm = json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
			       "Pod", "metadata", "name", "owner", "spec", "containers", "name",
			       "c", "image", "busybox");

	ck_assert_int_eq(pk_store_create(st, cm, NULL, &owner), 0);
	dep = json_pack("{s:s,s:s,s:{s:s,s:[{s:s,s:s,s:s,s:s,s:b}]},s:{s:[{s:s,s:s}]}}",
			"apiVersion", "v1", "kind", "Pod", "metadata", "name", "dep",
			"ownerReferences", "apiVersion", "v1", "kind", "Pod", "name", "owner",
			"uid", pk_get_string(owner, "metadata.uid"), "controller", 1, "spec",
			"containers", "name", "c", "image", "busybox");
	ck_assert_int_eq(pk_store_create(st, dep, NULL, NULL), 0);
	/* Orphan: the owner goes, the dependent stays without its reference. */
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "owner", &orphan, NULL, NULL), 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "owner", &got), -ENOENT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "dep", &got), 0);
	ck_assert_ptr_null(pk_get(got, "metadata.ownerReferences"));
	json_decref(got);
	/* Foreground: the owner stays, marked, until the collector lets it go. */
	json_decref(owner);
	ck_assert_int_eq(pk_store_create(st, cm, NULL, &owner), 0);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "owner", &fg, NULL, &got), 0);
	ck_assert_ptr_nonnull(pk_get(got, "metadata.deletionTimestamp"));
	ck_assert_str_eq(json_string_value(json_array_get(pk_get(got, "metadata.finalizers"), 0))
			     ?: "",
			 PK_STORE_FOREGROUND_FINALIZER);
	json_decref(got);
	json_decref(owner);
	json_decref(dep);
	json_decref(cm);
}
END_TEST

/* kube-apiserver's defaulting: a hostNetwork pod's ports get hostPort = containerPort. */
START_TEST(test_host_network_ports)
{
	json_error_t jerr;
	json_t *p = json_loads(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"hn\"},"
	    "\"spec\":{\"hostNetwork\":true,\"containers\":[{\"name\":\"c\",\"image\":\"b\","
	    "\"ports\":[{\"containerPort\":8080},{\"containerPort\":9090,\"hostPort\":9091}]}],"
	    "\"initContainers\":[{\"name\":\"i\",\"image\":\"b\","
	    "\"ports\":[{\"containerPort\":53,\"protocol\":\"UDP\"}]}]}}",
	    0, &jerr);
	json_t *q = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
			       "\"name\":\"plain\"},\"spec\":{\"containers\":[{\"name\":"
			       "\"c\",\"image\":\"b\",\"ports\":[{\"containerPort\":80}]}]}}",
			       0, &jerr);
	json_t *out = NULL, *ports;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(pk_store_create(st, p, NULL, &out), 0);
	ports = json_object_get(json_array_get(pk_get(out, "spec.containers"), 0), "ports");
	ck_assert_int_eq(json_integer_value(pk_get(json_array_get(ports, 0), "hostPort")), 8080);
	ck_assert_int_eq(json_integer_value(pk_get(json_array_get(ports, 1), "hostPort")), 9091);
	ports = json_object_get(json_array_get(pk_get(out, "spec.initContainers"), 0), "ports");
	ck_assert_int_eq(json_integer_value(pk_get(json_array_get(ports, 0), "hostPort")), 53);
	json_decref(out);
	ck_assert_int_eq(pk_store_create(st, q, NULL, &out), 0);
	ports = json_object_get(json_array_get(pk_get(out, "spec.containers"), 0), "ports");
	ck_assert_ptr_null(pk_get(json_array_get(ports, 0), "hostPort"));
	json_decref(out);
	json_decref(p);
	json_decref(q);
}
END_TEST

/* The owner index: kept by every write, and built for a file from before it. */
START_TEST(test_owner_index)
{
	json_t *owner = make_pod("owner"), *deps = NULL, *got = NULL;
	const char *uid = pk_get_string(owner, "metadata.uid");
	char path[300], err[256];
	sqlite3 *db;
	json_t *dep =
	    json_pack("{s:s,s:s,s:{s:s,s:s,s:[{s:s,s:s,s:s,s:s}]},s:{s:[{s:s,s:s}]}}", "apiVersion",
		      "v1", "kind", "Pod", "metadata", "name", "dep", "namespace", "other",
		      "ownerReferences", "apiVersion", "v1", "kind", "Pod", "name", "owner", "uid",
		      uid, "spec", "containers", "name", "c", "image", "busybox");
	json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
			       "metadata", "name", "other");

	ck_assert_int_eq(pk_store_create(st, ns, NULL, NULL), 0);
	ck_assert_int_eq(pk_store_create(st, dep, NULL, NULL), 0);
	ck_assert_int_eq(pk_store_dependents(st, uid, &deps), 0);
	ck_assert_uint_eq(json_array_size(deps), 1);
	ck_assert_str_eq(pk_get_string(json_array_get(deps, 0), "namespace"), "other");
	json_decref(deps);
	/* a file of schema 1 has no index: its migration builds it */
	pk_store_close(st);
	snprintf(path, sizeof(path), "%s/podkernel.db", dir);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(
	    sqlite3_exec(db,
			 "DROP TRIGGER owner_refs_insert; DROP TRIGGER owner_refs_update;"
			 "DROP TRIGGER owner_refs_delete; DROP TABLE owner_refs;"
			 "PRAGMA user_version=1;",
			 NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_store_dependents(st, uid, &deps), 0);
	ck_assert_uint_eq(json_array_size(deps), 1);
	json_decref(deps);
	/* the reference gone from the object is gone from the index */
	json_object_del(json_object_get(dep, "metadata"), "ownerReferences");
	ck_assert_int_eq(pk_store_update_opts(st, dep, PK_SUB_MAIN, NULL, NULL, NULL), 0);
	ck_assert_int_eq(pk_store_dependents(st, uid, &deps), 0);
	ck_assert_uint_eq(json_array_size(deps), 0);
	json_decref(deps);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "other", "dep", &got), 0);
	ck_assert_ptr_null(pk_get(got, "metadata.ownerReferences"));
	json_decref(got);
	json_decref(ns);
	json_decref(dep);
	json_decref(owner);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pod-rules");
	TCase *tc = tcase_create("pod-rules");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pod_spec_immutable);
	tcase_add_test(tc, test_binding_keeps_generation);
	tcase_add_test(tc, test_typed_client_keeps_group);
	tcase_add_test(tc, test_propagation);
	tcase_add_test(tc, test_host_network_ports);
	tcase_add_test(tc, test_owner_index);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
