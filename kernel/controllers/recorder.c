/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recorder.c — core/v1 Events in the appliance's own store (standalone), so
 * `kubectl describe pod` and `kubectl get events` explain a pending gang, a
 * binding and a preemption as kube-scheduler's Events do in a cluster.
 * (Attach mode posts its Events to the cluster: kernel/attach/recorder.c.)
 *
 * After a round's batch commits, pk_writer_events() says which Events its
 * writes make (Scheduled, FailedScheduling, Preempted), the correlator rule
 * pk_event_allowed() drops a note repeated about the same object and
 * reason within PK_EVENT_REPEAT_S, and the rest are created in one
 * transaction.  Events expire as kube-apiserver's --event-ttl makes them
 * (one hour): every CTL_EVENT_SWEEP_MS (or TTL, if shorter) the loop deletes, in one transaction,
 * the Events (anyone's) last written longer ago than that, found by the
 * store's expiry index.  Events are best
 * effort: a failed write is counted, never retried, and never holds a
 * binding back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/controllers/controllers-internal.h"

#define CTL_EVENT_COMPONENT "podkernel"

struct ctl_recorder {
	struct pk_event_limiter seen; /* the correlator's memory (pk_event_allowed) */
	json_t *pending;	      /* Events to create */
	uint64_t seq;
	int64_t next_sweep_ms;
};

int ctl_recorder_new(struct ctl_recorder **ret)
{
	struct ctl_recorder *rec = calloc(1, sizeof(*rec));

	if (!rec || !(rec->pending = json_array())) {
		ctl_recorder_free(rec);
		return -ENOMEM;
	}
	*ret = rec;
	return 0;
}

void ctl_recorder_free(struct ctl_recorder *rec)
{
	if (!rec)
		return;
	pk_event_limiter_free(&rec->seen);
	json_decref(rec->pending);
	free(rec);
}

static json_t *event_new(struct ctl_recorder *rec, const struct pk_write_item *it, const char *uid,
			 const char *type, const char *reason, const char *action, const char *note)
{
	const struct pk_type *t = pk_type_of(it->kind);
	const char *ns = it->ns && *it->ns ? it->ns : "default";
	char name[256], ts[32];
	int64_t now = (int64_t)time(NULL);
	json_t *ev, *ref;

	/* unique like client-go's: the object's name and a time-based suffix */
	snprintf(name, sizeof(name), "%.230s.%llx%04llx", it->name, (unsigned long long)now,
		 (unsigned long long)(rec->seq++ & 0xffff));
	pk_time_format(now, ts);
	ref = json_pack("{s:s,s:s,s:s,s:s}", "kind", t ? t->kind : "", "apiVersion",
			t ? t->api_version : "v1", "namespace", ns, "name", it->name);
	if (ref && uid && *uid)
		json_object_set_new(ref, "uid", json_string(uid));
	ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:o,s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i,s:s,s:s,s:s}",
		       "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace",
		       ns, "involvedObject", ref, "reason", reason, "message", note, "type", type,
		       "source", "component", CTL_EVENT_COMPONENT, "firstTimestamp", ts,
		       "lastTimestamp", ts, "count", 1, "reportingComponent", CTL_EVENT_COMPONENT,
		       "reportingInstance", "podkerneld", "action", action);
	return ev;
}

static void note_one(void *arg, const struct pk_write_item *it, const json_t *obj, const char *type,
		     const char *reason, const char *action, const char *note)
{
	struct pk_ctl *ctl = arg;
	struct ctl_recorder *rec = ctl->recorder;
	char key[768], shortnote[1024];
	json_t *ev;

	/* an Event's message is limited to 1 kB, as events.k8s.io/v1's note */
	snprintf(shortnote, sizeof(shortnote), "%s", note ? note : "");
	snprintf(key, sizeof(key), "%s/%s/%s/%s", pk_kind_to_string(it->kind), it->ns ?: "",
		 it->name, reason);
	if (!pk_event_allowed(&rec->seen, key, shortnote, (int64_t)time(NULL))) {
		CTL_COUNT(ctl, kevents_limited);
		return;
	}
	ev = event_new(rec, it, obj ? pk_get_string(obj, "metadata.uid") : NULL, type, reason,
		       action, shortnote);
	if (!ev || json_array_append_new(rec->pending, ev) < 0)
		CTL_COUNT(ctl, kevents_failed);
}

