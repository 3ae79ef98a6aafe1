/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_http.h — what the end-to-end benchmarks share: running podkerneld
 * as a child process (its port read back from its log), POSTing objects
 * over plain HTTP with libcurl (one keep-alive handle per client thread),
 * creating gangs of 4 one-chip pods from BH_CLIENTS threads, and a watch
 * thread that records when every pod of a namespace was seen bound.  Each
 * benchmark defines BH_NAME (its program name, for errors) first.
 */
#ifndef PODKERNEL_TESTS_BENCH_HTTP_H
#define PODKERNEL_TESTS_BENCH_HTTP_H

#include <curl/curl.h>
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

#define BH_CLIENTS 8
#define BH_TIMEOUT_S 300
#define BH_CUBE_KEY "topology.podkernel.dev/cube"

static double bh_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bh_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double bh_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), bh_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void bh_die(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", BH_NAME);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static int bh_env_int(const char *name, int def)
{
	const char *s = getenv(name);

	return s && atoi(s) > 0 ? atoi(s) : def;
}

/* A copy of the repository's tpu-superslice board with n superslices (256 hosts each). */
static void bh_write_board(const char *path, int superslices)
{
	FILE *in = fopen(PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml", "r"), *out;
	char line[512];
	bool done = false;

	if (!in)
		bh_die("%s: cannot read", PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml");
	out = fopen(path, "w");
	if (!out)
		bh_die("%s: cannot write", path);
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
		bh_die("%s: no superslice count to change", path);
}

/*
 * A fresh working folder under $TMPDIR and the podkerneld to run: $PODKERNELD,
 * else bin/podkerneld of the build this benchmark belongs to.
 */
static void bh_prepare(char *tmpdir, size_t tlen, char *prog, size_t plen)
{
	const char *tmp = getenv("TMPDIR"), *bin = getenv("PODKERNELD");
	char self[1024];
	ssize_t n;

	snprintf(tmpdir, tlen, "%s/pk-%s-XXXXXX", tmp ? tmp : "/tmp", BH_NAME);
	if (!mkdtemp(tmpdir))
		bh_die("cannot make %s", tmpdir);
	if (bin) {
		snprintf(prog, plen, "%s", bin);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			bh_die("cannot find %s", "/proc/self/exe");
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(prog, plen, "%s/../../bin/podkerneld", self);
	}
	if (access(prog, X_OK) < 0)
		bh_die("%s: not found (set PODKERNELD)", prog);
}

/* ---- podkerneld as a child process --------------------------------------------------- */

struct bh_proc {
	pid_t pid;
	int port;
	char log[400];
};

/* Does the log contain what?  The last "(port N)" it names goes to ret_port. */
static bool bh_log_has(const char *log, const char *what, int *ret_port)
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

/* Run argv (NULL-terminated) with stdout/stderr to log; wait for ready in the log. */
static void bh_start(struct bh_proc *p, const char *log, char *const argv[], const char *ready)
{
	snprintf(p->log, sizeof(p->log), "%s", log);
	unlink(p->log); /* an earlier run's port must not be read */
	p->port = 0;
	p->pid = fork();
	if (p->pid == 0) {
		int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0)
			_exit(127);
		dup2(fd, 2);
		dup2(fd, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	for (double t0 = bh_now_s(); bh_now_s() - t0 < BH_TIMEOUT_S; usleep(20000)) {
		int st;

		if (waitpid(p->pid, &st, WNOHANG) == p->pid)
			bh_die("a child exited early, see %s", p->log);
		if (bh_log_has(p->log, ready, &p->port) && p->port > 0)
			return;
	}
	bh_die("a child did not start, see %s", p->log);
}

/* SIGTERM, then SIGKILL after 5 s: a profiler wrapping the program writes its data. */
static void bh_stop(struct bh_proc *p)
{
	bool reaped = false;

	if (p->pid <= 0)
		return;
	kill(p->pid, SIGTERM);
	for (int i = 0; i < 500 && !reaped; i++) {
		reaped = waitpid(p->pid, NULL, WNOHANG) == p->pid;
		if (!reaped)
			usleep(10000);
	}
	if (!reaped) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	p->pid = 0;
}

/* podkerneld (prog) on dir (board may be NULL: no simulated board); waits for the loop.
 * (inline: a bench that starts podkerneld otherwise is not warned of it) */
static inline void bh_podkerneld_start(struct bh_proc *s, char *prog, const char *dir,
				       const char *board)
{
	char log[300];
	char *argv[] = {prog,	       "--listen", "127.0.0.1:0", "--data-dir",
			(char *)dir,   "-v",	   "1",		  board ? "--simulate-board" : NULL,
			(char *)board, NULL};

	snprintf(log, sizeof(log), "%s.log", dir);
	bh_start(s, log, argv, "scheduling loop running");
}

/* A line of the child's /proc status in KiB: "VmRSS:" now, "VmHWM:" the peak. */
static inline long bh_status_kb(const struct bh_proc *s, const char *field)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)s->pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0)
			kb = atol(line + n);
	if (f)
		fclose(f);
	return kb;
}

/*
 * VmRSS once the program has settled: read every 250 ms until four reads in
 * a row (1 s) stay within 256 KiB of each other, or 30 s.  What a restart
 * does right after its "ready" line (the controllers' first passes) is
 * part of what it keeps: read at the line alone, it would be missed.
 */
static inline long bh_settled_rss_kb(const struct bh_proc *s)
{
	long last = bh_status_kb(s, "VmRSS:"), now;
	int same = 0;

	for (int i = 0; i < 120 && same < 4; i++) {
		usleep(250000);
		now = bh_status_kb(s, "VmRSS:");
		same = labs(now - last) <= 256 ? same + 1 : 0;
		last = now;
	}
	return last;
}

/* ---- HTTP ---------------------------------------------------------------------------- */

struct bh_buf {
	char *s;
	size_t n;
};

static size_t bh_buf_write(char *p, size_t size, size_t n, void *arg)
{
	struct bh_buf *b = arg;
	char *s = realloc(b->s, b->n + size * n + 1);

	if (!s)
		return 0;
	memcpy(s + b->n, p, size * n);
	b->s = s;
	b->n += size * n;
	s[b->n] = '\0';
	return size * n;
}

/* POST body to path on 127.0.0.1:port; returns the HTTP status. */
static long bh_post(CURL *c, int port, const char *path, const char *body)
{
	char url[512];
	struct bh_buf out = {0};
	long status = 0;
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bh_buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	if (status != 201 && status != 409)
		fprintf(stderr, "%s: POST %s: %ld %s\n", BH_NAME, path, status, out.s ? out.s : "");
	free(out.s);
	return status;
}

/* The resourceVersion of a list of pods in ns. */
static char *bh_list_rv(int port, const char *ns)
{
	char url[256];
	struct bh_buf out = {0};
	CURL *c = curl_easy_init();
	json_t *j;
	char *rv = NULL;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/namespaces/%s/pods?limit=1", port,
		 ns);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bh_buf_write);
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
		bh_die("cannot list pods in %s", ns);
	return rv;
}

