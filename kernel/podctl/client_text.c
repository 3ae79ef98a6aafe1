/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_text.c — the parts of podctl's client that need no server: which
 * served type a word on the command line names (kind, plural, singular or
 * short name, any case), the API path of a type, and the text of table
 * cells (age, gang policy, quantities).  client*.c do the HTTP around them;
 * tests/kernel/podctl/test_client_text.c tests them one by one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl-internal.h"

/* ---- kinds and paths ------------------------------------------------------------- */

static bool names_kind(const struct pk_type *t, const char *s)
{
	char singular[64];
	size_t i;

	if (strcasecmp(s, t->plural) == 0 || strcasecmp(s, t->kind) == 0)
		return true;
	for (i = 0; t->kind[i] && i < sizeof(singular) - 1; i++)
		singular[i] = (char)(t->kind[i] | 0x20);
	singular[i] = '\0';
	if (strcasecmp(s, singular) == 0)
		return true;
	const char *p = t->short_names;
	size_t n = strlen(s);

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && strncasecmp(p, s, n) == 0)
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

const struct pk_type *podctl_resolve_kind(const char *s)
{
	for (const struct pk_type *const *p_t = pk_types, *t; (t = *p_t); p_t++)
		if (names_kind(t, s))
			return t;
	if (strcasecmp(s, "pg") == 0)
		return pk_type_by_kind("PodGroup");
	if (strcasecmp(s, "cpg") == 0)
		return pk_type_by_kind("CompositePodGroup");
	return NULL;
}

/* /api/v1[/namespaces/NS]/PLURAL[/NAME][SUFFIX] */
char *podctl_type_path(const struct pk_type *t, const char *ns, const char *name,
		       const char *suffix)
{
	char *p = NULL;
	char base[160];

	if (*t->group)
		snprintf(base, sizeof(base), "/apis/%s/%s", t->group, t->version);
	else
		snprintf(base, sizeof(base), "/api/%s", t->version);
	if (asprintf(&p, "%s%s%s/%s%s%s%s", base, t->namespaced && ns ? "/namespaces/" : "",
		     t->namespaced && ns ? ns : "", t->plural, name ? "/" : "", name ? name : "",
		     suffix ? suffix : "") < 0)
		return NULL;
	return p;
}

/* ---- table cells ----------------------------------------------------------------- */

void podctl_age(const json_t *obj, int64_t now, char *buf, size_t len)
{
	int64_t t;
	const char *s = pk_get_string(obj, "metadata.creationTimestamp");

	if (!s || pk_time_parse(s, &t) < 0) {
		snprintf(buf, len, "<unknown>");
		return;
	}
	int64_t d = now - t;

	if (d < 0)
		d = 0;
	if (d < 120)
		snprintf(buf, len, "%llds", (long long)d);
	else if (d < 7200)
		snprintf(buf, len, "%lldm", (long long)d / 60);
	else
		snprintf(buf, len, "%lldh", (long long)d / 3600);
}

void podctl_policy_text(const json_t *g, char *buf, size_t len)
{
	json_t *gang = pk_get(g, "spec.schedulingPolicy.gang");

	if (gang) {
		json_t *m = json_object_get(gang, "minCount");

		if (!m)
			m = json_object_get(gang, "minGroupCount");
		snprintf(buf, len, "gang(%lld)", (long long)json_integer_value(m));
	} else {
		snprintf(buf, len, "basic");
	}
}

int64_t podctl_quantity_milli(const char *s)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
	    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
	    {"k", 1e3},	    {"M", 1e6},	       {"G", 1e9},	     {"T", 1e12},
	    {"m", 1e-3},    {"", 1},
	};
	char *end;
	double v;

	if (!s)
		return 0;
	v = strtod(s, &end);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].suffix) == 0)
			return (int64_t)(v * units[i].mult * 1000);
	return 0;
}

/* Sum of container requests of resource over a pod. */
int64_t podctl_pod_request(const json_t *pod, const char *res)
{
	json_t *cs = pk_get(pod, "spec.containers"), *c;
	size_t i;
	int64_t sum = 0;

	json_array_foreach(cs, i, c) sum += podctl_quantity_milli(json_string_value(
	    json_object_get(json_object_get(json_object_get(c, "resources"), "requests"), res)));
	return sum;
}

void podctl_fmt_qty(int64_t milli, const char *res, char *buf, size_t len)
{
	if (strcmp(res, "memory") == 0)
		snprintf(buf, len, "%.0fGi", (double)milli / 1000 / 1073741824.0);
	else if (milli % 1000)
		snprintf(buf, len, "%lldm", (long long)milli);
	else
		snprintf(buf, len, "%lld", (long long)(milli / 1000));
}