void ctl_record_warning(struct pk_ctl *ctl, const char *kind, const json_t *obj, const char *reason,
			const char *note)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	struct pk_write_item it = {.kind = t ? t->pk : PK_KIND_UNKNOWN,
				   .ns = t && t->namespaced ? (char *)pk_namespace(obj) : NULL,
				   .name = (char *)pk_name(obj)};

	if (ctl->recorder && it.name)
		note_one(ctl, &it, obj, "Warning", reason, reason, note);
}

/* The Events of a committed batch, created in one transaction. */
void ctl_record_batch(struct pk_ctl *ctl, const struct pk_write_batch *batch,
		      const struct pk_write_result *results)
{
	json_t **objects;

	if (!ctl->recorder || !ctl->store || !batch->n)
		return;
	objects = calloc(batch->n, sizeof(*objects));
	if (!objects)
		return;
	for (size_t i = 0; i < batch->n; i++)
		objects[i] = results[i].object;
	pk_writer_events(batch, results, objects, note_one, ctl);
	free(objects);
	ctl_record_flush(ctl);
}

void ctl_record_flush(struct pk_ctl *ctl)
{
	struct ctl_recorder *rec = ctl->recorder;
	json_t **objects;
	size_t n;
	int *rcs;

	if (!rec || !ctl->store)
		return;
	n = json_array_size(rec->pending);
	if (!n)
		return;
	objects = calloc(n, sizeof(*objects));
	rcs = calloc(n, sizeof(*rcs));
	if (objects && rcs) {
		for (size_t i = 0; i < n; i++)
			objects[i] = json_array_get(rec->pending, i);
		pk_store_create_batch(ctl->store, objects, n, rcs);
		for (size_t i = 0; i < n; i++) {
			if (rcs[i] == 0)
				CTL_COUNT(ctl, kevents_written);
			else
				CTL_COUNT(ctl, kevents_failed);
		}
	}
	free(objects);
	free(rcs);
	json_array_clear(rec->pending);
}

static int delete_it(json_t *obj, void *arg)
{
	(void)obj;
	(void)arg;
	return 0;
}

/* Delete the Events named in keys ({namespace, name}) in one transaction. */
static void delete_events(struct pk_ctl *ctl, json_t *keys)
{
	size_t i, n = json_array_size(keys);
	struct pk_store_edit *e = calloc(n ? n : 1, sizeof(*e));
	json_t *k;

	if (!e)
		return;
	json_array_foreach(keys, i, k) e[i] = (struct pk_store_edit){
	    .kind = "Event",
	    .ns = pk_get_string(k, "namespace"),
	    .name = pk_get_string(k, "name"),
	    .apply = delete_it,
	    .delete_after = true,
	};
	if (n && pk_store_edit_batch(ctl->store, e, n) == 0)
		for (i = 0; i < n; i++)
			if (e[i].rc == 0)
				CTL_COUNT(ctl, kevents_expired);
	for (i = 0; i < n; i++)
		json_decref(e[i].object);
	free(e);
}

/*
 * Events last written before now - ttl, deleted in one transaction.  The
 * store's expiry index names them (pk_store_expired_events()): a sweep reads
 * what expired, not every Event.  At most CTL_EVENT_SWEEP_MAX a sweep; a
 * full one comes back at the next round.
 */
void ctl_record_sweep(struct pk_ctl *ctl, int64_t now_ms)
{
	struct ctl_recorder *rec = ctl->recorder;
	int64_t ttl_s = ctl->cfg.event_ttl_ms > 0 ? ctl->cfg.event_ttl_ms / 1000
						  : PK_APPLIANCE_EVENT_TTL_MS / 1000;
	json_t *keys = NULL;

	if (!rec || !ctl->store || now_ms < rec->next_sweep_ms)
		return;
	rec->next_sweep_ms =
	    now_ms + (ttl_s * 1000 < CTL_EVENT_SWEEP_MS ? ttl_s * 1000 : CTL_EVENT_SWEEP_MS);
	if (pk_store_expired_events(ctl->store, (int64_t)time(NULL) - ttl_s, CTL_EVENT_SWEEP_MAX,
				    &keys) < 0)
		return;
	if (json_array_size(keys) == CTL_EVENT_SWEEP_MAX)
		rec->next_sweep_ms = now_ms;
	delete_events(ctl, keys);
	json_decref(keys);
}
