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

static void check_name(struct pk_vctx *v, const char *key, const char *s, bool label, size_t max)
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
	pk_vctx_fail(v, key, "Invalid value: %s", why);
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

static void check_selectors(struct pk_vctx *v, const json_t *parent)
{
	json_t *list = pk_vctx_array(v, parent, "selectors", MAX_SELECTORS), *sel;
	size_t i, old = pk_path_key(&v->p, "selectors");

	json_array_foreach(list, i, sel)
	{
		size_t o2 = pk_path_index(&v->p, i), o3;
		json_t *cel = json_is_object(sel) ? pk_vctx_object(v, sel, "cel") : NULL;
		const char *expr;

		if (!cel) {
			pk_vctx_fail(v, "cel", "Required value%s", NULL);
		} else {
			o3 = pk_path_key(&v->p, "cel");
			expr = pk_vctx_string(v, cel, "expression", true);
			if (expr && strlen(expr) > MAX_CEL)
				pk_vctx_fail(v, "expression",
					     "Too long: may not be more than 10240 bytes%s", NULL);
			pk_path_pop(&v->p, o3);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_opaque_config(struct pk_vctx *v, const json_t *cfg)
{
	json_t *opaque = pk_vctx_object(v, cfg, "opaque");
	size_t old;
	const char *driver;

	if (!opaque) {
		pk_vctx_fail(v, "opaque", "Required value%s", NULL);
		return;
	}
	old = pk_path_key(&v->p, "opaque");
	driver = pk_vctx_string(v, opaque, "driver", true);
	if (driver)
		check_name(v, "driver", driver, false, MAX_DRIVER);
	if (!json_object_get(opaque, "parameters"))
		pk_vctx_fail(v, "parameters", "Required value%s", NULL);
	pk_path_pop(&v->p, old);
}

#define MAX_CAP_REQUESTS 32 /* capacity.requests of a request */
#define MAX_VALID_VALUES 10 /* requestPolicy.validValues (upstream's limit) */

/* A quantity field of x, required or not; whether it is there and reads. */
static bool check_quantity(struct pk_vctx *v, const json_t *x, const char *key, bool required,
			   int64_t *ret_milli)
{
	json_t *q = json_object_get(x, key);

	if (!q || json_is_null(q)) {
		if (required)
			pk_vctx_fail(v, key, "Required value%s", "");
		return false;
	}
	if (pk_quantity_of(q, ret_milli) < 0 || *ret_milli < 0) {
		pk_vctx_fail(v, key, "Invalid value: must be a non-negative quantity%s", "");
		return false;
	}
	return true;
}

/* A request's capacity.requests (KEP-5075): capacity names to quantities. */
static void check_capacity_requests(struct pk_vctx *v, const json_t *r)
{
	json_t *cap = pk_vctx_object(v, r, "capacity"), *reqs, *q;
	size_t old, o2;
	const char *key;
	int64_t m;

	if (!cap)
		return;
	old = pk_path_key(&v->p, "capacity");
	reqs = pk_vctx_object(v, cap, "requests");
	if (json_object_size(reqs) > MAX_CAP_REQUESTS)
		pk_vctx_fail(v, "requests", "Too many: must have at most 32 entries%s", "");
	o2 = pk_path_key(&v->p, "requests");
	json_object_foreach(reqs, key, q)
	{
		size_t o3 = pk_path_mapkey(&v->p, key);

		if (!qualified_name(key, false))
			pk_vctx_fail(v, NULL,
				     "Invalid value: \"%s\": must be a C identifier, optionally "
				     "prefixed by a DNS subdomain and '/'",
				     key);
		else if (!json_is_string(q) || pk_quantity_of(q, &m) < 0 || m < 0)
			pk_vctx_fail(v, NULL, "Invalid value: must be a non-negative quantity%s",
				     "");
		pk_path_pop(&v->p, o3);
	}
	pk_path_pop(&v->p, o2);
	pk_path_pop(&v->p, old);
}

/* validRange {min, max, step}: whether milli (>= 0) is a value it allows. */
static bool in_range(const json_t *range, int64_t milli)
{
	int64_t min = 0, max = 0, step = 0;

	if (pk_quantity_of(json_object_get(range, "min"), &min) < 0 || milli < min)
		return false;
	if (pk_quantity_of(json_object_get(range, "max"), &max) == 0 && milli > max)
		return false;
	return pk_quantity_of(json_object_get(range, "step"), &step) < 0 || step <= 0 ||
	       (milli - min) % step == 0;
}

static void check_valid_range(struct pk_vctx *v, const json_t *range, int64_t value)
{
	size_t old = pk_path_key(&v->p, "validRange");
	int64_t min = 0, max = 0, step = 0;

	if (check_quantity(v, range, "min", true, &min) && min > value)
		pk_vctx_fail(v, "min", "Invalid value: must not exceed the capacity's value%s", "");
	if (check_quantity(v, range, "max", false, &max) && (max < min || max > value))
		pk_vctx_fail(v, "max",
			     "Invalid value: must be at least min and at most the capacity's "
			     "value%s",
			     "");
	if (check_quantity(v, range, "step", false, &step) && step == 0)
		pk_vctx_fail(v, "step", "Invalid value: must be greater than zero%s", "");
	pk_path_pop(&v->p, old);
}

static void check_valid_values(struct pk_vctx *v, const json_t *list, int64_t value)
{
	size_t i, old = pk_path_key(&v->p, "validValues");
	int64_t prev = -1, m;
	json_t *x;

	if (json_array_size(list) > MAX_VALID_VALUES)
		pk_vctx_fail(v, NULL, "Too many: must have at most 10 items%s", "");
	json_array_foreach(list, i, x)
	{
		size_t o2 = pk_path_index(&v->p, i);

		if (pk_quantity_of(x, &m) < 0 || m < 0)
			pk_vctx_fail(v, NULL, "Invalid value: must be a non-negative quantity%s",
				     "");
		else if (m <= prev || m > value)
			pk_vctx_fail(v, NULL,
				     "Invalid value: must be in strictly ascending order, at "
				     "most the capacity's value%s",
				     "");
		else
			prev = m;
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/* A capacity's requestPolicy: default, then validValues or validRange. */
static void check_request_policy(struct pk_vctx *v, const json_t *pol, int64_t value)
{
	json_t *range = pk_vctx_object(v, pol, "validRange");
	json_t *vals = pk_vctx_array(v, pol, "validValues", 64), *x;
	size_t old = pk_path_key(&v->p, "requestPolicy"), i;
	bool listed = false;
	int64_t def = 0, m;

	if (range && json_array_size(vals))
		pk_vctx_fail(v, NULL,
			     "Invalid value: `validValues` and `validRange` are mutually "
			     "exclusive%s",
			     "");
	if (range)
		check_valid_range(v, range, value);
	if (vals)
		check_valid_values(v, vals, value);
	if (check_quantity(v, pol, "default", false, &def)) {
		json_array_foreach(vals, i, x) listed =
		    listed || (pk_quantity_of(x, &m) == 0 && m == def);
		if (def > value || (json_array_size(vals) && !listed) ||
		    (range && !in_range(range, def)))
			pk_vctx_fail(v, "default",
				     "Invalid value: must be a value the policy allows, at most "
				     "the capacity's value%s",
				     "");
	}
	pk_path_pop(&v->p, old);
}
#define MAX_TAINTS 16 /* taints a device, tolerations a request (upstream's limits) */

/* An effect of a device taint or toleration (empty allowed in a toleration). */
static void check_effect(struct pk_vctx *v, const json_t *x, bool required)
{
	const char *e = pk_vctx_string(v, x, "effect", required);

	if (e && *e && strcmp(e, "NoSchedule") != 0 && strcmp(e, "NoExecute") != 0 &&
	    strcmp(e, "None") != 0)
		pk_vctx_fail(v, "effect",
			     "Unsupported value: \"%s\": supported values: \"NoExecute\", "
			     "\"NoSchedule\", \"None\"",
			     e);
}

/* DRADeviceTaints: a slice device's taints, a request's tolerations. */
static void check_taints(struct pk_vctx *v, const json_t *parent, const char *key)
{
	json_t *list = pk_vctx_array(v, parent, key, MAX_TAINTS), *x;
	bool tolerations = strcmp(key, "tolerations") == 0;
	size_t i, old = pk_path_key(&v->p, key);

	json_array_foreach(list, i, x)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *op;

		if (!json_is_object(x)) {
			pk_vctx_fail(v, NULL, "Invalid value: must be an object%s", NULL);
			pk_path_pop(&v->p, o2);
			continue;
		}
		pk_vctx_string(v, x, "key", !tolerations);
		pk_vctx_string(v, x, "value", false);
		check_effect(v, x, !tolerations);
		op = tolerations ? pk_vctx_string(v, x, "operator", false) : NULL;
		if (op && *op && strcmp(op, "Exists") != 0 && strcmp(op, "Equal") != 0)
			pk_vctx_fail(v, "operator",
				     "Unsupported value: \"%s\": supported values: \"Equal\", "
				     "\"Exists\"",
				     op);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/* Fields of ExactDeviceRequest and DeviceSubRequest. */
static void check_device_request(struct pk_vctx *v, const json_t *r)
{
	const char *cls = pk_vctx_string(v, r, "deviceClassName", true);
	const char *mode = pk_vctx_string(v, r, "allocationMode", false);
	json_t *count = json_object_get(r, "count");

	if (cls)
		check_name(v, "deviceClassName", cls, false, 253);
	check_selectors(v, r);
	if (mode && strcmp(mode, "ExactCount") != 0 && strcmp(mode, "All") != 0)
		pk_vctx_fail(v, "allocationMode",
			     "Unsupported value: \"%s\": supported values: \"All\", \"ExactCount\"",
			     mode);
	if (count && !json_is_null(count)) {
		if (mode && strcmp(mode, "All") == 0)
			pk_vctx_fail(v, "count",
				     "Invalid value: must not be specified when allocationMode "
				     "is 'All'%s",
				     NULL);
		else if (!json_is_integer(count) || json_integer_value(count) <= 0)
			pk_vctx_fail(v, "count", "Invalid value: %s: must be greater than zero",
				     pk_value_text(count, v->text, sizeof(v->text)));
	}
	if (json_object_get(r, "adminAccess") &&
	    !json_is_boolean(json_object_get(r, "adminAccess")) &&
	    !json_is_null(json_object_get(r, "adminAccess")))
		pk_vctx_fail(v, "adminAccess", "Invalid value: must be a boolean%s", NULL);
	check_capacity_requests(v, r);
	check_taints(v, r, "tolerations");
}

static void check_request(struct pk_vctx *v, const json_t *r, json_t *names)
{
	const char *name = pk_vctx_string(v, r, "name", true);
	json_t *exactly = pk_vctx_object(v, r, "exactly");
	json_t *first = pk_vctx_array(v, r, "firstAvailable", MAX_SUBREQUESTS), *sub;
	json_t *subnames = json_object();
	size_t i, old;

	if (name) {
		check_name(v, "name", name, true, 63);
		if (json_object_get(names, name))
			pk_vctx_fail(v, "name", "Duplicate value: \"%s\"", name);
		json_object_set_new(names, name, json_true());
	}
	if (!exactly == !first)
		pk_vctx_fail(v, NULL,
			     "Invalid value: exactly one of `exactly` or `firstAvailable` is "
			     "required%s",
			     NULL);
	if (exactly) {
		old = pk_path_key(&v->p, "exactly");
		check_device_request(v, exactly);
		pk_path_pop(&v->p, old);
	}
	if (first && json_array_size(first) == 0)
		pk_vctx_fail(v, "firstAvailable", "Required value%s", NULL);
	old = pk_path_key(&v->p, "firstAvailable");
	json_array_foreach(first, i, sub)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *sn = json_is_object(sub) ? pk_vctx_string(v, sub, "name", true) : NULL;

		if (sn) {
			check_name(v, "name", sn, true, 63);
			if (json_object_get(subnames, sn))
				pk_vctx_fail(v, "name", "Duplicate value: \"%s\"", sn);
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
static void check_request_refs(struct pk_vctx *v, const json_t *item, const json_t *names)
{
	json_t *refs = pk_vctx_array(v, item, "requests", MAX_REQUESTS), *ref;
	size_t i, old = pk_path_key(&v->p, "requests");

	json_array_foreach(refs, i, ref)
	{
		const char *s = json_string_value(ref);
		char base[128];
		size_t n = s ? strcspn(s, "/") : 0;

		if (!s || n >= sizeof(base)) {
			size_t o2 = pk_path_index(&v->p, i);

			pk_vctx_fail(v, NULL, "Invalid value: must be a request name%s", NULL);
			pk_path_pop(&v->p, o2);
			continue;
		}
		memcpy(base, s, n);
		base[n] = '\0';
		if (!json_object_get(names, base)) {
			size_t o2 = pk_path_index(&v->p, i);

			pk_vctx_fail(v, NULL,
				     "Invalid value: \"%s\": must be the name of a request in the "
				     "claim or the name of a request and a subrequest separated by "
				     "'/'",
				     s);
			pk_path_pop(&v->p, o2);
		}
	}
	pk_path_pop(&v->p, old);
}

static void check_claim_spec(struct pk_vctx *v, const json_t *spec)
{
	json_t *devices = spec ? pk_vctx_object(v, spec, "devices") : NULL, *list, *x;
	json_t *names = json_object();
	size_t i, old, o2;

	if (!devices) {
		json_decref(names);
		return;
	}
	old = pk_path_key(&v->p, "devices");
	list = pk_vctx_array(v, devices, "requests", MAX_REQUESTS);
	o2 = pk_path_key(&v->p, "requests");
	json_array_foreach(list, i, x)
	{
		size_t o3 = pk_path_index(&v->p, i);

		if (json_is_object(x))
			check_request(v, x, names);
		pk_path_pop(&v->p, o3);
	}
	pk_path_pop(&v->p, o2);
	list = pk_vctx_array(v, devices, "constraints", MAX_CONSTRAINTS);
	o2 = pk_path_key(&v->p, "constraints");
	json_array_foreach(list, i, x)
	{
		size_t o3 = pk_path_index(&v->p, i);
		const char *attr =
		    json_is_object(x) ? pk_vctx_string(v, x, "matchAttribute", false) : NULL;

		if (json_is_object(x))
			check_request_refs(v, x, names);
		if (attr && !qualified_name(attr, true))
			pk_vctx_fail(
			    v, "matchAttribute",
			    "Invalid value: \"%s\": must be a fully qualified name (domain/name)",
			    attr);
		pk_path_pop(&v->p, o3);
	}
	pk_path_pop(&v->p, o2);
	list = pk_vctx_array(v, devices, "config", MAX_CONFIG);
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

/* A result's shareID (a UID) and consumedCapacity (names to quantities). */
static void check_share(struct pk_vctx *v, const json_t *x)
{
	const char *id = pk_vctx_string(v, x, "shareID", false), *key;
	json_t *cons = pk_vctx_object(v, x, "consumedCapacity"), *q;
	size_t old;
	int64_t m;

	if (id && (strlen(id) == 0 || strlen(id) > 36))
		pk_vctx_fail(v, "shareID", "Invalid value: must be a UID of 1 to 36 characters%s",
			     "");
	if (json_object_size(cons) > MAX_DEVICE_FIELDS)
		pk_vctx_fail(v, "consumedCapacity", "Too many: must have at most 32 entries%s", "");
	old = pk_path_key(&v->p, "consumedCapacity");
	json_object_foreach(cons, key, q)
	{
		size_t o2 = pk_path_mapkey(&v->p, key);

		if (!json_is_string(q) || pk_quantity_of(q, &m) < 0 || m < 0)
			pk_vctx_fail(v, NULL, "Invalid value: must be a non-negative quantity%s",
				     "");
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_claim_status(struct pk_vctx *v, const json_t *status)
{
	json_t *alloc = pk_vctx_object(v, status, "allocation"), *list, *x;
	json_t *devices = alloc ? pk_vctx_object(v, alloc, "devices") : NULL;
	size_t i, old = pk_path_key(&v->p, "allocation");

	list = devices ? pk_vctx_array(v, devices, "results", MAX_RESULTS) : NULL;
	json_array_foreach(list, i, x)
	{
		size_t o2 = pk_path_key(&v->p, "devices"), o3 = pk_path_key(&v->p, "results"),
		       o4 = pk_path_index(&v->p, i);

		(void)o3, (void)o4;
		if (json_is_object(x)) {
			pk_vctx_string(v, x, "request", true);
			pk_vctx_string(v, x, "driver", true);
			pk_vctx_string(v, x, "pool", true);
			pk_vctx_string(v, x, "device", true);
			check_share(v, x);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
	list = pk_vctx_array(v, status, "reservedFor", MAX_RESERVED_FOR);
	old = pk_path_key(&v->p, "reservedFor");
	json_array_foreach(list, i, x)
	{
		size_t o2 = pk_path_index(&v->p, i);

		if (json_is_object(x)) {
			pk_vctx_string(v, x, "resource", true);
			pk_vctx_string(v, x, "name", true);
			pk_vctx_string(v, x, "uid", true);
		}
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
	if (json_array_size(list) && !alloc)
		pk_vctx_fail(v, "reservedFor",
			     "Forbidden: may not be specified when `allocation` is not set%s",
			     NULL);
}

static void validate_claim(struct pk_vctx *v, const json_t *obj)
{
	json_t *spec = pk_vctx_object(v, obj, "spec"), *status = pk_vctx_object(v, obj, "status");
	size_t old = pk_path_key(&v->p, "spec");

	check_claim_spec(v, spec);
	pk_path_pop(&v->p, old);
	if (status) {
		old = pk_path_key(&v->p, "status");
		check_claim_status(v, status);
		pk_path_pop(&v->p, old);
	}
}

static void validate_claim_template(struct pk_vctx *v, const json_t *obj)
{
	json_t *spec = pk_vctx_object(v, obj, "spec"), *inner;
	size_t old = pk_path_key(&v->p, "spec"), o2;

	if (!spec) {
		pk_vctx_fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	inner = pk_vctx_object(v, spec, "spec");
	o2 = pk_path_key(&v->p, "spec");
	check_claim_spec(v, inner);
	pk_path_pop(&v->p, o2);
	pk_path_pop(&v->p, old);
}

static void validate_class(struct pk_vctx *v, const json_t *obj)
{
	json_t *spec = pk_vctx_object(v, obj, "spec"), *list, *x;
	size_t i, old = pk_path_key(&v->p, "spec"), o2;

	if (spec) {
		check_selectors(v, spec);
		list = pk_vctx_array(v, spec, "config", MAX_CONFIG);
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
static void check_attribute(struct pk_vctx *v, const char *name, const json_t *val)
{
	static const char *const kinds[] = {"int", "bool", "string", "version"};
	size_t old = pk_path_mapkey(&v->p, name);
	int set = 0;
	const char *s;

	if (!qualified_name(name, false))
		pk_vctx_fail(v, NULL,
			     "Invalid value: \"%s\": must be a C identifier of at most 32 "
			     "characters, optionally prefixed by a DNS subdomain and '/'",
			     name);
	for (size_t k = 0; json_is_object(val) && k < 4; k++)
		set += json_object_get(val, kinds[k]) != NULL;
	if (set != 1)
		pk_vctx_fail(v, NULL, "Invalid value: exactly one value must be specified%s", NULL);
	if (json_is_object(val) && json_object_get(val, "int") &&
	    !json_is_integer(json_object_get(val, "int")))
		pk_vctx_fail(v, "int", "Invalid value: must be an integer%s", NULL);
	if (json_is_object(val) && json_object_get(val, "bool") &&
	    !json_is_boolean(json_object_get(val, "bool")))
		pk_vctx_fail(v, "bool", "Invalid value: must be a boolean%s", NULL);
	s = json_is_object(val) ? json_string_value(json_object_get(val, "string")) : NULL;
	if (s && strlen(s) > MAX_ATTR_STRING)
		pk_vctx_fail(v, "string", "Too long: may not be more than 64 bytes%s", NULL);
	s = json_is_object(val) ? json_string_value(json_object_get(val, "version")) : NULL;
	if (json_is_object(val) && json_object_get(val, "version") && !s)
		pk_vctx_fail(v, "version", "Invalid value: must be a string%s", NULL);
	else if (s && cel_semver_parse(s, &(struct cel_semver){0}) < 0)
		pk_vctx_fail(v, "version", "Invalid value: \"%s\": must be a semantic version", s);
	pk_path_pop(&v->p, old);
}

static void check_slice_device(struct pk_vctx *v, const json_t *dev, json_t *names)
{
	const char *name = pk_vctx_string(v, dev, "name", true), *key;
	json_t *attrs = pk_vctx_object(v, dev, "attributes"),
	       *caps = pk_vctx_object(v, dev, "capacity"), *x;
	size_t old;
	int64_t milli;

	if (name) {
		check_name(v, "name", name, true, 63);
		if (json_object_get(names, name))
			pk_vctx_fail(v, "name", "Duplicate value: \"%s\"", name);
		json_object_set_new(names, name, json_true());
	}
	if (json_object_size(attrs) + json_object_size(caps) > MAX_DEVICE_FIELDS)
		pk_vctx_fail(v, NULL,
			     "Too many: attributes and capacity together may have at most 32 "
			     "entries%s",
			     NULL);
	check_taints(v, dev, "taints");
	old = pk_path_key(&v->p, "attributes");
	json_object_foreach(attrs, key, x) check_attribute(v, key, x);
	pk_path_pop(&v->p, old);
	old = pk_path_key(&v->p, "capacity");
	json_object_foreach(caps, key, x)
	{
		size_t o2 = pk_path_mapkey(&v->p, key);
		json_t *q = json_is_object(x) ? json_object_get(x, "value") : NULL;

		if (!qualified_name(key, false))
			pk_vctx_fail(v, NULL,
				     "Invalid value: \"%s\": must be a C identifier, optionally "
				     "prefixed by a DNS subdomain and '/'",
				     key);
		if (!q || pk_quantity_of(q, &milli) < 0)
			pk_vctx_fail(v, "value", "Invalid value: must be a quantity%s", NULL);
		else if (pk_vctx_object(v, x, "requestPolicy"))
			check_request_policy(v, json_object_get(x, "requestPolicy"), milli);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
	x = json_object_get(dev, "allowMultipleAllocations");
	if (x && !json_is_null(x) && !json_is_boolean(x))
		pk_vctx_fail(v, "allowMultipleAllocations", "Invalid value: must be a boolean%s",
			     "");
}

static void check_slice_placement(struct pk_vctx *v, const json_t *spec)
{
	json_t *all = json_object_get(spec, "allNodes");
	json_t *sel = pk_vctx_object(v, spec, "nodeSelector");
	const char *node = pk_vctx_string(v, spec, "nodeName", false);
	int set = (node && *node) + (sel != NULL) + json_is_true(all) +
		  json_is_true(json_object_get(spec, "perDeviceNodeSelection"));

	if (all && !json_is_null(all) && !json_is_boolean(all))
		pk_vctx_fail(v, "allNodes", "Invalid value: must be a boolean%s", NULL);
	if (set != 1)
		pk_vctx_fail(v, NULL,
			     "Invalid value: exactly one of `nodeName`, `nodeSelector`, "
			     "`allNodes`, `perDeviceNodeSelection` is required%s",
			     NULL);
	if (node && *node)
		check_name(v, "nodeName", node, false, 253);
	if (sel && json_array_size(json_object_get(sel, "nodeSelectorTerms")) == 0)
		pk_vctx_fail(v, "nodeSelector.nodeSelectorTerms",
			     "Required value: must have at least one "
			     "node selector term%s",
			     NULL);
}

static void validate_slice(struct pk_vctx *v, const json_t *obj)
{
	json_t *spec = pk_vctx_object(v, obj, "spec"), *pool, *devs, *dev, *names;
	const char *driver, *pname;
	json_t *gen, *count;
	size_t i, old = pk_path_key(&v->p, "spec"), o2;

	if (!spec) {
		pk_vctx_fail(v, NULL, "Required value%s", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	driver = pk_vctx_string(v, spec, "driver", true);
	if (driver)
		check_name(v, "driver", driver, false, MAX_DRIVER);
	pool = pk_vctx_object(v, spec, "pool");
	if (!pool)
		pk_vctx_fail(v, "pool", "Required value%s", NULL);
	o2 = pk_path_key(&v->p, "pool");
	pname = pool ? pk_vctx_string(v, pool, "name", true) : NULL;
	if (pname && strlen(pname) > MAX_POOL)
		pk_vctx_fail(v, "name", "Too long: may not be more than 253 bytes%s", NULL);
	gen = pool ? json_object_get(pool, "generation") : NULL;
	if (gen && (!json_is_integer(gen) || json_integer_value(gen) < 0))
		pk_vctx_fail(v, "generation", "Invalid value: must be greater than or equal to 0%s",
			     NULL);
	count = pool ? json_object_get(pool, "resourceSliceCount") : NULL;
	if (pool && (!json_is_integer(count) || json_integer_value(count) <= 0))
		pk_vctx_fail(v, "resourceSliceCount", "Invalid value: must be greater than zero%s",
			     NULL);
	pk_path_pop(&v->p, o2);
	check_slice_placement(v, spec);
	devs = pk_vctx_array(v, spec, "devices", MAX_SLICE_DEVICES);
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

void pk_validate_dra(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_vctx v = {.errs = errs};

	pk_validate_meta(obj, t, errs);
	switch (t->pk) {
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
