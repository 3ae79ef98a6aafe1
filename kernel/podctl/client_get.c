/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_get.c — `podctl get`: a table per kind (wide with each pod's
 * node and topology domains), the objects as JSON or YAML, -o jsonpath and
 * custom-columns printers, and -w following the watch stream.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/kube/kube.h"
#include "kernel/podctl/podctl-client.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

/* ---- get --------------------------------------------------------------------------------------
 */

/* -o jsonpath=TEMPLATE or -o custom-columns=NAME:PATH,...: compiled once. */
struct printer {
	struct podctl_jsonpath *jp; /* jsonpath */
	size_t ncols;		    /* custom-columns */
	char *headers[16];
	struct podctl_jsonpath *cols[16];
};

static void printer_free(struct printer *pr)
{
	podctl_jsonpath_free(pr->jp);
	for (size_t i = 0; i < pr->ncols; i++) {
		free(pr->headers[i]);
		podctl_jsonpath_free(pr->cols[i]);
	}
}

static int printer_compile(const char *output, struct printer *pr)
{
	char err[256];

	if (strncmp(output, "jsonpath=", 9) == 0) {
		if (!output[9])
			return cl_usage_error("-o jsonpath: template format specified but no "
					      "template given");
		pr->jp = podctl_jsonpath_parse(output + 9, err, sizeof(err));
		return pr->jp ? 0
			      : cl_usage_error("error parsing jsonpath %s: %s", output + 9, err);
	}
	char *spec = strdup(output + 15), *save = NULL, *col;
	int r = 0;

	for (col = strtok_r(spec, ",", &save); col && !r; col = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(col, ':'), *t;

		if (!colon || colon == col || !colon[1])
			r = cl_usage_error("-o custom-columns: unexpected spec '%s', expected "
					   "<header>:<json-path-expr>",
					   col);
		else if (pr->ncols >= sizeof(pr->cols) / sizeof(pr->cols[0]))
			r = cl_usage_error("-o custom-columns: at most 16 columns");
		if (r)
			break;
		*colon = '\0';
		t = podctl_relaxed_path(colon + 1);
		pr->cols[pr->ncols] = podctl_jsonpath_parse(t, err, sizeof(err));
		if (!pr->cols[pr->ncols])
			r = cl_usage_error("-o custom-columns: column %s: error parsing %s: %s",
					   col, colon + 1, err);
		else
			pr->headers[pr->ncols++] = strdup(col);
		free(t);
	}
	if (!r && pr->ncols == 0)
		r = cl_usage_error("-o custom-columns: no columns given");
	free(spec);
	return r;
}

/* Print objs (an array) with the compiled printer; doc is what a template
 * sees (one object, or a List). */
