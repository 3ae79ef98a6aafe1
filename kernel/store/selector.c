/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selector.c — Kubernetes label and field selectors.
 *
 * A small recursive-descent scanner over the query-string syntax kube-apiserver
 * accepts: comma-separated requirements, each "key", "!key", "key=v",
 * "key==v", "key!=v", "key in (a,b)" or "key notin (a,b)".  Field selectors
 * use the same scanner restricted to the equality forms; their keys are dotted
 * paths into the object.  Matching follows upstream: != and notin match when
 * the key is absent.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store.h"

#define SEL_MAX_REQS 256
#define SEL_MAX_VALUES 256
#define SEL_MAX_LEN 8192

struct scan {
	const char *s;
	size_t pos;
	char *err;
	size_t errlen;
};

static void skip_ws(struct scan *sc)
{
	while (sc->s[sc->pos] == ' ' || sc->s[sc->pos] == '\t')
		sc->pos++;
}

static int fail(struct scan *sc, const char *what)
{
	if (sc->err && sc->errlen)
		snprintf(sc->err, sc->errlen, "col %zu: %s", sc->pos + 1, what);
	return -EINVAL;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == '/';
}

/* A key or value: a run of label characters (may be empty for values). */
static char *scan_word(struct scan *sc)
{
	size_t start = sc->pos;
	while (word_char(sc->s[sc->pos]))
		sc->pos++;
	return strndup(sc->s + start, sc->pos - start);
}

static bool scan_keyword(struct scan *sc, const char *kw)
{
	size_t n = strlen(kw);
	if (strncmp(sc->s + sc->pos, kw, n) != 0)
		return false;
	char next = sc->s[sc->pos + n];
	if (next != ' ' && next != '\t' && next != '(')
		return false;
	sc->pos += n;
	return true;
}

static void req_clear(struct pk_sel_req *r)
{
	free(r->key);
	for (size_t i = 0; i < r->nvalues; i++)
		free(r->values[i]);
	free(r->values);
}

static int add_value(struct pk_sel_req *r, char *v)
{
	if (!v)
		return -ENOMEM;
	char **nv = realloc(r->values, (r->nvalues + 1) * sizeof(*nv));
	if (!nv) {
		free(v);
		return -ENOMEM;
	}
	r->values = nv;
	r->values[r->nvalues++] = v;
	return 0;
}

static int scan_set(struct scan *sc, struct pk_sel_req *r)
{
	skip_ws(sc);
	if (sc->s[sc->pos] != '(')
		return fail(sc, "expected '('");
	sc->pos++;
	for (;;) {
		skip_ws(sc);
		if (r->nvalues >= SEL_MAX_VALUES)
			return fail(sc, "too many values");
		int rc = add_value(r, scan_word(sc));
		if (rc < 0)
			return rc;
		skip_ws(sc);
		if (sc->s[sc->pos] == ',') {
			sc->pos++;
			continue;
		}
		if (sc->s[sc->pos] == ')') {
			sc->pos++;
			return 0;
		}
		return fail(sc, "expected ',' or ')' in value set");
	}
}

static int scan_req(struct scan *sc, bool fields, struct pk_sel_req *r)
{
	skip_ws(sc);
	bool neg = false;
	if (sc->s[sc->pos] == '!') {
		if (fields)
			return fail(sc, "expected a field name");
		neg = true;
		sc->pos++;
		skip_ws(sc);
	}
	r->key = scan_word(sc);
	if (!r->key)
		return -ENOMEM;
	if (!r->key[0])
		return fail(sc, "expected a key");
	skip_ws(sc);
	if (neg) {
		r->op = PK_SELOP_NOT_EXISTS;
		return 0;
	}
	const char *p = sc->s + sc->pos;
	if (*p == ',' || *p == '\0') {
		if (fields)
			return fail(sc, "expected '=', '==' or '!='");
		r->op = PK_SELOP_EXISTS;
		return 0;
	}
	if (p[0] == '=' || (p[0] == '!' && p[1] == '=')) {
		r->op = p[0] == '=' ? PK_SELOP_EQ : PK_SELOP_NE;
		sc->pos += (p[0] == '!' || p[1] == '=') ? 2 : 1;
		skip_ws(sc);
		return add_value(r, scan_word(sc));
	}
	if (!fields && scan_keyword(sc, "in")) {
		r->op = PK_SELOP_IN;
		return scan_set(sc, r);
	}
	if (!fields && scan_keyword(sc, "notin")) {
		r->op = PK_SELOP_NOTIN;
		return scan_set(sc, r);
	}
	return fail(sc, fields ? "expected '=', '==' or '!='"
			       : "expected '=', '==', '!=', 'in', 'notin', ',' or end");
}

