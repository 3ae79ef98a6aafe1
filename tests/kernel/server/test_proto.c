/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_proto.c — kernel/server/proto.c: Kubernetes protobuf bodies, packed
 * here with libprotobuf-c from the same messages, read back as JSON trees
 * (apimachinery types, embedded structs, Go's empty strings), and refused
 * when malformed, nested too deeply, or carrying a field number the messages
 * do not know.  The storage and resource.k8s.io kinds (a PersistentVolumeClaim
 * with its status, a PersistentVolume's inlined source, a ResourceClaim with
 * its allocation, a ResourceSlice's typed attributes) come back as exactly the
 * JSON objects they encode.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"

#undef linux
#include "core.pb-c.h"
#include "meta.pb-c.h"
#include "resource_v1.pb-c.h"
#include "runtime.pb-c.h"

/* "k8s\0" + Unknown{typeMeta{av, kind}, raw = packed m}; caller frees. */
static char *envelope(const char *av, const char *kind, const ProtobufCMessage *m, size_t *ret_len)
{
	K8s__Io__Apimachinery__Pkg__Runtime__TypeMeta tm =
	    K8S__IO__APIMACHINERY__PKG__RUNTIME__TYPE_META__INIT;
	K8s__Io__Apimachinery__Pkg__Runtime__Unknown u =
	    K8S__IO__APIMACHINERY__PKG__RUNTIME__UNKNOWN__INIT;
	tm.apiversion = (char *)av;
	tm.kind = (char *)kind;
	u.typemeta = &tm;
	u.has_raw = 1;
	u.raw.len = protobuf_c_message_get_packed_size(m);
	u.raw.data = malloc(u.raw.len + 1);
	protobuf_c_message_pack(m, u.raw.data);
	size_t n = protobuf_c_message_get_packed_size(&u.base);
	char *buf = malloc(n + 4);
	memcpy(buf, "k8s", 4);
	protobuf_c_message_pack(&u.base, (uint8_t *)buf + 4);
	free(u.raw.data);
	*ret_len = n + 4;
	return buf;
}

START_TEST(test_pod)
{
	K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__ObjectMeta meta =
	    K8S__IO__APIMACHINERY__PKG__APIS__META__V1__OBJECT_META__INIT;
	K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__Time created =
	    K8S__IO__APIMACHINERY__PKG__APIS__META__V1__TIME__INIT;
	K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__ObjectMeta__LabelsEntry
	    label = K8S__IO__APIMACHINERY__PKG__APIS__META__V1__OBJECT_META__LABELS_ENTRY__INIT,
	    *labels[] = {&label};
	meta.name = "p1";
	meta.namespace_ = "";		   /* Go writes every string: "" is absent */
	meta.creationtimestamp = &created; /* zero time: absent */
	label.key = "app";
	label.value = "web";
	meta.n_labels = 1;
	meta.labels = labels;

	K8s__Io__Apimachinery__Pkg__Api__Resource__Quantity cpu =
	    K8S__IO__APIMACHINERY__PKG__API__RESOURCE__QUANTITY__INIT;
	cpu.string = "500m";
	K8s__Io__Api__Core__V1__ResourceRequirements__RequestsEntry
	    req = K8S__IO__API__CORE__V1__RESOURCE_REQUIREMENTS__REQUESTS_ENTRY__INIT,
	    *reqs[] = {&req};
	req.key = "cpu";
	req.value = &cpu;
	K8s__Io__Api__Core__V1__ResourceRequirements res =
	    K8S__IO__API__CORE__V1__RESOURCE_REQUIREMENTS__INIT;
	res.n_requests = 1;
	res.requests = reqs;
	K8s__Io__Api__Core__V1__Container c = K8S__IO__API__CORE__V1__CONTAINER__INIT, *cs[] = {&c};
	c.name = "c";
	c.image = "busybox";
	c.resources = &res;
	c.has_stdin = 1; /* a non-pointer bool: written as false, kept */

	K8s__Io__Api__Core__V1__HostPathVolumeSource hp =
	    K8S__IO__API__CORE__V1__HOST_PATH_VOLUME_SOURCE__INIT;
	hp.path = "/";
	K8s__Io__Api__Core__V1__VolumeSource vs = K8S__IO__API__CORE__V1__VOLUME_SOURCE__INIT;
	vs.hostpath = &hp;
	K8s__Io__Api__Core__V1__Volume vol = K8S__IO__API__CORE__V1__VOLUME__INIT, *vols[] = {&vol};
	vol.name = "root";
	vol.volumesource = &vs;

	K8s__Io__Api__Core__V1__PodSpec spec = K8S__IO__API__CORE__V1__POD_SPEC__INIT;
	spec.n_containers = 1;
	spec.containers = cs;
	spec.n_volumes = 1;
	spec.volumes = vols;
	spec.has_terminationgraceperiodseconds = 1; /* a pointer's zero: kept */
	K8s__Io__Api__Core__V1__Pod pod = K8S__IO__API__CORE__V1__POD__INIT;
	pod.metadata = &meta;
	pod.spec = &spec;

	size_t n;
	char *buf = envelope("v1", "Pod", &pod.base, &n), err[256] = "";
	json_t *obj = NULL;
	ck_assert_int_eq(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)), 0);
	ck_assert_str_eq(pk_get_string(obj, "kind"), "Pod");
	ck_assert_str_eq(pk_get_string(obj, "apiVersion"), "v1");
	ck_assert_str_eq(pk_get_string(obj, "metadata.name"), "p1");
	ck_assert_str_eq(pk_get_string(obj, "metadata.labels.app"), "web");
	ck_assert_ptr_null(pk_get(obj, "metadata.namespace"));
	ck_assert_ptr_null(pk_get(obj, "metadata.creationTimestamp"));
	ck_assert_str_eq(pk_get_string(obj, "spec.containers[0].resources.requests.cpu"), "500m");
	ck_assert(json_is_false(pk_get(obj, "spec.containers[0].stdin")));
	ck_assert_str_eq(pk_get_string(obj, "spec.volumes[0].hostPath.path"), "/");
	ck_assert_ptr_null(pk_get(obj, "spec.volumes[0].volumeSource"));
	ck_assert_int_eq(json_integer_value(pk_get(obj, "spec.terminationGracePeriodSeconds")), 0);
	ck_assert_ptr_nonnull(pk_get(obj, "spec.terminationGracePeriodSeconds"));
	json_decref(obj);
	free(buf);

	/* Time and IntOrString have their JSON forms. */
	created.has_seconds = 1;
	created.seconds = 1700000000;
	buf = envelope("v1", "Pod", &pod.base, &n);
	ck_assert_int_eq(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)), 0);
	ck_assert_str_eq(pk_get_string(obj, "metadata.creationTimestamp"), "2023-11-14T22:13:20Z");
	json_decref(obj);
	free(buf);
}
END_TEST

