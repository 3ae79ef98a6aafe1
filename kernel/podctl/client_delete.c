/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_delete.c — `podctl delete KIND NAME [NAME...]`: a DELETE of each
 * object (the server's default propagation), "KIND "NAME" deleted" per
 * object gone, the server's refusal otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl-client.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"

int cl_cmd_delete(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	int r = cl_parse_opts(h, argc, argv, &o);
	const struct pk_type *ty;
	long st;
	json_t *body = NULL;
	char lk[64], what[300];

	if (r)
		return r;
	if (o.nargs < 2)
		return cl_usage_error("usage: podctl delete KIND NAME [NAME...] [-n NS]");
	ty = podctl_resolve_kind(o.args[0]);
	if (!ty)
		return cl_usage_error("delete: unknown kind '%s'", o.args[0]);
	for (size_t i = 1; i < o.nargs; i++) {
		char *path = podctl_type_path(ty, o.ns, o.args[i], NULL);

		if (!path)
			return PODCTL_EXIT_FAILURE;
		cl_http_do(h, "DELETE", path, NULL, NULL, &st, &body);
		free(path);
		snprintf(what, sizeof(what), "delete %s %s", cl_lower(ty->kind, lk, sizeof(lk)),
			 o.args[i]);
		if (st == 200 || st == 202)
			printf("%s \"%s\" deleted\n", lk, o.args[i]);
		else if ((r = cl_report_failure(what, st, body)) == 0)
			r = PODCTL_EXIT_FAILURE;
		json_decref(body);
		body = NULL;
	}
	return r;
}
