/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c — the intermediate form of a group's scheduling configuration and
 * the one translation path from the user's building blocks (jansson subtrees
 * of a controller's API) into it.
 *
 * Leaf blocks (WorkloadPodGroup*) and composite blocks
 * (WorkloadCompositePodGroup*) share their shape except for the gang count:
 * minCount (pods) versus minGroupCount (child groups).  Mapping always checks
 * JSON types, because a block of the wrong type cannot be translated; the
 * value rules the upstream types carry as declarative validation (unions with
 * exactly one member, minimum counts, list sizes, name formats) are checked
 * only when asked, since an embedder may already have run them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"
#include "topology/topology.h"

static const char *const block_names[_WB_BLOCK_MAX] = {
    [WB_BLOCK_POLICY] = "schedulingPolicy",
    [WB_BLOCK_CONSTRAINTS] = "schedulingConstraints",
    [WB_BLOCK_DISRUPTION] = "disruptionMode",
    [WB_BLOCK_CLAIMS] = "resourceClaims",
};

static const char *const policy_names[] = {
    [WB_POLICY_UNSET] = NULL,
    [WB_POLICY_BASIC] = "basic",
    [WB_POLICY_GANG] = "gang",
};

static const char *const disruption_names[] = {
    [WB_DISRUPTION_UNSET] = NULL,
    [WB_DISRUPTION_SINGLE] = "single",
    [WB_DISRUPTION_ALL] = "all",
};

const char *wb_block_name(enum wb_block block)
{
	return block < _WB_BLOCK_MAX ? block_names[block] : NULL;
}

const char *wb_policy_name(enum wb_policy_kind kind)
{
	return kind <= WB_POLICY_GANG ? policy_names[kind] : NULL;
}

const char *wb_disruption_name(enum wb_disruption_kind kind)
{
	return kind <= WB_DISRUPTION_ALL ? disruption_names[kind] : NULL;
}

/* ---- the intermediate form -------------------------------------------------- */
void wb_config_init(struct wb_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

static void claims_free(struct wb_claim *claims, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(claims[i].name);
		free(claims[i].claim_name);
		free(claims[i].claim_template_name);
	}
	free(claims);
}

void wb_config_clear(struct wb_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->topology_key);
	claims_free(cfg->claims, cfg->nclaims);
	free(cfg->priority_class_name);
	wb_config_init(cfg);
}

static int dup_opt(const char *s, char **ret)
{
	char *d = NULL;

	if (s && !(d = strdup(s)))
		return -ENOMEM;
	*ret = d;
	return 0;
}

int wb_config_set_topology(struct wb_config *cfg, const char *key)
{
	char *d;

	if (dup_opt(key, &d) < 0)
		return -ENOMEM;
	free(cfg->topology_key);
	cfg->topology_key = d;
	cfg->has_constraints = true;
	return 0;
}

int wb_config_set_priority_class(struct wb_config *cfg, const char *name)
{
	char *d;

	if (dup_opt(name && *name ? name : NULL, &d) < 0)
		return -ENOMEM;
	free(cfg->priority_class_name);
	cfg->priority_class_name = d;
	return 0;
}

int wb_config_add_claim(struct wb_config *cfg, const char *name, const char *claim_name,
			const char *template_name)
{
	struct wb_claim c = {0}, *n;

	if (!name || !!claim_name == !!template_name)
		return -EINVAL;
	if (dup_opt(name, &c.name) < 0 || dup_opt(claim_name, &c.claim_name) < 0 ||
	    dup_opt(template_name, &c.claim_template_name) < 0)
		goto fail;
	n = realloc(cfg->claims, (cfg->nclaims + 1) * sizeof(*n));
	if (!n)
		goto fail;
	cfg->claims = n;
	cfg->claims[cfg->nclaims++] = c;
	cfg->has_claims = true;
	return 0;
fail:
	free(c.name);
	free(c.claim_name);
	free(c.claim_template_name);
	return -ENOMEM;
}

