/* SPDX-License-Identifier: Apache-2.0 */
/*
 * publish.c — the node's labels on a Kubernetes API server (or podkerneld).
 *
 * The agent owns only the labels it computes.  It learns which ones it owned
 * before from the node's TOPO_ANN_AGENT_OWNED annotation (one GET, on the first
 * publish or after the node vanished), then sends a JSON merge patch
 * (RFC 7386, application/merge-patch+json) of metadata: its labels, null for
 * each label it owned and no longer finds, and its annotations.  Other
 * labels are never named, so they stay as they are.  A patch identical to
 * the last one accepted is not sent again (the Node is written only when
 * something changed) until resync_s have passed, which puts back what others
 * removed.  A missing Node is an error: the kubelet registers Nodes; only
 * with register (bare hosts whose cluster has no kubelet, such as
 * podkerneld's) is it created with POST /api/v1/nodes (full object, status
 * included).  With status on, the agent also owns status.capacity and
 * status.allocatable and patches them through the /status subresource: its
 * resources, null for any other.
 *
 * Liveness is a coordination.k8s.io/v1 Lease per node (agent_lease_renew):
 * its renewTime is patched every interval, and the Lease is created when
 * missing, as the kubelet does with its own.
 *
 * Requests go through the project's one Kubernetes client (kernel/kube, as
 * attach mode's): TLS, the client certificate and the bearer token are set
 * up there, and a token file is re-read as it rotates.  Network errors, 5xx,
 * 429 and 401 are retried with exponential backoff capped at backoff_max_ms;
 * other 4xx fail at once.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "kernel/kube/kube.h"

struct agent_publisher {
	struct kube_client *client;
	struct kube_conn *conn; /* one keep-alive connection */
	char *lease_ns;
	json_t *last;	    /* {"meta": patch, "status": node status} last accepted */
	json_t *foreign;    /* label keys someone else set on the Node: never written */
	json_t *own_labels; /* the Node's labels as last read for a lookup */
	int64_t own_read;   /* monotonic seconds of that read */
	json_t *peers;	    /* node name -> host index its link report says */
	int64_t last_sync;  /* monotonic seconds of that write */
	int cancel_fd;	    /* readable: stop retrying (the daemon's signalfd), or -1 */
	struct agent_publish_config cfg;
	json_t *owned; /* array of keys owned on the server; NULL: not learned */
};

static const char *const agent_annotations[] = {
    TOPO_ANN_DEVICES,	TOPO_ANN_LINKS,	    TOPO_ANN_AGENT_OWNED,
    AGENT_ANN_DISAGREE, TOPO_ANN_HEARTBEAT, /* the older liveness signal: removed from Nodes now */
};

int agent_publisher_new(const struct agent_publish_config *cfg, struct pk_kube_credentials *creds,
			struct agent_publisher **ret)
{
	struct agent_publisher *p;
	int r;

	if (!cfg || !creds || !creds->server ||
	    (strncmp(creds->server, "http://", 7) != 0 &&
	     strncmp(creds->server, "https://", 8) != 0)) {
		pk_kube_credentials_clear(creds);
		return -EINVAL;
	}
	/* strip trailing slashes so paths join cleanly */
	for (size_t n = strlen(creds->server); n > 0 && creds->server[n - 1] == '/'; n--)
		creds->server[n - 1] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p) {
		pk_kube_credentials_clear(creds);
		return -ENOMEM;
	}
	p->cfg = *cfg;
	p->cfg.lease_namespace = NULL;
	p->cancel_fd = -1;
	p->lease_ns = strdup(cfg->lease_namespace ? cfg->lease_namespace : AGENT_LEASE_NAMESPACE);
	r = kube_client_new(creds, &p->client);
	if (r == 0)
		r = kube_client_set_user_agent(p->client, "podagent/" PODKERNEL_VERSION);
	if (r == 0)
		r = kube_conn_new(p->client, &p->conn);
	if (r == 0 && !p->lease_ns)
		r = -ENOMEM;
	if (r < 0) {
		agent_publisher_free(p);
		return r;
	}
	if (p->cfg.retries < 1)
		p->cfg.retries = 1;
	if (p->cfg.backoff_ms <= 0)
		p->cfg.backoff_ms = 500;
	if (p->cfg.backoff_max_ms < p->cfg.backoff_ms)
		p->cfg.backoff_max_ms = p->cfg.backoff_ms;
	if (p->cfg.timeout_ms <= 0)
		p->cfg.timeout_ms = 10000;
	if (p->cfg.lease_duration_s <= 0)
		p->cfg.lease_duration_s = 40;
	if (p->cfg.resync_s <= 0)
		p->cfg.resync_s = 300;
	*ret = p;
	return 0;
}

