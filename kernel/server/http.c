/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c — serving pk_server_handle() over libmicrohttpd.
 *
 * An event loop, not a thread per connection: PK_SERVER_THREADS epoll threads
 * serve every connection, so idle or half-sent requests cost a socket and a
 * little memory, never a thread.  The socket side is the listener
 * (listener.c): deadlines on headers and bodies, caps in total and per client
 * address that close at once or displace the slowest connection, TLS 1.2 or
 * newer.  Request line and headers must fit in PK_SERVER_MAX_HEADER_BYTES.
 *
 * The access handler first sees the headers alone and answers there what the
 * body cannot change (no valid token, a declared body over the limit), so an
 * anonymous client never makes the server buffer a body.  Then it collects
 * the body (beyond PK_SERVER_MAX_BODY it keeps draining but remembers "too
 * large"), gathers every query argument and the few headers the router needs,
 * and turns the pk_response into an MHD response: a buffer, or a watch stream
 * (stream.c) that parks instead of blocking.  TLS is MHD's (GnuTLS) with the
 * PEM files loaded at start.  Off loopback, plain HTTP and running without a
 * token file (everyone admin) are refused unless explicitly allowed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kernel/server/server-internal.h"

int pk_server_new(struct pk_store *store, const struct pk_server_config *cfg,
		  struct pk_server **ret, char *err, size_t errlen)
{
	if (!store || !cfg)
		return -EINVAL;
	if (!!cfg->tls_cert_file != !!cfg->tls_key_file) {
		snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
		return -EINVAL;
	}
	if (cfg->client_ca_file && !cfg->tls_cert_file) {
		snprintf(err, errlen, "--client-ca-file needs TLS (--tls-cert-file)");
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
	srv->client_ca_file = cfg->client_ca_file ? strdup(cfg->client_ca_file) : NULL;
	srv->insecure_non_loopback = cfg->insecure_allow_non_loopback;
	srv->insecure_anonymous_admin = cfg->insecure_allow_anonymous_admin;
	snprintf(srv->node_lease_ns, sizeof(srv->node_lease_ns), "%s",
		 cfg->node_lease_namespace && *cfg->node_lease_namespace ? cfg->node_lease_namespace
									 : "kube-node-lease");
	srv->queue_controller_user =
	    cfg->queue_controller_user ? strdup(cfg->queue_controller_user) : NULL;
	srv->verbosity = cfg->verbosity;
	srv->log = cfg->log;
	srv->log_arg = cfg->log_arg;
	srv->limits = cfg->limits;
	srv->body_max = cfg->max_body_bytes_in_flight ? cfg->max_body_bytes_in_flight
						      : PK_SERVER_BODY_BYTES_IN_FLIGHT;
	srv->body_max_per_user = cfg->max_body_bytes_in_flight_per_user
				     ? cfg->max_body_bytes_in_flight_per_user
				     : PK_SERVER_BODY_BYTES_IN_FLIGHT_PER_USER;
	srv->body_users = json_object();
	pthread_mutex_init(&srv->body_lock, NULL);
	pk_listen_limits_fill(&srv->limits, PK_SERVER_MAX_CONNECTIONS,
			      PK_SERVER_MAX_CONNECTIONS_PER_ADDR);
	pthread_mutex_init(&srv->auth_lock, NULL);
	pthread_mutex_init(&srv->metrics_lock, NULL);
	pthread_mutex_init(&srv->hook_lock, NULL);
	pthread_mutex_init(&srv->park_lock, NULL);
	if (srv->token_file) {
		int rc = pk_tokens_load(srv->token_file, &srv->tokens, err, errlen);

		if (rc == 0)
			stat(srv->token_file, &srv->token_stat);
		if (rc == 0 && *srv->tokens->warning)
			pk_srv_log(srv, 0, "token file: %s", srv->tokens->warning);
		if (rc < 0) {
			pk_server_free(srv);
			return rc;
		}
		srv->token_checked = time(NULL);
	}
	clock_gettime(CLOCK_REALTIME, &srv->started);
	int ar = pk_srv_audit_open(srv, cfg, err, errlen);
	if (ar < 0) {
		pk_server_free(srv);
		return ar;
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
/*
 * The identity of a client certificate that verifies against the client CA:
 * CN the user, every O a group (kube-apiserver's x509 authenticator), so a
 * node can use its own identity (CN system:node:NAME, O system:nodes).  A
 * connection without a certificate, or with one that does not verify, has no
 * identity here and may still present a bearer token.
 */
#define PEER_MAX_GROUPS 16
struct peer_identity {
	char user[256];
	char group_buf[PEER_MAX_GROUPS][128];
	const char *groups[PEER_MAX_GROUPS];
	size_t ngroups;
};

/* The client's IP address as text into buf, or NULL. */
static const char *client_address(struct MHD_Connection *conn, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (sa && sa->sa_family == AF_INET)
		return inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
				 buf, (socklen_t)len);
	if (sa && sa->sa_family == AF_INET6)
		return inet_ntop(AF_INET6,
				 &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf,
				 (socklen_t)len);
	return NULL;
}

static void peer_identity(struct MHD_Connection *conn, struct peer_identity *ret)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t s = ci ? (gnutls_session_t)ci->tls_session : NULL;
	const gnutls_datum_t *certs;
	unsigned n = 0, status = 1;
	gnutls_x509_crt_t crt;
	size_t len;

	memset(ret, 0, sizeof(*ret));
	if (!s || gnutls_certificate_verify_peers2(s, &status) < 0 || status != 0 ||
	    !(certs = gnutls_certificate_get_peers(s, &n)) || n == 0 ||
	    gnutls_x509_crt_init(&crt) < 0)
		return;
	len = sizeof(ret->user);
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) < 0 ||
	    gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, ret->user, &len) <
		0)
		ret->user[0] = '\0';
	for (unsigned i = 0; ret->user[0] && ret->ngroups < PEER_MAX_GROUPS; i++) {
		char *g = ret->group_buf[ret->ngroups];

		len = sizeof(ret->group_buf[0]);
		if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i, 0, g,
						  &len) < 0)
			break;
		ret->groups[ret->ngroups++] = g;
	}
	gnutls_x509_crt_deinit(crt);
}

