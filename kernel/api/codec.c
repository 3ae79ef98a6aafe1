/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codec.c — reading objects: YAML (multi-document) or JSON into jansson trees.
 *
 * YAML goes through libyaml's event parser: a stack of open collections
 * receives each finished value, so memory is proportional to the tree and
 * nesting is checked (PK_MAX_DEPTH) before it can hurt.  Plain scalars are
 * typed by the YAML 1.2 core schema (pk_scalar_resolve); quoted ones stay
 * strings.  Anchors are kept per document and every alias is a deep copy
 * charged to a node budget, so "billion laughs" inputs fail instead of
 * exploding; "<<" merge keys are honoured.  Input that starts with '{' or '['
 * is read by jansson (one or more concatenated JSON values), falling back to
 * YAML when that fails, which keeps JSON's exact number and escape rules.
 *
 * Every document must be a mapping; "kind: List" and "*List" documents are
 * replaced by their items.  Errors read "NAME:LINE:COL: message".
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "kernel/lib/file.h"
#include "topology/topology.h"

/* Nodes all aliases of one input may expand to. */
#define PK_MAX_ALIAS_NODES 100000

struct frame {
	json_t *node;	/* object or array being filled */
	char *key;	/* mapping: key waiting for its value */
	bool merge_key; /* the waiting key is a plain "<<" */
	json_t *merged; /* mapping: keys that came from "<<" (may be overridden) */
	char *anchor;	/* recorded when the collection closes */
	yaml_mark_t mark;
};

struct anchor {
	char *name;
	json_t *value;
};

struct reader {
	const char *name;
	char *err;
	size_t errlen;
	struct frame stack[PK_MAX_DEPTH + 1];
	int depth;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	size_t alias_budget;
	size_t max_objects;
	json_t *doc;  /* root value of the current document */
	json_t *dups; /* non-NULL: duplicate keys are recorded here (paths), the last wins */
};

static int fail_at(struct reader *r, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(struct reader *r, size_t line, size_t col, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "%s:%zu:%zu: %s", r->name, line, col, msg);
	return -EINVAL;
}

#define fail_mark(r, m, ...) fail_at((r), (m).line + 1, (m).column + 1, __VA_ARGS__)

/* ---- scalars ------------------------------------------------------------ */

static bool all_in(const char *s, size_t len, const char *set)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!s[i] || !strchr(set, s[i]))
			return false;
	return true;
}

static bool is_one_of(const char *s, size_t len, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == len && memcmp(*words, s, len) == 0)
			return true;
	return false;
}

static bool is_yaml_float(const char *s, size_t len)
{
	size_t i = 0, digits = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++, digits++;
	}
	if (!digits)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t exp = 0;

		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++, exp++;
		if (!exp)
			return false;
	}
	return i == len;
}

/* A real, or -ERANGE when it does not fit a double (JSON has no infinity). */
static int real(const char *text, json_t **ret_value)
{
	double d = strtod(text, NULL);

	if (!isfinite(d))
		return -ERANGE;
	*ret_value = json_real(d);
	return *ret_value ? 0 : -ENOMEM;
}

static int integer_or_real(const char *text, int base, json_t **ret_value)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, base);
	if (errno == ERANGE) {
		if (base == 10)
			return real(text, ret_value);
		*ret_value = json_string(text - 2); /* too big for 64 bits: keep as text */
	} else {
		*ret_value = json_integer(v);
	}
	return *ret_value ? 0 : -ENOMEM;
}

static int scalar_value(const char *s, size_t len, json_t **ret_value)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", NULL};
	static const char *const falses[] = {"false", "False", "FALSE", NULL};
	char buf[64];

	if (memchr(s, '\0', len))
		*ret_value = json_stringn(s, len);
	else if (is_one_of(s, len, nulls))
		*ret_value = json_null();
	else if (is_one_of(s, len, trues))
		*ret_value = json_true();
	else if (is_one_of(s, len, falses))
		*ret_value = json_false();
	else if (len >= sizeof(buf))
		*ret_value = json_stringn(s, len);
	else {
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (len > 2 && buf[0] == '0' && buf[1] == 'o' &&
		    all_in(buf + 2, len - 2, "01234567"))
			return integer_or_real(buf + 2, 8, ret_value);
		if (len > 2 && buf[0] == '0' && buf[1] == 'x' &&
		    all_in(buf + 2, len - 2, "0123456789abcdefABCDEF"))
			return integer_or_real(buf + 2, 16, ret_value);
		if (all_in(buf + (buf[0] == '-' || buf[0] == '+'),
			   len - (buf[0] == '-' || buf[0] == '+'), "0123456789"))
			return integer_or_real(buf, 10, ret_value);
		if (is_yaml_float(buf, len))
			return real(buf, ret_value);
		*ret_value = json_stringn(s, len);
	}
	return *ret_value ? 0 : -ENOMEM;
}

