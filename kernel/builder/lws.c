/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lws.c — the leaderworkerset.x-k8s.io/v1 LeaderWorkerSet controller, with
 * the centralized spec.scheduling of LWS KEP-666 (building blocks of
 * KEP-6089).
 *
 * A LeaderWorkerSet is `replicas` groups of `size` pods: a leader NAME-I and
 * workers NAME-I-J (J = 1..size-1).  The controller compiles a two-level tree:
 *
 *   CompositePodGroupTemplate "leaderworkerset"  (the LWS level: basic unless
 *                                                 spec.scheduling says; a gang's
 *                                                 minGroupCount defaults to replicas)
 *     PodGroupTemplate "replica"                 (the replica level: a gang of
 *                                                 size pods unless the user opts
 *                                                 back to basic)
 *
 * and materializes the root CompositePodGroup NAME and one PodGroup NAME-I
 * per group, the pods of a group bound to it: LWS's default is a set of
 * gangs, and `spec.scheduling.replica.schedulingPolicy: {basic: {}}` is the
 * escape hatch back to pod-by-pod scheduling (KEP-6089).  The annotation
 * leaderworkerset.sigs.k8s.io/exclusive-topology puts each group in one
 * domain of its key (the replica's topology constraint) and keeps other
 * groups out of it (the pod affinity terms LWS writes).
 *
 * Pods carry LWS's labels and annotations and its headless-service naming
 * (hostname, subdomain NAME or NAME-I).  With startupPolicy LeaderReady, a
 * group's workers are emitted only once its leader is Ready (found through
 * the lookup).  A rolling update gets its surge groups at the next indices,
 * replicas..replicas+surge-1, while groups of an older template revision
 * remain in [0, replicas) (the standalone controller replaces those).
 *
 * An LWS carrying the downward annotations is part of a parent's Workload
 * (the disaggregated-serving story): it compiles nothing and materializes
 * NAME from the annotated composite template under the annotated parent and
 * its groups from that template's one PodGroupTemplate.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"
#include "kernel/lib/hash.h"
#include "kernel/lib/macro.h"
#include "topology/topology.h"

#define ROOT_TEMPLATE "leaderworkerset"
#define REPLICA_TEMPLATE "replica"

struct lws_view {
	struct wb_view base; /* first: the shared skeleton passes &base */
	const json_t *spec, *lwt;
	const json_t *leader_tmpl, *worker_tmpl; /* leader_tmpl: worker_tmpl when absent */
	int64_t replicas, size;
	int64_t max_unavailable, max_surge; /* resolved against replicas */
	bool leader_ready;		    /* startupPolicy LeaderReady */
	bool recreate;			    /* restartPolicy RecreateGroupOnPodRestart */
	bool unique_subdomain;		    /* networkConfig.subdomainPolicy UniquePerReplica */
	const char *exclusive;		    /* the exclusive-topology key, or NULL */
	const json_t *replica_blocks;	    /* spec.scheduling.replica */
};

static const char *const lws_fields[] = {"schedulingPolicy", "schedulingConstraints",
					 "disruptionMode",   "resourceClaims",
					 "replica",	     NULL};
static const char *const replica_fields[] = {"schedulingPolicy",
					     "schedulingConstraints",
					     "disruptionMode",
					     "resourceClaims",
					     "leader",
					     "worker",
					     NULL};
static const char *const downward[] = {WB_ANNOTATION_WORKLOAD, WB_ANNOTATION_TEMPLATE,
				       WB_ANNOTATION_PARENT};

static const struct lws_view *lws_view_of(const struct wb_view *base)
{
	return (const struct lws_view *)base;
}

/* ---- the fields --------------------------------------------------------------- */

/* A string member: absent gives def; anything but one of allowed is refused. */
static int get_enum(const json_t *obj, const char *key, const char *path, const char *def,
		    const char *const *allowed, const char **ret, struct pk_errors *errs)
{
	json_t *v = json_object_get(obj, key);
	const char *s = json_string_value(v);
	char list[256] = "";
	size_t i;

	*ret = def;
	if (!v || json_is_null(v))
		return 0;
	for (i = 0; s && allowed[i]; i++)
		if (strcmp(s, allowed[i]) == 0) {
			*ret = allowed[i];
			return 0;
		}
	for (i = 0; allowed[i]; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"",
			 i ? ", " : "", allowed[i]);
	char *b = wb_json_brief(v);

	pk_errors_add(errs, "%s.%s: Unsupported value: %s: supported values: %s", path, key,
		      b ? b : "?", list);
	free(b);
	return -EINVAL;
}

