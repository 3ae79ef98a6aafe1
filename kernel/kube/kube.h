/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube.h — a small Kubernetes API client: kubeconfig and in-cluster
 * configuration, requests over libcurl, list+watch informers and a
 * coordination.k8s.io/v1 Lease elector.
 *
 * Configuration: the credentials of a kubeconfig context
 * (pk_kubeconfig_resolve(), kernel/kube/kubeconfig.h) or of the pod's service
 * account (kube_credentials_in_cluster()).
 *
 * Requests: a kube_client holds the configuration; each thread that talks to
 * the server opens its own kube_conn (one libcurl handle, so the connection
 * is kept alive between requests).  kube_request() sends one request and
 * parses the JSON answer; kube_request_many() sends a batch concurrently
 * (libcurl multi, a bounded number in flight) and reports each answer.
 *
 * Credentials: every program that talks to an API server (podctl, podagent,
 * podkerneld attach mode) goes through this client, so a CA, a client
 * certificate, basic auth (username, password or ""), a bearer token or a
 * token file, a tls-server-name (the name the TLS handshake asks for and
 * the certificate must carry, while the connection goes to the server's
 * host and the Host header stays the server's) and a proxy-url (else
 * $https_proxy and the like, as libcurl and client-go read them) mean the
 * same everywhere.  A token file is re-read once a
 * minute and after a 401; while no token could ever be read from it, a
 * request is not sent at all (-errno of the read, the file named in the
 * connection's last error).
 *
 * Errors: 0 or a negative errno.  A request that reached the server returns
 * 0 whatever the HTTP status (the caller reads ret_status); -EIO when no
 * answer came (connection refused or broken, TLS failure, timeout), with
 * libcurl's reason in the connection's last error and
 * kube_conn_tls_failure() telling a failed TLS handshake or server
 * certificate from a server that cannot be reached; -EFBIG for an answer
 * over KUBE_MAX_ANSWER; -ENAMETOOLONG for a URL over 4 KiB.
 */
#ifndef PODKERNEL_KERNEL_KUBE_H
#define PODKERNEL_KERNEL_KUBE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kube/kubeconfig.h"

/* ---- configuration ----------------------------------------------------------- */
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/*
 * In-cluster credentials: sa_dir (NULL: KUBE_SA_DIR) holds token, ca.crt and
 * namespace; $KUBERNETES_SERVICE_HOST/PORT name the server.  A kubeconfig
 * gives the same struct through pk_kubeconfig_resolve().
 */
int kube_credentials_in_cluster(const char *sa_dir, struct pk_kube_credentials *ret, char *err,
				size_t errlen);

/* ---- requests ------------------------------------------------------------------ */
struct kube_client;
/* Takes over the strings of creds (it is cleared, also on failure). */
int kube_client_new(struct pk_kube_credentials *creds, struct kube_client **ret);
void kube_client_free(struct kube_client *c);
const struct pk_kube_credentials *kube_client_credentials(const struct kube_client *c);
/*
 * The User-Agent of every request, "PROGRAM/VERSION" (default
 * "podkerneld/" PODKERNEL_VERSION); copied.  -EINVAL when empty, over 100
 * bytes or holding a line break.  Set it before the first request.
 */
int kube_client_set_user_agent(struct kube_client *c, const char *ua);

struct kube_conn;
int kube_conn_new(struct kube_client *c, struct kube_conn **ret);
void kube_conn_free(struct kube_conn *conn);
/*
 * Why the last request on this connection failed ("" when it did not):
 * libcurl's reason for an -EIO, or the token file that could not be read.
 */
const char *kube_conn_error(const struct kube_conn *conn);
/* The last -EIO on this connection was a failed TLS handshake or an
 * unverifiable server certificate (a CA mismatch), not an unreachable server. */
bool kube_conn_tls_failure(const struct kube_conn *conn);
/*
 * The last buffered answer on this connection, for a message about one that
 * did not decode: its length, its Content-Type ("" when none) and its first
 * 80 bytes with every byte outside printable ASCII shown as '.'.
 */
void kube_conn_answer(const struct kube_conn *conn, size_t *ret_bytes, const char **ret_type,
		      const char **ret_head);
/* The first bytes of p[0..n) into buf, every byte outside printable ASCII as '.'. */
void kube_printable(const char *p, size_t n, char *buf, size_t len);

/*
 * One request.  path starts with '/' (query included); body (borrowed, may
 * be NULL) is sent as JSON with content_type (NULL: application/json; a
 * patch names its type, e.g. application/merge-patch+json).  Every request
 * accepts application/json.  ret_status gets the HTTP status, ret_body (may
 * be NULL) the parsed answer (NULL when it was not JSON: kube_conn_answer()
 * says what it was).  Both are written only when 0 is returned.  Answers
 * are buffered up to KUBE_MAX_ANSWER.  timeout_ms 0: 30 s.
 */
#define KUBE_MAX_ANSWER (256u << 20)
/* The bound on this connection's next buffered answers (0 or over
 * KUBE_MAX_ANSWER: KUBE_MAX_ANSWER); a larger answer is -EFBIG, read no further. */
void kube_conn_set_max_answer(struct kube_conn *conn, size_t bytes);
int kube_request(struct kube_conn *conn, const char *method, const char *path,
		 const char *content_type, const json_t *body, int timeout_ms, long *ret_status,
		 json_t **ret_body);

/* One request of a batch: the caller fills the first part, kube_request_many the rest. */
struct kube_call {
	const char *method, *path, *content_type; /* borrowed */
	json_t *body;				  /* borrowed, may be NULL */
	long status;				  /* 0 when no answer came */
	json_t *answer;				  /* new reference or NULL */
};
/*
 * Send calls concurrently, at most max_in_flight at once, over a pool of
 * connections kept by m between batches.  Stops starting new calls once
 * stop(arg) answers true (stop may be NULL); those keep status 0.  stop is
 * asked again right before each request goes out (once its connection is
 * up), so a call started before stop turned true but not yet sent is not
 * sent either (status 0).
 */
struct kube_multi;
int kube_multi_new(struct kube_client *c, size_t max_in_flight, struct kube_multi **ret);
void kube_multi_free(struct kube_multi *m);
int kube_request_many(struct kube_multi *m, struct kube_call *calls, size_t n,
		      bool (*stop)(void *arg), void *arg);

/*
 * Stream a watch: GET path and hand every complete line to on_line (a
 * nonzero answer stops the stream and is returned when negative).  Returns
 * when the server ends the stream (0), *cancel turns true (-ECANCELED) or
 * the connection breaks (-EIO).  ret_status: the HTTP status; a non-200
 * answer's body goes to on_line as one line.
 */
int kube_stream(struct kube_conn *conn, const char *path,
		int (*on_line)(void *arg, const char *line, size_t len), void *arg,
		const atomic_bool *cancel, long *ret_status);

/* Percent-encode a query value into buf; returns buf. */
char *kube_escape(const char *s, char *buf, size_t len);
/* The "message" of a Status answer, or "" */
const char *kube_status_message(const json_t *answer);

/* ---- decoding list and watch answers ------------------------------------------------- */
/*
 * A list answer decodes when it is a JSON object whose items are an array
 * (or null in a kind ending in "List") of objects that each have a
 * metadata.name, and whose metadata.resourceVersion is a string.  Anything
 * else (an HTML page a proxy sent with 200, a Status, a truncated body) is
 * -EBADMSG: the caller keeps what it had instead of taking it as empty.
 * The pointers are borrowed from ans; ret_continue is NULL on the last page.
 */
int kube_list_decode(const json_t *ans, const json_t **ret_items, const char **ret_rv,
		     const char **ret_continue);

enum kube_watch_type {
	KUBE_WATCH_ADDED,
	KUBE_WATCH_MODIFIED,
	KUBE_WATCH_DELETED,
	KUBE_WATCH_BOOKMARK,
	KUBE_WATCH_ERROR, /* an ERROR event, or a bare Status (code: its code) */
	KUBE_WATCH_BLANK, /* only white space: a stream kept alive */
};
struct kube_watch_event {
	enum kube_watch_type type;
	json_t *line;	/* the decoded line (new reference; NULL for BLANK) */
	json_t *object; /* borrowed from line: the object or the Status */
	const char *rv; /* the object's resourceVersion (NULL for ERROR) */
	long code;	/* ERROR: the Status's code */
};
/*
 * One line of a watch stream.  ADDED, MODIFIED and DELETED need an object
 * with metadata.name and metadata.resourceVersion, BOOKMARK a
 * resourceVersion; any other line that is not white space is -EBADMSG
 * (nothing to release then).  kube_watch_event_clear() releases line.
 */
int kube_watch_decode(const char *line, size_t len, struct kube_watch_event *ret);
void kube_watch_event_clear(struct kube_watch_event *ev);

/* ---- informers: list + watch of one resource ------------------------------------------ */
struct kube_resource {
	const char *kind, *group, *version, *plural; /* group "" for the core group */
	bool namespaced;
};
/* "/api/v1/pods" or "/apis/GROUP/VERSION/PLURAL" into buf. */
int kube_resource_path(const struct kube_resource *res, const char *ns, const char *name,
		       const char *sub, char *buf, size_t len);

enum kube_event { KUBE_ADDED, KUBE_MODIFIED, KUBE_DELETED };
/*
 * Where an informer delivers, from its own thread.  replace() gets the whole
 * current list of the resource (the first sync and every relist after a 410
 * Gone: the receiver turns it into the adds, updates and deletes it missed);
 * event() gets each watch event in order.  Objects are borrowed.
 */
struct kube_informer_sink {
	void (*replace)(void *arg, const struct kube_resource *res, const json_t *items);
	void (*event)(void *arg, const struct kube_resource *res, enum kube_event type,
		      const json_t *obj);
	void (*log)(void *arg, int level, const char *msg); /* may be NULL */
	/* After replace(), once the stats say synced and not listing; may be NULL. */
	void (*listed)(void *arg, const struct kube_resource *res);
	void *arg;
};
struct kube_informer_stats {
	uint64_t lists, watches, events, gone, errors;
	uint64_t
	    undecodable;  /* list or watch answers that did not decode (counted in errors too) */
	uint64_t too_big; /* lists over the client's list bound (counted in errors too) */
	bool synced;	  /* the first list was delivered */
	bool listing;	  /* a list is under way (the first, or after a 410) */
};
/*
 * Start a thread that lists res (pages of KUBE_LIST_PAGE), then watches from
 * the list's resourceVersion with bookmarks; a watch that ends is resumed
 * from the last resourceVersion seen, a 410 Gone relists, a broken
 * connection is retried with exponential backoff (KUBE_BACKOFF_*).  A
 * resource the server does not serve (404) counts as synced and empty and
 * is asked for again every KUBE_MISSING_RETRY_S.  res is copied.
 *
 * Nothing that does not decode is delivered: a list page that is not a list
 * (kube_list_decode) or a list whose pages add up to more than the client's
 * list bound (kube_client_set_max_list_bytes) is an error, replace() is not
 * called (the receiver keeps what it had) and the list is tried again with
 * backoff; a watch line that does not decode (kube_watch_decode) ends the
 * watch as an error, which resumes from the last resourceVersion delivered
 * after the backoff.  A watch that ends within KUBE_SHORT_WATCH_MS having
 * delivered nothing backs off too.
 */
#define KUBE_LIST_PAGE 500
/* One page's answer at most (500 objects of 128 KiB): a cluster that ignores
 * limit and answers a whole large list in one page is refused there, before
 * the answer is parsed (it would take many times its bytes as a tree). */
#define KUBE_LIST_PAGE_MAX_BYTES (64u << 20)
#define KUBE_SHORT_WATCH_MS 1000
/* The JSON bytes of all pages of one list (default of the client's bound). */
#define KUBE_LIST_MAX_BYTES (1024ull << 20)
void kube_client_set_max_list_bytes(struct kube_client *c, uint64_t bytes);
uint64_t kube_client_max_list_bytes(const struct kube_client *c);
#define KUBE_BACKOFF_MIN_MS 100
#define KUBE_BACKOFF_MAX_MS 5000
#define KUBE_MISSING_RETRY_S 30
struct kube_informer;
int kube_informer_start(struct kube_client *c, const struct kube_resource *res,
			const struct kube_informer_sink *sink, struct kube_informer **ret);
/* Stop the thread (breaks its connection) and free; accepts NULL. */
/* Stop the informer's thread (no more callbacks); the informer stays
 * readable until kube_informer_stop().  Idempotent; accepts NULL. */
void kube_informer_halt(struct kube_informer *inf);
void kube_informer_stop(struct kube_informer *inf);
void kube_informer_get_stats(struct kube_informer *inf, struct kube_informer_stats *ret);

/* ---- leader election with a coordination.k8s.io/v1 Lease ------------------------------ */
/*
 * client-go's leader election: every retry period the elector reads the
 * Lease; the holder renews it (an update with the resourceVersion it read),
 * another candidate takes it over when the holder has not renewed for a
 * lease duration as measured on the candidate's own clock (so clocks need
 * not agree) or when it is free.  A leader that has not renewed within the
 * renew deadline is no longer leading: kube_lease_leading() turns false at
 * that moment by the clock alone, even while a request hangs.  Stopping
 * releases a held lease so a standby takes over at once.
 */
#define KUBE_LEASE_DURATION_MS 10000
#define KUBE_LEASE_RENEW_DEADLINE_MS 7000
#define KUBE_LEASE_RETRY_MS 2000
struct kube_lease_config {
	const char *ns, *name, *identity;	      /* copied */
	int duration_ms, renew_deadline_ms, retry_ms; /* 0: the defaults above */
	/* Called from the elector's thread when leadership starts or ends. */
	void (*on_change)(void *arg, bool leading);
	void (*log)(void *arg, int level, const char *msg); /* may be NULL */
	void *arg;
};
struct kube_lease;
int kube_lease_start(struct kube_client *c, const struct kube_lease_config *cfg,
		     struct kube_lease **ret);
/* Release the lease when held, stop the thread, free; accepts NULL. */
void kube_lease_stop(struct kube_lease *l);
/* Leading now: the last renewal is younger than the renew deadline. */
bool kube_lease_leading(const struct kube_lease *l);
/* RFC 3339 with microseconds (a metav1.MicroTime) of the wall clock now. */
void kube_micro_time(char buf[40]);

#endif /* PODKERNEL_KERNEL_KUBE_H */
