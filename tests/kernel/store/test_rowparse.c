/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rowparse.c — pk_row_parse() returns what json_loadb(body, len, 0,
 * NULL) returns: the same tree (types, values, members in the same order)
 * or NULL for the same bodies, over hand-picked bodies (escapes, \u,
 * UTF-8, reals, integer limits, repeated keys, nesting, bad syntax) and
 * over many mutations of them; and a store's list hands back exactly the
 * objects written; the loop's start-up list (verified_at_open) sums only
 * the rows written since the check at open.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store-internal.h"
#include "kernel/store/store.h"

static const char *const bodies[] = {
    "{}",
    "[]",
    " { } ",
    "{\"a\":1}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p0\",\"namespace\":"
    "\"scale-0\",\"labels\":{\"app\":\"scale\"},\"resourceVersion\":\"12\"},\"spec\":{"
    "\"nodeName\":\"tpu-ss0-h0\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":"
    "{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]},\"status\":{\"phase\":\"Running\"}}",
    "{\"s\":\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"}",
    "{\"k\\n\\t\":\"v\",\"x\":\"\\\\\"}",
    "{\"u\":\"\\u00e9\\u0041\"}",
    "{\"u\":\"\\ud83d\\ude00\"}",
    "{\"u\":\"\\u0000\"}",
    "{\"u\":\"\\ud83d\"}",
    "{\"utf8\":\"caf\xc3\xa9\"}",
    "{\"bad\":\"\xff\"}",
    "{\"bad\":\"\xc3\"}",
    "{\"ctl\":\"a\x01\"}",
    "{\"del\":\"a\x7f\"}",
    "{\"r\":1.5,\"e\":1e3,\"E\":-2E-2,\"z\":0.0}",
    "{\"i\":9223372036854775807,\"n\":-9223372036854775808}",
    "{\"big\":9223372036854775808}",
    "{\"neg\":-9223372036854775809}",
    "{\"z\":-0,\"o\":0}",
    "{\"lead\":01}",
    "{\"minus\":-}",
    "{\"minus\":-a}",
    "{\"dup\":1,\"b\":2,\"dup\":3}",
    "{\"t\":true,\"f\":false,\"n\":null}",
    "{\"t\":tru}",
    "{\"t\":truex}",
    "{\"t\":nul}",
    "[1,2,[3,[4,{}]],{\"a\":[]}]",
    "[1,]",
    "[,1]",
    "{\"a\":1,}",
    "{,\"a\":1}",
    "{\"a\"1}",
    "{\"a\":1 \"b\":2}",
    "{a:1}",
    "{\"a\":1} x",
    "{\"a\":1}}",
    "{\"a\":1",
    "{\"a\":\"unterminated}",
    "{\"a\":\"esc\\",
    "{\"a\":\"\\x\"}",
    "\"top\"",
    "1",
    "true",
    "",
    "   ",
    "\t{\r\n\"a\" :\t[ 1 , 2 ]\n}\n",
    "{\"\":\"\"}",
    "{\"empty\":{},\"arr\":[[]],\"s\":\"\"}",
};

/* Same tree, same order, or both NULL. */
static void same_as_jansson(const char *body, size_t len)
{
	json_t *want = json_loadb(body, len, 0, NULL);
	json_t *got = pk_row_parse(body, len);

	if (!want) {
		ck_assert_msg(!got, "accepted what json_loadb refuses: %.*s", (int)len, body);
		return;
	}
	ck_assert_msg(got, "refused what json_loadb takes: %.*s", (int)len, body);
	ck_assert_msg(json_equal(want, got), "a different tree: %.*s", (int)len, body);
	char *a = json_dumps(want, JSON_ENCODE_ANY), *b = json_dumps(got, JSON_ENCODE_ANY);

	ck_assert_str_eq(a, b); /* members in the same order, reals and integers as they were */
	free(a);
	free(b);
	json_decref(want);
	json_decref(got);
}

START_TEST(test_bodies)
{
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		same_as_jansson(bodies[i], strlen(bodies[i]));
	/* a body with a NUL inside: the length counts, not the terminator */
	same_as_jansson("{\"a\":1}\0{", 9);
	same_as_jansson("{\"a\":\"x\0y\"}", 11);
}
END_TEST

START_TEST(test_nesting)
{
	size_t n = 3000;
	char *deep = malloc(2 * n + 1);

	for (size_t d = 1; d <= n; d = d < 200 ? d + 50 : d * 2) {
		memset(deep, '[', d);
		memset(deep + d, ']', d);
		same_as_jansson(deep, 2 * d);
	}
	free(deep);
}
END_TEST