struct conn_ctx {
	char *body;
	size_t len, cap;
	bool too_large;
	bool over_budget;	   /* the bodies in flight were full: 429 */
	size_t reserved;	   /* bytes held in the in-flight budgets */
	char user[256];		   /* whose budget (from the precheck) */
	struct peer_identity peer; /* a verified client certificate, if any */
};

/* ---- bodies in flight ----------------------------------------------------------- */
/*
 * Every body being received holds its bytes (its declared Content-Length at
 * once, a chunked one as it grows) in two budgets: all bodies together, and
 * those of its user.  One that does not fit is answered 429 with
 * Retry-After, before its bytes are read when its length is declared.
 */
static bool budget_take(struct pk_server *srv, struct conn_ctx *c, size_t n)
{
	bool ok;

	pthread_mutex_lock(&srv->body_lock);
	json_t *u = json_object_get(srv->body_users, c->user);
	size_t mine = u ? (size_t)json_integer_value(u) : 0;

	ok = srv->body_total + n <= srv->body_max && mine + n <= srv->body_max_per_user;
	if (ok) {
		srv->body_total += n;
		c->reserved += n;
		json_object_set_new(srv->body_users, c->user, json_integer((json_int_t)(mine + n)));
	}
	pthread_mutex_unlock(&srv->body_lock);
	return ok;
}

static void budget_release(struct pk_server *srv, struct conn_ctx *c)
{
	if (!c->reserved)
		return;
	pthread_mutex_lock(&srv->body_lock);
	json_t *u = json_object_get(srv->body_users, c->user);
	size_t mine = u ? (size_t)json_integer_value(u) : 0;

	srv->body_total -= c->reserved < srv->body_total ? c->reserved : srv->body_total;
	if (mine <= c->reserved)
		json_object_del(srv->body_users, c->user);
	else
		json_object_set_new(srv->body_users, c->user,
				    json_integer((json_int_t)(mine - c->reserved)));
	pthread_mutex_unlock(&srv->body_lock);
	c->reserved = 0;
}