int pk_scalar_resolve(const char *s, size_t len, json_t **ret_value)
{
	json_t *v = NULL;
	int r = scalar_value(s, len, &v);

	if (r < 0)
		return r;
	*ret_value = v;
	return 0;
}

bool pk_scalar_needs_quotes(const char *s, size_t len)
{
	static const char *const yaml11[] = {"y",  "Y",	  "yes", "Yes", "YES", "n",
					     "N",  "no",  "No",	 "NO",	"on",  "On",
					     "ON", "off", "Off", "OFF", NULL};
	json_t *v;
	bool quote;

	if (len == 0 || is_one_of(s, len, yaml11))
		return true;
	if (len == 2 && memcmp(s, "<<", 2) == 0)
		return true; /* would read back as a merge key */
	/* Number-like text in any YAML dialect: 0b1, 1_000, 12:30, .5, +1, 0x1F. */
	if (strchr("0123456789+-.", s[0]) &&
	    all_in(s, len, "0123456789abcdefABCDEFxXoObB_:.+-eEinfINFNa"))
		return true;
	if (pk_scalar_resolve(s, len, &v) < 0)
		return true; /* a number out of range still reads as a number */
	quote = !json_is_string(v);
	json_decref(v);
	return quote;
}

/* ---- anchors and aliases ---------------------------------------------------- */

static void anchors_clear(struct reader *r)
{
	for (size_t i = 0; i < r->nanchors; i++) {
		free(r->anchors[i].name);
		json_decref(r->anchors[i].value);
	}
	r->nanchors = 0;
}

static int anchor_add(struct reader *r, const char *name, json_t *value)
{
	char *copy;

	if (r->nanchors == r->capanchors) {
		size_t cap = r->capanchors ? r->capanchors * 2 : 8;
		struct anchor *a = realloc(r->anchors, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		r->anchors = a;
		r->capanchors = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	r->anchors[r->nanchors].name = copy;
	r->anchors[r->nanchors].value = json_incref(value);
	r->nanchors++;
	return 0;
}

static json_t *anchor_find(struct reader *r, const char *name)
{
	for (size_t i = r->nanchors; i-- > 0;)
		if (strcmp(r->anchors[i].name, name) == 0)
			return r->anchors[i].value;
	return NULL;
}

/* Nodes in a tree and its nesting depth (a scalar has depth 0). */
static size_t tree_size(const json_t *v, int *ret_depth)
{
	size_t n = 1, i;
	int depth = 0, d;
	const char *k;
	json_t *child;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, child)
		{
			n += tree_size(child, &d);
			depth = d > depth ? d : depth;
		}
		depth++;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child)
		{
			n += tree_size(child, &d);
			depth = d > depth ? d : depth;
		}
		depth++;
	}
	*ret_depth = depth;
	return n;
}

/* ---- building the tree -------------------------------------------------------- */

