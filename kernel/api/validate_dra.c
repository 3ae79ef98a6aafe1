/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_dra.c — static validation of the four kinds of Dynamic Resource
 * Allocation (resource.k8s.io/v1): DeviceClass, ResourceClaim,
 * ResourceClaimTemplate and ResourceSlice, with kube-apiserver's field paths
 * and limits (32 requests, selectors, constraints and config entries; 8
 * subrequests; 128 devices a slice; 32 attributes and capacities a device;
 * 256 reservedFor entries).
 *
 * The walk is over the tree, one small checker per upstream type.  A CEL
 * selector is checked for presence and length here; whether podkernel can
 * evaluate it is decided when a claim is allocated (kernel/dra), so that an
 * object kube-apiserver accepts is accepted here too.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "kernel/cel/cel.h"
#include "topology/topology.h"

#define MAX_REQUESTS 32
#define MAX_SUBREQUESTS 8
#define MAX_SELECTORS 32
#define MAX_CONSTRAINTS 32
#define MAX_CONFIG 32
#define MAX_SLICE_DEVICES 128
#define MAX_DEVICE_FIELDS 32 /* attributes and capacities of one device */
#define MAX_RESERVED_FOR 256
#define MAX_RESULTS 32
#define MAX_CEL 10240
#define MAX_ATTR_ID 32
#define MAX_ATTR_STRING 64
#define MAX_DRIVER 63
#define MAX_POOL 253

struct vctx {
	struct pk_path p;
	struct pk_errors *errs;
	char text[128];
};

static void fail(struct vctx *v, const char *key, const char *fmt, const char *detail)
{
	size_t old = key ? pk_path_key(&v->p, key) : v->p.len;
	char msg[640];

	snprintf(msg, sizeof(msg), fmt, detail ? detail : "");
	pk_errors_add(v->errs, "%s: %s", v->p.s, msg);
	pk_path_pop(&v->p, old);
}

/* obj[key] when it is an object (absent: NULL, wrong type: error, NULL). */
static json_t *object_at(struct vctx *v, const json_t *obj, const char *key)
{
	json_t *x = json_object_get(obj, key);

	if (x && !json_is_null(x) && !json_is_object(x))
		fail(v, key, "Invalid value: must be an object%s", NULL);
	return json_is_object(x) ? x : NULL;
}

static json_t *array_at(struct vctx *v, const json_t *obj, const char *key, size_t max)
{
	json_t *x = json_object_get(obj, key);
	char n[32];

	if (x && !json_is_null(x) && !json_is_array(x))
		fail(v, key, "Invalid value: must be a list%s", NULL);
	if (!json_is_array(x))
		return NULL;
	if (json_array_size(x) > max) {
		snprintf(n, sizeof(n), "%zu", max);
		fail(v, key, "Too many: must have at most %s items", n);
	}
	return x;
}

/* obj[key] as a string; required ones missing are reported. */
static const char *string_at(struct vctx *v, const json_t *obj, const char *key, bool required)
{
	json_t *x = json_object_get(obj, key);

	if (x && !json_is_null(x) && !json_is_string(x)) {
		fail(v, key, "Invalid value: %s: must be a string",
		     pk_value_text(x, v->text, sizeof(v->text)));
		return NULL;
	}
	if (required && (!x || json_is_null(x) || !*json_string_value(x))) {
		fail(v, key, "Required value%s", NULL);
		return NULL;
	}
	return json_string_value(x);
}

static void check_name(struct vctx *v, const char *key, const char *s, bool label, size_t max)
{
	char why[256] = "";
	bool ok = label ? topo_dns_label_valid(s) : topo_dns_subdomain_valid(s);

	if (ok && strlen(s) <= max)
		return;
	snprintf(why, sizeof(why), "\"%.120s\": %s", s,
		 strlen(s) > max ? "too long"
		 : label	 ? "a lowercase RFC 1123 label must consist of lower case "
				   "alphanumeric characters or '-', and must start and end with an "
				   "alphanumeric character"
				 : "a lowercase RFC 1123 subdomain must consist of lower case "
				   "alphanumeric characters, '-' or '.', and must start and end with an "
				   "alphanumeric character");
	fail(v, key, "Invalid value: %s", why);
}