static int printer_print(const struct printer *pr, const json_t *objs, const json_t *doc,
			 bool header)
{
	char err[256];

	if (pr->jp) {
		if (podctl_jsonpath_print(pr->jp, doc, stdout, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "podctl: error executing jsonpath: %s\n", err);
		return PODCTL_EXIT_FAILURE;
	}
	/* kubectl's custom-columns: a tab writer with cells padded by 3, at least 6 wide */
	struct table t = {.rows = json_array(), .ncols = pr->ncols};
	json_t *hdr = json_array(), *obj;
	size_t i;
	int r = 0;

	for (size_t c = 0; c < pr->ncols; c++)
		json_array_append_new(hdr, json_string(pr->headers[c]));
	json_array_append_new(t.rows, hdr);
	json_array_foreach(objs, i, obj)
	{
		json_t *row = json_array();

		for (size_t c = 0; c < pr->ncols; c++) {
			json_t *vals = podctl_jsonpath_find(pr->cols[c], obj, err, sizeof(err));
			char *cell = vals ? podctl_column_text(vals) : NULL;

			if (!vals) {
				fprintf(stderr, "podctl: error executing jsonpath: %s\n", err);
				r = PODCTL_EXIT_FAILURE;
			}
			json_array_append_new(row, json_string(cell ? cell : ""));
			free(cell);
			json_decref(vals);
		}
		json_array_append_new(t.rows, row);
	}
	if (!r)
		cl_table_print_min(&t, header, 6);
	json_decref(t.rows);
	return r;
}

struct watch_arg {
	struct ctx *x;
	row_fn row;
	const struct pk_type *ty;
	const struct printer *pr;
	bool header_done;
	bool structured;
	json_t *refusal; /* the Status of a watch the server refused */
	char other[81];	 /* else the first line that was not JSON, printable */
};

/* One line of the watch stream (kube_stream): an event printed, or the Status of a refusal. */
static int on_watch_line(void *arg, const char *line, size_t len)
{
	struct watch_arg *w = arg;
	json_t *ev = json_loadb(line, len, 0, NULL);
	json_t *obj = json_object_get(ev, "object");

	if (!obj) {
		if (json_is_object(ev) && !json_object_get(ev, "type") && !w->refusal)
			w->refusal = json_incref(ev);
		else if (!ev && !w->other[0])
			kube_printable(line, len, w->other, sizeof(w->other));
		json_decref(ev);
		return 0;
	}
	if (w->pr->jp || w->pr->ncols) {
		json_t *one = json_pack("[O]", obj);

		printer_print(w->pr, one, obj, !w->header_done);
		w->header_done = true;
		json_decref(one);
		fflush(stdout);
	} else if (w->structured) {
		pk_write(stdout, ev,
			 strcmp(w->x->o->output, "yaml") == 0 ? PK_FORMAT_YAML : PK_FORMAT_JSON);
	} else {
		struct table t = {0};

		cl_table_for(w->ty, w->x, &t);
		w->row(w->x, &t, obj);
		cl_table_trim(&t, w->x->o->all_ns && w->ty->namespaced);
		/* the event type replaces the AGE column's meaning: show it first */
		json_array_insert_new(json_array_get(t.rows, 0), 0, json_string("EVENT"));
		json_array_insert_new(
		    json_array_get(t.rows, 1), 0,
		    json_string(json_string_value(json_object_get(ev, "type")) ?: ""));
		t.ncols++;
		cl_table_print(&t, !w->header_done);
		w->header_done = true;
		json_decref(t.rows);
	}
	json_decref(ev);
	fflush(stdout);
	return 0;
}

int cl_load_nodes(struct ctx *x)
{
	json_t *items = NULL;
	int r = cl_list_items(x->h, "Node", NULL, &items);

	if (r)
		return r;
	x->nodes = cl_index_by_name(items);
	x->levels = cl_level_keys(items);
	json_array_append_new(x->levels, json_string(TOPO_LABEL_HOSTNAME));
	json_decref(items);
	return 0;
}

/* s percent-encoded as a query value, malloc'ed (NULL on ENOMEM). */
static char *query_escape(const char *s)
{
	size_t len = strlen(s) * 3 + 5;
	char *buf = malloc(len);

	return buf ? kube_escape(s, buf, len) : NULL;
}

static char *query_path(const struct pk_type *ty, const struct opts *o, const char *name,
			bool watch)
{
	char *base = podctl_type_path(ty, o->all_ns ? NULL : o->ns, watch ? NULL : name, NULL),
	     *p = NULL;
	char *sel = o->selector ? query_escape(o->selector) : NULL;
	char *n = watch && name ? query_escape(name) : NULL;

	if (base && (!o->selector || sel) && (!watch || !name || n) &&
	    asprintf(&p, "%s%s%s%s%s%s%s%s", base, watch || sel ? "?" : "", watch ? "watch=1" : "",
		     watch && sel ? "&" : "", sel ? "labelSelector=" : "", sel ? sel : "",
		     n ? "&fieldSelector=metadata.name%3D" : "", n ? n : "") < 0)
		p = NULL;
	free(n);
	free(sel);
	free(base);
	return p;
}

struct got {
	const struct pk_type *ty;
	json_t *items; /* with kind and apiVersion put back */
	json_t *body;  /* the named object, when a NAME was given */
};

/* List a kind (or get NAME of it) for get. */
static int get_kind(struct http *h, const struct opts *o, struct got *g)
{
	char *path = query_path(g->ty, o, o->nargs == 2 ? o->args[1] : NULL, false);
	json_t *body = NULL, *it;
	char av[128];
	size_t i;
	int r;

	if (!path)
		return PODCTL_EXIT_FAILURE;
	r = cl_get_json(h, path, o->nargs == 2 ? o->args[1] : g->ty->plural, &body);
	free(path);
	if (r)
		return r;
	if (o->nargs == 2) {
		g->body = body;
		g->items = json_pack("[O]", body);
		return 0;
	}
	g->items = json_incref(json_object_get(body, "items")) ?: json_array();
	json_decref(body);
	/* the list's items carry no kind: put it back for printing and apply */
	snprintf(av, sizeof(av), "%s%s%s", g->ty->group, *g->ty->group ? "/" : "", g->ty->version);
	json_array_foreach(g->items, i, it)
	{
		if (!json_object_get(it, "kind"))
			json_object_set_new(it, "kind", json_string(g->ty->kind));
		if (!json_object_get(it, "apiVersion"))
			json_object_set_new(it, "apiVersion", json_string(av));
	}
	return 0;
}

/* One table per kind, as kubectl prints `get pods,pg`: a blank line between
 * them, and with more than one kind each name prefixed by kind[.group]/. */
static void print_tables(struct ctx *x, struct got *got, size_t n)
{
	bool first = true;

	for (size_t k = 0; k < n; k++) {
		struct table t = {0};
		row_fn row;
		size_t i;
		json_t *it, *r;
		char lk[64], pre[192];

		if (json_array_size(got[k].items) == 0)
			continue;
		row = cl_table_for(got[k].ty, x, &t);
		json_array_foreach(got[k].items, i, it) row(x, &t, it);
		snprintf(pre, sizeof(pre), "%s%s%s/", cl_lower(got[k].ty->kind, lk, sizeof(lk)),
			 *got[k].ty->group ? "." : "", got[k].ty->group);
		json_array_foreach(t.rows, i, r) if (i > 0 && n > 1)
		{
			char *cell = NULL;

			if (asprintf(&cell, "%s%s", pre, json_string_value(json_array_get(r, 1))) >=
			    0)
				json_array_set_new(r, 1, json_string(cell));
			free(cell);
		}
		cl_table_trim(&t, x->o->all_ns && got[k].ty->namespaced);
		if (!first)
			printf("\n");
		cl_table_print(&t, true);
		json_decref(t.rows);
		first = false;
	}
}

static int get_watch(struct http *h, struct ctx *x, const struct pk_type *ty,
		     const struct printer *pr)
{
	struct table t = {0};
	struct watch_arg w = {.x = x, .ty = ty, .pr = pr};
	json_t *why = NULL;
	char *path = query_path(ty, x->o, x->o->nargs == 2 ? x->o->args[1] : NULL, true);
	long st = 0;
	int r;

	if (!path)
		return PODCTL_EXIT_FAILURE;
	w.structured = x->o->output && strcmp(x->o->output, "wide") != 0;
	w.row = cl_table_for(ty, x, &t);
	json_decref(t.rows);
	/* until the server ends the stream or the user interrupts podctl */
	r = kube_stream(h->g->conn, path, on_watch_line, &w, NULL, &st);
	if (r < 0) {
		why = cl_no_answer(h->g->conn, r);
		r = cl_report_failure("watch", st == 200 ? 0 : st, why);
	} else if (st != 200) {
		why = w.refusal
			  ? json_incref(w.refusal)
			  : json_pack("{s:s+}", "message",
				      "the answer is not JSON: ", w.other[0] ? w.other : "(empty)");
		r = cl_report_failure("watch", st, why);
	}
	free(path);
	json_decref(why);
	json_decref(w.refusal);
	return r;
}

static int get_output(struct ctx *x, const struct printer *pr, struct got *got, size_t n)
{
	const struct opts *o = x->o;
	json_t *all = json_array(), *doc;
	int r = 0;

	for (size_t k = 0; k < n; k++)
		json_array_extend(all, got[k].items);
	/* one named object of one kind is itself; anything else a List */
	doc = n == 1 && got[0].body ? json_incref(got[0].body) : pk_list_new(json_incref(all));
	if (o->output && (strcmp(o->output, "json") == 0 || strcmp(o->output, "yaml") == 0)) {
		pk_write(stdout, doc,
			 strcmp(o->output, "yaml") == 0 ? PK_FORMAT_YAML : PK_FORMAT_JSON);
	} else if (json_array_size(all) == 0) {
		bool ns = !o->all_ns;

		for (size_t k = 0; k < n; k++)
			ns = ns && got[k].ty->namespaced;
		fprintf(stderr, "No resources found%s%s.\n", ns ? " in " : "", ns ? o->ns : "");
	} else if (pr->jp || pr->ncols) {
		r = printer_print(pr, all, doc, true);
	} else {
		print_tables(x, got, n);
	}
	json_decref(doc);
	json_decref(all);
	return r;
}

int cl_cmd_get(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	struct ctx x = {.h = h, .o = &o};
	struct printer pr = {0};
	struct got got[16] = {0};
	size_t n = 0;
	int r = cl_parse_opts(h, argc, argv, &o);

	if (r)
		return r;
	if (o.nargs < 1 || o.nargs > 2)
		return cl_usage_error("usage: podctl get KIND[,KIND...] [NAME] [-n NS|-A] "
				      "[-o wide|json|yaml|jsonpath=TEMPLATE|custom-columns=SPEC] "
				      "[-l SELECTOR] [-w]");
	/* pods,pg: each kind in turn, as kubectl */
	char *kinds = strdup(o.args[0]), *save = NULL;

	for (char *k = strtok_r(kinds, ",", &save); k && !r; k = strtok_r(NULL, ",", &save)) {
		if (n >= sizeof(got) / sizeof(got[0]))
			r = cl_usage_error("get: at most 16 kinds");
		else if (!(got[n++].ty = podctl_resolve_kind(k)))
			r = cl_usage_error("get: unknown kind '%s'", k);
	}
	free(kinds);
	if (!r && n == 0)
		r = cl_usage_error("get: no kind given");
	if (!r && o.watch && n > 1)
		r = cl_usage_error("get: watch is only supported on one kind, but %zu were given",
				   n);
	if (!r && o.output &&
	    (strncmp(o.output, "jsonpath=", 9) == 0 ||
	     strncmp(o.output, "custom-columns=", 15) == 0))
		r = printer_compile(o.output, &pr);
	if (!r && (!o.output || strcmp(o.output, "wide") == 0))
		r = cl_load_nodes(&x);
	if (!r && o.watch)
		r = get_watch(h, &x, got[0].ty, &pr);
	else if (!r) {
		for (size_t k = 0; k < n && !r; k++)
			r = get_kind(h, &o, &got[k]);
		if (!r)
			r = get_output(&x, &pr, got, n);
	}
	for (size_t k = 0; k < n; k++) {
		json_decref(got[k].items);
		json_decref(got[k].body);
	}
	printer_free(&pr);
	json_decref(x.nodes);
	json_decref(x.levels);
	return r;
}