static int merge_into(struct reader *r, struct frame *f, json_t *src, yaml_mark_t mark)
{
	const char *k;
	json_t *v;

	if (!json_is_object(src))
		return fail_mark(r, mark, "merge key \"<<\" needs a mapping or a list of mappings");
	if (!f->merged && !(f->merged = json_object()))
		return -ENOMEM;
	json_object_foreach(src, k, v)
	{
		if (json_object_get(f->node, k))
			continue;
		if (json_object_set(f->node, k, v) < 0 ||
		    json_object_set(f->merged, k, json_null()) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Hand a finished value (reference stolen) to the collection that holds it. */
/* "metadata.name" of the key waiting in the innermost open mapping (the
 * first PK_MAX_DUPS_RECORDED; later ones are counted in one integer after them). */
static void record_dup(struct reader *r)
{
	char path[1024];
	size_t n = 0;

	if (json_array_size(r->dups) >= PK_MAX_DUPS_RECORDED) {
		json_t *more = json_array_get(r->dups, PK_MAX_DUPS_RECORDED);
		if (json_is_integer(more))
			json_integer_set(more, json_integer_value(more) + 1);
		else
			json_array_append_new(r->dups, json_integer(1));
		return;
	}

	path[0] = '\0';
	for (int i = 0; i < r->depth && n + 1 < sizeof(path); i++) {
		const struct frame *f = &r->stack[i];

		if (json_is_array(f->node))
			n += (size_t)snprintf(path + n, sizeof(path) - n, "[%zu]",
					      json_array_size(f->node));
		else if (f->key)
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s", n ? "." : "",
					      f->key);
	}
	json_array_append_new(r->dups, json_string(path));
}

static int attach(struct reader *r, json_t *value, yaml_mark_t mark)
{
	struct frame *f;
	int ret = 0;

	if (!value)
		return -ENOMEM;
	if (r->depth == 0) {
		json_decref(r->doc);
		r->doc = value;
		return 0;
	}
	f = &r->stack[r->depth - 1];
	if (json_is_array(f->node))
		return json_array_append_new(f->node, value) < 0 ? -ENOMEM : 0;
	if (f->merge_key) {
		if (json_is_array(value)) {
			size_t i;
			json_t *item;

			json_array_foreach(
			    value, i, item) if ((ret = merge_into(r, f, item, mark)) < 0) break;
		} else {
			ret = merge_into(r, f, value, mark);
		}
		json_decref(value);
	} else if (json_object_get(f->node, f->key) &&
		   !(f->merged && json_object_get(f->merged, f->key)) && !r->dups) {
		ret = fail_mark(r, mark, "duplicate key \"%s\"", f->key);
		json_decref(value);
	} else {
		if (r->dups && json_object_get(f->node, f->key) &&
		    !(f->merged && json_object_get(f->merged, f->key)))
			record_dup(r);
		if (f->merged)
			json_object_del(f->merged, f->key);
		ret = json_object_set_new(f->node, f->key, value) < 0 ? -ENOMEM : 0;
	}
	free(f->key);
	f->key = NULL;
	f->merge_key = false;
	return ret;
}

static bool waiting_for_key(const struct reader *r)
{
	const struct frame *f;

	if (r->depth == 0)
		return false;
	f = &r->stack[r->depth - 1];
	return json_is_object(f->node) && !f->key && !f->merge_key;
}

static int on_scalar(struct reader *r, const yaml_event_t *ev)
{
	const char *text = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	json_t *value;
	int ret;

	if (waiting_for_key(r)) {
		struct frame *f = &r->stack[r->depth - 1];

		if (memchr(text, '\0', len))
			return fail_mark(r, ev->start_mark, "mapping key contains a NUL character");
		if (plain && !tag && len == 2 && memcmp(text, "<<", 2) == 0) {
			f->merge_key = true;
			return 0;
		}
		f->key = strndup(text, len);
		return f->key ? 0 : -ENOMEM;
	}
	if (memchr(text, '\0', len))
		return fail_mark(r, ev->start_mark, "NUL characters are not allowed in strings");
	if (tag && (strcmp(tag, YAML_STR_TAG) == 0 || strcmp(tag, "!") == 0))
		plain = false;
	if (!plain)
		value = json_stringn(text, len);
	else if ((ret = pk_scalar_resolve(text, len, &value)) == -ERANGE)
		return fail_mark(r, ev->start_mark,
				 "number %.*s is out of range (largest is about 1.8e308)", (int)len,
				 text);
	else if (ret < 0)
		return ret;
	if (!value)
		return -ENOMEM;
	if (ev->data.scalar.anchor &&
	    (ret = anchor_add(r, (const char *)ev->data.scalar.anchor, value)) < 0) {
		json_decref(value);
		return ret;
	}
	return attach(r, value, ev->start_mark);
}

static int on_alias(struct reader *r, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	json_t *target = anchor_find(r, name);
	size_t n;
	int depth;

	if (!target)
		return fail_mark(r, ev->start_mark, "unknown anchor \"%s\"", name);
	if (waiting_for_key(r))
		return fail_mark(r, ev->start_mark, "aliases cannot be mapping keys");
	n = tree_size(target, &depth);
	if (n > r->alias_budget)
		return fail_mark(r, ev->start_mark, "aliases expand to more than %d nodes",
				 PK_MAX_ALIAS_NODES);
	if (r->depth + depth > PK_MAX_DEPTH)
		return fail_mark(r, ev->start_mark, "nesting deeper than %d levels", PK_MAX_DEPTH);
	r->alias_budget -= n;
	return attach(r, json_deep_copy(target), ev->start_mark);
}

static int on_collection_start(struct reader *r, const yaml_event_t *ev, bool mapping)
{
	const yaml_char_t *anchor =
	    mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
	struct frame *f;

	if (waiting_for_key(r))
		return fail_mark(r, ev->start_mark, "mapping keys must be scalars");
	if (r->depth >= PK_MAX_DEPTH)
		return fail_mark(r, ev->start_mark, "nesting deeper than %d levels", PK_MAX_DEPTH);
	f = &r->stack[r->depth];
	memset(f, 0, sizeof(*f));
	f->mark = ev->start_mark;
	f->node = mapping ? json_object() : json_array();
	if (!f->node)
		return -ENOMEM;
	if (anchor && !(f->anchor = strdup((const char *)anchor))) {
		json_decref(f->node);
		return -ENOMEM;
	}
	r->depth++;
	return 0;
}

static void frame_clear(struct frame *f)
{
	json_decref(f->node);
	json_decref(f->merged);
	free(f->key);
	free(f->anchor);
	memset(f, 0, sizeof(*f));
}

static int on_collection_end(struct reader *r)
{
	struct frame f = r->stack[--r->depth];
	int ret = 0;

	memset(&r->stack[r->depth], 0, sizeof(r->stack[r->depth]));
	if (f.anchor)
		ret = anchor_add(r, f.anchor, f.node);
	if (ret == 0) {
		ret = attach(r, json_incref(f.node), f.mark);
	}
	frame_clear(&f);
	return ret;
}

/* ---- documents -------------------------------------------------------------- */

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a bool";
	default:
		return "null";
	}
}

