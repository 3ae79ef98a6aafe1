/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_store.c — kernel/store: CRUD, resourceVersions, conflicts, the event
 * ring and 410, finalizers and CompositePodGroup protection, paging,
 * durability across close/reopen, selectors and patches.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/store/store.h"

static char dir[256];
static struct pk_store *st;

static void setup(void)
{
	/* tmpfs when there is one: these tests write thousands of commits; the
	 * disk's durability is the job of tests/kernel/server/test_server_crash.sh. */
	snprintf(dir, sizeof(dir), "/dev/shm/pk-store-test-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/pk-store-test-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
	}
	char err[256];
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
}

static void check_invariants(void)
{
	char err[256] = "";
	ck_assert_msg(pk_store_check(st, err, sizeof(err)) == 0, "invariant: %s", err);
}

static void teardown(void)
{
	check_invariants();
	pk_store_close(st);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static json_t *pod(const char *name, const char *app)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1",
			 "kind", "Pod", "metadata", "name", name, "namespace", "default", "labels",
			 "app", app, "spec", "containers", "name", "c", "image", "busybox");
}

static json_t *group(const char *kind, const char *name, const char *parent)
{
	json_t *g =
	    json_pack("{s:s,s:s,s:{s:s},s:{s:{s:{}}}}", "apiVersion", "scheduling.k8s.io/v1alpha3",
		      "kind", kind, "metadata", "name", name, "spec", "schedulingPolicy", "basic");
	json_t *spec = json_object_get(g, "spec");
	json_object_set_new(spec, "workloadRef",
			    json_pack("{s:s,s:s}", "workloadName", "w", "templateName", name));
	if (parent)
		json_object_set_new(spec, "parentCompositePodGroupName", json_string(parent));
	return g;
}

static json_t *create(json_t *obj)
{
	struct pk_errors errs = {0};
	json_t *out = NULL;
	int rc = pk_store_create(st, obj, &errs, &out);
	if (rc < 0)
		pk_errors_print(&errs, stderr, "create");
	ck_assert_int_eq(rc, 0);
	pk_errors_clear(&errs);
	json_decref(obj);
	check_invariants();
	return out;
}

static const char *rv_of(json_t *obj)
{
	return json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

START_TEST(test_crud_and_defaults)
{
	uint64_t rv0 = pk_store_rv(st);
	json_t *p = create(pod("p1", "a"));
	ck_assert_uint_eq(strtoull(rv_of(p), NULL, 10), rv0 + 1);
	json_t *meta = json_object_get(p, "metadata");
	ck_assert_ptr_nonnull(json_string_value(json_object_get(meta, "uid")));
	ck_assert_ptr_nonnull(json_string_value(json_object_get(meta, "creationTimestamp")));
	ck_assert_int_eq(json_integer_value(json_object_get(meta, "generation")), 1);

	json_t *again = pod("p1", "a");
	ck_assert_int_eq(pk_store_create(st, again, NULL, NULL), -EEXIST);
	json_decref(again);

	json_t *got = NULL;
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "p1", &got), 0);
	ck_assert(json_equal(got, p));
	json_decref(got);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "other", "p1", &got), -ENOENT);
	/* whether it is there, without the object */
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "p1", NULL), 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "other", "p1", NULL), -ENOENT);

	/* Update with the current rv works, bumps generation on spec change. */
	json_t *upd = json_deep_copy(p);
	json_t *out = NULL;
	json_object_set_new(json_object_get(upd, "spec"), "nodeName", json_string("n1"));
	ck_assert_int_eq(pk_store_update_opts(st, upd, PK_SUB_MAIN, NULL, NULL, &out), -EINVAL);
	json_object_del(json_object_get(upd, "spec"), "nodeName");
	json_object_set_new(json_array_get(pk_get(upd, "spec.containers"), 0), "image",
			    json_string("busybox:2"));
	ck_assert_int_eq(pk_store_update_opts(st, upd, PK_SUB_MAIN, NULL, NULL, &out), 0);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(json_object_get(out, "metadata"), "generation")), 2);
	ck_assert_str_ne(rv_of(out), rv_of(p));
	/* The same stale rv again: conflict. */
	ck_assert_int_eq(pk_store_update_opts(st, upd, PK_SUB_MAIN, NULL, NULL, NULL),
			 -PK_STORE_ECONFLICT);
	json_decref(upd);

	/* Status subresource: main update keeps status, status update changes only it. */
	json_t *st1 = json_deep_copy(out);
	json_object_set_new(st1, "status", json_pack("{s:s}", "phase", "Running"));
	json_t *out2 = NULL;
	ck_assert_int_eq(pk_store_update_opts(st, st1, PK_SUB_MAIN, NULL, NULL, &out2), 0);
	ck_assert_str_eq(pk_get_string(out2, "status.phase"), "Pending");
	json_decref(out2);
	json_object_del(json_object_get(st1, "metadata"), "resourceVersion");
	ck_assert_int_eq(pk_store_update_opts(st, st1, PK_SUB_STATUS, NULL, NULL, &out2), 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(out2, "status"), "phase")),
	    "Running");
	json_decref(out2);
	json_decref(st1);

	json_t *del = NULL;
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "p1", NULL, NULL, &del),
			 0);
	json_decref(del);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "p1", &got), -ENOENT);
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "p1", NULL, NULL, NULL),
			 -ENOENT);
	json_decref(out);
	json_decref(p);
}
END_TEST

START_TEST(test_invalid_objects)
{
	struct pk_errors errs = {0};
	json_t *bad = pod("Bad_Name", "a");
	ck_assert_int_eq(pk_store_create(st, bad, &errs, NULL), -EINVAL);
	ck_assert_uint_ge(errs.n, 1);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "metadata.name"));
	pk_errors_clear(&errs);
	json_decref(bad);

	bad = pod("p2", "bad value!");
	ck_assert_int_eq(pk_store_create(st, bad, &errs, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "metadata.labels"));
	pk_errors_clear(&errs);
	json_decref(bad);

	bad = pod("p3", "a");
	json_object_set_new(json_object_get(bad, "spec"), "priorityClassName", json_string("nope"));
	ck_assert_int_eq(pk_store_create(st, bad, &errs, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "spec.priorityClassName"));
	pk_errors_clear(&errs);
	json_decref(bad);
}
END_TEST

static json_t *gang_job(const char *name, int min_count)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i,s:{s:{s:{s:i}}},s:{s:{s:[{s:s,s:s}]}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name,
			 "namespace", "default", "spec", "parallelism", 4, "scheduling",
			 "schedulingPolicy", "gang", "minCount", min_count, "template", "spec",
			 "containers", "name", "c", "image", "trainer");
}

