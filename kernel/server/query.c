/* SPDX-License-Identifier: Apache-2.0 */
/*
 * query.c — the query parameters of list and watch, checked as
 * kube-apiserver checks them before it reads anything.
 *
 * Three stages, as upstream's list handler:
 *   - decoding (400 BadRequest, the parameter named): a NUL byte in any
 *     argument (pk_srv_query_nul, for every request), a timeoutSeconds that
 *     is not a whole number or is negative, a boolean (allowWatchBookmarks,
 *     sendInitialEvents) not spelled as Go's ParseBool takes it;
 *   - ListOptions validation (422 Invalid, kind ListOptions, the fields in
 *     details.causes): resourceVersionMatch only with a resourceVersion,
 *     never with continue, Exact not with "0", and on a watch only with
 *     sendInitialEvents; sendInitialEvents never on a list, and on a watch
 *     only where the WatchList feature is served, which it is not here;
 *   - the field selector's labels (400 BadRequest, "field label not
 *     supported: LABEL"): metadata.name and metadata.namespace for every
 *     kind, and the fields each kind's field label conversion adds upstream
 *     (a Node and a Namespace take no metadata.namespace).
 * A continue token with a resourceVersion other than "0" is 400 as the
 * storage layer answers it.  The rest (resourceVersion's digits, limit,
 * the selectors' syntax, a malformed continue token) is the router's
 * (router.c, router_read.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"

static const char *qarg(const struct pk_request *req, const char *key)
{
	for (size_t i = 0; i < req->nargs; i++)
		if (req->args[i].key && strcmp(req->args[i].key, key) == 0)
			return req->args[i].value ? req->args[i].value : "";
	return NULL;
}

bool pk_srv_query_nul(const struct pk_request *req, struct pk_response *resp)
{
	for (size_t i = 0; i < req->nargs; i++) {
		if (!req->args[i].nul)
			continue;
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "%s: Invalid value: the query parameter holds a NUL byte",
				      req->args[i].key ? req->args[i].key : "");
		return true;
	}
	return false;
}

int pk_srv_query_bool(const char *v, bool *ret)
{
	static const char *const yes[] = {"", "1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};

	*ret = false;
	if (!v)
		return 0;
	if (PK_STRING_TABLE_FIND(yes, v) >= 0) {
		*ret = true;
		return 0;
	}
	return PK_STRING_TABLE_FIND(no, v) >= 0 ? 0 : -EINVAL;
}

int pk_srv_query_timeout(const struct pk_request *req, struct pk_response *resp, long long *ret)
{
	const char *v = qarg(req, "timeoutSeconds");
	char *end;

	*ret = 0;
	if (!v)
		return 0;
	errno = 0;
	*ret = strtoll(v, &end, 10);
	if (!*v || *end || errno || *ret < 0) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "timeoutSeconds: Invalid value: \"%s\": %s", v,
				      !*v || *end ? "must be a whole number of seconds"
				      : errno	  ? "out of range of a 64-bit integer"
						  : "must not be negative");
		return -EINVAL;
	}
	return 0;
}

/* The labels a kind's field selectors take upstream, beyond metadata.name. */
static const struct {
	const struct pk_type *type;
	bool no_namespace; /* no metadata.namespace either */
	const char *labels[12];
} field_labels[] = {
    {&pk_type_pod,
     false,
     {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
      "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
      "status.nominatedNodeName"}},
    {&pk_type_node, true, {"spec.unschedulable"}},
    {&pk_type_namespace, true, {"status.phase"}},
    {&pk_type_event,
     false,
     {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
      "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
      "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}},
    /* the same objects in the shape of events.k8s.io */
    {&pk_type_event_v1,
     false,
     {"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
      "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reason",
      "reportingController", "type"}},
    {&pk_type_job, false, {"status.successful"}},
    {&pk_type_resource_slice, false, {"spec.nodeName", "spec.driver"}},
};

static bool field_label_ok(const struct pk_type *t, const char *label)
{
	if (strcmp(label, "metadata.name") == 0)
		return true;
	for (size_t i = 0; i < ELEMENTSOF(field_labels); i++) {
		if (field_labels[i].type != t)
			continue;
		if (!field_labels[i].no_namespace && strcmp(label, "metadata.namespace") == 0)
			return true;
		for (size_t k = 0; k < ELEMENTSOF(field_labels[i].labels); k++)
			if (field_labels[i].labels[k] &&
			    strcmp(field_labels[i].labels[k], label) == 0)
				return true;
		return false;
	}
	return strcmp(label, "metadata.namespace") == 0;
}

/* ListOptions as upstream validates them: the field errors into errs. */
static void validate_list_options(const struct pk_request *req, bool watch, bool initial,
				  struct pk_errors *errs)
{
	const char *match = qarg(req, "resourceVersionMatch"), *rv = qarg(req, "resourceVersion");
	const char *cont = qarg(req, "continue");
	bool exact = match && strcmp(match, "Exact") == 0;
	bool newer = match && strcmp(match, "NotOlderThan") == 0;

	if (match && !*match)
		match = NULL;
	if (watch && initial) {
		if (!newer)
			pk_errors_add(errs,
				      "resourceVersionMatch: Forbidden: sendInitialEvents "
				      "requires setting resourceVersionMatch to NotOlderThan");
		pk_errors_add(errs, "sendInitialEvents: Forbidden: sendInitialEvents is forbidden "
				    "for watch unless the WatchList feature gate is enabled");
	}
	if (watch && match) {
		if (!initial)
			pk_errors_add(errs,
				      "resourceVersionMatch: Forbidden: resourceVersionMatch is "
				      "forbidden for watch unless sendInitialEvents is provided");
		if (!newer)
			pk_errors_add(errs,
				      "resourceVersionMatch: Unsupported value: \"%s\": supported "
				      "values: \"NotOlderThan\"",
				      match);
	}
	if (!watch && match) {
		if (!rv || !*rv)
			pk_errors_add(errs,
				      "resourceVersionMatch: Forbidden: resourceVersionMatch is "
				      "forbidden unless resourceVersion is provided");
		if (!exact && !newer)
			pk_errors_add(errs,
				      "resourceVersionMatch: Unsupported value: \"%s\": supported "
				      "values: \"Exact\", \"NotOlderThan\", \"\"",
				      match);
		if (exact && rv && strcmp(rv, "0") == 0)
			pk_errors_add(errs, "resourceVersionMatch: Forbidden: resourceVersionMatch "
					    "\"exact\" is forbidden for resourceVersion \"0\"");
	}
	if (match && cont && *cont)
		pk_errors_add(errs, "resourceVersionMatch: Forbidden: resourceVersionMatch is "
				    "forbidden when continue is provided");
	if (!watch && qarg(req, "sendInitialEvents"))
		pk_errors_add(errs, "sendInitialEvents: Forbidden: sendInitialEvents is forbidden "
				    "for list");
}

/* The 422 of ListOptions upstream refuses: every field error, joined. */
static void respond_invalid(struct pk_response *resp, const struct pk_errors *errs)
{
	char msg[1024] = "";
	size_t len = 0;

	for (size_t i = 0; i < errs->n && len < sizeof(msg); i++)
		len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s", i ? ", " : "",
					errs->msg[i]);
	pk_srv_respond_status(resp, 422, "Invalid", "ListOptions", "", errs,
			      "ListOptions.meta.k8s.io \"\" is invalid: %s%s%s",
			      errs->n > 1 ? "[" : "", msg, errs->n > 1 ? "]" : "");
}

/* Decoding: the booleans and timeoutSeconds (400). */
static int decode(const struct pk_request *req, struct pk_response *resp, bool *initial)
{
	static const char *const bools[] = {"allowWatchBookmarks", "sendInitialEvents"};
	long long timeout;

	for (size_t i = 0; i < ELEMENTSOF(bools); i++) {
		bool v;

		if (pk_srv_query_bool(qarg(req, bools[i]), &v) < 0) {
			pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
					      "%s: Invalid value: \"%s\": must be a boolean (true, "
					      "false, 1, 0, t, f, ...)",
					      bools[i], qarg(req, bools[i]));
			return -EINVAL;
		}
	}
	*initial = qarg(req, "sendInitialEvents") != NULL;
	return pk_srv_query_timeout(req, resp, &timeout);
}