/*
 * An IntOrString of the rolling update: an integer, or "N%" of replicas
 * rounded down (maxUnavailable) or up (maxSurge), as LWS resolves them.
 */
static int get_int_or_percent(const json_t *conf, const char *key, int64_t def, int64_t replicas,
			      bool round_up, int64_t *ret, struct pk_errors *errs)
{
	json_t *v = json_object_get(conf, key);
	const char *s = json_string_value(v);
	char *end = NULL;
	long pct = 0;

	*ret = def;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= INT32_MAX) {
		*ret = json_integer_value(v);
		return 0;
	}
	if (s && *s >= '0' && *s <= '9')
		pct = strtol(s, &end, 10);
	if (!end || strcmp(end, "%") != 0 || pct > 100) {
		char *b = wb_json_brief(v);

		pk_errors_add(errs,
			      "spec.rolloutStrategy.rollingUpdateConfiguration.%s: Invalid value: "
			      "%s: must be a non-negative integer or a percentage (\"0%%\" to "
			      "\"100%%\")",
			      key, b ? b : "?");
		free(b);
		return -EINVAL;
	}
	*ret = (replicas * pct + (round_up ? 99 : 0)) / 100;
	return 0;
}

static int parse_rollout(const json_t *spec, struct lws_view *v, struct pk_errors *errs)
{
	static const char *const types[] = {"RollingUpdate", NULL};
	const json_t *ro = wb_obj(spec, "rolloutStrategy");
	const json_t *conf = wb_obj(ro, "rollingUpdateConfiguration");
	const char *type;
	int64_t partition = 0;
	int r = 0;

	if (get_enum(ro, "type", "spec.rolloutStrategy", "RollingUpdate", types, &type, errs) < 0)
		r = -EINVAL;
	if (wb_get_int(conf, "partition", "spec.rolloutStrategy.rollingUpdateConfiguration", 0, 0,
		       INT32_MAX, &partition, errs) < 0)
		r = -EINVAL;
	else if (partition != 0) {
		pk_errors_add(errs, "spec.rolloutStrategy.rollingUpdateConfiguration.partition: "
				    "Forbidden: not implemented (every group is updated)");
		r = -EINVAL;
	}
	if (get_int_or_percent(conf, "maxUnavailable", 1, v->replicas, false, &v->max_unavailable,
			       errs) < 0 ||
	    get_int_or_percent(conf, "maxSurge", 0, v->replicas, true, &v->max_surge, errs) < 0)
		return -EINVAL;
	if (v->max_unavailable == 0 && v->max_surge == 0) {
		if (json_object_get(conf, "maxUnavailable")) {
			pk_errors_add(
			    errs, "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable: "
				  "Invalid value: 0: must not be 0 when maxSurge is 0");
			r = -EINVAL;
		}
		v->max_unavailable = 1; /* a percentage that rounds down to none: one */
	}
	return r;
}

/* Templates must stay clean of scheduling directives and downward annotations. */
static int check_template(const json_t *tmpl, const char *path, struct pk_errors *errs)
{
	const json_t *ann = wb_obj(wb_obj(tmpl, "metadata"), "annotations");
	int r = 0;

	if (json_object_get(wb_obj(tmpl, "spec"), "schedulingGroup")) {
		pk_errors_add(errs,
			      "%s.spec.schedulingGroup: Forbidden: the LeaderWorkerSet binds "
			      "the pods of each group to its PodGroup",
			      path);
		r = -EINVAL;
	}
	for (size_t k = 0; k < ELEMENTSOF(downward); k++)
		if (json_object_get(ann, downward[k])) {
			pk_errors_add(errs,
				      "%s.metadata.annotations[%s]: Forbidden: set by a parent "
				      "controller on the LeaderWorkerSet only",
				      path, downward[k]);
			r = -EINVAL;
		}
	return r;
}

/* Upstream fields this controller does not act on: refused unless absent. */
static int check_unimplemented(const json_t *lwt, struct pk_errors *errs)
{
	static const char *const fields[][2] = {
	    {"subGroupPolicy", "no subgroup labels or groups are made"},
	    {"volumeClaimTemplates", "no PersistentVolumeClaims are made per pod"},
	    {"persistentVolumeClaimRetentionPolicy", "no PersistentVolumeClaims are made"},
	};
	int r = 0;

	for (size_t k = 0; k < ELEMENTSOF(fields); k++) {
		json_t *v = json_object_get(lwt, fields[k][0]);

		if (v && !json_is_null(v) && !(json_is_array(v) && !json_array_size(v))) {
			pk_errors_add(
			    errs, "spec.leaderWorkerTemplate.%s: Forbidden: not implemented (%s)",
			    fields[k][0], fields[k][1]);
			r = -EINVAL;
		}
	}
	return r;
}

