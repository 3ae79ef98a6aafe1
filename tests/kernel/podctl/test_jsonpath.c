/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of kernel/podctl/jsonpath.c against the examples of kubectl's
 * JSONPath reference (its input document and the result of each function,
 * objects printed as kubectl prints them: compact JSON), kubectl's
 * custom-columns cells, and the errors of malformed templates.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podctl/podctl-internal.h"

/* The input of kubectl's JSONPath reference page. */
static const char doc_text[] =
    "{\"kind\":\"List\",\"items\":["
    "{\"kind\":\"None\",\"metadata\":{\"name\":\"127.0.0.1\","
    "\"labels\":{\"kubernetes.io/hostname\":\"127.0.0.1\"}},"
    "\"status\":{\"capacity\":{\"cpu\":\"4\"},"
    "\"addresses\":[{\"type\":\"LegacyHostIP\",\"address\":\"127.0.0.1\"}]}},"
    "{\"kind\":\"None\",\"metadata\":{\"name\":\"127.0.0.2\"},"
    "\"status\":{\"capacity\":{\"cpu\":\"8\"},"
    "\"addresses\":[{\"type\":\"LegacyHostIP\",\"address\":\"127.0.0.2\"},"
    "{\"type\":\"another\",\"address\":\"127.0.0.3\"}]}}],"
    "\"users\":[{\"name\":\"myself\",\"user\":{}},"
    "{\"name\":\"e2e\",\"user\":{\"username\":\"admin\",\"password\":\"secret\"}}]}";

static char *run(const char *tmpl, const json_t *doc, char *err, size_t errlen)
{
	struct podctl_jsonpath *jp = podctl_jsonpath_parse(tmpl, err, errlen);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (!jp)
		return NULL;
	f = open_memstream(&buf, &len);
	r = podctl_jsonpath_print(jp, doc, f, err, errlen);
	fclose(f);
	podctl_jsonpath_free(jp);
	if (r) {
		free(buf);
		return NULL;
	}
	return buf;
}

START_TEST(reference_examples)
{
	static const struct {
		const char *tmpl, *want;
	} cases[] = {
	    {"kind is {.kind}", "kind is List"},
	    {"{.kind}", "List"},
	    {"{['kind']}", "List"},
	    {"{$.kind}", "List"},
	    {"{..name}", "127.0.0.1 127.0.0.2 myself e2e"},
	    {"{.items[*].metadata.name}", "127.0.0.1 127.0.0.2"},
	    {"{.users[0].name}", "myself"},
	    {"{.users[-1].name}", "e2e"},
	    {"{.items[*]['metadata.name', 'status.capacity']}",
	     "127.0.0.1 127.0.0.2 {\"cpu\":\"4\"} {\"cpu\":\"8\"}"},
	    {"{.users[?(@.name==\"e2e\")].user.password}", "secret"},
	    {"{.users[?(@.name!=\"e2e\")].name}", "myself"},
	    {"{.items[?(@.status.capacity.cpu)].metadata.name}", "127.0.0.1 127.0.0.2"},
	    {"{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
	     "[127.0.0.1, {\"cpu\":\"4\"}] [127.0.0.2, {\"cpu\":\"8\"}] "},
	    {"{range .items[*]}{.metadata.name}{'\\t'}{end}", "127.0.0.1\t127.0.0.2\t"},
	    {"{range .items[*]}{.metadata.name}{\"\\n\"}{end}", "127.0.0.1\n127.0.0.2\n"},
	    {"{.items[0].metadata.labels.kubernetes\\.io/hostname}", "127.0.0.1"},
	    {"{.items[1].status.addresses[0:2].type}", "LegacyHostIP another"},
	    {"{.items[1].status.addresses[-1:].address}", "127.0.0.3"},
	    {"{.items[*].status.addresses[?(@.type==\"another\")].address}", "127.0.0.3"},
	    {"{range .items[*]}{range .status.addresses[*]}{.address};{end}{end}",
	     "127.0.0.1;127.0.0.2;127.0.0.3;"},
	    /* missing keys print nothing, as kubectl's default --allow-missing-template-keys */
	    {"a{.nothere}b{.items[*].nothere}c", "abc"},
	    {"{.users[1].user}", "{\"password\":\"secret\",\"username\":\"admin\"}"},
	    {"{@.kind}", "List"},
	};
	json_t *doc = json_loads(doc_text, 0, NULL);
	char err[256];

	ck_assert_ptr_nonnull(doc);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = run(cases[i].tmpl, doc, err, sizeof(err));

		ck_assert_msg(got, "%s: %s", cases[i].tmpl, err);
		ck_assert_msg(strcmp(got, cases[i].want) == 0, "%s: got '%s', want '%s'",
			      cases[i].tmpl, got, cases[i].want);
		free(got);
	}
	json_decref(doc);
}
END_TEST