static bool is_list_kind(const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	size_t n = kind ? strlen(kind) : 0;

	return n >= 4 && strcmp(kind + n - 4, "List") == 0;
}

/* Append an object, or a List's items, to out. */
static int collect(struct reader *r, json_t *out, json_t *obj, size_t line, size_t col, int depth)
{
	json_t *items, *item;
	size_t i;
	int ret;

	if (!json_is_object(obj))
		return fail_at(r, line, col, "expected an object (a mapping), found %s",
			       type_name(obj));
	if (!is_list_kind(obj)) {
		if (json_array_size(out) >= r->max_objects)
			return fail_at(r, line, col, "more than %zu objects", r->max_objects);
		return json_array_append(out, obj) < 0 ? -ENOMEM : 0;
	}
	items = json_object_get(obj, "items");
	if (items && !json_is_array(items) && !json_is_null(items))
		return fail_at(r, line, col, "items: expected a list, found %s", type_name(items));
	if (depth >= PK_MAX_DEPTH)
		return fail_at(r, line, col, "Lists nested too deeply");
	json_array_foreach(items, i, item)
	{
		if (!json_is_object(item))
			return fail_at(r, line, col, "items[%zu]: expected an object, found %s", i,
				       type_name(item));
		if ((ret = collect(r, out, item, line, col, depth + 1)) < 0)
			return ret;
	}
	return 0;
}

