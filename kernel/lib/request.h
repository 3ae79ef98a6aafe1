/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.h — an HTTP request and its answer as the API server's listener
 * hands them to a handler (kernel/server: the router, the hooks it serves
 * beside the API; kernel/ui: the placement map's /ui/ pages).  Types
 * only: a library that answers requests needs them, not the server.
 */
#ifndef PODKERNEL_KERNEL_LIB_REQUEST_H
#define PODKERNEL_KERNEL_LIB_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

struct pk_query_arg {
	const char *key, *value; /* already URL-decoded */
};
struct pk_request {
	const char *method; /* "GET", "POST", ... */
	const char *path;   /* "/api/v1/namespaces/default/pods", no query */
	const struct pk_query_arg *args;
	size_t nargs;
	const char *authorization; /* header values, NULL when absent */
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
};

struct pk_watch;
struct pk_response {
	int status;
	const char *content_type; /* static string */
	char *body;		  /* malloc'ed, body_len bytes */
	size_t body_len;
	struct pk_watch *watch; /* non-NULL: stream events with pk_watch_read() */
	char *warnings;		/* malloc'ed lines, each sent as a `Warning: 299 - "..."` header */
};

#endif
