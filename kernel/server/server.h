/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.h — podkerneld's Kubernetes-compatible HTTP API.
 *
 * The server routes kube-apiserver paths (/api/v1/..., /apis/GROUP/VERSION/...)
 * to the store (kernel/store/store.h): get, list, watch, create, update,
 * patch, delete, the status and binding subresources, discovery, meta.k8s.io
 * Tables for kubectl, /healthz, /readyz, /livez, /version and /metrics.
 * Requests are authenticated with bearer tokens from a static token file and
 * authorised (system:masters: everything; system:node:<name> in system:nodes:
 * read everything, write only its own Node and Lease, under NodeRestriction;
 * other users read only).
 *
 * Two layers: pk_server_handle() turns one parsed request into one response
 * without any socket (what the fuzz target and unit tests call), and
 * pk_server_start() serves it over libmicrohttpd (an epoll event loop on a
 * few threads; watches park instead of holding a thread; optional TLS).  The store handle is
 * borrowed and must outlive the server. Other in-process code (the scheduling loop, controllers)
 * should call the store directly, which applies the same defaulting and validation.
 */
#ifndef PODKERNEL_KERNEL_SERVER_H
#define PODKERNEL_KERNEL_SERVER_H

#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/http/listener.h"
#include "kernel/lib/request.h"
#include "kernel/store/store.h"

#define PK_SERVER_DEFAULT_LISTEN "127.0.0.1:6443"
#define PK_SERVER_MAX_BODY PK_MAX_INPUT_BYTES /* larger bodies get 413 */
#define PK_SERVER_WATCH_TIMEOUT_S 1800	      /* default watch length */
/* Limits against hostile clients (docs/appliance.md, "Security"). */
#define PK_SERVER_THREADS 16		       /* event-loop threads */
#define PK_SERVER_MAX_CONNECTIONS 4000	       /* in total */
#define PK_SERVER_MAX_CONNECTIONS_PER_ADDR 200 /* from one client address */
#define PK_SERVER_MAX_HEADER_BYTES (64 * 1024) /* request line + headers (per connection) */
#define PK_SERVER_MAX_QUERY_ARGS 256	       /* more: 400, never silently dropped */
/* Request bodies being received, in all and from one user (more: 429). */
#define PK_SERVER_BODY_BYTES_IN_FLIGHT (256u << 20)
#define PK_SERVER_BODY_BYTES_IN_FLIGHT_PER_USER (32u << 20)
#define PK_SERVER_WATCH_BUFFER (1 << 20)   /* bytes a watch buffers ahead (plus one event) */
#define PK_SERVER_WATCH_MEMORY (64u << 20) /* all watches together (plus one fill each) */

/* ---- static token file ------------------------------------------------------ */
struct pk_token {
	char *token, *user, *uid;
	char **groups;
	size_t ngroups;
	unsigned line;
};
struct pk_tokens {
	struct pk_token *v;
	size_t n;
	char warning[256]; /* "" or "NAME:LINE: duplicate token ..." for the log */
};
/*
 * Parse a Kubernetes static token file: one `token,user,uid[,"g1,g2"]` per
 * line, fields may be double-quoted, blank lines and # comments skipped,
 * columns after the groups ignored (as kube-apiserver).  A repeated token is
 * kept; pk_tokens_find() answers with its last line, and warning says so.
 * Errors: "NAME:LINE:COL: message" in err, -EINVAL.
 */
int pk_tokens_parse(const char *name, const char *buf, size_t len, struct pk_tokens **ret,
		    char *err, size_t errlen);
/*
 * Read and parse the token file at path (under 4 MiB): 0, or the error in err
 * ("PATH: reason" when it cannot be read, -errno, -EFBIG, -EIO; a parse
 * error, -EINVAL).
 */
#define PK_TOKEN_FILE_MAX_BYTES ((4 << 20) - 1)
int pk_tokens_load(const char *path, struct pk_tokens **ret, char *err, size_t errlen);
void pk_tokens_free(struct pk_tokens *tokens);
/* The entry for a bearer token (constant-time compare; the last of repeats), or NULL. */
const struct pk_token *pk_tokens_find(const struct pk_tokens *tokens, const char *token);

/* Who made a request; anonymous when no valid token was presented. */
struct pk_identity {
	const char *user; /* "system:anonymous" when anonymous */
	const char *const *groups;
	size_t ngroups;
	bool authenticated;
	const char *uid; /* the token file's uid, or NULL */
	/* user.Info's extra, as pairs (a key may repeat): only impersonation sets them */
	const char *const *extra_keys, *const *extra_values;
	size_t nextra;
};
/*
 * May identity do verb ("get", "list", "watch", "create", "update", "patch",
 * "delete", "impersonate") on the object kind/name?  Rules in the header
 * comment above; any other authenticated user may only read (and so never
 * impersonate).  When the server runs without a token file everyone counts
 * as system:masters.
 */
bool pk_authorize(const struct pk_identity *who, const char *verb, const char *kind,
		  const char *name);

/* ---- requests and responses ------------------------------------------------- */
/* (pk_response_clear() and pk_response_warn() are in kernel/lib/request.h.) */

/*
 * Read the next newline-delimited JSON events of a watch into buf, waiting at
 * most wait_ms for one.  Returns the byte count, 0 when nothing came in time,
 * -EPIPE when the watch is over (timeout, server stopping, or after an ERROR
 * event).  pk_watch_free() accepts NULL.
 */
ssize_t pk_watch_read(struct pk_watch *w, char *buf, size_t max, int wait_ms);
/*
 * What to send on a quiet watch: a BOOKMARK event at the latest resourceVersion
 * seen when the client asked for allowWatchBookmarks, else a lone newline
 * (which JSON stream decoders skip).  Returns the byte count (0 if max is too
 * small).
 */