/* An admission rule for the test: a Job's gang may not shrink, nor start below 2. */
static int admit_min_count(const json_t *obj, const json_t *old, struct pk_errors *errs)
{
	json_int_t n =
	    json_integer_value(pk_get(obj, "spec.scheduling.schedulingPolicy.gang.minCount"));
	json_int_t was =
	    old ? json_integer_value(pk_get(old, "spec.scheduling.schedulingPolicy.gang.minCount"))
		: 2;

	if (n >= 2 && n >= was)
		return 0;
	pk_errors_add(errs, "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: %lld",
		      (long long)n);
	return -EINVAL;
}

static const struct pk_admission test_admission[] = {{PK_KIND_JOB, "test", admit_min_count}};

/*
 * The admission rules a store is opened with run on every write of their
 * kind, after static validation, on create (no stored object) and update
 * (the stored one); a store opened without them admits what validates.
 */
START_TEST(test_admission_rules_given_at_open)
{
	struct pk_store_open_opts so = {.admission = test_admission, .nadmission = 1};
	struct pk_errors errs = {0};
	json_t *job = gang_job("j", 1), *out = NULL;
	char err[256];

	ck_assert_int_eq(pk_store_create(st, job, &errs, NULL), 0); /* this store has none */
	pk_errors_clear(&errs);
	json_decref(job);
	pk_store_close(st);
	ck_assert_int_eq(pk_store_open_opts(dir, &so, &st, err, sizeof(err)), 0);
	job = gang_job("k", 1);
	ck_assert_int_eq(pk_store_create(st, job, &errs, NULL), -EINVAL);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msg[0],
			 "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 1");
	pk_errors_clear(&errs);
	json_decref(job);
	job = gang_job("k", 3);
	ck_assert_int_eq(pk_store_create(st, job, &errs, &out), 0);
	json_decref(job);
	json_object_set_new(pk_get(out, "spec.scheduling.schedulingPolicy.gang"), "minCount",
			    json_integer(2));
	ck_assert_int_eq(pk_store_update_opts(st, out, PK_SUB_MAIN, NULL, &errs, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "minCount: Invalid value: 2"));
	pk_errors_clear(&errs);
	json_object_set_new(pk_get(out, "spec.scheduling.schedulingPolicy.gang"), "minCount",
			    json_integer(4));
	ck_assert_int_eq(pk_store_update_opts(st, out, PK_SUB_MAIN, NULL, &errs, NULL), 0);
	json_decref(out);
}
END_TEST

START_TEST(test_priority_and_group_defaults)
{
	json_decref(create(json_pack("{s:s,s:s,s:{s:s},s:i,s:b}", "apiVersion",
				     "scheduling.k8s.io/v1", "kind", "PriorityClass", "metadata",
				     "name", "dflt", "value", 77, "globalDefault", 1)));
	json_t *p = create(pod("p1", "a"));
	json_t *spec = json_object_get(p, "spec");
	ck_assert_int_eq(json_integer_value(json_object_get(spec, "priority")), 77);
	ck_assert_str_eq(json_string_value(json_object_get(spec, "priorityClassName")), "dflt");
	json_decref(p);
	json_t *g = create(group("PodGroup", "g1", NULL));
	ck_assert_ptr_nonnull(json_object_get(
	    json_object_get(json_object_get(g, "spec"), "disruptionMode"), "single"));
	json_decref(g);
}
END_TEST

struct collect {
	json_t *types; /* array of "TYPE name" strings */
};

static int collect_cb(const struct pk_store_event *ev, void *arg)
{
	struct collect *c = arg;
	char buf[256];
	snprintf(
	    buf, sizeof(buf), "%s %s", pk_event_type_to_string(ev->type),
	    json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name")));
	json_array_append_new(c->types, json_string(buf));
	return 0;
}

struct rvs {
	uint64_t rv[PK_STORE_RING_SIZE + 1];
	size_t n;
};

static int collect_rv(const struct pk_store_event *ev, void *arg)
{
	struct rvs *r = arg;
	ck_assert_uint_lt(r->n, PK_STORE_RING_SIZE + 1);
	ck_assert_ptr_nonnull(ev->object);
	ck_assert_ptr_nonnull(ev->object_json);
	r->rv[r->n++] = ev->rv;
	return 0;
}

/* From any resourceVersion the ring answers exactly the events after it, in
 * order, at most max of them, and the last one it gave; older than the ring
 * is 410 Gone.  The reference is the whole ring, read from its floor. */
static void check_ring_answers(uint64_t since, size_t max, const struct rvs *all)
{
	static struct rvs got;
	got.n = 0;
	uint64_t last = 0;
	ck_assert_int_eq(pk_store_events_since(st, since, max, collect_rv, &got, &last), 0);
	size_t want = 0;
	for (size_t i = 0; i < all->n; i++) {
		if (all->rv[i] <= since || (max && want == max))
			continue;
		ck_assert_uint_lt(want, got.n);
		ck_assert_uint_eq(got.rv[want], all->rv[i]);
		want++;
	}
	ck_assert_uint_eq(got.n, want);
	ck_assert_uint_eq(last, want ? got.rv[want - 1] : since);
}

static void check_ring_from_every_version(void)
{
	static struct rvs all;
	struct pk_store_stats s;
	pk_store_get_stats(st, &s);
	uint64_t rv = pk_store_rv(st);
	all.n = 0;
	ck_assert_int_eq(pk_store_events_since(st, s.ring_floor, 0, collect_rv, &all, NULL), 0);
	ck_assert_uint_eq(all.n, s.ring_events);
	ck_assert_uint_eq(all.rv[all.n - 1], rv);
	ck_assert_int_eq(pk_store_events_since(st, s.ring_floor - 1, 0, collect_rv, &all, NULL),
			 -PK_STORE_EGONE);
	ck_assert_int_eq(pk_store_events_since(st, 0, 1, collect_rv, &all, NULL), -PK_STORE_EGONE);
	static const size_t maxes[] = {0, 1, 7, PK_STORE_RING_SIZE};
	for (size_t m = 0; m < sizeof(maxes) / sizeof(*maxes); m++) {
		for (uint64_t since = s.ring_floor; since <= rv + 2;) {
			check_ring_answers(since, maxes[m], &all);
			/* every version near both ends, a stride through the middle */
			bool edge = since < s.ring_floor + 40 || since + 40 > rv;
			since += edge ? 1 : 53;
		}
	}
}

static json_t *event(const char *name)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s},s:s,s:s,s:s,s:i}", "apiVersion",
			 "v1", "kind", "Event", "metadata", "name", name, "namespace", "default",
			 "involvedObject", "kind", "Pod", "name", "p", "namespace", "default",
			 "reason", "Scheduled", "message", "m", "type", "Normal", "count", 1);
}