/* ---- a watch counting bound pods --------------------------------------------------------- */

struct bh_watch {
	int port;
	char ns[64];
	char *rv;
	int target;    /* bound pods to see */
	json_t *bound; /* name -> true */
	struct bh_buf line;
	double last_bind; /* when the target was reached */
	atomic_bool failed;
	bool expired; /* 410: the server's history moved past the watch */
	int relists;  /* lists again after a 410, as an informer does */
	int end;      /* how the last watch request ended (a CURLcode) */
	pthread_t thread;
};

static void bh_watch_pod(struct bh_watch *w, const json_t *obj)
{
	const char *node =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName"));
	const char *name =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));

	if (node && *node && name && !json_object_get(w->bound, name)) {
		json_object_set_new(w->bound, name, json_true());
		if ((int)json_object_size(w->bound) == w->target)
			w->last_bind = bh_now_s();
	}
}

static void bh_watch_line(struct bh_watch *w, const char *s, size_t n)
{
	json_t *ev = json_loadb(s, n, 0, NULL);
	json_t *obj = json_object_get(ev, "object");
	const char *type = json_string_value(json_object_get(ev, "type"));

	if (type && strcmp(type, "ERROR") == 0) {
		if (json_integer_value(json_object_get(obj, "code")) == 410)
			w->expired = true;
		else
			atomic_store(&w->failed, true);
	} else {
		bh_watch_pod(w, obj);
	}
	json_decref(ev);
}

