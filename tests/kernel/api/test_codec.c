/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_codec.c — the object codec: YAML/JSON reading with positions and
 * limits, List flattening, writing and round trips, tree helpers, RFC 3339
 * times and conditions.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/api/api.h"

static json_t *read_ok(const char *text)
{
	char err[512];
	json_t *objs = NULL;
	int ret = pk_read_buffer("in.yaml", text, strlen(text), &objs, err, sizeof(err));

	ck_assert_msg(ret == 0, "read failed: %d %s", ret, err);
	return objs;
}

static void read_fails(const char *text, const char *want_err)
{
	char err[512];
	json_t *objs = NULL;
	int ret = pk_read_buffer("in.yaml", text, strlen(text), &objs, err, sizeof(err));

	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_ptr_null(objs);
	ck_assert_msg(strstr(err, want_err), "error '%s' lacks '%s'", err, want_err);
}

START_TEST(test_scalars_core_schema)
{
	json_t *objs = read_ok("kind: Pod\n"
			       "i: 42\nneg: -7\nhex: 0x1F\noct: 0o17\nf: 1.5\nexp: 1e3\n"
			       "t: true\nT: True\nfa: false\nn: null\ntilde: ~\nempty:\n"
			       "qs: \"42\"\nsq: 'true'\nyes: yes\nq: 500m\nver: 1.2.3\n"
			       "big: 99999999999999999999\ninf: .inf\ntagged: !!str 12\n");
	json_t *o = json_array_get(objs, 0);

	ck_assert_int_eq(json_integer_value(json_object_get(o, "i")), 42);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "neg")), -7);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "hex")), 31);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "oct")), 15);
	ck_assert(json_is_real(json_object_get(o, "f")));
	ck_assert(json_real_value(json_object_get(o, "exp")) == 1000.0);
	ck_assert(json_is_true(json_object_get(o, "t")));
	ck_assert(json_is_true(json_object_get(o, "T")));
	ck_assert(json_is_false(json_object_get(o, "fa")));
	ck_assert(json_is_null(json_object_get(o, "n")));
	ck_assert(json_is_null(json_object_get(o, "tilde")));
	ck_assert(json_is_null(json_object_get(o, "empty")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "qs")), "42");
	ck_assert_str_eq(json_string_value(json_object_get(o, "sq")), "true");
	ck_assert_str_eq(json_string_value(json_object_get(o, "yes")), "yes");
	ck_assert_str_eq(json_string_value(json_object_get(o, "q")), "500m");
	ck_assert_str_eq(json_string_value(json_object_get(o, "ver")), "1.2.3");
	ck_assert(json_is_real(json_object_get(o, "big")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "inf")), ".inf");
	ck_assert_str_eq(json_string_value(json_object_get(o, "tagged")), "12");
	json_decref(objs);
}
END_TEST

START_TEST(test_multi_document_and_lists)
{
	json_t *objs = read_ok("---\nkind: Node\nmetadata: {name: a}\n---\n---\n"
			       "apiVersion: v1\nkind: List\nitems:\n"
			       "- {kind: Pod, metadata: {name: p1}}\n"
			       "- kind: PodList\n  items: [{kind: Pod, metadata: {name: p2}}]\n"
			       "---\nkind: NodeList\nitems: null\n"
			       "---\nkind: Pod\nmetadata: {name: last}\n...\n");

	ck_assert_int_eq(json_array_size(objs), 4);
	ck_assert_str_eq(pk_name(json_array_get(objs, 0)), "a");
	ck_assert_str_eq(pk_name(json_array_get(objs, 1)), "p1");
	ck_assert_str_eq(pk_name(json_array_get(objs, 2)), "p2");
	ck_assert_str_eq(pk_name(json_array_get(objs, 3)), "last");
	json_decref(objs);

	objs = read_ok("");
	ck_assert_int_eq(json_array_size(objs), 0);
	json_decref(objs);
	ck_assert_int_eq(pk_read_buffer("none", NULL, 0, &objs, NULL, 0), 0);
	ck_assert_int_eq(json_array_size(objs), 0);
	json_decref(objs);
	objs = read_ok("# only a comment\n---\n");
	ck_assert_int_eq(json_array_size(objs), 0);
	json_decref(objs);
}
END_TEST