static void create_events(const char *prefix, int n)
{
	json_t *objs[600];
	int rcs[600];
	ck_assert_int_le(n, 600);
	for (int i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s-%03d", prefix, i);
		objs[i] = event(name);
	}
	pk_store_create_batch(st, objs, (size_t)n, rcs);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(rcs[i], 0);
		json_decref(objs[i]);
	}
}

/* The expired Events' names, joined by spaces, and the read steps it took. */
static char *expired(int64_t before, size_t max, uint64_t *ret_steps)
{
	struct pk_store_stats a, b;
	json_t *keys = NULL, *k;
	size_t i;
	pk_store_get_stats(st, &a);
	ck_assert_int_eq(pk_store_expired_events(st, before, max, &keys), 0);
	pk_store_get_stats(st, &b);
	*ret_steps = b.read_steps - a.read_steps;
	char *out = calloc(1, 4096);
	json_array_foreach(keys, i, k)
	{
		ck_assert_str_eq(pk_get_string(k, "namespace"), "default");
		snprintf(out + strlen(out), 4096 - strlen(out), "%s%s", i ? " " : "",
			 pk_get_string(k, "name"));
	}
	json_decref(keys);
	return out;
}

/*
 * The Event expiry index names the Events last written at or before a time,
 * reading those rows only: 5 expired among 505 Events cost a few steps, not
 * a walk of all of them.  A write (a repeat's count) starts an Event's TTL
 * again; a deleted Event leaves the index.
 */
START_TEST(test_event_expiry_index)
{
	uint64_t steps;
	create_events("old", 5);
	int64_t t_old = (int64_t)time(NULL);
	while ((int64_t)time(NULL) <= t_old)
		usleep(20 * 1000);
	create_events("new", 500);

	char *names = expired(t_old, 1000, &steps);
	ck_assert_str_eq(names, "old-000 old-001 old-002 old-003 old-004");
	free(names);
	ck_assert_uint_lt(steps, 5 * 20 + 40);
	names = expired(t_old - 3600, 1000, &steps);
	ck_assert_str_eq(names, "");
	free(names);
	ck_assert_uint_lt(steps, 40);

	json_t *ev = NULL;
	ck_assert_int_eq(pk_store_get(st, &pk_type_event, "default", "old-001", &ev), 0);
	json_object_set_new(ev, "count", json_integer(2));
	ck_assert_int_eq(pk_store_update_opts(st, ev, PK_SUB_MAIN, NULL, NULL, NULL), 0);
	json_decref(ev);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_event, "default", "old-003", NULL, NULL, NULL), 0);
	names = expired(t_old, 1000, &steps);
	ck_assert_str_eq(names, "old-000 old-002 old-004");
	free(names);
	names = expired(t_old, 2, &steps);
	ck_assert_str_eq(names, "old-000 old-002");
	free(names);
	names = expired((int64_t)time(NULL) + 1, 1000, &steps);
	ck_assert_uint_eq(strlen(names), 504 * 8 - 1); /* every Event left */
	free(names);
	check_invariants();
}
END_TEST

START_TEST(test_events_and_ring)
{
	uint64_t start = pk_store_rv(st);
	json_decref(create(pod("p1", "a")));
	json_decref(create(pod("p2", "a")));
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "p1", NULL, NULL, NULL),
			 0);
	struct collect c = {json_array()};
	uint64_t last = 0;
	ck_assert_int_eq(pk_store_events_since(st, start, 0, collect_cb, &c, &last), 0);
	ck_assert_uint_eq(json_array_size(c.types), 3);
	ck_assert_str_eq(json_string_value(json_array_get(c.types, 0)), "ADDED p1");
	ck_assert_str_eq(json_string_value(json_array_get(c.types, 2)), "DELETED p1");
	ck_assert_uint_eq(last, pk_store_rv(st));
	json_decref(c.types);

	/* Nothing new: wait times out; a write wakes it. */
	ck_assert_int_eq(pk_store_wait(st, last, 50), -ETIMEDOUT);
	json_decref(create(pod("p3", "a")));
	ck_assert_int_eq(pk_store_wait(st, last, 50), 0);

	/* Overflow the ring: the start is gone. */
	for (int i = 0; i < PK_STORE_RING_SIZE / 2 + 1; i++) {
		json_t *obj = NULL;
		ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "p2", &obj), 0);
		json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
		json_object_set_new(labels, "i", json_sprintf("v%d", i));
		ck_assert_int_eq(pk_store_update_opts(st, obj, PK_SUB_MAIN, NULL, NULL, NULL), 0);
		json_decref(obj);
		ck_assert_int_eq(
		    pk_store_delete_opts(st, &pk_type_pod, "default", "p3", NULL, NULL, NULL),
		    i == 0 ? 0 : -ENOENT);
	}
	for (int i = 0; i < PK_STORE_RING_SIZE / 2; i++) {
		json_t *obj = NULL;
		ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "p2", &obj), 0);
		json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"),
				    "j", json_sprintf("v%d", i));
		ck_assert_int_eq(pk_store_update_opts(st, obj, PK_SUB_MAIN, NULL, NULL, NULL), 0);
		json_decref(obj);
	}
	check_invariants();
	check_ring_from_every_version();
	c.types = json_array();
	ck_assert_int_eq(pk_store_events_since(st, start, 0, collect_cb, &c, NULL),
			 -PK_STORE_EGONE);
	ck_assert_int_eq(pk_store_events_since(st, pk_store_rv(st) - 10, 0, collect_cb, &c, NULL),
			 0);
	ck_assert_uint_eq(json_array_size(c.types), 10);
	json_decref(c.types);
}
END_TEST

/* A holder's check of what it read: every event, in order, with no gap in
 * what it was written (one event per write in this test). */
struct held_read {
	uint64_t last;
	size_t n;
};

static int held_cb(const struct pk_store_event *ev, void *arg)
{
	struct held_read *h = arg;
	ck_assert_uint_eq(ev->rv, h->last + 1);
	ck_assert_ptr_nonnull(ev->object);
	h->last = ev->rv;
	h->n++;
	return 0;
}

static void create_pods(const char *prefix, int n)
{
	json_t *objs[512];
	int rcs[512];
	for (int i = 0; i < n;) {
		int k = 0;
		for (; k < 512 && i < n; k++, i++) {
			char name[64];
			snprintf(name, sizeof(name), "%s-%d", prefix, i);
			objs[k] = pod(name, "held");
		}
		ck_assert_int_eq(pk_store_create_batch(st, objs, (size_t)k, rcs), 0);
		for (int j = 0; j < k; j++) {
			ck_assert_int_eq(rcs[j], 0);
			json_decref(objs[j]);
		}
	}
}

/*
 * The holding consumer falls three rings behind: the window, and so every
 * watch, moves on as before (410 from where the holder is), while the holder
 * reads every event from where it was, in batches, without a re-list; what
 * was kept for it goes once it has caught up, and when it lets go.
 */