void agent_publisher_free(struct agent_publisher *p)
{
	if (!p)
		return;
	kube_conn_free(p->conn);
	kube_client_free(p->client);
	json_decref(p->owned);
	json_decref(p->last);
	json_decref(p->foreign);
	json_decref(p->own_labels);
	json_decref(p->peers);
	free(p->lease_ns);
	free(p);
}

/* ---- HTTP ------------------------------------------------------------------- */

struct response {
	long status; /* 0: no HTTP answer */
	json_t *body;
	char error[256];
};

static int http(struct agent_publisher *p, const char *method, const char *path, const json_t *body,
		const char *ctype, struct response *resp)
{
	int r;

	memset(resp, 0, sizeof(*resp));
	r = kube_request(p->conn, method, path, body ? ctype : NULL, body, (int)p->cfg.timeout_ms,
			 &resp->status, &resp->body);
	if (r < 0)
		snprintf(resp->error, sizeof(resp->error), "%s",
			 *kube_conn_error(p->conn) ? kube_conn_error(p->conn) : strerror(-r));
	return r;
}

/* ---- what the agent owns ------------------------------------------------------- */

static json_t *split_keys(const char *s)
{
	json_t *arr = json_array();

	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n > 0)
			json_array_append_new(arr, json_stringn(s, n));
		s += n + (s[n] == ',');
	}
	return arr;
}

static json_t *owned_of(const json_t *node)
{
	const json_t *ann = json_object_get(json_object_get(node, "metadata"), "annotations");

	return split_keys(json_string_value(json_object_get(ann, TOPO_ANN_AGENT_OWNED)));
}

json_t *agent_merge_patch(const json_t *node, const json_t *owned_before)
{
	const json_t *meta = json_object_get(node, "metadata");
	const json_t *labels = json_object_get(meta, "labels");
	const json_t *ann = json_object_get(meta, "annotations");
	json_t *pl = labels ? json_deep_copy(labels) : json_object();
	json_t *pa = json_object(), *patch = json_object(), *pm = json_object();
	size_t i;
	json_t *k;

	json_array_foreach(owned_before, i, k)
	{
		const char *key = json_string_value(k);

		if (key && !json_object_get(pl, key))
			json_object_set_new(pl, key, json_null());
	}
	for (i = 0; i < sizeof(agent_annotations) / sizeof(agent_annotations[0]); i++) {
		json_t *v = json_object_get(ann, agent_annotations[i]);

		json_object_set_new(pa, agent_annotations[i], v ? json_incref(v) : json_null());
	}
	json_object_set_new(pm, "labels", pl);
	json_object_set_new(pm, "annotations", pa);
	json_object_set_new(patch, "metadata", pm);
	return patch;
}

/* ---- one attempt ------------------------------------------------------------------ */

enum step_result { STEP_DONE, STEP_RETRY, STEP_FAIL };

static enum step_result classify(const struct response *resp, int *rc, char *err, size_t errlen,
				 const char *what)
{
	const char *msg = json_string_value(json_object_get(resp->body, "message"));

	if (resp->status == 0) {
		snprintf(err, errlen, "%s: %s", what, resp->error);
		*rc = -EIO;
		return STEP_RETRY;
	}
	snprintf(err, errlen, "%s: HTTP %ld%s%s", what, resp->status, msg ? ": " : "",
		 msg ? msg : "");
	if (resp->status == 401 || resp->status == 403) {
		*rc = -EACCES;
		return resp->status == 401 ? STEP_RETRY : STEP_FAIL;
	}
	if (resp->status == 429 || resp->status >= 500) {
		*rc = -EIO;
		return STEP_RETRY;
	}
	*rc = -EPROTO;
	return STEP_FAIL;
}

/*
 * One request; STEP_DONE with the answer's body (caller frees) on 200/201.
 * 404 and 409 fail with *rc set to the status, for the caller to handle.
 */
static enum step_result request(struct agent_publisher *p, const char *method, const char *path,
				const json_t *body, const char *ctype, json_t **ret_body, int *rc,
				char *err, size_t errlen)
{
	struct response resp;
	enum step_result s;
	char what[TOPO_DNS_SUBDOMAIN_MAX + 48];

	if (http(p, method, path, body, ctype, &resp) < 0 && resp.error[0] == '\0') {
		*rc = -ENOMEM;
		return STEP_FAIL;
	}
	if (resp.status == 200 || resp.status == 201) {
		*ret_body = resp.body;
		return STEP_DONE;
	}
	snprintf(what, sizeof(what), "%s %s", method, path);
	s = classify(&resp, rc, err, errlen, what);
	if (resp.status == 404 || resp.status == 409) {
		*rc = (int)resp.status;
		s = STEP_FAIL;
	}
	json_decref(resp.body);
	return s;
}