/* m as a body of kind av/kind, decoded, equal to the JSON text want. */
static void expect_decoded(const char *av, const char *kind, const ProtobufCMessage *m,
			   const char *want)
{
	size_t n;
	char *buf = envelope(av, kind, m, &n), err[256] = "";
	json_t *obj = NULL, *exp;
	json_error_t je;
	ck_assert_msg(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)) == 0, "%s", err);
	exp = json_loads(want, 0, &je);
	ck_assert_msg(exp, "%s", je.text);
	char *got = json_dumps(obj, JSON_SORT_KEYS | JSON_COMPACT);
	ck_assert_msg(json_equal(obj, exp), "%s %s:\n got  %s\n want %s", av, kind, got, want);
	free(got);
	json_decref(exp);
	json_decref(obj);
	free(buf);
}

#define META_INIT K8S__IO__APIMACHINERY__PKG__APIS__META__V1__OBJECT_META__INIT
#define QTY_INIT K8S__IO__APIMACHINERY__PKG__API__RESOURCE__QUANTITY__INIT
typedef K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__ObjectMeta Meta;
typedef K8s__Io__Apimachinery__Pkg__Api__Resource__Quantity Qty;

START_TEST(test_storage_kinds)
{
	Meta meta = META_INIT;
	meta.name = "data";
	meta.namespace_ = "default";
	Qty ten = QTY_INIT;
	ten.string = "10Gi";
	char *rwo[] = {"ReadWriteOnce"};

	K8s__Io__Api__Core__V1__VolumeResourceRequirements__RequestsEntry
	    req = K8S__IO__API__CORE__V1__VOLUME_RESOURCE_REQUIREMENTS__REQUESTS_ENTRY__INIT,
	    *reqs[] = {&req};
	req.key = "storage";
	req.value = &ten;
	K8s__Io__Api__Core__V1__VolumeResourceRequirements res =
	    K8S__IO__API__CORE__V1__VOLUME_RESOURCE_REQUIREMENTS__INIT;
	res.n_requests = 1;
	res.requests = reqs;
	K8s__Io__Api__Core__V1__PersistentVolumeClaimSpec spec =
	    K8S__IO__API__CORE__V1__PERSISTENT_VOLUME_CLAIM_SPEC__INIT;
	spec.n_accessmodes = 1;
	spec.accessmodes = rwo;
	spec.resources = &res;
	spec.storageclassname = "local";
	spec.volumename = "pv-h1";
	spec.volumeattributesclassname = ""; /* a pointer string's "": kept */
	spec.volumemode = "Filesystem";
	K8s__Io__Api__Core__V1__PersistentVolumeClaimStatus__CapacityEntry
	    cap = K8S__IO__API__CORE__V1__PERSISTENT_VOLUME_CLAIM_STATUS__CAPACITY_ENTRY__INIT,
	    *caps[] = {&cap};
	cap.key = "storage";
	cap.value = &ten;
	K8s__Io__Api__Core__V1__PersistentVolumeClaimStatus st =
	    K8S__IO__API__CORE__V1__PERSISTENT_VOLUME_CLAIM_STATUS__INIT;
	st.phase = "Bound";
	st.n_accessmodes = 1;
	st.accessmodes = rwo;
	st.n_capacity = 1;
	st.capacity = caps;
	K8s__Io__Api__Core__V1__PersistentVolumeClaim pvc =
	    K8S__IO__API__CORE__V1__PERSISTENT_VOLUME_CLAIM__INIT;
	pvc.metadata = &meta;
	pvc.spec = &spec;
	pvc.status = &st;
	expect_decoded(
	    "v1", "PersistentVolumeClaim", &pvc.base,
	    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	    "\"metadata\":{\"name\":\"data\",\"namespace\":\"default\"},"
	    "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":"
	    "{\"storage\":\"10Gi\"}},\"storageClassName\":\"local\",\"volumeName\":"
	    "\"pv-h1\",\"volumeMode\":\"Filesystem\",\"volumeAttributesClassName\":\"\"},"
	    "\"status\":{\"phase\":\"Bound\",\"accessModes\":[\"ReadWriteOnce\"],"
	    "\"capacity\":{\"storage\":\"10Gi\"}}}");

	/* A PersistentVolume: its source is inlined in the spec, as in JSON. */
	K8s__Io__Api__Core__V1__LocalVolumeSource local =
	    K8S__IO__API__CORE__V1__LOCAL_VOLUME_SOURCE__INIT;
	local.path = "/mnt/disk";
	K8s__Io__Api__Core__V1__PersistentVolumeSource src =
	    K8S__IO__API__CORE__V1__PERSISTENT_VOLUME_SOURCE__INIT;
	src.local = &local;
	K8s__Io__Api__Core__V1__ObjectReference ref =
	    K8S__IO__API__CORE__V1__OBJECT_REFERENCE__INIT;
	ref.namespace_ = "default";
	ref.name = "data";
	K8s__Io__Api__Core__V1__PersistentVolumeSpec pvs =
	    K8S__IO__API__CORE__V1__PERSISTENT_VOLUME_SPEC__INIT;
	K8s__Io__Api__Core__V1__PersistentVolumeSpec__CapacityEntry
	    pvcap = K8S__IO__API__CORE__V1__PERSISTENT_VOLUME_SPEC__CAPACITY_ENTRY__INIT,
	    *pvcaps[] = {&pvcap};
	pvcap.key = "storage";
	pvcap.value = &ten;
	pvs.n_capacity = 1;
	pvs.capacity = pvcaps;
	pvs.persistentvolumesource = &src;
	pvs.n_accessmodes = 1;
	pvs.accessmodes = rwo;
	pvs.claimref = &ref;
	pvs.persistentvolumereclaimpolicy = "Retain";
	pvs.storageclassname = ""; /* a non-pointer string Go writes unset: absent */
	K8s__Io__Api__Core__V1__PersistentVolume pv =
	    K8S__IO__API__CORE__V1__PERSISTENT_VOLUME__INIT;
	Meta pvmeta = META_INIT;
	pvmeta.name = "pv-h1";
	pv.metadata = &pvmeta;
	pv.spec = &pvs;
	expect_decoded(
	    "v1", "PersistentVolume", &pv.base,
	    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":"
	    "\"pv-h1\"},\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},\"local\":{\"path\":"
	    "\"/mnt/disk\"},\"accessModes\":[\"ReadWriteOnce\"],\"claimRef\":{\"namespace\":"
	    "\"default\",\"name\":\"data\"},\"persistentVolumeReclaimPolicy\":\"Retain\"}}");
}
END_TEST