START_TEST(test_hold_keeps_events_past_the_ring)
{
	struct held_read h = {.last = pk_store_rv(st)};
	struct pk_store_stats s;
	ck_assert_int_eq(pk_store_events_since_held(st, h.last, 0, held_cb, &h, NULL), 0);
	ck_assert_uint_eq(h.n, 0);
	uint64_t start = h.last;
	create_pods("held", 3 * PK_STORE_RING_SIZE);
	check_invariants();
	pk_store_get_stats(st, &s);
	ck_assert_uint_eq(s.ring_events, PK_STORE_RING_SIZE);
	ck_assert_uint_eq(s.held_events, 2 * PK_STORE_RING_SIZE);
	ck_assert_uint_gt(s.ring_floor, start);
	ck_assert_int_eq(pk_store_events_since(st, start, 0, held_cb, &h, NULL), -PK_STORE_EGONE);
	ck_assert_uint_eq(h.n, 0);

	/* caught up in batches; each read lets go of what came before it */
	uint64_t last = 0;
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(pk_store_events_since_held(st, h.last, 1000, held_cb, &h, &last),
				 0);
		ck_assert_uint_eq(last, h.last);
		pk_store_get_stats(st, &s);
		ck_assert_uint_eq(s.held_events, 2 * PK_STORE_RING_SIZE - i * 1000);
	}
	ck_assert_int_eq(pk_store_events_since_held(st, h.last, 0, held_cb, &h, NULL), 0);
	ck_assert_uint_eq(h.n, 3 * PK_STORE_RING_SIZE);
	ck_assert_uint_eq(h.last, pk_store_rv(st));
	ck_assert_int_eq(pk_store_events_since_held(st, h.last, 0, held_cb, &h, NULL), 0);
	pk_store_get_stats(st, &s);
	ck_assert_uint_eq(s.held_events, 0);
	ck_assert_uint_eq(s.held_bytes, 0);
	ck_assert_uint_eq(s.holds_dropped, 0);
	check_invariants();

	/* let go: a burst then is not kept, and the old position is gone */
	uint64_t old = h.last;
	pk_store_hold_release(st);
	create_pods("free", PK_STORE_RING_SIZE + 10);
	pk_store_get_stats(st, &s);
	ck_assert_uint_eq(s.held_events, 0);
	ck_assert_int_eq(pk_store_events_since_held(st, old, 0, held_cb, &h, NULL),
			 -PK_STORE_EGONE);
	check_invariants();
}
END_TEST

START_TEST(test_finalizers_and_group_protection)
{
	json_decref(create(group("CompositePodGroup", "top", NULL)));
	json_decref(create(group("PodGroup", "child", "top")));
	json_t *obj = NULL;
	/* Delete the parent first: it stays, marked, with the protection finalizer. */
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_composite_pod_group, "default", "top",
					      NULL, NULL, &obj),
			 0);
	ck_assert_ptr_nonnull(
	    json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp"));
	json_decref(obj);
	ck_assert_int_eq(pk_store_get(st, &pk_type_composite_pod_group, "default", "top", &obj), 0);
	json_decref(obj);
	uint64_t rv = pk_store_rv(st);
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_composite_pod_group, "default", "top",
					      NULL, NULL, NULL),
			 0);
	ck_assert_uint_eq(pk_store_rv(st), rv); /* a second delete writes nothing */
	/* The last child goes: the parent goes with it. */
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod_group, "default", "child", NULL, NULL, NULL), 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_composite_pod_group, "default", "top", &obj),
			 -ENOENT);

	/* A user finalizer: removing it through a patch deletes the object. */
	json_t *p = pod("fin", "a");
	json_object_set_new(json_object_get(p, "metadata"), "finalizers",
			    json_pack("[s]", "example.com/hold"));
	json_decref(create(p));
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "fin", NULL, NULL, NULL),
			 0);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "fin", &obj), 0);
	json_decref(obj);
	json_t *patch = json_pack("{s:{s:n}}", "metadata", "finalizers");
	ck_assert_int_eq(pk_store_patch(st, &pk_type_pod, "default", "fin", PK_PATCH_MERGE, patch,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "fin", &obj), -ENOENT);
}
END_TEST

/* A Pod is created Pending with its qosClass, as kube-apiserver's pod strategy does. */
START_TEST(test_pod_status_on_create)
{
	json_t *p = create(pod("p1", "a")), *items = NULL, *ran = pod("p2", "a");
	json_t *res = json_pack("{s:{s:s,s:s}}", "limits", "cpu", "1", "memory", "1Gi");
	struct pk_selector *sel = NULL;
	char err[128];

	ck_assert_str_eq(pk_get_string(p, "status.phase"), "Pending");
	ck_assert_str_eq(pk_get_string(p, "status.qosClass"), "BestEffort");
	json_decref(p);
	/* a phase the writer gives is kept; the qosClass is computed, whatever was given */
	json_object_set_new(ran, "status",
			    json_pack("{s:s,s:s}", "phase", "Succeeded", "qosClass", "Burstable"));
	json_object_set_new(json_array_get(pk_get(ran, "spec.containers"), 0), "resources", res);
	p = create(ran);
	ck_assert_str_eq(pk_get_string(p, "status.phase"), "Succeeded");
	ck_assert_str_eq(pk_get_string(p, "status.qosClass"), "Guaranteed");
	json_decref(p);
	/* kubectl get pods --field-selector status.phase=Pending */
	ck_assert_int_eq(pk_selector_parse("status.phase=Pending", true, &sel, err, sizeof(err)),
			 0);
	struct pk_store_list_opts f = {.fields = sel};
	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, NULL, &f, &items, NULL, NULL), 0);
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(pk_name(json_array_get(items, 0)), "p1");
	json_decref(items);
	pk_selector_free(sel);
}
END_TEST

/* Every write is held to kube-apiserver's ownerReferences rules (422 over HTTP). */
START_TEST(test_owner_references_checked)
{
	json_t *p = pod("p1", "a"), *ref, *out = NULL;
	struct pk_errors errs = {0};

	ref = json_pack("{s:s,s:s,s:s,s:b}", "apiVersion", "batch/v1", "kind", "Job", "name", "j",
			"controller", 1);
	json_object_set_new(json_object_get(p, "metadata"), "ownerReferences",
			    json_pack("[O]", ref));
	ck_assert_int_eq(pk_store_create(st, p, &errs, NULL), -EINVAL);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msg[0],
			 "metadata.ownerReferences[0].uid: Invalid value: \"\": must not be empty");
	pk_errors_clear(&errs);
	json_object_set_new(ref, "uid", json_string("u1"));
	out = create(json_incref(p));
	/* an update adding a second controller reference is refused, and changes nothing */
	json_array_append_new(pk_get(out, "metadata.ownerReferences"),
			      json_pack("{s:s,s:s,s:s,s:s,s:b}", "apiVersion", "batch/v1", "kind",
					"Job", "name", "k", "uid", "u2", "controller", 1));
	ck_assert_int_eq(pk_store_update_opts(st, out, PK_SUB_MAIN, NULL, &errs, NULL), -EINVAL);
	ck_assert_uint_eq(errs.n, 1);
	pk_errors_clear(&errs);
	json_decref(out);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "p1", &out), 0);
	ck_assert_uint_eq(json_array_size(pk_get(out, "metadata.ownerReferences")), 1);
	json_decref(out);
	json_decref(ref);
	json_decref(p);
}
END_TEST

