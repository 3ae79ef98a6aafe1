/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_config.c — podkerneld's configuration file (kernel/podkerneld/
 * config.c): each field becomes its flag with the value as the flag's
 * argument (numbers as written, a true bool a switch, a false one nothing),
 * YAML and JSON alike; refusals name the file and the field's path.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podkerneld/config.h"

#define HEAD "apiVersion: podkernel.io/v1alpha1\nkind: PodkerneldConfiguration\n"

static struct pkd_config *parse(const char *text, int want, const char *want_err)
{
	struct pkd_config *c = NULL;
	char err[512] = "";
	int r = pkd_config_parse("c.yaml", text, strlen(text), &c, err, sizeof(err));

	ck_assert_int_eq(r, want);
	if (want_err)
		ck_assert_msg(strstr(err, want_err), "%s", err);
	return c;
}

static const char *flag(const struct pkd_config *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->flags[i].flag, name) == 0)
			return c->flags[i].value ? c->flags[i].value : "(switch)";
	return NULL;
}

START_TEST(test_fields_become_flags)
{
	struct pkd_config *c =
	    parse(HEAD "listen: 0.0.0.0:6443\nstrategy: kep\nnoScheduling: false\n"
		       "logging: {format: json, verbosity: 3}\n"
		       "audit: {path: /var/log/a.log, maxSize: 100}\n"
		       "connections: {requestHeaderTimeout: 2.5}\n"
		       "leaderElection: {leaderElect: true, leaseDuration: 15}\n",
		  0, NULL);

	ck_assert_str_eq(flag(c, "listen"), "0.0.0.0:6443");
	ck_assert_str_eq(flag(c, "strategy"), "kep");
	ck_assert_ptr_null(flag(c, "no-scheduling"));
	ck_assert_str_eq(flag(c, "log-format"), "json");
	ck_assert_str_eq(flag(c, "v"), "3");
	ck_assert_str_eq(flag(c, "audit-log-path"), "/var/log/a.log");
	ck_assert_str_eq(flag(c, "audit-log-maxsize"), "100");
	ck_assert_str_eq(flag(c, "request-header-timeout"), "2.5");
	ck_assert_str_eq(flag(c, "leader-elect"), "(switch)");
	ck_assert_str_eq(flag(c, "leader-elect-lease-duration"), "15");
	ck_assert_uint_eq(c->n, 9);
	pkd_config_free(c);
	c = parse(
	    "{\"apiVersion\": \"podkernel.io/v1alpha1\", \"kind\": \"PodkerneldConfiguration\","
	    " \"dataDir\": \"/d\"}",
	    0, NULL);
	ck_assert_str_eq(flag(c, "data-dir"), "/d");
	pkd_config_free(c);
}
END_TEST

START_TEST(test_refusals_name_the_field)
{
	parse(HEAD "logging: {colour: true}\n", -EINVAL, "c.yaml: logging.colour: unknown field");
	parse(HEAD "audit: {maxSize: big}\n", -EINVAL,
	      "c.yaml: audit.maxSize: expected an integer");
	parse(HEAD "logging: json\n", -EINVAL, "c.yaml: logging: expected a mapping");
	parse(HEAD "noScheduling: yes\n", -EINVAL, "c.yaml: noScheduling: expected a boolean");
	parse("kind: PodkerneldConfiguration\n", -EINVAL, "c.yaml: apiVersion: expected");
	parse("apiVersion: podkernel.io/v1alpha1\nkind: Other\n", -EINVAL,
	      "c.yaml: kind: expected");
	parse(HEAD "listen: a\nlisten: b\n", -EINVAL, "c.yaml");
	parse("- 1\n", -EINVAL, "c.yaml: expected a mapping");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fields_become_flags);
	tcase_add_test(tc, test_refusals_name_the_field);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