/*
 * Labels of the Node on the server that the agent did not set (its owned
 * list does not name them): a provider's topology label, the kubelet's
 * hostname.  The agent leaves them as they are even where it computes the
 * same key (a board level that uses the provider's key).
 */
static json_t *foreign_of(const json_t *server_node, const json_t *owned)
{
	json_t *labels = pk_get(server_node, "metadata.labels"), *v, *out = json_object();
	const char *key;

	json_object_foreach(labels, key, v)
	{
		bool mine = false;
		size_t i;
		json_t *k;

		json_array_foreach(owned, i, k) mine =
		    mine || strcmp(json_string_value(k) ?: "", key) == 0;
		if (!mine)
			json_object_set_new(out, key, json_true());
	}
	return out;
}

/* The node without the foreign labels (in its labels and its owned list). */
static json_t *without_foreign(const json_t *node, json_t *foreign)
{
	json_t *copy = json_deep_copy(node), *labels, *ann, *owned, *k;
	const char *key;
	json_t *v;
	char *list = NULL;
	size_t len = 0, i;
	FILE *f;

	if (!copy || json_object_size(foreign) == 0)
		return copy;
	labels = pk_get(copy, "metadata.labels");
	json_object_foreach(foreign, key, v) json_object_del(labels, key);
	ann = pk_get(copy, "metadata.annotations");
	owned = split_keys(json_string_value(json_object_get(ann, TOPO_ANN_AGENT_OWNED)));
	f = open_memstream(&list, &len);
	json_array_foreach(owned, i, k) if (f && !json_object_get(foreign, json_string_value(k)))
	    fprintf(f, "%s%s", ftell(f) ? "," : "", json_string_value(k));
	if (f)
		fclose(f);
	if (list && json_is_object(ann))
		json_object_set_new(ann, TOPO_ANN_AGENT_OWNED, json_string(list));
	free(list);
	json_decref(owned);
	return copy;
}

/*
 * Learn the labels the agent owned from the node on the server; create the
 * node (status included) when it is missing.  *ret_created tells which.
 */
static enum step_result learn(struct agent_publisher *p, const json_t *node, const char *path,
			      bool *ret_created, int *rc, char *err, size_t errlen)
{
	json_t *body = NULL;
	enum step_result s = request(p, "GET", path, NULL, NULL, &body, rc, err, errlen);

	*ret_created = false;
	if (s == STEP_DONE) {
		p->owned = owned_of(body);
		json_decref(p->foreign);
		p->foreign = foreign_of(body, p->owned);
		json_decref(body);
		return STEP_DONE;
	}
	if (*rc != 404)
		return s;
	if (!p->cfg.register_node) {
		snprintf(err, errlen,
			 "node %s not found: the kubelet registers Nodes (podagent "
			 "creates it only with --register-node)",
			 json_string_value(pk_get(node, "metadata.name")));
		*rc = -ENOENT;
		return STEP_FAIL;
	}
	s = request(p, "POST", "/api/v1/nodes", node, "application/json", &body, rc, err, errlen);
	json_decref(body);
	if (s == STEP_DONE) {
		p->owned = owned_of(node);
		*ret_created = true;
		return STEP_DONE;
	}
	if (*rc == 409) { /* created by someone else meanwhile: patch it */
		p->owned = json_array();
		return STEP_DONE;
	}
	if (s == STEP_FAIL && *rc > 0)
		*rc = -EPROTO; /* POST answered 404 */
	return s;
}

json_t *agent_status_patch(const json_t *node, const json_t *server_node)
{
	static const char *const fields[] = {"capacity", "allocatable"};
	json_t *st = json_object(), *patch = json_object();

	for (size_t f = 0; f < 2; f++) {
		const json_t *ours = json_object_get(json_object_get(node, "status"), fields[f]);
		const json_t *theirs =
		    json_object_get(json_object_get(server_node, "status"), fields[f]);
		json_t *out = ours ? json_deep_copy(ours) : json_object();
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)theirs, key, v) if (!json_object_get(out, key))
		    json_object_set_new(out, key, json_null());
		json_object_set_new(st, fields[f], out);
	}
	json_object_set_new(patch, "status", st);
	return patch;
}

/* What a publish would write: the metadata patch and the node's status. */
static json_t *change_of(const json_t *patch, const json_t *node)
{
	json_t *st = json_object_get(node, "status");

	return json_pack("{s:O,s:O}", "meta", patch, "status", st ? st : json_null());
}

