/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_fieldvalidation.c — kernel/server/fieldvalidation.c: unknown fields
 * found by the protobuf messages' descriptors, with upstream's paths (the
 * storage and resource.k8s.io kinds included); every object in examples/ and
 * tests/scenarios/, and every ResourceSlice a board publishes, uses known
 * fields only (the messages cover what podkernel documents and writes); the
 * OpenAPI documents are the same tables; fieldValidation through
 * pk_server_handle(): Strict is 400, Warn a warning, Ignore nothing, a bad
 * value 400.  JobSet, a custom resource upstream, is checked against its
 * schema-only message (its pod templates too, in both of podkernel's forms),
 * and every served kind has a message.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "kernel/builder/builder.h"
#include "kernel/server/server-internal.h"
#include "topology/topology.h"

static json_t *unknown_of(const char *kind, const char *json, bool patch)
{
	json_error_t je;
	json_t *obj = json_loads(json, 0, &je), *paths = NULL;
	ck_assert_msg(obj, "%s", je.text);
	ck_assert_int_eq(pk_srv_unknown_fields(pk_type_by_kind(kind), obj, patch, &paths), 0);
	json_decref(obj);
	return paths;
}

START_TEST(test_paths)
{
	json_t *p = unknown_of(
	    "Pod",
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
	    "\"labels\":{\"any\":\"x\"},\"bogus\":1},\"spec\":{\"containerz\":[],\"containers\":"
	    "[{\"name\":\"c\",\"imagez\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
	    "\"volumes\":[{\"name\":\"v\",\"hostPath\":{\"path\":\"/\",\"typo\":1}}],"
	    "\"nodeSelector\":{\"anything\":\"goes\"}}}",
	    false);
	ck_assert_uint_eq(json_array_size(p), 4);
	ck_assert_str_eq(json_string_value(json_array_get(p, 0)), "metadata.bogus");
	ck_assert_str_eq(json_string_value(json_array_get(p, 1)), "spec.containerz");
	ck_assert_str_eq(json_string_value(json_array_get(p, 2)), "spec.containers[0].imagez");
	ck_assert_str_eq(json_string_value(json_array_get(p, 3)), "spec.volumes[0].hostPath.typo");
	json_decref(p);

	/* A merge patch: '$' directives are not fields; null deletes. */
	p = unknown_of(
	    "Pod",
	    "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"}],"
	    "\"containers\":[{\"name\":\"c\",\"$patch\":\"delete\"}],\"nodeName\":null}}",
	    true);
	ck_assert_uint_eq(json_array_size(p), 0);
	json_decref(p);

	/* The storage kinds: a PersistentVolume's source is inlined in its spec. */
	p = unknown_of("PersistentVolumeClaim",
		       "{\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":"
		       "{\"storage\":\"1Gi\"}},\"storageClasName\":\"x\"},\"status\":{\"phase\":"
		       "\"Bound\",\"capacity\":{\"storage\":\"1Gi\"},\"phasee\":1}}",
		       false);
	ck_assert_uint_eq(json_array_size(p), 2);
	ck_assert_str_eq(json_string_value(json_array_get(p, 0)), "spec.storageClasName");
	ck_assert_str_eq(json_string_value(json_array_get(p, 1)), "status.phasee");
	json_decref(p);
	p = unknown_of(
	    "PersistentVolume",
	    "{\"spec\":{\"local\":{\"path\":\"/mnt\",\"pathh\":1},\"nodeAffinity\":"
	    "{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"k\","
	    "\"operator\":\"In\",\"values\":[\"a\"]}]}]}},\"persistentVolumeSource\":{}}}",
	    false);
	ck_assert_uint_eq(json_array_size(p), 2);
	ck_assert_str_eq(json_string_value(json_array_get(p, 0)), "spec.local.pathh");
	ck_assert_str_eq(json_string_value(json_array_get(p, 1)), "spec.persistentVolumeSource");
	json_decref(p);

	/* resource.k8s.io: a claim's config inlines DeviceConfiguration, its
	 * parameters are not fields; a device's attributes are messages by name. */
	p = unknown_of(
	    "ResourceClaim",
	    "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
	    "\"deviceClassName\":\"g\",\"countt\":2}}],\"config\":[{\"requests\":[\"gpu\"],"
	    "\"opaque\":{\"driver\":\"d\",\"parameters\":{\"any\":{\"thing\":1}}}}]}},"
	    "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
	    "\"driver\":\"d\",\"pool\":\"p\",\"device\":\"x\",\"devcie\":\"y\"}]},"
	    "\"nodeSelector\":{\"nodeSelectorTerms\":[]}},\"reservedFor\":[{\"resource\":"
	    "\"pods\",\"name\":\"p\",\"uid\":\"u\"}]}}",
	    false);
	ck_assert_uint_eq(json_array_size(p), 2);
	ck_assert_str_eq(json_string_value(json_array_get(p, 0)),
			 "spec.devices.requests[0].exactly.countt");
	ck_assert_str_eq(json_string_value(json_array_get(p, 1)),
			 "status.allocation.devices.results[0].devcie");
	json_decref(p);
	p = unknown_of("ResourceSlice",
		       "{\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"n1\",\"generation\":0,"
		       "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\",\"attributes\":"
		       "{\"index\":{\"int\":0},\"type\":{\"strng\":\"gpu\"}},\"capacity\":"
		       "{\"memory\":{\"value\":\"80Gi\"}}}]}}",
		       false);
	ck_assert_uint_eq(json_array_size(p), 1);
	ck_assert_str_eq(json_string_value(json_array_get(p, 0)),
			 "spec.devices[0].attributes.type.strng");
	json_decref(p);
	p = unknown_of("DeviceClass",
		       "{\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"true\"}}],"
		       "\"config\":[{\"opaque\":{\"driver\":\"d\"}}],\"extendedResourceName\":"
		       "\"example.com/gpu\"}}",
		       false);
	ck_assert_uint_eq(json_array_size(p), 0);
	json_decref(p);
	p = unknown_of("StorageClass",
		       "{\"provisioner\":\"p\",\"volumeBindingMode\":\"WaitForFirstConsumer\","
		       "\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":\"k\","
		       "\"valuez\":[\"a\"]}]}]}",
		       false);
	ck_assert_uint_eq(json_array_size(p), 1);
	ck_assert_str_eq(json_string_value(json_array_get(p, 0)),
			 "allowedTopologies[0].matchLabelExpressions[0].valuez");
	json_decref(p);

	/* podkernel's alias of a topology key is known. */
	p = unknown_of("PodGroup",
		       "{\"spec\":{\"schedulingConstraints\":{\"topology\":[{\"level\":"
		       "\"rack\"}]}}}",
		       false);
	ck_assert_uint_eq(json_array_size(p), 0);
	json_decref(p);
}
END_TEST