/* The field selector's labels against the kind's (parse errors are the router's). */
static int check_field_labels(const struct pk_request *req, const struct pk_type *t,
			      struct pk_response *resp)
{
	const char *fs = qarg(req, "fieldSelector");
	struct pk_selector *sel = NULL;
	char err[256];
	int rc = 0;

	if (!fs || pk_selector_parse(fs, true, &sel, err, sizeof(err)) < 0)
		return 0;
	for (size_t i = 0; sel && i < sel->nreqs && rc == 0; i++) {
		if (field_label_ok(t, sel->reqs[i].key))
			continue;
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "field label not supported: %s", sel->reqs[i].key);
		rc = -EINVAL;
	}
	pk_selector_free(sel);
	return rc;
}

int pk_srv_query_check(const struct pk_request *req, const struct pk_type *t, bool watch,
		       struct pk_response *resp)
{
	struct pk_errors errs = {0};
	const char *cont = qarg(req, "continue"), *rv = qarg(req, "resourceVersion");
	bool initial = false;

	if (decode(req, resp, &initial) < 0)
		return -EINVAL;
	validate_list_options(req, watch, initial, &errs);
	if (errs.n) {
		respond_invalid(resp, &errs);
		pk_errors_clear(&errs);
		return -EINVAL;
	}
	if (!watch && cont && *cont && rv && *rv && strcmp(rv, "0") != 0) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "specifying resource version is not allowed when using "
				      "continue");
		return -EINVAL;
	}
	return check_field_labels(req, t, resp);
}
