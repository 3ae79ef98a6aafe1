/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c — serving pk_server_handle() over libmicrohttpd.
 *
 * One thread per connection (watch streams block in their content reader).
 * The access handler collects the request body (beyond PK_SERVER_MAX_BODY it
 * keeps draining but remembers "too large"), gathers the query arguments and
 * the few headers the router needs, and turns the pk_response into an MHD
 * response: a buffer, or a chunked stream fed by pk_watch_read().  TLS is
 * MHD's (GnuTLS) with the PEM files loaded at start; plain HTTP is refused on
 * a non-loopback address unless explicitly allowed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kernel/server/server-private.h"

#define MAX_ARGS 64

int pk_server_new(struct pk_store *store, const struct pk_server_config *cfg,
		  struct pk_server **ret, char *err, size_t errlen)
{
	if (!store || !cfg)
		return -EINVAL;
	if (!!cfg->tls_cert_file != !!cfg->tls_key_file) {
		snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
		return -EINVAL;
	}
	struct pk_server *srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->store = store;
	srv->listen = strdup(cfg->listen ? cfg->listen : PK_SERVER_DEFAULT_LISTEN);
	srv->token_file = cfg->token_auth_file ? strdup(cfg->token_auth_file) : NULL;
	srv->tls_cert_file = cfg->tls_cert_file ? strdup(cfg->tls_cert_file) : NULL;
	srv->tls_key_file = cfg->tls_key_file ? strdup(cfg->tls_key_file) : NULL;
	srv->insecure_non_loopback = cfg->insecure_allow_non_loopback;
	srv->verbosity = cfg->verbosity;
	srv->log = cfg->log;
	srv->log_arg = cfg->log_arg;
	pthread_mutex_init(&srv->auth_lock, NULL);
	pthread_mutex_init(&srv->metrics_lock, NULL);
	pthread_mutex_init(&srv->hook_lock, NULL);
	if (srv->token_file) {
		FILE *f = fopen(srv->token_file, "re");
		char *buf = NULL;
		size_t len = 0;
		int rc = f ? 0 : -errno;
		if (f) {
			if (fseek(f, 0, SEEK_END) == 0 && ftell(f) >= 0 && ftell(f) < (4 << 20)) {
				len = (size_t)ftell(f);
				rewind(f);
				buf = malloc(len + 1);
				if (!buf || fread(buf, 1, len, f) != len)
					rc = -EIO;
			} else {
				rc = -EFBIG;
			}
			fclose(f);
		}
		if (rc < 0)
			snprintf(err, errlen, "%s: %s", srv->token_file, strerror(-rc));
		else
			rc = pk_tokens_parse(srv->token_file, buf, len, &srv->tokens, err, errlen);
		free(buf);
		if (rc == 0)
			stat(srv->token_file, &srv->token_stat);
		if (rc < 0) {
			pk_server_free(srv);
			return rc;
		}
		srv->token_checked = time(NULL);
	}
	*ret = srv;
	return 0;
}

/* ---- address ---------------------------------------------------------------- */
struct addr {
	struct sockaddr_storage ss;
	bool v6, loopback;
};

static int parse_listen(const char *s, struct addr *a, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(s, ':');
	memset(a, 0, sizeof(*a));
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		goto bad;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		goto bad;
	if (host[0] == '[') {
		size_t n = strlen(host);
		if (n < 2 || host[n - 1] != ']')
			goto bad;
		host[n - 1] = '\0';
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			goto bad;
		a->v6 = true;
		a->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
		return 0;
	}
	struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
		goto bad;
	a->loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	return 0;
bad:
	snprintf(err, errlen, "--listen %s: expected ADDR:PORT (IPv4 or [IPv6])", s);
	return -EINVAL;
}

/* ---- MHD glue --------------------------------------------------------------------- */
struct conn_ctx {
	char *body;
	size_t len, cap;
	bool too_large;
};

struct arg_collect {
	struct pk_query_arg args[MAX_ARGS];
	size_t n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	(void)kind;
	struct arg_collect *c = cls;
	if (c->n < MAX_ARGS)
		c->args[c->n++] = (struct pk_query_arg){ key, value };
	return MHD_YES;
}

/*
 * Blocks until events come.  After WATCH_HEARTBEAT_S quiet seconds it sends a
 * heartbeat (a BOOKMARK event or a lone newline): writing is the only way to
 * notice a client that went away, and that frees the connection's thread.
 */
#define WATCH_HEARTBEAT_S 15
static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct pk_watch *w = cls;
	for (int quiet = 0;; quiet++) {
		ssize_t n = pk_watch_read(w, buf, max, 1000);
		if (n > 0)
			return n;
		if (n < 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (quiet + 1 >= WATCH_HEARTBEAT_S) {
			n = pk_watch_heartbeat(w, buf, max);
			if (n > 0)
				return n;
		}
	}
}

static void watch_done(void *cls)
{
	pk_watch_free(cls);
}