START_TEST(test_resource_claim)
{
	Meta meta = META_INIT;
	meta.name = "c1";
	K8s__Io__Api__Resource__V1__ExactDeviceRequest ex =
	    K8S__IO__API__RESOURCE__V1__EXACT_DEVICE_REQUEST__INIT;
	ex.deviceclassname = "gpu.example.com";
	ex.allocationmode = "ExactCount";
	ex.has_count = 1;
	ex.count = 2;
	K8s__Io__Api__Resource__V1__DeviceRequest
	    dr = K8S__IO__API__RESOURCE__V1__DEVICE_REQUEST__INIT,
	    *drs[] = {&dr};
	dr.name = "gpu";
	dr.exactly = &ex;
	/* A claim's config embeds DeviceConfiguration: "opaque" is the config's own. */
	K8s__Io__Apimachinery__Pkg__Runtime__RawExtension params =
	    K8S__IO__APIMACHINERY__PKG__RUNTIME__RAW_EXTENSION__INIT;
	static const char pjson[] = "{\"sharing\":{\"strategy\":\"TimeSlicing\"}}";
	params.has_raw = 1;
	params.raw.data = (uint8_t *)pjson;
	params.raw.len = strlen(pjson);
	K8s__Io__Api__Resource__V1__OpaqueDeviceConfiguration op =
	    K8S__IO__API__RESOURCE__V1__OPAQUE_DEVICE_CONFIGURATION__INIT;
	op.driver = "gpu.example.com";
	op.parameters = &params;
	K8s__Io__Api__Resource__V1__DeviceConfiguration dc =
	    K8S__IO__API__RESOURCE__V1__DEVICE_CONFIGURATION__INIT;
	dc.opaque = &op;
	char *gpu[] = {"gpu"};
	K8s__Io__Api__Resource__V1__DeviceClaimConfiguration
	    cfg = K8S__IO__API__RESOURCE__V1__DEVICE_CLAIM_CONFIGURATION__INIT,
	    *cfgs[] = {&cfg};
	cfg.n_requests = 1;
	cfg.requests = gpu;
	cfg.deviceconfiguration = &dc;
	K8s__Io__Api__Resource__V1__DeviceClaim dcl =
	    K8S__IO__API__RESOURCE__V1__DEVICE_CLAIM__INIT;
	dcl.n_requests = 1;
	dcl.requests = drs;
	dcl.n_config = 1;
	dcl.config = cfgs;
	K8s__Io__Api__Resource__V1__ResourceClaimSpec spec =
	    K8S__IO__API__RESOURCE__V1__RESOURCE_CLAIM_SPEC__INIT;
	spec.devices = &dcl;

	/* The status the scheduler writes: results, node selector, reservedFor. */
	K8s__Io__Api__Resource__V1__DeviceRequestAllocationResult
	    r0 = K8S__IO__API__RESOURCE__V1__DEVICE_REQUEST_ALLOCATION_RESULT__INIT,
	    r1 = K8S__IO__API__RESOURCE__V1__DEVICE_REQUEST_ALLOCATION_RESULT__INIT,
	    *rs[] = {&r0, &r1};
	r0.request = r1.request = "gpu";
	r0.driver = r1.driver = "gpu.example.com";
	r0.pool = r1.pool = "n1";
	r0.device = "gpu-0";
	r1.device = "gpu-1";
	K8s__Io__Api__Resource__V1__DeviceAllocationResult dar =
	    K8S__IO__API__RESOURCE__V1__DEVICE_ALLOCATION_RESULT__INIT;
	dar.n_results = 2;
	dar.results = rs;
	char *n1[] = {"n1"};
	K8s__Io__Api__Core__V1__NodeSelectorRequirement
	    mf = K8S__IO__API__CORE__V1__NODE_SELECTOR_REQUIREMENT__INIT,
	    *mfs[] = {&mf};
	mf.key = "metadata.name";
	mf.operator_ = "In";
	mf.n_values = 1;
	mf.values = n1;
	K8s__Io__Api__Core__V1__NodeSelectorTerm
	    term = K8S__IO__API__CORE__V1__NODE_SELECTOR_TERM__INIT,
	    *terms[] = {&term};
	term.n_matchfields = 1;
	term.matchfields = mfs;
	K8s__Io__Api__Core__V1__NodeSelector sel = K8S__IO__API__CORE__V1__NODE_SELECTOR__INIT;
	sel.n_nodeselectorterms = 1;
	sel.nodeselectorterms = terms;
	K8s__Io__Api__Resource__V1__AllocationResult alloc =
	    K8S__IO__API__RESOURCE__V1__ALLOCATION_RESULT__INIT;
	alloc.devices = &dar;
	alloc.nodeselector = &sel;
	K8s__Io__Api__Resource__V1__ResourceClaimConsumerReference
	    rf = K8S__IO__API__RESOURCE__V1__RESOURCE_CLAIM_CONSUMER_REFERENCE__INIT,
	    *rfs[] = {&rf};
	rf.apigroup = "";
	rf.resource = "pods";
	rf.name = "p";
	rf.uid = "u1";
	K8s__Io__Api__Resource__V1__ResourceClaimStatus st =
	    K8S__IO__API__RESOURCE__V1__RESOURCE_CLAIM_STATUS__INIT;
	st.allocation = &alloc;
	st.n_reservedfor = 1;
	st.reservedfor = rfs;
	K8s__Io__Api__Resource__V1__ResourceClaim rc =
	    K8S__IO__API__RESOURCE__V1__RESOURCE_CLAIM__INIT;
	rc.metadata = &meta;
	rc.spec = &spec;
	rc.status = &st;
	expect_decoded(
	    "resource.k8s.io/v1", "ResourceClaim", &rc.base,
	    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{"
	    "\"name\":\"c1\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
	    "\"deviceClassName\":\"gpu.example.com\",\"allocationMode\":\"ExactCount\",\"count\":2}"
	    "}],"
	    "\"config\":[{\"requests\":[\"gpu\"],\"opaque\":{\"driver\":\"gpu.example.com\","
	    "\"parameters\":{\"sharing\":{\"strategy\":\"TimeSlicing\"}}}}]}},"
	    "\"status\":{\"allocation\":{\"devices\":{\"results\":["
	    "{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-"
	    "0\"},"
	    "{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-"
	    "1\"}]},"
	    "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
	    "\"operator\":\"In\",\"values\":[\"n1\"]}]}]}},"
	    "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"u1\"}]}}");
}
END_TEST

START_TEST(test_resource_slice)
{
	Meta meta = META_INIT;
	meta.name = "n1-gpu.example.com";
	K8s__Io__Api__Resource__V1__DeviceAttribute idx =
	    K8S__IO__API__RESOURCE__V1__DEVICE_ATTRIBUTE__INIT;
	idx.has_int_ = 1; /* a pointer's zero: kept */
	idx.int_ = 0;
	K8s__Io__Api__Resource__V1__DeviceAttribute type =
	    K8S__IO__API__RESOURCE__V1__DEVICE_ATTRIBUTE__INIT;
	type.string = "gpu";
	K8s__Io__Api__Resource__V1__Device__AttributesEntry
	    a0 = K8S__IO__API__RESOURCE__V1__DEVICE__ATTRIBUTES_ENTRY__INIT,
	    a1 = K8S__IO__API__RESOURCE__V1__DEVICE__ATTRIBUTES_ENTRY__INIT, *as[] = {&a0, &a1};
	a0.key = "index";
	a0.value = &idx;
	a1.key = "type";
	a1.value = &type;
	Qty mem = QTY_INIT;
	mem.string = "80Gi";
	K8s__Io__Api__Resource__V1__DeviceCapacity dcap =
	    K8S__IO__API__RESOURCE__V1__DEVICE_CAPACITY__INIT;
	dcap.value = &mem;
	K8s__Io__Api__Resource__V1__Device__CapacityEntry
	    c0 = K8S__IO__API__RESOURCE__V1__DEVICE__CAPACITY_ENTRY__INIT,
	    *cs[] = {&c0};
	c0.key = "memory";
	c0.value = &dcap;
	K8s__Io__Api__Resource__V1__Device dev = K8S__IO__API__RESOURCE__V1__DEVICE__INIT,
					   *devs[] = {&dev};
	dev.name = "gpu-0";
	dev.n_attributes = 2;
	dev.attributes = as;
	dev.n_capacity = 1;
	dev.capacity = cs;
	K8s__Io__Api__Resource__V1__ResourcePool pool =
	    K8S__IO__API__RESOURCE__V1__RESOURCE_POOL__INIT;
	pool.name = "n1";
	pool.has_generation = 1; /* Go writes the zero: kept */
	pool.has_resourceslicecount = 1;
	pool.resourceslicecount = 1;
	K8s__Io__Api__Resource__V1__ResourceSliceSpec spec =
	    K8S__IO__API__RESOURCE__V1__RESOURCE_SLICE_SPEC__INIT;
	spec.driver = "gpu.example.com";
	spec.nodename = "n1";
	spec.pool = &pool;
	spec.n_devices = 1;
	spec.devices = devs;
	K8s__Io__Api__Resource__V1__ResourceSlice rs =
	    K8S__IO__API__RESOURCE__V1__RESOURCE_SLICE__INIT;
	rs.metadata = &meta;
	rs.spec = &spec;
	expect_decoded(
	    "resource.k8s.io/v1", "ResourceSlice", &rs.base,
	    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
	    "\"metadata\":{\"name\":\"n1-gpu.example.com\"},\"spec\":{\"driver\":"
	    "\"gpu.example.com\",\"nodeName\":\"n1\",\"pool\":{\"name\":\"n1\","
	    "\"generation\":0,\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\","
	    "\"attributes\":{\"index\":{\"int\":0},\"type\":{\"string\":\"gpu\"}},"
	    "\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}]}}");
}
END_TEST

START_TEST(test_delete_options)
{
	K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__DeleteOptions o =
	    K8S__IO__APIMACHINERY__PKG__APIS__META__V1__DELETE_OPTIONS__INIT;
	char *dry[] = {"All"};
	o.has_graceperiodseconds = 1;
	o.graceperiodseconds = 0;
	o.propagationpolicy = "Orphan";
	o.n_dryrun = 1;
	o.dryrun = dry;
	size_t n;
	/* DeleteOptions is registered in every group: any apiVersion names it. */
	char *buf = envelope("batch/v1", "DeleteOptions", &o.base, &n), err[256] = "";
	json_t *obj = NULL;
	ck_assert_int_eq(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)), 0);
	ck_assert_str_eq(pk_get_string(obj, "propagationPolicy"), "Orphan");
	ck_assert_str_eq(pk_get_string(obj, "dryRun[0]"), "All");
	ck_assert_ptr_nonnull(pk_get(obj, "gracePeriodSeconds"));
	json_decref(obj);
	free(buf);
}
END_TEST