START_TEST(test_json_input)
{
	json_t *objs = read_ok("{\"kind\": \"Pod\", \"metadata\": {\"name\": \"j\\/1\"}, "
			       "\"spec\": {\"priority\": 5, \"z\": 1, \"a\": 2}}\n"
			       "{\"kind\": \"List\", \"items\": [{\"kind\": \"Node\"}]}");
	json_t *o = json_array_get(objs, 0);
	const char *key;
	json_t *v;
	const char *order[] = {"priority", "z", "a"};
	int i = 0;

	ck_assert_int_eq(json_array_size(objs), 2);
	ck_assert_str_eq(pk_name(o), "j/1");
	json_object_foreach(json_object_get(o, "spec"), key, v) ck_assert_str_eq(key, order[i++]);
	json_decref(objs);

	read_fails("{\"kind\": \"Pod\",\n  \"spec\": {\"a\": 1,, }}", "in.yaml:2:");
	read_fails("{\"kind\": \"Pod\", \"kind\": \"Node\"}", "duplicate");
	read_fails("[1, 2]", "expected an object");
}
END_TEST

START_TEST(test_errors_have_positions)
{
	read_fails("kind: Pod\nmetadata:\n  name: a\n   bad: indent\n", "in.yaml:4:");
	read_fails("kind: Pod\nspec: [1, 2\n", "in.yaml:");
	read_fails("kind: Pod\nkind: Node\n", "in.yaml:2:7: duplicate key \"kind\"");
	read_fails("kind: Pod\n---\n- a\n- b\n",
		   "in.yaml:2:1: expected an object (a mapping), found a list");
	read_fails("just a string\n", "expected an object (a mapping), found a string");
	read_fails("kind: Pod\nx: *nope\n", "in.yaml:2:4: unknown anchor \"nope\"");
	read_fails("kind: Pod\n? [a, b]\n: c\n", "mapping keys must be scalars");
	read_fails("kind: List\nitems: [1]\n", "items[0]: expected an object");
	read_fails("kind: Pod\nx: \"\x01\"\n", "in.yaml:");
}
END_TEST

START_TEST(test_anchors_merge_and_bounds)
{
	json_t *objs = read_ok("kind: Pod\nbase: &b {cpu: 1, mem: 2}\n"
			       "copy: *b\nmerged:\n  <<: *b\n  cpu: 4\n"
			       "multi:\n  <<: [{a: 1}, {a: 2, b: 3}]\n");
	json_t *o = json_array_get(objs, 0);

	ck_assert_int_eq(json_integer_value(pk_get(o, "copy.mem")), 2);
	ck_assert_int_eq(json_integer_value(pk_get(o, "merged.cpu")), 4);
	ck_assert_int_eq(json_integer_value(pk_get(o, "merged.mem")), 2);
	ck_assert_int_eq(json_integer_value(pk_get(o, "multi.a")), 1);
	ck_assert_int_eq(json_integer_value(pk_get(o, "multi.b")), 3);
	/* An alias is a copy: changing it leaves the anchor alone. */
	ck_assert_ptr_ne(pk_get(o, "copy"), pk_get(o, "base"));
	json_decref(objs);

	/* Billion laughs: nine levels of ten aliases each. */
	read_fails("kind: Pod\n"
		   "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		   "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		   "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		   "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		   "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		   "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
		   "aliases expand to more than");
}
END_TEST

