/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree.c — small helpers on object trees: dotted-path get and set, metadata
 * accessors, RFC 3339 timestamps and metav1.Condition bookkeeping.
 *
 * Paths are keys separated by '.', with "[N]" (or a numeric segment) to index
 * a list: "spec.containers[0].name".  Keys that contain '.' themselves (label
 * keys) are reached with json_object_get on the parent instead.  Timestamps
 * are converted with the proleptic Gregorian calendar directly, so the result
 * never depends on the process time zone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"

#define PK_PATH_MAX 512

/* ---- paths ---------------------------------------------------------------- */

/*
 * Split the next segment of a path: its key (may be empty when the path goes
 * straight to an index) and up to one index.  Returns the rest of the path,
 * or NULL on a malformed path.
 */
static const char *path_next(const char *p, char *key, size_t keylen, long *ret_index)
{
	size_t n = strcspn(p, ".[");

	if (n >= keylen)
		return NULL;
	memcpy(key, p, n);
	key[n] = '\0';
	p += n;
	*ret_index = -1;
	if (*p == '[') {
		char *end;

		*ret_index = strtol(p + 1, &end, 10);
		if (end == p + 1 || *end != ']' || *ret_index < 0)
			return NULL;
		p = end + 1;
		if (*p == '[')
			return NULL; /* lists of lists do not occur in objects */
	}
	if (*p == '.')
		p++;
	return p;
}

static json_t *step(json_t *cur, const char *key, long index)
{
	if (*key) {
		if (json_is_object(cur)) {
			cur = json_object_get(cur, key);
		} else if (json_is_array(cur) && strspn(key, "0123456789") == strlen(key)) {
			cur = json_array_get(cur, strtoul(key, NULL, 10));
		} else {
			return NULL;
		}
	}
	if (cur && index >= 0)
		cur = json_is_array(cur) ? json_array_get(cur, (size_t)index) : NULL;
	return cur;
}

json_t *pk_get(const json_t *obj, const char *path)
{
	json_t *cur = (json_t *)obj;
	char key[PK_PATH_MAX];

	if (!obj || !path)
		return NULL;
	while (cur && *path) {
		long index;

		path = path_next(path, key, sizeof(key), &index);
		if (!path)
			return NULL;
		cur = step(cur, key, index);
	}
	return cur;
}

const char *pk_get_string(const json_t *obj, const char *path)
{
	return json_string_value(pk_get(obj, path));
}

int pk_set(json_t *obj, const char *path, json_t *value)
{
	json_t *cur = obj;
	char key[PK_PATH_MAX];
	int ret = -EINVAL;

	if (!value)
		return -EINVAL;
	if (!json_is_object(obj) || !path || !*path)
		goto out;
	for (;;) {
		long index;
		const char *rest = path_next(path, key, sizeof(key), &index);
		json_t *next;

		if (!rest || (!*key && index < 0))
			goto out;
		if (!*rest && index < 0) {
			if (!json_is_object(cur))
				goto out;
			return json_object_set_new(cur, key, value) < 0 ? -ENOMEM : 0;
		}
		if (!*rest) { /* "list[N]": replace an existing item */
			next = step(cur, key, -1);
			if (!json_is_array(next) || (size_t)index >= json_array_size(next))
				goto out;
			return json_array_set_new(next, (size_t)index, value) < 0 ? -ENOMEM : 0;
		}
		next = step(cur, key, index);
		if (!next && index < 0 && json_is_object(cur) && *key) {
			next = json_object();
			if (!next || json_object_set_new(cur, key, next) < 0) {
				ret = -ENOMEM;
				goto out;
			}
		}
		if (!json_is_object(next))
			goto out;
		cur = next;
		path = rest;
	}
out:
	json_decref(value);
	return ret;
}

/* pk_get_string(obj, "metadata.<key>") without the path read: every object is asked its name. */
static const char *metadata_string(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

const char *pk_name(const json_t *obj)
{
	return metadata_string(obj, "name");
}

const char *pk_namespace(const json_t *obj)
{
	const char *ns = metadata_string(obj, "namespace");

	if (ns && *ns)
		return ns;
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));

	return !t || t->namespaced ? "default" : NULL;
}

/* ---- time ------------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int64_t y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

/* n digits at s as a number, or -1. */
static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int pk_time_parse(const char *s, int64_t *ret_seconds)
{
	int year, mon, day, hh, mm, ss, off = 0;
	const char *p;

	if (!s || strlen(s) < 20)
		return -EINVAL;
	year = digits(s, 4);
	mon = digits(s + 5, 2);
	day = digits(s + 8, 2);
	hh = digits(s + 11, 2);
	mm = digits(s + 14, 2);
	ss = digits(s + 17, 2);
	if (year < 0 || mon < 1 || mon > 12 || day < 1 || day > days_in_month(year, mon) ||
	    hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60 || s[4] != '-' ||
	    s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' ||
	    s[16] != ':')
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	if ((*p == 'Z' || *p == 'z') && !p[1]) {
		off = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
		int oh = digits(p + 1, 2), om = digits(p + 4, 2);

		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return -EINVAL;
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
	} else {
		return -EINVAL;
	}
	if (ss == 60)
		ss = 59; /* a leap second reads as the second before it */
	*ret_seconds = days_from_civil(year, mon, day) * 86400 + hh * 3600 + mm * 60 + ss - off;
	return 0;
}