/*
 * What garbage collection reads after a start comes from two indexes: the
 * objects with ownerReferences and the one deleted in the foreground, not
 * the thousand plain pods beside them (the read's steps do not grow with
 * them).
 */
START_TEST(test_gc_candidates_from_indexes)
{
	struct pk_store_write_opts fg = {.propagation = PK_PROPAGATE_FOREGROUND};
	struct pk_store_stats s0, s1;
	json_t *owner = create(pod("owner", "a")), *dep = pod("dep", "a"), *got = NULL;

	json_object_set_new(json_object_get(dep, "metadata"), "ownerReferences",
			    json_pack("[{s:s,s:s,s:s,s:s}]", "apiVersion", "v1", "kind", "Pod",
				      "name", "owner", "uid",
				      pk_get_string(owner, "metadata.uid")));
	json_decref(create(dep));
	json_decref(create(pod("lone", "a")));
	create_pods("plain", 1000);
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "lone", &fg, NULL, NULL),
			 0);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "owner", &fg, NULL, NULL), 0);
	pk_store_get_stats(st, &s0);
	ck_assert_int_eq(pk_store_gc_candidates(st, &got), 0);
	pk_store_get_stats(st, &s1);
	ck_assert_uint_eq(s1.read_queries, s0.read_queries + 1);
	ck_assert_uint_lt(s1.read_steps - s0.read_steps, 100);
	/* both wait in the foreground until garbage collection releases them */
	ck_assert_uint_eq(json_array_size(got), 3);
	static const char *const want[] = {"dep", "lone", "owner"};
	for (size_t i = 0; i < 3; i++)
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(got, i), "name")),
				 want[i]);
	json_decref(got);
	json_decref(owner);
}
END_TEST

START_TEST(test_list_paging_selectors)
{
	for (int i = 0; i < 25; i++) {
		char name[32];
		snprintf(name, sizeof(name), "p%02d", i);
		json_decref(create(pod(name, i % 2 ? "odd" : "even")));
	}
	struct pk_selector *sel = NULL;
	char err[128];
	ck_assert_int_eq(
	    pk_selector_parse("app in (odd, x),!missing", false, &sel, err, sizeof(err)), 0);
	struct pk_store_list_opts o = {.labels = sel, .limit = 5};
	size_t total = 0, pages = 0;
	char *cont = NULL;
	do {
		json_t *items = NULL;
		char *next = NULL;
		o.continue_token = cont;
		ck_assert_int_eq(
		    pk_store_list(st, &pk_type_pod, "default", &o, &items, NULL, &next), 0);
		total += json_array_size(items);
		pages++;
		json_decref(items);
		free(cont);
		cont = next;
	} while (cont);
	ck_assert_uint_eq(total, 12);
	ck_assert_uint_eq(pages, 3);
	pk_selector_free(sel);

	/* A row that names no label the selector needs is not parsed. */
	static const char *const needs[] = {"tier", "app,tier", "app"};
	for (size_t i = 0; i < 3; i++) {
		struct pk_store_stats before, after;
		json_t *items = NULL;

		ck_assert_int_eq(pk_selector_parse(needs[i], false, &sel, err, sizeof(err)), 0);
		o = (struct pk_store_list_opts){.labels = sel};
		pk_store_get_stats(st, &before);
		ck_assert_int_eq(pk_store_list(st, &pk_type_pod, NULL, &o, &items, NULL, NULL), 0);
		pk_store_get_stats(st, &after);
		ck_assert_uint_eq(json_array_size(items), i == 2 ? 25 : 0);
		ck_assert_uint_eq(after.read_parsed - before.read_parsed, i == 2 ? 25 : 0);
		json_decref(items);
		pk_selector_free(sel);
	}

	ck_assert_int_eq(pk_selector_parse("metadata.name=p03", true, &sel, err, sizeof(err)), 0);
	json_t *items = NULL;
	struct pk_store_list_opts f = {.fields = sel};
	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, NULL, &f, &items, NULL, NULL), 0);
	ck_assert_uint_eq(json_array_size(items), 1);
	json_decref(items);
	pk_selector_free(sel);
	o = (struct pk_store_list_opts){.continue_token = "zz"};
	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, NULL, &o, &items, NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(test_durability_across_reopen)
{
	json_t *p = create(pod("keep", "a"));
	uint64_t rv = pk_store_rv(st);
	pk_store_close(st);
	char err[256];
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	ck_assert_uint_eq(pk_store_rv(st), rv);
	json_t *got = NULL;
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "keep", &got), 0);
	ck_assert(json_equal(got, p));
	json_decref(got);
	json_decref(p);
	/* The ring starts empty: older versions are gone, the current one is fine. */
	ck_assert_int_eq(pk_store_events_since(st, rv - 1, 0, collect_cb, NULL, NULL),
			 -PK_STORE_EGONE);
	ck_assert_int_eq(pk_store_events_since(st, rv, 0, collect_cb, NULL, NULL), 0);
	json_t *q = create(pod("next", "a"));
	ck_assert_uint_eq(strtoull(rv_of(q), NULL, 10), rv + 1);
	json_decref(q);
}
END_TEST

