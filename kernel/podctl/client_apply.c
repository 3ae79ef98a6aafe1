/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_apply.c — `podctl apply -f FILE`: each object of the files is
 * created, or merge-patched onto the stored one when it exists (fields the
 * file leaves out are kept), as `kubectl apply` does without its
 * last-applied annotation.  An object the server refuses names its field
 * paths on stderr; the exit code is the worst of the objects'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl-client.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"

static int apply_one(struct http *h, const char *file, json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const struct pk_type *t = kind ? pk_type_by_kind(kind) : NULL;
	const char *name = pk_name(obj);
	char lk[64], what[512];
	long st;
	json_t *body = NULL;

	if (!t)
		return cl_usage_error("%s: kind: Unsupported value: \"%s\"", file,
				      kind ? kind : "");
	if (!name || !*name)
		return cl_usage_error("%s: %s: metadata.name: Required value", file, kind);
	const char *ns = t->namespaced ? pk_namespace(obj) : NULL;
	char *path = podctl_type_path(t, ns, name, NULL);
	char *coll = podctl_type_path(t, ns, NULL, NULL);
	int r = PODCTL_EXIT_FAILURE;

	snprintf(what, sizeof(what), "%s: %s/%s", file, cl_lower(kind, lk, sizeof(lk)), name);
	if (!path || !coll)
		goto out;
	cl_http_do(h, "GET", path, NULL, NULL, &st, &body);
	if (st == 404 || st == 200) { /* else the GET's failure is what is reported */
		json_decref(body);
		body = NULL;
	}
	if (st == 404) {
		cl_http_do(h, "POST", coll, obj, "application/json", &st, &body);
		if (st == 200 || st == 201) {
			printf("%s/%s created\n", lk, name);
			r = 0;
		}
	} else if (st == 200) {
		json_t *patch = json_deep_copy(obj);

		json_object_del(json_object_get(patch, "metadata"), "resourceVersion");
		cl_http_do(h, "PATCH", path, patch, "application/merge-patch+json", &st, &body);
		json_decref(patch);
		if (st == 200) {
			printf("%s/%s configured\n", lk, name);
			r = 0;
		}
	}
	if (r != 0) {
		json_t *causes = pk_get(body, "details.causes"), *c;
		size_t i;

		json_array_foreach(causes, i, c)
		    fprintf(stderr, "%s: %s: %s\n", what,
			    json_string_value(json_object_get(c, "field")) ?: "",
			    json_string_value(json_object_get(c, "message")) ?: "");
		r = cl_report_failure(what, st, body);
	}
out:
	json_decref(body);
	free(path);
	free(coll);
	return r;
}

int cl_cmd_apply(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	int r = cl_parse_opts(h, argc, argv, &o), worst = 0;

	if (r)
		return r;
	if (!o.nfiles || o.nargs)
		return cl_usage_error("usage: podctl apply -f FILE [-f FILE ...]");
	for (size_t f = 0; f < o.nfiles; f++) {
		json_t *objs = NULL, *obj;
		char err[1024] = "";
		size_t i;
		const char *path = strcmp(o.files[f], "-") == 0 ? "/dev/stdin" : o.files[f];

		r = pk_read_file(path, &objs, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "podctl: %s\n", *err ? err : strerror(-r));
			return podctl_input_exit(r);
		}
		json_array_foreach(objs, i, obj)
		{
			const char *k = json_string_value(json_object_get(obj, "kind"));
			const struct pk_type *t = k ? pk_type_by_kind(k) : NULL;

			if (t && t->namespaced && strcmp(o.ns, "default") != 0 &&
			    !json_object_get(json_object_get(obj, "metadata"), "namespace"))
				pk_set(obj, "metadata.namespace", json_string(o.ns));
			r = apply_one(h, o.files[f], obj);
			if (r > worst)
				worst = r;
		}
		json_decref(objs);
	}
	return worst;
}