START_TEST(test_limits)
{
	size_t n = PK_MAX_DEPTH + 2, len = 0;
	char *deep = malloc(2 * n + 32), *big;
	char err[256];
	json_t *objs = NULL;

	len += sprintf(deep, "kind: Pod\nx: ");
	for (size_t i = 0; i < n; i++)
		deep[len++] = '[';
	for (size_t i = 0; i < n; i++)
		deep[len++] = ']';
	deep[len] = '\0';
	read_fails(deep, "nesting deeper than 64 levels");
	/* The same depth in JSON syntax. */
	memmove(deep, deep + 13, len - 13 + 1);
	ck_assert_int_eq(pk_read_buffer("d.json", deep, strlen(deep), &objs, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "nesting deeper"));
	free(deep);

	big = malloc(PK_MAX_INPUT_BYTES + 2);
	memset(big, ' ', PK_MAX_INPUT_BYTES + 1);
	ck_assert_int_eq(
	    pk_read_buffer("big", big, PK_MAX_INPUT_BYTES + 1, &objs, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "big:1:1: input is larger than 3145728 bytes");
	free(big);
	ck_assert_ptr_null(objs);
}
END_TEST

/*
 * pk_write_list writes exactly what pk_write writes for the whole List, in
 * JSON and YAML, with items given as trees or as compact text.
 */
START_TEST(test_write_list)
{
	static const char *const text =
	    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {gen: \"0777\", z: a}\n"
	    "  annotations: {note: \"h\u00e9llo\\nline2\", q: \"yes\"}\nstatus:\n"
	    "  extra: {real: 0.1, big: 1.5e300, neg: -3, t: true, n: null, l: [], o: {}}\n"
	    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: n}\n";
	static const enum pk_format fmts[] = {PK_FORMAT_JSON, PK_FORMAT_YAML};
	char err[256];
	json_t *objs = NULL;

	ck_assert_int_eq(pk_read_buffer("w.yaml", text, strlen(text), &objs, err, sizeof(err)), 0);
	for (int empty = 0; empty <= 1; empty++) {
		for (size_t f = 0; f < 2; f++) {
			json_t *items = empty ? json_array() : json_deep_copy(objs);
			json_t *list = pk_list_new(json_deep_copy(items));
			char *whole = pk_write_string(list, fmts[f]), *streamed = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&streamed, &len);

			if (!empty) /* the Node as compact text, the Pod as a tree */
				json_array_set_new(items, 0,
						   pk_compact_object(json_array_get(items, 0)));
			ck_assert(empty || json_is_string(json_array_get(items, 0)));
			ck_assert_int_eq(pk_write_list(m, items, fmts[f]), 0);
			fclose(m);
			ck_assert_str_eq(streamed, whole);
			free(whole);
			free(streamed);
			json_decref(list);
			json_decref(items);
		}
	}
	json_decref(objs);
}
END_TEST

START_TEST(test_round_trip_stable)
{
	static const char *const inputs[] = {
	    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    a: \"1\"\n"
	    "    b: \"true\"\n    c: \"null\"\n    d: \"yes\"\n    e: \"\"\n    f: \"0777\"\n"
	    "spec:\n  priority: 10\n  ratio: 0.5\n  r2: 2.0\n  neg: -3\n  on: true\n"
	    "  note: |\n    two\n    lines\n  empty: {}\n  list: []\n  colon: \"a: b\"\n"
	    "  hash: \"# x\"\n  lead: \" space\"\n  uni: \"héllo\"\n  nul: null\n"
	    "  \"<<\": not a merge key\n",
	    "{\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}, \"status\": "
	    "{\"allocatable\": {\"cpu\": \"64\", \"pods\": 110}}}",
	};

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		json_t *a = read_ok(inputs[i]), *b, *c;
		char *yaml = pk_write_string(json_array_get(a, 0), PK_FORMAT_YAML);
		char *json, *yaml2;

		ck_assert_ptr_nonnull(yaml);
		b = read_ok(yaml);
		ck_assert_msg(json_equal(a, b), "YAML round trip changed:\n%s", yaml);
		json = pk_write_string(json_array_get(b, 0), PK_FORMAT_JSON);
		c = read_ok(json);
		ck_assert(json_equal(a, c));
		yaml2 = pk_write_string(json_array_get(c, 0), PK_FORMAT_YAML);
		ck_assert_str_eq(yaml, yaml2);
		ck_assert(json[strlen(json) - 1] == '\n');
		free(yaml);
		free(yaml2);
		free(json);
		json_decref(a);
		json_decref(b);
		json_decref(c);
	}
}
END_TEST