/* JobSet: upstream's v1alpha2 fields, podkernel's spec.scheduling, the pod
 * template of a JobTemplateSpec and of the short form. */
START_TEST(test_jobset_paths)
{
	json_t *p = unknown_of(
	    "JobSet",
	    "{\"spec\":{\"whatever\":1,\"replicatedJobs\":[{\"name\":\"w\",\"replicass\":2,"
	    "\"groupName\":\"g\",\"dependsOn\":[{\"name\":\"x\",\"status\":\"Ready\"}],"
	    "\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"parallelism\":2,"
	    "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"imagez\":\"i\"}]}}}}},"
	    "{\"name\":\"short\",\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
	    "\"image\":\"i\",\"imagez\":\"i\"}]}}}],"
	    "\"network\":{\"enableDNSHostnames\":true,\"subdomain\":\"s\"},\"successPolicy\":"
	    "{\"operator\":\"All\",\"targetReplicatedJobs\":[\"w\"]},\"failurePolicy\":"
	    "{\"maxRestarts\":1,\"rules\":[{\"name\":\"r\",\"action\":\"FailJobSet\","
	    "\"onJobFailureReasons\":[\"x\"],\"actoin\":1}]},\"startupPolicy\":"
	    "{\"startupPolicyOrder\":\"InOrder\"},\"suspend\":false,\"coordinator\":"
	    "{\"replicatedJob\":\"w\",\"jobIndex\":0,\"podIndex\":0},\"managedBy\":\"m/x\","
	    "\"ttlSecondsAfterFinished\":5,\"scheduling\":{\"schedulingPolicy\":{\"basic\":{}},"
	    "\"replicatedJobs\":[{\"targetReplicatedJobs\":[\"w\"],\"schedulingPolicy\":{\"gang\":"
	    "{\"minGroupCount\":2}},\"schedulingConstraints\":{\"topology\":[{\"level\":\"z\"}]},"
	    "\"job\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":2}},\"disruptionMode\":"
	    "{\"all\":{}},\"resourceClaims\":[{\"name\":\"c\",\"resourceClaimTemplateName\":"
	    "\"t\"}],\"jobb\":1}}]}},\"status\":{\"restarts\":1,\"restartsCountTowardsMax\":1,"
	    "\"terminalState\":\"Completed\",\"conditions\":[{\"type\":\"Completed\",\"status\":"
	    "\"True\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}],\"replicatedJobsStatus\":"
	    "[{\"name\":\"w\",\"ready\":1,\"succeeded\":0,\"failed\":0,\"active\":1,"
	    "\"suspended\":0,\"readyy\":1}]}}",
	    false);
	static const char *const want[] = {
	    "spec.whatever",
	    "spec.replicatedJobs[0].replicass",
	    "spec.replicatedJobs[0].template.spec.template.spec.containers[0].imagez",
	    "spec.replicatedJobs[1].template.spec.containers[0].imagez",
	    "spec.failurePolicy.rules[0].actoin",
	    "spec.scheduling.replicatedJobs[0].job.jobb",
	    "status.replicatedJobsStatus[0].readyy",
	};
	ck_assert_uint_eq(json_array_size(p), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_str_eq(json_string_value(json_array_get(p, i)), want[i]);
	json_decref(p);

	/* A JobSpec field in the short form is not a pod template's. */
	p = unknown_of("JobSet",
		       "{\"spec\":{\"replicatedJobs\":[{\"name\":\"w\",\"template\":{\"spec\":"
		       "{\"parallelism\":2,\"containers\":[]}}}]}}",
		       false);
	ck_assert_uint_eq(json_array_size(p), 1);
	ck_assert_str_eq(json_string_value(json_array_get(p, 0)),
			 "spec.replicatedJobs[0].template.spec.parallelism");
	json_decref(p);
}
END_TEST

