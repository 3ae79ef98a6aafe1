/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth.c — static token file and the authorisation rules.
 *
 * The token file is the kube-apiserver --token-auth-file CSV: token, user,
 * uid and an optional quoted, comma-separated group list.  A tiny CSV reader
 * handles quoted fields ("" escapes a quote) and reports FILE:LINE:COL.
 * Authorisation is a fixed policy: system:masters may do everything; a node
 * identity (system:node:<name> in system:nodes) reads everything and writes
 * only its own Node (NodeRestriction); other authenticated users read only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/file.h"
#include "kernel/server/server.h"

#define TOKENS_MAX 10000
#define FIELD_MAX 4096
#define GROUPS_MAX 64

static void token_clear(struct pk_token *t)
{
	free(t->token);
	free(t->user);
	free(t->uid);
	for (size_t i = 0; i < t->ngroups; i++)
		free(t->groups[i]);
	free(t->groups);
}

void pk_tokens_free(struct pk_tokens *tokens)
{
	if (!tokens)
		return;
	for (size_t i = 0; i < tokens->n; i++)
		token_clear(&tokens->v[i]);
	free(tokens->v);
	free(tokens);
}

struct csv {
	const char *buf;
	size_t len, pos, line, line_start;
	const char *name;
	char *err;
	size_t errlen;
};

static int csv_fail(struct csv *c, const char *what)
{
	snprintf(c->err, c->errlen, "%s:%zu:%zu: %s", c->name, c->line, c->pos - c->line_start + 1,
		 what);
	return -EINVAL;
}

/* One field into out (malloc'ed); stops before ',' or end of line. */
static int csv_field(struct csv *c, char **out)
{
	char tmp[FIELD_MAX];
	size_t n = 0;
	bool quoted = c->pos < c->len && c->buf[c->pos] == '"';
	if (quoted)
		c->pos++;
	while (c->pos < c->len) {
		char ch = c->buf[c->pos];
		if (quoted && ch == '"') {
			if (c->pos + 1 < c->len && c->buf[c->pos + 1] == '"') {
				c->pos++;
			} else {
				quoted = false;
				c->pos++;
				if (c->pos < c->len && c->buf[c->pos] != ',' &&
				    c->buf[c->pos] != '\n' && c->buf[c->pos] != '\r')
					return csv_fail(c, "expected ',' after a quoted field");
				break;
			}
		} else if (!quoted && (ch == ',' || ch == '\n' || ch == '\r')) {
			break;
		} else if (ch == '\n' || ch == '\0') {
			return csv_fail(c, "unterminated quoted field");
		}
		if (n + 1 >= sizeof(tmp))
			return csv_fail(c, "field too long");
		tmp[n++] = c->buf[c->pos++];
	}
	if (quoted)
		return csv_fail(c, "unterminated quoted field");
	tmp[n] = '\0';
	*out = strdup(tmp);
	return *out ? 0 : -ENOMEM;
}

static int split_groups(struct pk_token *t, const char *list)
{
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n) {
			if (t->ngroups >= GROUPS_MAX)
				return -E2BIG;
			char **g = realloc(t->groups, (t->ngroups + 1) * sizeof(*g));
			if (!g)
				return -ENOMEM;
			t->groups = g;
			if (!(t->groups[t->ngroups] = strndup(p, n)))
				return -ENOMEM;
			t->ngroups++;
		}
		p += n + (comma ? 1 : 0);
	}
	return 0;
}

static int csv_line(struct csv *c, struct pk_token *t)
{
	char *fields[4] = {0};
	size_t nf = 0;
	int rc = 0;
	for (;;) {
		/* Columns after the groups are ignored, as kube-apiserver does. */
		char *extra = NULL;
		rc = csv_field(c, nf < 4 ? &fields[nf] : &extra);
		free(extra);
		if (rc < 0)
			break;
		if (nf < 4)
			nf++;
		if (c->pos < c->len && c->buf[c->pos] == ',') {
			c->pos++;
			continue;
		}
		break;
	}
	if (rc == 0 && nf < 3)
		rc = csv_fail(c, "expected token,user,uid[,\"group1,group2\"]");
	if (rc == 0 && (!fields[0][0] || !fields[1][0]))
		rc = csv_fail(c, "token and user must not be empty");
	if (rc == 0) {
		t->token = fields[0];
		t->user = fields[1];
		t->uid = fields[2];
		fields[0] = fields[1] = fields[2] = NULL;
		if (nf == 4)
			rc = split_groups(t, fields[3]);
		if (rc == -E2BIG)
			rc = csv_fail(c, "too many groups");
	}
	for (size_t i = 0; i < 4; i++)
		free(fields[i]);
	return rc;
}

static int token_cmp(const void *a, const void *b)
{
	const struct pk_token *const *x = a, *const *y = b;
	return strcmp((*x)->token, (*y)->token);
}