/* spec.leaderWorkerTemplate: the templates, size and restartPolicy. */
static int parse_template(struct lws_view *v, struct pk_errors *errs)
{
	static const char *const restart[] = {"RecreateGroupOnPodRestart", "None", "Default", NULL};
	const char *rp;
	int r = 0;

	v->lwt = wb_obj(v->spec, "leaderWorkerTemplate");
	if (!v->lwt) {
		pk_errors_add(errs, "spec.leaderWorkerTemplate: Required value");
		return -EINVAL;
	}
	v->worker_tmpl = wb_obj(v->lwt, "workerTemplate");
	v->leader_tmpl = wb_obj(v->lwt, "leaderTemplate");
	if (!v->worker_tmpl) {
		pk_errors_add(errs, "spec.leaderWorkerTemplate.workerTemplate: Required value");
		return -EINVAL;
	}
	if (!v->leader_tmpl)
		v->leader_tmpl = v->worker_tmpl;
	else if (check_template(v->leader_tmpl, "spec.leaderWorkerTemplate.leaderTemplate", errs) <
		 0)
		r = -EINVAL;
	if (check_template(v->worker_tmpl, "spec.leaderWorkerTemplate.workerTemplate", errs) < 0)
		r = -EINVAL;
	if (wb_get_int(v->lwt, "size", "spec.leaderWorkerTemplate", 1, 1, WB_MAX_PODS, &v->size,
		       errs) < 0)
		r = -EINVAL;
	if (get_enum(v->lwt, "restartPolicy", "spec.leaderWorkerTemplate",
		     "RecreateGroupOnPodRestart", restart, &rp, errs) < 0)
		r = -EINVAL;
	v->recreate = strcmp(rp, "RecreateGroupOnPodRestart") == 0;
	if (check_unimplemented(v->lwt, errs) < 0)
		r = -EINVAL;
	return r;
}

/* The two templates share one priority: a Workload has one (KEP-666). */
static int check_priority(struct lws_view *v, struct pk_errors *errs)
{
	const char *l = wb_str(wb_obj(v->leader_tmpl, "spec"), "priorityClassName");
	const char *w = wb_str(wb_obj(v->worker_tmpl, "spec"), "priorityClassName");

	v->base.priority_class = w;
	if (strcmp(l ? l : "", w ? w : "") == 0)
		return 0;
	pk_errors_add(errs,
		      "spec.leaderWorkerTemplate.leaderTemplate.spec.priorityClassName: Invalid "
		      "value: \"%s\": must equal the workerTemplate's \"%s\" (all groups of a "
		      "workload share one priority)",
		      l ? l : "", w ? w : "");
	return -EINVAL;
}

/* spec.scheduling: the LWS level and its replica level (leaves refused). */
static int parse_scheduling(struct lws_view *v, struct pk_errors *errs)
{
	const json_t *s;
	int r = 0;

	if (wb_view_parse_scheduling(&v->base, v->spec, lws_fields, errs) < 0)
		return -EINVAL;
	s = v->base.scheduling;
	if (json_object_get(s, "resourceClaims")) {
		pk_errors_add(errs, WB_SCHEDULING_PATH ".resourceClaims: Forbidden: claims are "
						       "shared by a leader or worker leaf only");
		r = -EINVAL;
	}
	v->replica_blocks = wb_obj(s, "replica");
	if (json_object_get(s, "replica") && !v->replica_blocks &&
	    !json_is_null(json_object_get(s, "replica"))) {
		pk_errors_add(errs,
			      WB_SCHEDULING_PATH ".replica: Invalid value: must be an object");
		return -EINVAL;
	}
	if (v->replica_blocks &&
	    wb_check_known_fields(v->replica_blocks, WB_SCHEDULING_PATH ".replica", replica_fields,
				  errs) < 0)
		r = -EINVAL;
	static const char *const refused[][2] = {
	    {"resourceClaims", "claims are shared by a leader or worker leaf only"},
	    {"leader", "not implemented (a replica is one PodGroup of its leader and workers)"},
	    {"worker", "not implemented (a replica is one PodGroup of its leader and workers)"},
	};
	for (size_t k = 0; k < ELEMENTSOF(refused); k++)
		if (json_object_get(v->replica_blocks, refused[k][0])) {
			pk_errors_add(errs, WB_SCHEDULING_PATH ".replica.%s: Forbidden: %s",
				      refused[k][0], refused[k][1]);
			r = -EINVAL;
		}
	return r;
}

