/* SPDX-License-Identifier: Apache-2.0 */
/*
 * impersonate.c — the Impersonate-* headers, as kube-apiserver's
 * WithImpersonation filter reads them.
 *
 * Impersonate-User names the user (system:serviceaccount:NS:NAME is a
 * service account), each Impersonate-Group a group, Impersonate-Uid the uid
 * and each Impersonate-Extra-KEY (KEY lower-cased, %-escapes decoded) a value
 * of that extra.  Groups, extras or a uid without a user: 500, as upstream.
 * The caller needs the verb "impersonate" on each thing asked for: users,
 * groups, serviceaccounts (in the account's namespace), uids and
 * userextras/KEY (authentication.k8s.io), through pk_authorize(); the first
 * one refused answers 403 naming it.  Then the request runs as the
 * impersonated identity alone: its groups are the ones given (a service
 * account without any gets system:serviceaccounts and
 * system:serviceaccounts:NS), plus system:authenticated unless that or
 * system:unauthenticated was given (system:unauthenticated for
 * system:anonymous).  Counts and lengths are bounded: too many headers or too
 * long a value is a 400, never a silent cut.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernel/server/server-internal.h"

#define PREFIX "Impersonate-"
#define EXTRA_PREFIX "Impersonate-Extra-"
#define SA_PREFIX "system:serviceaccount:"

/* One "impersonate" check: what kube-apiserver's authorizer attributes name. */
struct imp_attr {
	const char *resource, *group, *ns, *name, *sub;
};

static void forbid(struct pk_response *resp, const struct pk_identity *who,
		   const struct imp_attr *a)
{
	char res[PK_IMP_VALUE_MAX + 32], qualified[PK_IMP_VALUE_MAX + 64], scope[PK_IMP_VALUE_MAX];

	snprintf(res, sizeof(res), "%s%s%s", a->resource, a->sub ? "/" : "", a->sub ? a->sub : "");
	snprintf(qualified, sizeof(qualified), "%s%s%s", a->resource, *a->group ? "." : "",
		 a->group);
	if (a->ns)
		snprintf(scope, sizeof(scope), "in the namespace \"%s\"", a->ns);
	else
		snprintf(scope, sizeof(scope), "at the cluster scope");
	pk_srv_respond_status(resp, 403, "Forbidden", a->resource, a->name, NULL,
			      "%s \"%s\" is forbidden: User \"%s\" cannot impersonate resource "
			      "\"%s\" in API group \"%s\" %s",
			      qualified, a->name, who->user, res, a->group, scope);
}

/* May who impersonate what a names?  Refused: the 403 is in resp. */
static int allowed(const struct pk_identity *who, const struct imp_attr *a,
		   struct pk_response *resp)
{
	if (pk_authorize(who, "impersonate", a->resource, a->name))
		return 0;
	forbid(resp, who, a);
	return -EPERM;
}

static int bad(struct pk_response *resp, const char *what)
{
	pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL, "%s", what);
	return -EINVAL;
}

/* An extra's key: the header's tail, lower-cased, %XX decoded (as upstream's unescapeExtraKey). */
static int extra_key(const char *tail, char out[PK_IMP_KEY_MAX])
{
	size_t n = 0;

	for (const char *p = tail; *p; p++) {
		char c = *p;

		if (c == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			char hex[3] = {p[1], p[2], '\0'};

			c = (char)strtol(hex, NULL, 16);
			p += 2;
		} else if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		if (n + 1 >= PK_IMP_KEY_MAX)
			return -E2BIG;
		out[n++] = c;
	}
	out[n] = '\0';
	return n ? 0 : -EINVAL;
}

static int copy_value(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n >= PK_IMP_VALUE_MAX)
		return -E2BIG;
	memcpy(dst, src, n + 1);
	return 0;
}

/*
 * The headers into im (not yet authorized): 1 when they ask for nothing
 * (empty values, or only names upstream ignores), 0, or -errno with the
 * answer in resp.
 */
static int read_headers(const struct pk_request *req, struct pk_impersonation *im,
			struct pk_response *resp)
{
	bool user = false;