START_TEST(test_refused)
{
	char err[256] = "";
	json_t *obj = NULL;
	/* No envelope; a truncated one; a kind served only as JSON. */
	ck_assert_int_eq(pk_srv_proto_decode("{}", 2, &obj, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(pk_srv_proto_decode("k8s\0\x0a\x05", 6, &obj, err, sizeof(err)), -EINVAL);
	K8s__Io__Api__Core__V1__Pod pod = K8S__IO__API__CORE__V1__POD__INIT;
	size_t n;
	char *buf = envelope("jobset.x-k8s.io/v1alpha2", "JobSet", &pod.base, &n);
	ck_assert_int_eq(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)), -EPROTONOSUPPORT);
	ck_assert_msg(strstr(err, "JobSet is not served as protobuf (it is a custom resource)"),
		      "%s", err);
	free(buf);

	/* A field number the messages do not know: refused with its path. */
	K8s__Io__Api__Core__V1__PodSpec spec = K8S__IO__API__CORE__V1__POD_SPEC__INIT;
	ProtobufCMessageUnknownField extra = {.tag = 999,
					      .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT,
					      .len = 1,
					      .data = (uint8_t *)"\x01"};
	spec.base.n_unknown_fields = 1;
	spec.base.unknown_fields = &extra;
	pod.spec = &spec;
	buf = envelope("v1", "Pod", &pod.base, &n);
	ck_assert_int_eq(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "spec: field number 999 is not a field of PodSpec"), "%s", err);
	free(buf);

	/* A NUL inside a string (libprotobuf-c would cut it there): refused with its path. */
	K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__ObjectMeta meta =
	    K8S__IO__APIMACHINERY__PKG__APIS__META__V1__OBJECT_META__INIT;
	K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__ObjectMeta__LabelsEntry
	    label = K8S__IO__APIMACHINERY__PKG__APIS__META__V1__OBJECT_META__LABELS_ENTRY__INIT,
	    *labels[] = {&label};
	K8s__Io__Api__Core__V1__Pod named = K8S__IO__API__CORE__V1__POD__INIT;
	label.key = "app";
	label.value = "web";
	meta.n_labels = 1;
	meta.labels = labels;
	named.metadata = &meta;
	static const char *const where[][2] = {{"nul@name", "metadata.name"},
					       {"web@tier", "metadata.labels.value"}};
	for (size_t i = 0; i < 2; i++) {
		meta.name = i == 0 ? (char *)where[0][0] : "p1";
		label.value = i == 1 ? (char *)where[1][0] : "web";
		buf = envelope("v1", "Pod", &named.base, &n);
		char *at = memmem(buf, n, where[i][0], strlen(where[i][0]));
		ck_assert_ptr_nonnull(at);
		at[3] = '\0'; /* "nul\0name": same length on the wire */
		ck_assert_int_eq(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, where[i][1]) && strstr(err, "NUL"), "%s", err);
		free(buf);
	}

	/* Nesting past PK_MAX_DEPTH is refused before libprotobuf-c recurses:
	 * Workload{spec{compositePodGroupTemplates{compositePodGroupTemplates{...}}}}. */
	for (int levels = 10; levels <= 100; levels += 90) {
		uint8_t raw[1024];
		size_t len = 0;
		for (int i = 0; i < levels; i++) {
			uint8_t tag = i == levels - 1 ? 0x12 : i == levels - 2 ? 0x1a : 0x4a;
			uint8_t hdr[3] = {tag, (uint8_t)(len | 0x80), (uint8_t)(len >> 7)};
			size_t h = len < 128 ? 2 : 3;
			if (len < 128)
				hdr[1] = (uint8_t)len;
			memmove(raw + h, raw, len);
			memcpy(raw, hdr, h);
			len += h;
		}
		K8s__Io__Apimachinery__Pkg__Runtime__TypeMeta tm =
		    K8S__IO__APIMACHINERY__PKG__RUNTIME__TYPE_META__INIT;
		K8s__Io__Apimachinery__Pkg__Runtime__Unknown u =
		    K8S__IO__APIMACHINERY__PKG__RUNTIME__UNKNOWN__INIT;
		tm.apiversion = "scheduling.k8s.io/v1alpha3";
		tm.kind = "Workload";
		u.typemeta = &tm;
		u.has_raw = 1;
		u.raw.len = len;
		u.raw.data = raw;
		n = protobuf_c_message_get_packed_size(&u.base);
		buf = malloc(n + 4);
		memcpy(buf, "k8s", 4);
		protobuf_c_message_pack(&u.base, (uint8_t *)buf + 4);
		int rc = pk_srv_proto_decode(buf, n + 4, &obj, err, sizeof(err));
		if (levels == 10) {
			ck_assert_msg(rc == 0, "%s", err);
			ck_assert_ptr_nonnull(pk_get(obj, "spec.compositePodGroupTemplates[0]"));
			json_decref(obj);
		} else {
			ck_assert_int_eq(rc, -EINVAL);
			ck_assert_msg(strstr(err, "nested deeper"), "%s", err);
		}
		free(buf);
	}
}
END_TEST

