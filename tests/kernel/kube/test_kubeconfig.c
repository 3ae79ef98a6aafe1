/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kubeconfig.c — kernel/kube/kubeconfig.c: kubectl's loading and merge
 * rules ($KUBECONFIG lists, first file wins, relative paths), context
 * resolution with command-line overrides, field-path errors on bad files,
 * base64, and a written kubeconfig read back.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kube/kubeconfig.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pk-kubeconfig-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char sub[96];
	snprintf(sub, sizeof(sub), "%s/b", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *put(const char *name, const char *text)
{
	static char path[8][128];
	static int next;
	char *p = path[next++ % 8];
	snprintf(p, 128, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* "hello CA\n" in base64 */
#define CA_B64 "aGVsbG8gQ0EK"

static const char FILE_A[] =
    "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
    "clusters:\n"
    "- name: shared\n  cluster: {server: 'https://a.example:6443', "
    "certificate-authority-data: " CA_B64 "}\n"
    "- name: only-a\n  cluster: {server: 'https://only-a:6443', certificate-authority: ca.pem}\n"
    "users:\n"
    "- name: alice\n  user: {token: tok-a}\n"
    "- name: filer\n  user: {tokenFile: tok.txt, client-certificate: c.pem, client-key: k.pem}\n"
    "contexts:\n"
    "- name: a\n  context: {cluster: shared, user: alice, namespace: team-a}\n"
    "- name: files\n  context: {cluster: only-a, user: filer}\n";

static const char FILE_B[] =
    "apiVersion: v1\nkind: Config\ncurrent-context: b\n"
    "clusters:\n"
    "- name: shared\n  cluster: {server: 'https://b.example:6443'}\n"
    "- name: only-b\n  cluster: {server: 'https://only-b:6443', certificate-authority: ca.pem}\n"
    "users:\n- name: bob\n  user: {token: tok-b}\n"
    "contexts:\n- name: b\n  context: {cluster: only-b, user: bob}\n";

START_TEST(test_base64)
{
	char *out;
	size_t n;
	ck_assert_int_eq(pk_base64_decode(CA_B64, strlen(CA_B64), &out, &n), 0);
	ck_assert_uint_eq(n, 9);
	ck_assert_str_eq(out, "hello CA\n");
	free(out);
	ck_assert_int_eq(pk_base64_decode("aGk=\n", 5, &out, &n), 0);
	ck_assert_str_eq(out, "hi");
	free(out);
	ck_assert_int_eq(pk_base64_decode("a!b=", 4, &out, &n), -EINVAL);
	ck_assert_int_eq(pk_base64_decode("aGk=aGk", 7, &out, &n), -EINVAL);
	ck_assert_int_eq(pk_base64_decode("a", 1, &out, &n), -EINVAL);
	for (size_t len = 0; len < 7; len++) {
		const char *text = "abcdefg";
		char *enc = pk_base64_encode(text, len);
		ck_assert_int_eq(pk_base64_decode(enc, strlen(enc), &out, &n), 0);
		ck_assert_uint_eq(n, len);
		ck_assert(memcmp(out, text, len) == 0);
		free(out);
		free(enc);
	}
}
END_TEST

START_TEST(test_current_context)
{
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_credentials c;
	char err[512] = "";
	const char *a = put("a.yaml", FILE_A);

	ck_assert_msg(pk_kubeconfig_load(a, NULL, NULL, &kc, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(pk_kubeconfig_current_context(kc), "a");
	ck_assert_msg(pk_kubeconfig_resolve(kc, NULL, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c.context, "a");
	ck_assert_str_eq(c.server, "https://a.example:6443");
	ck_assert_str_eq(c.token, "tok-a");
	ck_assert_str_eq(c.namespace, "team-a");
	ck_assert_uint_eq(c.ca_data_len, 9);
	ck_assert(memcmp(c.ca_data, "hello CA\n", 9) == 0);
	ck_assert_ptr_null(c.ca_file);
	pk_kube_credentials_clear(&c);

	/* --context: relative paths resolve against the file's directory */
	struct pk_kube_overrides o = {.context = "files"};
	char want[160];
	ck_assert_msg(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)) == 0, "%s", err);
	snprintf(want, sizeof(want), "%s/ca.pem", dir);
	ck_assert_str_eq(c.ca_file, want);
	snprintf(want, sizeof(want), "%s/tok.txt", dir);
	ck_assert_str_eq(c.token_file, want);
	snprintf(want, sizeof(want), "%s/k.pem", dir);
	ck_assert_str_eq(c.key_file, want);
	ck_assert_ptr_null(c.token);
	pk_kube_credentials_clear(&c);
	pk_kubeconfig_free(kc);
}
END_TEST

/* $KUBECONFIG: first file wins each name and current-context; missing files skipped. */
START_TEST(test_merge)
{
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_credentials c;
	char err[512] = "", env[512], want[160];
	const char *a = put("a.yaml", FILE_A);
	const char *b = put("b/b.yaml", FILE_B);

	snprintf(env, sizeof(env), "%s/missing.yaml::%s:%s:%s", dir, b, a, b);
	ck_assert_msg(pk_kubeconfig_load(NULL, env, NULL, &kc, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(pk_kubeconfig_current_context(kc), "b");
	struct pk_kube_overrides o = {.context = "a"};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.server, "https://b.example:6443"); /* b named "shared" first */
	ck_assert_ptr_null(c.ca_data);
	ck_assert_str_eq(c.token, "tok-a");
	pk_kube_credentials_clear(&c);
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, NULL, &c, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/b/ca.pem", dir);
	ck_assert_str_eq(c.ca_file, want);
	pk_kube_credentials_clear(&c);
	pk_kubeconfig_free(kc);

	/* the other order: a's entries win */
	snprintf(env, sizeof(env), "%s:%s", a, b);
	ck_assert_int_eq(pk_kubeconfig_load(NULL, env, NULL, &kc, err, sizeof(err)), 0);
	ck_assert_str_eq(pk_kubeconfig_current_context(kc), "a");
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, NULL, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.server, "https://a.example:6443");
	pk_kube_credentials_clear(&c);
	pk_kubeconfig_free(kc);

	/* an explicit file that is missing is an error; ~/.kube/config is optional */
	ck_assert_int_eq(pk_kubeconfig_load(env, NULL, NULL, &kc, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(pk_kubeconfig_load(NULL, NULL, dir, &kc, err, sizeof(err)), 0);
	ck_assert_ptr_null(pk_kubeconfig_current_context(kc));
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, NULL, &c, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "no server") != NULL, "%s", err);
	pk_kubeconfig_free(kc);
}
END_TEST

START_TEST(test_overrides)
{
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_credentials c;
	char err[512] = "";

	ck_assert_int_eq(
	    pk_kubeconfig_load(put("a.yaml", FILE_A), NULL, NULL, &kc, err, sizeof(err)), 0);
	struct pk_kube_overrides o = {.context = "files",
				      .server = "https://other:1",
				      .token = "T",
				      .ca_file = "/x/ca.pem",
				      .namespace = "ns1"};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.server, "https://other:1");
	ck_assert_str_eq(c.token, "T");
	ck_assert_ptr_null(c.token_file); /* --token replaces the token file */
	ck_assert_str_eq(c.ca_file, "/x/ca.pem");
	ck_assert_str_eq(c.namespace, "ns1");
	pk_kube_credentials_clear(&c);

	/* --certificate-authority replaces the CA data */
	struct pk_kube_overrides o2 = {.ca_file = "/x/ca.pem"};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o2, &c, err, sizeof(err)), 0);
	ck_assert_ptr_null(c.ca_data);
	pk_kube_credentials_clear(&c);

	/* --insecure-skip-tls-verify drops the configured CA; with --certificate-authority it is
	 * refused */
	struct pk_kube_overrides o3 = {.insecure = true};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o3, &c, err, sizeof(err)), 0);
	ck_assert(c.insecure);
	ck_assert_ptr_null(c.ca_data);
	pk_kube_credentials_clear(&c);
	o3.ca_file = "/x/ca.pem";
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o3, &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "insecure") != NULL, "%s", err);

	/* missing names */
	struct pk_kube_overrides o4 = {.context = "nope"};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o4, &c, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "context \"nope\" not found in the kubeconfig");
	struct pk_kube_overrides o5 = {.user = "carol"};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o5, &c, err, sizeof(err)), -ENOENT);
	/* only overrides, no kubeconfig */
	struct pk_kube_overrides o6 = {.server = "http://127.0.0.1:1", .token = "x"};
	ck_assert_int_eq(pk_kubeconfig_resolve(NULL, &o6, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.server, "http://127.0.0.1:1");
	pk_kube_credentials_clear(&c);
	struct pk_kube_overrides o7 = {.server = "ftp://x"};
	ck_assert_int_eq(pk_kubeconfig_resolve(NULL, &o7, &c, err, sizeof(err)), -EINVAL);
	pk_kubeconfig_free(kc);
}
END_TEST