static int parse_spec(struct lws_view *v, struct pk_errors *errs)
{
	static const char *const startup[] = {"LeaderCreated", "LeaderReady", NULL};
	static const char *const subdomain[] = {"Shared", "UniquePerReplica", NULL};
	const char *sp, *sd;
	int r = 0;

	if (wb_get_int(v->spec, "replicas", "spec", 1, 0, WB_MAX_PODS, &v->replicas, errs) < 0)
		r = -EINVAL;
	if (get_enum(v->spec, "startupPolicy", "spec", "LeaderCreated", startup, &sp, errs) < 0)
		r = -EINVAL;
	v->leader_ready = strcmp(sp, "LeaderReady") == 0;
	if (get_enum(wb_obj(v->spec, "networkConfig"), "subdomainPolicy", "spec.networkConfig",
		     "Shared", subdomain, &sd, errs) < 0)
		r = -EINVAL;
	v->unique_subdomain = strcmp(sd, "UniquePerReplica") == 0;
	if (parse_template(v, errs) < 0)
		r = -EINVAL;
	if (r == 0 && v->replicas * v->size > WB_MAX_PODS) {
		pk_errors_add(errs,
			      "spec.replicas: Too many: %lld groups of %lld pods: the "
			      "LeaderWorkerSet would create more than %d pods",
			      (long long)v->replicas, (long long)v->size, WB_MAX_PODS);
		r = -EINVAL;
	}
	if (parse_rollout(v->spec, v, errs) < 0)
		r = -EINVAL;
	return r;
}

/* The pod names NAME-I-J, and the group-index label, fit in 63 characters. */
static bool name_valid(const char *name)
{
	return strlen(name) <= 52 && topo_dns_label_valid(name);
}

static int lws_parse(const json_t *lws, struct wb_view *base, struct pk_errors *errs)
{
	struct lws_view *v = (struct lws_view *)base;
	int r = 0;

	if (wb_view_check_kind(lws, PK_KIND_LEADER_WORKER_SET,
			       "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet", errs) < 0)
		return -EINVAL;
	if (wb_view_parse_name(lws, base, name_valid,
			       "a DNS label of at most 52 characters (pods are named "
			       "NAME-GROUP-WORKER)",
			       errs) < 0)
		r = -EINVAL;
	v->spec = wb_obj(lws, "spec");
	if (!v->spec) {
		pk_errors_add(errs, "spec: Required value");
		return -EINVAL;
	}
	if (parse_spec(v, errs) < 0)
		r = -EINVAL;
	if (v->lwt && check_priority(v, errs) < 0)
		r = -EINVAL;
	if (parse_scheduling(v, errs) < 0)
		r = -EINVAL;
	if (wb_view_parse_downward(lws, base, "LeaderWorkerSet", errs) < 0)
		r = -EINVAL;
	v->exclusive = wb_annotation(lws, WB_LWS_ANNOTATION_EXCLUSIVE);
	if (v->exclusive && !topo_dns_subdomain_valid(v->exclusive) && !strchr(v->exclusive, '/')) {
		pk_errors_add(errs,
			      "metadata.annotations[" WB_LWS_ANNOTATION_EXCLUSIVE
			      "]: Invalid value: \"%.80s\": must be a label key",
			      v->exclusive);
		r = -EINVAL;
	}
	if (v->exclusive && wb_obj(v->replica_blocks, "schedulingConstraints")) {
		pk_errors_add(errs, WB_SCHEDULING_PATH
			      ".replica.schedulingConstraints: Forbidden: the group's topology is "
			      "set by the " WB_LWS_ANNOTATION_EXCLUSIVE " annotation");
		r = -EINVAL;
	}
	return r;
}

/* ---- the item tree ------------------------------------------------------------- */

static bool block_has(const json_t *blocks, const char *block, const char *member)
{
	json_t *v = json_object_get(wb_obj(blocks, block), member);

	return v && !json_is_null(v);
}

