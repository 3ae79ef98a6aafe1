/* SPDX-License-Identifier: Apache-2.0 */
/* log.c — a library's log line, and the line a program writes for it. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kernel/lib/log.h"

/* The longest message looked at; the rest is cut. */
#define LOG_MSG_MAX 2048

void pk_logf(pk_log_fn *fn, void *arg, int verbosity, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!fn || level > verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(arg, level, msg);
}

int pk_log_format_parse(const char *name, enum pk_log_format *ret)
{
	if (name && strcmp(name, "text") == 0)
		*ret = PK_LOG_TEXT;
	else if (name && strcmp(name, "json") == 0)
		*ret = PK_LOG_JSON;
	else
		return -EINVAL;
	return 0;
}

const char *pk_log_level_name(int level)
{
	return level <= 0 ? "error" : level <= 2 ? "info" : "debug";
}

void pk_log_timestamp(const struct timespec *when, char *out, size_t outlen)
{
	struct tm tm;
	time_t s = when->tv_sec;

	gmtime_r(&s, &tm);
	snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long)(when->tv_nsec / 1000000));
}

const char *pk_log_quote(const char *value, char *buf, size_t buflen)
{
	size_t n = 0;

	if (!value)
		value = "";
	if (*value && !strpbrk(value, " \"\\=\t\n"))
		return value;
	if (buflen < 3)
		return "\"\"";
	buf[n++] = '"';
	for (const char *p = value; *p && n + 3 < buflen; p++) {
		if (*p == '"' || *p == '\\')
			buf[n++] = '\\';
		buf[n++] = *p == '\n' || *p == '\t' ? ' ' : *p;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}

/* ---- fields: "key=value" tokens at the end of a message ------------------ */

static bool key_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '_' ||
	       (!first && (isdigit((unsigned char)c) || c == '.' || c == '-'));
}

/* One field at s: its end (the space after it or the NUL), or NULL. */
static const char *field_end(const char *s, const char **ret_eq)
{
	const char *p = s;

	if (!key_char(*p, true))
		return NULL;
	while (key_char(*p, false))
		p++;
	if (*p != '=')
		return NULL;
	*ret_eq = p++;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		if (*p != '"')
			return NULL;
		p++;
	} else {
		while (*p && *p != ' ')
			p++;
	}
	return *p == ' ' || !*p ? p : NULL;
}

/*
 * Where MSG's trailing fields start (MSG + its length when none): after the
 * last word that is no field, in one pass (a field's quoted value may hold
 * spaces).
 */
static size_t fields_start(const char *msg, size_t len)
{
	size_t start = len, i = 0;
	const char *eq;
	bool any = false;

	while (i < len) {
		const char *end;

		while (i < len && msg[i] == ' ')
			i++;
		if (i == len)
			break;
		end = field_end(msg + i, &eq);
		if (end) {
			if (!any)
				start = i;
			any = true;
			i = (size_t)(end - msg);
		} else {
			any = false;
			start = len;
			while (i < len && msg[i] != ' ')
				i++;
		}
	}
	return any ? start : len;
}

/* ---- a bounded writer that never leaves a JSON line unfinished ----------- */

struct lw {
	char *p;
	size_t len, cap; /* cap: room kept for the closing "}\n */
	bool cut, in_str;
};

static void put(struct lw *w, const char *s, size_t n)
{
	if (w->cut || w->len + n > w->cap) {
		w->cut = true;
		return;
	}
	memcpy(w->p + w->len, s, n);
	w->len += n;
}

/* The length of a well-formed UTF-8 sequence at s (n bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	unsigned int cp;

	if (!len || s[0] > 0xf4 || len > n)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

static void put_escaped(struct lw *w, const char *s, size_t n)
{
	for (size_t i = 0; i < n && !w->cut; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[8];

		if (c >= 0x80) {
			/* a JSON line is UTF-8: a byte that is not is U+FFFD */
			size_t u = utf8_len((const unsigned char *)s + i, n - i);

			if (u)
				put(w, s + i, u);
			else
				put(w, "\\ufffd", 6);
			i += u ? u - 1 : 0;
		} else if (c == '"' || c == '\\') {
			e[0] = '\\';
			e[1] = (char)c;
			put(w, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(e, sizeof(e), "\\u%04x", c);
			put(w, e, 6);
		} else {
			put(w, (const char *)&c, 1);
		}
	}
}