/* tls-server-name and proxy-url reach the credentials; --server drops the name (clientcmd). */
START_TEST(test_server_name_and_proxy)
{
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_credentials c;
	char err[512] = "";
	static const char text[] =
	    "clusters:\n"
	    "- name: p\n  cluster: {server: 'https://10.0.0.1:6443', tls-server-name: api.internal,"
	    " proxy-url: 'socks5://127.0.0.1:1080'}\n"
	    "- name: ftp\n  cluster: {server: 'https://10.0.0.1:6443', proxy-url: 'ftp://x'}\n"
	    "users: [{name: u, user: {token: t}}]\n"
	    "contexts:\n- name: p\n  context: {cluster: p, user: u}\n"
	    "- name: ftp\n  context: {cluster: ftp, user: u}\n"
	    "current-context: p\n";

	ck_assert_int_eq(pk_kubeconfig_load(put("p.yaml", text), NULL, NULL, &kc, err, sizeof(err)),
			 0);
	struct pk_kube_overrides o = {.context = NULL};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.tls_server_name, "api.internal");
	ck_assert_str_eq(c.proxy_url, "socks5://127.0.0.1:1080");
	pk_kube_credentials_clear(&c);
	o.server = "https://elsewhere:6443";
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), 0);
	ck_assert_ptr_null(c.tls_server_name);
	ck_assert_str_eq(c.proxy_url, "socks5://127.0.0.1:1080");
	pk_kube_credentials_clear(&c);
	struct pk_kube_overrides o2 = {.context = "ftp"};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o2, &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "proxy-url \"ftp://x\"") != NULL, "%s", err);
	pk_kubeconfig_free(kc);
}
END_TEST

