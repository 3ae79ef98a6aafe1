/* SPDX-License-Identifier: Apache-2.0 */
/*
 * write_backoff.c — objects whose write the loop cannot make wait before the
 * next try.
 *
 * A write that fails for a reason other than a lost precondition (the store
 * refused the object: invalid, too large, a rule; or the commit failed) would
 * fail again at once: handing the object straight back to the scheduler made
 * the loop bind, fail and log in a tight circle, and everything else waited.
 * Such an object is taken out of the scheduler instead and given back after a
 * delay that doubles with each failure of the same object (AP_WRITE_BACKOFF_*),
 * as kube-scheduler's per-pod backoff does.  An object written, deleted or
 * changed by someone else leaves the table: a change is fed to the scheduler
 * by the change stream as usual, and the next failure starts from the
 * initial delay.  The first failure of an object is logged at level 1, the
 * repeats at level 2, so a stuck object costs a log line per retry, not per
 * cycle.
 *
 * The table maps "Kind/ns/name" to {until, delay, kind, ns, name}; until is 0
 * while the object is back in the scheduler waiting for its next write.
 */
#include <errno.h>
#include <string.h>

#include "kernel/appliance/appliance-internal.h"

/* The gauge of waiting objects, read by the metrics page. */
static void publish(struct pk_appliance *app)
{
	const char *key;
	json_t *e;
	uint64_t n = 0;

	json_object_foreach(app->write_backoff, key, e) n +=
	    json_integer_value(json_object_get(e, "until")) > 0;
	pthread_mutex_lock(&app->m.lock);
	app->m.write_backoff_objects = n;
	pthread_mutex_unlock(&app->m.lock);
}

static char *key_of(const char *kind, const char *ns, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%s", kind, ns ? ns : "", name);
	return buf;
}

int ap_backoff_failed(struct pk_appliance *app, const char *kind, const char *ns, const char *name,
		      int error)
{
	char key[600];
	json_t *e = json_object_get(app->write_backoff, key_of(kind, ns, name, key, sizeof(key)));
	int64_t delay =
	    e ? json_integer_value(json_object_get(e, "delay")) * 2 : AP_WRITE_BACKOFF_INITIAL_MS;

	if (delay > AP_WRITE_BACKOFF_MAX_MS)
		delay = AP_WRITE_BACKOFF_MAX_MS;
	ap_log(app, e ? 2 : 1, "writing %s %s/%s failed: %s; next try in %lld ms", kind,
	       ns ? ns : "", name, strerror(-error), (long long)delay);
	e = json_pack("{s:I,s:I,s:s,s:s,s:s}", "until", (json_int_t)(ap_now_ms() + delay), "delay",
		      (json_int_t)delay, "kind", kind, "ns", ns ? ns : "", "name", name);
	if (!e || json_object_set_new(app->write_backoff, key, e) < 0)
		return -ENOMEM;
	AP_COUNT(app, write_backoffs);
	publish(app);
	pk_sched_remove(app->sched, pk_kind_from_string(kind), ns, name);
	return 0;
}

void ap_backoff_clear(struct pk_appliance *app, const char *kind, const char *ns, const char *name)
{
	char key[600];

	if (json_object_size(app->write_backoff) > 0 &&
	    json_object_del(app->write_backoff, key_of(kind, ns, name, key, sizeof(key))) == 0)
		publish(app);
}

int64_t ap_backoff_release(struct pk_appliance *app, int64_t now)
{
	const char *key;
	json_t *e;
	int64_t next = 0;
	bool released = false;

	json_object_foreach(app->write_backoff, key, e)
	{
		int64_t until = json_integer_value(json_object_get(e, "until"));

		if (until == 0)
			continue;
		if (until > now) {
			next = next == 0 || until < next ? until : next;
			continue;
		}
		json_object_set_new(e, "until", json_integer(0));
		released = true;
		ap_resync(app, json_string_value(json_object_get(e, "kind")),
			  json_string_value(json_object_get(e, "ns")),
			  json_string_value(json_object_get(e, "name")));
	}
	if (released)
		publish(app);
	return next;
}
