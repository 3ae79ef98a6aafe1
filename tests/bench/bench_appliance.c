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
 *              20,000 pods more: KiB per node and per pod
 *
 * Every figure is the median of RUNS runs; floor, e2e and backlog of one run
 * each start a fresh podkerneld on a copy of the same node-only data
 * directory (registering 4,096 nodes is not measured).  Data lives under
 * $TMPDIR (a real disk: durability is part of the cost).
 * BENCH_APPLIANCE_RUNS and BENCH_APPLIANCE_GANGS change the run count and
 * the gang count, BENCH_APPLIANCE_ONLY=small|large runs half of it (quick
 * looks); PODKERNELD names another podkerneld.
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

#define RUNS 3
#define CLIENTS 8
#define GANGS 1500
#define BACKLOG_GANGS 2000
#define HOSTS_SMALL 16 /* superslices: 4,096 hosts */
#define HOSTS_LARGE 64 /* 16,384 hosts */
#define RSS_PODS 20000
#define TIMEOUT_S 300

static double now_s(void)
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

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "bench_appliance: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static int env_int(const char *name, int def)
{
	const char *s = getenv(name);

	return s && atoi(s) > 0 ? atoi(s) : def;
}

/* ---- podkerneld ----------------------------------------------------------------- */

struct server {
	pid_t pid;
	int port;
	char dir[256], log[300];
};

static char tmpdir[256];
static char podkerneld[1024];

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	if (system(cmd) != 0)
		die("command failed: %s", cmd);
}

/* A copy of the repository's tpu-superslice board with n superslices. */
static void write_board(const char *path, int superslices)
{
	FILE *in = fopen(PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml", "r"), *out;
	char line[512];
	bool done = false;

	if (!in)
		die("%s: cannot read", PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml");
	out = fopen(path, "w");
	if (!out)
		die("%s: cannot write", path);
	while (fgets(line, sizeof(line), in)) {
		if (!done && strcmp(line, "      count: 2\n") == 0) {
			fprintf(out, "      count: %d\n", superslices);
			done = true;
			continue;
		}
		fputs(line, out);
	}
	fclose(in);
	fclose(out);
	if (!done)
		die("%s: no superslice count to change", path);
}

static bool log_has(const char *log, const char *what, int *ret_port)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "(port ");

		if (ret_port && p)
			*ret_port = atoi(p + 6);
		if (strstr(line, what))
			found = true;
	}
	fclose(f);
	return found;
}

/* Start podkerneld on dir (board may be NULL); waits for the scheduling loop. */
static void server_start(struct server *s, const char *dir, const char *board)
{
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	snprintf(s->log, sizeof(s->log), "%s.log", dir);
	unlink(s->log); /* an earlier run's port must not be read */
	s->pid = fork();
	if (s->pid == 0) {
		int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0)
			_exit(127);
		dup2(fd, 2);
		dup2(fd, 1);
		if (board)
			execl(podkerneld, "podkerneld", "--listen", "127.0.0.1:0", "--data-dir",
			      dir, "--simulate-board", board, "-v", "1", (char *)NULL);
		else
			execl(podkerneld, "podkerneld", "--listen", "127.0.0.1:0", "--data-dir",
			      dir, "-v", "1", (char *)NULL);
		_exit(127);
	}
	for (double t0 = now_s(); now_s() - t0 < TIMEOUT_S; usleep(20000)) {
		int st;

		if (waitpid(s->pid, &st, WNOHANG) == s->pid)
			die("podkerneld exited early, see %s", s->log);
		if (log_has(s->log, "scheduling loop running", &s->port) && s->port > 0)
			return;
	}
	die("podkerneld did not start, see %s", s->log);
}