struct reservation {
	struct pk_server *srv;
	struct conn_ctx *c;
};

/* pk_request.reserve: decoding a body holds more than its bytes. */
static bool request_reserve(void *ctx, size_t n)
{
	struct reservation *r = ctx;
	return budget_take(r->srv, r->c, n);
}

static void respond_busy(struct pk_server *srv, struct pk_response *resp)
{
	pk_srv_respond_status(
	    resp, 429, "TooManyRequests", NULL, NULL, NULL,
	    "too many request bodies in flight (at most %zu bytes, %zu per user): "
	    "retry later",
	    srv->body_max, srv->body_max_per_user);
}

struct arg_list {
	struct pk_query_arg *v;
	size_t n, cap;
	bool oom;
};

/* Every query argument, in order: none is ever dropped (the router refuses too many). */
static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	struct arg_list *a = cls;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct pk_query_arg *v = realloc(a->v, cap * sizeof(*v));
		if (!v) {
			a->oom = true;
			return MHD_NO;
		}
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = (struct pk_query_arg){
	    key, value, (key && strlen(key) != key_size) || (value && strlen(value) != value_size)};
	return MHD_YES;
}

/* The Impersonate-* headers (impersonate.c reads them). */
static enum MHD_Result collect_impersonate(void *cls, enum MHD_ValueKind kind, const char *key,
					   const char *value)
{
	if (!key || strncasecmp(key, "Impersonate-", 12) != 0)
		return MHD_YES;
	return collect_arg(cls, kind, key, strlen(key), value, value ? strlen(value) : 0);
}