static int64_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

static enum step_result attempt_mine(struct agent_publisher *p, const json_t *node, int *rc,
				     char *err, size_t errlen);

static enum step_result attempt(struct agent_publisher *p, const json_t *node, int *rc, char *err,
				size_t errlen)
{
	json_t *mine;
	enum step_result s;

	if (!p->owned) { /* learn first: the foreign labels come with it */
		char path[TOPO_DNS_SUBDOMAIN_MAX + 32];
		bool created = false;

		snprintf(path, sizeof(path), "/api/v1/nodes/%s",
			 json_string_value(pk_get(node, "metadata.name")) ?: "");
		s = learn(p, node, path, &created, rc, err, errlen);
		if (s != STEP_DONE || created)
			return s;
	}
	mine = without_foreign(node, p->foreign);
	if (!mine) {
		*rc = -ENOMEM;
		return STEP_FAIL;
	}
	s = attempt_mine(p, mine, rc, err, errlen);
	json_decref(mine);
	return s;
}

static enum step_result attempt_mine(struct agent_publisher *p, const json_t *node, int *rc,
				     char *err, size_t errlen)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
	char path[TOPO_DNS_SUBDOMAIN_MAX + 32], spath[TOPO_DNS_SUBDOMAIN_MAX + 40];
	enum step_result s;
	json_t *patch, *change, *server = NULL;
	bool created = false;

	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name ? name : "");
	if (!p->owned) {
		s = learn(p, node, path, &created, rc, err, errlen);
		if (s != STEP_DONE || created)
			return s;
	}
	patch = agent_merge_patch(node, p->owned);
	change = change_of(patch, node);
	if (!created && p->last && json_equal(change, p->last) &&
	    mono_s() - p->last_sync < p->cfg.resync_s) {
		json_decref(patch);
		json_decref(change);
		return STEP_DONE; /* nothing changed: no write */
	}
	s = request(p, "PATCH", path, patch, "application/merge-patch+json", &server, rc, err,
		    errlen);
	json_decref(patch);
	if (s == STEP_FAIL && *rc == 404) { /* deleted meanwhile: learn (and create) again */
		json_decref(p->owned);
		json_decref(change);
		p->owned = NULL;
		return p->cfg.register_node ? STEP_RETRY
					    : learn(p, node, path, &created, rc, err, errlen);
	}
	if (s != STEP_DONE) {
		json_decref(change);
		return s;
	}
	json_decref(p->owned);
	p->owned = owned_of(node);
	if (p->cfg.status) {
		snprintf(spath, sizeof(spath), "%s/status", path);
		patch = agent_status_patch(node, server);
		json_decref(server);
		server = NULL;
		s = request(p, "PATCH", spath, patch, "application/merge-patch+json", &server, rc,
			    err, errlen);
		json_decref(patch);
		if (s == STEP_FAIL && (*rc == 404 || *rc == 409))
			*rc = -EPROTO;
	}
	json_decref(server);
	json_decref(p->last);
	p->last = s == STEP_DONE ? change : NULL;
	if (s != STEP_DONE)
		json_decref(change);
	p->last_sync = mono_s();
	return s;
}

void agent_publisher_set_cancel_fd(struct agent_publisher *p, int fd)
{
	if (p)
		p->cancel_fd = fd;
}

/* Wait ms before a retry; -ECANCELED as soon as the cancel descriptor is readable. */
static int backoff_wait(const struct agent_publisher *p, long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	if (p->cancel_fd >= 0) {
		struct pollfd pfd = {.fd = p->cancel_fd, .events = POLLIN};
		int n;

		while ((n = poll(&pfd, 1, (int)ms)) < 0 && errno == EINTR)
			;
		return n > 0 ? -ECANCELED : 0;
	}
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}

int agent_publish(struct agent_publisher *p, const json_t *node, char *err, size_t errlen)
{
	long delay;
	int rc = -EIO;

	if (!p || !node)
		return -EINVAL;
	delay = p->cfg.backoff_ms;
	for (int i = 0; i < p->cfg.retries; i++) {
		enum step_result s;

		if (i > 0) {
			if (backoff_wait(p, delay) < 0) {
				snprintf(err, errlen, "publishing cancelled");
				return -ECANCELED;
			}
			delay =
			    delay * 2 > p->cfg.backoff_max_ms ? p->cfg.backoff_max_ms : delay * 2;
		}
		s = attempt(p, node, &rc, err, errlen);
		if (s == STEP_DONE)
			return 0;
		if (s == STEP_FAIL)
			return rc < 0 ? rc : -EPROTO; /* rc may hold an HTTP status */
	}
	return rc;
}