/*
 * Every served kind has a message, in its own version, found by its row:
 * nothing passes Strict unchecked.
 */
START_TEST(test_every_kind_has_schema)
{
	const struct pk_type *t;

	for (size_t i = 0; (t = pk_type_served(i)); i++) {
		const struct pk_pb_kind *k = pk_srv_pb_kind_of(t);

		ck_assert_msg(k, "%s/%s %s has no message", t->group, t->version, t->kind);
		ck_assert_str_eq(k->desc->short_name, t->kind);
		ck_assert_msg(strstr(k->desc->package_name, t->version), "%s %s: package %s",
			      t->kind, t->version, k->desc->package_name);
	}
	ck_assert(pk_srv_pb_kind("jobset.x-k8s.io", "JobSet")->schema_only);
	ck_assert(!pk_srv_pb_kind("batch", "Job")->schema_only);
}
END_TEST

/*
 * Scenarios that write a field the API does not have, on purpose: they show
 * that the scheduler refuses it by name (a CompositePodGroup's
 * spec.resourceClaims: claims are shared by PodGroups only).
 */
static bool unknown_on_purpose(const char *path)
{
	static const char *const files[] = {"/dra_composite_claims_refused.yaml"};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (n >= strlen(files[i]) && strcmp(path + n - strlen(files[i]), files[i]) == 0)
			return true;
	return false;
}