START_TEST(test_write_formats)
{
	json_t *o = json_pack("{s:s, s:{s:s, s:i}}", "kind", "Pod", "metadata", "name", "x",
			      "generation", 3);
	json_t *list;
	char *s = pk_write_string(o, PK_FORMAT_JSON);

	ck_assert_str_eq(s, "{\n  \"kind\": \"Pod\",\n  \"metadata\": {\n    \"name\": \"x\",\n"
			    "    \"generation\": 3\n  }\n}\n");
	free(s);
	s = pk_write_string(o, PK_FORMAT_YAML);
	ck_assert_str_eq(s, "kind: Pod\nmetadata:\n  name: x\n  generation: 3\n");
	free(s);
	list = pk_list_new(json_pack("[o]", o));
	ck_assert_str_eq(json_string_value(json_object_get(list, "kind")), "List");
	ck_assert_str_eq(json_string_value(json_object_get(list, "apiVersion")), "v1");
	ck_assert_int_eq(json_array_size(json_object_get(list, "items")), 1);
	json_decref(list);
	list = pk_list_new(NULL);
	ck_assert_int_eq(json_array_size(json_object_get(list, "items")), 0);
	json_decref(list);
}
END_TEST

START_TEST(test_parse_document)
{
	char err[256];
	json_t *v = NULL;

	ck_assert_int_eq(pk_parse_document("body", "[1, 2]", 6, &v, err, sizeof(err)), 0);
	ck_assert_int_eq(json_array_size(v), 2);
	json_decref(v);
	ck_assert_int_eq(pk_parse_document("body", "a: 1\n", 5, &v, err, sizeof(err)), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "a")), 1);
	json_decref(v);
	v = NULL;
	ck_assert_int_eq(pk_parse_document("body", "a: 1\n---\nb: 2\n", 14, &v, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "body:2:1: expected a single document");
	ck_assert_int_eq(pk_parse_document("body", "", 0, &v, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(v);
}
END_TEST

START_TEST(test_read_file)
{
	char path[] = "/tmp/pk-codec-XXXXXX", err[256];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	json_t *objs = NULL;

	fputs("kind: Pod\nmetadata: {name: f}\n", f);
	fclose(f);
	ck_assert_int_eq(pk_read_file(path, &objs, err, sizeof(err)), 0);
	ck_assert_str_eq(pk_name(json_array_get(objs, 0)), "f");
	json_decref(objs);
	unlink(path);
	objs = NULL;
	ck_assert_int_eq(pk_read_file(path, &objs, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_null(objs);
}
END_TEST

/*
 * Files have their own size limit (default PK_MAX_FILE_BYTES, far above the
 * request limit) and the caller may set another; a file over it is refused
 * by its size, a stream after limit + 1 bytes (memory stays bounded).
 */
START_TEST(test_read_file_limits)
{
	char path[] = "/tmp/pk-codec-XXXXXX", err[256];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	json_t *objs = NULL;
	size_t bytes = 0;

	/* 4 Pods with a 1 MiB annotation each: over the request limit */
	for (int i = 0; i < 4; i++) {
		fprintf(f, "---\nkind: Pod\nmetadata:\n  name: p%d\n  annotations:\n    a: ", i);
		for (int k = 0; k < 1024 * 1024; k++)
			fputc('x', f);
		fputc('\n', f);
	}
	fclose(f);
	ck_assert_int_eq(pk_read_file(path, &objs, err, sizeof(err)), 0);
	ck_assert_uint_eq(json_array_size(objs), 4);
	json_decref(objs);
	objs = NULL;

	ck_assert_int_eq(pk_read_file_max(path, 1024 * 1024, &objs, err, sizeof(err)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, ":1:1: input is larger than 1048576 bytes (1.0 MiB)"));
	ck_assert_ptr_null(objs);
	unlink(path);

	/* a stream without end: refused after limit + 1 bytes */
	ck_assert_int_eq(pk_read_file_max("/dev/zero", 65536, &objs, err, sizeof(err)), -EFBIG);
	ck_assert_str_eq(err, "/dev/zero:1:1: input is larger than 65536 bytes (0.1 MiB)");
	ck_assert_ptr_null(objs);

	ck_assert_int_eq(pk_parse_size("512Mi", &bytes), 0);
	ck_assert_uint_eq(bytes, 512u * 1024 * 1024);
	ck_assert_int_eq(pk_parse_size("5000000", &bytes), 0);
	ck_assert_uint_eq(bytes, 5000000);
	ck_assert_int_eq(pk_parse_size("1G", &bytes), 0);
	ck_assert_uint_eq(bytes, 1000000000);
	ck_assert_int_eq(pk_parse_size("0", &bytes), -EINVAL);
	ck_assert_int_eq(pk_parse_size("100m", &bytes), -EINVAL); /* a fraction of a byte */
	ck_assert_int_eq(pk_parse_size("lots", &bytes), -EINVAL);
	ck_assert_int_eq(pk_parse_size("-1Mi", &bytes), -EINVAL);
}
END_TEST

START_TEST(test_paths)
{
	json_t *o = json_pack("{s:s, s:{s:[{s:s}, {s:s}]}}", "kind", "Pod", "spec", "containers",
			      "name", "a", "name", "b");

	ck_assert_str_eq(pk_get_string(o, "spec.containers[1].name"), "b");
	ck_assert_str_eq(pk_get_string(o, "spec.containers.0.name"), "a");
	ck_assert_ptr_null(pk_get(o, "spec.containers[2].name"));
	ck_assert_ptr_null(pk_get(o, "spec.nope.deeper"));
	ck_assert_ptr_null(pk_get_string(o, "spec.containers"));
	ck_assert_int_eq(pk_set(o, "spec.schedulingGroup.podGroupName", json_string("g")), 0);
	ck_assert_str_eq(pk_get_string(o, "spec.schedulingGroup.podGroupName"), "g");
	ck_assert_int_eq(pk_set(o, "spec.containers[0].name", json_string("c")), 0);
	ck_assert_str_eq(pk_get_string(o, "spec.containers[0].name"), "c");
	ck_assert_int_eq(pk_set(o, "kind.sub", json_string("x")), -EINVAL); /* kind is a string */
	ck_assert_int_eq(pk_set(o, "", json_string("x")), -EINVAL);
	ck_assert_int_eq(pk_set(o, "spec.containers[9]", json_string("x")), -EINVAL);
	/* Namespaces: default for namespaced kinds, none for cluster-scoped ones. */
	ck_assert_str_eq(pk_namespace(o), "default");
	ck_assert_int_eq(pk_set(o, "metadata.namespace", json_string("team")), 0);
	ck_assert_str_eq(pk_namespace(o), "team");
	json_decref(o);
	o = json_pack("{s:s, s:{s:s}}", "kind", "Node", "metadata", "name", "n");
	ck_assert_ptr_null(pk_namespace(o));
	ck_assert_str_eq(pk_name(o), "n");
	json_decref(o);
}
END_TEST

START_TEST(test_time)
{
	int64_t t = 0;
	char buf[32];

	ck_assert_int_eq(pk_time_parse("1970-01-01T00:00:00Z", &t), 0);
	ck_assert_int_eq(t, 0);
	ck_assert_int_eq(pk_time_parse("2024-02-29T12:30:45Z", &t), 0);
	ck_assert_int_eq(t, 1709209845);
	pk_time_format(t, buf);
	ck_assert_str_eq(buf, "2024-02-29T12:30:45Z");
	ck_assert_int_eq(pk_time_parse("2024-02-29T14:30:45.123+02:00", &t), 0);
	ck_assert_int_eq(t, 1709209845);
	ck_assert_int_eq(pk_time_parse("1969-12-31T23:59:59Z", &t), 0);
	ck_assert_int_eq(t, -1);
	pk_time_format(-1, buf);
	ck_assert_str_eq(buf, "1969-12-31T23:59:59Z");
	ck_assert_int_eq(pk_time_parse("2023-02-29T00:00:00Z", &t), -EINVAL);
	ck_assert_int_eq(pk_time_parse("2024-13-01T00:00:00Z", &t), -EINVAL);
	ck_assert_int_eq(pk_time_parse("2024-01-01T00:00:00", &t), -EINVAL);
	ck_assert_int_eq(pk_time_parse("2024-01-01 00:00:00Zjunk", &t), -EINVAL);
	ck_assert_int_eq(pk_time_parse("yesterday", &t), -EINVAL);
	ck_assert_int_eq(pk_time_parse(NULL, &t), -EINVAL);
}
END_TEST

START_TEST(test_conditions)
{
	json_t *o = json_pack("{s:s, s:{s:s, s:i}}", "kind", "PodGroup", "metadata", "name", "g",
			      "generation", 2);
	json_t *c;

	ck_assert_ptr_null(pk_condition_get(o, "PodGroupInitiallyScheduled"));
	ck_assert_int_eq(pk_condition_set(o, "PodGroupInitiallyScheduled", "False", "Unschedulable",
					  "0/3 nodes", 100),
			 0);
	c = pk_condition_get(o, "PodGroupInitiallyScheduled");
	ck_assert_str_eq(json_string_value(json_object_get(c, "lastTransitionTime")),
			 "1970-01-01T00:01:40Z");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "observedGeneration")), 2);
	/* Same status: message changes, transition time does not. */
	ck_assert_int_eq(pk_condition_set(o, "PodGroupInitiallyScheduled", "False", "Unschedulable",
					  "1/3 nodes", 200),
			 0);
	c = pk_condition_get(o, "PodGroupInitiallyScheduled");
	ck_assert_str_eq(json_string_value(json_object_get(c, "message")), "1/3 nodes");
	ck_assert_str_eq(json_string_value(json_object_get(c, "lastTransitionTime")),
			 "1970-01-01T00:01:40Z");
	/* Status changes: so does the transition time. */
	ck_assert_int_eq(
	    pk_condition_set(o, "PodGroupInitiallyScheduled", "True", "Scheduled", NULL, 300), 0);
	c = pk_condition_get(o, "PodGroupInitiallyScheduled");
	ck_assert_str_eq(json_string_value(json_object_get(c, "lastTransitionTime")),
			 "1970-01-01T00:05:00Z");
	ck_assert_int_eq(
	    pk_condition_set(o, "DisruptionTarget", "True", "PreemptionByScheduler", "", 300), 0);
	ck_assert_int_eq(json_array_size(pk_get(o, "status.conditions")), 2);
	ck_assert_int_eq(pk_condition_set(o, "X", "Maybe", "r", "m", 1), -EINVAL);
	ck_assert_int_eq(json_array_size(pk_get(o, "status.conditions")), 2);
	json_decref(o);
	o = json_pack("{s:s}", "status", "broken");
	ck_assert_int_eq(pk_condition_set(o, "X", "True", "r", "m", 1), -EINVAL);
	json_decref(o);
}
END_TEST

START_TEST(test_kinds)
{
	json_t *o = json_pack("{s:s, s:s}", "apiVersion", "scheduling.k8s.io/v1alpha3", "kind",
			      "CompositePodGroup");

	for (int k = PK_KIND_UNKNOWN + 1; k < _PK_KIND_MAX; k++) {
		ck_assert_int_eq(pk_type_by_kind(pk_kind_to_string(k))->pk, k);
		ck_assert_ptr_nonnull(pk_kind_api_version(k));
	}
	ck_assert_ptr_null(pk_kind_to_string(PK_KIND_UNKNOWN));
	ck_assert_ptr_null(pk_type_by_kind("Deployment"));
	ck_assert_str_eq(pk_kind_api_version(PK_KIND_JOB), "batch/v1");
	ck_assert_int_eq(pk_kind_of(o), PK_KIND_COMPOSITE_POD_GROUP);
	json_object_set_new(o, "apiVersion", json_string("apps/v1"));
	ck_assert_int_eq(pk_kind_of(o), PK_KIND_UNKNOWN);
	json_object_del(o, "apiVersion");
	ck_assert_int_eq(pk_kind_of(o), PK_KIND_COMPOSITE_POD_GROUP);
	ck_assert(!pk_kind_namespaced(PK_KIND_NODE));
	ck_assert(pk_kind_namespaced(PK_KIND_POD));
	json_decref(o);
}
END_TEST

START_TEST(test_errors_list)
{
	struct pk_errors errs = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (int i = 0; i < 20; i++)
		pk_errors_add(&errs, "spec.x[%d]: Required value", i);
	ck_assert_uint_eq(errs.n, 20);
	pk_errors_print(&errs, f, "f.yaml");
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "f.yaml: spec.x[19]: Required value\n"));
	free(buf);
	pk_errors_clear(&errs);
	ck_assert_uint_eq(errs.n, 0);
	pk_errors_clear(&errs);
	pk_errors_clear(NULL);
}
END_TEST