START_TEST(test_selector_syntax)
{
	static const char *const good[] = {"",		 "a",		"!a",
					   "a=b",	 "a==b",	"a!=b",
					   "a in (x,y)", "a notin (x)", "a,b=c, d in (e)",
					   "k8s.io/x=y"};
	static const char *const bad[] = {"a in x", "a in (x", "=b", "a=b,", "a b", "a in (x,,y"};
	char err[128];
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		struct pk_selector *s = NULL;
		ck_assert_msg(pk_selector_parse(good[i], false, &s, err, sizeof(err)) == 0,
			      "%s: %s", good[i], err);
		pk_selector_free(s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct pk_selector *s = NULL;
		int rc = pk_selector_parse(bad[i], false, &s, err, sizeof(err));
		if (i == 5) /* an empty value inside a set is allowed upstream */
			continue;
		ck_assert_msg(rc == -EINVAL, "%s accepted", bad[i]);
		ck_assert_ptr_nonnull(strstr(err, "col "));
	}
	struct pk_selector *s = NULL;
	ck_assert_int_eq(pk_selector_parse("a in (x)", true, &s, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(pk_selector_parse("a notin (x),b!=y,!c", false, &s, err, sizeof(err)), 0);
	json_t *obj = json_pack("{s:{s:{s:s,s:s}}}", "metadata", "labels", "a", "z", "b", "w");
	ck_assert(pk_selector_match_labels(s, obj));
	json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"), "c",
			    json_string(""));
	ck_assert(!pk_selector_match_labels(s, obj));
	json_decref(obj);
	pk_selector_free(s);
}
END_TEST

/*
 * The text check a list makes before parsing a row: false only where the
 * parsed object cannot match (a required label named nowhere in the text),
 * whatever the encoder did to a slash; a name met elsewhere (a value) is
 * only a row parsed for nothing.
 */
START_TEST(test_selector_text)
{
	static const char *const sels[] = {
	    "kueue.x-k8s.io/queue-name", "a=b", "a in (b,c)", "!a", "a!=b", "x/y=z,a"};
	static const char *const texts[] = {
	    "{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"q\"}}}",
	    "{\"metadata\":{\"labels\":{\"kueue.x-k8s.io\\/queue-name\":\"q\"}}}",
	    "{\"metadata\":{\"labels\":{\"a\":\"b\",\"x/y\":\"z\"}}}",
	    "{\"metadata\":{\"labels\":{\"b\":\"a\"}}}", "{\"metadata\":{\"name\":\"a\"}}"};
	static const bool may[][5] = {
	    {true, true, false, false, false}, {false, false, true, true, true},
	    {false, false, true, true, true},  {true, true, true, true, true},
	    {true, true, true, true, true},    {false, false, true, false, false}};
	char err[128];

	for (size_t i = 0; i < sizeof(sels) / sizeof(*sels); i++) {
		struct pk_selector *s = NULL;

		ck_assert_int_eq(pk_selector_parse(sels[i], false, &s, err, sizeof(err)), 0);
		for (size_t t = 0; t < sizeof(texts) / sizeof(*texts); t++) {
			json_t *obj = json_loads(texts[t], 0, NULL);
			bool m = pk_selector_may_match_text(s, texts[t], strlen(texts[t]));

			ck_assert_ptr_nonnull(obj);
			ck_assert_msg(m == may[i][t], "%s on %s: %d", sels[i], texts[t], m);
			/* never false where the object matches */
			ck_assert(m || !pk_selector_match_labels(s, obj));
			json_decref(obj);
		}
		pk_selector_free(s);
	}
	ck_assert(pk_selector_may_match_text(NULL, "", 0));
}
END_TEST

START_TEST(test_patches)
{
	json_t *doc = json_pack("{s:{s:i,s:[i,i]},s:s}", "a", "x", 1, "l", 1, 2, "b", "keep");
	json_t *out = NULL;
	char err[128];
	json_t *mp = json_pack("{s:{s:n,s:i},s:s}", "a", "x", "y", 2, "$retainKeys", "z");
	ck_assert_int_eq(pk_patch_apply(doc, PK_PATCH_STRATEGIC, mp, &out, err, sizeof(err)), 0);
	ck_assert_ptr_null(json_object_get(json_object_get(out, "a"), "x"));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(out, "a"), "y")), 2);
	ck_assert_ptr_null(json_object_get(out, "$retainKeys"));
	json_decref(out);
	json_decref(mp);
	/* Strategic: containers merge by name, "$patch": "delete" removes one. */
	json_t *pod = json_pack("{s:{s:[{s:s,s:s,s:{}},{s:s,s:s}]}}", "spec", "containers", "name",
				"a", "image", "old", "resources", "name", "b", "image", "x");
	mp = json_pack("{s:{s:[{s:s,s:s},{s:s,s:s}]}}", "spec", "containers", "name", "a", "image",
		       "new", "name", "b", "$patch", "delete");
	ck_assert_int_eq(pk_patch_apply(pod, PK_PATCH_STRATEGIC, mp, &out, err, sizeof(err)), 0);
	json_t *cs = json_object_get(json_object_get(out, "spec"), "containers");
	ck_assert_uint_eq(json_array_size(cs), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cs, 0), "image")), "new");
	ck_assert_ptr_nonnull(json_object_get(json_array_get(cs, 0), "resources"));
	json_decref(out);
	/* The same as a JSON merge patch replaces the list. */
	ck_assert_int_eq(pk_patch_apply(pod, PK_PATCH_MERGE, mp, &out, err, sizeof(err)), 0);
	cs = json_object_get(json_object_get(out, "spec"), "containers");
	ck_assert_uint_eq(json_array_size(cs), 2);
	ck_assert_ptr_null(json_object_get(json_array_get(cs, 0), "resources"));
	json_decref(out);
	json_decref(mp);
	json_decref(pod);

	json_t *jp = json_pack("[{s:s,s:s,s:i},{s:s,s:s},{s:s,s:s,s:s}]", "op", "add", "path",
			       "/a/l/-", "value", 3, "op", "remove", "path", "/b", "op", "test",
			       "path", "/a/l/2", "value", "nope");
	ck_assert_int_eq(pk_patch_apply(doc, PK_PATCH_JSON, jp, &out, err, sizeof(err)), -EINVAL);
	json_array_remove(jp, 2);
	ck_assert_int_eq(pk_patch_apply(doc, PK_PATCH_JSON, jp, &out, err, sizeof(err)), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(out, "a"), "l")), 3);
	ck_assert_ptr_null(json_object_get(out, "b"));
	json_decref(out);
	json_decref(jp);
	json_decref(doc);
}
END_TEST

static json_t *in_ns(json_t *obj, const char *ns)
{
	json_object_set_new(json_object_get(obj, "metadata"), "namespace", json_string(ns));
	return obj;
}

