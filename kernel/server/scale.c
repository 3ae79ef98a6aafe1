/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scale.c — the scale subresource (autoscaling/v1 Scale) of the kinds whose
 * upstream definition declares one: LeaderWorkerSet (spec.replicas,
 * status.replicas, status.hpaPodSelector), what `kubectl scale` and a
 * HorizontalPodAutoscaler read and write.
 *
 * A GET answers the object's Scale; a PUT or PATCH is applied to that Scale
 * and only its spec.replicas goes back into the object, which is then
 * written as an update of the object (admission and validation included)
 * under the resourceVersion it was read at, or the one the body names.
 */
#include <errno.h>
#include <string.h>

#include "kernel/server/server-internal.h"

bool pk_srv_has_scale(const struct pk_type *t)
{
	return t && t->pk == PK_KIND_LEADER_WORKER_SET;
}

json_t *pk_srv_scale_view(const json_t *obj)
{
	json_t *meta = json_object(), *scale, *v;
	static const char *const keep[] = {"name", "namespace", "uid", "resourceVersion",
					   "creationTimestamp"};

	if (!meta)
		return NULL;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if ((v = json_object_get(json_object_get(obj, "metadata"), keep[i])))
			json_object_set(meta, keep[i], v);
	v = pk_get(obj, "spec.replicas");
	scale =
	    json_pack("{s:s,s:s,s:o,s:{s:I},s:{s:I}}", "kind", "Scale", "apiVersion",
		      "autoscaling/v1", "metadata", meta, "spec", "replicas",
		      (json_int_t)(json_is_integer(v) ? json_integer_value(v) : 1), "status",
		      "replicas", (json_int_t)json_integer_value(pk_get(obj, "status.replicas")));
	if (scale && pk_get_string(obj, "status.hpaPodSelector"))
		json_object_set(json_object_get(scale, "status"), "selector",
				pk_get(obj, "status.hpaPodSelector"));
	return scale;
}

int pk_srv_scale_stored(const json_t *live, const json_t *scale, json_t **ret,
			struct pk_errors *errs)
{
	json_t *replicas = pk_get(scale, "spec.replicas"), *next, *rv;

	if (!json_is_object(scale) || !json_is_integer(replicas) ||
	    json_integer_value(replicas) < 0 || json_integer_value(replicas) > INT32_MAX) {
		pk_errors_add(errs, "spec.replicas: Invalid value: must be a non-negative integer");
		return -EINVAL;
	}
	next = json_deep_copy(live);
	if (!next)
		return -ENOMEM;
	if (!json_is_object(json_object_get(next, "spec")))
		json_object_set_new(next, "spec", json_object());
	json_object_set(json_object_get(next, "spec"), "replicas", replicas);
	rv = pk_get(scale, "metadata.resourceVersion");
	if (json_is_string(rv) && *json_string_value(rv))
		json_object_set(json_object_get(next, "metadata"), "resourceVersion", rv);
	*ret = next;
	return 0;
}

/* One try: the live object, its Scale patched (or replaced by body), written back. */
static int write_once(struct pk_store *st, const struct pk_type *t, const char *ns,
		      const char *name, const enum pk_patch_type *type, const json_t *body,
		      const struct pk_store_write_opts *wo, struct pk_errors *errs, json_t **ret)
{
	json_t *live = NULL, *view = NULL, *scale = NULL, *next = NULL;
	char err[256] = "";
	int rc = pk_store_get(st, t, ns, name, &live);

	if (rc == 0 && type && !(view = pk_srv_scale_view(live)))
		rc = -ENOMEM;
	if (rc == 0 && type &&
	    (rc = pk_patch_apply(view, *type, body, &scale, err, sizeof(err))) < 0) {
		pk_errors_add(errs, "patch: %s", err);
		rc = rc == -E2BIG || rc == -ENOMEM ? rc : -EINVAL;
	}
	if (rc == 0)
		rc = pk_srv_scale_stored(live, type ? scale : body, &next, errs);
	if (rc == 0)
		rc = pk_store_update_opts(st, next, PK_SUB_MAIN, wo, errs, ret);
	json_decref(live);
	json_decref(view);
	json_decref(scale);
	json_decref(next);
	return rc;
}

int pk_srv_scale_write(struct pk_store *st, const struct pk_type *t, const char *ns,
		       const char *name, const enum pk_patch_type *type, const json_t *body,
		       const struct pk_store_write_opts *wo, struct pk_errors *errs, json_t **ret)
{
	/* a body that names a resourceVersion is held to it; otherwise retried */
	bool pinned = json_is_string(pk_get(body, "metadata.resourceVersion"));
	int rc = -PK_STORE_ECONFLICT;

	for (int attempt = 0; attempt < 5 && rc == -PK_STORE_ECONFLICT; attempt++) {
		rc = write_once(st, t, ns, name, type, body, wo, errs, ret);
		if (pinned)
			break;
		if (rc == -PK_STORE_ECONFLICT)
			pk_errors_clear(errs);
	}
	return rc;
}