/* ,"key":"value" with the key, colon and opening quote written at once. */
static void member(struct lw *w, const char *key, size_t klen, const char *val, size_t vlen)
{
	char head[80];
	int n = snprintf(head, sizeof(head), ",\"%.*s\":\"", (int)(klen > 60 ? 60 : klen), key);

	put(w, head, (size_t)n);
	if (w->cut)
		return;
	w->in_str = true;
	put_escaped(w, val, vlen);
	put(w, "\"", 1);
	if (!w->cut)
		w->in_str = false;
}

/* A field's value without its quotes and escapes, into buf. */
static size_t unquote(const char *v, size_t n, char *buf, size_t buflen)
{
	size_t o = 0;

	if (n < 2 || v[0] != '"') {
		n = n < buflen ? n : buflen - 1;
		memcpy(buf, v, n);
		buf[n] = '\0';
		return n;
	}
	for (size_t i = 1; i + 1 < n && o + 1 < buflen; i++) {
		if (v[i] == '\\' && i + 2 < n)
			i++;
		buf[o++] = v[i];
	}
	buf[o] = '\0';
	return o;
}

static void json_fields(struct lw *w, const char *s)
{
	char val[LOG_MSG_MAX];
	const char *eq;

	while (*s && !w->cut) {
		const char *end = field_end(s, &eq);

		if (!end)
			return;
		size_t vlen = unquote(eq + 1, (size_t)(end - eq - 1), val, sizeof(val));

		member(w, s, (size_t)(eq - s), val, vlen);
		s = end;
		while (*s == ' ')
			s++;
	}
}

static size_t json_line(const char *ts, const char *prog, int level, const char *msg, size_t len,
			char *out, size_t outlen)
{
	struct lw w = {.p = out, .cap = outlen - 4};
	size_t at = fields_start(msg, len);
	size_t mlen = at;

	while (mlen > 0 && msg[mlen - 1] == ' ')
		mlen--;
	put(&w, "{\"ts\":\"", 7);
	put(&w, ts, strlen(ts));
	put(&w, "\"", 1);
	member(&w, "level", 5, pk_log_level_name(level), strlen(pk_log_level_name(level)));
	member(&w, "logger", 6, prog, strlen(prog));
	member(&w, "msg", 3, msg, mlen);
	if (at < len)
		json_fields(&w, msg + at);
	/* the room kept: a string cut open is closed, then the object */
	if (w.in_str)
		out[w.len++] = '"';
	out[w.len++] = '}';
	out[w.len++] = '\n';
	out[w.len] = '\0';
	return w.len;
}

static size_t text_line(const char *ts, const char *prog, int level, const char *msg, char *out,
			size_t outlen)
{
	int n = snprintf(out, outlen - 1, "%s %s %s: %s", ts, pk_log_level_name(level), prog, msg);
	size_t len = n < 0 ? 0 : (size_t)n >= outlen - 1 ? outlen - 2 : (size_t)n;
	size_t head = strlen(ts) + 1;

	/* one line: a control character in the message is a space */
	for (size_t i = head; i < len; i++)
		if ((unsigned char)out[i] < 0x20)
			out[i] = ' ';
	out[len++] = '\n';
	out[len] = '\0';
	return len;
}

size_t pk_log_format_line(enum pk_log_format fmt, const char *prog, int level,
			  const struct timespec *when, const char *msg, char *out, size_t outlen)
{
	char ts[40], m[LOG_MSG_MAX];
	size_t len;

	if (outlen < 128) {
		if (outlen)
			*out = '\0';
		return 0;
	}
	pk_log_timestamp(when, ts, sizeof(ts));
	len = msg ? strnlen(msg, sizeof(m) - 1) : 0;
	if (len)
		memcpy(m, msg, len);
	m[len] = '\0';
	if (fmt == PK_LOG_JSON)
		return json_line(ts, prog ? prog : "", level, m, len, out, outlen);
	return text_line(ts, prog ? prog : "", level, m, out, outlen);
}

const char *pk_errno_text(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOENT:
		return "not found";
	case EEXIST:
		return "already exists";
	case ENOMEM:
		return "out of memory";
	case EIO:
		return "the store could not be read or written";
	case EINVAL:
		return "invalid";
	case EBUSY:
	case EAGAIN:
		return "busy, try again";
	case ETIMEDOUT:
		return "timed out";
	case EACCES:
	case EPERM:
		return "not permitted";
	case ENOSPC:
		return "no space left";
	case E2BIG:
	case EFBIG:
		return "too large";
	case ECANCELED:
		return "cancelled";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