static int body_append(struct pk_server *srv, struct conn_ctx *c, const char *data, size_t n)
{
	if (c->too_large || c->over_budget || c->len + n > PK_SERVER_MAX_BODY) {
		c->too_large = !c->over_budget;
		return 0;
	}
	if (c->len + n > c->reserved && !budget_take(srv, c, c->len + n - c->reserved)) {
		c->over_budget = true; /* drained from now on, answered 429 */
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

/* A declared Content-Length over the limit is known before any byte of the body. */
static bool declared_too_large(struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	if (!cl)
		return false;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(cl, &end, 10);
	return errno == ERANGE || (end != cl && n > PK_SERVER_MAX_BODY);
}

/* One `Warning: 299 - "text"` header per line of warnings (RFC 7234 quoting). */
static void add_warnings(struct MHD_Response *r, const char *warnings)
{
	for (const char *w = warnings; w && *w;) {
		size_t n = strcspn(w, "\n"), o = 0;
		char hdr[1024];
		o += (size_t)snprintf(hdr, sizeof(hdr), "299 - \"");
		for (size_t i = 0; i < n && o + 4 < sizeof(hdr); i++) {
			if (w[i] == '"' || w[i] == '\\')
				hdr[o++] = '\\';
			hdr[o++] = w[i];
		}
		snprintf(hdr + o, sizeof(hdr) - o, "\"");
		MHD_add_response_header(r, "Warning", hdr);
		w += n + (w[n] == '\n');
	}
}

/* The declared body length (0: none declared, or chunked). */
static size_t declared_length(struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;

	return n > PK_SERVER_MAX_BODY ? 0 : (size_t)n;
}

static enum MHD_Result send_response(struct pk_server *srv, struct MHD_Connection *conn,
				     struct pk_response *resp, bool close)
{
	struct MHD_Response *r;
	if (resp->watch) {
		r = pk_srv_stream_response(srv, conn, resp->watch);
		resp->watch = NULL;
	} else {
		r = MHD_create_response_from_buffer(resp->body_len, resp->body,
						    MHD_RESPMEM_MUST_FREE);
		if (r)
			resp->body = NULL;
	}
	if (!r) {
		pk_response_clear(resp);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
				resp->content_type ? resp->content_type : "application/json");
	if (resp->status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"podkerneld\"");
	add_warnings(r, resp->warnings);
	if (resp->warnings_dropped) {
		char more[96];
		snprintf(more, sizeof(more), "299 - \"%zu more warnings were not shown\"",
			 resp->warnings_dropped);
		MHD_add_response_header(r, "Warning", more);
	}
	if (resp->status == 429 && !resp->no_retry_after)
		MHD_add_response_header(r, "Retry-After", "1");
	if (close)
		MHD_add_response_header(r, "Connection", "close");
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	pk_response_clear(resp);
	return ret;
}

/*
 * Called first with the request line and headers (con_cls still NULL): a
 * request that will be refused whatever its body (no valid token, a declared
 * body over the limit) is answered right there, before a byte of body is read.
 * Then once per body chunk, then once more to answer.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	(void)version;
	struct pk_server *srv = cls;
	struct conn_ctx *c = *con_cls;
	bool first = !c;
	if (first) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return MHD_NO;
		*con_cls = c;
		c->too_large = declared_too_large(conn);
		if (srv->client_ca)
			peer_identity(conn, &c->peer);
	} else if (*upload_size) {
		if (body_append(srv, c, upload, *upload_size) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	struct arg_list args = {0}, imp = {0};
	char remote[INET6_ADDRSTRLEN] = "";
	MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_impersonate, &imp);
	if (args.oom || imp.oom) {
		free(args.v);
		free(imp.v);
		return MHD_NO;
	}
	struct reservation rsv = {srv, c};
	struct pk_request req = {
	    .method = method,
	    .path = url,
	    .args = args.v,
	    .nargs = args.n,
	    .authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"),
	    .impersonate = imp.v,
	    .nimpersonate = imp.n,
	    .content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
	    .accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"),
	    .body = c->body,
	    .body_len = c->len,
	    .body_too_large = c->too_large,
	    .client_user = c->peer.user[0] ? c->peer.user : NULL,
	    .client_groups = c->peer.groups,
	    .nclient_groups = c->peer.ngroups,
	    .remote_addr = client_address(conn, remote, sizeof(remote)),
	    .user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent"),
	    .reserve = request_reserve,
	    .reserve_ctx = &rsv,
	};
	struct pk_response resp = {0};
	enum MHD_Result ret = MHD_YES;
	bool answer = !first;
	if (c->over_budget)
		respond_busy(srv, &resp);
	else if (!first)
		pk_server_handle(srv, &req, &resp);
	else if (pk_server_precheck(srv, &req, &resp, c->user, sizeof(c->user)))
		answer = true;
	else if (!budget_take(srv, c, declared_length(conn))) {
		respond_busy(srv, &resp);
		answer = true;
	}
	if (answer)
		ret = send_response(srv, conn, &resp, first || c->too_large || c->over_budget);
	free(args.v);
	free(imp.v);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)conn;
	(void)toe;
	struct conn_ctx *c = *con_cls;
	if (c) {
		budget_release(cls, c);
		free(c->body);
		free(c);
		*con_cls = NULL;
	}
}

static void listener_log(void *arg, int level, const char *msg)
{
	struct pk_server *srv = arg;

	pk_srv_log(srv, level, "http: %s", msg);
}

/* Could we bind a. now?  (Tells a TLS failure from an address in use.) */
static bool address_free(const struct addr *a)
{
	int fd = socket(a->v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	socklen_t len = a->v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	bool ok = bind(fd, (const struct sockaddr *)&a->ss, len) == 0;
	close(fd);
	return ok;
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
	if (!a.loopback && !srv->token_file && !srv->client_ca_file &&
	    !srv->insecure_anonymous_admin) {
		snprintf(err, errlen,
			 "refusing to serve %s without authentication (everyone would be admin): "
			 "give --token-auth-file or --insecure-allow-anonymous-admin",
			 srv->listen);
		return -EPERM;
	}
	if (tls) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			snprintf(err, errlen, "this libmicrohttpd has no TLS support");
			return -ENOTSUP;
		}
		srv->tls_cert = pk_listen_read_pem(srv->tls_cert_file, err, errlen);
		srv->tls_key =
		    srv->tls_cert ? pk_listen_read_pem(srv->tls_key_file, err, errlen) : NULL;
		if (!srv->tls_key)
			return -EINVAL;
		if (srv->client_ca_file &&
		    !(srv->client_ca = pk_listen_read_pem(srv->client_ca_file, err, errlen)))
			return -EINVAL;
	}
	const struct pk_listener_config lc = {
	    .addr = &a.ss,
	    .threads = PK_SERVER_THREADS,
	    .limits = srv->limits,
	    .header_bytes = PK_SERVER_MAX_HEADER_BYTES,
	    .suspend_resume = true,
	    .tls_cert = srv->tls_cert,
	    .tls_key = srv->tls_key,
	    /* a trust list makes libmicrohttpd ask clients for a certificate */
	    .tls_trust = srv->client_ca,
	    .handler = on_request,
	    .handler_arg = srv,
	    .completed = on_completed,
	    .completed_arg = srv,
	    .log = listener_log,
	    .log_arg = srv,
	};
	rc = pk_srv_stream_hub_start(srv);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the watch thread: %s", strerror(-rc));
		return rc;
	}
	char lerr[128];
	rc = pk_listener_start(&lc, &srv->listener, lerr, sizeof(lerr));
	if (rc < 0) {
		pk_srv_stream_hub_stop(srv);
		atomic_store(&srv->stopping, false);
		/* The address was free, so TLS is what failed: bad input. */
		if (tls && rc == -EADDRNOTAVAIL && address_free(&a)) {
			snprintf(err, errlen,
				 "cannot serve TLS with %s and %s (not a PEM certificate "
				 "and its private key?)",
				 srv->tls_cert_file, srv->tls_key_file);
			return -EINVAL;
		}
		snprintf(err, errlen, "cannot serve on %s%s (address in use?)", srv->listen,
			 tls ? " with TLS" : "");
		return rc == -ENOMEM ? rc : -EADDRNOTAVAIL;
	}
	srv->port = pk_listener_port(srv->listener);
	pk_srv_log(srv, 1, "serving on %s (port %u)%s%s", srv->listen, srv->port,
		   tls ? " with TLS" : "", srv->token_file ? "" : ", no authentication");
	return 0;
}

