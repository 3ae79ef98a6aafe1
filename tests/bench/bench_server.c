/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_server.c — podkerneld's store and server throughput.
 *
 *   durable writes/s   pod creates through pk_server_handle() (router, body
 *                      parsing, defaulting, validation, committed before the
 *                      call returns) from 1 and from 8 concurrent clients
 *                      (these share commits), against the floor of this
 *                      disk: a 4 KiB write + fdatasync() per operation,
 *                      measured in the same run.
 *   watch fan-out      events/s delivered to N concurrent watchers (threads
 *                      reading pk_watch_read()) that all resume from the same
 *                      old resourceVersion and drain FANOUT_EVENTS committed
 *                      events from the ring (so the disk does not bound it),
 *                      against N = 1 in the same run.
 *   ring read          nanoseconds per pk_store_events_since() call of a
 *                      watcher one event behind, with a full ring
 *                      (PK_STORE_RING_SIZE events), against the same call on
 *                      a ring of RING_SMALL events: about 1 when a call costs
 *                      what it returns, not the ring's size.
 *   server-side apply  microseconds per list item of an apply (dry run, forced
 *                      over another manager's fields) of a Node with N
 *                      taints, N = 500 and 4000: the ratio of the two
 *                      per-item costs is about 1 when apply is linear in its
 *                      lists (it was quadratic).
 *
 * Each figure is the median of RUNS runs.  Data lives under $TMPDIR (a real
 * disk; /dev/shm would hide the cost of durability).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/builder/builder.h"
#include "kernel/server/server.h"

#define RUNS 5
#define WRITES 200
#define FANOUT_EVENTS 2000
#define RING_SMALL 16
#define RING_CALLS 20000

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void make_dir(char *buf, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(buf, len, "%s/pk-bench-server-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void remove_dir(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* The floor: one 4 KiB write and fdatasync per operation. */
static double fsync_per_s(void)
{
	char dir[256], path[300];
	make_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char block[4096];
	memset(block, 'x', sizeof(block));
	double t0 = now();
	for (int i = 0; i < WRITES; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) || fdatasync(fd) < 0)
			break;
	double dt = now() - t0;
	close(fd);
	remove_dir(dir);
	return WRITES / dt;
}

static int open_server(const char *dir, struct pk_store **st, struct pk_server **srv)
{
	char err[256];
	struct pk_server_config cfg = {0};
	struct pk_store_open_opts so = {.admission = wb_admission, .nadmission = WB_ADMISSION_N};
	if (pk_store_open_opts(dir, &so, st, err, sizeof(err)) < 0 ||
	    pk_server_new(*st, &cfg, srv, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_server: %s\n", err);
		return -1;
	}
	return 0;
}

static int create_pod(struct pk_server *srv, int i)
{
	char body[256];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\","
		 "\"labels\":{\"app\":\"bench\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
		 "\"image\":\"i\"}]}}",
		 i);
	struct pk_request req = {.method = "POST",
				 .path = "/api/v1/namespaces/default/pods",
				 .content_type = "application/json",
				 .body = body,
				 .body_len = strlen(body)};
	struct pk_response resp;
	pk_server_handle(srv, &req, &resp);
	int status = resp.status;
	pk_response_clear(&resp);
	return status == 201 ? 0 : -1;
}

struct writer {
	struct pk_server *srv;
	pthread_t thread;
	int first, count, ok;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	for (int i = 0; i < w->count; i++)
		w->ok += create_pod(w->srv, w->first + i) == 0;
	return NULL;
}

/* Acknowledged creates per second from nthreads concurrent clients. */
static double writes_per_s(int nthreads)
{
	char dir[256];
	make_dir(dir, sizeof(dir));
	struct pk_store *st = NULL;
	struct pk_server *srv = NULL;
	double rate = 0;
	if (open_server(dir, &st, &srv) == 0) {
		struct writer w[16];
		double t0 = now();
		for (int i = 0; i < nthreads; i++) {
			w[i] = (struct writer){
			    .srv = srv, .first = i * WRITES, .count = WRITES / nthreads};
			pthread_create(&w[i].thread, NULL, writer_main, &w[i]);
		}
		int ok = 0;
		for (int i = 0; i < nthreads; i++) {
			pthread_join(w[i].thread, NULL);
			ok += w[i].ok;
		}
		rate = ok / (now() - t0);
	}
	pk_server_free(srv);
	pk_store_close(st);
	remove_dir(dir);
	return rate;
}

struct watcher {
	struct pk_server *srv;
	pthread_t thread;
	long events;
	pthread_barrier_t *ready;
};

static void *watch_main(void *arg)
{
	struct watcher *w = arg;
	struct pk_query_arg args[] = {{"watch", "true"}, {"resourceVersion", "3"}};
	struct pk_request req = {.method = "GET", .path = "/api/v1/pods", .args = args, .nargs = 2};
	struct pk_response resp;
	pthread_barrier_wait(w->ready);
	pk_server_handle(w->srv, &req, &resp);
	char buf[65536];
	while (resp.watch && w->events < FANOUT_EVENTS) {
		ssize_t n = pk_watch_read(resp.watch, buf, sizeof(buf), 2000);
		if (n < 0)
			break;
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			w->events += buf[i] == '\n';
	}
	pk_response_clear(&resp);
	return NULL;
}

/* Events per second delivered to all watchers together, replaying the ring. */
static double fanout_events_per_s(struct pk_server *srv, int nwatchers)
{
	struct watcher *w = calloc((size_t)nwatchers, sizeof(*w));
	pthread_barrier_t ready;
	pthread_barrier_init(&ready, NULL, (unsigned)nwatchers + 1);
	for (int i = 0; i < nwatchers; i++) {
		w[i] = (struct watcher){.srv = srv, .ready = &ready};
		pthread_create(&w[i].thread, NULL, watch_main, &w[i]);
	}
	/* Start the clock before releasing the watchers: the main thread may be
	 * descheduled right after the barrier. */
	double t0 = now();
	pthread_barrier_wait(&ready);
	long total = 0;
	for (int i = 0; i < nwatchers; i++) {
		pthread_join(w[i].thread, NULL);
		total += w[i].events;
	}
	double rate = (double)total / (now() - t0);
	pthread_barrier_destroy(&ready);
	free(w);
	return rate;
}

static int count_event(const struct pk_store_event *ev, void *arg)
{
	(void)ev;
	(*(long *)arg)++;
	return 0;
}

/* Nanoseconds per ring read of a watcher one event behind (median of RUNS). */
static double events_since_ns(struct pk_store *st)
{
	uint64_t since = pk_store_rv(st) - 1;
	double v[RUNS];
	long got = 0;
	for (int r = 0; r < RUNS; r++) {
		double t0 = now();
		for (int i = 0; i < RING_CALLS; i++)
			if (pk_store_events_since(st, since, 0, count_event, &got, NULL) < 0)
				exit(1);
		v[r] = (now() - t0) * 1e9 / RING_CALLS;
	}
	if (got != (long)RUNS * RING_CALLS)
		exit(1);
	return median(v, RUNS);
}

/* The cost of a ring read with RING_SMALL events, then with a full ring. */
static void ring_read_figures(struct pk_store *st, struct pk_server *srv, const char *dir)
{
	char small_dir[300];
	snprintf(small_dir, sizeof(small_dir), "%s/small", dir);
	struct pk_store *sst = NULL;
	struct pk_server *ssrv = NULL;
	if (mkdir(small_dir, 0700) < 0 || open_server(small_dir, &sst, &ssrv) < 0)
		exit(1);
	for (int i = 0; i < RING_SMALL; i++)
		create_pod(ssrv, i);
	double small = events_since_ns(sst);
	pk_server_free(ssrv);
	pk_store_close(sst);
	struct pk_store_stats s;
	pk_store_get_stats(st, &s);
	for (int i = FANOUT_EVENTS; s.ring_events < PK_STORE_RING_SIZE; i++) {
		if (create_pod(srv, i) < 0)
			exit(1);
		pk_store_get_stats(st, &s);
	}
	double full = events_since_ns(st);
	char name[64];
	snprintf(name, sizeof(name), "ring read, %d events, 1 new (per call)", RING_SMALL);
	printf("%-44s %9.0f ns %12s\n", name, small, "1.00");
	snprintf(name, sizeof(name), "ring read, %d events, 1 new (per call)", PK_STORE_RING_SIZE);
	printf("%-44s %9.0f ns %11.2fx\n", name, full, full / small);
}

/* A Node of n taints as JSON (malloc'ed); tag makes the values differ. */
static char *taint_node(const char *name, int n, char tag)
{
	size_t cap = 256 + (size_t)n * 64, o = 0;
	char *b = malloc(cap);
	if (!b)
		exit(1);
	o += (size_t)snprintf(b + o, cap - o,
			      "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
			      "\"%s\"},\"spec\":{\"taints\":[",
			      name);
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(
		    b + o, cap - o,
		    "%s{\"key\":\"k%d\",\"value\":\"%c\",\"effect\":\"NoSchedule\"}", i ? "," : "",
		    i, tag);
	snprintf(b + o, cap - o, "]}}");
	return b;
}

static int apply_node(struct pk_server *srv, const char *name, const char *body,
		      const char *manager, bool dry)
{
	char path[128];
	struct pk_query_arg args[3] = {
	    {"fieldManager", manager}, {"force", "true"}, {"dryRun", "All"}};
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	struct pk_request req = {.method = "PATCH",
				 .path = path,
				 .args = args,
				 .nargs = dry ? 3 : 2,
				 .content_type = "application/apply-patch+yaml",
				 .body = body,
				 .body_len = strlen(body)};
	struct pk_response resp;
	pk_server_handle(srv, &req, &resp);
	int status = resp.status;
	pk_response_clear(&resp);
	return status == 200 || status == 201 ? 0 : -1;
}

/* Microseconds per taint of a forced dry-run apply over another manager's n taints. */
static double apply_us_per_item(struct pk_server *srv, int n)
{
	char name[32];
	snprintf(name, sizeof(name), "taints%d", n);
	char *first = taint_node(name, n, 'a'), *second = taint_node(name, n, 'b');
	double v[RUNS];
	if (apply_node(srv, name, first, "a", false) < 0)
		exit(1);
	for (int r = 0; r < RUNS; r++) {
		double t0 = now();
		if (apply_node(srv, name, second, "b", true) < 0)
			exit(1);
		v[r] = (now() - t0) * 1e6 / n;
	}
	free(first);
	free(second);
	return median(v, RUNS);
}

int main(void)
{
	double floor_v[RUNS], writes_v[RUNS], par_v[RUNS];
	for (int r = 0; r < RUNS; r++) {
		floor_v[r] = fsync_per_s();
		writes_v[r] = writes_per_s(1);
		par_v[r] = writes_per_s(8);
	}
	double fl = median(floor_v, RUNS), wr = median(writes_v, RUNS), pw = median(par_v, RUNS);
	printf("%-44s %12s %12s\n", "benchmark", "median", "ratio");
	printf("%-44s %10.0f/s %12s\n", "floor: 4 KiB write + fdatasync", fl, "1.00");
	printf("%-44s %10.0f/s %11.2fx\n", "durable pod creates, 1 client", wr, wr / fl);
	printf("%-44s %10.0f/s %11.2fx\n", "durable pod creates, 8 clients (group commit)", pw,
	       pw / fl);

	/* The fan-out store lives in memory when it can: durability is not measured here. */
	char dir[256];
	const char *tmp = getenv("TMPDIR");
	if (access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 1);
	make_dir(dir, sizeof(dir));
	if (tmp)
		setenv("TMPDIR", tmp, 1);
	else
		unsetenv("TMPDIR");
	struct pk_store *st = NULL;
	struct pk_server *srv = NULL;
	if (open_server(dir, &st, &srv) < 0)
		return 1;
	for (int i = 0; i < FANOUT_EVENTS; i++)
		create_pod(srv, i);
	static const int fan[] = {1, 16, 64};
	double base = 0;
	for (size_t k = 0; k < sizeof(fan) / sizeof(*fan); k++) {
		double v[RUNS];
		for (int r = 0; r < RUNS; r++)
			v[r] = fanout_events_per_s(srv, fan[k]);
		double m = median(v, RUNS);
		if (k == 0)
			base = m;
		char name[64];
		snprintf(name, sizeof(name), "watch fan-out, %d watcher%s (events)", fan[k],
			 fan[k] > 1 ? "s" : "");
		printf("%-44s %10.0f/s %11.2fx\n", name, m, m / base);
	}
	ring_read_figures(st, srv, dir);
	double small = apply_us_per_item(srv, 500), large = apply_us_per_item(srv, 4000);
	printf("%-44s %9.2f us %12s\n", "server-side apply, 500 list items (per item)", small,
	       "1.00");
	printf("%-44s %9.2f us %11.2fx\n", "server-side apply, 4000 list items (per item)", large,
	       large / small);
	pk_server_free(srv);
	pk_store_close(st);
	remove_dir(dir);
	return wr > 0 && base > 0 ? 0 : 1;
}
