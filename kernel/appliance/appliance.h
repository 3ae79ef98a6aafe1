/* SPDX-License-Identifier: Apache-2.0 */
/*
 * appliance.h — the scheduling loop of podkerneld, the same in both modes.
 *
 * One thread consumes a source's change stream (the store's, or attach
 * mode's mirror of a cluster): one list of every kind at start, then events
 * only.  Each event is classified (ap_classify(): feed the scheduler, remove
 * from it, skip a write that changes nothing the scheduler reads), the
 * scheduler (kernel/sched/sched.h) runs cycles, and the actions of a round
 * are written back through the write path (kernel/write/writer.h):
 * bindings, conditions and evictions under resourceVersion preconditions.
 *
 * The loop does not know its mode.  What a mode adds registers as hooks
 * (struct pk_appliance_hooks, up to PK_APPLIANCE_MAX_HOOKS tables, called
 * in the order registered): standalone podkerneld's controllers, node
 * heartbeats and simulated pods (kernel/controllers/) see the listing, the
 * events and the committed batches, and run before each round; attach mode
 * registers none of those, as the cluster's own controllers run there.
 * podkerneld registers the placement map (kernel/ui/) in both modes.
 *
 * Lifecycle: pk_appliance_start() -> (runs) -> pk_appliance_stop().  The
 * source is borrowed and must outlive the appliance.
 */
#ifndef PODKERNEL_KERNEL_APPLIANCE_H
#define PODKERNEL_KERNEL_APPLIANCE_H

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/api/api.h"
#include "topology/topology.h"

struct pk_writer;
struct pk_write_batch;
struct pk_write_result;
struct ap_decision;
struct pk_appliance;
/*
 * The source's own types: the loop reads objects through them and knows no
 * store.  One change of the source's stream: its type, its position in the
 * stream, the object's kind (its row of the kinds table) and the object
 * (borrowed and shared: read only).
 */
struct pk_source_event {
	enum pk_event_type type;
	uint64_t rv;
	const struct pk_type *kind;
	json_t *object;
};
/* Return 0 to continue, anything else to stop (returned by events_since). */
typedef int (*pk_source_event_cb)(const struct pk_source_event *ev, void *arg);
/* A page of a listing: at most limit objects (0: all), after the token of the page before. */
struct pk_source_list_opts {
	size_t limit;
	const char *continue_token;
};
/* -PK_SOURCE_EGONE: a position older than the stream keeps; list again (HTTP 410). */
#define PK_SOURCE_EGONE ERANGE

/*
 * Where the loop reads objects: standalone, the store (kernel/controllers/
 * adapts it); in attach mode a mirror of a Kubernetes cluster
 * (kernel/attach/).  list: a page of a kind (every namespace; a continue
 * token for the next page, malloc'ed, or NULL after the last); rv: the latest
 * position of the change stream; events_since: cb for the events after
 * since, in order, at most max (0: all kept), each carrying its object's
 * resourceVersion, ret_last the position of the last one delivered
 * (-PK_SOURCE_EGONE: since is older than what is kept); wait: until news
 * after since or timeout_ms (-ECANCELED: stopped); get: one object (-ENOENT).
 */
struct pk_appliance_source_ops {
	int (*list)(void *src, const struct pk_type *kind, const struct pk_source_list_opts *opts,
		    json_t **ret_items, char **ret_continue);
	uint64_t (*rv)(void *src);
	int (*events_since)(void *src, uint64_t since, size_t max, pk_source_event_cb cb, void *arg,
			    uint64_t *ret_last);
	int (*wait)(void *src, uint64_t since, int timeout_ms);
	int (*get)(void *src, const struct pk_type *kind, const char *ns, const char *name,
		   json_t **ret);
};

/*
 * What a mode adds to the loop.  Every member may be NULL.  start runs on the
 * caller's thread before the first listing, free after the loop stopped; the
 * others run on the loop's thread.
 */
struct pk_appliance_hooks {
	/*
	 * Kinds the hook reads that the loop neither keeps nor gives the
	 * scheduler (standalone's node heartbeat Leases), NULL-terminated, or
	 * NULL: listed before every other kind (a Node's Lease is known when
	 * the Node comes), and their events reach every hook without a
	 * decision.
	 */
	const struct pk_type *const *kinds;
	/*
	 * Kinds the scheduler does not read whose events the hook wants
	 * decided all the same (kept in the loop's cache, so each event's
	 * decision says whether it is news and whether it changed what is read,
	 * struct ap_decision): standalone's owners of pods and groups.
	 * NULL-terminated, or NULL; listed after the scheduler's kinds.
	 */
	const struct pk_type *const *tracked;
	/* Before the first listing (simulated nodes registered, say); errors to err. */
	int (*start)(void *arg, struct pk_appliance *app, char *err, size_t errlen);
	/*
	 * A listing begins (at start, after a lost stream, when leading anew):
	 * what the last one delivered may be gone from the source.
	 */
	void (*list_begin)(void *arg);
	/* Each object of a listing, Leases too, in kind order. */
	void (*listed)(void *arg, const struct pk_type *kind, const json_t *obj, int64_t now_ms);
	/* A listing is complete. */
	void (*list_done)(void *arg);
	/*
	 * Each change-stream event, the loop's own writes too, and what the loop
	 * made of it (NULL for a kind of some hook's kinds; AP_SKIP without
	 * flags when it could not classify it, out of memory).
	 */
	void (*event)(void *arg, const struct pk_source_event *ev, const struct ap_decision *d);
	/* A batch was committed: its n items and their results. */
	void (*written)(void *arg, const struct pk_write_batch *batch,
			const struct pk_write_result *results, size_t n, int64_t now_ms);
	/*
	 * Before each round's cycles: the mode's own work.  The loop reads the
	 * events it caused before the cycles.  Returns when it is next due
	 * (monotonic ms), or 0.
	 */
	int64_t (*round)(void *arg, int64_t now_ms);
	/* Its lines of the Prometheus text (any thread). */
	void (*metrics)(void *arg, FILE *f);
	void (*free)(void *arg);
};