static void server_stop(struct server *s)
{
	if (s->pid <= 0)
		return;
	/* SIGTERM first: a profiler wrapping podkerneld (PODKERNELD) writes its data. */
	bool reaped = false;

	kill(s->pid, SIGTERM);
	for (int i = 0; i < 500 && !reaped; i++) {
		reaped = waitpid(s->pid, NULL, WNOHANG) == s->pid;
		if (!reaped)
			usleep(10000);
	}
	if (!reaped) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

static long server_rss_kb(const struct server *s)
{
	char path[64], line[256];
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)s->pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

/* ---- HTTP -------------------------------------------------------------------------- */

struct buf {
	char *s;
	size_t n;
};

static size_t buf_write(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	char *s = realloc(b->s, b->n + size * n + 1);

	if (!s)
		return 0;
	memcpy(s + b->n, p, size * n);
	b->s = s;
	b->n += size * n;
	s[b->n] = '\0';
	return size * n;
}

/* POST body to path; returns the HTTP status. */
static long post(CURL *c, int port, const char *path, const char *body)
{
	char url[512];
	struct buf out = {0};
	long status = 0;
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	if (status != 201 && status != 409)
		fprintf(stderr, "bench_appliance: POST %s: %ld %s\n", path, status,
			out.s ? out.s : "");
	free(out.s);
	return status;
}

/* The resourceVersion of a list of pods in ns. */
static char *list_rv(int port, const char *ns)
{
	char url[256];
	struct buf out = {0};
	CURL *c = curl_easy_init();
	json_t *j;
	char *rv = NULL;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/namespaces/%s/pods?limit=1", port,
		 ns);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	j = out.s ? json_loads(out.s, 0, NULL) : NULL;
	if (j)
		rv = strdup(json_string_value(
				json_object_get(json_object_get(j, "metadata"), "resourceVersion"))
				?: "0");
	json_decref(j);
	free(out.s);
	if (!rv)
		die("cannot list pods in %s", ns);
	return rv;
}

/* ---- the watch ----------------------------------------------------------------------- */

struct watch {
	int port;
	char ns[64];
	char *rv;
	int target;    /* bound pods to see */
	json_t *bound; /* name -> true */
	struct buf line;
	double last_bind; /* when the target was reached */
	atomic_bool ready, failed;
	pthread_t thread;
};

static void watch_line(struct watch *w, const char *s, size_t n)
{
	json_t *ev = json_loadb(s, n, 0, NULL);
	json_t *obj = json_object_get(ev, "object");
	const char *node =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName"));
	const char *name =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	const char *type = json_string_value(json_object_get(ev, "type"));

	if (type && strcmp(type, "ERROR") == 0)
		atomic_store(&w->failed, true);
	if (node && *node && name && !json_object_get(w->bound, name)) {
		json_object_set_new(w->bound, name, json_true());
		if ((int)json_object_size(w->bound) == w->target)
			w->last_bind = now_s();
	}
	json_decref(ev);
}

static size_t watch_write(char *p, size_t size, size_t n, void *arg)
{
	struct watch *w = arg;
	size_t len = size * n;

	atomic_store(&w->ready, true);
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '\n') {
			buf_write(p + i, 1, 1, &w->line);
			continue;
		}
		if (w->line.n)
			watch_line(w, w->line.s, w->line.n);
		w->line.n = 0;
	}
	if ((int)json_object_size(w->bound) >= w->target || atomic_load(&w->failed))
		return 0; /* done: end the transfer */
	return len;
}

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	char url[256];
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url),
		 "http://127.0.0.1:%d/api/v1/namespaces/%s/pods?watch=true&resourceVersion=%s",
		 w->port, w->ns, w->rv);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watch_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)TIMEOUT_S);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	if ((int)json_object_size(w->bound) < w->target)
		atomic_store(&w->failed, true);
	atomic_store(&w->ready, true);
	return NULL;
}

static void watch_start(struct watch *w, int port, const char *ns, int target)
{
	memset(w, 0, sizeof(*w));
	w->port = port;
	snprintf(w->ns, sizeof(w->ns), "%s", ns);
	w->rv = list_rv(port, ns);
	w->target = target;
	w->bound = json_object();
	pthread_create(&w->thread, NULL, watch_main, w);
}