void pk_time_format(int64_t seconds, char buf[32])
{
	int64_t days = seconds / 86400, rem = seconds % 86400, y;
	int m, d;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	snprintf(buf, 32, "%04lld-%02d-%02dT%02d:%02d:%02dZ", (long long)y, m, d, (int)(rem / 3600),
		 (int)(rem / 60 % 60), (int)(rem % 60));
}

/* ---- conditions ------------------------------------------------------------------ */

json_t *pk_condition_get(const json_t *obj, const char *type)
{
	json_t *conds = pk_get(obj, "status.conditions"), *c;
	size_t i;

	if (!type)
		return NULL;
	json_array_foreach(conds, i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static json_t *conditions_of(json_t *obj)
{
	json_t *status = json_object_get(obj, "status"), *conds;

	if (!status) {
		status = json_object();
		if (!status || json_object_set_new(obj, "status", status) < 0)
			return NULL;
	}
	if (!json_is_object(status))
		return NULL;
	conds = json_object_get(status, "conditions");
	if (!conds || json_is_null(conds)) {
		conds = json_array();
		if (!conds || json_object_set_new(status, "conditions", conds) < 0)
			return NULL;
	}
	return json_is_array(conds) ? conds : NULL;
}

int pk_condition_set(json_t *obj, const char *type, const char *status, const char *reason,
		     const char *message, int64_t now)
{
	json_t *conds, *c, *gen;
	const char *old;
	char ts[32];
	bool fresh = false, changed;

	if (!json_is_object(obj) || !type || !*type || !status ||
	    (strcmp(status, "True") && strcmp(status, "False") && strcmp(status, "Unknown")))
		return -EINVAL;
	conds = conditions_of(obj);
	if (!conds)
		return -EINVAL;
	c = pk_condition_get(obj, type);
	if (!c) {
		c = json_object();
		if (!c || json_array_append_new(conds, c) < 0)
			return -ENOMEM;
		fresh = true;
	}
	old = json_string_value(json_object_get(c, "status"));
	changed =
	    fresh || !old || strcmp(old, status) != 0 || !json_object_get(c, "lastTransitionTime");
	if (fresh && json_object_set_new(c, "type", json_string(type)) < 0)
		return -ENOMEM;
	if (json_object_set_new(c, "status", json_string(status)) < 0)
		return -ENOMEM;
	gen = pk_get(obj, "metadata.generation");
	if (json_is_integer(gen) &&
	    json_object_set_new(c, "observedGeneration", json_integer(json_integer_value(gen))) < 0)
		return -ENOMEM;
	if (changed) {
		pk_time_format(now, ts);
		if (json_object_set_new(c, "lastTransitionTime", json_string(ts)) < 0)
			return -ENOMEM;
	}
	if (json_object_set_new(c, "reason", json_string(reason ? reason : "")) < 0 ||
	    json_object_set_new(c, "message", json_string(message ? message : "")) < 0)
		return -ENOMEM;
	return 0;
}

int pk_claim_status_set(json_t *obj, const json_t *claim)
{
	static const char *const keys[] = {"allocation", "reservedFor"};
	json_t *st = json_object_get(obj, "status");

	if (!json_is_object(st)) {
		st = json_object();
		if (!st || json_object_set_new(obj, "status", st) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(claim, keys[i]);

		if (!v)
			json_object_del(st, keys[i]);
		else if (json_object_set_new(st, keys[i], json_deep_copy(v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

json_t *pk_claim_from_template(const json_t *owner, const char *pod_claim, const json_t *tmpl,
			       const char *name, const char *generate_name)
{
	json_t *md, *ann = json_deep_copy(pk_get(tmpl, "spec.metadata.annotations"));
	const char *uid = pk_get_string(owner, "metadata.uid"),
		   *kind = pk_get_string(owner, "kind") ?: "Pod",
		   *api = pk_get_string(owner, "apiVersion") ?: "v1";

	if (!json_is_object(ann)) {
		json_decref(ann);
		ann = json_object();
	}
	json_object_set_new(ann, "resource.kubernetes.io/pod-claim-name", json_string(pod_claim));
	md = json_pack("{s:s, s:s, s:o, s:[{s:s, s:s, s:s, s:b, s:b}]}",
		       name ? "name" : "generateName", name ? name : generate_name, "namespace",
		       pk_namespace(owner), "annotations", ann, "ownerReferences", "apiVersion",
		       api, "kind", kind, "name", pk_name(owner), "controller", 1,
		       "blockOwnerDeletion", 1);
	if (md && uid)
		json_object_set_new(json_array_get(json_object_get(md, "ownerReferences"), 0),
				    "uid", json_string(uid));
	if (md && json_is_object(pk_get(tmpl, "spec.metadata.labels")))
		json_object_set(md, "labels", pk_get(tmpl, "spec.metadata.labels"));
	return md ? json_pack("{s:s, s:s, s:o, s:O}", "apiVersion", "resource.k8s.io/v1", "kind",
			      "ResourceClaim", "metadata", md, "spec", pk_get(tmpl, "spec.spec"))
		  : NULL;
}