int pk_selector_parse(const char *s, bool fields, struct pk_selector **ret, char *err,
		      size_t errlen)
{
	if (!s || strlen(s) > SEL_MAX_LEN) {
		if (err && errlen)
			snprintf(err, errlen, "selector longer than %d bytes", SEL_MAX_LEN);
		return -EINVAL;
	}
	struct pk_selector *sel = calloc(1, sizeof(*sel));
	if (!sel)
		return -ENOMEM;
	struct scan sc = {.s = s, .err = err, .errlen = errlen};
	int rc = 0;
	skip_ws(&sc);
	while (s[sc.pos]) {
		if (sel->nreqs >= SEL_MAX_REQS) {
			rc = fail(&sc, "too many requirements");
			break;
		}
		struct pk_sel_req *nr = realloc(sel->reqs, (sel->nreqs + 1) * sizeof(*nr));
		if (!nr) {
			rc = -ENOMEM;
			break;
		}
		sel->reqs = nr;
		memset(&sel->reqs[sel->nreqs], 0, sizeof(*nr));
		sel->nreqs++;
		rc = scan_req(&sc, fields, &sel->reqs[sel->nreqs - 1]);
		if (rc < 0)
			break;
		skip_ws(&sc);
		if (s[sc.pos] == ',') {
			sc.pos++;
			skip_ws(&sc);
			if (!s[sc.pos]) {
				rc = fail(&sc, "expected a requirement after ','");
				break;
			}
		} else if (s[sc.pos]) {
			rc = fail(&sc, "expected ',' or end");
			break;
		}
	}
	if (rc < 0) {
		pk_selector_free(sel);
		return rc;
	}
	*ret = sel;
	return 0;
}

void pk_selector_free(struct pk_selector *sel)
{
	if (!sel)
		return;
	for (size_t i = 0; i < sel->nreqs; i++)
		req_clear(&sel->reqs[i]);
	free(sel->reqs);
	free(sel);
}

static bool req_match(const struct pk_sel_req *r, const char *have)
{
	bool in = false;
	for (size_t i = 0; have && i < r->nvalues; i++)
		if (strcmp(r->values[i], have) == 0)
			in = true;
	switch (r->op) {
	case PK_SELOP_EQ:
	case PK_SELOP_IN:
		return in;
	case PK_SELOP_NE:
	case PK_SELOP_NOTIN:
		return !in;
	case PK_SELOP_EXISTS:
		return have != NULL;
	case PK_SELOP_NOT_EXISTS:
		return have == NULL;
	}
	return false;
}

bool pk_selector_match_labels(const struct pk_selector *sel, const json_t *obj)
{
	if (!sel)
		return true;
	json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
	for (size_t i = 0; i < sel->nreqs; i++) {
		const char *have = json_string_value(json_object_get(labels, sel->reqs[i].key));
		if (!req_match(&sel->reqs[i], have))
			return false;
	}
	return true;
}

/*
 * Whether a JSON text may hold an object the label selector matches: each
 * requirement that needs its label (=, in, exists) needs the key's quoted
 * text somewhere in it.  False only when no object of that text can match:
 * a key that JSON would escape (a quote, a backslash, a control character,
 * or a slash, which some encoders escape) is not looked for.
 */
bool pk_selector_may_match_text(const struct pk_selector *sel, const char *text, size_t len)
{
	for (size_t i = 0; sel && i < sel->nreqs; i++) {
		const struct pk_sel_req *r = &sel->reqs[i];
		char quoted[320];
		size_t n = strlen(r->key);
		bool plain = n + 2 < sizeof(quoted);

		if (r->op != PK_SELOP_EQ && r->op != PK_SELOP_IN && r->op != PK_SELOP_EXISTS)
			continue;
		for (size_t k = 0; plain && k < n; k++)
			plain = (unsigned char)r->key[k] >= 0x20 && r->key[k] != '"' &&
				r->key[k] != '\\' && r->key[k] != '/';
		if (!plain) {
			/* the part after a prefix's slash is plain in every encoding */
			const char *slash = strrchr(r->key, '/');

			if (!slash || slash[1] == '\0')
				continue;
			n = strlen(slash + 1);
			plain = n + 2 < sizeof(quoted);
			for (size_t k = 0; plain && k < n; k++)
				plain = (unsigned char)slash[1 + k] >= 0x20 &&
					slash[1 + k] != '"' && slash[1 + k] != '\\';
			if (!plain)
				continue;
			quoted[0] = '/';
			memcpy(quoted + 1, slash + 1, n);
		} else {
			quoted[0] = '"';
			memcpy(quoted + 1, r->key, n);
		}
		quoted[n + 1] = '"';
		if (!memmem(text, len, quoted, n + 2))
			return false;
	}
	return true;
}

/* Dotted path lookup; scalars are compared by their text form. */
static const char *field_text(const json_t *obj, const char *path, char buf[64])
{
	const json_t *v = obj;
	const char *p = path;
	while (v && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		char key[256];
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		v = json_object_get(v, key);
		p = dot ? dot + 1 : p + n;
	}
	if (!v)
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, 64, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "true" : "false";
	return NULL;
}

bool pk_selector_match_fields(const struct pk_selector *sel, const json_t *obj)
{
	if (!sel)
		return true;
	for (size_t i = 0; i < sel->nreqs; i++) {
		char buf[64];
		const char *have = field_text(obj, sel->reqs[i].key, buf);
		/* Upstream treats an absent field as the empty string. */
		if (!have)
			have = "";
		if (!req_match(&sel->reqs[i], have))
			return false;
	}
	return true;
}
