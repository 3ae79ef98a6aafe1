/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit.c — a request's log line and its audit event.
 *
 * Every request is logged at verbosity 2 as one line of key=value fields:
 * who (user), what (verb, resource, namespace, name), the answer (code) and
 * how long it took.  With --audit-log-path every write (create, update,
 * patch, delete, deletecollection) is also written as one audit.k8s.io/v1
 * Event per line, at level Metadata and stage ResponseComplete, as
 * kube-apiserver writes them with a Metadata policy: readers of its audit
 * logs read ours.  Past --audit-log-maxsize megabytes the file is rotated:
 * PATH becomes PATH.1, PATH.1 becomes PATH.2, ..., and the oldest beyond
 * --audit-log-maxbackup goes.  A write that fails is counted
 * (podkernel_audit_event_errors_total) and logged once; the request is served
 * all the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/lib/log.h"
#include "kernel/server/server-internal.h"

struct pk_srv_audit {
	pthread_mutex_t lock;
	char *path;
	int fd;
	uint64_t size, max_size, events, errors;
	unsigned max_backups;
	bool error_logged;
};

static int audit_reopen(struct pk_srv_audit *a)
{
	struct stat st;

	if (a->fd >= 0)
		close(a->fd);
	a->fd = open(a->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (a->fd < 0)
		return -errno;
	a->size = fstat(a->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

int pk_srv_audit_open(struct pk_server *srv, const struct pk_server_config *cfg, char *err,
		      size_t errlen)
{
	struct pk_srv_audit *a;
	int r;

	if (!cfg->audit.path || !*cfg->audit.path)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a || !(a->path = strdup(cfg->audit.path))) {
		free(a);
		return -ENOMEM;
	}
	a->fd = -1;
	a->max_size = (uint64_t)cfg->audit.max_size_mb << 20;
	a->max_backups = cfg->audit.max_backups ? cfg->audit.max_backups : PK_SERVER_AUDIT_BACKUPS;
	pthread_mutex_init(&a->lock, NULL);
	r = audit_reopen(a);
	if (r < 0) {
		snprintf(err, errlen, "--audit-log-path %s: %s", a->path, strerror(-r));
		pthread_mutex_destroy(&a->lock);
		free(a->path);
		free(a);
		return -EINVAL;
	}
	srv->audit = a;
	return 0;
}

void pk_srv_audit_close(struct pk_server *srv)
{
	struct pk_srv_audit *a = srv->audit;

	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	pthread_mutex_destroy(&a->lock);
	free(a->path);
	free(a);
	srv->audit = NULL;
}

/* PATH.N-1 -> PATH.N down to PATH -> PATH.1, the oldest dropped; then a new PATH. */
static int audit_rotate(struct pk_srv_audit *a)
{
	size_t n = strlen(a->path) + 16;
	char *from = malloc(n), *to = malloc(n);
	int r = -ENOMEM;

	if (from && to) {
		snprintf(to, n, "%s.%u", a->path, a->max_backups);
		unlink(to);
		for (unsigned i = a->max_backups; i > 1; i--) {
			snprintf(from, n, "%s.%u", a->path, i - 1);
			snprintf(to, n, "%s.%u", a->path, i);
			rename(from, to);
		}
		snprintf(to, n, "%s.1", a->path);
		r = rename(a->path, to) < 0 ? -errno : audit_reopen(a);
	}
	free(from);
	free(to);
	return r;
}

static bool is_write(const char *verb)
{
	static const char *const writes[] = {"create", "update", "patch", "delete",
					     "deletecollection"};

	for (size_t i = 0; verb && i < sizeof(writes) / sizeof(writes[0]); i++)
		if (strcmp(verb, writes[i]) == 0)
			return true;
	return false;
}

static json_t *audit_event(const struct pk_request *req, const struct pk_srv_note *note, int code,
			   const struct timespec *received, const struct timespec *done)
{
	char t0[40], t1[40], id[40];
	json_t *groups = json_array(), *ref;

	pk_log_timestamp(received, t0, sizeof(t0));
	pk_log_timestamp(done, t1, sizeof(t1));
	/* an ID unique enough to follow one request: its time and a counter */
	static atomic_uint_least64_t seq;
	snprintf(id, sizeof(id), "%08lx-%04lx-4%03lx-8%03lx-%012" PRIx64,
		 (unsigned long)(received->tv_sec & 0xffffffff),
		 (unsigned long)((received->tv_nsec >> 16) & 0xffff),
		 (unsigned long)(getpid() & 0xfff), (unsigned long)(received->tv_nsec & 0xfff),
		 (uint64_t)atomic_fetch_add(&seq, 1));
	if (groups && note->groups)
		json_array_extend(groups, note->groups);
	ref = json_pack("{s:s,s:s,s:s}", "resource", note->resource, "apiGroup",
			note->group ? note->group : "", "apiVersion",
			note->version ? note->version : "");
	if (ref && *note->ns)
		json_object_set_new(ref, "namespace", json_string(note->ns));
	if (ref && *note->name)
		json_object_set_new(ref, "name", json_string(note->name));
	if (ref && *note->subresource)
		json_object_set_new(ref, "subresource", json_string(note->subresource));
	json_t *ev =
	    json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:{s:s,s:o},s:o,s:{s:{},s:i},s:s,s:s}", "kind",
		      "Event", "apiVersion", "audit.k8s.io/v1", "level", "Metadata", "auditID", id,
		      "stage", "ResponseComplete", "requestURI", req->path, "verb", note->verb,
		      "user", "username", note->user, "groups", groups ? groups : json_array(),
		      "objectRef", ref ? ref : json_object(), "responseStatus", "metadata", "code",
		      code, "requestReceivedTimestamp", t0, "stageTimestamp", t1);
	if (ev && *note->uid)
		json_object_set_new(json_object_get(ev, "user"), "uid", json_string(note->uid));
	if (ev && req->remote_addr)
		json_object_set_new(ev, "sourceIPs", json_pack("[s]", req->remote_addr));
	if (ev && req->user_agent)
		json_object_set_new(ev, "userAgent", json_string(req->user_agent));
	return ev;
}

