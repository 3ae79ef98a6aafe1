/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of topology/labels.c: DNS names, label keys and values, sanitizing. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topology/topology.h"

static char *repeat(char c, size_t n)
{
	static char buf[600];

	ck_assert_uint_lt(n, sizeof(buf));
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

START_TEST(dns_label)
{
	ck_assert(topo_dns_label_valid("a"));
	ck_assert(topo_dns_label_valid("tpu-ss0-h12"));
	ck_assert(topo_dns_label_valid("0abc9"));
	ck_assert(topo_dns_label_valid(repeat('a', 63)));
	ck_assert(!topo_dns_label_valid(repeat('a', 64)));
	ck_assert(!topo_dns_label_valid(""));
	ck_assert(!topo_dns_label_valid(NULL));
	ck_assert(!topo_dns_label_valid("-a"));
	ck_assert(!topo_dns_label_valid("a-"));
	ck_assert(!topo_dns_label_valid("Abc"));
	ck_assert(!topo_dns_label_valid("a.b"));
	ck_assert(!topo_dns_label_valid("a_b"));
}
END_TEST

START_TEST(dns_subdomain)
{
	char buf[300];

	ck_assert(topo_dns_subdomain_valid("podkernel.dev"));
	ck_assert(topo_dns_subdomain_valid("topology.podkernel.dev"));
	ck_assert(topo_dns_subdomain_valid("a"));
	ck_assert(!topo_dns_subdomain_valid(""));
	ck_assert(!topo_dns_subdomain_valid(".a"));
	ck_assert(!topo_dns_subdomain_valid("a."));
	ck_assert(!topo_dns_subdomain_valid("a..b"));
	ck_assert(!topo_dns_subdomain_valid("a.-b"));
	ck_assert(!topo_dns_subdomain_valid("Example.com"));
	/* 253 characters exactly: labels of 63 joined by dots. */
	snprintf(buf, sizeof(buf), "%s.", repeat('a', 63));
	strcat(buf, repeat('b', 63));
	strcat(buf, ".");
	strcat(buf, repeat('c', 63));
	strcat(buf, ".");
	strcat(buf, repeat('d', 61));
	ck_assert_uint_eq(strlen(buf), 253);
	ck_assert(topo_dns_subdomain_valid(buf));
	strcat(buf, "d");
	ck_assert(!topo_dns_subdomain_valid(buf));
}
END_TEST

START_TEST(label_key)
{
	char why[256];
	char key[400];

	ck_assert(topo_label_key_valid("kubernetes.io/hostname", why, sizeof(why)));
	ck_assert(topo_label_key_valid("topology.podkernel.dev/superslice", NULL, 0));
	ck_assert(topo_label_key_valid("app", why, sizeof(why)));
	ck_assert(topo_label_key_valid("My_Key.v1-x", why, sizeof(why)));
	ck_assert(topo_label_key_valid(repeat('k', 63), why, sizeof(why)));

	why[0] = '\0';
	ck_assert(!topo_label_key_valid(repeat('k', 64), why, sizeof(why)));
	ck_assert_str_eq(why, "label key name part must be no more than 63 characters");
	ck_assert(!topo_label_key_valid("", why, sizeof(why)));
	ck_assert_str_eq(why, "label key must not be empty");
	ck_assert(!topo_label_key_valid("/name", why, sizeof(why)));
	ck_assert_str_eq(why, "label key prefix part must not be empty");
	ck_assert(!topo_label_key_valid("example.com/", why, sizeof(why)));
	ck_assert_str_eq(why, "label key name part must not be empty");
	ck_assert(!topo_label_key_valid("a/b/c", why, sizeof(why)));
	ck_assert(strstr(why, "optional DNS subdomain prefix"));
	ck_assert(!topo_label_key_valid("Example.com/name", why, sizeof(why)));
	ck_assert(strstr(why, "RFC 1123 subdomain"));
	ck_assert(!topo_label_key_valid("-name", why, sizeof(why)));
	ck_assert(strstr(why, "start and end with an alphanumeric"));
	ck_assert(!topo_label_key_valid("name_", why, sizeof(why)));
	ck_assert(!topo_label_key_valid("na me", why, sizeof(why)));
	/* Prefix longer than 253. */
	snprintf(key, sizeof(key), "%s/x", repeat('a', 254));
	ck_assert(!topo_label_key_valid(key, why, sizeof(why)));
	ck_assert(strstr(why, "no more than 253"));
	/* A tiny why buffer is cut, never overrun. */
	ck_assert(!topo_label_key_valid("", why, 4));
	ck_assert_str_eq(why, "lab");
}
END_TEST

START_TEST(label_value)
{
	char why[256];

	ck_assert(topo_label_value_valid("", why, sizeof(why)));
	ck_assert(topo_label_value_valid("4.0.12", why, sizeof(why)));
	ck_assert(topo_label_value_valid("google", why, sizeof(why)));
	ck_assert(topo_label_value_valid("A_b-c.D", why, sizeof(why)));
	ck_assert(topo_label_value_valid(repeat('v', 63), why, sizeof(why)));
	ck_assert(!topo_label_value_valid(repeat('v', 64), why, sizeof(why)));
	ck_assert_str_eq(why, "label value must be no more than 63 characters");
	ck_assert(!topo_label_value_valid(".a", why, sizeof(why)));
	ck_assert(strstr(why, "label value must consist of"));
	ck_assert(!topo_label_value_valid("a/b", why, sizeof(why)));
	ck_assert(!topo_label_value_valid("a b", why, sizeof(why)));
	ck_assert(!topo_label_value_valid(NULL, why, sizeof(why)));
}
END_TEST

START_TEST(sanitize)
{
	char out[64];
	char small[4];

	ck_assert_int_eq(topo_label_value_sanitize("Intel(R) Xeon(R) 8480", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "Intel-R--Xeon-R--8480");
	ck_assert(topo_label_value_valid(out, NULL, 0));
	ck_assert_int_eq(topo_label_value_sanitize("--a/b--", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "a-b");
	ck_assert_int_eq(topo_label_value_sanitize("ok", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "ok");
	ck_assert_int_eq(topo_label_value_sanitize("!!!", out, sizeof(out)), -EINVAL);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(topo_label_value_sanitize("", out, sizeof(out)), -EINVAL);
	/* Cut to 63, then trailing separators dropped again. */
	char in[100];
	memset(in, 'x', 62);
	in[62] = '.';
	in[63] = 'y';
	in[64] = '\0';
	ck_assert_int_eq(topo_label_value_sanitize(in, out, sizeof(out)), 0);
	ck_assert_uint_eq(strlen(out), 62);
	ck_assert(topo_label_value_valid(out, NULL, 0));
	ck_assert_int_eq(topo_label_value_sanitize("abcdef", small, sizeof(small)), -ENOSPC);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("labels");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, dns_label);
	tcase_add_test(tc, dns_subdomain);
	tcase_add_test(tc, label_key);
	tcase_add_test(tc, label_value);
	tcase_add_test(tc, sanitize);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
