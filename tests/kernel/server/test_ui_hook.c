/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ui_hook.c — the /ui/ hook of kernel/server: the page is public, the
 * data under /ui/api/ needs a token that may read Nodes and Pods, only GET
 * is served, and a path the hook does not serve (or no hook) is a 404.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server.h"

static char dir[256];
static struct pk_store *st;
static struct pk_server *srv;
static int calls;

static void setup(void)
{
	char path[300], err[256];

	snprintf(dir, sizeof(dir), "/tmp/pk-ui-hook-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tokens", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("admintok,admin,1,\"system:masters\"\nbobtok,bob,2\n", f);
	fclose(f);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	struct pk_server_config cfg = {.token_auth_file = path};
	ck_assert_int_eq(pk_server_new(st, &cfg, &srv, err, sizeof(err)), 0);
	calls = 0;
}

static void teardown(void)
{
	char cmd[300];

	pk_server_free(srv);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Serves /ui/ (the page) and /ui/api/x; anything else is not its path. */
static int hook(void *arg, const struct pk_request *req, struct pk_response *resp)
{
	const char *tag = arg;

	calls++;
	if (strcmp(req->path, "/ui/") != 0 && strcmp(req->path, "/ui/api/x") != 0)
		return -ENOENT;
	resp->status = 200;
	resp->content_type = "text/plain";
	if (asprintf(&resp->body, "%s %s", tag, req->path) < 0)
		return -ENOMEM;
	resp->body_len = strlen(resp->body);
	return 0;
}

static int call(const char *method, const char *path, const char *token, char **ret_body)
{
	char auth[128];
	struct pk_response resp;

	snprintf(auth, sizeof(auth), "Bearer %s", token ? token : "");
	struct pk_request req = {
	    .method = method,
	    .path = path,
	    .authorization = token ? auth : NULL,
	};
	ck_assert_int_eq(pk_server_handle(srv, &req, &resp), 0);
	int status = resp.status;
	if (ret_body)
		*ret_body = resp.body ? strndup(resp.body, resp.body_len) : NULL;
	pk_response_clear(&resp);
	return status;
}

START_TEST(test_no_hook_is_404)
{
	ck_assert_int_eq(call("GET", "/ui/", NULL, NULL), 404);
	ck_assert_int_eq(call("GET", "/ui/api/x", "admintok", NULL), 404);
	ck_assert_int_eq(call("GET", "/ui/api/x", NULL, NULL), 401);
}
END_TEST

START_TEST(test_page_public_data_authenticated)
{
	char *body = NULL;

	pk_server_set_ui_hook(srv, hook, "map");
	ck_assert_int_eq(call("GET", "/ui/", NULL, &body), 200);
	ck_assert_str_eq(body, "map /ui/");
	free(body);
	ck_assert_int_eq(call("GET", "/ui/api/x", NULL, NULL), 401);
	ck_assert_int_eq(call("GET", "/ui/api/x", "wrong", NULL), 401);
	ck_assert_int_eq(calls, 1);
	ck_assert_int_eq(call("GET", "/ui/api/x", "admintok", &body), 200);
	ck_assert_str_eq(body, "map /ui/api/x");
	free(body);
	/* Any authenticated user may read Nodes and Pods, so the map too. */
	ck_assert_int_eq(call("GET", "/ui/api/x", "bobtok", NULL), 200);
	ck_assert_int_eq(call("GET", "/ui/nothing", NULL, NULL), 404);
	ck_assert_int_eq(call("GET", "/ui/api/nothing", "admintok", NULL), 404);
	ck_assert_int_eq(call("POST", "/ui/api/x", "admintok", NULL), 405);
	ck_assert_int_eq(call("DELETE", "/ui/", NULL, NULL), 405);
	/* Cleared: not called again. */
	pk_server_set_ui_hook(srv, NULL, NULL);
	int before = calls;
	ck_assert_int_eq(call("GET", "/ui/", NULL, NULL), 404);
	ck_assert_int_eq(calls, before);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("server-ui-hook");
	TCase *tc = tcase_create("ui");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_no_hook_is_404);
	tcase_add_test(tc, test_page_public_data_authenticated);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