static size_t bh_watch_write(char *p, size_t size, size_t n, void *arg)
{
	struct bh_watch *w = arg;
	size_t len = size * n;

	/* whole stretches between newlines, as a client's decoder reads a stream
	 * (one append a byte cost the bench ~100 instructions a byte) */
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(p + i, '\n', len - i);
		size_t seg = nl ? (size_t)(nl - (p + i)) : len - i;

		if (w->line.n == 0 && nl && seg) {
			bh_watch_line(w, p + i, seg); /* a whole event: parsed in place */
		} else {
			if (seg)
				bh_buf_write(p + i, 1, seg, &w->line);
			if (nl && w->line.n)
				bh_watch_line(w, w->line.s, w->line.n);
			if (nl)
				w->line.n = 0;
		}
		i += seg + (nl ? 1 : 0);
	}
	if ((int)json_object_size(w->bound) >= w->target || atomic_load(&w->failed) || w->expired)
		return 0; /* done: end the transfer */
	return len;
}

/*
 * After a 410: every pod of the namespace, page by page; the watch goes on
 * from the first page's resourceVersion (each page is read at its own, so a
 * pod bound between pages shows up again in the watch, never not at all).
 */
static void bh_watch_relist(struct bh_watch *w, CURL *c)
{
	char url[512], *cont = NULL;
	bool first = true;

	w->relists++;
	do {
		struct bh_buf out = {0};
		json_t *j, *item;
		size_t i;

		snprintf(url, sizeof(url),
			 "http://127.0.0.1:%d/api/v1/namespaces/%s/pods?limit=500%s%s", w->port,
			 w->ns, cont ? "&continue=" : "", cont ? cont : "");
		free(cont);
		cont = NULL;
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bh_buf_write);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
		curl_easy_perform(c);
		j = out.s ? json_loads(out.s, 0, NULL) : NULL;
		free(out.s);
		if (!j)
			bh_die("cannot list pods in %s again", w->ns);
		json_array_foreach(json_object_get(j, "items"), i, item) bh_watch_pod(w, item);
		json_t *meta = json_object_get(j, "metadata");
		const char *next = json_string_value(json_object_get(meta, "continue"));
		if (next && *next)
			cont = strdup(next);
		if (first) {
			free(w->rv);
			w->rv = strdup(json_string_value(json_object_get(meta, "resourceVersion")));
			first = false;
		}
		json_decref(j);
	} while (cont);
}

static void *bh_watch_main(void *arg)
{
	struct bh_watch *w = arg;
	char url[256];
	CURL *c = curl_easy_init();
	double t0 = bh_now_s();

	while ((int)json_object_size(w->bound) < w->target && !atomic_load(&w->failed) &&
	       bh_now_s() - t0 < BH_TIMEOUT_S) {
		if (w->expired)
			bh_watch_relist(w, c);
		w->expired = false;
		snprintf(
		    url, sizeof(url),
		    "http://127.0.0.1:%d/api/v1/namespaces/%s/pods?watch=true&resourceVersion=%s",
		    w->port, w->ns, w->rv);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bh_watch_write);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)BH_TIMEOUT_S);
		w->end = (int)curl_easy_perform(c);
		if (!w->expired)
			break;
	}
	curl_easy_cleanup(c);
	if ((int)json_object_size(w->bound) < w->target)
		atomic_store(&w->failed, true);
	return NULL;
}

static void bh_watch_start(struct bh_watch *w, int port, const char *ns, int target)
{
	memset(w, 0, sizeof(*w));
	w->port = port;
	snprintf(w->ns, sizeof(w->ns), "%s", ns);
	w->rv = bh_list_rv(port, ns);
	w->target = target;
	w->bound = json_object();
	pthread_create(&w->thread, NULL, bh_watch_main, w);
}

/* Wait for the target; the time it was reached. */
static double bh_watch_finish(struct bh_watch *w)
{
	pthread_join(w->thread, NULL);
	if (atomic_load(&w->failed))
		bh_die("the watch in %s ended before every pod was bound", w->ns);
	free(w->rv);
	free(w->line.s);
	json_decref(w->bound);
	return w->last_bind;
}