/* Impersonation is refused by name, not dropped (the user would act as itself). */
START_TEST(test_impersonation_refused)
{
	static const char *const users[] = {
	    "{token: t, as: bob}",
	    "{token: t, as-groups: [system:masters]}",
	    "{token: t, as-uid: '42'}",
	    "{token: t, as-user-extra: {scopes: [view]}}",
	};
	static const char *const named[] = {"(as)", "(as-groups)", "(as-uid)", "(as-user-extra)"};

	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		struct pk_kubeconfig *kc = NULL;
		struct pk_kube_credentials c;
		struct pk_kube_overrides o = {.context = NULL};
		char text[512], err[512] = "";

		snprintf(text, sizeof(text),
			 "clusters: [{name: c, cluster: {server: 'https://s:6443'}}]\n"
			 "users: [{name: u, user: %s}]\n"
			 "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
			 "current-context: x\n",
			 users[i]);
		ck_assert_int_eq(
		    pk_kubeconfig_load(put("imp.yaml", text), NULL, NULL, &kc, err, sizeof(err)),
		    0);
		ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), -ENOTSUP);
		ck_assert_msg(strstr(err, named[i]) && strstr(err, "impersonation"), "%s", err);
		pk_kubeconfig_free(kc);
	}
	/* an empty one asks for nothing */
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_credentials c;
	struct pk_kube_overrides o = {.context = NULL};
	char err[512] = "";

	ck_assert_int_eq(
	    pk_kubeconfig_load(put("imp.yaml",
				   "clusters: [{name: c, cluster: {server: 'https://s'}}]\n"
				   "users: [{name: u, user: {token: t, as: ''}}]\n"
				   "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
				   "current-context: x\n"),
			       NULL, NULL, &kc, err, sizeof(err)),
	    0);
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), 0);
	pk_kube_credentials_clear(&c);
	pk_kubeconfig_free(kc);
}
END_TEST

