/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch.c — watch streams: newline-delimited {"type", "object"} events.
 *
 * A watch starts either at a resourceVersion (events after it are replayed
 * from the store's ring) or, without one, with an ADDED event per current
 * object followed by everything after the store's resourceVersion when the
 * watch began (w->rv).  Nothing is produced ahead of the reader: the initial
 * list is read a page at a time as the client takes it, skipping objects
 * newer than w->rv (their events follow from the ring), and events are pulled
 * from pk_store_events_since() only when the buffer is empty, at most
 * PK_SERVER_WATCH_BUFFER bytes (plus one event) at a time.  All watches
 * together buffer at most PK_SERVER_WATCH_MEMORY: over it, a watch produces
 * nothing until others drain (its stream parks and is tried again).  A client
 * that stops reading therefore costs one bounded buffer, never a copy of the
 * store; stream.c closes it when it stalls, and one that falls behind the ring
 * gets an ERROR event carrying a 410 Expired Status: either way it re-lists,
 * as with kube-apiserver.  The initial list is read in pages of up to
 * WATCH_LIST_PAGE objects (WATCH_LIST_PAGE_BYTES of JSON), each one range
 * scan of the store's key order, so a watch costs about what a list of the
 * same objects costs, whatever else the store holds.  Reading waits in pk_store_wait() only when
 * asked to (stream.c never asks).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/server/server-internal.h"

#define WATCH_BATCH 256
/* The initial list is read in pages of many objects (one range scan each),
 * bounded by bytes so that what a watch holds parsed stays small. */
#define WATCH_LIST_PAGE 500
#define WATCH_LIST_PAGE_BYTES (64 * 1024)
#define WATCH_BUFFER_KEEP (64 * 1024) /* a larger buffer is freed once drained */

struct pk_watch {
	struct pk_server *srv;
	struct watch_spec spec;
	uint64_t rv;
	time_t deadline;
	char *buf;
	size_t len, off, cap;
	bool ended;
	bool header_sent;
	/* The initial list, while it lasts: the current page and the next token. */
	bool listing, started;
	json_t *page;
	size_t page_idx;
	char *cont;
	size_t charged; /* bytes of buf counted in srv->watch_bytes */
};

/* Count the bytes buf holds beyond what is charged already (after appending). */
static void charge(struct pk_watch *w)
{
	size_t held = w->len - w->off;
	if (held > w->charged)
		atomic_fetch_add(&w->srv->watch_bytes, held - w->charged);
	else
		atomic_fetch_sub(&w->srv->watch_bytes, w->charged - held);
	w->charged = held;
}

static bool over_budget(const struct pk_watch *w)
{
	return atomic_load(&w->srv->watch_bytes) >= PK_SERVER_WATCH_MEMORY;
}

static int reserve(struct pk_watch *w, size_t n)
{
	if (w->len + n <= w->cap)
		return 0;
	size_t cap = w->cap * 2;
	if (cap < w->len + n)
		cap = w->len + n;
	char *nb = realloc(w->buf, cap);
	if (!nb)
		return -ENOMEM;
	w->buf = nb;
	w->cap = cap;
	return 0;
}

/* An event line from the store's ready-made JSON text, without re-serialising. */
static int append_text(struct pk_watch *w, const char *type, const char *json, size_t len)
{
	static const char head[] = "{\"type\":\"", mid[] = "\",\"object\":";
	size_t tl = strlen(type);
	if (reserve(w, sizeof(head) + tl + sizeof(mid) + len + 3) < 0)
		return -ENOMEM;
	char *p = w->buf + w->len;
	memcpy(p, head, sizeof(head) - 1);
	p += sizeof(head) - 1;
	memcpy(p, type, tl);
	p += tl;
	memcpy(p, mid, sizeof(mid) - 1);
	p += sizeof(mid) - 1;
	memcpy(p, json, len);
	p += len;
	*p++ = '}';
	*p++ = '\n';
	w->len = (size_t)(p - w->buf);
	return 0;
}

/* jansson writes the event straight into the watch's buffer (no second copy). */
static int dump_into(const char *data, size_t n, void *arg)
{
	struct pk_watch *w = arg;
	if (reserve(w, n) < 0)
		return -1;
	memcpy(w->buf + w->len, data, n);
	w->len += n;
	return 0;
}

static int append(struct pk_watch *w, const char *type, json_t *obj)
{
	json_t *payload = obj;
	if (w->spec.table && strcmp(type, "ERROR") != 0) {
		json_t *items = json_pack("[O]", obj);
		payload = pk_srv_table_of(w->spec.type, items, !w->header_sent, false);
		w->header_sent = true;
		json_decref(items);
	} else if (strcmp(type, "ERROR") != 0) {
		payload = pk_srv_view(w->spec.type, obj); /* the shape watched (versions.c) */
	} else {
		json_incref(obj);
	}
	json_t *ev = json_pack("{s:s,s:o}", "type", type, "object", payload);
	size_t start = w->len;
	int rc = ev && json_dump_callback(ev, dump_into, w, JSON_COMPACT) == 0 ? 0 : -ENOMEM;
	json_decref(ev);
	if (rc == 0)
		rc = dump_into("\n", 1, w) == 0 ? 0 : -ENOMEM;
	if (rc < 0)
		w->len = start; /* no half event */
	return rc;
}

static bool matches(const struct pk_watch *w, const json_t *obj)
{
	if (w->spec.ns && w->spec.type->namespaced) {
		const char *ns = json_string_value(
		    json_object_get(json_object_get(obj, "metadata"), "namespace"));
		if (!ns || strcmp(ns, w->spec.ns) != 0)
			return false;
	}
	return pk_selector_match_labels(w->spec.labels, obj) &&
	       pk_selector_match_fields(w->spec.fields, obj);
}

static int on_event(const struct pk_store_event *ev, void *arg)
{
	struct pk_watch *w = arg;
	if (!ev->kind || strcmp(ev->kind->kind, w->spec.type->kind) != 0 || !matches(w, ev->object))
		return 0;
	int rc;
	if (!w->spec.table && ev->object_json && !pk_srv_needs_view(w->spec.type, ev->object))
		rc = append_text(w, pk_event_type_to_string(ev->type), ev->object_json,
				 ev->object_json_len);
	else
		rc = append(w, pk_event_type_to_string(ev->type), ev->object);
	/* A full buffer stops the batch here; the rest waits for the reader. */
	return rc < 0 ? rc : w->len >= PK_SERVER_WATCH_BUFFER;
}

void pk_watch_free(struct pk_watch *w)
{
	if (!w)
		return;
	atomic_fetch_sub(&w->srv->watchers, 1);
	atomic_fetch_sub(&w->srv->watch_bytes, w->charged);
	pk_selector_free(w->spec.labels);
	pk_selector_free(w->spec.fields);
	free((char *)w->spec.ns);
	json_decref(w->page);
	free(w->cont);
	free(w->buf);
	free(w);
}

static int list_page(struct pk_watch *w)
{
	struct pk_store_list_opts o = {.labels = w->spec.labels,
				       .fields = w->spec.fields,
				       .limit = WATCH_LIST_PAGE,
				       .limit_bytes = WATCH_LIST_PAGE_BYTES,
				       .continue_token = w->cont};
	json_t *items = NULL;
	char *next = NULL;
	int rc = pk_store_list(w->srv->store, w->spec.type, w->spec.ns, &o, &items, NULL, &next);
	if (rc < 0)
		return rc;
	free(w->cont);
	w->cont = next;
	json_decref(w->page);
	w->page = items;
	w->page_idx = 0;
	return 0;
}

static uint64_t object_rv(const json_t *obj)
{
	const char *s =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	return s ? strtoull(s, NULL, 10) : 0;
}

/*
 * Move initial-list objects into the buffer until it holds want bytes (at
 * most PK_SERVER_WATCH_BUFFER) at the end of a page, or the list ends.  A
 * page is always used up before returning, so nothing parsed stays between
 * reads; one call costs about one page, so an event thread serving many
 * watches turns to its other connections (a /healthz among them) between
 * pages instead of after whole lists.
 */
static int fill_initial(struct pk_watch *w, size_t want)
{
	if (want > PK_SERVER_WATCH_BUFFER)
		want = PK_SERVER_WATCH_BUFFER;
	while (w->listing && (w->len < want || w->page)) {
		if (w->page_idx < json_array_size(w->page)) {
			json_t *obj = json_array_get(w->page, w->page_idx++);
			/* changed after the watch began: its event follows from the ring */
			int rc = object_rv(obj) <= w->rv ? append(w, "ADDED", obj) : 0;
			if (w->page_idx == json_array_size(w->page)) {
				json_decref(w->page); /* nothing parsed stays between reads */
				w->page = NULL;
				w->page_idx = 0;
			}
			if (rc < 0)
				return rc;
			continue;
		}
		json_decref(w->page);
		w->page = NULL;
		w->page_idx = 0;
		if (!w->cont && w->started) {
			w->listing = false;
			break;
		}
		w->started = true;
		int rc = list_page(w);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int pk_srv_watch_new(struct pk_server *srv, struct watch_spec *spec, struct pk_watch **ret)
{
	struct pk_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	atomic_fetch_add(&srv->watchers, 1);
	w->srv = srv;
	w->spec = *spec;
	w->spec.ns = spec->ns ? strdup(spec->ns) : NULL;
	spec->labels = spec->fields = NULL;
	w->deadline = time(NULL) + spec->timeout_s;
	w->rv = spec->since;
	/* Every object at or below this version is listed; newer ones come as events. */
	if (!spec->since) {
		w->listing = true;
		w->rv = pk_store_rv(srv->store);
	}
	*ret = w;
	return 0;
}

static void end_gone(struct pk_watch *w)
{
	char msg[128];
	snprintf(msg, sizeof(msg), "too old resource version: %" PRIu64, w->rv);
	json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion",
			       "v1", "metadata", "status", "Failure", "message", msg, "reason",
			       "Expired", "code", 410);
	append(w, "ERROR", st);
	json_decref(st);
	w->ended = true;
}

ssize_t pk_watch_heartbeat(struct pk_watch *w, char *buf, size_t max)
{
	char line[512];
	int n;
	if (w->spec.bookmarks && !w->spec.table) {
		char av[96];
		const struct pk_type *t = w->spec.type;
		snprintf(av, sizeof(av), "%s%s%s", t->group, *t->group ? "/" : "", t->version);
		n = snprintf(line, sizeof(line),
			     "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":"
			     "\"%s\",\"metadata\":{\"resourceVersion\":\"%" PRIu64 "\"}}}\n",
			     t->kind, av, w->rv);
	} else {
		n = snprintf(line, sizeof(line), "\n");
	}
	if (n < 0 || (size_t)n > max)
		return 0;
	memcpy(buf, line, (size_t)n);
	return n;
}

ssize_t pk_watch_read(struct pk_watch *w, char *buf, size_t max, int wait_ms)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (w->off < w->len) {
			size_t n = w->len - w->off < max ? w->len - w->off : max;
			memcpy(buf, w->buf + w->off, n);
			w->off += n;
			atomic_fetch_sub(&w->srv->watch_bytes, n);
			w->charged -= n;
			if (w->off == w->len) {
				w->off = w->len = 0;
				if (w->cap > WATCH_BUFFER_KEEP) {
					free(w->buf);
					w->buf = NULL;
					w->cap = 0;
				}
			}
			return (ssize_t)n;
		}
		if (w->ended || atomic_load(&w->srv->stopping) || time(NULL) >= w->deadline)
			return -EPIPE;
		/* Over the shared budget nothing new is produced now (the caller retries). */
		if (over_budget(w) && !w->ended)
			return 0;
		if (w->listing) {
			int rc = fill_initial(w, max);
			charge(w);
			if (rc < 0)
				return rc;
			continue;
		}
		uint64_t last = w->rv;
		int rc =
		    pk_store_events_since(w->srv->store, w->rv, WATCH_BATCH, on_event, w, &last);
		charge(w);
		w->rv = last;
		if (rc == -PK_STORE_EGONE) {
			end_gone(w);
			charge(w);
			continue;
		}
		if (rc < 0)
			return rc;
		if (w->len)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent =
		    (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (spent >= wait_ms)
			return 0;
		long slice = wait_ms - spent < 250 ? wait_ms - spent : 250;
		if (pk_store_wait(w->srv->store, w->rv, (int)slice) == -ECANCELED)
			w->ended = true;
	}
}