/* ---- objects ------------------------------------------------------------------------------ */

static void bh_namespace(int port, const char *ns)
{
	char body[256];
	CURL *c = curl_easy_init();

	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
		 ns);
	bh_post(c, port, "/api/v1/namespaces", body);
	curl_easy_cleanup(c);
}

static void bh_post_group(CURL *c, int port, const char *ns, const char *name, int min,
			  const char *key)
{
	char body[1024], path[256];

	snprintf(
	    body, sizeof(body),
	    "{\"apiVersion\":\"scheduling.k8s.io/v1alpha3\",\"kind\":\"PodGroup\","
	    "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"workloadRef\":{\"workloadName\":"
	    "\"bench\",\"templateName\":\"t\"},\"schedulingPolicy\":{\"gang\":{\"minCount\":%d}},"
	    "\"schedulingConstraints\":{\"topology\":[{\"key\":\"%s\"}]}}}",
	    name, min, key);
	snprintf(path, sizeof(path), "/apis/scheduling.k8s.io/v1alpha3/namespaces/%s/podgroups",
		 ns);
	if (bh_post(c, port, path, body) != 201)
		bh_die("cannot create group %s", name);
}

/* A one-container pod of group; node: pre-bound; scheduler: spec.schedulerName or NULL. */
static void bh_post_pod(CURL *c, int port, const char *ns, const char *name, const char *group,
			const char *node, const char *scheduler, int tpu)
{
	char body[1024], path[256], nn[128] = "", sn[128] = "";

	if (node)
		snprintf(nn, sizeof(nn), "\"nodeName\":\"%s\",", node);
	if (scheduler)
		snprintf(sn, sizeof(sn), "\"schedulerName\":\"%s\",", scheduler);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
		 "\"spec\":{%s%s\"schedulingGroup\":{\"podGroupName\":\"%s\"},\"containers\":"
		 "[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
		 "\"google.com/tpu\":\"%d\",\"cpu\":\"1\"}}}]}}",
		 name, nn, sn, group, tpu);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	if (bh_post(c, port, path, body) != 201)
		bh_die("cannot create pod %s", name);
}

/* Hosts of the tpu-superslice board are tpu-ss{S}-h{H}, 256 per superslice. */
static void bh_host_name(int index, char *buf, size_t len)
{
	snprintf(buf, len, "tpu-ss%d-h%d", index / 256, index % 256);
}

struct bh_clients {
	int port;
	const char *ns, *scheduler;
	int ngangs, tpu;
	bool prebound;
	int first; /* thread index */
};

static void *bh_gangs_main(void *arg)
{
	struct bh_clients *k = arg;
	CURL *c = curl_easy_init();

	for (int g = k->first; g < k->ngangs; g += BH_CLIENTS) {
		char gname[32], pname[48], host[48];

		snprintf(gname, sizeof(gname), "g%d", g);
		bh_post_group(c, k->port, k->ns, gname, 4, BH_CUBE_KEY);
		for (int i = 0; i < 4; i++) {
			snprintf(pname, sizeof(pname), "g%d-%d", g, i);
			bh_host_name(g * 4 + i, host, sizeof(host));
			bh_post_pod(c, k->port, k->ns, pname, gname, k->prebound ? host : NULL,
				    k->scheduler, k->tpu);
		}
	}
	curl_easy_cleanup(c);
	return NULL;
}

/* ngangs cube-bound gangs of 4 (g{N}, pods g{N}-{i}) by BH_CLIENTS threads. */
static void bh_create_gangs(int port, const char *ns, int ngangs, int tpu, bool prebound,
			    const char *scheduler)
{
	struct bh_clients k[BH_CLIENTS];
	pthread_t t[BH_CLIENTS];

	for (int i = 0; i < BH_CLIENTS; i++) {
		k[i] = (struct bh_clients){.port = port,
					   .ns = ns,
					   .scheduler = scheduler,
					   .ngangs = ngangs,
					   .tpu = tpu,
					   .prebound = prebound,
					   .first = i};
		pthread_create(&t[i], NULL, bh_gangs_main, &k[i]);
	}
	for (int i = 0; i < BH_CLIENTS; i++)
		pthread_join(t[i], NULL);
}

#endif /* PODKERNEL_TESTS_BENCH_HTTP_H */