/* Every object podkernel's examples and scenarios write uses known fields. */
START_TEST(test_examples_known)
{
	static const char *const patterns[] = {PODKERNEL_SRCDIR "/examples/*/*.yaml",
					       PODKERNEL_SRCDIR "/tests/scenarios/*.yaml"};
	size_t files = 0;
	for (size_t g = 0; g < sizeof(patterns) / sizeof(patterns[0]); g++) {
		glob_t gl;
		ck_assert_int_eq(glob(patterns[g], 0, NULL, &gl), 0);
		for (size_t i = 0; i < gl.gl_pathc; i++, files++) {
			json_t *objs = NULL, *o;
			char err[512];
			size_t j;
			if (unknown_on_purpose(gl.gl_pathv[i]) ||
			    pk_read_file(gl.gl_pathv[i], &objs, err, sizeof(err)) < 0)
				continue; /* scenario files that are not object lists */
			json_array_foreach(objs, j, o)
			{
				const struct pk_type *t =
				    pk_type_by_kind(json_string_value(json_object_get(o, "kind")));
				json_t *p = NULL;
				if (!t)
					continue;
				ck_assert_int_eq(pk_srv_unknown_fields(t, o, false, &p), 0);
				ck_assert_msg(json_array_size(p) == 0, "%s: %s: unknown field %s",
					      gl.gl_pathv[i], t->kind,
					      json_string_value(json_array_get(p, 0)));
				json_decref(p);
			}
			json_decref(objs);
		}
		globfree(&gl);
	}
	ck_assert_uint_gt(files, 10);
}
END_TEST

