/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_proto.c — kernel/server/proto.c: Kubernetes protobuf bodies, packed
 * here with libprotobuf-c from the same messages, read back as JSON trees
 * (apimachinery types, embedded structs, Go's empty strings), and refused
 * when malformed, nested too deeply, or carrying a field number the messages
 * do not know.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"

#undef linux
#include "core.pb-c.h"
#include "meta.pb-c.h"
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
	ck_assert_msg(strstr(err, "JobSet"), "%s", err);
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

int main(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("decode");
	tcase_add_test(tc, test_pod);
	tcase_add_test(tc, test_delete_options);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