static size_t reserved_total;
static bool reserve_refuse(void *ctx, size_t n)
{
	(void)ctx;
	(void)n;
	return false;
}
static bool reserve_count(void *ctx, size_t n)
{
	(void)ctx;
	reserved_total += n;
	return true;
}

/* A Node whose status holds n empty conditions: two bytes each on the wire. */
static char *node_with_conditions(size_t n, size_t *ret_len)
{
	K8s__Io__Api__Core__V1__Node node = K8S__IO__API__CORE__V1__NODE__INIT;
	K8s__Io__Api__Core__V1__NodeStatus st = K8S__IO__API__CORE__V1__NODE_STATUS__INIT;
	K8s__Io__Api__Core__V1__NodeCondition c = K8S__IO__API__CORE__V1__NODE_CONDITION__INIT;
	K8s__Io__Api__Core__V1__NodeCondition **v = malloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = &c;
	st.n_conditions = n;
	st.conditions = v;
	node.status = &st;
	char *buf = envelope("v1", "Node", &node.base, ret_len);
	free(v);
	return buf;
}

/*
 * Amplification: 1.4 M empty conditions in 2.8 MB would unpack into about a
 * gigabyte; the wire walk refuses them before anything is allocated, and
 * what a body may hold once decoded is taken from the request's budget.
 */