/* One registration: a hooks table and its argument. */
#define PK_APPLIANCE_MAX_HOOKS 4
struct pk_appliance_hook {
	const struct pk_appliance_hooks *ops;
	void *arg;
};

struct pk_appliance_config {
	const char *strategy; /* --strategy NAME: placement strategy; NULL: the default */
	int verbosity;	      /* 0 errors, 1 startup, 2 actions, 3 events, 4 trace */
	int64_t backoff_initial_ms, backoff_max_ms; /* 0: the scheduler's defaults */
	bool gated_gangs_wait; /* pk_sched_opts.gated_gangs_wait (--gated-gangs-wait) */
	/*
	 * Where the scheduling rounds write (kernel/write/writer.h); the
	 * appliance takes it over (also on failure).  Required.
	 */
	struct pk_writer *writer;
	/*
	 * Where the loop reads (required).  Cycles run only while
	 * may_schedule(arg) says yes (attach mode: caches synced, leader;
	 * NULL: always); events are consumed regardless, so a standby's
	 * scheduler stays warm.
	 */
	const struct pk_appliance_source_ops *source;
	void *source_arg;
	bool (*may_schedule)(void *arg);
	void *may_schedule_arg;
	/*
	 * What the mode and the program add, called in this order
	 * (pk_appliance_config_add_hooks()); the loop frees each arg through
	 * its ops->free.
	 */
	struct pk_appliance_hook hooks[PK_APPLIANCE_MAX_HOOKS];
	size_t nhooks;
	/* Where log lines go (the program decides); NULL: nowhere. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

struct pk_appliance;

/* Register ops (non-NULL) with arg after the hooks cfg has; -ENOSPC when it has
 * PK_APPLIANCE_MAX_HOOKS. */
int pk_appliance_config_add_hooks(struct pk_appliance_config *cfg,
				  const struct pk_appliance_hooks *ops, void *arg);

/*
 * Start the hooks (in order; the first error stops), list the source and
 * start the loop thread.  cfg->source and cfg->writer are required.  Errors
 * (the hooks', the source's) go to err.  The loop owns cfg->writer and the
 * hooks' arguments from here on, also on failure.
 */
int pk_appliance_start(const struct pk_appliance_config *cfg, struct pk_appliance **ret, char *err,
		       size_t errlen);
/* Stop the thread and free everything; accepts NULL. */
void pk_appliance_stop(struct pk_appliance *app);

/* Prometheus text of the loop's metrics, then each hooks table's (its metrics member). */
int pk_appliance_metrics(struct pk_appliance *app, FILE *f);
/* Same, for a server hook that takes a callback (arg is the appliance). */
void pk_appliance_metrics_cb(void *arg, FILE *f);

/* ---- what the loop offers its hooks ------------------------------------------------ */

/* The loop's clock (monotonic ms). */
int64_t ap_now_ms(void);
/*
 * An object a hook wrote itself: the loop takes it as seen (its event comes
 * back as a skip) and gives it to the scheduler now.  Loop thread only.
 */
void pk_appliance_wrote(struct pk_appliance *app, const struct pk_type *kind, json_t *obj);
/*
 * The argument of the hooks registered last: the mode's own (standalone's
 * controllers, which pk_standalone_start() registers after the hooks its
 * configuration brings).  NULL without hooks.
 */
void *pk_appliance_hooks_arg(const struct pk_appliance *app);

/* ---- loop logic, exposed for tests -------------------------------------------- */

/* What one change-stream event means for the loop. */
enum ap_verdict {
	AP_SKIP,   /* nothing the scheduler reads changed (or already seen) */
	AP_FEED,   /* pk_sched_update() the object */
	AP_REMOVE, /* pk_sched_remove() the object */
};
struct ap_decision {
	enum ap_verdict verdict;
	bool fresh;   /* news: not a replay nor the echo of a write the loop made */
	bool changed; /* a deletion, or news that changes what the scheduler and the
		       * controllers read (pk_sched_fingerprint) */
};

/*
 * The last resourceVersion and a fingerprint of what the scheduler reads,
 * per object.  Writes by the appliance are recorded with ap_cache_note() so
 * their events come back as AP_SKIP.
 */
struct ap_cache;
int ap_cache_new(struct ap_cache **ret);
void ap_cache_free(struct ap_cache *c);
/* Record obj as seen (its metadata.resourceVersion and fingerprint). */
int ap_cache_note(struct ap_cache *c, const struct pk_type *kind, const json_t *obj);
void ap_cache_forget(struct ap_cache *c, const struct pk_type *kind, const char *ns,
		     const char *name);
/* The last resourceVersion seen of an object, 0 when unknown. */
uint64_t ap_cache_rv(const struct ap_cache *c, const struct pk_type *kind, const char *ns,
		     const char *name);
size_t ap_cache_size(const struct ap_cache *c);

/* Classify one event and update the cache.  rv is the event's resourceVersion. */
int ap_classify(struct ap_cache *c, enum pk_event_type type, const struct pk_type *kind,
		const json_t *obj, uint64_t rv, struct ap_decision *ret);

#endif /* PODKERNEL_KERNEL_APPLIANCE_H */