/* Bad files: each error names the file and the field path. */
START_TEST(test_errors)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"clusters: {a: 1}\n", "clusters: must be a list"},
	    {"clusters:\n- cluster: {server: x}\n", "clusters[0].name: Required value"},
	    {"users:\n- name: u\n  user: {token: 5}\n", "users[0].user.token: must be a string"},
	    {"clusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: yes}\n",
	     "clusters[0].cluster.insecure-skip-tls-verify: must be true or false"},
	    {"contexts:\n- name: x\n  context: {}\n- name: x\n  context: {}\n",
	     "contexts[1].name: Duplicate value: \"x\""},
	    {"kind: Pod\n", "kind: must be Config"},
	    {"current-context: [a]\n", "current-context: must be a string"},
	    {"a: 1\n---\nb: 2\n", "expected one kubeconfig document, found 2"},
	    {"clusters: [\n", ""},
	};
	struct pk_kubeconfig *kc = NULL;
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(pk_kubeconfig_parse("k.yaml", "/d", bad[i].text,
						     strlen(bad[i].text), &kc, err, sizeof(err)),
				 -EINVAL);
		ck_assert_msg(strncmp(err, "k.yaml:", 7) == 0 && strstr(err, bad[i].want),
			      "case %zu: %s", i, err);
	}
	/* base64 and plugins are reported when the context is used */
	static const char plug[] =
	    "clusters:\n- name: c\n  cluster: {server: 'https://s', certificate-authority-data: "
	    "'!!'}\n"
	    "users:\n- name: u\n  user: {exec: {command: gke-gcloud-auth-plugin}}\n"
	    "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
	    "- name: y\n  context: {cluster: d, user: u}\n"
	    "current-context: x\n";
	struct pk_kube_credentials c;
	ck_assert_int_eq(
	    pk_kubeconfig_parse("k.yaml", "/d", plug, strlen(plug), &kc, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, NULL, &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "certificate-authority-data: not valid base64"), "%s", err);
	struct pk_kube_overrides o = {.context = "y", .server = "https://s"};
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), -ENOTSUP);
	ck_assert_msg(strstr(err, "exec plugin"), "%s", err);
	o.token = "t"; /* --token stands in for the plugin */
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, &o, &c, err, sizeof(err)), 0);
	pk_kube_credentials_clear(&c);
	pk_kubeconfig_free(kc);
	/* entries without their mapping, a context refused: nothing is left allocated
	 * (the leak sanitizer of the check build sees it otherwise) */
	static const char bare[] = "clusters:\n- name: bare\nusers:\n- name: u\n  user: null\n"
				   "contexts: [{name: x, context: {cluster: bare, user: u}}]\n"
				   "current-context: x\n";
	ck_assert_int_eq(
	    pk_kubeconfig_parse("k.yaml", "/d", bare, strlen(bare), &kc, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, NULL, &c, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "no server"), "%s", err);
	pk_kubeconfig_free(kc);
}
END_TEST

START_TEST(test_write_read_back)
{
	char path[128], err[512] = "";
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_credentials c;
	struct stat stbuf;
	const char *ca =
	    put("ca.crt", "-----BEGIN CERTIFICATE-----\nxyz\n-----END CERTIFICATE-----\n");

	snprintf(path, sizeof(path), "%s/admin.kubeconfig", dir);
	ck_assert_msg(pk_kubeconfig_write(path, "podkernel", "https://127.0.0.1:6443", ca, "s3cret",
					  err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(stat(path, &stbuf), 0);
	ck_assert_int_eq(stbuf.st_mode & 0777, 0600);
	ck_assert_int_eq(pk_kubeconfig_load(path, NULL, NULL, &kc, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_kubeconfig_resolve(kc, NULL, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.server, "https://127.0.0.1:6443");
	ck_assert_str_eq(c.token, "s3cret");
	ck_assert_uint_eq(c.ca_data_len, 58);
	ck_assert(strncmp(c.ca_data, "-----BEGIN CERTIFICATE-----\nxyz\n", 32) == 0);
	pk_kube_credentials_clear(&c);
	pk_kubeconfig_free(kc);
	ck_assert_int_eq(pk_kubeconfig_write("/nonexistent-dir/k", "n", "https://x", NULL, "t", err,
					     sizeof(err)),
			 -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kubeconfig");
	TCase *tc = tcase_create("kubeconfig");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_base64);
	tcase_add_test(tc, test_current_context);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_overrides);
	tcase_add_test(tc, test_server_name_and_proxy);
	tcase_add_test(tc, test_impersonation_refused);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_write_read_back);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