static int lws_tree(const struct wb_view *base, struct wb_item **ret)
{
	const struct lws_view *v = lws_view_of(base);
	struct wb_item *root = NULL, *replica = NULL;
	int r;

	r = wb_view_root_item(base, ROOT_TEMPLATE, &v->replicas, &root);
	if (r < 0)
		return r;
	r = wb_item_new_counted(REPLICA_TEMPLATE, base->priority_class, &v->size, &replica);
	if (r >= 0) {
		/* a set of gangs by default; an `all` set's groups are `all` too */
		replica->defaults.policy = WB_POLICY_GANG;
		if (block_has(base->scheduling, "disruptionMode", "all"))
			replica->defaults.disruption = WB_DISRUPTION_ALL;
		if (v->exclusive)
			r = wb_config_set_topology(&replica->defaults, v->exclusive);
	}
	if (r >= 0)
		r = wb_item_set_blocks(replica, v->replica_blocks, "replica");
	if (r >= 0) {
		r = wb_item_add_child(root, replica);
		replica = NULL;
	}
	if (r < 0) {
		wb_item_free(replica);
		wb_item_free(root);
		return r;
	}
	*ret = root;
	return 0;
}

/*
 * Gang counts no group can reach, and LeaderReady with a gang holding the
 * leader: its workers are made only once it is Ready, which it cannot be
 * before the gang is placed (KEP-666).
 */
static int lws_check_counts(const struct wb_view *base, const struct wb_item *root,
			    struct pk_errors *errs)
{
	const struct lws_view *v = lws_view_of(base);
	int r = 0;

	if (wb_check_count_limit(root, WB_SCHEDULING_PATH, v->replicas, "spec.replicas", errs) < 0)
		r = -EINVAL;
	if (root->nchildren && wb_check_count_limit(root->children[0], WB_SCHEDULING_PATH, v->size,
						    "spec.leaderWorkerTemplate.size", errs) < 0)
		r = -EINVAL;
	if (v->leader_ready && v->size > 1 &&
	    !block_has(v->replica_blocks, "schedulingPolicy", "basic")) {
		pk_errors_add(errs,
			      "spec.startupPolicy: Invalid value: \"LeaderReady\": each group is a "
			      "gang of its leader and workers, and the workers are created only "
			      "once the leader is Ready; set " WB_SCHEDULING_PATH
			      ".replica.schedulingPolicy to {basic: {}}");
		r = -EINVAL;
	}
	return r;
}

/* ---- pods ---------------------------------------------------------------------- */

