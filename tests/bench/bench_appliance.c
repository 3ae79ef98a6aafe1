/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_appliance.c — podkerneld end to end, measured from outside: the real
 * program started with --simulate-board (tpu-superslice hosts of 4 chips,
 * cubes of 16 hosts), 8 client threads creating objects over HTTP with
 * libcurl (one keep-alive connection each), and one watch counting bound
 * pods.
 *
 *   floor      1,500 cube-bound gangs of 4 one-chip pods on 4,096 hosts,
 *              created already bound (spec.nodeName set): the API server and
 *              the store alone, pods/s until the watch has seen them all
 *   e2e        the same gangs unbound: pods/s until the watch has seen every
 *              pod bound by the scheduling loop (target >= 0.7x floor)
 *   backlog    e2e with 2,000 gangs that never fit (8 chips per pod on
 *              4-chip hosts) waiting in the queue (target >= 0.8x e2e)
 *   gang-1024  a 3-level gang (job -> 64 cube shards of 16 one-chip pods,
 *              job superslice-bound) on 16,384 hosts: ms from the last
 *              pod's acknowledged creation to its last binding seen by the
 *              watch (target <= 50 ms)
 *   RSS        podkerneld's resident memory with 16,384 hosts, and after
 *              20,000 pods more: KiB per node and per pod, once settled
 *              after the start (bh_settled_rss_kb); and the peak while
 *              restarting on them (VmHWM, over the node-only one and as a
 *              ratio of the settled figure: target <= 1.2x)
 *
 * Every figure is the median of RUNS runs; floor, e2e and backlog of one run
 * each start a fresh podkerneld on a copy of the same node-only data
 * directory (registering 4,096 nodes is not measured).  Data lives under
 * $TMPDIR (a real disk: durability is part of the cost).
 * BENCH_APPLIANCE_RUNS and BENCH_APPLIANCE_GANGS change the run count and
 * the gang count, BENCH_APPLIANCE_ONLY=small|large runs half of it (quick
 * looks), BENCH_APPLIANCE_ONLY=rss the memory rows of the large half
 * without its gang-1024 runs, BENCH_APPLIANCE_KEEP=DIR keeps the large
 * half's data directory there (16,384 hosts and 20,000 pods: a store to
 * restart under a profiler), BENCH_APPLIANCE_ONLY=gang one gang-1024 between the shell commands
 * $BENCH_APPLIANCE_BEFORE and $BENCH_APPLIANCE_AFTER (a profiler's switches;
 * $BENCH_PID is podkerneld's pid); PODKERNELD names another podkerneld.
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

#define BH_NAME "bench_appliance"
#include "tests/bench/bench_http.h"

#define RUNS 3
#define GANGS 1500
#define BACKLOG_GANGS 2000
#define HOSTS_SMALL 16 /* superslices: 4,096 hosts */
#define HOSTS_LARGE 64 /* 16,384 hosts */
#define RSS_PODS 20000

/* ---- podkerneld ----------------------------------------------------------------- */

static char tmpdir[256];
static char podkerneld[1024];

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	if (system(cmd) != 0)
		bh_die("command failed: %s", cmd);
}

/* Start podkerneld on dir (board may be NULL); waits for the scheduling loop. */
static void server_start(struct bh_proc *s, const char *dir, const char *board)
{
	bh_podkerneld_start(s, podkerneld, dir, board);
}

static long server_rss_kb(const struct bh_proc *s)
{
	return bh_settled_rss_kb(s);
}

/* ---- HTTP -------------------------------------------------------------------------- */

/* ---- the watch ----------------------------------------------------------------------- */

/* ---- objects ----------------------------------------------------------------------- */

static void post_group(CURL *c, int port, const char *ns, bool composite, const char *name,
		       const char *parent, int min, const char *key)
{
	char body[1024], path[256], par[160] = "";

	if (parent)
		snprintf(par, sizeof(par), ",\"parentCompositePodGroupName\":\"%s\"", parent);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"scheduling.k8s.io/v1alpha3\",\"kind\":\"%s\","
		 "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"workloadRef\":{\"workloadName\":"
		 "\"bench\",\"templateName\":\"t\"}%s,\"schedulingPolicy\":{\"gang\":{\"%s\":%d}},"
		 "\"schedulingConstraints\":{\"topology\":[{\"key\":\"%s\"}]}}}",
		 composite ? "CompositePodGroup" : "PodGroup", name, par,
		 composite ? "minGroupCount" : "minCount", min, key);
	snprintf(path, sizeof(path), "/apis/scheduling.k8s.io/v1alpha3/namespaces/%s/%s", ns,
		 composite ? "compositepodgroups" : "podgroups");
	if (bh_post(c, port, path, body) != 201)
		bh_die("cannot create group %s", name);
}

