/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl-client.h — what the verbs of podctl's client share: client.c's
 * HTTP calls and option parsing, client_table.c's object helpers and
 * tables, which the verbs' files (client_apply.c, client_get.c,
 * client_delete.c, client_describe.c, client_top.c) use.
 */
#ifndef PODKERNEL_PODCTL_CLIENT_H
#define PODKERNEL_PODCTL_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kernel/api/api.h"
#include "kernel/kube/kube.h"
#include "kernel/podctl/podctl.h"

/* Every request goes through kernel/kube's client (g->conn, opened by podctl_client). */
struct http {
	struct podctl_globals *g;
};
struct opts {
	const char *ns;
	bool all_ns, watch;
	const char *output; /* NULL table, wide, json, yaml */
	const char *selector;
	const char *level; /* top --level NAME */
	const char *files[64];
	size_t nfiles;
	const char *args[4];
	size_t nargs;
};
struct table {
	json_t *rows; /* arrays of strings */
	size_t ncols;
};
struct ctx {
	struct http *h;
	const struct opts *o;
	json_t *nodes; /* name -> Node, for wide pod tables */
	json_t *levels;
};
typedef void (*row_fn)(struct ctx *x, struct table *t, const json_t *obj);

/* ---- client.c: HTTP ------------------------------------------------------------------ */
/* The body podctl reports when no answer came (r: why). */
json_t *cl_no_answer(const struct kube_conn *conn, int r);
/* One request; the status and the JSON body (or a body saying why none came). */
int cl_http_do(struct http *h, const char *method, const char *path, const json_t *body,
	       const char *content_type, long *ret_status, json_t **ret_body);
/* The server's refusal on stderr; the exit code it maps to. */
int cl_report_failure(const char *what, long status, const json_t *body);
/* GET path into ret (200 only); failures are reported, what naming the object. */
int cl_get_json(struct http *h, const char *path, const char *what, json_t **ret);
/* The items of kind in ns (NULL: every namespace); failures are reported (client_table.c). */
int cl_list_items(struct http *h, const char *kind, const char *ns, json_t **ret);

/* ---- client.c: options; client_table.c: helpers
 * ---------------------------------------------------- */
int cl_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cl_parse_opts(const struct http *h, int argc, char **argv, struct opts *o);
/* s in lower case (ASCII) into buf of len bytes. */
char *cl_lower(const char *s, char *buf, size_t len);
/* A group's first topology constraint: its key, else its level; NULL when none. */
const char *cl_group_topology(const json_t *g);
/* Topology level keys present on nodes: outermost (fewest domains) first, host last. */
json_t *cl_level_keys(const json_t *nodes);
/* A level key's short name: "host", or the key without topology.podkernel.dev/. */
const char *cl_level_name(const char *key);
/* name -> item of a list's items. */
json_t *cl_index_by_name(const json_t *items);
/* A node's label; for the host level a node without it is its own domain. */
const char *cl_node_label(const json_t *node, const char *key);

/* ---- client_table.c: tables ----------------------------------------------------------------- */
void cl_table_print_min(struct table *t, bool header, size_t minw);
void cl_table_print(struct table *t, bool header);
/* A kind's table: its header row put in t, and the printer of its rows. */
row_fn cl_table_for(const struct pk_type *ty, struct ctx *x, struct table *t);
/* Drop the NAMESPACE column unless keep_ns. */
void cl_table_trim(struct table *t, bool keep_ns);

/* ---- the verbs ------------------------------------------------------------------------ */
/* client_apply.c */
int cl_cmd_apply(struct http *h, int argc, char **argv);
/* client_delete.c */
int cl_cmd_delete(struct http *h, int argc, char **argv);
/* x->nodes and x->levels from the server's Nodes (client_get.c). */
int cl_load_nodes(struct ctx *x);
int cl_cmd_get(struct http *h, int argc, char **argv);
/* client_describe.c */
int cl_cmd_describe(struct http *h, int argc, char **argv);
/* client_top.c */
int cl_cmd_top(struct http *h, int argc, char **argv);

#endif