/* Wait for the target; the time it was reached. */
static double watch_finish(struct watch *w)
{
	pthread_join(w->thread, NULL);
	if (atomic_load(&w->failed))
		die("the watch in %s ended before every pod was bound", w->ns);
	free(w->rv);
	free(w->line.s);
	json_decref(w->bound);
	return w->last_bind;
}

/* ---- objects ----------------------------------------------------------------------- */

static void make_namespace(int port, const char *ns)
{
	char body[256];
	CURL *c = curl_easy_init();

	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
		 ns);
	post(c, port, "/api/v1/namespaces", body);
	curl_easy_cleanup(c);
}

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
	if (post(c, port, path, body) != 201)
		die("cannot create group %s", name);
}

static void post_pod(CURL *c, int port, const char *ns, const char *name, const char *group,
		     const char *node, int tpu)
{
	char body[1024], path[256], nn[128] = "";

	if (node)
		snprintf(nn, sizeof(nn), "\"nodeName\":\"%s\",", node);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
		 "\"spec\":{%s\"schedulingGroup\":{\"podGroupName\":\"%s\"},\"containers\":"
		 "[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
		 "\"google.com/tpu\":\"%d\",\"cpu\":\"1\"}}}]}}",
		 name, nn, group, tpu);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	if (post(c, port, path, body) != 201)
		die("cannot create pod %s", name);
}

#define CUBE_KEY "topology.podkernel.dev/cube"
#define SS_KEY "topology.podkernel.dev/superslice"

/* Hosts are tpu-ss{S}-h{H}, 256 per superslice: gang g's pod i pre-bound. */
static void host_name(int index, char *buf, size_t len)
{
	snprintf(buf, len, "tpu-ss%d-h%d", index / 256, index % 256);
}

struct clients {
	int port;
	const char *ns;
	int ngangs, tpu;
	bool prebound;
	int first; /* thread index */
	double last_ack;
};

static void *gangs_main(void *arg)
{
	struct clients *k = arg;
	CURL *c = curl_easy_init();

	for (int g = k->first; g < k->ngangs; g += CLIENTS) {
		char gname[32], pname[48], host[48];

		snprintf(gname, sizeof(gname), "g%d", g);
		post_group(c, k->port, k->ns, false, gname, NULL, 4, CUBE_KEY);
		for (int i = 0; i < 4; i++) {
			snprintf(pname, sizeof(pname), "g%d-%d", g, i);
			host_name(g * 4 + i, host, sizeof(host));
			post_pod(c, k->port, k->ns, pname, gname, k->prebound ? host : NULL,
				 k->tpu);
		}
	}
	k->last_ack = now_s();
	curl_easy_cleanup(c);
	return NULL;
}

/* ngangs gangs of 4 by CLIENTS threads; returns when every create is acknowledged. */
static void create_gangs(int port, const char *ns, int ngangs, int tpu, bool prebound)
{
	struct clients k[CLIENTS];
	pthread_t t[CLIENTS];

	for (int i = 0; i < CLIENTS; i++) {
		k[i] = (struct clients){.port = port,
					.ns = ns,
					.ngangs = ngangs,
					.tpu = tpu,
					.prebound = prebound,
					.first = i};
		pthread_create(&t[i], NULL, gangs_main, &k[i]);
	}
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(t[i], NULL);
}

/* ---- the figures ---------------------------------------------------------------------- */

static char nodes_dir[300], backlog_dir[300], board_small[300], board_large[300];

/* pods/s of ngangs gangs (prebound or scheduled), optionally after a backlog. */
/* Scheduling attempts so far (the appliance's metrics). */
static long attempts(int port)
{
	char url[128];
	struct buf out = {0};
	CURL *c = curl_easy_init();
	long n = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
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
	struct server s = {0};
	char cmd[900];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'", backlog_dir, nodes_dir,
		 backlog_dir);
	if (system(cmd) != 0)
		die("cannot copy %s", nodes_dir);
	server_start(&s, backlog_dir, NULL);
	make_namespace(s.port, "backlog");
	create_gangs(s.port, "backlog", BACKLOG_GANGS, 8, false);
	server_stop(&s);
}