START_TEST(test_namespace_deletion)
{
	json_decref(create(json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				     "metadata", "name", "team")));
	json_decref(create(in_ns(pod("a", "x"), "team")));
	json_decref(create(in_ns(pod("b", "x"), "team")));
	json_t *held = in_ns(pod("held", "x"), "team");
	json_object_set_new(json_object_get(held, "metadata"), "finalizers",
			    json_pack("[s]", "example.com/hold"));
	json_decref(create(held));
	json_decref(create(in_ns(group("CompositePodGroup", "top", NULL), "team")));
	json_decref(create(in_ns(group("PodGroup", "leaf", "top"), "team")));
	json_decref(create(pod("elsewhere", "x")));

	json_t *ns = NULL;
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_namespace, NULL, "team", NULL, NULL, &ns), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(ns, "status"), "phase")),
			 "Terminating");
	json_decref(ns);
	json_t *obj = NULL;
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "team", "a", &obj), -ENOENT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod_group, "team", "leaf", &obj), -ENOENT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_composite_pod_group, "team", "top", &obj),
			 -ENOENT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "elsewhere", &obj), 0);
	json_decref(obj);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "team", "held", &obj), 0);
	ck_assert_ptr_nonnull(
	    json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp"));
	json_decref(obj);
	check_invariants();

	/* No new content while terminating; the last finalizer takes the namespace along. */
	struct pk_errors errs = {0};
	json_t *late = in_ns(pod("late", "x"), "team");
	ck_assert_int_eq(pk_store_create(st, late, &errs, NULL), -EPERM);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "being terminated"));
	pk_errors_clear(&errs);
	json_decref(late);
	json_t *patch = json_pack("{s:{s:n}}", "metadata", "finalizers");
	ck_assert_int_eq(pk_store_patch(st, &pk_type_pod, "team", "held", PK_PATCH_MERGE, patch,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);
	ck_assert_int_eq(pk_store_get(st, &pk_type_namespace, NULL, "team", &obj), -ENOENT);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_namespace, NULL, "default", NULL, &errs, NULL),
	    -EPERM);
	pk_errors_clear(&errs);
}
END_TEST

/* Writers, readers and a change-stream consumer at once (run under ASan/TSan-like load). */
struct stress {
	int id;
	int ok;
	uint64_t seen;
};

/* Batched edits: one commit, each object under its own precondition. */
static int edit_bind(json_t *obj, void *arg)
{
	json_t *spec = json_object_get(obj, "spec");

	if (!arg)
		return -EINVAL; /* an edit that refuses: left out alone */
	json_object_set_new(spec, "nodeName", json_string(arg));
	return pk_condition_set(obj, "PodScheduled", "True", "Scheduled", "bound", 0);
}

/* "TYPE name", or "TYPE name rv-mismatch" when the object is not the event's version. */
static int collect_types(const struct pk_store_event *ev, void *arg)
{
	char line[128];
	json_t *m = json_object_get(ev->object, "metadata");
	uint64_t rv =
	    strtoull(json_string_value(json_object_get(m, "resourceVersion")) ?: "0", NULL, 10);
	snprintf(line, sizeof(line), "%s %s%s", pk_event_type_to_string(ev->type),
		 json_string_value(json_object_get(m, "name")), rv == ev->rv ? "" : " rv-mismatch");
	json_array_append_new(arg, json_string(line));
	return 0;
}

START_TEST(test_edit_batch)
{
	json_t *a = create(pod("a", "x")), *b = create(pod("b", "x")), *c = create(pod("c", "x"));
	json_t *d = create(pod("d", "x"));
	uint64_t rv_b = strtoull(rv_of(b), NULL, 10);
	/* b changes behind the batch's back: its precondition is stale. */
	json_t *b2 = NULL;
	json_object_set_new(json_object_get(b, "metadata"), "labels",
			    json_pack("{s:s}", "app", "changed"));
	ck_assert_int_eq(pk_store_update_opts(st, b, PK_SUB_MAIN, NULL, NULL, &b2), 0);
	struct pk_store_stats before, after;
	pk_store_get_stats(st, &before);
	uint64_t since = pk_store_rv(st);
	struct pk_store_edit e[] = {
	    {.kind = &pk_type_pod,
	     .ns = "default",
	     .name = "a",
	     .precondition_rv = strtoull(rv_of(a), NULL, 10),
	     .apply = edit_bind,
	     .arg = "n1"},
	    {.kind = &pk_type_pod,
	     .ns = "default",
	     .name = "b",
	     .precondition_rv = rv_b,
	     .apply = edit_bind,
	     .arg = "n1"},
	    {.kind = &pk_type_pod,
	     .ns = "default",
	     .name = "c",
	     .apply = edit_bind,
	     .arg = "n2",
	     .delete_after = true},
	    {.kind = &pk_type_pod, .ns = "default", .name = "d", .apply = edit_bind, .arg = NULL},
	    {.kind = &pk_type_pod,
	     .ns = "default",
	     .name = "gone",
	     .apply = edit_bind,
	     .arg = "n1"},
	};
	ck_assert_int_eq(pk_store_edit_batch(st, e, 5), 0);
	pk_store_get_stats(st, &after);
	ck_assert_uint_eq(after.writes, before.writes + 1); /* one commit for the batch */
	/* every object there was written a moment ago: no row read back */
	ck_assert_uint_eq(after.cache_hits, before.cache_hits + 4);
	ck_assert_int_eq(e[0].rc, 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(e[0].object, "spec"), "nodeName")),
	    "n1");
	/* a binding is no change of the desired state: the generation stays */
	ck_assert_int_eq(
	    json_integer_value(
		json_object_get(json_object_get(e[0].object, "metadata"), "generation")),
	    json_integer_value(json_object_get(json_object_get(a, "metadata"), "generation")));
	ck_assert_int_eq(e[1].rc, -PK_STORE_ECONFLICT);
	ck_assert_str_eq(rv_of(e[1].object), rv_of(b2)); /* handed back as it is now */
	ck_assert_int_eq(e[2].rc, 0);
	ck_assert_int_eq(e[3].rc, -EINVAL);
	ck_assert_ptr_null(e[3].object);
	ck_assert_int_eq(e[4].rc, -ENOENT);
	json_t *got = NULL;
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "a", &got), 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(got, "spec"), "nodeName")), "n1");
	ck_assert_str_eq(rv_of(got), rv_of(e[0].object));
	json_decref(got);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "b", &got), 0);
	ck_assert_ptr_null(json_object_get(json_object_get(got, "spec"), "nodeName"));
	json_decref(got);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "c", &got), -ENOENT);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "d", &got), 0);
	ck_assert_str_eq(rv_of(got), rv_of(d));
	json_decref(got);
	/* Watchers: a's new state, then c's (with its condition) and its deletion,
	 * each event's object at that event's version (c's MODIFIED one is not
	 * the object its deletion stamped afterwards). */
	json_t *lines = json_array();
	ck_assert_int_eq(pk_store_events_since(st, since, 0, collect_types, lines, NULL), 0);
	ck_assert_int_eq(json_array_size(lines), 3);
	ck_assert_str_eq(json_string_value(json_array_get(lines, 0)), "MODIFIED a");
	ck_assert_str_eq(json_string_value(json_array_get(lines, 1)), "MODIFIED c");
	ck_assert_str_eq(json_string_value(json_array_get(lines, 2)), "DELETED c");
	json_decref(lines);
	for (size_t i = 0; i < 5; i++)
		json_decref(e[i].object);
	json_decref(a);
	json_decref(b);
	json_decref(b2);
	json_decref(c);
	json_decref(d);
}
END_TEST

static int edit_label(json_t *obj, void *arg)
{
	json_t *m = json_object_get(obj, "metadata"), *l = json_object_get(m, "labels");

	if (!json_is_object(l))
		json_object_set_new(m, "labels", l = json_object());
	return json_object_set_new(l, arg, json_string("yes"));
}