#define SS_KEY "topology.podkernel.dev/superslice"

/* ---- the figures ---------------------------------------------------------------------- */

static char nodes_dir[300], backlog_dir[300], board_small[300], board_large[300];

/* pods/s of ngangs gangs (prebound or scheduled), optionally after a backlog. */
/* Scheduling attempts so far (the appliance's metrics). */
static long attempts(int port)
{
	char url[128];
	struct bh_buf out = {0};
	CURL *c = curl_easy_init();
	long n = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bh_buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	for (char *l = out.s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (strncmp(l, "scheduler_podgroup_schedule_attempts_total{", 43) == 0)
			n += atol(strchr(l, '}') + 1);
	free(out.s);
	return n;
}

/* The node-only data directory plus BACKLOG_GANGS never-fitting gangs. */
static void make_backlog_dir(void)
{
	struct bh_proc s = {0};
	char cmd[900];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'", backlog_dir, nodes_dir,
		 backlog_dir);
	if (system(cmd) != 0)
		bh_die("cannot copy %s", nodes_dir);
	server_start(&s, backlog_dir, NULL);
	bh_namespace(s.port, "backlog");
	bh_create_gangs(s.port, "backlog", BACKLOG_GANGS, 8, false, NULL);
	bh_stop(&s);
}