/* The ResourceSlices --simulate-board stores use known fields only. */
START_TEST(test_board_slices_known)
{
	static const char *const boards[] = {"gpu-cluster.yaml", "gb200-nvl72.yaml"};
	for (size_t i = 0; i < sizeof(boards) / sizeof(boards[0]); i++) {
		struct topo_board *b = topo_board_new();
		char path[512], err[TOPO_ERR_MAX] = "";
		json_t *items = NULL, *o;
		size_t j;
		snprintf(path, sizeof(path), PODKERNEL_SRCDIR "/boards/%s", boards[i]);
		ck_assert_msg(topo_board_load_file(b, path, err, sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(pk_board_slices_json(b, 0, &items), 0);
		ck_assert_uint_gt(json_array_size(items), 0);
		json_array_foreach(items, j, o)
		{
			json_t *p = NULL;
			ck_assert_int_eq(
			    pk_srv_unknown_fields(pk_type_by_kind("ResourceSlice"), o, false, &p),
			    0);
			ck_assert_msg(json_array_size(p) == 0, "%s: unknown field %s", boards[i],
				      json_string_value(json_array_get(p, 0)));
			json_decref(p);
		}
		json_decref(items);
		topo_board_free(b);
	}
}
END_TEST

/* The OpenAPI schemas are the validation tables: a field validation knows is
 * documented, one it does not know is not, keyed lists say their keys. */
START_TEST(test_openapi_same_tables)
{
	json_t *doc = pk_srv_openapi_gv("", "v1");
	json_t *schemas = pk_get(doc, "components.schemas");
	json_t *pod = json_object_get(schemas, "io.k8s.api.core.v1.Pod");
	ck_assert_ptr_nonnull(pod);
	ck_assert_str_eq(pk_get_string(pod, "x-kubernetes-group-version-kind[0].kind"), "Pod");
	json_t *spec = json_object_get(schemas, "io.k8s.api.core.v1.PodSpec");
	json_t *containers = pk_get(spec, "properties.containers");
	ck_assert_str_eq(pk_get_string(containers, "x-kubernetes-list-type"), "map");
	ck_assert_str_eq(pk_get_string(containers, "x-kubernetes-list-map-keys[0]"), "name");
	ck_assert_str_eq(pk_get_string(containers, "x-kubernetes-patch-merge-key"), "name");
	ck_assert_ptr_nonnull(pk_get(spec, "properties.schedulingGroup"));
	ck_assert_ptr_null(pk_get(spec, "properties.containerz"));
	/* Embedded structs are flattened, as in JSON. */
	json_t *vol = json_object_get(schemas, "io.k8s.api.core.v1.Volume");
	ck_assert_ptr_nonnull(pk_get(vol, "properties.hostPath"));
	ck_assert_ptr_null(pk_get(vol, "properties.volumeSource"));
	/* Quantities are int-or-string, as upstream publishes them. */
	json_t *req = pk_get(json_object_get(schemas, "io.k8s.api.core.v1.ResourceRequirements"),
			     "properties.requests.additionalProperties");
	ck_assert(json_is_true(json_object_get(req, "x-kubernetes-int-or-string")));
	/* Every property of a PodSpec is a field validation accepts. */
	const char *key;
	json_t *v;
	const struct pk_pb_kind *k = pk_srv_pb_kind("", "Pod");
	const ProtobufCFieldDescriptor *sf = pk_srv_pb_field(k->desc, "spec");
	json_object_foreach(json_object_get(spec, "properties"), key, v)
	    ck_assert_msg(pk_srv_pb_field(sf->descriptor, key), "%s", key);
	/* The storage kinds: a PersistentVolume's source flattened into its spec. */
	json_t *pvc = json_object_get(schemas, "io.k8s.api.core.v1.PersistentVolumeClaim");
	ck_assert_str_eq(pk_get_string(pvc, "x-kubernetes-group-version-kind[0].kind"),
			 "PersistentVolumeClaim");
	ck_assert_ptr_nonnull(pk_get(json_object_get(schemas, "io.k8s.api.core.v1."
							      "PersistentVolumeClaimSpec"),
				     "properties.storageClassName"));
	json_t *pvs = json_object_get(schemas, "io.k8s.api.core.v1.PersistentVolumeSpec");
	ck_assert_ptr_nonnull(pk_get(pvs, "properties.local"));
	ck_assert_ptr_nonnull(pk_get(pvs, "properties.csi"));
	ck_assert_ptr_null(pk_get(pvs, "properties.persistentVolumeSource"));
	json_decref(doc);

	doc = pk_srv_openapi_gv("storage.k8s.io", "v1");
	schemas = pk_get(doc, "components.schemas");
	ck_assert_str_eq(
	    pk_get_string(json_object_get(schemas, "io.k8s.api.storage.v1.StorageClass"),
			  "x-kubernetes-group-version-kind[0].group"),
	    "storage.k8s.io");
	ck_assert_ptr_nonnull(
	    pk_get(json_object_get(schemas, "io.k8s.api.storage.v1.CSINodeDriver"),
		   "properties.allocatable"));
	json_decref(doc);

	/* resource.k8s.io: every kind has its schema; configs are flattened. */
	doc = pk_srv_openapi_gv("resource.k8s.io", "v1");
	schemas = pk_get(doc, "components.schemas");
	static const char *const dra[] = {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate",
					  "ResourceSlice"};
	for (size_t i = 0; i < sizeof(dra) / sizeof(dra[0]); i++) {
		char name[128];
		snprintf(name, sizeof(name), "io.k8s.api.resource.v1.%s", dra[i]);
		ck_assert_str_eq(pk_get_string(json_object_get(schemas, name),
					       "x-kubernetes-group-version-kind[0].kind"),
				 dra[i]);
	}
	json_t *dcc = json_object_get(schemas, "io.k8s.api.resource.v1.DeviceClaimConfiguration");
	ck_assert_ptr_nonnull(pk_get(dcc, "properties.opaque"));
	ck_assert_ptr_null(pk_get(dcc, "properties.deviceConfiguration"));
	ck_assert_ptr_nonnull(pk_get(json_object_get(schemas, "io.k8s.api.resource.v1.DeviceClaim"),
				     "properties.requests"));
	ck_assert_ptr_nonnull(pk_get(json_object_get(schemas, "io.k8s.api.resource.v1."
							      "ResourceClaimStatus"),
				     "properties.reservedFor"));
	json_decref(doc);

	/* JobSet: named as kube-apiserver names a CRD's schema; its template is
	 * batch's JobTemplateSpec. */
	doc = pk_srv_openapi_gv("jobset.x-k8s.io", "v1alpha2");
	schemas = pk_get(doc, "components.schemas");
	json_t *js = json_object_get(schemas, "io.x-k8s.jobset.v1alpha2.JobSet");
	ck_assert_str_eq(pk_get_string(js, "x-kubernetes-group-version-kind[0].group"),
			 "jobset.x-k8s.io");
	ck_assert_str_eq(pk_get_string(js, "x-kubernetes-group-version-kind[0].version"),
			 "v1alpha2");
	ck_assert_ptr_nonnull(pk_get(js, "properties.apiVersion"));
	json_t *rj = json_object_get(schemas, "io.x-k8s.jobset.v1alpha2.ReplicatedJob");
	ck_assert_str_eq(pk_get_string(rj, "properties.template.allOf[0].$ref"),
			 "#/components/schemas/io.k8s.api.batch.v1.JobTemplateSpec");
	ck_assert_ptr_nonnull(pk_get(rj, "properties.replicas"));
	ck_assert_ptr_null(pk_get(rj, "properties.replicass"));
	ck_assert_ptr_nonnull(
	    pk_get(json_object_get(schemas, "io.x-k8s.jobset.v1alpha2.FailurePolicyRule"),
		   "properties.onJobFailureReasons"));
	ck_assert_ptr_nonnull(json_object_get(schemas, "io.k8s.api.core.v1.PodSpec"));
	json_t *paths = json_object_get(doc, "paths"), *op;
	ck_assert_uint_eq(json_object_size(paths), 1);
	json_object_foreach(paths, key, op)
	    ck_assert_str_eq(pk_get_string(op, "patch.requestBody.content.application/json."
					       "schema.$ref"),
			     "#/components/schemas/io.x-k8s.jobset.v1alpha2.JobSet");
	json_decref(doc);
}
END_TEST

/* ---- through the router ------------------------------------------------------- */
static struct pk_store *store;
static struct pk_server *srv;
static char dir[64];

static void setup(void)
{
	char err[256];
	snprintf(dir, sizeof(dir), "/tmp/pk-fv-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* as podkerneld opens it: Jobs and JobSets admitted by the builder */
	struct pk_store_open_opts so = {.admission = wb_admission, .nadmission = WB_ADMISSION_N};

	ck_assert_int_eq(pk_store_open_opts(dir, &so, &store, err, sizeof(err)), 0);
	struct pk_server_config cfg = {0};
	ck_assert_int_eq(pk_server_new(store, &cfg, &srv, err, sizeof(err)), 0);
}

static void teardown(void)
{
	char cmd[128];
	pk_server_free(srv);
	pk_store_close(store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int post_to(const char *path, const char *query, const char *body, struct pk_response *resp)
{
	struct pk_query_arg args[1] = {{"fieldValidation", query}};
	struct pk_request req = {.method = "POST",
				 .path = path,
				 .content_type = "application/json",
				 .body = body,
				 .body_len = strlen(body),
				 .args = query ? args : NULL,
				 .nargs = query ? 1 : 0};
	memset(resp, 0, sizeof(*resp));
	ck_assert_int_eq(pk_server_handle(srv, &req, resp), 0);
	return resp->status;
}

static int post(const char *query, const char *body, struct pk_response *resp)
{
	return post_to("/api/v1/namespaces/default/pods", query, body, resp);
}

START_TEST(test_modes)
{
	static const char body[] =
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
	    "\"spec\":{\"containerz\":[],\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";
	char b[512];
	struct pk_response resp;

	snprintf(b, sizeof(b), body, "strict");
	ck_assert_int_eq(post("Strict", b, &resp), 400);
	ck_assert_msg(strstr(resp.body,
			     "Pod in version \\\"v1\\\" cannot be handled as a Pod: "
			     "strict decoding error: unknown field \\\"spec.containerz\\\""),
		      "%s", resp.body);
	pk_response_clear(&resp);

	snprintf(b, sizeof(b), body, "warn");
	ck_assert_int_eq(post(NULL, b, &resp), 201); /* Warn is the default */
	ck_assert_str_eq(resp.warnings, "unknown field \"spec.containerz\"\n");
	pk_response_clear(&resp);

	snprintf(b, sizeof(b), body, "ignore");
	ck_assert_int_eq(post("Ignore", b, &resp), 201);
	ck_assert_ptr_null(resp.warnings);
	pk_response_clear(&resp);

	/* Duplicate keys: Strict refuses, Warn keeps the last value and says so. */
	static const char dup[] =
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
	    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"a\",\"image\":\"b\"}]}}";
	snprintf(b, sizeof(b), dup, "dup-strict");
	ck_assert_int_eq(post("Strict", b, &resp), 400);
	ck_assert_msg(strstr(resp.body, "strict decoding error: duplicate field "
					"\\\"spec.containers[0].image\\\""),
		      "%s", resp.body);
	pk_response_clear(&resp);
	snprintf(b, sizeof(b), dup, "dup-warn");
	ck_assert_int_eq(post("Warn", b, &resp), 201);
	ck_assert_str_eq(resp.warnings, "duplicate field \"spec.containers[0].image\"\n");
	ck_assert_msg(strstr(resp.body, "\"image\":\"b\""), "%s", resp.body);
	pk_response_clear(&resp);

	ck_assert_int_eq(post("Sometimes", b, &resp), 400);
	ck_assert_msg(strstr(resp.body, "fieldValidation: Unsupported value"), "%s", resp.body);
	pk_response_clear(&resp);
}
END_TEST

/* The storage and resource.k8s.io kinds are checked; JobSet says it is not. */
START_TEST(test_modes_other_kinds)
{
	struct pk_response resp;
	ck_assert_int_eq(
	    post_to("/api/v1/namespaces/default/persistentvolumeclaims", "Strict",
		    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":"
		    "{\"name\":\"data\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
		    "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},\"storageClasName\":"
		    "\"local\"}}",
		    &resp),
	    400);
	ck_assert_msg(strstr(resp.body,
			     "PersistentVolumeClaim in version \\\"v1\\\" cannot be "
			     "handled as a PersistentVolumeClaim: strict decoding error: "
			     "unknown field \\\"spec.storageClasName\\\""),
		      "%s", resp.body);
	ck_assert_ptr_null(resp.warnings);
	pk_response_clear(&resp);

	static const char claim[] =
	    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":"
	    "{\"name\":\"%s\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\","
	    "\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"%s\":1}}]}}}";
	char b[512];
	snprintf(b, sizeof(b), claim, "typo", "countt");
	ck_assert_int_eq(post_to("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
				 "Strict", b, &resp),
			 400);
	ck_assert_msg(strstr(resp.body, "strict decoding error: unknown field "
					"\\\"spec.devices.requests[0].exactly.countt\\\""),
		      "%s", resp.body);
	pk_response_clear(&resp);
	snprintf(b, sizeof(b), claim, "good", "count");
	ck_assert_int_eq(post_to("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
				 "Strict", b, &resp),
			 201);
	ck_assert_ptr_null(resp.warnings); /* checked, and nothing to say */
	pk_response_clear(&resp);

	/* JobSet, a custom resource upstream, is checked against its schema. */
	static const char js[] =
	    "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
	    "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"replicatedJobs\":[{\"name\":"
	    "\"w\",\"%s\":1,\"template\":{\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"c\",\"%s\":\"i\"}]}}}}}]}}";
	snprintf(b, sizeof(b), js, "typo", "replicass", "imagez");
	ck_assert_int_eq(post_to("/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets",
				 "Strict", b, &resp),
			 400);
	ck_assert_msg(strstr(resp.body, "JobSet in version \\\"v1alpha2\\\" cannot be handled as a "
					"JobSet: strict decoding error: unknown field "
					"\\\"spec.replicatedJobs[0].replicass\\\", unknown field "
					"\\\"spec.replicatedJobs[0].template.spec.template.spec."
					"containers[0].imagez\\\""),
		      "%s", resp.body);
	pk_response_clear(&resp);
	snprintf(b, sizeof(b), js, "good", "replicas", "image");
	ck_assert_int_eq(post_to("/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets",
				 "Strict", b, &resp),
			 201);
	ck_assert_ptr_null(resp.warnings); /* checked, and nothing to say */
	pk_response_clear(&resp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fieldvalidation");
	TCase *tc = tcase_create("fields");
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_jobset_paths);
	tcase_add_test(tc, test_every_kind_has_schema);
	tcase_add_test(tc, test_examples_known);
	tcase_add_test(tc, test_board_slices_known);
	tcase_add_test(tc, test_openapi_same_tables);
	suite_add_tcase(s, tc);
	TCase *tr = tcase_create("router");
	tcase_add_checked_fixture(tr, setup, teardown);
	tcase_add_test(tr, test_modes);
	tcase_add_test(tr, test_modes_other_kinds);
	suite_add_tcase(s, tr);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