/* Every body with bytes deleted, replaced and swapped: the two agree on each. */
START_TEST(test_mutations)
{
	static const char alphabet[] = "{}[]\":,\\ 0-1.eE9tfnu\x01\x80\xc3";
	unsigned seed = 38;
	char buf[1024];

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		size_t len = strlen(bodies[i]);

		if (!len || len >= sizeof(buf))
			continue;
		for (int m = 0; m < 400; m++) {
			size_t at = (size_t)rand_r(&seed) % len, n = len;

			memcpy(buf, bodies[i], len);
			switch (rand_r(&seed) % 3) {
			case 0: /* delete a byte */
				memmove(buf + at, buf + at + 1, len - at - 1);
				n--;
				break;
			case 1: /* replace one */
				buf[at] = alphabet[(size_t)rand_r(&seed) % (sizeof(alphabet) - 1)];
				break;
			default: /* swap two */
			{
				size_t b = (size_t)rand_r(&seed) % len;
				char c = buf[at];

				buf[at] = buf[b];
				buf[b] = c;
			}
			}
			same_as_jansson(buf, n);
		}
	}
}
END_TEST

/* What a store hands back from a list is what was written, odd values included. */
START_TEST(test_store_round_trip)
{
	char dir[] = "/tmp/pk-rowparse-test-XXXXXX", err[256], cmd[300];
	struct pk_store *st;
	json_t *items = NULL, *obj;
	size_t i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	for (int k = 0; k < 4; k++) {
		char name[16];

		snprintf(name, sizeof(name), "p%d", k);
		obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s,s:s,s:s}},s:{s:[{s:s,s:s}]}}",
				"apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
				"namespace", "default", "annotations", "a", "caf\xc3\xa9 \"q\"\n",
				"ctl", "\x01\x1f\t", "slash", "a/b\\c", "emoji", "\xf0\x9f\x98\x80",
				"spec", "containers", "name", "c", "image", "x");
		ck_assert_int_eq(pk_store_create(st, obj, NULL, NULL), 0);
		json_decref(obj);
	}
	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, "default", NULL, &items, NULL, NULL), 0);
	ck_assert_uint_eq(json_array_size(items), 4);
	json_array_foreach(items, i, obj)
	{
		json_t *a = json_object_get(json_object_get(obj, "metadata"), "annotations");

		ck_assert_str_eq(json_string_value(json_object_get(a, "ctl")), "\x01\x1f\t");
		ck_assert_str_eq(json_string_value(json_object_get(a, "emoji")),
				 "\xf0\x9f\x98\x80");
		ck_assert_str_eq(json_string_value(json_object_get(a, "slash")), "a/b\\c");
		ck_assert_str_eq(json_string_value(json_object_get(a, "a")), "caf\xc3\xa9 \"q\"\n");
	}
	json_decref(items);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static void create_pod(struct pk_store *st, const char *ns, const char *name)
{
	json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1",
				"kind", "Pod", "metadata", "name", name, "namespace", ns, "spec",
				"containers", "name", "c", "image", "x");

	ck_assert_int_eq(pk_store_create(st, obj, NULL, NULL), 0);
	json_decref(obj);
}

static int list_ns(struct pk_store *st, const char *ns, bool verified_at_open, size_t *ret_n)
{
	struct pk_store_list_opts o = {.verified_at_open = verified_at_open};
	json_t *items = NULL;
	int r = pk_store_list(st, &pk_type_pod, ns, &o, &items, NULL, NULL);

	*ret_n = json_array_size(items);
	json_decref(items);
	return r;
}

/*
 * The loop's start-up list does not sum a row the check at open verified;
 * a row written since is summed, and a damaged row is still refused at the
 * next open.
 */
START_TEST(test_verified_at_open)
{
	char dir[] = "/tmp/pk-rowparse-test-XXXXXX", err[256], cmd[300];
	struct pk_store *st;
	size_t n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	create_pod(st, "a", "old");
	pk_store_close(st);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	ck_assert_uint_gt(st->verified_rv, 0);
	create_pod(st, "b", "new");
	/* both rows' checksums go wrong behind the store's back */
	ck_assert_int_eq(
	    sqlite3_exec(st->db, "UPDATE objects SET sum=sum+1 WHERE kind='Pod'", NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(list_ns(st, "a", false, &n), -EIO);
	ck_assert_int_eq(list_ns(st, "a", true, &n), 0); /* verified at open */
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(list_ns(st, "b", true, &n), -EIO); /* written since: summed */
	pk_store_close(st);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(err, "damaged row"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rowparse");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_bodies);
	tcase_add_test(tc, test_nesting);
	tcase_add_test(tc, test_mutations);
	tcase_add_test(tc, test_store_round_trip);
	tcase_add_test(tc, test_verified_at_open);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
