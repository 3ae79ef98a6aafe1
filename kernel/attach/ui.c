/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ui.c — the placement map in attach mode: /ui/ on the health listener.
 *
 * The page itself holds no cluster data and is served to anyone; its data,
 * /ui/api/placement, shows the cluster's node and pod names, so it follows
 * the cluster's own authentication and authorisation: the request's bearer
 * token must be allowed by the cluster to list Nodes and Pods.  That is
 * asked of the cluster with the token itself (a one-item list of each, on a
 * client with the scheduler's server and CA but the caller's token), and
 * the answer is remembered for AT_UI_AUTH_TTL_S so a polling page costs
 * the cluster two requests per token every half minute.  The map
 * (kernel/ui/, pk_ui_map_serve()) is the one podkerneld gives in the
 * configuration, registered on the scheduling loop and so fed from the
 * mirror like the scheduler.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/attach/attach-internal.h"

#define AT_UI_AUTH_TTL_S 30
#define AT_UI_AUTH_SLOTS 64
#define AT_UI_TOKEN_MAX 8192

struct at_ui_grant {
	char *token;
	bool allowed;
	time_t until;
};

struct at_ui {
	struct pk_attach *a;
	pthread_mutex_t lock;
	struct at_ui_grant grants[AT_UI_AUTH_SLOTS];
	size_t next; /* slot replaced next (round robin) */
};

int at_ui_new(struct pk_attach *a, struct at_ui **ret)
{
	struct at_ui *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->a = a;
	pthread_mutex_init(&u->lock, NULL);
	*ret = u;
	return 0;
}

void at_ui_free(struct at_ui *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < AT_UI_AUTH_SLOTS; i++)
		free(u->grants[i].token);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Ask the cluster whether token may list Nodes and Pods. */
static bool cluster_allows(struct at_ui *u, const char *token)
{
	const struct pk_kube_credentials *mine = kube_client_credentials(at_client(u->a));
	struct pk_kube_credentials cr = {0};
	struct kube_client *c = NULL;
	struct kube_conn *conn = NULL;
	static const char *const paths[] = {"/api/v1/nodes?limit=1", "/api/v1/pods?limit=1"};
	bool ok = false;

	cr.server = dup_or_null(mine->server);
	cr.tls_server_name = dup_or_null(mine->tls_server_name);
	cr.proxy_url = dup_or_null(mine->proxy_url);
	cr.insecure = mine->insecure;
	cr.ca_file = dup_or_null(mine->ca_file);
	if (mine->ca_data && (cr.ca_data = malloc(mine->ca_data_len + 1))) {
		memcpy(cr.ca_data, mine->ca_data, mine->ca_data_len);
		cr.ca_data[mine->ca_data_len] = '\0';
		cr.ca_data_len = mine->ca_data_len;
	}
	cr.token = strdup(token);
	if (kube_client_new(&cr, &c) < 0 || kube_conn_new(c, &conn) < 0)
		goto out;
	ok = true;
	for (size_t i = 0; ok && i < sizeof(paths) / sizeof(paths[0]); i++) {
		long status = 0;

		ok = kube_request(conn, "GET", paths[i], NULL, NULL, 10000, &status, NULL) == 0 &&
		     status == 200;
	}
out:
	kube_conn_free(conn);
	kube_client_free(c);
	pk_kube_credentials_clear(&cr);
	return ok;
}

/* The cached answer for token, asking the cluster when there is none. */
static bool token_allowed(struct at_ui *u, const char *token)
{
	time_t now = time(NULL);
	bool allowed;

	pthread_mutex_lock(&u->lock);
	for (size_t i = 0; i < AT_UI_AUTH_SLOTS; i++) {
		struct at_ui_grant *g = &u->grants[i];

		if (g->token && g->until > now && strcmp(g->token, token) == 0) {
			allowed = g->allowed;
			pthread_mutex_unlock(&u->lock);
			return allowed;
		}
	}
	pthread_mutex_unlock(&u->lock);
	allowed = cluster_allows(u, token);
	pthread_mutex_lock(&u->lock);
	struct at_ui_grant *g = &u->grants[u->next];

	u->next = (u->next + 1) % AT_UI_AUTH_SLOTS;
	free(g->token);
	g->token = strdup(token);
	g->allowed = allowed;
	g->until = now + AT_UI_AUTH_TTL_S;
	pthread_mutex_unlock(&u->lock);
	return allowed;
}

static int respond(struct pk_response *resp, int status, const char *msg)
{
	json_t *s = json_pack("{s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
			      "status", "Failure", "message", msg, "code", status);
	char *text = s ? json_dumps(s, JSON_COMPACT) : NULL;

	json_decref(s);
	if (!text)
		return -ENOMEM;
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = text;
	resp->body_len = strlen(text);
	return 0;
}

int at_ui_handle(struct at_ui *u, const struct pk_request *req, struct pk_response *resp)
{
	const char *auth = req->authorization;

	if (strcmp(req->path, "/ui") != 0 && strncmp(req->path, "/ui/", 4) != 0)
		return -ENOENT;
	if (strncmp(req->path, "/ui/api/", 8) == 0) {
		if (!auth || strncmp(auth, "Bearer ", 7) != 0 || !auth[7] ||
		    strlen(auth) > AT_UI_TOKEN_MAX)
			return respond(resp, 401, "Unauthorized: a bearer token of the cluster");
		if (!token_allowed(u, auth + 7))
			return respond(
			    resp, 401,
			    "Unauthorized: the cluster does not let this token list Nodes "
			    "and Pods");
	}
	return pk_ui_map_serve(at_map(u->a), req, resp);
}