void wb_lws_revision(const json_t *lws, char ret[WB_LWS_REVISION_LEN])
{
	char *s = json_dumps(pk_get(lws, "spec.leaderWorkerTemplate"),
			     JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	snprintf(ret, WB_LWS_REVISION_LEN, "%016llx",
		 (unsigned long long)pk_fnv1a(PK_FNV1A_INIT, s ? s : ""));
	free(s);
}

/* What every pod of the LWS shares. */
struct stamp {
	const struct lws_view *v;
	const char *created; /* the LWS's creationTimestamp, or NULL */
	char revision[WB_LWS_REVISION_LEN];
	struct wb_owner owner;
};

static int set_str(json_t *obj, const char *key, const char *value)
{
	return json_object_set_new(obj, key, json_string(value));
}

/* obj[key], an object or array made when absent (NULL when not possible). */
static json_t *member(json_t *obj, const char *key, bool array)
{
	json_t *m = json_object_get(obj, key);

	if (array ? json_is_array(m) : json_is_object(m))
		return m;
	m = array ? json_array() : json_object();
	return json_object_set_new(obj, key, m) < 0 ? NULL : m;
}

static json_t *copy_map(const json_t *tmeta, const char *key)
{
	return wb_obj(tmeta, key) ? json_deep_copy(wb_obj(tmeta, key)) : json_object();
}

/* LWS's environment in every container, unless the template sets the name. */
static int add_env(json_t *spec, const char *address, int64_t size, int64_t worker)
{
	char sz[24], wi[24];
	const char *vars[3][2] = {
	    {"LWS_LEADER_ADDRESS", address}, {"LWS_GROUP_SIZE", sz}, {"LWS_WORKER_INDEX", wi}};
	json_t *c;
	size_t i, k, j;

	snprintf(sz, sizeof(sz), "%lld", (long long)size);
	snprintf(wi, sizeof(wi), "%lld", (long long)worker);
	json_array_foreach(json_object_get(spec, "containers"), i, c)
	{
		json_t *env, *e;

		if (!json_is_object(c))
			continue; /* not a container: pod validation names it */
		env = member(c, "env", true);
		if (!env)
			return -ENOMEM;
		for (k = 0; k < 3; k++) {
			json_array_foreach(env, j,
					   e) if (wb_str(e, "name") &&
						  strcmp(wb_str(e, "name"), vars[k][0]) == 0) break;
			if (j == json_array_size(env) &&
			    json_array_append_new(env, json_pack("{s:s,s:s}", "name", vars[k][0],
								 "value", vars[k][1])) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* LWS's exclusive placement: the group's pods together, other groups out. */
static int add_exclusive(json_t *spec, const char *key, const char *topology)
{
	json_t *aff = member(spec, "affinity", false);
	json_t *pa = aff ? member(aff, "podAffinity", false) : NULL;
	json_t *paa = aff ? member(aff, "podAntiAffinity", false) : NULL;
	json_t *req =
	    pa ? member(pa, "requiredDuringSchedulingIgnoredDuringExecution", true) : NULL;
	json_t *anti =
	    paa ? member(paa, "requiredDuringSchedulingIgnoredDuringExecution", true) : NULL;

	if (!req || !anti)
		return -ENOMEM;
	if (json_array_append_new(req, json_pack("{s:{s:[{s:s,s:s,s:[s]}]},s:s}", "labelSelector",
						 "matchExpressions", "key", WB_LWS_LABEL_GROUP_KEY,
						 "operator", "In", "values", key, "topologyKey",
						 topology)) < 0 ||
	    json_array_append_new(
		anti, json_pack("{s:{s:[{s:s,s:s},{s:s,s:s,s:[s]}]},s:s}", "labelSelector",
				"matchExpressions", "key", WB_LWS_LABEL_GROUP_KEY, "operator",
				"Exists", "key", WB_LWS_LABEL_GROUP_KEY, "operator", "NotIn",
				"values", key, "topologyKey", topology)) < 0)
		return -ENOMEM;
	return 0;
}

static int pod_meta(const struct stamp *s, json_t *meta, const json_t *tmeta, int64_t group,
		    int64_t worker, const char *leader, const char *key)
{
	const struct lws_view *v = s->v;
	json_t *labels = copy_map(tmeta, "labels"), *ann = copy_map(tmeta, "annotations");
	char gi[24], wi[24], sz[24];
	int r = 0;

	if (json_object_set_new(meta, "labels", labels) < 0 ||
	    json_object_set_new(meta, "annotations", ann) < 0)
		return -ENOMEM;
	snprintf(gi, sizeof(gi), "%lld", (long long)group);
	snprintf(wi, sizeof(wi), "%lld", (long long)worker);
	snprintf(sz, sizeof(sz), "%lld", (long long)v->size);
	r |= set_str(labels, WB_LWS_LABEL_NAME, v->base.name);
	r |= set_str(labels, WB_LWS_LABEL_GROUP_INDEX, gi);
	r |= set_str(labels, WB_LWS_LABEL_WORKER_INDEX, wi);
	r |= set_str(labels, WB_LWS_LABEL_GROUP_KEY, key);
	r |= set_str(labels, WB_LWS_LABEL_REVISION, s->revision);
	r |= set_str(ann, WB_LWS_ANNOTATION_SIZE, sz);
	if (worker > 0)
		r |= set_str(ann, WB_LWS_ANNOTATION_LEADER, leader);
	if (v->exclusive)
		r |= set_str(ann, WB_LWS_ANNOTATION_EXCLUSIVE, v->exclusive);
	if (s->created)
		r |= set_str(meta, "creationTimestamp", s->created);
	return r ? -ENOMEM : 0;
}

/* The pod of group `group`, worker `worker` (0: the leader), bound to pg. */
static json_t *lws_pod(const struct stamp *s, int64_t group, int64_t worker, const char *pg)
{
	const struct lws_view *v = s->v;
	const json_t *tmpl = worker ? v->worker_tmpl : v->leader_tmpl;
	const char *ns = v->base.namespace ? v->base.namespace : "default";
	char leader[96], name[128], sub[96], key[24], addr[256];
	json_t *pod, *spec;

	snprintf(leader, sizeof(leader), "%s-%lld", v->base.name, (long long)group);
	snprintf(name, sizeof(name), worker ? "%s-%lld" : "%s", leader, (long long)worker);
	snprintf(sub, sizeof(sub), "%s", v->unique_subdomain ? leader : v->base.name);
	snprintf(addr, sizeof(addr), "%s.%s.%s", leader, sub, ns);
	snprintf(
	    key, sizeof(key), "%016llx",
	    (unsigned long long)pk_fnv1a(pk_fnv1a_byte(pk_fnv1a(PK_FNV1A_INIT, ns), '/'), leader));
	pod = wb_object_new("v1", "Pod", name, v->base.namespace, &s->owner);
	if (!pod)
		return NULL;
	spec = wb_obj(tmpl, "spec") ? json_deep_copy(wb_obj(tmpl, "spec")) : json_object();
	if (!spec || json_object_set_new(pod, "spec", spec) < 0 ||
	    pod_meta(s, json_object_get(pod, "metadata"), wb_obj(tmpl, "metadata"), group, worker,
		     leader, key) < 0 ||
	    set_str(spec, "hostname", name) < 0 || set_str(spec, "subdomain", sub) < 0 ||
	    add_env(spec, addr, v->size, worker) < 0 ||
	    (v->exclusive && add_exclusive(spec, key, v->exclusive) < 0) ||
	    (pg && json_object_set_new(spec, "schedulingGroup",
				       json_pack("{s:s}", "podGroupName", pg)) < 0)) {
		json_decref(pod);
		return NULL;
	}
	return pod;
}

/* ---- what exists (the lookup) ------------------------------------------------------ */

static const json_t *find_pod(const struct wb_lookup *lk, const struct lws_view *v,
			      const char *name)
{
	return lk && lk->fn ? lk->fn(lk->userdata, PK_KIND_POD, v->base.namespace, name) : NULL;
}

/* The leader of group i as it exists: its revision and whether it is Ready. */
static const json_t *leader_of(const struct wb_lookup *lk, const struct lws_view *v, int64_t i)
{
	char name[96];

	snprintf(name, sizeof(name), "%s-%lld", v->base.name, (long long)i);
	return find_pod(lk, v, name);
}

static bool current(const json_t *pod, const char *revision)
{
	const char *r = json_string_value(
	    json_object_get(pk_get(pod, "metadata.labels"), WB_LWS_LABEL_REVISION));

	return r && strcmp(r, revision) == 0;
}

/* Every pod of group i exists at revision and is Ready. */
static bool group_done(const struct wb_lookup *lk, const struct lws_view *v, int64_t i,
		       const char *revision)
{
	char name[128];

	for (int64_t w = 0; w < v->size; w++) {
		const json_t *p;

		snprintf(name, sizeof(name), w ? "%s-%lld-%lld" : "%s-%lld", v->base.name,
			 (long long)i, (long long)w);
		p = find_pod(lk, v, name);
		if (!p || !current(p, revision) || !pk_pod_ready(p))
			return false;
	}
	return true;
}

/*
 * The surge groups of a rolling update: while a group of [0, replicas) runs
 * an older revision, or surge groups exist and a group is not yet updated
 * and Ready (or is being recreated), up to maxSurge groups at the next
 * indices.
 */
static int64_t surge_groups(const struct wb_lookup *lk, const struct lws_view *v,
			    const char *revision)
{
	int64_t pending = 0, i;
	bool old = false;

	if (v->max_surge == 0 || !lk || !lk->fn)
		return 0;
	/* the leaders first: the groups' pods are looked at only during an update */
	for (i = 0; i < v->replicas && !old; i++) {
		const json_t *l = leader_of(lk, v, i);

		old = l && !current(l, revision);
	}
	if (!old && !leader_of(lk, v, v->replicas))
		return 0;
	for (i = 0; i < v->replicas && pending < v->max_surge; i++)
		pending += !group_done(lk, v, i, revision); /* a group being recreated too */
	return pending;
}

/* The pods of group i: the leader, and the workers unless they wait for it. */
static int group_pods(const struct stamp *s, const struct wb_lookup *lk, int64_t i, const char *pg,
		      json_t *out)
{
	const struct lws_view *v = s->v;
	int64_t workers = v->size;

	if (v->leader_ready) {
		const json_t *l = leader_of(lk, v, i);
		char first[128];

		snprintf(first, sizeof(first), "%s-%lld-1", v->base.name, (long long)i);
		if ((!l || !current(l, s->revision) || !pk_pod_ready(l)) && !find_pod(lk, v, first))
			workers = 1; /* once made, the workers stay while the leader runs */
	}
	for (int64_t w = 0; w < workers; w++) {
		json_t *pod = lws_pod(s, i, w, pg);

		if (!pod || json_array_append_new(out, pod) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The groups and pods under the set's group NAME, each group from leaf. */
static int materialize_groups(const json_t *lws, const struct lws_view *v, struct wb_builder *b,
			      const char *leaf, json_t *out)
{
	struct stamp s = {.v = v, .created = pk_get_string(lws, "metadata.creationTimestamp")};
	int64_t n, i;
	int r = 0;

	wb_lws_revision(lws, s.revision);
	wb_owner_of(lws, &s.owner);
	n = v->replicas + surge_groups(v->base.lookup, v, s.revision);
	for (i = 0; r >= 0 && i < n; i++) {
		char *pg = wb_strdupf("%s-%lld", v->base.name, (long long)i);

		r = pg ? wb_append_group(b, out, false, pg, leaf, v->base.name) : -ENOMEM;
		if (r >= 0)
			r = group_pods(&s, v->base.lookup, i, pg, out);
		free(pg);
	}
	return r;
}

static int lws_materialize(const json_t *lws, const struct wb_view *base, struct wb_builder *b,
			   json_t *out)
{
	int r = wb_append_group(b, out, true, base->name, ROOT_TEMPLATE, NULL);

	return r < 0 ? r : materialize_groups(lws, lws_view_of(base), b, REPLICA_TEMPLATE, out);
}

/* Delegated: NAME from the parent's composite template, groups from its one leaf. */
static int lws_reconcile_delegated(const json_t *lws, const struct wb_view *base,
				   const struct wb_lookup *lookup, json_t *out,
				   struct pk_errors *errs)
{
	struct wb_builder *b = NULL;
	const json_t *tmpl, *wl, *leaves;
	bool comp = false;
	int r;

	wl = wb_view_workload(base, lookup, errs);
	if (!wl)
		return -ENOENT;
	tmpl = wb_find_template(wl, base->a_template, &comp);
	leaves = json_object_get(tmpl, "podGroupTemplates");
	if (!tmpl || !comp || json_array_size(leaves) != 1 ||
	    json_array_size(json_object_get(tmpl, "compositePodGroupTemplates"))) {
		pk_errors_add(errs,
			      "metadata.annotations[" WB_ANNOTATION_TEMPLATE
			      "]: Not found: \"%.63s\": Workload \"%.253s\" has no "
			      "CompositePodGroupTemplate of that name with one PodGroupTemplate "
			      "(the groups of the LeaderWorkerSet)",
			      base->a_template, base->a_workload);
		return -ENOENT;
	}
	r = wb_view_delegated_builder(lws, base, wl, &b);
	if (r >= 0)
		r = wb_append_group(b, out, true, base->name, base->a_template, base->a_parent);
	if (r >= 0)
		r = materialize_groups(lws, lws_view_of(base), b,
				       wb_str(json_array_get(leaves, 0), "name"), out);
	wb_builder_free(b);
	return r;
}

static const struct wb_controller lws_controller = {
    .view_size = sizeof(struct lws_view),
    .parse = lws_parse,
    .tree = lws_tree,
    .check_counts = lws_check_counts,
    .materialize = lws_materialize,
    .reconcile_managed = lws_reconcile_delegated,
};

int wb_lws_validate(const json_t *lws, const json_t *old_lws, struct pk_errors *errs)
{
	return wb_controller_validate(&lws_controller, lws, old_lws, errs);
}

int wb_lws_reconcile(const json_t *lws, const struct wb_lookup *lookup, json_t **ret_objects,
		     struct pk_errors *errs)
{
	return wb_controller_reconcile(&lws_controller, lws, lookup, ret_objects, errs);
}

int64_t wb_lws_size(const json_t *lws)
{
	json_t *v = pk_get(lws, "spec.leaderWorkerTemplate.size");

	return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 1;
}

int wb_lws_params(const json_t *lws, struct wb_lws_params *ret)
{
	struct pk_errors errs = {0};
	struct lws_view v = {0};
	int r = lws_parse(lws, &v.base, &errs);

	pk_errors_clear(&errs);
	if (r < 0)
		return r;
	*ret = (struct wb_lws_params){.replicas = v.replicas,
				      .size = v.size,
				      .max_unavailable = v.max_unavailable,
				      .max_surge = v.max_surge,
				      .recreate = v.recreate};
	return 0;
}