static void clear_claims(struct wb_config *cfg)
{
	claims_free(cfg->claims, cfg->nclaims);
	cfg->claims = NULL;
	cfg->nclaims = 0;
	cfg->has_claims = false;
}

int wb_config_copy(struct wb_config *dst, const struct wb_config *src)
{
	struct wb_config c;
	size_t i;

	wb_config_init(&c);
	c.policy = src->policy;
	c.has_min_count = src->has_min_count;
	c.min_count = src->min_count;
	c.disruption = src->disruption;
	if (src->has_constraints && wb_config_set_topology(&c, src->topology_key) < 0)
		goto fail;
	if (wb_config_set_priority_class(&c, src->priority_class_name) < 0)
		goto fail;
	for (i = 0; i < src->nclaims; i++)
		if (wb_config_add_claim(&c, src->claims[i].name, src->claims[i].claim_name,
					src->claims[i].claim_template_name) < 0)
			goto fail;
	c.has_claims = src->has_claims;
	*dst = c;
	return 0;
fail:
	wb_config_clear(&c);
	return -ENOMEM;
}

void wb_config_finalize(struct wb_config *cfg)
{
	if (cfg->policy == WB_POLICY_UNSET)
		cfg->policy = WB_POLICY_BASIC;
	if (cfg->policy == WB_POLICY_BASIC)
		cfg->has_min_count = false;
	if (cfg->disruption == WB_DISRUPTION_UNSET)
		cfg->disruption = WB_DISRUPTION_SINGLE;
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool wb_block_equal(enum wb_block block, const struct wb_config *a, const struct wb_config *b)
{
	size_t i;

	switch (block) {
	case WB_BLOCK_POLICY:
		return a->policy == b->policy && a->has_min_count == b->has_min_count &&
		       (!a->has_min_count || a->min_count == b->min_count);
	case WB_BLOCK_CONSTRAINTS:
		return str_eq(a->topology_key, b->topology_key);
	case WB_BLOCK_DISRUPTION:
		return a->disruption == b->disruption;
	case WB_BLOCK_CLAIMS:
		if (a->nclaims != b->nclaims)
			return false;
		for (i = 0; i < a->nclaims; i++)
			if (!str_eq(a->claims[i].name, b->claims[i].name) ||
			    !str_eq(a->claims[i].claim_name, b->claims[i].claim_name) ||
			    !str_eq(a->claims[i].claim_template_name,
				    b->claims[i].claim_template_name))
				return false;
		return true;
	default:
		return false;
	}
}

/* ---- mapping the user's blocks ------------------------------------------------- */
struct map_ctx {
	const char *path;
	bool composite, declarative;
	struct pk_errors *errs;
	int r;
};

static void map_error(struct map_ctx *m, const char *sub, const char *fmt, const char *detail)
{
	char *p = sub ? wb_path_join(m->path, sub) : NULL;

	m->r = -EINVAL;
	if (m->errs)
		pk_errors_add(m->errs, fmt, p ? p : m->path, detail ? detail : "");
	free(p);
}

static void type_error(struct map_ctx *m, const char *sub, const json_t *v, const char *what)
{
	char *b = wb_json_brief(v);
	char *p = sub ? wb_path_join(m->path, sub) : NULL;

	m->r = -EINVAL;
	if (m->errs)
		pk_errors_add(m->errs, "%s: Invalid value: %s: must be %s", p ? p : m->path,
			      b ? b : "?", what);
	free(p);
	free(b);
}

/* The members of a union block that are set (non-null). */
static size_t union_members(const json_t *data, const char *const *names, size_t nnames,
			    const char **ret_first)
{
	size_t i, n = 0;

	*ret_first = NULL;
	for (i = 0; i < nnames; i++) {
		json_t *v = json_object_get(data, names[i]);

		if (v && !json_is_null(v)) {
			if (!n)
				*ret_first = names[i];
			n++;
		}
	}
	return n;
}

static void check_union(struct map_ctx *m, const json_t *data, const char *a, const char *b,
			const char **ret_first)
{
	const char *names[] = {a, b};
	size_t n = union_members(data, names, 2, ret_first);
	char *detail;

	if (!m->declarative || n == 1)
		return;
	detail = wb_strdupf("must specify exactly one of: `%s`, `%s`", a, b);
	if (n == 0)
		map_error(m, NULL, "%s: Required value: %s", detail);
	else
		map_error(m, NULL, "%s: Invalid value: both set: %s", detail);
	free(detail);
}

static void map_gang(struct map_ctx *m, const json_t *gang, struct wb_config *cfg)
{
	const char *count = m->composite ? "minGroupCount" : "minCount";
	const char *other = m->composite ? "minCount" : "minGroupCount";
	json_t *v;
	char *p;

	cfg->policy = WB_POLICY_GANG;
	cfg->has_min_count = false;
	if (json_object_get(gang, other)) {
		char *why =
		    wb_strdupf("%s groups count %s; use %s", m->composite ? "composite" : "leaf",
			       m->composite ? "child groups" : "pods", count);
		p = wb_strdupf("gang.%s", other);
		map_error(m, p, "%s: Forbidden: %s", why);
		free(p);
		free(why);
	}
	v = json_object_get(gang, count);
	if (!v || json_is_null(v))
		return;
	p = wb_strdupf("gang.%s", count);
	if (!json_is_integer(v)) {
		type_error(m, p, v, "an integer");
	} else if (json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX) {
		char *b = wb_json_brief(v);
		char *pp = wb_path_join(m->path, p);

		if (m->declarative || json_integer_value(v) > INT32_MAX ||
		    json_integer_value(v) < 0) {
			m->r = -EINVAL;
			if (m->errs)
				pk_errors_add(m->errs, "%s: Invalid value: %s: must be %s", pp, b,
					      json_integer_value(v) < 1
						  ? "greater than or equal to 1"
						  : "less than or equal to 2147483647");
		} else {
			cfg->has_min_count = true;
			cfg->min_count = (int32_t)json_integer_value(v);
		}
		free(pp);
		free(b);
	} else {
		cfg->has_min_count = true;
		cfg->min_count = (int32_t)json_integer_value(v);
	}
	free(p);
}

static void map_policy(struct map_ctx *m, const json_t *data, struct wb_config *cfg)
{
	const char *first;
	json_t *basic, *gang;

	check_union(m, data, "basic", "gang", &first);
	basic = json_object_get(data, "basic");
	gang = json_object_get(data, "gang");
	if (basic && !json_is_null(basic) && !json_is_object(basic))
		type_error(m, "basic", basic, "an object");
	if (gang && !json_is_null(gang) && !json_is_object(gang))
		type_error(m, "gang", gang, "an object");
	if (!first)
		return; /* an unknown (future) policy: the allow-list rejects it */
	if (strcmp(first, "basic") == 0) {
		cfg->policy = WB_POLICY_BASIC;
		cfg->has_min_count = false;
	} else if (json_is_object(gang)) {
		map_gang(m, gang, cfg);
	}
}

static void map_constraints(struct map_ctx *m, const json_t *data, struct wb_config *cfg)
{
	json_t *topo = json_object_get(data, "topology"), *c;
	const char *key = NULL;
	size_t i;

	cfg->has_constraints = true;
	free(cfg->topology_key);
	cfg->topology_key = NULL;
	if (!topo || json_is_null(topo))
		return;
	if (!json_is_array(topo)) {
		type_error(m, "topology", topo, "a list");
		return;
	}
	if (m->declarative && json_array_size(topo) > 1) {
		char *n = wb_strdupf("%zu", json_array_size(topo));

		map_error(m, "topology", "%s: Too many: %s: must have at most 1 items", n);
		free(n);
	}
	json_array_foreach(topo, i, c)
	{
		char sub[64], why[160];
		const char *k, *l;

		snprintf(sub, sizeof(sub), "topology[%zu]", i);
		if (!json_is_object(c)) {
			type_error(m, sub, c, "an object");
			continue;
		}
		k = wb_str(c, "key");
		l = wb_str(c, "level");
		snprintf(sub, sizeof(sub), "topology[%zu].%s", i, k || !l ? "key" : "level");
		if ((json_object_get(c, "key") && !k) || (json_object_get(c, "level") && !l)) {
			type_error(m, sub, json_object_get(c, k ? "level" : "key"), "a string");
			continue;
		}
		if (k && l && strcmp(k, l) != 0) {
			snprintf(sub, sizeof(sub), "topology[%zu].level", i);
			map_error(
			    m, sub,
			    "%s: Invalid value: %s: must equal key (level is an alias of key)", l);
			continue;
		}
		if (!k)
			k = l;
		if (!k) {
			map_error(m, sub, "%s: Required value%s", "");
			continue;
		}
		if (m->declarative && !topo_label_key_valid(k, why, sizeof(why))) {
			char *d = wb_strdupf("\"%.80s\": %s", k, why);

			map_error(m, sub, "%s: Invalid value: %s", d);
			free(d);
			continue;
		}
		if (!key)
			key = k;
	}
	if (key && wb_config_set_topology(cfg, key) < 0)
		m->r = -ENOMEM;
}

static void map_disruption(struct map_ctx *m, const json_t *data, struct wb_config *cfg)
{
	const char *first;
	json_t *v;

	check_union(m, data, "single", "all", &first);
	if ((v = json_object_get(data, "single")) && !json_is_null(v) && !json_is_object(v))
		type_error(m, "single", v, "an object");
	if ((v = json_object_get(data, "all")) && !json_is_null(v) && !json_is_object(v))
		type_error(m, "all", v, "an object");
	if (first)
		cfg->disruption =
		    strcmp(first, "single") == 0 ? WB_DISRUPTION_SINGLE : WB_DISRUPTION_ALL;
}

static void map_claim(struct map_ctx *m, const json_t *c, size_t i, struct wb_config *cfg)
{
	static const char *const ref_names[] = {"resourceClaimName", "resourceClaimTemplateName"};
	char sub[96];
	const char *name = wb_str(c, "name"), *first, *ref;
	size_t nref, j;

	snprintf(sub, sizeof(sub), "[%zu]", i);
	if (!json_is_object(c)) {
		type_error(m, sub, c, "an object");
		return;
	}
	snprintf(sub, sizeof(sub), "[%zu].name", i);
	if (!name) {
		if (json_object_get(c, "name"))
			type_error(m, sub, json_object_get(c, "name"), "a string");
		else
			map_error(m, sub, "%s: Required value%s", "");
		return;
	}
	if (m->declarative && !topo_dns_label_valid(name)) {
		char *d = wb_strdupf("\"%.80s\": must be a DNS label", name);

		map_error(m, sub, "%s: Invalid value: %s", d);
		free(d);
	}
	for (j = 0; j < cfg->nclaims; j++) {
		if (strcmp(cfg->claims[j].name, name) == 0) {
			char *d = wb_strdupf("\"%.80s\"", name);

			map_error(m, sub, "%s: Duplicate value: %s", d);
			free(d);
			return;
		}
	}
	nref = union_members(c, ref_names, 2, &first);
	for (j = 0; j < 2; j++) {
		json_t *v = json_object_get(c, ref_names[j]);

		snprintf(sub, sizeof(sub), "[%zu].%s", i, ref_names[j]);
		if (v && !json_is_null(v) && !json_is_string(v))
			type_error(m, sub, v, "a string");
		else if (m->declarative && json_is_string(v) &&
			 !topo_dns_subdomain_valid(json_string_value(v)))
			type_error(m, sub, v, "a DNS subdomain name");
	}
	if (nref != 1) {
		snprintf(sub, sizeof(sub), "[%zu]", i);
		map_error(m, sub,
			  nref ? "%s: Invalid value: both set: %s" : "%s: Required value: %s",
			  "must specify exactly one of: `resourceClaimName`, "
			  "`resourceClaimTemplateName`");
		return;
	}
	ref = wb_str(c, first);
	if (!ref)
		return;
	if (wb_config_add_claim(cfg, name, strcmp(first, ref_names[0]) == 0 ? ref : NULL,
				strcmp(first, ref_names[1]) == 0 ? ref : NULL) < 0)
		m->r = -ENOMEM;
}

static void map_claims(struct map_ctx *m, const json_t *data, struct wb_config *cfg)
{
	json_t *c;
	size_t i;

	clear_claims(cfg);
	cfg->has_claims = true;
	if (!json_is_array(data)) {
		type_error(m, NULL, data, "a list");
		return;
	}
	if (json_array_size(data) > WB_MAX_CLAIMS) {
		char *n = wb_strdupf("%zu", json_array_size(data));

		map_error(m, NULL, "%s: Too many: %s: must have at most 4 items", n);
		free(n);
		return; /* always: hostile sizes are never mapped */
	}
	json_array_foreach(data, i, c) map_claim(m, c, i, cfg);
	cfg->has_claims = true;
}

int wb_map_block(enum wb_block block, const json_t *data, const char *path, bool composite,
		 bool declarative, struct wb_config *cfg, struct pk_errors *errs)
{
	static void (*const map[_WB_BLOCK_MAX])(struct map_ctx *, const json_t *,
						struct wb_config *) = {
	    [WB_BLOCK_POLICY] = map_policy,
	    [WB_BLOCK_CONSTRAINTS] = map_constraints,
	    [WB_BLOCK_DISRUPTION] = map_disruption,
	    [WB_BLOCK_CLAIMS] = map_claims,
	};
	struct map_ctx m = {
	    .path = path ? path : "",
	    .composite = composite,
	    .declarative = declarative,
	    .errs = errs,
	};

	if (!data || json_is_null(data))
		return 0;
	if (block != WB_BLOCK_CLAIMS && !json_is_object(data)) {
		type_error(&m, NULL, data, "an object");
		return m.r;
	}
	if ((unsigned)block >= _WB_BLOCK_MAX)
		return -EINVAL;
	map[block](&m, data, cfg);
	return m.r;
}

/* ---- back to JSON ------------------------------------------------------------- */
int wb_config_to_json(const struct wb_config *cfg, bool composite, json_t *target)
{
	json_t *policy, *claims;
	size_t i;
	int r = 0;

	if (cfg->policy == WB_POLICY_GANG) {
		json_t *gang = json_object();

		if (gang && cfg->has_min_count)
			json_object_set_new(gang, composite ? "minGroupCount" : "minCount",
					    json_integer(cfg->min_count));
		policy = json_pack("{s:o*}", "gang", gang);
	} else {
		policy = json_pack("{s:{}}", "basic");
	}
	r |= json_object_set_new(target, "schedulingPolicy", policy);
	if (cfg->topology_key)
		r |= json_object_set_new(
		    target, "schedulingConstraints",
		    json_pack("{s:[{s:s}]}", "topology", "key", cfg->topology_key));
	r |= json_object_set_new(
	    target, "disruptionMode",
	    json_pack("{s:{}}", cfg->disruption == WB_DISRUPTION_ALL ? "all" : "single"));
	if (cfg->nclaims) {
		claims = json_array();
		for (i = 0; claims && i < cfg->nclaims; i++) {
			const struct wb_claim *c = &cfg->claims[i];
			json_t *o = json_pack("{s:s}", "name", c->name);

			if (o && c->claim_name)
				json_object_set_new(o, "resourceClaimName",
						    json_string(c->claim_name));
			if (o && c->claim_template_name)
				json_object_set_new(o, "resourceClaimTemplateName",
						    json_string(c->claim_template_name));
			r |= json_array_append_new(claims, o);
		}
		r |= json_object_set_new(target, "resourceClaims", claims);
	}
	if (cfg->priority_class_name)
		r |= json_object_set_new(target, "priorityClassName",
					 json_string(cfg->priority_class_name));
	return r ? -ENOMEM : 0;
}