/* "NAME:LINE: ..." for the first repeated token, and how many repeat. */
static int find_duplicates(const char *name, struct pk_tokens *tk)
{
	if (tk->n < 2)
		return 0;
	const struct pk_token **v = malloc(tk->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < tk->n; i++)
		v[i] = &tk->v[i];
	qsort(v, tk->n, sizeof(*v), token_cmp);
	size_t dups = 0;
	const struct pk_token *first = NULL, *later = NULL;
	for (size_t i = 1; i < tk->n; i++)
		if (strcmp(v[i - 1]->token, v[i]->token) == 0) {
			const struct pk_token *a = v[i - 1], *b = v[i];
			if (a->line > b->line) {
				const struct pk_token *t = a;
				a = b;
				b = t;
			}
			if (!later || b->line < later->line) {
				first = a;
				later = b;
			}
			dups++;
		}
	free(v);
	if (dups)
		snprintf(tk->warning, sizeof(tk->warning),
			 "%s:%u: duplicate token (also on line %u): the later line is used "
			 "(%zu duplicate%s)",
			 name, later->line, first->line, dups, dups > 1 ? "s" : "");
	return 0;
}

int pk_tokens_parse(const char *name, const char *buf, size_t len, struct pk_tokens **ret,
		    char *err, size_t errlen)
{
	struct pk_tokens *tk = calloc(1, sizeof(*tk));
	if (!tk)
		return -ENOMEM;
	struct csv c = {
	    .buf = buf, .len = len, .line = 1, .name = name, .err = err, .errlen = errlen};
	int rc = 0;
	while (c.pos < c.len && rc == 0) {
		c.line_start = c.pos;
		const char *eol = memchr(buf + c.pos, '\n', len - c.pos);
		size_t end = eol ? (size_t)(eol - buf) : len;
		size_t p = c.pos;
		while (p < end && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == '\r'))
			p++;
		if (p < end && buf[p] != '#') {
			if (tk->n >= TOKENS_MAX) {
				rc = csv_fail(&c, "too many tokens");
				break;
			}
			struct pk_token *v = realloc(tk->v, (tk->n + 1) * sizeof(*v));
			if (!v) {
				rc = -ENOMEM;
				break;
			}
			tk->v = v;
			memset(&tk->v[tk->n], 0, sizeof(*v));
			tk->v[tk->n].line = (unsigned)c.line;
			tk->n++;
			rc = csv_line(&c, &tk->v[tk->n - 1]);
			while (rc == 0 && c.pos < end && buf[c.pos] == '\r')
				c.pos++;
			if (rc == 0 && c.pos < end)
				rc = csv_fail(&c, "unexpected text after the last field");
		}
		c.pos = end + 1;
		c.line++;
	}
	if (rc == 0)
		rc = find_duplicates(name, tk);
	if (rc < 0) {
		pk_tokens_free(tk);
		return rc;
	}
	*ret = tk;
	return 0;
}

int pk_tokens_load(const char *path, struct pk_tokens **ret, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int r = pk_read_small_file(path, PK_TOKEN_FILE_MAX_BYTES, &buf, &len);

	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	r = pk_tokens_parse(path, buf, len, ret, err, errlen);
	explicit_bzero(buf, len);
	free(buf);
	return r;
}

static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;
	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
	return diff == 0;
}

/* Every entry is compared (constant time in the position); a repeated token's last line wins. */
const struct pk_token *pk_tokens_find(const struct pk_tokens *tokens, const char *token)
{
	const struct pk_token *found = NULL;
	for (size_t i = 0; tokens && token && i < tokens->n; i++)
		if (same_secret(tokens->v[i].token, token))
			found = &tokens->v[i];
	return found;
}

static bool in_group(const struct pk_identity *who, const char *group)
{
	for (size_t i = 0; i < who->ngroups; i++)
		if (strcmp(who->groups[i], group) == 0)
			return true;
	return false;
}

static bool read_verb(const char *verb)
{
	return strcmp(verb, "get") == 0 || strcmp(verb, "list") == 0 || strcmp(verb, "watch") == 0;
}

bool pk_authorize(const struct pk_identity *who, const char *verb, const char *kind,
		  const char *name)
{
	if (!who || !who->authenticated)
		return false;
	if (in_group(who, "system:masters"))
		return true;
	if (read_verb(verb))
		return true;
	static const char prefix[] = "system:node:";
	if (in_group(who, "system:nodes") && strncmp(who->user, prefix, sizeof(prefix) - 1) == 0) {
		const char *node = who->user + sizeof(prefix) - 1;
		/* its own Node, and its own heartbeat Lease (named after the node) */
		const struct pk_type *t = pk_type_by_kind(kind);

		return (t == &pk_type_node || t == &pk_type_lease) && name &&
		       strcmp(name, node) == 0 &&
		       (strcmp(verb, "create") == 0 || strcmp(verb, "update") == 0 ||
			strcmp(verb, "patch") == 0);
	}
	return false;
}