static int body_append(struct conn_ctx *c, const char *data, size_t n)
{
	if (c->too_large || c->len + n > PK_SERVER_MAX_BODY) {
		c->too_large = true;
		return 0;
	}
	if (c->len + n + 1 > c->cap) {
		size_t cap = (c->len + n + 1) * 2;
		char *nb = realloc(c->body, cap);
		if (!nb)
			return -ENOMEM;
		c->body = nb;
		c->cap = cap;
	}
	memcpy(c->body + c->len, data, n);
	c->len += n;
	c->body[c->len] = '\0';
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	(void)version;
	struct pk_server *srv = cls;
	struct conn_ctx *c = *con_cls;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return MHD_NO;
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_size) {
		if (body_append(c, upload, *upload_size) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	struct arg_collect args = { .n = 0 };
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	struct pk_request req = {
		.method = method,
		.path = url,
		.args = args.args,
		.nargs = args.n,
		.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"),
		.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
		.accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"),
		.body = c->body,
		.body_len = c->len,
		.body_too_large = c->too_large,
	};
	struct pk_response resp;
	pk_server_handle(srv, &req, &resp);
	struct MHD_Response *r;
	if (resp.watch) {
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, watch_reader,
						      resp.watch, watch_done);
		if (!r)
			pk_watch_free(resp.watch);
		resp.watch = NULL;
	} else {
		r = MHD_create_response_from_buffer(resp.body_len, resp.body, MHD_RESPMEM_MUST_FREE);
		if (r)
			resp.body = NULL;
	}
	if (!r) {
		pk_response_clear(&resp);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", resp.content_type ? resp.content_type
								   : "application/json");
	if (resp.status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"podkerneld\"");
	if (c->too_large)
		MHD_add_response_header(r, "Connection", "close");
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp.status, r);
	MHD_destroy_response(r);
	pk_response_clear(&resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	struct conn_ctx *c = *con_cls;
	if (c) {
		free(c->body);
		free(c);
		*con_cls = NULL;
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct pk_server *srv = cls;
	char buf[512];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	size_t n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	server_log(srv, 1, "http: %s", buf);
}

static char *slurp(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;
	if (f) {
		FILE *m = open_memstream(&buf, &len);
		char chunk[4096];
		size_t n;
		while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0 && len < (1 << 20))
			fwrite(chunk, 1, n, m);
		if (m)
			fclose(m);
		fclose(f);
	}
	if (!buf || !len) {
		snprintf(err, errlen, "%s: %s", path, f ? "empty file" : strerror(errno));
		free(buf);
		return NULL;
	}
	return buf;
}

int pk_server_start(struct pk_server *srv, char *err, size_t errlen)
{
	struct addr a;
	int rc = parse_listen(srv->listen, &a, err, errlen);
	if (rc < 0)
		return rc;
	bool tls = srv->tls_cert_file != NULL;
	if (!a.loopback && !tls && !srv->insecure_non_loopback) {
		snprintf(err, errlen,
			 "refusing plain HTTP on non-loopback address %s: give "
			 "--tls-cert-file/--tls-private-key-file or --insecure-allow-non-loopback",
			 srv->listen);
		return -EPERM;
	}
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG | (a.v6 ? MHD_USE_IPv6 : 0);
	if (tls) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			snprintf(err, errlen, "this libmicrohttpd has no TLS support");
			return -ENOTSUP;
		}
		srv->tls_cert = slurp(srv->tls_cert_file, err, errlen);
		srv->tls_key = srv->tls_cert ? slurp(srv->tls_key_file, err, errlen) : NULL;
		if (!srv->tls_key)
			return -EINVAL;
		flags |= MHD_USE_TLS;
	}
	struct MHD_OptionItem opts[] = {
		{ MHD_OPTION_SOCK_ADDR, 0, &a.ss },
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, 1000, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, 300, NULL },
		{ tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, srv->tls_cert },
		{ tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, srv->tls_key },
		{ MHD_OPTION_END, 0, NULL },
	};
	struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv,
						MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
						MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!d) {
		snprintf(err, errlen, "cannot serve on %s%s (address in use, or bad TLS files?)",
			 srv->listen, tls ? " with TLS" : "");
		return -EADDRNOTAVAIL;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : 0;
	srv->mhd = d;
	server_log(srv, 1, "serving on %s (port %u)%s%s", srv->listen, srv->port,
		   tls ? " with TLS" : "", srv->token_file ? "" : ", no authentication");
	return 0;
}

uint16_t pk_server_port(const struct pk_server *srv)
{
	return srv->port;
}

void pk_server_stop(struct pk_server *srv)
{
	if (!srv || !srv->mhd)
		return;
	atomic_store(&srv->stopping, true);
	MHD_stop_daemon(srv->mhd);
	srv->mhd = NULL;
}

void pk_server_free(struct pk_server *srv)
{
	if (!srv)
		return;
	pk_server_stop(srv);
	pk_tokens_free(srv->tokens);
	free(srv->listen);
	free(srv->token_file);
	free(srv->tls_cert_file);
	free(srv->tls_key_file);
	free(srv->tls_cert);
	free(srv->tls_key);
	pthread_mutex_destroy(&srv->auth_lock);
	pthread_mutex_destroy(&srv->metrics_lock);
	pthread_mutex_destroy(&srv->hook_lock);
	free(srv);
}
