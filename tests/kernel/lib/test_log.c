/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_log.c — the log line (kernel/lib/log.c): an RFC 3339 UTC timestamp
 * with milliseconds, the level's name, the program; trailing key=value
 * fields kept as written in text and made members in JSON (quoted values
 * unquoted, escapes and non-UTF-8 bytes made valid JSON); a line cut to its
 * room is still one line and, in JSON, still closed; errno words for users.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/log.h"

static const struct timespec WHEN = {.tv_sec = 1796611283, .tv_nsec = 45678901};

static const char *line(enum pk_log_format f, int level, const char *msg)
{
	static char out[512];

	pk_log_format_line(f, "podkerneld", level, &WHEN, msg, out, sizeof(out));
	return out;
}

START_TEST(test_text)
{
	ck_assert_str_eq(
	    line(PK_LOG_TEXT, 1, "serving on 127.0.0.1:0 (port 1)"),
	    "2026-12-07T02:41:23.045Z info podkerneld: serving on 127.0.0.1:0 (port 1)\n");
	ck_assert_str_eq(line(PK_LOG_TEXT, 0, "a\nb"),
			 "2026-12-07T02:41:23.045Z error podkerneld: a b\n");
	ck_assert_str_eq(line(PK_LOG_TEXT, 3, "x"),
			 "2026-12-07T02:41:23.045Z debug podkerneld: x\n");
}
END_TEST

START_TEST(test_json_fields)
{
	ck_assert_str_eq(
	    line(PK_LOG_JSON, 2, "request user=\"a \\\"b\\\"\" verb=get code=200"),
	    "{\"ts\":\"2026-12-07T02:41:23.045Z\",\"level\":\"info\",\"logger\":\"podkerneld\","
	    "\"msg\":\"request\",\"user\":\"a \\\"b\\\"\",\"verb\":\"get\",\"code\":\"200\"}\n");
	/* a=b followed by words is no field list: all of it is the message */
	ck_assert_str_eq(line(PK_LOG_JSON, 1, "x=1 then words"),
			 "{\"ts\":\"2026-12-07T02:41:23.045Z\",\"level\":\"info\",\"logger\":"
			 "\"podkerneld\",\"msg\":\"x=1 then words\"}\n");
	/* a byte that is not UTF-8, a control character */
	ck_assert_str_eq(line(PK_LOG_JSON, 0, "bad \xff\x01 é"),
			 "{\"ts\":\"2026-12-07T02:41:23.045Z\",\"level\":\"error\",\"logger\":"
			 "\"podkerneld\",\"msg\":\"bad \\ufffd\\u0001 é\"}\n");
}
END_TEST

START_TEST(test_cut_lines_stay_whole)
{
	char msg[3000], out[200];
	size_t n;

	memset(msg, 'q', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	memcpy(msg, "m k=\"", 5);
	n = pk_log_format_line(PK_LOG_JSON, "p", 1, &WHEN, msg, out, sizeof(out));
	ck_assert_uint_eq(n, strlen(out));
	ck_assert_uint_lt(n, sizeof(out));
	ck_assert_str_eq(out + n - 3, "\"}\n");
	n = pk_log_format_line(PK_LOG_TEXT, "p", 1, &WHEN, msg, out, sizeof(out));
	ck_assert_uint_eq(n, sizeof(out) - 1);
	ck_assert_int_eq(out[n - 1], '\n');
}
END_TEST

START_TEST(test_quote_and_errno)
{
	char buf[32];

	ck_assert_str_eq(pk_log_quote("admin", buf, sizeof(buf)), "admin");
	ck_assert_str_eq(pk_log_quote("a b", buf, sizeof(buf)), "\"a b\"");
	ck_assert_str_eq(pk_log_quote("", buf, sizeof(buf)), "\"\"");
	ck_assert_str_eq(pk_errno_text(-ENOENT), "not found");
	ck_assert_str_eq(pk_errno_text(EEXIST), "already exists");
	enum pk_log_format f;
	ck_assert_int_eq(pk_log_format_parse("json", &f), 0);
	ck_assert_int_eq(f, PK_LOG_JSON);
	ck_assert_int_eq(pk_log_format_parse("xml", &f), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("line");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_json_fields);
	tcase_add_test(tc, test_cut_lines_stay_whole);
	tcase_add_test(tc, test_quote_and_errno);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