/* pk_json_compact() writes what json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) writes. */
static void compact_same(json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	size_t len = 0;
	char *got = pk_json_compact(v, &len);

	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(len, strlen(want));
	free(want);
	free(got);
	json_decref(v);
}

START_TEST(test_json_compact)
{
	char ctl[40];
	json_t *deep = json_array(), *at = deep;

	compact_same(json_pack("{s:s,s:{s:[i,i,{}],s:[]},s:b,s:b,s:n,s:f,s:f,s:f,s:I}", "kind",
			       "Pod", "spec", "a", 1, -7, "b", "t", 1, "f", 0, "n", "r", 0.5, "big",
			       1e300, "whole", 3.0, "i64", (json_int_t)INT64_MIN));
	compact_same(json_pack("{s:s,s:s,s:s}", "esc\"\\/", "tab\there\nnew\rret\bb\ff", "utf8",
			       "\xc3\xa9t\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80", "empty", ""));
	for (int i = 1; i < 0x20; i++)
		ctl[i - 1] = (char)i;
	ctl[0x1f] = 0x7f;
	ctl[0x20] = '\0';
	compact_same(json_pack("[s,s%]", ctl, "nul", (size_t)3));
	compact_same(json_string("plain"));
	compact_same(json_stringn("a\0b", 3));
	compact_same(json_integer(0));
	compact_same(json_object());
	/* keys in the object's order, not sorted */
	compact_same(json_pack("{s:i,s:i,s:i}", "z", 1, "a", 2, "m", 3));
	/* deeper than any object, refused as jansson refuses a cycle */
	for (int i = 0; i < 3000; i++) {
		json_t *next = json_array();

		json_array_append_new(at, next);
		at = next;
	}
	errno = 0;
	ck_assert_ptr_null(pk_json_compact(deep, NULL));
	json_decref(deep);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("codec");
	TCase *tc = tcase_create("codec");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_scalars_core_schema);
	tcase_add_test(tc, test_multi_document_and_lists);
	tcase_add_test(tc, test_json_input);
	tcase_add_test(tc, test_errors_have_positions);
	tcase_add_test(tc, test_anchors_merge_and_bounds);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_round_trip_stable);
	tcase_add_test(tc, test_write_formats);
	tcase_add_test(tc, test_parse_document);
	tcase_add_test(tc, test_read_file);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_time);
	tcase_add_test(tc, test_conditions);
	tcase_add_test(tc, test_kinds);
	tcase_add_test(tc, test_errors_list);
	tcase_add_test(tc, test_read_file_limits);
	tcase_add_test(tc, test_write_list);
	tcase_add_test(tc, test_json_compact);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