/* pods/s of ngangs gangs (prebound or scheduled), on a copy of from. */
static double gang_rate(int run, const char *what, int ngangs, bool prebound, const char *from)
{
	struct server s = {0};
	struct watch w;
	char dir[300], cmd[900];
	double t0, t1;

	snprintf(dir, sizeof(dir), "%s/%s-%d", tmpdir, what, run);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'", dir, from, dir);
	if (system(cmd) != 0)
		die("cannot copy %s", from);
	server_start(&s, dir, NULL);
	make_namespace(s.port, "bench");
	/* Every backlog gang tried once (its conditions written) and parked. */
	for (double t = now_s(); from == backlog_dir && now_s() - t < TIMEOUT_S;) {
		if (attempts(s.port) >= BACKLOG_GANGS)
			break;
		usleep(50000);
	}
	/* ... and the loop quiet: no write for 300 ms. */
	for (char *rv = from == backlog_dir ? list_rv(s.port, "backlog") : NULL, *again; rv;
	     rv = again) {
		usleep(300000);
		again = list_rv(s.port, "backlog");
		if (strcmp(rv, again) == 0) {
			free(again);
			again = NULL;
		}
		free(rv);
	}
	watch_start(&w, s.port, "bench", ngangs * 4);
	t0 = now_s();
	create_gangs(s.port, "bench", ngangs, 1, prebound);
	t1 = watch_finish(&w);
	server_stop(&s);
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

	for (int sh = k->first; sh < 64; sh += CLIENTS) {
		char g[32], p[48];

		snprintf(g, sizeof(g), "shard-%d", sh);
		post_group(c, k->port, k->ns, false, g, "job", 16, CUBE_KEY);
		for (int i = 0; i < 16; i++) {
			snprintf(p, sizeof(p), "shard-%d-%d", sh, i);
			post_pod(c, k->port, k->ns, p, g, NULL, 1);
		}
	}
	k->last_ack = now_s();
	curl_easy_cleanup(c);
	return NULL;
}

/* ms from the last pod's creation to the last binding of a 1,024-pod gang. */
static double gang_1024_ms(int port, int run)
{
	struct big_gang k[CLIENTS];
	pthread_t t[CLIENTS];
	struct watch w;
	char ns[32];
	double last = 0;
	CURL *c = curl_easy_init();

	snprintf(ns, sizeof(ns), "gang-%d", run);
	make_namespace(port, ns);
	watch_start(&w, port, ns, 1024);
	post_group(c, port, ns, true, "job", NULL, 64, SS_KEY);
	curl_easy_cleanup(c);
	for (int i = 0; i < CLIENTS; i++) {
		k[i] = (struct big_gang){.port = port, .ns = ns, .first = i};
		pthread_create(&t[i], NULL, big_gang_main, &k[i]);
	}
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(t[i], NULL);
		if (k[i].last_ack > last)
			last = k[i].last_ack;
	}
	return (watch_finish(&w) - last) * 1e3;
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR"), *bin = getenv("PODKERNELD");
	char self[1024];
	ssize_t n;

	snprintf(tmpdir, sizeof(tmpdir), "%s/pk-bench-appliance-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir))
		die("cannot make %s", tmpdir);
	if (bin) {
		snprintf(podkerneld, sizeof(podkerneld), "%s", bin);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			die("cannot find %s", "/proc/self/exe");
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(podkerneld, sizeof(podkerneld), "%s/../../bin/podkerneld", self);
	}
	if (access(podkerneld, X_OK) < 0)
		die("%s: not found (set PODKERNELD)", podkerneld);
	snprintf(board_small, sizeof(board_small), "%s/board-4096.yaml", tmpdir);
	snprintf(board_large, sizeof(board_large), "%s/board-16384.yaml", tmpdir);
	write_board(board_small, HOSTS_SMALL);
	write_board(board_large, HOSTS_LARGE);
	snprintf(nodes_dir, sizeof(nodes_dir), "%s/nodes-4096", tmpdir);
	snprintf(backlog_dir, sizeof(backlog_dir), "%s/backlog-4096", tmpdir);
}