/* ---- the node's Lease ------------------------------------------------------------ */

/* MicroTime, as the kubelet writes renewTime: 2026-01-01T10:00:00.123456Z */
static void micro_time(char buf[40])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, 40, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
}

int agent_lease_renew(struct agent_publisher *p, const char *node_name, char *err, size_t errlen)
{
	char path[TOPO_DNS_SUBDOMAIN_MAX + 128], now[40];
	json_t *spec, *body = NULL, *lease;
	enum step_result s;
	int rc = 0;

	if (!p || !node_name)
		return -EINVAL;
	snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases",
		 p->lease_ns);
	micro_time(now);
	spec = json_pack("{s:s,s:i,s:s}", "holderIdentity", node_name, "leaseDurationSeconds",
			 p->cfg.lease_duration_s, "renewTime", now);
	if (!spec)
		return -ENOMEM;
	lease = json_pack("{s:O}", "spec", spec);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", node_name);
	s = request(p, "PATCH", path, lease, "application/merge-patch+json", &body, &rc, err,
		    errlen);
	json_decref(lease);
	json_decref(body);
	body = NULL;
	if (s == STEP_FAIL && rc == 404) { /* the first renewal: create it */
		json_object_set_new(spec, "acquireTime", json_string(now));
		lease = json_pack("{s:s,s:s,s:{s:s,s:s},s:O}", "apiVersion",
				  "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
				  node_name, "namespace", p->lease_ns, "spec", spec);
		path[strlen(path) - strlen(node_name) - 1] = '\0';
		s = request(p, "POST", path, lease, "application/json", &body, &rc, err, errlen);
		json_decref(lease);
		json_decref(body);
		if (s == STEP_FAIL && rc == 409)
			s = STEP_DONE; /* created meanwhile: the next renewal patches it */
	}
	json_decref(spec);
	if (s == STEP_DONE)
		return 0;
	return rc < 0 ? rc : -EPROTO;
}

/* ---- lookups for the host index ------------------------------------------------------ */

/* GET a Node (one attempt); NULL when missing or unreachable. */
static json_t *get_node(struct agent_publisher *p, const char *node)
{
	char path[TOPO_DNS_SUBDOMAIN_MAX + 32], err[512];
	json_t *body = NULL;
	int rc = 0;

	if (!node || !topo_dns_subdomain_valid(node))
		return NULL;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", node);
	if (request(p, "GET", path, NULL, NULL, &body, &rc, err, sizeof(err)) != STEP_DONE)
		return NULL;
	return body;
}

const char *agent_publisher_node_label(void *publisher, const char *node, const char *key)
{
	struct agent_publisher *p = publisher;

	if (!p || !key)
		return NULL;
	if (!p->own_labels || mono_s() - p->own_read >= p->cfg.resync_s) {
		json_t *n = get_node(p, node);

		json_decref(p->own_labels);
		p->own_labels = n ? json_incref(pk_get(n, "metadata.labels")) : NULL;
		p->own_read = mono_s();
		json_decref(n);
	}
	return json_string_value(json_object_get(p->own_labels, key));
}

int agent_publisher_peer_index(void *publisher, const char *node, int64_t *ret_index)
{
	struct agent_publisher *p = publisher;
	json_t *n, *report, *idx;
	const char *text;

	if (!p || !node || !ret_index)
		return -EINVAL;
	if (!p->peers && !(p->peers = json_object()))
		return -ENOMEM;
	idx = json_object_get(p->peers, node);
	if (json_is_integer(idx)) { /* a host's index does not change */
		*ret_index = json_integer_value(idx);
		return 0;
	}
	/* a peer that did not know its index is asked again only after resync_s */
	if (json_is_real(idx) && mono_s() - (int64_t)json_real_value(idx) < p->cfg.resync_s)
		return -ENOENT;
	n = get_node(p, node);
	text =
	    json_string_value(json_object_get(pk_get(n, "metadata.annotations"), TOPO_ANN_LINKS));
	report = text ? json_loads(text, 0, NULL) : NULL;
	idx = json_object_get(report, "hostIndex");
	if (json_is_integer(idx) && json_integer_value(idx) >= 0)
		json_object_set(p->peers, node, idx);
	else
		json_object_set_new(p->peers, node, json_real((double)mono_s()));
	json_decref(report);
	json_decref(n);
	idx = json_object_get(p->peers, node);
	if (!json_is_integer(idx))
		return -ENOENT;
	*ret_index = json_integer_value(idx);
	return 0;
}
