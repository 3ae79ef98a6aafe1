/* SPDX-License-Identifier: Apache-2.0 */
/*
 * labels.c — Kubernetes name and label syntax.
 *
 * The rules are those of k8s.io/apimachinery/pkg/util/validation: RFC 1123 DNS
 * labels and subdomains for names and label key prefixes, "qualified names"
 * (at most 63 of [A-Za-z0-9._-], alphanumeric at both ends) for the name part
 * of a label key and for label values.  Each check is a straight scan of the
 * string; the predicates that take a "why" buffer fill it with the sentence the
 * user should read when the check fails.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topology/topology.h"

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool is_name_char(char c)
{
	return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

static void say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* One RFC 1123 label of exactly n bytes starting at s. */
static bool dns_label_valid_n(const char *s, size_t n)
{
	if (n == 0 || n > TOPO_LABEL_NAME_MAX)
		return false;
	if (!is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool topo_dns_label_valid(const char *s)
{
	return s && dns_label_valid_n(s, strlen(s));
}

bool topo_dns_subdomain_valid(const char *s)
{
	size_t len;
	const char *p;

	if (!s)
		return false;
	len = strlen(s);
	if (len == 0 || len > TOPO_DNS_SUBDOMAIN_MAX)
		return false;
	for (p = s;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (!dns_label_valid_n(p, n))
			return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

/* A qualified name (label key name part, label value) of n bytes. */
static bool qualified_name_valid_n(const char *s, size_t n)
{
	if (n == 0 || n > TOPO_LABEL_NAME_MAX)
		return false;
	if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_name_char(s[i]))
			return false;
	return true;
}

#define NAME_RULE                                                                                  \
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "   \
	"an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"

bool topo_label_key_valid(const char *key, char *why, size_t whylen)
{
	const char *slash, *name;
	size_t nlen;

	if (!key || !*key) {
		say(why, whylen, "label key must not be empty");
		return false;
	}
	slash = strchr(key, '/');
	name = slash ? slash + 1 : key;
	if (slash && strchr(name, '/')) {
		say(why, whylen,
		    "label key must be a name with an optional DNS subdomain prefix and "
		    "'/' (e.g. 'example.com/MyName')");
		return false;
	}
	if (slash) {
		size_t plen = (size_t)(slash - key);
		char prefix[TOPO_DNS_SUBDOMAIN_MAX + 1];

		if (plen == 0) {
			say(why, whylen, "label key prefix part must not be empty");
			return false;
		}
		if (plen > TOPO_DNS_SUBDOMAIN_MAX) {
			say(why, whylen, "label key prefix part must be no more than %d characters",
			    TOPO_DNS_SUBDOMAIN_MAX);
			return false;
		}
		memcpy(prefix, key, plen);
		prefix[plen] = '\0';
		if (!topo_dns_subdomain_valid(prefix)) {
			say(why, whylen,
			    "label key prefix part must be a lowercase RFC 1123 subdomain "
			    "(e.g. 'example.com')");
			return false;
		}
	}
	nlen = strlen(name);
	if (nlen == 0) {
		say(why, whylen, "label key name part must not be empty");
		return false;
	}
	if (nlen > TOPO_LABEL_NAME_MAX) {
		say(why, whylen, "label key name part must be no more than %d characters",
		    TOPO_LABEL_NAME_MAX);
		return false;
	}
	if (!qualified_name_valid_n(name, nlen)) {
		say(why, whylen, "label key name part " NAME_RULE);
		return false;
	}
	return true;
}

bool topo_label_value_valid(const char *value, char *why, size_t whylen)
{
	size_t n;

	if (!value) {
		say(why, whylen, "label value must be a string");
		return false;
	}
	n = strlen(value);
	if (n == 0)
		return true;
	if (n > TOPO_LABEL_NAME_MAX) {
		say(why, whylen, "label value must be no more than %d characters",
		    TOPO_LABEL_NAME_MAX);
		return false;
	}
	if (!qualified_name_valid_n(value, n)) {
		say(why, whylen, "label value " NAME_RULE);
		return false;
	}
	return true;
}

int topo_label_value_sanitize(const char *in, char *out, size_t outlen)
{
	char buf[TOPO_LABEL_NAME_MAX + 1];
	size_t n = 0;

	if (!in || !out || outlen == 0)
		return -EINVAL;
	/* Skip leading characters that cannot start a value. */
	while (*in && !is_alnum(*in))
		in++;
	for (; *in && n < TOPO_LABEL_NAME_MAX; in++)
		buf[n++] = is_name_char(*in) ? *in : '-';
	while (n > 0 && !is_alnum(buf[n - 1]))
		n--;
	buf[n] = '\0';
	if (n == 0) {
		out[0] = '\0';
		return -EINVAL;
	}
	if (n + 1 > outlen)
		return -ENOSPC;
	memcpy(out, buf, n + 1);
	return 0;
}
