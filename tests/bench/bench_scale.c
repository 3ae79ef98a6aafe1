/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_scale.c — one standalone appliance at scale: 100,000 hosts and
 * 1,000,000 pods (BENCH_SCALE_SUPERSLICES superslices of 256 tpu-superslice
 * hosts, BENCH_SCALE_PODS_PER_HOST bound pods on each, in 100 namespaces).
 *
 * The hosts are registered by podkerneld itself (--simulate-board); the pods
 * are written into the same store file with the store library while the
 * appliance is stopped (creating a million pods over HTTP would measure the
 * clients).  Then the real podkerneld restarts on it and, from outside:
 *
 *   restart     seconds from exec to "scheduling loop running"
 *   RSS         resident memory once settled after the start (bh_settled_rss_kb:
 *               the controllers' first passes included), and the peak
 *               during the restart (VmHWM), per pod over the hosts-only
 *               restart's
 *   page        a 500-object page of pods, cluster-wide and in one
 *               namespace (median of 9, ms)
 *   watch       a namespaced watch of pods from now: ms from a pod's
 *               acknowledged creation to its ADDED event (median of 9)
 *   backlog     2,000 gangs that never fit waiting, then 1,500 cube-bound
 *               gangs of 4 one-chip pods: pods/s until all are bound, the
 *               loop's re-lists meanwhile (podkernel_appliance_relists_total)
 *               and the client watch's 410s (it lists again, as informers do)
 *
 * Targets (docs/benchmarks.md): RSS <= 3 GiB, restart <= 30 s,
 * a 500-object page <= 50 ms.  PODKERNELD names another podkerneld;
 * BENCH_SCALE_SUPERSLICES=8 BENCH_SCALE_PODS_PER_HOST=2 is a quick look.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/store/store.h"

#define BH_NAME "bench_scale"
#include "tests/bench/bench_http.h"

#define NAMESPACES 100
#define BATCH 2000
#define SAMPLES 9
#define BACKLOG_GANGS 2000
#define GANGS 1500

static char tmpdir[256];
static char podkerneld[1024];
static struct bh_proc server; /* stopped at exit, also when a step dies */

static void stop_server(void)
{
	bh_stop(&server);
}

static void server_start(struct bh_proc *s, const char *dir, const char *board)
{
	bh_podkerneld_start(s, podkerneld, dir, board);
}

/* ---- the pods, written into the stopped appliance's store ---------------------------- */

static json_t *scale_pod(int ns, long i, const char *host)
{
	char name[32], nsname[32];

	snprintf(name, sizeof(name), "p%ld", i);
	snprintf(nsname, sizeof(nsname), "scale-%d", ns);
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s,s:[{s:s,s:s,s:{s:{s:s,s:s}}}]},"
			 "s:{s:s}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
			 nsname, "labels", "app", "scale", "spec", "nodeName", host, "containers",
			 "name", "c", "image", "x", "resources", "requests", "cpu", "100m",
			 "memory", "64Mi", "status", "phase", "Running");
}

static int flush(struct pk_store *st, json_t **objs, size_t n)
{
	int rcs[BATCH];
	int r = pk_store_create_batch(st, objs, n, rcs);

	for (size_t i = 0; i < n; i++) {
		if (r == 0 && rcs[i] != 0)
			r = rcs[i];
		json_decref(objs[i]);
	}
	return r;
}

static double populate(const char *dir, int hosts, int per_host)
{
	struct pk_store *st;
	json_t *objs[BATCH];
	char err[512], host[48];
	size_t n = 0;
	double t0 = bh_now_s();
	long i = 0;

	if (pk_store_open_opts(dir, NULL, &st, err, sizeof(err)) < 0)
		bh_die("cannot open the store: %s", err);
	for (int ns = 0; ns < NAMESPACES; ns++) {
		char name[32];

		snprintf(name, sizeof(name), "scale-%d", ns);
		objs[n++] = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				      "metadata", "name", name);
	}
	if (flush(st, objs, n) < 0)
		bh_die("cannot create the %s", "namespaces");
	n = 0;
	for (int h = 0; h < hosts; h++) {
		bh_host_name(h, host, sizeof(host));
		for (int k = 0; k < per_host; k++, i++) {
			objs[n++] = scale_pod((int)(i % NAMESPACES), i, host);
			if (n == BATCH) {
				if (flush(st, objs, n) < 0)
					bh_die("cannot create %s", "pods");
				n = 0;
			}
		}
	}
	if (n && flush(st, objs, n) < 0)
		bh_die("cannot create %s", "pods");
	pk_store_close(st);
	return bh_now_s() - t0;
}

/* ---- reads ------------------------------------------------------------------------------ */

static double get_ms(CURL *c, int port, const char *path)
{
	char url[512];
	struct bh_buf out = {0};
	long status = 0;
	double t0 = bh_now_s();

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bh_buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	t0 = (bh_now_s() - t0) * 1000;
	if (status != 200 || !out.s || !strstr(out.s, "\"items\""))
		bh_die("list failed: %s", path);
	free(out.s);
	return t0;
}

static double page_ms(int port, const char *path)
{
	double v[SAMPLES];
	CURL *c = curl_easy_init();

	for (int i = 0; i < SAMPLES; i++)
		v[i] = get_ms(c, port, path);
	curl_easy_cleanup(c);
	return bh_median(v, SAMPLES);
}