START_TEST(test_amplification)
{
	char err[512];
	json_t *obj = NULL;
	size_t n;
	char *buf = node_with_conditions(1400000, &n);
	ck_assert_int_gt(n, 2800000);
	ck_assert_int_eq(pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)), -E2BIG);
	ck_assert_msg(strstr(err, "Node") && strstr(err, "more than"), "%s", err);
	ck_assert_ptr_null(obj);
	free(buf);

	/* A few conditions decode; the estimate is reserved first, and a full budget refuses. */
	buf = node_with_conditions(50, &n);
	struct pk_srv_pb_budget b = {reserve_count, NULL};
	reserved_total = 0;
	ck_assert_msg(pk_srv_proto_decode_budget(buf, n, &b, &obj, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_int_eq(json_array_size(pk_get(obj, "status.conditions")), 50);
	ck_assert_int_gt(reserved_total, 50 * 2);
	ck_assert_int_le(reserved_total, pk_srv_pb_decode_limit(n));
	json_decref(obj);
	obj = NULL;
	b.reserve = reserve_refuse;
	ck_assert_int_eq(pk_srv_proto_decode_budget(buf, n, &b, &obj, err, sizeof(err)), -EAGAIN);
	ck_assert_ptr_null(obj);
	free(buf);

	/* The limit is the floor plus a fixed multiple of the body. */
	ck_assert_uint_eq(pk_srv_pb_decode_limit(1000),
			  PK_SRV_PB_DECODE_FLOOR + 1000 * PK_SRV_PB_DECODE_FACTOR);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("decode");
	tcase_add_test(tc, test_pod);
	tcase_add_test(tc, test_storage_kinds);
	tcase_add_test(tc, test_resource_claim);
	tcase_add_test(tc, test_resource_slice);
	tcase_add_test(tc, test_delete_options);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_amplification);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
