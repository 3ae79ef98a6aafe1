/* SPDX-License-Identifier: Apache-2.0 */
/*
 * listener.h — the one HTTP listener podkerneld serves through: the API
 * (standalone and stand-in) and attach mode's health port.
 *
 * A libmicrohttpd daemon with deadlines, not just idle timeouts: the request
 * line and headers must arrive within header_timeout_ms of the connection (or
 * of the previous response on a kept-alive one), and a body must average
 * body_min_rate bytes per second after a grace of header_timeout_ms.  The
 * connections are capped in total and per client address; at either cap a new
 * connection displaces the oldest connection still waiting for its headers
 * (the slow ones are the attackers: a client that sends its request at once
 * always gets in), and is closed at once when there is none.  TLS is 1.2 or
 * newer.
 */
#ifndef PODKERNEL_KERNEL_HTTP_LISTENER_H
#define PODKERNEL_KERNEL_HTTP_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <microhttpd.h>

#define PK_LISTEN_HEADER_TIMEOUT_MS 30000 /* kube-apiserver's Go server: about 30 s */
#define PK_LISTEN_BODY_MIN_RATE 16384	  /* bytes/s a body averages after the grace */
#define PK_LISTEN_IDLE_TIMEOUT_S 10	  /* no byte either way: closed */
/* TLS 1.2 and 1.3 only; on 1.2 only forward-secret key exchange (ECDHE), as
 * Go's crypto/tls offers: no static RSA (AES128-SHA and the like), no DHE. */
#define PK_LISTEN_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-RSA:-DHE-RSA:-DHE-DSS"

/* Zero fields take the defaults the caller passes to pk_listen_limits_fill(). */
struct pk_listen_limits {
	unsigned max_connections;
	unsigned max_connections_per_addr;
	unsigned header_timeout_ms;
	unsigned body_min_rate; /* bytes per second */
	unsigned idle_timeout_s;
};
void pk_listen_limits_fill(struct pk_listen_limits *l, unsigned max_connections,
			   unsigned max_per_addr);

struct pk_listener_config {
	const struct sockaddr_storage *addr;
	unsigned threads; /* event-loop threads; 0: one thread per connection */
	struct pk_listen_limits limits;
	size_t header_bytes; /* memory per connection for request line and headers */
	bool suspend_resume; /* handlers may suspend connections (watch streams) */
	/* PEM text in memory; NULL cert: plain HTTP.  A trust list asks clients
	 * for certificates. */
	const char *tls_cert, *tls_key, *tls_trust;
	MHD_AccessHandlerCallback handler;
	void *handler_arg;
	MHD_RequestCompletedCallback completed; /* may be NULL */
	void *completed_arg;
	/* may be NULL; level 1 for warnings, 2 for libmicrohttpd's per-connection news */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

/* What the listener did; monotonic milliseconds for times (0: never). */
struct pk_listener_stats {
	unsigned open, open_max;
	uint64_t accepted, refused, displaced, header_timeouts, body_timeouts;
	int64_t saturated_ms; /* the last time a cap was reached */
};

struct pk_listener;
/* Bind and serve; err says why not (-EADDRNOTAVAIL, -EINVAL, -ENOMEM). */
int pk_listener_start(const struct pk_listener_config *cfg, struct pk_listener **ret, char *err,
		      size_t errlen);
uint16_t pk_listener_port(const struct pk_listener *l);
void pk_listener_stats(struct pk_listener *l, struct pk_listener_stats *ret);
/* Prometheus lines (pk_listener_* with a listener="NAME" label). */
void pk_listener_metrics(struct pk_listener *l, const char *name, FILE *f);
/* Stop serving and close every connection; accepts NULL. */
void pk_listener_stop(struct pk_listener *l);
/* A PEM file (certificate, key, CA bundle) into a malloc'ed string, at most
 * PK_LISTEN_PEM_MAX_BYTES; NULL with err naming the file when it is missing,
 * empty, larger or unreadable. */
#define PK_LISTEN_PEM_MAX_BYTES (1 << 20)
char *pk_listen_read_pem(const char *path, char *err, size_t errlen);
/* Monotonic clock in milliseconds. */
int64_t pk_listener_now_ms(void);

#endif /* PODKERNEL_KERNEL_HTTP_LISTENER_H */