/* pods/s of ngangs gangs (prebound or scheduled), on a copy of from. */
static double gang_rate(int run, const char *what, int ngangs, bool prebound, const char *from)
{
	struct bh_proc s = {0};
	struct bh_watch w;
	char dir[300], cmd[900];
	double t0, t1;

	snprintf(dir, sizeof(dir), "%s/%s-%d", tmpdir, what, run);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'", dir, from, dir);
	if (system(cmd) != 0)
		bh_die("cannot copy %s", from);
	server_start(&s, dir, NULL);
	bh_namespace(s.port, "bench");
	/* Every backlog gang tried once (its conditions written) and parked. */
	for (double t = bh_now_s(); from == backlog_dir && bh_now_s() - t < BH_TIMEOUT_S;) {
		if (attempts(s.port) >= BACKLOG_GANGS)
			break;
		usleep(50000);
	}
	/* ... and the loop quiet: no write for 300 ms. */
	for (char *rv = from == backlog_dir ? bh_list_rv(s.port, "backlog") : NULL, *again; rv;
	     rv = again) {
		usleep(300000);
		again = bh_list_rv(s.port, "backlog");
		if (strcmp(rv, again) == 0) {
			free(again);
			again = NULL;
		}
		free(rv);
	}
	bh_watch_start(&w, s.port, "bench", ngangs * 4);
	t0 = bh_now_s();
	bh_create_gangs(s.port, "bench", ngangs, 1, prebound, NULL);
	t1 = bh_watch_finish(&w);
	bh_stop(&s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.log'", dir, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_appliance: cannot remove %s\n", dir);
	return ngangs * 4 / (t1 - t0);
}

struct big_gang {
	int port;
	const char *ns;
	int first;
	double last_ack;
};

static void *big_gang_main(void *arg)
{
	struct big_gang *k = arg;
	CURL *c = curl_easy_init();

	for (int sh = k->first; sh < 64; sh += BH_CLIENTS) {
		char g[32], p[48];

		snprintf(g, sizeof(g), "shard-%d", sh);
		post_group(c, k->port, k->ns, false, g, "job", 16, BH_CUBE_KEY);
		for (int i = 0; i < 16; i++) {
			snprintf(p, sizeof(p), "shard-%d-%d", sh, i);
			bh_post_pod(c, k->port, k->ns, p, g, NULL, NULL, 1);
		}
	}
	k->last_ack = bh_now_s();
	curl_easy_cleanup(c);
	return NULL;
}

/* ms from the last pod's creation to the last binding of a 1,024-pod gang. */
static double gang_1024_ms(int port, int run)
{
	struct big_gang k[BH_CLIENTS];
	pthread_t t[BH_CLIENTS];
	struct bh_watch w;
	char ns[32];
	double last = 0;
	CURL *c = curl_easy_init();

	snprintf(ns, sizeof(ns), "gang-%d", run);
	bh_namespace(port, ns);
	bh_watch_start(&w, port, ns, 1024);
	post_group(c, port, ns, true, "job", NULL, 64, SS_KEY);
	curl_easy_cleanup(c);
	for (int i = 0; i < BH_CLIENTS; i++) {
		k[i] = (struct big_gang){.port = port, .ns = ns, .first = i};
		pthread_create(&t[i], NULL, big_gang_main, &k[i]);
	}
	for (int i = 0; i < BH_CLIENTS; i++) {
		pthread_join(t[i], NULL);
		if (k[i].last_ack > last)
			last = k[i].last_ack;
	}
	return (bh_watch_finish(&w) - last) * 1e3;
}

static void setup(void)
{
	bh_prepare(tmpdir, sizeof(tmpdir), podkerneld, sizeof(podkerneld));
	snprintf(board_small, sizeof(board_small), "%s/board-4096.yaml", tmpdir);
	snprintf(board_large, sizeof(board_large), "%s/board-16384.yaml", tmpdir);
	bh_write_board(board_small, HOSTS_SMALL);
	bh_write_board(board_large, HOSTS_LARGE);
	snprintf(nodes_dir, sizeof(nodes_dir), "%s/nodes-4096", tmpdir);
	snprintf(backlog_dir, sizeof(backlog_dir), "%s/backlog-4096", tmpdir);
}

/* Floor, e2e and backlog on 4,096 hosts; runs of each, interleaved. */
static void small_figures(int runs, int gangs)
{
	double fl[RUNS * 4], e2e[RUNS * 4], bl[RUNS * 4];
	struct bh_proc s = {0};

	/* The node-only data directory every 4,096-host run starts from. */
	server_start(&s, nodes_dir, board_small);
	bh_stop(&s);
	make_backlog_dir();
	for (int r = 0; r < runs; r++) {
		fl[r] = gang_rate(r, "floor", gangs, true, nodes_dir);
		e2e[r] = gang_rate(r, "e2e", gangs, false, nodes_dir);
		bl[r] = gang_rate(r, "backlog", gangs, false, backlog_dir);
	}
	double f = bh_median(fl, runs), e = bh_median(e2e, runs), b = bh_median(bl, runs);

	printf("%-52s %10.0f/s %10s\n", "floor: 6,000 pods created pre-bound, 4,096 hosts", f,
	       "1.00");
	printf("%-52s %10.0f/s %9.2fx %8s\n", "e2e: 1,500 gangs of 4 created and bound", e, e / f,
	       ">=0.70x");
	printf("%-52s %10.0f/s %9.2fx %8s  (of e2e)\n",
	       "backlog: e2e with 2,000 never-fitting gangs", b, b / e, ">=0.80x");
	fflush(stdout);
}

/* 16,384 hosts: the big gang, then memory (live, and after a restart from the store). */
static void large_figures(int runs)
{
	double g1024[RUNS * 4];
	struct bh_proc s = {0};
	long rss0, rss1, rss1r, rss2, rss2r, peak1r, peak2r;
	char dir[300];
	struct bh_watch w;
	int rss_gangs = (RSS_PODS - runs * 1024) / 4, rss_pods = runs * 1024 + rss_gangs * 4;

	snprintf(dir, sizeof(dir), "%s/large", tmpdir);
	server_start(&s, dir, NULL);
	rss0 = server_rss_kb(&s);
	bh_stop(&s);
	sh("rm -rf '%s'%s", dir, "");
	server_start(&s, dir, board_large);
	rss1 = server_rss_kb(&s);
	bh_stop(&s);
	server_start(&s, dir, NULL);
	rss1r = server_rss_kb(&s);
	peak1r = bh_status_kb(&s, "VmHWM:");
	for (int r = 0; r < runs; r++)
		g1024[r] = gang_1024_ms(s.port, r);
	bh_namespace(s.port, "rss");
	bh_watch_start(&w, s.port, "rss", rss_gangs * 4);
	bh_create_gangs(s.port, "rss", rss_gangs, 1, false, NULL);
	bh_watch_finish(&w);
	rss2 = server_rss_kb(&s);
	bh_stop(&s);
	server_start(&s, dir, NULL);
	rss2r = server_rss_kb(&s);
	peak2r = bh_status_kb(&s, "VmHWM:");
	bh_stop(&s);
	if (getenv("BENCH_APPLIANCE_KEEP") && *getenv("BENCH_APPLIANCE_KEEP"))
		sh("rm -rf '%s' && cp -r '%s' \"$BENCH_APPLIANCE_KEEP\"",
		   getenv("BENCH_APPLIANCE_KEEP"), dir);

	if (runs > 0)
		printf("%-52s %9.1f ms %10s %8s\n",
		       "gang-1024: last creation to last binding, 16,384 h", bh_median(g1024, runs),
		       "", "<=50 ms");
	printf("%-52s %8ld KiB\n", "RSS: podkerneld, no nodes", rss0);
	printf("%-52s %8ld KiB %7.2f KiB/node\n", "RSS: 16,384 hosts registered", rss1,
	       (double)(rss1 - rss0) / 16384);
	printf("%-52s %8ld KiB %7.2f KiB/node (<=3)\n", "RSS: 16,384 hosts, restarted", rss1r,
	       (double)(rss1r - rss0) / 16384);
	printf("%-52s %8ld KiB %7.2f KiB/pod\n", "RSS: + 20,000 pods created and bound", rss2,
	       (double)(rss2 - rss1r) / rss_pods);
	printf("%-52s %8ld KiB %7.2f KiB/pod (<=1)\n", "RSS: + 20,000 pods, restarted", rss2r,
	       (double)(rss2r - rss1r) / rss_pods);
	/* the restart's peak: what reading every object back costs at once */
	printf("%-52s %8ld KiB %7.2f KiB/pod %5.2fx settled (<=1.2x)\n",
	       "RSS peak: + 20,000 pods, during the restart", peak2r,
	       (double)(peak2r - peak1r) / rss_pods, (double)peak2r / rss2r);
}

/* A command from the environment, if set, told the server's pid ($BENCH_PID). */
static void hook_cmd(const char *env, const struct bh_proc *s)
{
	const char *cmd = getenv(env);
	char pid[32];

	if (!cmd || !*cmd)
		return;
	snprintf(pid, sizeof(pid), "%d", (int)s->pid);
	setenv("BENCH_PID", pid, 1);
	if (system(cmd) != 0)
		bh_die("%s failed", env);
}

/*
 * One gang-1024 on 16,384 restarted hosts, between $BENCH_APPLIANCE_BEFORE
 * and $BENCH_APPLIANCE_AFTER: a profiler's switches (docs/benchmarks.md).
 */
static void gang_only(void)
{
	struct bh_proc s = {0};
	char dir[300];
	double ms;

	snprintf(dir, sizeof(dir), "%s/gang", tmpdir);
	server_start(&s, dir, board_large);
	bh_stop(&s);
	server_start(&s, dir, NULL);
	hook_cmd("BENCH_APPLIANCE_BEFORE", &s);
	ms = gang_1024_ms(s.port, 0);
	hook_cmd("BENCH_APPLIANCE_AFTER", &s);
	bh_stop(&s);
	printf("%-52s %9.1f ms\n", "gang-1024: last creation to last binding, 16,384 h", ms);
}

int main(void)
{
	int runs = bh_env_int("BENCH_APPLIANCE_RUNS", RUNS),
	    gangs = bh_env_int("BENCH_APPLIANCE_GANGS", GANGS);
	const char *only = getenv("BENCH_APPLIANCE_ONLY");

	if (runs > RUNS * 4)
		runs = RUNS * 4;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	setup();
	printf("%-52s %12s %10s %8s\n", "benchmark (podkerneld end to end)", "median", "ratio",
	       "target");
	if (!only || strcmp(only, "small") == 0)
		small_figures(runs, gangs);
	if (!only || strcmp(only, "large") == 0)
		large_figures(runs);
	if (only && strcmp(only, "rss") == 0)
		large_figures(0);
	if (only && strcmp(only, "gang") == 0)
		gang_only();
	sh("rm -rf '%s'%s", tmpdir, "");
	curl_global_cleanup();
	return 0;
}
