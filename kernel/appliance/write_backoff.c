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
 * The table (the common string map) maps "kind/ns/name" to a struct
 * backoff; until is 0 while the object is back in the scheduler waiting for
 * its next write.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance-internal.h"

struct backoff {
	int64_t until, delay;
	enum pk_kind kind;
	char *ns, *name;
};

static void backoff_free(void *v)
{
	struct backoff *b = v;

	if (b) {
		free(b->ns);
		free(b->name);
		free(b);
	}
}

void ap_backoff_init(struct pk_appliance *app)
{
	app->write_backoff = (struct pk_map)PK_MAP_INIT(backoff_free);
}

void ap_backoff_free_all(struct pk_appliance *app)
{
	pk_map_free(&app->write_backoff);
}

/* The gauge of waiting objects, read by the metrics page. */
static void publish(struct pk_appliance *app)
{
	void *v;
	uint64_t n = 0;

	for (size_t i = 0; pk_map_next(&app->write_backoff, &i, NULL, &v);)
		n += ((const struct backoff *)v)->until > 0;
	pthread_mutex_lock(&app->m.lock);
	app->m.write_backoff_objects = n;
	pthread_mutex_unlock(&app->m.lock);
}

static char *key_of(enum pk_kind kind, const char *ns, const char *name, char *buf, size_t len)
{
	if (!pk_obj_key(buf, len, pk_type_of(kind), ns, name))
		buf[0] = '\0';
	return buf;
}

int ap_backoff_failed(struct pk_appliance *app, enum pk_kind kind, const char *ns, const char *name,
		      int error)
{
	char key[600];
	struct backoff *b =
	    pk_map_get(&app->write_backoff, key_of(kind, ns, name, key, sizeof(key)));
	bool again = b != NULL;
	int64_t delay = b ? b->delay * 2 : AP_WRITE_BACKOFF_INITIAL_MS;

	if (delay > AP_WRITE_BACKOFF_MAX_MS)
		delay = AP_WRITE_BACKOFF_MAX_MS;
	ap_log(app, again ? 2 : 1, "writing %s %s/%s failed: %s; next try in %lld ms",
	       pk_kind_to_string(kind), ns ? ns : "", name, pk_write_strerror(error),
	       (long long)delay);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (b) {
			b->kind = kind;
			b->ns = strdup(ns ? ns : "");
			b->name = strdup(name);
		}
		if (!b || !b->ns || !b->name || pk_map_put(&app->write_backoff, key, b) < 0) {
			backoff_free(b);
			return -ENOMEM;
		}
	}
	b->until = ap_now_ms() + delay;
	b->delay = delay;
	AP_COUNT(app, write_backoffs);
	publish(app);
	pk_sched_remove(app->sched, pk_type_of(kind), ns, name);
	return 0;
}

void ap_backoff_clear(struct pk_appliance *app, enum pk_kind kind, const char *ns, const char *name)
{
	char key[600];

	if (!app->write_backoff.live)
		return;
	if (pk_map_get(&app->write_backoff, key_of(kind, ns, name, key, sizeof(key)))) {
		pk_map_del(&app->write_backoff, key);
		publish(app);
	}
}

int64_t ap_backoff_release(struct pk_appliance *app, int64_t now)
{
	void *v;
	int64_t next = 0;
	bool released = false;

	for (size_t i = 0; pk_map_next(&app->write_backoff, &i, NULL, &v);) {
		struct backoff *b = v;

		if (b->until == 0)
			continue;
		if (b->until > now) {
			next = next == 0 || b->until < next ? b->until : next;
			continue;
		}
		b->until = 0;
		released = true;
		ap_resync(app, b->kind, b->ns, b->name);
	}
	if (released)
		publish(app);
	return next;
}
