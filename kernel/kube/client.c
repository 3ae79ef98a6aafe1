/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — HTTP requests to a Kubernetes API server over libcurl.
 *
 * Every handle is configured the same way (kube_setup_handle, the one place
 * in the tree where credentials become libcurl options): the server's CA
 * (file or in-memory PEM), the client certificate when the user has one,
 * basic auth, TCP keepalive, connect timeout.  A bearer token travels in a
 * header built per request, so a rotating token file is picked up (it is
 * re-read at most once a minute, as client-go's file token source, and
 * before the next request once the server answered 401: the token may have
 * rotated); a token file that cannot be read while no token is known stops
 * the request before it is sent, as client-go refuses to build a transport.
 * Answers are buffered up to KUBE_MAX_ANSWER bytes and parsed as JSON; a
 * watch streams instead (kube_stream: each complete line goes to a
 * callback).  kube_request_many() drives a libcurl multi handle over a pool
 * of easy handles that outlives a batch, so a scheduler's bindings reuse
 * warm TLS connections.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/kube/kube-internal.h"
#include "kernel/kube/kube.h"

#define KUBE_MAX_EVENT (16u << 20) /* one watch event (an object is at most ~1.5 MiB) */
#define KUBE_TOKEN_REFRESH_S 60

struct kube_client {
	struct pk_kube_credentials cfg[1];
	pthread_mutex_t lock; /* token */
	char *token;
	time_t token_read;
	uint64_t max_list_bytes;
	char user_agent[128]; /* the User-Agent header line */
	/* tls-server-name: what the URLs start with, where they connect, their Host */
	char *base;		       /* the server's URL, its host replaced by the name */
	struct curl_slist *connect_to; /* NAME:PORT:HOST:PORT, or NULL */
	char *host_header;	       /* "Host: HOST[:PORT]", or NULL */
};

struct kube_conn {
	struct kube_client *c;
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
	bool tls_failure;      /* the last -EIO was TLS */
	size_t answer_bytes;   /* of the last buffered answer */
	char answer_type[128]; /* its Content-Type ("" when none) */
	char answer_head[81];  /* its first bytes, printable */
	size_t max_answer;     /* a buffered answer's bound (0: KUBE_MAX_ANSWER) */
};