static int parser_error(struct reader *r, const yaml_parser_t *p)
{
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;

	if (p->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (p->context)
		return fail_at(r, m->line + 1, m->column + 1, "%s %s",
			       p->problem ? p->problem : "invalid YAML", p->context);
	return fail_at(r, m->line + 1, m->column + 1, "%s",
		       p->problem ? p->problem : "invalid YAML");
}

static void reader_clear(struct reader *r)
{
	while (r->depth > 0)
		frame_clear(&r->stack[--r->depth]);
	anchors_clear(r);
	free(r->anchors);
	r->anchors = NULL;
	r->capanchors = 0;
	json_decref(r->doc);
	r->doc = NULL;
}

/*
 * Parse YAML; each non-empty document's objects are appended to out, or with
 * one_doc the single document's value goes to *ret_single (a second document
 * is an error).
 */
static int read_yaml(struct reader *r, const char *buf, size_t len, json_t *out, bool one_doc,
		     json_t **ret_single)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	yaml_mark_t doc_mark = {0};
	size_t ndocs = 0;
	bool done = false;
	int ret = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	r->alias_budget = PK_MAX_ALIAS_NODES;
	while (!done && ret == 0) {
		if (!yaml_parser_parse(&parser, &ev)) {
			ret = parser_error(r, &parser);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			doc_mark = ev.start_mark;
			break;
		case YAML_DOCUMENT_END_EVENT:
			anchors_clear(r);
			if (!r->doc || json_is_null(r->doc))
				break;
			if (one_doc) {
				if (++ndocs > 1) {
					ret = fail_mark(r, doc_mark, "expected a single document");
					break;
				}
				*ret_single = r->doc;
				r->doc = NULL;
				break;
			}
			ret = collect(r, out, r->doc, doc_mark.line + 1, doc_mark.column + 1, 0);
			json_decref(r->doc);
			r->doc = NULL;
			break;
		case YAML_SCALAR_EVENT:
			ret = on_scalar(r, &ev);
			break;
		case YAML_ALIAS_EVENT:
			ret = on_alias(r, &ev);
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			ret = on_collection_start(r, &ev, ev.type == YAML_MAPPING_START_EVENT);
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			ret = on_collection_end(r);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	reader_clear(r);
	return ret;
}

/* ---- JSON ------------------------------------------------------------------- */

static void offset_to_line(const char *buf, size_t off, size_t *line, size_t *col)
{
	size_t l = 1, c = 1;

	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static size_t skip_space(const char *buf, size_t len, size_t off)
{
	while (off < len && strchr(" \t\r\n", buf[off]) && buf[off])
		off++;
	return off;
}

/* One or more concatenated JSON values; each must be an object or List. */
static int read_json(struct reader *r, const char *buf, size_t len, json_t *out, bool one_doc,
		     json_t **ret_single)
{
	size_t off = skip_space(buf, len, 0);

	while (off < len) {
		json_error_t jerr;
		json_t *v;
		size_t line, col;
		int depth, ret;

		v = json_loadb(buf + off, len - off,
			       JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
		if (!v) {
			offset_to_line(buf,
				       off + (jerr.position > 0 ? (size_t)jerr.position - 1 : 0),
				       &line, &col);
			return fail_at(r, line, col, "%s", jerr.text);
		}
		offset_to_line(buf, off, &line, &col);
		tree_size(v, &depth);
		if (depth > PK_MAX_DEPTH) {
			json_decref(v);
			return fail_at(r, line, col, "nesting deeper than %d levels", PK_MAX_DEPTH);
		}
		if (one_doc) {
			if (skip_space(buf, len, off + jerr.position) < len) {
				json_decref(v);
				offset_to_line(buf, off + jerr.position, &line, &col);
				return fail_at(r, line, col, "expected a single document");
			}
			*ret_single = v;
			return 0;
		}
		ret = collect(r, out, v, line, col, 0);
		json_decref(v);
		if (ret < 0)
			return ret;
		off = skip_space(buf, len, off + jerr.position);
	}
	return 0;
}

static bool looks_like_json(const char *buf, size_t len)
{
	size_t off = skip_space(buf, len, 0);

	return off < len && (buf[off] == '{' || buf[off] == '[');
}

/* ---- entry points ------------------------------------------------------------- */

/* JSON when it looks like JSON (else, or when jansson refuses it, YAML). */
static int read_input(struct reader *r, const char *buf, size_t len, json_t *out, bool one_doc,
		      json_t **ret_single)
{
	char *err = r->err;
	size_t errlen = r->errlen;
	int ret;

	/* jansson refuses duplicate keys; recorded ones (r->dups) are then read
	 * by the YAML reader below, which sees each (JSON is YAML flow style). */
	if (looks_like_json(buf, len)) {
		char jerr[512];
		json_t *tmp = one_doc ? NULL : json_array();

		if (!one_doc && !tmp)
			return -ENOMEM;
		r->err = jerr;
		r->errlen = sizeof(jerr);
		ret = read_json(r, buf, len, tmp, one_doc, ret_single);
		if (ret == 0) {
			if (!one_doc)
				ret = json_array_extend(out, tmp) < 0 ? -ENOMEM : 0;
			json_decref(tmp);
			return ret;
		}
		json_decref(tmp);
		if (ret != -EINVAL)
			return ret;
		/* Not JSON after all?  YAML flow style is a superset. */
		r->err = err;
		r->errlen = errlen;
		ret = read_yaml(r, buf, len, out, one_doc, ret_single);
		if (ret == -EINVAL && err && errlen)
			snprintf(err, errlen, "%s", jerr);
		return ret;
	}
	return read_yaml(r, buf, len, out, one_doc, ret_single);
}

static size_t max_objects_for(size_t max_bytes)
{
	size_t n = max_bytes / PK_FILE_BYTES_PER_OBJECT;

	return n > PK_MAX_OBJECTS ? n : PK_MAX_OBJECTS;
}

/* A file over its limit: -EFBIG, said in bytes and MiB. */
static int too_big(struct reader *r, size_t max_bytes)
{
	fail_at(r, 1, 1, "input is larger than %zu bytes (%.1f MiB)", max_bytes,
		(double)max_bytes / (1024.0 * 1024.0));
	return -EFBIG;
}

static int read_any(const char *name, const char *buf, size_t len, json_t *out, bool one_doc,
		    json_t **ret_single, json_t *dups, char *err, size_t errlen)
{
	struct reader r = {.name = name ? name : "<input>",
			   .err = err,
			   .errlen = errlen,
			   .max_objects = PK_MAX_OBJECTS,
			   .dups = dups};

	if (err && errlen)
		err[0] = '\0';
	if (!buf && len)
		return -EINVAL;
	if (!buf)
		buf = ""; /* libyaml insists on an input pointer */
	if (len > PK_MAX_INPUT_BYTES)
		return fail_at(&r, 1, 1, "input is larger than %d bytes", PK_MAX_INPUT_BYTES);
	return read_input(&r, buf, len, out, one_doc, ret_single);
}

int pk_read_buffer(const char *name, const char *buf, size_t len, json_t **ret_objects, char *err,
		   size_t errlen)
{
	json_t *out = json_array();
	int ret;

	if (!out)
		return -ENOMEM;
	ret = read_any(name, buf, len, out, false, NULL, NULL, err, errlen);
	if (ret < 0) {
		json_decref(out);
		return ret;
	}
	*ret_objects = out;
	return 0;
}

int pk_parse_document(const char *name, const char *buf, size_t len, json_t **ret_value, char *err,
		      size_t errlen)
{
	return pk_parse_document_dups(name, buf, len, ret_value, NULL, err, errlen);
}

int pk_parse_document_dups(const char *name, const char *buf, size_t len, json_t **ret_value,
			   json_t *dups, char *err, size_t errlen)
{
	json_t *value = NULL;
	int ret;

	ret = read_any(name, buf, len, NULL, true, &value, dups, err, errlen);
	if (ret < 0) {
		json_decref(value);
		return ret;
	}
	if (!value) {
		struct reader r = {.name = name ? name : "<input>", .err = err, .errlen = errlen};

		return fail_at(&r, 1, 1, "empty document");
	}
	*ret_value = value;
	return 0;
}

int pk_read_file_max(const char *path, size_t max_bytes, json_t **ret_objects, char *err,
		     size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "<stdin>" : path;
	struct reader r = {.name = name, .err = err, .errlen = errlen};
	json_t *out;
	char *buf = NULL;
	size_t len = 0;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!max_bytes)
		max_bytes = PK_MAX_FILE_BYTES;
	r.max_objects = max_objects_for(max_bytes);
	ret = pk_read_input(path, max_bytes, &buf, &len);
	if (ret == -EISDIR) {
		if (err && errlen)
			snprintf(err, errlen, "%s: is a directory (a file is expected)", path);
		return ret;
	}
	if (ret == -EFBIG)
		return too_big(&r, max_bytes);
	if (ret < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", name,
				 ret == -EIO ? "read error" : strerror(-ret));
		return ret;
	}
	out = json_array();
	ret = out ? read_input(&r, buf ? buf : "", len, out, false, NULL) : -ENOMEM;
	free(buf);
	if (ret < 0) {
		json_decref(out);
		return ret;
	}
	*ret_objects = out;
	return 0;
}

int pk_read_file(const char *path, json_t **ret_objects, char *err, size_t errlen)
{
	return pk_read_file_max(path, 0, ret_objects, err, errlen);
}

int pk_parse_size(const char *s, size_t *ret_bytes)
{
	int64_t milli;

	if (!s || topo_quantity_parse(s, &milli) < 0 || milli < 1000 || milli % 1000)
		return -EINVAL;
	if ((uint64_t)(milli / 1000) > SIZE_MAX / 2)
		return -ERANGE;
	*ret_bytes = (size_t)(milli / 1000);
	return 0;
}
