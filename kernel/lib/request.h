/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.h — an HTTP request and its answer as the API server's listener
 * hands them to a handler (kernel/server: the router, the hooks it serves
 * beside the API; kernel/ui: the placement map's /ui/ pages; attach mode's
 * health port).  The types and a response's helpers (request.c): a library
 * that answers requests needs them, not the server.
 */
#ifndef PODKERNEL_KERNEL_LIB_REQUEST_H
#define PODKERNEL_KERNEL_LIB_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

struct pk_query_arg {
	const char *key, *value; /* already URL-decoded */
	bool nul;		 /* either held a NUL byte (%00): cut there, refused */
};
struct pk_request {
	const char *method; /* "GET", "POST", ... */
	const char *path;   /* "/api/v1/namespaces/default/pods", no query */
	const struct pk_query_arg *args;
	size_t nargs;
	const char *authorization; /* header values, NULL when absent */
	/* Every Impersonate-* header (key: its name as sent), in order; repeats kept. */
	const struct pk_query_arg *impersonate;
	size_t nimpersonate;
	const char *content_type;
	const char *accept;
	const char *body;
	size_t body_len;
	bool body_too_large; /* the transport saw more than its body limit */
	/* A client certificate the transport verified against --client-ca-file:
	 * its CN (the user) and O entries (the groups); NULL/0 without one. */
	const char *client_user;
	const char *const *client_groups;
	size_t nclient_groups;
	/* The client's address and User-Agent, for the audit log; NULL when unknown. */
	const char *remote_addr;
	const char *user_agent;
	/* Takes n more bytes for this request from the budgets its body is
	 * counted in (its user's and all bodies in flight) until it is answered:
	 * what decoding the body will hold beyond its bytes.  false: over
	 * budget.  NULL: no budget. */
	bool (*reserve)(void *ctx, size_t n);
	void *reserve_ctx;
};

struct pk_watch;
struct pk_response {
	int status;
	const char *content_type; /* static string */
	char *body;		  /* malloc'ed, body_len bytes */
	size_t body_len;
	struct pk_watch *watch;			/* non-NULL: stream events with pk_watch_read() */
	void (*watch_free)(struct pk_watch *w); /* what frees watch (the server's pk_watch_free) */
	char *warnings;		 /* malloc'ed lines, each sent as a `Warning: 299 - "..."` header */
	size_t warnings_len;	 /* strlen(warnings) */
	size_t warnings_dropped; /* past the cap (PK_RESPONSE_WARNINGS_MAX): counted only */
	bool no_retry_after;	 /* a 429 without Retry-After (a refused eviction, as upstream) */
};
/* Warnings of one response, as kube-apiserver bounds them: each cut at 256
 * characters, at most 4 KiB in all; more are counted, not kept. */
#define PK_RESPONSE_WARNING_MAX 256
#define PK_RESPONSE_WARNINGS_MAX 4096

/* Free what resp holds (its watch with its watch_free) and zero it; accepts NULL. */
void pk_response_clear(struct pk_response *resp);
/* Add a warning (one line of text) to the response. */
void pk_response_warn(struct pk_response *resp, const char *text);

#endif