/* A C identifier of at most 32 characters (attribute and capacity names). */
static bool c_identifier(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MAX_ATTR_ID ||
	    !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

/* A fully qualified name "domain/id" (matchAttribute) or, unqualified, "id". */
static bool qualified_name(const char *s, bool need_domain)
{
	const char *slash = strchr(s, '/');
	char dom[256];

	if (!slash)
		return !need_domain && c_identifier(s);
	if ((size_t)(slash - s) >= sizeof(dom) || slash == s)
		return false;
	memcpy(dom, s, (size_t)(slash - s));
	dom[slash - s] = '\0';
	return strlen(dom) <= 63 && topo_dns_subdomain_valid(dom) && c_identifier(slash + 1);
}

static void check_selectors(struct vctx *v, const json_t *parent)
{
	json_t *list = array_at(v, parent, "selectors", MAX_SELECTORS), *sel;
	size_t i, old = pk_path_key(&v->p, "selectors");

	json_array_foreach(list, i, sel)
	{
		size_t o2 = pk_path_index(&v->p, i), o3;
		json_t *cel = json_is_object(sel) ? object_at(v, sel, "cel") : NULL;
		const char *expr;

		if (!cel) {
			fail(v, "cel", "Required value%s", NULL);
		} else {
			o3 = pk_path_key(&v->p, "cel");
			expr = string_at(v, cel, "expression", true);
			if (expr && strlen(expr) > MAX_CEL)
				fail(v, "expression",
				     "Too long: may not be more than 10240 bytes%s", NULL);
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_opaque_config(struct vctx *v, const json_t *cfg)
{
	json_t *opaque = object_at(v, cfg, "opaque");
	size_t old;
	const char *driver;

	if (!opaque) {
		fail(v, "opaque", "Required value%s", NULL);
		return;
	}
	old = pk_path_key(&v->p, "opaque");
	driver = string_at(v, opaque, "driver", true);
	if (driver)
		check_name(v, "driver", driver, false, MAX_DRIVER);
	if (!json_object_get(opaque, "parameters"))
		fail(v, "parameters", "Required value%s", NULL);
	pk_path_pop(&v->p, old);
}

/* Fields of ExactDeviceRequest and DeviceSubRequest. */
static void check_device_request(struct vctx *v, const json_t *r)
{
	const char *cls = string_at(v, r, "deviceClassName", true);
	const char *mode = string_at(v, r, "allocationMode", false);
	json_t *count = json_object_get(r, "count");

	if (cls)
		check_name(v, "deviceClassName", cls, false, 253);
	check_selectors(v, r);
	if (mode && strcmp(mode, "ExactCount") != 0 && strcmp(mode, "All") != 0)
		fail(v, "allocationMode",
		     "Unsupported value: \"%s\": supported values: \"All\", \"ExactCount\"", mode);
	if (count && !json_is_null(count)) {
		if (mode && strcmp(mode, "All") == 0)
			fail(v, "count",
			     "Invalid value: must not be specified when allocationMode "
			     "is 'All'%s",
			     NULL);
		else if (!json_is_integer(count) || json_integer_value(count) <= 0)
			fail(v, "count", "Invalid value: %s: must be greater than zero",
			     pk_value_text(count, v->text, sizeof(v->text)));
	}
	if (json_object_get(r, "adminAccess") &&
	    !json_is_boolean(json_object_get(r, "adminAccess")) &&
	    !json_is_null(json_object_get(r, "adminAccess")))
		fail(v, "adminAccess", "Invalid value: must be a boolean%s", NULL);
}

static void check_request(struct vctx *v, const json_t *r, json_t *names)
{
	const char *name = string_at(v, r, "name", true);
	json_t *exactly = object_at(v, r, "exactly");
	json_t *first = array_at(v, r, "firstAvailable", MAX_SUBREQUESTS), *sub;
	json_t *subnames = json_object();
	size_t i, old;

	if (name) {
		check_name(v, "name", name, true, 63);
		if (json_object_get(names, name))
			fail(v, "name", "Duplicate value: \"%s\"", name);
		json_object_set_new(names, name, json_true());
	}
	if (!exactly == !first)
		fail(v, NULL,
		     "Invalid value: exactly one of `exactly` or `firstAvailable` is "
		     "required%s",
		     NULL);
	if (exactly) {
		old = pk_path_key(&v->p, "exactly");
		check_device_request(v, exactly);
		pk_path_pop(&v->p, old);
	}
	if (first && json_array_size(first) == 0)
		fail(v, "firstAvailable", "Required value%s", NULL);
	old = pk_path_key(&v->p, "firstAvailable");
	json_array_foreach(first, i, sub)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *sn = json_is_object(sub) ? string_at(v, sub, "name", true) : NULL;

		if (sn) {
			check_name(v, "name", sn, true, 63);
			if (json_object_get(subnames, sn))
				fail(v, "name", "Duplicate value: \"%s\"", sn);
			json_object_set_new(subnames, sn, json_true());
		}
		if (json_is_object(sub))
			check_device_request(v, sub);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
	json_decref(subnames);
}

/* A constraint's or config's "requests": names of requests (or request/sub). */
static void check_request_refs(struct vctx *v, const json_t *item, const json_t *names)
{
	json_t *refs = array_at(v, item, "requests", MAX_REQUESTS), *ref;
	size_t i, old = pk_path_key(&v->p, "requests");

	json_array_foreach(refs, i, ref)
	{
		const char *s = json_string_value(ref);
		char base[128];
		size_t n = s ? strcspn(s, "/") : 0;

		if (!s || n >= sizeof(base)) {
			size_t o2 = pk_path_index(&v->p, i);

			fail(v, NULL, "Invalid value: must be a request name%s", NULL);
			pk_path_pop(&v->p, o2);
			continue;
		}
		memcpy(base, s, n);
		base[n] = '\0';
		if (!json_object_get(names, base)) {
			size_t o2 = pk_path_index(&v->p, i);

			fail(v, NULL,
			     "Invalid value: \"%s\": must be the name of a request in the "
			     "claim or the name of a request and a subrequest separated by "
			     "'/'",
			     s);
			pk_path_pop(&v->p, o2);
		}
	}
	pk_path_pop(&v->p, old);
}

static void check_claim_spec(struct vctx *v, const json_t *spec)
{
	json_t *devices = spec ? object_at(v, spec, "devices") : NULL, *list, *x;
	json_t *names = json_object();
	size_t i, old, o2;

	if (!devices) {
		json_decref(names);
		return;
	}
	old = pk_path_key(&v->p, "devices");
	list = array_at(v, devices, "requests", MAX_REQUESTS);
	o2 = pk_path_key(&v->p, "requests");
	json_array_foreach(list, i, x)
	{
		size_t o3 = pk_path_index(&v->p, i);

		if (json_is_object(x))
			check_request(v, x, names);
		pk_path_pop(&v->p, o3);
	}
	pk_path_pop(&v->p, o2);
	list = array_at(v, devices, "constraints", MAX_CONSTRAINTS);
	o2 = pk_path_key(&v->p, "constraints");
	json_array_foreach(list, i, x)
	{
		size_t o3 = pk_path_index(&v->p, i);
		const char *attr =
		    json_is_object(x) ? string_at(v, x, "matchAttribute", false) : NULL;

		if (json_is_object(x))
			check_request_refs(v, x, names);
		if (attr && !qualified_name(attr, true))
			fail(v, "matchAttribute",
			     "Invalid value: \"%s\": must be a fully qualified name (domain/name)",
			     attr);
		pk_path_pop(&v->p, o3);
	}
	pk_path_pop(&v->p, o2);
	list = array_at(v, devices, "config", MAX_CONFIG);
	o2 = pk_path_key(&v->p, "config");
	json_array_foreach(list, i, x)
	{
		size_t o3 = pk_path_index(&v->p, i);

		if (json_is_object(x)) {
			check_request_refs(v, x, names);
			check_opaque_config(v, x);
		}
		pk_path_pop(&v->p, o3);
	}
	pk_path_pop(&v->p, o2);
	pk_path_pop(&v->p, old);
	json_decref(names);
}

static void check_claim_status(struct vctx *v, const json_t *status)
{
	json_t *alloc = object_at(v, status, "allocation"), *list, *x;
	json_t *devices = alloc ? object_at(v, alloc, "devices") : NULL;
	size_t i, old = pk_path_key(&v->p, "allocation");

	list = devices ? array_at(v, devices, "results", MAX_RESULTS) : NULL;
	json_array_foreach(list, i, x)
	{
		size_t o2 = pk_path_key(&v->p, "devices"), o3 = pk_path_key(&v->p, "results"),
		       o4 = pk_path_index(&v->p, i);

		(void)o3, (void)o4;
		if (json_is_object(x)) {
			string_at(v, x, "request", true);
			string_at(v, x, "driver", true);
			string_at(v, x, "pool", true);
			string_at(v, x, "device", true);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
	list = array_at(v, status, "reservedFor", MAX_RESERVED_FOR);
	old = pk_path_key(&v->p, "reservedFor");
	json_array_foreach(list, i, x)
	{
		size_t o2 = pk_path_index(&v->p, i);

		if (json_is_object(x)) {
			string_at(v, x, "resource", true);
			string_at(v, x, "name", true);
			string_at(v, x, "uid", true);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
	if (json_array_size(list) && !alloc)
		fail(v, "reservedFor",
		     "Forbidden: may not be specified when `allocation` is not set%s", NULL);
}

static void validate_claim(struct vctx *v, const json_t *obj)
{
	json_t *spec = object_at(v, obj, "spec"), *status = object_at(v, obj, "status");
	size_t old = pk_path_key(&v->p, "spec");

	check_claim_spec(v, spec);
	pk_path_pop(&v->p, old);
	if (status) {
		old = pk_path_key(&v->p, "status");
		check_claim_status(v, status);
		pk_path_pop(&v->p, old);
	}
}

static void validate_claim_template(struct vctx *v, const json_t *obj)
{
	json_t *spec = object_at(v, obj, "spec"), *inner;
	size_t old = pk_path_key(&v->p, "spec"), o2;

	if (!spec) {
		fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	inner = object_at(v, spec, "spec");
	o2 = pk_path_key(&v->p, "spec");
	check_claim_spec(v, inner);
	pk_path_pop(&v->p, o2);
	pk_path_pop(&v->p, old);
}

static void validate_class(struct vctx *v, const json_t *obj)
{
	json_t *spec = object_at(v, obj, "spec"), *list, *x;
	size_t i, old = pk_path_key(&v->p, "spec"), o2;

	if (spec) {
		check_selectors(v, spec);
		list = array_at(v, spec, "config", MAX_CONFIG);
		o2 = pk_path_key(&v->p, "config");
		json_array_foreach(list, i, x)
		{
			size_t o3 = pk_path_index(&v->p, i);

			if (json_is_object(x))
				check_opaque_config(v, x);
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/* One attribute value: exactly one of int, bool, string, version. */
static void check_attribute(struct vctx *v, const char *name, const json_t *val)
{
	static const char *const kinds[] = {"int", "bool", "string", "version"};
	size_t old = pk_path_mapkey(&v->p, name);
	int set = 0;
	const char *s;

	if (!qualified_name(name, false))
		fail(v, NULL,
		     "Invalid value: \"%s\": must be a C identifier of at most 32 "
		     "characters, optionally prefixed by a DNS subdomain and '/'",
		     name);
	for (size_t k = 0; json_is_object(val) && k < 4; k++)
		set += json_object_get(val, kinds[k]) != NULL;
	if (set != 1)
		fail(v, NULL, "Invalid value: exactly one value must be specified%s", NULL);
	if (json_is_object(val) && json_object_get(val, "int") &&
	    !json_is_integer(json_object_get(val, "int")))
		fail(v, "int", "Invalid value: must be an integer%s", NULL);
	if (json_is_object(val) && json_object_get(val, "bool") &&
	    !json_is_boolean(json_object_get(val, "bool")))
		fail(v, "bool", "Invalid value: must be a boolean%s", NULL);
	s = json_is_object(val) ? json_string_value(json_object_get(val, "string")) : NULL;
	if (s && strlen(s) > MAX_ATTR_STRING)
		fail(v, "string", "Too long: may not be more than 64 bytes%s", NULL);
	s = json_is_object(val) ? json_string_value(json_object_get(val, "version")) : NULL;
	if (json_is_object(val) && json_object_get(val, "version") && !s)
		fail(v, "version", "Invalid value: must be a string%s", NULL);
	else if (s && cel_semver_parse(s, &(struct cel_semver){0}) < 0)
		fail(v, "version", "Invalid value: \"%s\": must be a semantic version", s);
	pk_path_pop(&v->p, old);
}

static void check_slice_device(struct vctx *v, const json_t *dev, json_t *names)
{
	const char *name = string_at(v, dev, "name", true), *key;
	json_t *attrs = object_at(v, dev, "attributes"), *caps = object_at(v, dev, "capacity"), *x;
	size_t old;
	int64_t milli;

	if (name) {
		check_name(v, "name", name, true, 63);
		if (json_object_get(names, name))
			fail(v, "name", "Duplicate value: \"%s\"", name);
		json_object_set_new(names, name, json_true());
	}
	if (json_object_size(attrs) + json_object_size(caps) > MAX_DEVICE_FIELDS)
		fail(v, NULL,
		     "Too many: attributes and capacity together may have at most 32 "
		     "entries%s",
		     NULL);
	old = pk_path_key(&v->p, "attributes");
	json_object_foreach(attrs, key, x) check_attribute(v, key, x);
	pk_path_pop(&v->p, old);
	old = pk_path_key(&v->p, "capacity");
	json_object_foreach(caps, key, x)
	{
		size_t o2 = pk_path_mapkey(&v->p, key);
		json_t *q = json_is_object(x) ? json_object_get(x, "value") : NULL;

		if (!qualified_name(key, false))
			fail(v, NULL,
			     "Invalid value: \"%s\": must be a C identifier, optionally "
			     "prefixed by a DNS subdomain and '/'",
			     key);
		if (!q || pk_quantity_of(q, &milli) < 0)
			fail(v, "value", "Invalid value: must be a quantity%s", NULL);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_slice_placement(struct vctx *v, const json_t *spec)
{
	json_t *all = json_object_get(spec, "allNodes");
	json_t *sel = object_at(v, spec, "nodeSelector");
	const char *node = string_at(v, spec, "nodeName", false);
	int set = (node && *node) + (sel != NULL) + json_is_true(all) +
		  json_is_true(json_object_get(spec, "perDeviceNodeSelection"));

	if (all && !json_is_null(all) && !json_is_boolean(all))
		fail(v, "allNodes", "Invalid value: must be a boolean%s", NULL);
	if (set != 1)
		fail(v, NULL,
		     "Invalid value: exactly one of `nodeName`, `nodeSelector`, "
		     "`allNodes`, `perDeviceNodeSelection` is required%s",
		     NULL);
	if (node && *node)
		check_name(v, "nodeName", node, false, 253);
	if (sel && json_array_size(json_object_get(sel, "nodeSelectorTerms")) == 0)
		fail(v, "nodeSelector.nodeSelectorTerms",
		     "Required value: must have at least one "
		     "node selector term%s",
		     NULL);
}

static void validate_slice(struct vctx *v, const json_t *obj)
{
	json_t *spec = object_at(v, obj, "spec"), *pool, *devs, *dev, *names;
	const char *driver, *pname;
	json_t *gen, *count;
	size_t i, old = pk_path_key(&v->p, "spec"), o2;

	if (!spec) {
		fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	driver = string_at(v, spec, "driver", true);
	if (driver)
		check_name(v, "driver", driver, false, MAX_DRIVER);
	pool = object_at(v, spec, "pool");
	if (!pool)
		fail(v, "pool", "Required value%s", NULL);
	o2 = pk_path_key(&v->p, "pool");
	pname = pool ? string_at(v, pool, "name", true) : NULL;
	if (pname && strlen(pname) > MAX_POOL)
		fail(v, "name", "Too long: may not be more than 253 bytes%s", NULL);
	gen = pool ? json_object_get(pool, "generation") : NULL;
	if (gen && (!json_is_integer(gen) || json_integer_value(gen) < 0))
		fail(v, "generation", "Invalid value: must be greater than or equal to 0%s", NULL);
	count = pool ? json_object_get(pool, "resourceSliceCount") : NULL;
	if (pool && (!json_is_integer(count) || json_integer_value(count) <= 0))
		fail(v, "resourceSliceCount", "Invalid value: must be greater than zero%s", NULL);
	pk_path_pop(&v->p, o2);
	check_slice_placement(v, spec);
	devs = array_at(v, spec, "devices", MAX_SLICE_DEVICES);
	names = json_object();
	o2 = pk_path_key(&v->p, "devices");
	json_array_foreach(devs, i, dev)
	{
		size_t o3 = pk_path_index(&v->p, i);

		if (json_is_object(dev))
			check_slice_device(v, dev, names);
		pk_path_pop(&v->p, o3);
	}
	pk_path_pop(&v->p, o2);
	json_decref(names);
	pk_path_pop(&v->p, old);
}

void pk_validate_dra(const json_t *obj, enum pk_kind kind, struct pk_errors *errs)
{
	struct vctx v = {.errs = errs};

	switch (kind) {
	case PK_KIND_DEVICE_CLASS:
		validate_class(&v, obj);
		break;
	case PK_KIND_RESOURCE_CLAIM:
		validate_claim(&v, obj);
		break;
	case PK_KIND_RESOURCE_CLAIM_TEMPLATE:
		validate_claim_template(&v, obj);
		break;
	case PK_KIND_RESOURCE_SLICE:
		validate_slice(&v, obj);
		break;
	default:
		break;
	}
}