ssize_t pk_watch_heartbeat(struct pk_watch *w, char *buf, size_t max);
void pk_watch_free(struct pk_watch *w);

/* ---- the server -------------------------------------------------------------- */
struct pk_server_config {
	const char *listen;	     /* "ADDR:PORT" or "[ADDR6]:PORT"; port 0 picks one */
	const char *token_auth_file; /* NULL: no authentication, everyone is admin */
	const char *tls_cert_file;   /* both or neither */
	const char *tls_key_file;
	/* Verify client certificates against this CA (PEM): CN is the user, each O
	 * a group, as kube-apiserver's --client-ca-file.  Needs TLS. */
	const char *client_ca_file;
	bool insecure_allow_non_loopback; /* plain HTTP on a non-loopback address */
	/* No token file on a non-loopback address (everyone is admin). */
	bool insecure_allow_anonymous_admin;
	/* Connection caps and deadlines (listener.h); zero fields: the
	 * PK_SERVER_MAX_CONNECTIONS* caps and the listener's deadlines. */
	struct pk_listen_limits limits;
	/* The namespace of node heartbeat Leases, the only one where a node may
	 * write its Lease (NodeRestriction); NULL: kube-node-lease. */
	const char *node_lease_namespace;
	/*
	 * The user whose writes are the queue controller's (an attached
	 * podkerneld --queues=podkernel, when this server stands in for its
	 * cluster): the rules that only the queue controller admits a workload
	 * (pk_admission.admit_user) do not apply to its requests.  NULL: none.
	 */
	const char *queue_controller_user;
	/* Request bodies in flight; 0: PK_SERVER_BODY_BYTES_IN_FLIGHT(_PER_USER). */
	size_t max_body_bytes_in_flight, max_body_bytes_in_flight_per_user;
	int verbosity; /* 0 errors, 1 startup, 2 every request */
	/* Where log lines go (the program decides); NULL: nowhere. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	/*
	 * The audit log of writes (audit.c): one audit.k8s.io/v1 Event per line
	 * at path (NULL: none), rotated past max_size_mb (0: never) keeping
	 * max_backups files (0: PK_SERVER_AUDIT_BACKUPS).
	 */
	struct {
		const char *path;
		unsigned max_size_mb, max_backups;
	} audit;
};
#define PK_SERVER_AUDIT_BACKUPS 10

struct pk_server;
/* Check the configuration and load the token file; no socket yet. */
int pk_server_new(struct pk_store *store, const struct pk_server_config *cfg,
		  struct pk_server **ret, char *err, size_t errlen);
int pk_server_handle(struct pk_server *srv, const struct pk_request *req, struct pk_response *ret);
/*
 * Decide on the request line and headers alone (req->body unset), before any
 * body is read: when the request would be refused whatever its body (no valid
 * token, a declared body over PK_SERVER_MAX_BODY, too many query arguments, a
 * write the user may make on no object of the kind) ret gets that response
 * and true is returned.  Otherwise ret stays empty and ret_user (may be NULL)
 * gets the user the body will be read for ("" for a public path).
 */
bool pk_server_precheck(struct pk_server *srv, const struct pk_request *req,
			struct pk_response *ret, char *ret_user, size_t userlen);
/* Bind and serve in background threads. */
int pk_server_start(struct pk_server *srv, char *err, size_t errlen);
uint16_t pk_server_port(const struct pk_server *srv); /* after start */
/*
 * When the listener last reached a connection cap (monotonic ms as
 * pk_listener_now_ms(); 0: never): until then some client may not have got
 * through, so the node-loss monitor does not take silence for loss.
 */
int64_t pk_server_saturated_ms(struct pk_server *srv);
/* Stop serving: ends watches, joins threads.  Idempotent. */
void pk_server_stop(struct pk_server *srv);
void pk_server_free(struct pk_server *srv); /* stops first; accepts NULL */

/*
 * The CustomResourceDefinitions of the KEP-6012 alpha kinds (what attach mode
 * needs on a cluster that does not serve them; deploy/crds/), as YAML on f:
 * their schemas and printer columns are standalone's.  group and version
 * (NULL: scheduling.k8s.io, v1alpha3) are where they are served, as attach
 * mode's --workload-api names them.  0 or a negative errno.
 */
int pk_server_print_crds(FILE *f, const char *group, const char *version);
/*
 * Let /metrics append the exposition lines fn writes to f (Prometheus text).
 * Calls to fn are serialized with this setter: once
 * pk_server_set_metrics_hook(srv, NULL, NULL) returns, fn is not running and
 * will not be called again, so arg may be freed.
 */
void pk_server_set_metrics_hook(struct pk_server *srv, void (*fn)(void *arg, FILE *f), void *arg);
/*
 * Let fn answer GET requests under /ui/ (the appliance's placement map).
 * Paths under /ui/api/ are authenticated and authorised like reading Nodes
 * and Pods through the API; the rest of /ui/ (the page itself, which holds
 * no cluster data) is public, so a browser can load it and then ask for a
 * token.  fn fills resp (status, static content_type, malloc'ed body) and
 * returns 0, or -ENOENT for a path it does not serve (the server answers
 * 404).  Calls are serialized with this setter like the metrics hook.
 */
typedef int (*pk_server_ui_fn)(void *arg, const struct pk_request *req, struct pk_response *resp);
void pk_server_set_ui_hook(struct pk_server *srv, pk_server_ui_fn fn, void *arg);

#endif /* PODKERNEL_KERNEL_SERVER_H */