static void audit_write(struct pk_server *srv, const char *line, size_t len)
{
	struct pk_srv_audit *a = srv->audit;
	int r = 0;

	pthread_mutex_lock(&a->lock);
	if (a->max_size && a->size > 0 && a->size + len > a->max_size) {
		struct stat st;

		/* truncated by someone else meanwhile (logrotate's copytruncate): not full */
		if (fstat(a->fd, &st) == 0 && (uint64_t)st.st_size < a->size)
			a->size = (uint64_t)st.st_size;
		if (a->size > 0 && a->size + len > a->max_size)
			r = audit_rotate(a);
	}
	if (r == 0 && a->fd >= 0 && write(a->fd, line, len) == (ssize_t)len) {
		a->size += len;
		a->events++;
	} else {
		if (r == 0)
			r = a->fd < 0 ? -EBADF : -errno;
		a->errors++;
		if (!a->error_logged)
			pk_srv_log(srv, 0, "audit log %s: %s (events are lost until it works)",
				   a->path, strerror(-r));
		a->error_logged = true;
	}
	pthread_mutex_unlock(&a->lock);
}

static void audit_request(struct pk_server *srv, const struct pk_request *req,
			  const struct pk_srv_note *note, int code, const struct timespec *received)
{
	struct timespec done;
	json_t *ev;
	char *line;

	clock_gettime(CLOCK_REALTIME, &done);
	ev = audit_event(req, note, code, received, &done);
	line = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	json_decref(ev);
	if (!line) {
		pthread_mutex_lock(&srv->audit->lock);
		srv->audit->errors++;
		pthread_mutex_unlock(&srv->audit->lock);
		return;
	}
	size_t len = strlen(line);

	line[len] = '\n'; /* json_dumps' NUL: the line ends in a newline instead */
	audit_write(srv, line, len + 1);
	free(line);
}

void pk_srv_audit_metrics(struct pk_server *srv, FILE *f)
{
	uint64_t events = 0, errors = 0;

	if (srv->audit) {
		pthread_mutex_lock(&srv->audit->lock);
		events = srv->audit->events;
		errors = srv->audit->errors;
		pthread_mutex_unlock(&srv->audit->lock);
	}
	fprintf(
	    f,
	    "# HELP podkernel_audit_events_total Audit events written (--audit-log-path).\n"
	    "# TYPE podkernel_audit_events_total counter\n"
	    "podkernel_audit_events_total %" PRIu64 "\n"
	    "# HELP podkernel_audit_event_errors_total Audit events that could not be written.\n"
	    "# TYPE podkernel_audit_event_errors_total counter\n"
	    "podkernel_audit_event_errors_total %" PRIu64 "\n",
	    events, errors);
}

void pk_srv_request_done(struct pk_server *srv, const struct pk_request *req,
			 const struct pk_srv_note *note, int code, double seconds,
			 const struct timespec *received)
{
	char user[300], ns[300], name[300], path[600];

	if (srv->audit && is_write(note->verb) && *note->resource)
		audit_request(srv, req, note, code, received);
	if (!srv->log || srv->verbosity < 2)
		return;
	pk_srv_log(srv, 2,
		   "request user=%s verb=%s resource=%s%s%s namespace=%s name=%s code=%d "
		   "duration_ms=%.1f method=%s path=%s",
		   pk_log_quote(note->user, user, sizeof(user)), note->verb,
		   *note->resource ? note->resource : "-", *note->subresource ? "/" : "",
		   note->subresource, pk_log_quote(*note->ns ? note->ns : "-", ns, sizeof(ns)),
		   pk_log_quote(*note->name ? note->name : "-", name, sizeof(name)), code,
		   seconds * 1000, req->method, pk_log_quote(req->path, path, sizeof(path)));
}
