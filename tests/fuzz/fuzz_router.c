/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_router.c — libFuzzer target for podkerneld's request router and body
 * handling, without sockets.  An input is a small HTTP-like text:
 *
 *     METHOD PATH[?QUERY]\n
 *     Header: value\n ...   (Content-Type, Accept, Authorization, Impersonate-*)
 *     \n
 *     BODY
 *
 * It is handed to pk_server_handle() against one store (in /dev/shm when
 * there is one, so durable commits stay cheap) and a token file with one
 * admin and one node token; watch responses are read once.  Crashes,
 * sanitizer reports, leaks and a response without a status are findings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/builder/builder.h"
#include "kernel/server/server.h"

static struct pk_store *store;
static struct pk_server *server;
static char workdir[64];

static void cleanup(void)
{
	static const char *const files[] = {"tokens", "podkernel.db", "podkernel.db-wal",
					    "podkernel.db-shm"};
	pk_server_free(server);
	pk_store_close(store);
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%s", workdir, files[i]);
		unlink(path);
	}
	rmdir(workdir);
}

static void init(void)
{
	char dir[] = "/dev/shm/pk-fuzz-router-XXXXXX", dir2[] = "/tmp/pk-fuzz-router-XXXXXX";
	char *d = mkdtemp(dir);
	if (!d)
		d = mkdtemp(dir2);
	if (!d)
		abort();
	char path[128], err[256];
	snprintf(path, sizeof(path), "%s/tokens", d);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs("admin,admin,1,system:masters\nnode,system:node:n1,2,system:nodes\n", f);
	fclose(f);
	struct pk_server_config cfg = {.token_auth_file = path};
	/* as podkerneld opens it: Jobs and JobSets admitted by the builder */
	struct pk_store_open_opts so = {.admission = wb_admission, .nadmission = WB_ADMISSION_N};
	if (pk_store_open_opts(d, &so, &store, err, sizeof(err)) < 0 ||
	    pk_server_new(store, &cfg, &server, err, sizeof(err)) < 0)
		abort();
	snprintf(workdir, sizeof(workdir), "%s", d);
	atexit(cleanup);
}

/*
 * URL-decoding is the transport's job; the fuzzer feeds raw pieces ("%00" in
 * a value: cut there, as the transport reports a decoded NUL byte).
 */
static size_t split_query(char *q, struct pk_query_arg *args, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *kv = strtok_r(q, "&", &save); kv && n < max;
	     kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '='), *nul;
		if (eq)
			*eq++ = '\0';
		nul = eq ? strstr(eq, "%00") : NULL;
		if (nul)
			*nul = '\0';
		args[n++] = (struct pk_query_arg){kv, eq ? eq : "", nul != NULL};
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!server)
		init();
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	struct pk_request req = {0};
	struct pk_query_arg args[16], imp[32];
	char *line_end = strchr(buf, '\n');
	char *rest = line_end ? line_end + 1 : buf + size;
	if (line_end)
		*line_end = '\0';
	char *sp = strchr(buf, ' ');
	req.method = buf;
	req.path = "/";
	if (sp) {
		*sp = '\0';
		req.path = sp + 1;
		char *q = strchr(sp + 1, '?');
		if (q) {
			*q = '\0';
			req.nargs = split_query(q + 1, args, 16);
			req.args = args;
		}
	}
	while (*rest && *rest != '\n') {
		char *eol = strchr(rest, '\n');
		if (eol)
			*eol = '\0';
		if (strncasecmp(rest, "Content-Type: ", 14) == 0)
			req.content_type = rest + 14;
		else if (strncasecmp(rest, "Accept: ", 8) == 0)
			req.accept = rest + 8;
		else if (strncasecmp(rest, "Authorization: ", 15) == 0)
			req.authorization = rest + 15;
		else if (strncasecmp(rest, "Impersonate-", 12) == 0 && strstr(rest, ": ") &&
			 req.nimpersonate < 32) {
			char *colon = strstr(rest, ": ");

			*colon = '\0';
			imp[req.nimpersonate++] = (struct pk_query_arg){rest, colon + 2};
			req.impersonate = imp;
		}
		rest = eol ? eol + 1 : buf + size;
	}
	if (*rest == '\n')
		rest++;
	req.body = rest;
	req.body_len = (size_t)(buf + size - rest);
	struct pk_response resp;
	pk_server_handle(server, &req, &resp);
	if (resp.status < 100 || resp.status > 599)
		abort();
	if (resp.watch) {
		char out[4096];
		pk_watch_read(resp.watch, out, sizeof(out), 0);
	}
	pk_response_clear(&resp);
	free(buf);
	return 0;
}