START_TEST(numbers_and_filters)
{
	json_t *doc = json_loads("{\"a\":[{\"n\":1,\"x\":\"one\"},{\"n\":2.5,\"x\":\"two\"},"
				 "{\"n\":3,\"x\":\"three\",\"b\":true}]}",
				 0, NULL);
	static const struct {
		const char *tmpl, *want;
	} cases[] = {
	    {"{.a[*].n}", "1 2.5 3"},		{"{.a[?(@.n>1)].x}", "two three"},
	    {"{.a[?(@.n<=2.5)].x}", "one two"}, {"{.a[?(@.b==true)].x}", "three"},
	    {"{.a[0,2].x}", "one three"},	{"{.a[::2].x}", "one three"},
	    {"{.a[1:].x}", "two three"},	{"{.a[*].b}", "true"},
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = run(cases[i].tmpl, doc, err, sizeof(err));

		ck_assert_msg(got, "%s: %s", cases[i].tmpl, err);
		ck_assert_msg(strcmp(got, cases[i].want) == 0, "%s: got '%s', want '%s'",
			      cases[i].tmpl, got, cases[i].want);
		free(got);
	}
	json_decref(doc);
}
END_TEST

START_TEST(errors)
{
	static const struct {
		const char *tmpl, *msg;
	} cases[] = {
	    {"{.a", "unclosed action at offset 0"},
	    {"x{.a[}", "in {.a[}: "},
	    {"{.a[0}", "expected ']'"},
	    {"{range .items[*]}{.a}", "range without end"},
	    {"{end}", "not in range, nothing to end"},
	    {"{.a[?(@.x==)]}", "filter: expected @path"},
	    {"{.a[?@.x]}", "expected '('"},
	    {"{\"abc}", "unclosed action"},
	    {"{.a b}", "unexpected 'b'"},
	    {"{.a[x]}", "invalid array index"},
	};
	json_t *doc = json_loads("{\"a\":[1]}", 0, NULL);
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(!run(cases[i].tmpl, doc, err, sizeof(err)), "%s was accepted",
			      cases[i].tmpl);
		ck_assert_msg(strstr(err, cases[i].msg), "%s: '%s' does not say '%s'",
			      cases[i].tmpl, err, cases[i].msg);
	}
	/* an index outside the array is an error when run, as in kubectl */
	ck_assert_ptr_null(run("{.a[3]}", doc, err, sizeof(err)));
	ck_assert_str_eq(err, "array index out of bounds: index 3, length 1");
	json_decref(doc);
}
END_TEST

START_TEST(columns)
{
	json_t *doc =
	    json_loads("{\"metadata\":{\"name\":\"p\",\"labels\":{\"b\":\"2\",\"a\":\"1\"}},"
		       "\"spec\":{\"containers\":[{\"name\":\"c1\"},{\"name\":\"c2\"}]}}",
		       0, NULL);
	static const struct {
		const char *col, *want;
	} cases[] = {
	    {".metadata.name", "p"},
	    {"metadata.name", "p"},
	    {"{.metadata.name}", "p"},
	    {".spec.containers[*].name", "c1,c2"},
	    {".metadata.labels", "map[a:1 b:2]"},
	    {".status.phase", "<none>"},
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = podctl_relaxed_path(cases[i].col);
		struct podctl_jsonpath *jp = podctl_jsonpath_parse(t, err, sizeof(err));
		json_t *vals;
		char *cell;

		ck_assert_msg(jp, "%s: %s", t, err);
		vals = podctl_jsonpath_find(jp, doc, err, sizeof(err));
		ck_assert_ptr_nonnull(vals);
		cell = podctl_column_text(vals);
		ck_assert_msg(strcmp(cell, cases[i].want) == 0, "%s: got '%s'", cases[i].col, cell);
		free(cell);
		json_decref(vals);
		podctl_jsonpath_free(jp);
		free(t);
	}
	json_decref(doc);
}
END_TEST

START_TEST(budget)
{
	json_t *doc = json_object();
	char err[256];

	/* 300 levels of {"a": ...}: each ".." multiplies the values by the depth */
	for (int i = 0; i < 300; i++)
		doc = json_pack("{s:o}", "a", doc);
	ck_assert_ptr_null(run("{..a..a..a..a}", doc, err, sizeof(err)));
	ck_assert_msg(strstr(err, "too much work"), "%s", err);
	json_decref(doc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("podctl-jsonpath");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, reference_examples);
	tcase_add_test(tc, numbers_and_filters);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, columns);
	tcase_add_test(tc, budget);
	tcase_set_timeout(tc, 30); /* the budget test does a million steps, under ASan */
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