uint16_t pk_server_port(const struct pk_server *srv)
{
	return srv->port;
}

int64_t pk_server_saturated_ms(struct pk_server *srv)
{
	struct pk_listener_stats st;

	if (!srv || !srv->listener)
		return 0;
	pk_listener_stats(srv->listener, &st);
	return st.saturated_ms;
}

void pk_server_stop(struct pk_server *srv)
{
	if (!srv || !srv->listener)
		return;
	/* No suspended connection may meet MHD_stop_daemon(). */
	pk_srv_stream_hub_stop(srv);
	pk_listener_stop(srv->listener);
	srv->listener = NULL;
}

void pk_server_free(struct pk_server *srv)
{
	if (!srv)
		return;
	pk_server_stop(srv);
	pk_tokens_free(srv->tokens);
	pk_srv_audit_close(srv);
	free(srv->listen);
	free(srv->token_file);
	free(srv->tls_cert_file);
	free(srv->tls_key_file);
	free(srv->client_ca_file);
	free(srv->queue_controller_user);
	free(srv->tls_cert);
	free(srv->tls_key);
	free(srv->client_ca);
	pthread_mutex_destroy(&srv->auth_lock);
	pthread_mutex_destroy(&srv->metrics_lock);
	pthread_mutex_destroy(&srv->hook_lock);
	pthread_mutex_destroy(&srv->park_lock);
	pthread_mutex_destroy(&srv->body_lock);
	json_decref(srv->body_users);
	free(srv);
}