/* Floor, e2e and backlog on 4,096 hosts; runs of each, interleaved. */
static void small_figures(int runs, int gangs)
{
	double fl[RUNS * 4], e2e[RUNS * 4], bl[RUNS * 4];
	struct server s = {0};

	/* The node-only data directory every 4,096-host run starts from. */
	server_start(&s, nodes_dir, board_small);
	server_stop(&s);
	make_backlog_dir();
	for (int r = 0; r < runs; r++) {
		fl[r] = gang_rate(r, "floor", gangs, true, nodes_dir);
		e2e[r] = gang_rate(r, "e2e", gangs, false, nodes_dir);
		bl[r] = gang_rate(r, "backlog", gangs, false, backlog_dir);
	}
	double f = median(fl, runs), e = median(e2e, runs), b = median(bl, runs);

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
	struct server s = {0};
	long rss0, rss1, rss1r, rss2, rss2r;
	char dir[300];
	struct watch w;
	int rss_gangs = (RSS_PODS - runs * 1024) / 4, rss_pods = runs * 1024 + rss_gangs * 4;

	snprintf(dir, sizeof(dir), "%s/large", tmpdir);
	server_start(&s, dir, NULL);
	rss0 = server_rss_kb(&s);
	server_stop(&s);
	sh("rm -rf '%s'%s", dir, "");
	server_start(&s, dir, board_large);
	rss1 = server_rss_kb(&s);
	server_stop(&s);
	server_start(&s, dir, NULL);
	rss1r = server_rss_kb(&s);
	for (int r = 0; r < runs; r++)
		g1024[r] = gang_1024_ms(s.port, r);
	make_namespace(s.port, "rss");
	watch_start(&w, s.port, "rss", rss_gangs * 4);
	create_gangs(s.port, "rss", rss_gangs, 1, false);
	watch_finish(&w);
	rss2 = server_rss_kb(&s);
	server_stop(&s);
	server_start(&s, dir, NULL);
	rss2r = server_rss_kb(&s);
	server_stop(&s);

	printf("%-52s %9.1f ms %10s %8s\n", "gang-1024: last creation to last binding, 16,384 h",
	       median(g1024, runs), "", "<=50 ms");
	printf("%-52s %8ld KiB\n", "RSS: podkerneld, no nodes", rss0);
	printf("%-52s %8ld KiB %7.2f KiB/node (<=4)\n", "RSS: 16,384 hosts registered", rss1,
	       (double)(rss1 - rss0) / 16384);
	printf("%-52s %8ld KiB %7.2f KiB/node (<=4)\n", "RSS: 16,384 hosts, restarted", rss1r,
	       (double)(rss1r - rss0) / 16384);
	printf("%-52s %8ld KiB %7.2f KiB/pod (<=2)\n", "RSS: + 20,000 pods created and bound", rss2,
	       (double)(rss2 - rss1r) / rss_pods);
	printf("%-52s %8ld KiB %7.2f KiB/pod (<=2)\n", "RSS: + 20,000 pods, restarted", rss2r,
	       (double)(rss2r - rss1r) / rss_pods);
}

int main(void)
{
	int runs = env_int("BENCH_APPLIANCE_RUNS", RUNS),
	    gangs = env_int("BENCH_APPLIANCE_GANGS", GANGS);
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
	sh("rm -rf '%s'%s", tmpdir, "");
	curl_global_cleanup();
	return 0;
}