	for (size_t i = 0; i < req->nimpersonate; i++) {
		const char *k = req->impersonate[i].key, *v = req->impersonate[i].value ?: "";
		int r = 0;

		if (strcasecmp(k, PREFIX "User") == 0) {
			if (!user && *v)
				r = copy_value(im->user, v);
			user = user || *v;
		} else if (strcasecmp(k, PREFIX "Uid") == 0) {
			if (!im->has_uid && *v)
				r = copy_value(im->uid, v);
			im->has_uid = im->has_uid || *v;
		} else if (strcasecmp(k, PREFIX "Group") == 0) {
			if (im->ngiven >= PK_IMP_GROUPS_MAX)
				return bad(resp, "too many Impersonate-Group headers");
			r = copy_value(im->groups_buf[im->ngiven], v);
			im->groups[im->ngiven] = im->groups_buf[im->ngiven];
			im->ngiven++;
		} else if (strncasecmp(k, EXTRA_PREFIX, strlen(EXTRA_PREFIX)) == 0) {
			if (im->nextra >= PK_IMP_EXTRAS_MAX)
				return bad(resp, "too many Impersonate-Extra-* headers");
			r = extra_key(k + strlen(EXTRA_PREFIX), im->extra_keys_buf[im->nextra]);
			if (r == 0)
				r = copy_value(im->extra_values_buf[im->nextra], v);
			im->extra_keys[im->nextra] = im->extra_keys_buf[im->nextra];
			im->extra_values[im->nextra] = im->extra_values_buf[im->nextra];
			im->nextra++;
		}
		if (r < 0)
			return bad(resp, "an Impersonate-* header is too long or has no name");
	}
	if (!user && !im->ngiven && !im->nextra && !im->has_uid)
		return 1;
	if (!user) {
		pk_srv_respond_status(resp, 500, "InternalError", NULL, NULL, NULL,
				      "Internal error occurred: requested impersonation of groups, "
				      "extras or a uid without impersonating a user");
		return -EINVAL;
	}
	return 0;
}

/* system:serviceaccount:NS:NAME into its namespace and name. */
static bool service_account(const char *user, char *ns, char *name)
{
	const char *rest, *colon;

	if (strncmp(user, SA_PREFIX, strlen(SA_PREFIX)) != 0)
		return false;
	rest = user + strlen(SA_PREFIX);
	colon = strchr(rest, ':');
	if (!colon || colon == rest || !colon[1] || strchr(colon + 1, ':'))
		return false;
	snprintf(ns, PK_IMP_VALUE_MAX, "%.*s", (int)(colon - rest), rest);
	snprintf(name, PK_IMP_VALUE_MAX, "%s", colon + 1);
	return true;
}

/* Every thing asked for, authorized in upstream's order: user, groups, extras, uid. */
static int authorize_all(const struct pk_identity *who, struct pk_impersonation *im,
			 struct pk_response *resp)
{
	struct imp_attr a = {"users", "", NULL, im->user, NULL};
	int r;

	if (service_account(im->user, im->sa_ns, im->sa_name))
		a = (struct imp_attr){"serviceaccounts", "", im->sa_ns, im->sa_name, NULL};
	r = allowed(who, &a, resp);
	for (size_t i = 0; r == 0 && i < im->ngiven; i++)
		r = allowed(who, &(struct imp_attr){"groups", "", NULL, im->groups[i], NULL}, resp);
	for (size_t i = 0; r == 0 && i < im->nextra; i++)
		r = allowed(who,
			    &(struct imp_attr){"userextras", "authentication.k8s.io", NULL,
					       im->extra_values[i], im->extra_keys[i]},
			    resp);
	if (r == 0 && im->has_uid)
		r = allowed(
		    who, &(struct imp_attr){"uids", "authentication.k8s.io", NULL, im->uid, NULL},
		    resp);
	return r;
}

static bool given(const struct pk_impersonation *im, const char *group)
{
	for (size_t i = 0; i < im->ngroups; i++)
		if (strcmp(im->groups[i], group) == 0)
			return true;
	return false;
}

/* The groups the impersonated identity has beyond those given. */
static void implied_groups(struct pk_impersonation *im)
{
	bool anonymous = strcmp(im->user, "system:anonymous") == 0;

	im->ngroups = im->ngiven;
	if (im->ngiven == 0 && *im->sa_ns) {
		snprintf(im->sa_group, sizeof(im->sa_group), "system:serviceaccounts:%s",
			 im->sa_ns);
		im->groups[im->ngroups++] = "system:serviceaccounts";
		im->groups[im->ngroups++] = im->sa_group;
	}
	if (!anonymous && !given(im, "system:authenticated") &&
	    !given(im, "system:unauthenticated"))
		im->groups[im->ngroups++] = "system:authenticated";
	if (anonymous && !given(im, "system:unauthenticated"))
		im->groups[im->ngroups++] = "system:unauthenticated";
}

int pk_srv_impersonate(const struct pk_server *srv, const struct pk_request *req,
		       struct pk_identity *who, struct pk_impersonation *im,
		       struct pk_response *resp)
{
	int r;

	if (!req->nimpersonate)
		return 0;
	memset(im, 0, sizeof(*im));
	r = read_headers(req, im, resp);
	if (r > 0)
		return 0;
	if (r == 0)
		r = authorize_all(who, im, resp);
	if (r < 0) {
		pk_srv_log(srv, 2, "%s %s: %s may not impersonate %s", req->method, req->path,
			   who->user, im->user);
		return r;
	}
	implied_groups(im);
	pk_srv_log(srv, 2, "%s %s: %s is impersonating %s", req->method, req->path, who->user,
		   im->user);
	*who = (struct pk_identity){.user = im->user,
				    .groups = im->groups,
				    .ngroups = im->ngroups,
				    .authenticated = strcmp(im->user, "system:anonymous") != 0,
				    .uid = im->has_uid ? im->uid : NULL,
				    .extra_keys = im->extra_keys,
				    .extra_values = im->extra_values,
				    .nextra = im->nextra};
	return 0;
}