struct buf {
	char *p;
	size_t n, cap, max; /* max 0: KUBE_MAX_ANSWER */
	bool too_big;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/*
 * tls-server-name (Go's tls.Config.ServerName): the TLS handshake names
 * and verifies that name, the connection still goes to the server's host
 * and the Host header stays the server's.  libcurl checks the URL's host,
 * so the URLs carry the name, CURLOPT_CONNECT_TO leads the connection to
 * the server's host and port, and a Host header keeps the server's.  Plain
 * http has no TLS: the name means nothing there.
 */
static int server_name_setup(struct kube_client *c)
{
	const char *srv = c->cfg->server, *name = c->cfg->tls_server_name;
	const char *auth = srv + 8, *end, *hend, *port = "443";
	const char *lb = name && strchr(name, ':') ? "[" : "", *rb = *lb ? "]" : "";
	int hlen, plen = 3;
	char *to = NULL;

	if (!name || !*name || strncasecmp(srv, "https://", 8) != 0)
		return (c->base = strdup(srv)) ? 0 : -ENOMEM;
	end = auth + strcspn(auth, "/?#");
	hend = *auth == '[' ? memchr(auth, ']', (size_t)(end - auth)) : auth;
	if (!hend)
		return -EINVAL;
	hend += strcspn(hend, ":/?#"); /* past an IPv6 literal's brackets, to its port */
	hlen = (int)(hend - auth);
	if (hend < end) {
		port = hend + 1;
		plen = (int)(end - port);
	}
	if (asprintf(&c->base, "https://%s%s%s:%.*s%s", lb, name, rb, plen, port, end) < 0 ||
	    asprintf(&to, "%s%s%s:%.*s:%.*s:%.*s", lb, name, rb, plen, port, hlen, auth, plen,
		     port) < 0 ||
	    asprintf(&c->host_header, "Host: %.*s", (int)(end - auth), auth) < 0) {
		free(to);
		return -ENOMEM;
	}
	c->connect_to = curl_slist_append(NULL, to);
	free(to);
	return c->connect_to ? 0 : -ENOMEM;
}

int kube_client_new(struct pk_kube_credentials *creds, struct kube_client **ret)
{
	struct kube_client *c;
	int r;

	if (!creds || !creds->server) {
		pk_kube_credentials_clear(creds);
		return -EINVAL;
	}
	pthread_once(&curl_once, curl_init_once);
	c = calloc(1, sizeof(*c));
	if (!c) {
		pk_kube_credentials_clear(creds);
		return -ENOMEM;
	}
	c->cfg[0] = *creds;
	c->max_list_bytes = KUBE_LIST_MAX_BYTES;
	snprintf(c->user_agent, sizeof(c->user_agent), "User-Agent: podkerneld/%s",
		 PODKERNEL_VERSION);
	memset(creds, 0, sizeof(*creds));
	pthread_mutex_init(&c->lock, NULL);
	r = server_name_setup(c);
	if (r < 0) {
		kube_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	pk_kube_credentials_clear(c->cfg);
	free(c->token);
	free(c->base);
	free(c->host_header);
	curl_slist_free_all(c->connect_to);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const struct pk_kube_credentials *kube_client_credentials(const struct kube_client *c)
{
	return c->cfg;
}

void kube_client_set_max_list_bytes(struct kube_client *c, uint64_t bytes)
{
	c->max_list_bytes = bytes ? bytes : KUBE_LIST_MAX_BYTES;
}

uint64_t kube_client_max_list_bytes(const struct kube_client *c)
{
	return c->max_list_bytes;
}

int kube_client_set_user_agent(struct kube_client *c, const char *ua)
{
	if (!ua || !*ua || strpbrk(ua, "\r\n") ||
	    (size_t)snprintf(NULL, 0, "User-Agent: %s", ua) >= sizeof(c->user_agent))
		return -EINVAL;
	snprintf(c->user_agent, sizeof(c->user_agent), "User-Agent: %s", ua);
	return 0;
}

char *kube_escape(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s && o + 4 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			buf[o++] = (char)ch;
		} else {
			buf[o++] = '%';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	buf[o] = '\0';
	return buf;
}

const char *kube_status_message(const json_t *answer)
{
	const char *m = json_string_value(json_object_get(answer, "message"));

	return m ? m : "";
}

/* A 401: read the token file again before the next request. */
static void token_check(struct kube_client *c, long status)
{
	if (status != 401 || !c->cfg->token_file)
		return;
	pthread_mutex_lock(&c->lock);
	c->token_read = 0;
	pthread_mutex_unlock(&c->lock);
}

/*
 * The bearer token for the next request into line ("" when none): the token
 * file's (re-read once a minute, and after a 401) or the token.  A token file
 * that cannot be read while no token is known is the read's -errno, the file
 * named in errbuf: the request is not sent (client-go refuses it too).
 */
static int bearer(struct kube_client *c, char *line, size_t len, char *errbuf)
{
	const char *tok;
	int r = 0;

	line[0] = '\0';
	pthread_mutex_lock(&c->lock);
	if (c->cfg->token_file && time(NULL) - c->token_read >= KUBE_TOKEN_REFRESH_S) {
		char *t = NULL;

		r = kube_read_token_file(c->cfg->token_file, &t);
		if (r == 0) {
			free(c->token);
			c->token = t;
		}
		if (r == 0 || c->token) /* else read it again next time */
			c->token_read = time(NULL);
	}
	tok = c->token ? c->token : c->cfg->token;
	if (!tok && r < 0)
		snprintf(errbuf, CURL_ERROR_SIZE, "token file %s: %s", c->cfg->token_file,
			 strerror(-r));
	else if (tok && *tok && strlen(tok) < len - 32)
		snprintf(line, len, "Authorization: Bearer %s", tok);
	pthread_mutex_unlock(&c->lock);
	return !tok && r < 0 ? r : 0;
}

/* The request's headers into *ret (NULL on no memory); 0 or bearer()'s error. */
static int kube_headers(struct kube_client *c, const char *content_type, bool watch, char *errbuf,
			struct curl_slist **ret)
{
	struct curl_slist *h = NULL;
	char line[8192];
	int r = bearer(c, line, sizeof(line), errbuf);

	if (r < 0)
		return r;
	if (line[0])
		h = curl_slist_append(h, line);
	explicit_bzero(line, sizeof(line));
	h = curl_slist_append(h, "Accept: application/json");
	if (content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", content_type);
		h = curl_slist_append(h, line);
	}
	if (watch)
		h = curl_slist_append(h, "Expect:");
	if (c->host_header)
		h = curl_slist_append(h, c->host_header);
	h = curl_slist_append(h, c->user_agent);
	*ret = h;
	return 0;
}

/*
 * The one place credentials become libcurl options: the server's CA (file
 * or PEM data), the TLS server name, the proxy, no verification when asked,
 * basic auth, the client certificate and key (files or PEM data); the
 * bearer token travels in kube_headers().
 */
static void kube_setup_handle(struct kube_client *c, CURL *h, char *errbuf)
{
	const struct pk_kube_credentials *cfg = c->cfg;

	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 15L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 5L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	if (cfg->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
	if (cfg->ca_data) {
		struct curl_blob b = {cfg->ca_data, cfg->ca_data_len, CURL_BLOB_COPY};

		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
	}
	if (c->connect_to)
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
	if (cfg->proxy_url)
		curl_easy_setopt(h, CURLOPT_PROXY, cfg->proxy_url);
	if (cfg->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (cfg->username) {
		curl_easy_setopt(h, CURLOPT_USERNAME, cfg->username);
		curl_easy_setopt(h, CURLOPT_PASSWORD, cfg->password ? cfg->password : "");
	}
	if (cfg->cert_file)
		curl_easy_setopt(h, CURLOPT_SSLCERT, cfg->cert_file);
	if (cfg->key_file)
		curl_easy_setopt(h, CURLOPT_SSLKEY, cfg->key_file);
	if (cfg->cert_data) {
		struct curl_blob b = {cfg->cert_data, cfg->cert_data_len, CURL_BLOB_COPY};

		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (cfg->key_data) {
		struct curl_blob b = {cfg->key_data, cfg->key_data_len, CURL_BLOB_COPY};

		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
}

int kube_conn_new(struct kube_client *c, struct kube_conn **ret)
{
	struct kube_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return -ENOMEM;
	conn->c = c;
	conn->h = curl_easy_init();
	if (!conn->h) {
		free(conn);
		return -ENOMEM;
	}
	*ret = conn;
	return 0;
}

void kube_conn_free(struct kube_conn *conn)
{
	if (!conn)
		return;
	curl_easy_cleanup(conn->h);
	free(conn);
}

const char *kube_conn_error(const struct kube_conn *conn)
{
	return conn->errbuf;
}

bool kube_conn_tls_failure(const struct kube_conn *conn)
{
	return conn->tls_failure;
}

void kube_conn_answer(const struct kube_conn *conn, size_t *ret_bytes, const char **ret_type,
		      const char **ret_head)
{
	*ret_bytes = conn->answer_bytes;
	*ret_type = conn->answer_type;
	*ret_head = conn->answer_head;
}

void kube_printable(const char *p, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++)
		buf[o++] = (unsigned char)p[i] >= 0x20 && (unsigned char)p[i] < 0x7f ? p[i] : '.';
	if (len)
		buf[o] = '\0';
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t len = size * n;

	if (b->n + len + 1 > (b->max ? b->max : KUBE_MAX_ANSWER)) {
		b->too_big = true;
		return 0;
	}
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16384;
		char *q;

		while (cap < b->n + len + 1)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q)
			return 0;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, len);
	b->n += len;
	b->p[b->n] = '\0';
	return len;
}

/* A failure of the TLS handshake or of the server's certificate. */
static bool tls_error(CURLcode cc)
{
	switch (cc) {
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_ENGINE_INITFAILED:
		return true;
	default:
		return false;
	}
}

void kube_conn_set_max_answer(struct kube_conn *conn, size_t bytes)
{
	conn->max_answer = bytes < KUBE_MAX_ANSWER ? bytes : 0;
}

/* Why no answer came (cc not CURLE_OK) into the connection's last error. */
static void no_answer(struct kube_conn *conn, CURLcode cc, bool too_big)
{
	conn->tls_failure = tls_error(cc);
	if (cc == CURLE_OK)
		return;
	if (too_big)
		snprintf(conn->errbuf, sizeof(conn->errbuf), "the answer is larger than %zu bytes",
			 conn->max_answer ? conn->max_answer : (size_t)KUBE_MAX_ANSWER);
	else if (!conn->errbuf[0])
		snprintf(conn->errbuf, sizeof(conn->errbuf), "%s", curl_easy_strerror(cc));
}

/* Set up h for one buffered request; the header list and payload belong to the caller. */
static int prepare(struct kube_client *c, CURL *h, char *errbuf, const char *method,
		   const char *path, const char *content_type, const char *payload, int timeout_ms,
		   struct buf *b, struct curl_slist **ret_hdrs)
{
	char url[4096];
	int r;

	if (snprintf(url, sizeof(url), "%s%s", c->base, path) >= (int)sizeof(url)) {
		snprintf(errbuf, CURL_ERROR_SIZE, "the URL is longer than %zu bytes", sizeof(url));
		return -ENAMETOOLONG;
	}
	r = kube_headers(c, payload ? (content_type ? content_type : "application/json") : NULL,
			 false, errbuf, ret_hdrs);
	if (r < 0)
		return r;
	curl_easy_reset(h);
	kube_setup_handle(c, h, errbuf);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *ret_hdrs);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_ms > 0 ? timeout_ms : 30000));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	if (payload)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
	else if (strcmp(method, "GET") == 0)
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	return 0;
}

int kube_request(struct kube_conn *conn, const char *method, const char *path,
		 const char *content_type, const json_t *body, int timeout_ms, long *ret_status,
		 json_t **ret_body)
{
	struct buf b = {.max = conn->max_answer};
	struct curl_slist *hdrs = NULL;
	char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
	long status = 0;
	CURLcode cc;
	int r;

	if (body && !payload)
		return -ENOMEM;
	conn->errbuf[0] = '\0';
	conn->tls_failure = false;
	r = prepare(conn->c, conn->h, conn->errbuf, method, path, content_type, payload, timeout_ms,
		    &b, &hdrs);
	if (r == 0) {
		cc = curl_easy_perform(conn->h);
		if (cc == CURLE_OK)
			curl_easy_getinfo(conn->h, CURLINFO_RESPONSE_CODE, &status);
		r = cc == CURLE_OK ? 0 : b.too_big ? -EFBIG : -EIO;
		no_answer(conn, cc, b.too_big);
	}
	curl_slist_free_all(hdrs);
	free(payload);
	conn->answer_bytes = b.n;
	conn->answer_type[0] = '\0';
	kube_printable(b.p ? b.p : "", b.n, conn->answer_head, sizeof(conn->answer_head));
	if (r == 0) {
		char *ct = NULL;

		if (curl_easy_getinfo(conn->h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
			snprintf(conn->answer_type, sizeof(conn->answer_type), "%s", ct);
		*ret_status = status;
		token_check(conn->c, status);
		if (ret_body)
			*ret_body = b.p ? json_loadb(b.p, b.n, 0, NULL) : NULL;
	}
	free(b.p);
	return r;
}

/* ---- concurrent batches ------------------------------------------------------------- */

struct slot {
	CURL *h;
	struct buf b;
	struct curl_slist *hdrs;
	char *payload;
	size_t call; /* index in the batch */
	char errbuf[CURL_ERROR_SIZE];
};

struct kube_multi {
	struct kube_client *c;
	CURLM *m;
	struct slot *slots;
	size_t nslots;
	bool (*stop)(void *arg); /* the batch's, for the moment before each request is sent */
	void *stop_arg;
};

/*
 * libcurl calls this once the connection is up, right before it sends the
 * request: a batch that must stop (a leader whose lease ran out while the
 * request waited for its connection, or while the process was frozen) sends
 * nothing more, not even what it had started.
 */
static int on_prereq(void *arg, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
		     int conn_local_port)
{
	struct kube_multi *m = arg;

	(void)conn_primary_ip, (void)conn_local_ip, (void)conn_primary_port, (void)conn_local_port;
	return m->stop && m->stop(m->stop_arg) ? CURL_PREREQFUNC_ABORT : CURL_PREREQFUNC_OK;
}

int kube_multi_new(struct kube_client *c, size_t max_in_flight, struct kube_multi **ret)
{
	struct kube_multi *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->c = c;
	m->nslots = max_in_flight ? max_in_flight : 1;
	m->m = curl_multi_init();
	m->slots = calloc(m->nslots, sizeof(*m->slots));
	for (size_t i = 0; m->slots && i < m->nslots; i++)
		m->slots[i].h = curl_easy_init();
	if (!m->m || !m->slots || !m->slots[m->nslots - 1].h) {
		kube_multi_free(m);
		return -ENOMEM;
	}
	curl_multi_setopt(m->m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)m->nslots);
	*ret = m;
	return 0;
}

void kube_multi_free(struct kube_multi *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->slots && i < m->nslots; i++)
		curl_easy_cleanup(m->slots[i].h);
	free(m->slots);
	curl_multi_cleanup(m->m);
	free(m);
}

static void slot_release(struct slot *s)
{
	curl_slist_free_all(s->hdrs);
	s->hdrs = NULL;
	free(s->payload);
	s->payload = NULL;
	free(s->b.p);
	memset(&s->b, 0, sizeof(s->b));
}

static int slot_start(struct kube_multi *m, struct slot *s, struct kube_call *call, size_t idx)
{
	int r;

	s->call = idx;
	s->payload = call->body ? json_dumps(call->body, JSON_COMPACT) : NULL;
	r = prepare(m->c, s->h, s->errbuf, call->method, call->path, call->content_type, s->payload,
		    30000, &s->b, &s->hdrs);
	if (r == 0) {
		curl_easy_setopt(s->h, CURLOPT_PREREQFUNCTION, on_prereq);
		curl_easy_setopt(s->h, CURLOPT_PREREQDATA, m);
	}
	if (r == 0 && curl_multi_add_handle(m->m, s->h) != CURLM_OK)
		r = -EIO;
	if (r < 0)
		slot_release(s);
	return r;
}

static void slot_finish(struct kube_multi *m, struct slot *s, CURLcode cc, struct kube_call *call)
{
	curl_multi_remove_handle(m->m, s->h);
	call->status = 0;
	if (cc == CURLE_OK) {
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &call->status);
		token_check(m->c, call->status);
		call->answer = s->b.p ? json_loadb(s->b.p, s->b.n, 0, NULL) : NULL;
	}
	slot_release(s);
	s->call = SIZE_MAX;
}