/* A watch from now in ns; a pod created; ms until its ADDED event arrives. */
static double watch_ms(int port, const char *ns)
{
	double v[SAMPLES];
	CURL *c = curl_easy_init();

	for (int i = 0; i < SAMPLES; i++) {
		struct bh_watch w;
		char name[32];
		double t0;

		/* the watch counts bound pods: the pod is created bound */
		bh_watch_start(&w, port, ns, 1);
		usleep(100000); /* the watch is open */
		snprintf(name, sizeof(name), "w%d", i);
		t0 = bh_now_s();
		bh_post_pod(c, port, ns, name, "none", "tpu-ss0-h0", NULL, 0);
		v[i] = (bh_watch_finish(&w) - t0) * 1000;
	}
	curl_easy_cleanup(c);
	return bh_median(v, SAMPLES);
}

/* A counter of podkerneld's /metrics (-1 when absent). */
static long metric(int port, const char *name)
{
	char url[128], *at;
	struct bh_buf out = {0};
	CURL *c = curl_easy_init();
	long v = -1;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bh_buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	for (at = out.s; at && (at = strstr(at, name)); at += strlen(name))
		if ((at == out.s || at[-1] == '\n') && at[strlen(name)] == ' ')
			v = atol(at + strlen(name) + 1);
	free(out.s);
	return v;
}

/*
 * gangs of 4 one-chip pods (a quick look's few hosts get fewer): pods/s, or
 * 0 when the watch ended first; *ret_relists: the times the clients' watch
 * was answered 410 and listed again.
 */
static double backlog_pods_per_s(int port, int gangs, int *ret_relists)
{
	struct bh_watch w;
	double t0;
	bool failed;

	bh_namespace(port, "backlog");
	bh_namespace(port, "e2e");
	bh_create_gangs(port, "backlog", BACKLOG_GANGS, 8, false, NULL);
	bh_watch_start(&w, port, "e2e", gangs * 4);
	t0 = bh_now_s();
	bh_create_gangs(port, "e2e", gangs, 1, false, NULL);
	pthread_join(w.thread, NULL);
	failed = atomic_load(&w.failed);
	*ret_relists = w.relists;
	if (failed)
		fprintf(stderr, "bench_scale: the watch ended: %s, %d of %d pods seen bound\n",
			curl_easy_strerror((CURLcode)w.end), (int)json_object_size(w.bound),
			w.target);
	free(w.rv);
	free(w.line.s);
	json_decref(w.bound);
	return failed ? 0 : gangs * 4 / (w.last_bind - t0);
}

int main(void)
{
	int ss = bh_env_int("BENCH_SCALE_SUPERSLICES", 391),
	    per_host = bh_env_int("BENCH_SCALE_PODS_PER_HOST", 10);
	int hosts = ss * 256;
	long pods = (long)hosts * per_host;
	char dir[300], board[300];
	struct bh_proc *s = &server;
	long rss_hosts, rss, peak;
	double t0, restart, fill;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	atexit(stop_server);
	bh_prepare(tmpdir, sizeof(tmpdir), podkerneld, sizeof(podkerneld));
	snprintf(dir, sizeof(dir), "%s/scale", tmpdir);
	snprintf(board, sizeof(board), "%s/board.yaml", tmpdir);
	bh_write_board(board, ss);

	server_start(s, dir, board); /* registers the hosts */
	bh_stop(s);
	server_start(s, dir, NULL);
	rss_hosts = bh_settled_rss_kb(s);
	bh_stop(s);
	fill = populate(dir, hosts, per_host);

	t0 = bh_now_s();
	server_start(s, dir, NULL);
	restart = bh_now_s() - t0;
	rss = bh_settled_rss_kb(s);
	peak = bh_status_kb(s, "VmHWM:");

	printf("%-56s %12s %10s\n", "benchmark (one appliance at scale)", "result", "target");
	printf("%-56s %7d hosts %ld pods (written in %.0f s)\n", "cluster", hosts, pods, fill);
	printf("%-56s %10.1f s %10s\n", "restart: exec to scheduling loop running", restart,
	       "<=30 s");
	printf("%-56s %8ld MiB %10s  (%.2f KiB/pod)\n", "RSS: running", rss / 1024, "<=3072 MiB",
	       (double)(rss - rss_hosts) / (double)pods);
	printf("%-56s %8ld MiB %10s  (%.2fx running)\n", "RSS peak during the restart", peak / 1024,
	       "", (double)peak / (double)rss);
	printf("%-56s %9.1f ms %10s\n", "page of 500 pods, cluster-wide",
	       page_ms(s->port, "/api/v1/pods?limit=500"), "<=50 ms");
	printf("%-56s %9.1f ms %10s\n", "page of 500 pods, one namespace",
	       page_ms(s->port, "/api/v1/namespaces/scale-7/pods?limit=500"), "<=50 ms");
	printf("%-56s %9.1f ms\n", "namespaced watch: creation to ADDED",
	       watch_ms(s->port, "scale-7"));
	int gangs = hosts / 2 < GANGS ? hosts / 2 : GANGS, relists = 0;
	long loop_relists = metric(s->port, "podkernel_appliance_relists_total");
	double bps = backlog_pods_per_s(s->port, gangs, &relists);

	loop_relists = metric(s->port, "podkernel_appliance_relists_total") - loop_relists;
	if (bps > 0)
		printf("%-56s %9.0f /s  (%d gangs; loop relists %ld, watch 410s %d)\n",
		       "backlog: gangs of 4 with 2,000 that never fit", bps, gangs, loop_relists,
		       relists);
	else
		printf("%-56s %12s  (%d gangs; loop relists %ld; see %s)\n",
		       "backlog: gangs of 4 with 2,000 that never fit", "not bound", gangs,
		       loop_relists, s->log);
	bh_stop(s);
	/* the store (gigabytes at full size) goes, but for a failed backlog's log */
	if (bps > 0) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_scale: cannot remove %s\n", tmpdir);
	}
	curl_global_cleanup();
	return 0;
}
