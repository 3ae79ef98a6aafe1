/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kube.c — the Kubernetes client's pieces that need no server: the
 * in-cluster credentials of a pod's service account, resource paths and
 * query escaping, and what list and watch answers must be to decode; and the
 * headers one request carries (a one-shot socket answers it), a token file
 * that cannot be read stopping the request before it is sent, a refused
 * connection not taken for a TLS failure.  Talking to a server (informers,
 * the Lease elector, concurrent bindings) is tested end to end by
 * tests/e2e/test_attach*.sh, TLS failures by tests/e2e/test_podctl_kubeconfig.sh.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel/kube/kube.h"

static char dir[256];

static void put(const char *name, const char *text)
{
	char path[400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/pk-kube-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

START_TEST(test_in_cluster)
{
	struct pk_kube_credentials c = {0};
	char err[256] = "", want[400];

	ck_assert_int_eq(kube_credentials_in_cluster(dir, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "KUBERNETES_SERVICE_HOST"));
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	/* no token yet: an error naming the file */
	ck_assert_int_eq(kube_credentials_in_cluster(dir, &c, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/token"));
	put("token", "eyJhbGciOi.token\n");
	put("ca.crt", "-----BEGIN CERTIFICATE-----\n");
	put("namespace", "podkernel-system");
	ck_assert_int_eq(kube_credentials_in_cluster(dir, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.server, "https://10.96.0.1:443");
	snprintf(want, sizeof(want), "%s/token", dir);
	ck_assert_str_eq(c.token_file, want); /* a file: the token rotates */
	ck_assert_ptr_null(c.token);
	snprintf(want, sizeof(want), "%s/ca.crt", dir);
	ck_assert_str_eq(c.ca_file, want);
	ck_assert_str_eq(c.namespace, "podkernel-system");
	pk_kube_credentials_clear(&c);
	/* IPv6 service address */
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	ck_assert_int_eq(kube_credentials_in_cluster(dir, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.server, "https://[fd00::1]:443");
	pk_kube_credentials_clear(&c);
}
END_TEST

START_TEST(test_paths_and_escaping)
{
	const struct kube_resource pods = {"Pod", "", "v1", "pods", true};
	const struct kube_resource lease = {"Lease", "coordination.k8s.io", "v1", "leases", true};
	const struct kube_resource nodes = {"Node", "", "v1", "nodes", false};
	char buf[128], tiny[16];

	ck_assert_int_eq(kube_resource_path(&pods, NULL, NULL, NULL, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/api/v1/pods");
	ck_assert_int_eq(kube_resource_path(&pods, "ns", "p", "binding", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/api/v1/namespaces/ns/pods/p/binding");
	ck_assert_int_eq(kube_resource_path(&lease, "kube-system", "x", NULL, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x");
	ck_assert_int_eq(kube_resource_path(&nodes, "ns", "n1", "status", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/api/v1/nodes/n1/status");
	ck_assert_int_eq(kube_resource_path(&lease, "kube-system", "x", NULL, tiny, sizeof(tiny)),
			 -ENAMETOOLONG);
	ck_assert_str_eq(kube_escape("a b/c=d&e~f.g", buf, sizeof(buf)), "a%20b%2Fc%3Dd%26e~f.g");
	/* a continue token longer than the buffer is cut, never overflows */
	ck_assert_uint_lt(strlen(kube_escape("//////////////////", tiny, sizeof(tiny))),
			  sizeof(tiny));
}
END_TEST

static int decode_list(const char *text)
{
	json_t *ans = json_loads(text, 0, NULL);
	const json_t *items;
	const char *rv, *cont;
	int r = kube_list_decode(ans, &items, &rv, &cont);

	json_decref(ans);
	return r;
}

static int decode_event(const char *line, enum kube_watch_type *ret_type)
{
	struct kube_watch_event ev;
	int r = kube_watch_decode(line, strlen(line), &ev);

	*ret_type = ev.type;
	kube_watch_event_clear(&ev);
	return r;
}

START_TEST(test_decoding)
{
	enum kube_watch_type t;

	ck_assert_int_eq(decode_list("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":"
				     "\"7\"},\"items\":[{\"metadata\":{\"name\":\"p\"}}]}"),
			 0);
	ck_assert_int_eq(
	    decode_list(
		"{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":null}"),
	    0);
	/* what a proxy or a confused server may answer with 200 */
	ck_assert_int_eq(decode_list("<html><body>502 Bad Gateway</body></html>"), -EBADMSG);
	ck_assert_int_eq(decode_list("{\"kind\":\"Status\",\"status\":\"Success\"}"), -EBADMSG);
	ck_assert_int_eq(decode_list("{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":{}}"),
			 -EBADMSG);
	ck_assert_int_eq(decode_list("{\"metadata\":{},\"items\":[]}"), -EBADMSG);
	ck_assert_int_eq(decode_list("{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{}]}"),
			 -EBADMSG);
	ck_assert_int_eq(decode_list("{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{"
				     "\"metadata\":{\"name\":\"a\\u0000b\"}}]}"),
			 -EBADMSG); /* a NUL in a string does not even parse */

	ck_assert_int_eq(decode_event("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":"
				      "\"p\",\"resourceVersion\":\"3\"}}}",
				      &t),
			 0);
	ck_assert_int_eq(t, KUBE_WATCH_ADDED);
	ck_assert_int_eq(decode_event("{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{"
				      "\"resourceVersion\":\"3\"}}}",
				      &t),
			 0);
	ck_assert_int_eq(t, KUBE_WATCH_BOOKMARK);
	ck_assert_int_eq(
	    decode_event("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}", &t),
	    0);
	ck_assert_int_eq(t, KUBE_WATCH_ERROR);
	ck_assert_int_eq(decode_event("{\"kind\":\"Status\",\"code\":403}", &t), 0);
	ck_assert_int_eq(t, KUBE_WATCH_ERROR);
	ck_assert_int_eq(decode_event(" \r", &t), 0);
	ck_assert_int_eq(t, KUBE_WATCH_BLANK);
	ck_assert_int_eq(decode_event("<html>", &t), -EBADMSG);
	ck_assert_int_eq(decode_event("{\"type\":\"SOMETHING\",\"object\":{}}", &t), -EBADMSG);
	ck_assert_int_eq(decode_event("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":"
				      "\"p\"}}}",
				      &t),
			 -EBADMSG); /* no resourceVersion to resume from */
	ck_assert_int_eq(decode_event("{\"type\":\"DELETED\",\"object\":{\"metadata\":{"
				      "\"resourceVersion\":\"3\"}}}",
				      &t),
			 -EBADMSG); /* no name */
	ck_assert_int_eq(decode_event("{\"type\":\"ADDED\"}", &t), -EBADMSG);
}
END_TEST

/* A server for one request: it keeps the request's head and answers {}. */
struct one_shot {
	int fd;
	char head[4096];
};

static void *serve_one(void *arg)
{
	struct one_shot *o = arg;
	static const char ans[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				  "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
	int c = accept(o->fd, NULL, NULL);
	size_t n = 0;
	ssize_t k;

	if (c < 0)
		return NULL;
	while (n + 1 < sizeof(o->head) && !strstr(o->head, "\r\n\r\n") &&
	       (k = read(c, o->head + n, sizeof(o->head) - 1 - n)) > 0) {
		n += (size_t)k;
		o->head[n] = '\0';
	}
	if (write(c, ans, sizeof(ans) - 1) < 0)
		o->head[0] = '\0';
	close(c);
	return NULL;
}

static struct kube_client *client_for(const char *server, const char *token_file)
{
	struct pk_kube_credentials cr = {0};
	struct kube_client *c = NULL;

	cr.server = strdup(server);
	cr.token_file = token_file ? strdup(token_file) : NULL;
	ck_assert_int_eq(kube_client_new(&cr, &c), 0);
	return c;
}

START_TEST(test_request_headers)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	struct one_shot o = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
	struct kube_client *c;
	struct kube_conn *conn;
	char url[64], tok[400];
	json_t *ans = NULL;
	long status = 0;
	pthread_t t;

	/* a token file that cannot be read: nothing is sent, the file is named */
	snprintf(tok, sizeof(tok), "%s/token", dir);
	c = client_for("http://127.0.0.1:1", tok);
	ck_assert_int_eq(kube_conn_new(c, &conn), 0);
	ck_assert_int_eq(kube_request(conn, "GET", "/api", NULL, NULL, 2000, &status, &ans),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(kube_conn_error(conn), "token file"));
	ck_assert_ptr_nonnull(strstr(kube_conn_error(conn), tok));
	ck_assert(!kube_conn_tls_failure(conn));
	/* once readable, the request goes out: a refused connection is no TLS failure */
	put("token", "tok-1\n");
	ck_assert_int_eq(kube_request(conn, "GET", "/api", NULL, NULL, 2000, &status, &ans), -EIO);
	ck_assert_str_ne(kube_conn_error(conn), "");
	ck_assert(!kube_conn_tls_failure(conn));
	kube_conn_free(conn);
	kube_client_free(c);

	/* the headers: the token file's token, the program's User-Agent, the patch's type */
	ck_assert_int_ge(o.fd, 0);
	ck_assert_int_eq(bind(o.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(o.fd, 1), 0);
	ck_assert_int_eq(getsockname(o.fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
	c = client_for(url, tok);
	ck_assert_int_eq(kube_client_set_user_agent(c, "bad\r\nX-Injected: 1"), -EINVAL);
	ck_assert_int_eq(kube_client_set_user_agent(c, ""), -EINVAL);
	ck_assert_int_eq(kube_client_set_user_agent(c, "podctl/9.9.9"), 0);
	ck_assert_int_eq(kube_conn_new(c, &conn), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, serve_one, &o), 0);
	json_t *patch = json_pack("{s:{s:s}}", "metadata", "name", "x");
	ck_assert_int_eq(kube_request(conn, "PATCH", "/api/v1/nodes/x",
				      "application/merge-patch+json", patch, 5000, &status, &ans),
			 0);
	pthread_join(t, NULL);
	json_decref(patch);
	ck_assert_int_eq(status, 200);
	ck_assert(json_is_object(ans));
	json_decref(ans);
	ck_assert_ptr_nonnull(strstr(o.head, "PATCH /api/v1/nodes/x HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(strstr(o.head, "\r\nAuthorization: Bearer tok-1\r\n"));
	ck_assert_ptr_nonnull(strstr(o.head, "\r\nUser-Agent: podctl/9.9.9\r\n"));
	ck_assert_ptr_nonnull(strstr(o.head, "\r\nContent-Type: application/merge-patch+json\r\n"));
	ck_assert_ptr_nonnull(strstr(o.head, "\r\nAccept: application/json\r\n"));
	ck_assert_ptr_null(strstr(o.head, "X-Injected"));
	kube_conn_free(conn);
	kube_client_free(c);
	close(o.fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kube");
	TCase *tc = tcase_create("client");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_in_cluster);
	tcase_add_test(tc, test_paths_and_escaping);
	tcase_add_test(tc, test_decoding);
	tcase_add_test(tc, test_request_headers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