int kube_request_many(struct kube_multi *m, struct kube_call *calls, size_t n,
		      bool (*stop)(void *arg), void *arg)
{
	size_t next = 0, running = 0;

	m->stop = stop;
	m->stop_arg = arg;
	for (size_t i = 0; i < m->nslots; i++)
		m->slots[i].call = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		calls[i].status = 0;
		calls[i].answer = NULL;
	}
	for (;;) {
		bool stopped = stop && stop(arg);

		for (size_t i = 0; i < m->nslots && next < n && !stopped; i++) {
			if (m->slots[i].call != SIZE_MAX)
				continue;
			if (slot_start(m, &m->slots[i], &calls[next], next) == 0)
				running++;
			next++;
		}
		if (running == 0 && (next >= n || stopped))
			return 0;
		int still = 0;
		CURLMsg *msg;
		int left;

		curl_multi_perform(m->m, &still);
		while ((msg = curl_multi_info_read(m->m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			for (size_t i = 0; i < m->nslots; i++) {
				struct slot *s = &m->slots[i];

				if (s->call != SIZE_MAX && s->h == msg->easy_handle) {
					slot_finish(m, s, msg->data.result, &calls[s->call]);
					running--;
					break;
				}
			}
		}
		if (running > 0)
			curl_multi_poll(m->m, NULL, 0, 100, NULL);
	}
}

/* ---- streams (watch) --------------------------------------------------------------- */

struct stream {
	struct buf b;
	int (*on_line)(void *arg, const char *line, size_t len);
	void *arg;
	const atomic_bool *cancel;
	int stopped; /* the callback's nonzero answer */
};

static size_t on_stream(char *p, size_t size, size_t n, void *arg)
{
	struct stream *st = arg;
	size_t len = size * n, start = 0;

	if (on_body(p, 1, len, &st->b) != len)
		return 0;
	if (st->b.n > KUBE_MAX_EVENT && !memchr(st->b.p, '\n', st->b.n))
		return 0; /* one event larger than any object can be: not a server to follow */
	for (size_t i = 0; i < st->b.n; i++) {
		if (st->b.p[i] != '\n')
			continue;
		if (i > start) {
			int r = st->on_line(st->arg, st->b.p + start, i - start);

			if (r != 0) {
				st->stopped = r;
				return 0;
			}
		}
		start = i + 1;
	}
	memmove(st->b.p, st->b.p + start, st->b.n - start);
	st->b.n -= start;
	return len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct stream *st = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return st->cancel && atomic_load(st->cancel) ? 1 : 0;
}

int kube_stream(struct kube_conn *conn, const char *path,
		int (*on_line)(void *, const char *, size_t), void *arg, const atomic_bool *cancel,
		long *ret_status)
{
	struct stream st = {.on_line = on_line, .arg = arg, .cancel = cancel};
	struct curl_slist *hdrs = NULL;
	char url[4096];
	long status = 0;
	CURLcode cc;
	int r;

	if (snprintf(url, sizeof(url), "%s%s", conn->c->base, path) >= (int)sizeof(url))
		return -ENAMETOOLONG;
	conn->errbuf[0] = '\0';
	conn->tls_failure = false;
	*ret_status = 0;
	r = kube_headers(conn->c, NULL, true, conn->errbuf, &hdrs);
	if (r < 0)
		return r;
	curl_easy_reset(conn->h);
	kube_setup_handle(conn->c, conn->h, conn->errbuf);
	curl_easy_setopt(conn->h, CURLOPT_URL, url);
	curl_easy_setopt(conn->h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(conn->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(conn->h, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(conn->h, CURLOPT_WRITEDATA, &st);
	curl_easy_setopt(conn->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(conn->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(conn->h, CURLOPT_XFERINFODATA, &st);
	cc = curl_easy_perform(conn->h);
	curl_easy_getinfo(conn->h, CURLINFO_RESPONSE_CODE, &status);
	token_check(conn->c, status);
	curl_slist_free_all(hdrs);
	/*
	 * A non-200 answer is one JSON Status, left in the buffer without a
	 * newline.  After a 200 stream that ended, what is left is a last line
	 * without its newline: it must decode too (a proxy's HTML page is not
	 * an empty watch).
	 */
	if (status != 200 && st.b.n > 0 && !st.stopped)
		st.on_line(st.arg, st.b.p, st.b.n);
	else if (status == 200 && cc == CURLE_OK && st.b.n > 0 && !st.stopped)
		st.stopped = st.on_line(st.arg, st.b.p, st.b.n);
	free(st.b.p);
	*ret_status = status;
	if (st.stopped)
		return st.stopped < 0 ? st.stopped : 0;
	if (cc == CURLE_ABORTED_BY_CALLBACK)
		return -ECANCELED;
	no_answer(conn, cc, false);
	return cc == CURLE_OK ? 0 : -EIO;
}