static const char *label_of(const json_t *obj, const char *key)
{
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

/*
 * A write starts from the tree the store last committed, never from one a
 * transaction wrote and undid, nor from an older one than a write earlier
 * in the same transaction.
 */
START_TEST(test_edit_starts_from_committed_tree)
{
	json_t *p = create(pod("p", "x")), *dry = NULL, *got = NULL;
	struct pk_store_write_opts o = {.dry_run = true};
	struct pk_store_stats before, after;
	struct pk_store_edit e[] = {
	    {.kind = &pk_type_pod, .ns = "default", .name = "p", .apply = edit_label, .arg = "one"},
	    {.kind = &pk_type_pod, .ns = "default", .name = "p", .apply = edit_label, .arg = "two"},
	};

	/* a dry run writes the row and rolls it back */
	edit_label(p, "dry");
	ck_assert_int_eq(pk_store_update_opts(st, p, PK_SUB_MAIN, &o, NULL, &dry), 0);
	ck_assert_str_eq(label_of(dry, "dry"), "yes");
	pk_store_get_stats(st, &before);
	ck_assert_int_eq(pk_store_edit_batch(st, e, 2), 0);
	pk_store_get_stats(st, &after);
	ck_assert_int_eq(e[0].rc, 0);
	ck_assert_int_eq(e[1].rc, 0);
	/* the second edit read the row the first wrote, in the open transaction */
	ck_assert_str_eq(label_of(e[1].object, "one"), "yes");
	ck_assert_str_eq(label_of(e[1].object, "two"), "yes");
	ck_assert_ptr_null(label_of(e[1].object, "dry"));
	ck_assert_uint_le(after.cache_hits, before.cache_hits + 1);
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "p", &got), 0);
	ck_assert_str_eq(rv_of(got), rv_of(e[1].object));
	ck_assert_ptr_null(label_of(got, "dry"));
	json_decref(got);
	/* the next one starts from what that batch committed */
	json_decref(e[0].object);
	e[0].arg = "three";
	ck_assert_int_eq(pk_store_edit_batch(st, e, 1), 0);
	ck_assert_str_eq(label_of(e[0].object, "two"), "yes");
	ck_assert_str_eq(label_of(e[0].object, "three"), "yes");
	pk_store_get_stats(st, &before);
	ck_assert_uint_eq(before.cache_hits, after.cache_hits + 1);
	json_decref(e[0].object);
	json_decref(e[1].object);
	json_decref(dry);
	json_decref(p);
}
END_TEST

static void *stress_writer(void *arg)
{
	struct stress *w = arg;
	for (int i = 0; i < 40; i++) {
		char name[32];
		snprintf(name, sizeof(name), "s%d-%d", w->id, i);
		json_t *p = pod(name, "s");
		w->ok += pk_store_create(st, p, NULL, NULL) == 0;
		json_decref(p);
	}
	return NULL;
}

static void *stress_reader(void *arg)
{
	struct stress *r = arg;
	for (int i = 0; i < 40; i++) {
		json_t *items = NULL;
		uint64_t rv = 0;
		if (pk_store_list(st, &pk_type_pod, "default", NULL, &items, &rv, NULL) == 0) {
			/* A snapshot never holds an object newer than its own version. */
			size_t k;
			json_t *obj;
			json_array_foreach(items, k, obj) if (strtoull(rv_of(obj), NULL, 10) > rv)
			    r->ok = -1000;
			if (r->ok >= 0)
				r->ok++;
		}
		json_decref(items);
	}
	return NULL;
}

static int count_added(const struct pk_store_event *ev, void *arg)
{
	struct stress *c = arg;
	c->ok += ev->type == PK_EVENT_ADDED;
	c->seen = ev->rv;
	return 0;
}

static void *stress_consumer(void *arg)
{
	struct stress *c = arg;
	while (c->ok < 160) {
		if (pk_store_events_since(st, c->seen, 0, count_added, c, NULL) < 0)
			break;
		if (c->ok < 160 && pk_store_wait(st, c->seen, 5000) == -ETIMEDOUT)
			break;
	}
	return NULL;
}

START_TEST(test_concurrency)
{
	pthread_t th[7];
	struct stress s[7] = {{0}};
	struct pk_store_stats before, after;
	pk_store_get_stats(st, &before);
	s[6].seen = pk_store_rv(st);
	for (int i = 0; i < 4; i++) {
		s[i].id = i;
		pthread_create(&th[i], NULL, stress_writer, &s[i]);
	}
	for (int i = 4; i < 6; i++)
		pthread_create(&th[i], NULL, stress_reader, &s[i]);
	pthread_create(&th[6], NULL, stress_consumer, &s[6]);
	for (int i = 0; i < 7; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s[i].ok, 40);
	ck_assert_int_eq(s[4].ok, 40);
	ck_assert_int_eq(s[5].ok, 40);
	ck_assert_int_eq(s[6].ok, 160);
	ck_assert_uint_eq(s[6].seen, pk_store_rv(st));
	/* every create was carried by a commit, some of them together; the
	 * commits are part of the writer lock's time */
	pk_store_get_stats(st, &after);
	ck_assert_uint_eq(after.commit_writers - before.commit_writers, 160);
	ck_assert_uint_ge(after.writes - before.writes, 1);
	ck_assert_uint_le(after.writes - before.writes, 160);
	ck_assert(after.commit_seconds > before.commit_seconds);
	ck_assert(after.lock_seconds - before.lock_seconds >=
		  after.commit_seconds - before.commit_seconds);
	check_invariants();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_crud_and_defaults);
	tcase_add_test(tc, test_pod_status_on_create);
	tcase_add_test(tc, test_owner_references_checked);
	tcase_add_test(tc, test_gc_candidates_from_indexes);
	tcase_add_test(tc, test_invalid_objects);
	tcase_add_test(tc, test_admission_rules_given_at_open);
	tcase_add_test(tc, test_priority_and_group_defaults);
	tcase_add_test(tc, test_events_and_ring);
	tcase_add_test(tc, test_hold_keeps_events_past_the_ring);
	tcase_add_test(tc, test_event_expiry_index);
	tcase_add_test(tc, test_finalizers_and_group_protection);
	tcase_add_test(tc, test_list_paging_selectors);
	tcase_add_test(tc, test_durability_across_reopen);
	tcase_add_test(tc, test_selector_syntax);
	tcase_add_test(tc, test_selector_text);
	tcase_add_test(tc, test_patches);
	tcase_add_test(tc, test_concurrency);
	tcase_add_test(tc, test_namespace_deletion);
	tcase_add_test(tc, test_edit_batch);
	tcase_add_test(tc, test_edit_starts_from_committed_tree);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
