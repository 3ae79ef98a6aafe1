/* SPDX-License-Identifier: Apache-2.0 */
/*
 * listener.c — libmicrohttpd with deadlines, caps that close at once, and
 * displacement of slow connections (listener.h says what a client sees).
 *
 * libmicrohttpd knows only an inactivity timeout, and past its connection
 * limit it stops accepting, which leaves new connections waiting in the
 * backlog.  So the listener keeps its own books: every connection is tracked
 * from libmicrohttpd's "started" notification to its "closed" one, in one of
 * three phases.  HEADERS (from accept, or from the end of the previous
 * response) must end within the header deadline; BODY (a request whose body
 * is still arriving) must keep a minimum average rate after a grace; ACTIVE
 * (the handler runs or the response is being sent; watch streams) has no
 * deadline here.  Connections waiting for headers sit on a list in the order
 * their phase began, so the oldest is at the head: a reaper thread cuts the
 * expired ones from the head, and when a cap is reached the accept policy
 * displaces the head (or the oldest of that address) instead of refusing the
 * newcomer.  Cutting is shutdown(2) on the socket under the books' lock:
 * libmicrohttpd then sees the end of the stream and closes the connection
 * itself, and since it always notifies "closed" (which takes the same lock)
 * before it closes the descriptor, a cut never hits a reused descriptor.
 * libmicrohttpd's own connection limit is set well above the cap so that it
 * never stops accepting.
 *
 * With a pool of event-loop threads the listener accepts itself (one thread
 * blocked in accept(2)) and hands each connection to libmicrohttpd, which
 * gives it to the worker its descriptor number picks (descriptor modulo the
 * pool): consecutive connections go to different workers.  Left to accept
 * on its own, every worker polls the listening socket and the first to wake
 * takes up to ten waiting connections at once, so clients that connect
 * together (a controller's pool, a benchmark's clients) share one thread,
 * and a handler that waits for the store's commit holds up every request of
 * the others on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kernel/lib/file.h"
#include "kernel/lib/hash.h"
#include "kernel/lib/macro.h"
#include "kernel/http/listener.h"

enum phase { PH_HEADERS, PH_BODY, PH_ACTIVE };

struct peer {
	struct peer *next; /* hash chain */
	unsigned char key[17];
	unsigned live, refs;
};

struct lconn {
	struct lconn *prev, *next; /* on headers or bodies while in those phases */
	struct peer *peer;
	int fd;
	enum phase phase;
	bool cut;
	int64_t since_ms;
	uint64_t body_bytes;
};

struct conn_list {
	struct lconn *head, *tail;
};

#define PEER_BUCKETS 1024

struct pk_listener {
	struct MHD_Daemon *d;
	int lfd;	/* the listening socket the acceptor serves, or -1 (libmicrohttpd's) */
	int stop_fd[2]; /* a pipe that wakes the acceptor to stop */
	pthread_t acceptor;
	bool acceptor_running;
	struct pk_listen_limits lim;
	MHD_AccessHandlerCallback handler;
	void *handler_arg;
	MHD_RequestCompletedCallback completed;
	void *completed_arg;
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	uint16_t port;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t reaper;
	bool reaper_running, stopping;
	struct conn_list headers, bodies;
	struct peer *peers[PEER_BUCKETS];
	unsigned live; /* open and not cut */
	struct pk_listener_stats st;
};

int64_t pk_listener_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pk_listen_limits_fill(struct pk_listen_limits *l, unsigned max_connections,
			   unsigned max_per_addr)
{
	if (!l->max_connections)
		l->max_connections = max_connections;
	if (!l->max_connections_per_addr)
		l->max_connections_per_addr = max_per_addr;
	if (!l->header_timeout_ms)
		l->header_timeout_ms = PK_LISTEN_HEADER_TIMEOUT_MS;
	if (!l->body_min_rate)
		l->body_min_rate = PK_LISTEN_BODY_MIN_RATE;
	if (!l->idle_timeout_s)
		l->idle_timeout_s = PK_LISTEN_IDLE_TIMEOUT_S;
}

static void llog(struct pk_listener *l, int level, const char *msg)
{
	if (l->log)
		l->log(l->log_arg, level, msg);
}

/* ---- the books (all under l->lock) ------------------------------------------ */
static void list_push(struct conn_list *q, struct lconn *c)
{
	c->prev = q->tail;
	c->next = NULL;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
}

static void list_unlink(struct conn_list *q, struct lconn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (q->head == c)
		q->head = c->next;
	else
		return; /* not on q */
	if (c->next)
		c->next->prev = c->prev;
	else
		q->tail = c->prev;
	c->prev = c->next = NULL;
}

static struct conn_list *list_of(struct pk_listener *l, struct lconn *c)
{
	return c->phase == PH_HEADERS ? &l->headers : c->phase == PH_BODY ? &l->bodies : NULL;
}

static void set_phase(struct pk_listener *l, struct lconn *c, enum phase p)
{
	struct conn_list *q = list_of(l, c);

	if (q)
		list_unlink(q, c);
	c->phase = p;
	c->since_ms = pk_listener_now_ms();
	c->body_bytes = 0;
	q = list_of(l, c);
	if (q && !c->cut)
		list_push(q, c);
}

/* An IPv4 or IPv6 address as a hash key (family byte first). */
static bool addr_key(const struct sockaddr *sa, unsigned char key[17])
{
	memset(key, 0, 17);
	if (sa && sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa && sa->sa_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

static unsigned key_hash(const unsigned char key[17])
{
	uint32_t h = PK_FNV1A32_INIT;

	for (int i = 0; i < 17; i++)
		h = pk_fnv1a32_byte(h, key[i]);
	return h % PEER_BUCKETS;
}

static struct peer *peer_find(struct pk_listener *l, const unsigned char key[17], bool create)
{
	unsigned b = key_hash(key);

	for (struct peer *p = l->peers[b]; p; p = p->next)
		if (memcmp(p->key, key, 17) == 0)
			return p;
	if (!create)
		return NULL;
	struct peer *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	memcpy(p->key, key, 17);
	p->next = l->peers[b];
	l->peers[b] = p;
	return p;
}

static void peer_put(struct pk_listener *l, struct peer *p)
{
	if (!p || --p->refs > 0)
		return;
	for (struct peer **pp = &l->peers[key_hash(p->key)]; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	free(p);
}

/* Close c from our side: libmicrohttpd sees the end of the stream. */
static void cut(struct pk_listener *l, struct lconn *c)
{
	struct conn_list *q = list_of(l, c);

	if (c->cut)
		return;
	if (q)
		list_unlink(q, c);
	c->cut = true;
	shutdown(c->fd, SHUT_RDWR);
	l->live--;
	if (c->peer)
		c->peer->live--;
}

/* The oldest connection waiting for headers (of peer p, or of anyone). */
static struct lconn *oldest_waiting(struct pk_listener *l, const struct peer *p)
{
	for (struct lconn *c = l->headers.head; c; c = c->next)
		if (!p || c->peer == p)
			return c;
	return NULL;
}

/* ---- libmicrohttpd callbacks ------------------------------------------------ */
/* Accept policy: within the caps, or displacing the oldest slow connection. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct pk_listener *l = cls;
	unsigned char key[17];
	enum MHD_Result ok = MHD_YES;

	(void)addrlen;
	addr_key(addr, key);
	pthread_mutex_lock(&l->lock);
	struct peer *p = peer_find(l, key, false);
	struct lconn *victim = NULL;
	bool full = false;

	if (p && p->live >= l->lim.max_connections_per_addr) {
		full = true;
		victim = oldest_waiting(l, p);
	} else if (l->live >= l->lim.max_connections) {
		full = true;
		victim = oldest_waiting(l, NULL);
	}
	if (full) {
		l->st.saturated_ms = pk_listener_now_ms();
		if (victim) {
			cut(l, victim);
			l->st.displaced++;
		} else {
			l->st.refused++;
			ok = MHD_NO;
		}
	}
	pthread_mutex_unlock(&l->lock);
	return ok;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct pk_listener *l = cls;
	struct lconn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fi =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		unsigned char key[17];

		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		c->fd = fi ? fi->connect_fd : -1;
		addr_key(ai ? ai->client_addr : NULL, key);
		pthread_mutex_lock(&l->lock);
		c->peer = peer_find(l, key, true);
		if (c->peer) {
			c->peer->refs++;
			c->peer->live++;
		}
		l->live++;
		l->st.open++;
		l->st.accepted++;
		if (l->st.open > l->st.open_max)
			l->st.open_max = l->st.open;
		c->phase = PH_ACTIVE;
		set_phase(l, c, PH_HEADERS);
		pthread_mutex_unlock(&l->lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&l->lock);
	struct conn_list *q = list_of(l, c);

	if (q)
		list_unlink(q, c);
	if (!c->cut) {
		l->live--;
		if (c->peer)
			c->peer->live--;
	}
	l->st.open--;
	peer_put(l, c->peer);
	pthread_mutex_unlock(&l->lock);
	free(c);
	*socket_context = NULL;
}

static struct lconn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static bool expects_body(struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");

	return te || (cl && strtoull(cl, NULL, 10) > 0);
}

/* Phases follow the handler's calls: headers done, body chunks, the last call. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct pk_listener *l = cls;
	struct lconn *c = conn_of(conn);

	if (c) {
		pthread_mutex_lock(&l->lock);
		if (c->phase == PH_HEADERS)
			set_phase(l, c, expects_body(conn) ? PH_BODY : PH_ACTIVE);
		else if (c->phase == PH_BODY && *upload_size)
			c->body_bytes += *upload_size;
		else if (c->phase == PH_BODY)
			set_phase(l, c, PH_ACTIVE);
		pthread_mutex_unlock(&l->lock);
	}
	return l->handler(l->handler_arg, conn, url, method, version, upload, upload_size, con_cls);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct pk_listener *l = cls;
	struct lconn *c = conn_of(conn);

	if (l->completed)
		l->completed(l->completed_arg, conn, con_cls, toe);
	if (c) {
		pthread_mutex_lock(&l->lock);
		set_phase(l, c, PH_HEADERS);
		pthread_mutex_unlock(&l->lock);
	}
}

/* ---- the reaper --------------------------------------------------------------- */
static void reap(struct pk_listener *l, int64_t now)
{
	struct lconn *c, *next;

	while ((c = l->headers.head) && now - c->since_ms > (int64_t)l->lim.header_timeout_ms) {
		cut(l, c);
		l->st.header_timeouts++;
	}
	for (c = l->bodies.head; c; c = next) {
		int64_t allowed = (int64_t)l->lim.header_timeout_ms +
				  (int64_t)(c->body_bytes * 1000 / l->lim.body_min_rate);

		next = c->next;
		if (now - c->since_ms > allowed) {
			cut(l, c);
			l->st.body_timeouts++;
		}
	}
}

static void *reaper_main(void *arg)
{
	struct pk_listener *l = arg;
	/* A tenth of the deadline, within [50 ms, 1 s]. */
	int64_t tick = l->lim.header_timeout_ms / 10;

	tick = tick < 50 ? 50 : tick > 1000 ? 1000 : tick;
	pthread_mutex_lock(&l->lock);
	while (!l->stopping) {
		struct timespec ts;

		reap(l, pk_listener_now_ms());
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)(tick % 1000) * 1000000;
		ts.tv_sec += tick / 1000 + ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&l->wake, &l->lock, &ts);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* ---- start and stop ----------------------------------------------------------- */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct pk_listener *l = cls;
	char buf[512];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	llog(l, 2, buf);
}

/* ---- the acceptor ------------------------------------------------------------ */
/* A bound, listening socket on addr (IPv6 only for an IPv6 address); -errno. */
static int listen_socket(const struct sockaddr_storage *addr)
{
	bool v6 = addr->ss_family == AF_INET6;
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), on = 1;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) < 0 ||
	    (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) < 0) ||
	    bind(fd, (const struct sockaddr *)addr,
		 v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/*
 * Accept until told to stop; each connection goes to libmicrohttpd, which
 * runs the accept policy (on_accept) and closes it when refused.  Out of
 * descriptors or memory, wait a little rather than spin on the backlog.
 */
static void *acceptor_main(void *arg)
{
	struct pk_listener *l = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = l->lfd, .events = POLLIN},
				      {.fd = l->stop_fd[0], .events = POLLIN}};
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(l->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			MHD_add_connection(l->d, fd, (const struct sockaddr *)&ss, len);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			poll(&p[1], 1, 10);
	}
	return NULL;
}

static int acceptor_start(struct pk_listener *l)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (pipe2(l->stop_fd, O_CLOEXEC) < 0)
		return -errno;
	if (getsockname(l->lfd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	l->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	if (pthread_create(&l->acceptor, NULL, acceptor_main, l) != 0)
		return -ENOMEM;
	l->acceptor_running = true;
	return 0;
}

static void acceptor_stop(struct pk_listener *l)
{
	if (l->acceptor_running) {
		char c = 0;

		while (write(l->stop_fd[1], &c, 1) < 0 && errno == EINTR)
			;
		pthread_join(l->acceptor, NULL);
		l->acceptor_running = false;
	}
	for (int i = 0; i < 2; i++)
		if (l->stop_fd[i] >= 0)
			close(l->stop_fd[i]);
	if (l->lfd >= 0)
		close(l->lfd);
	l->stop_fd[0] = l->stop_fd[1] = l->lfd = -1;
}

/* Enough descriptors for the cap (raised to the hard limit when needed). */
static void ensure_descriptors(struct pk_listener *l, unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < want) {
		char msg[160];

		snprintf(msg, sizeof(msg), "only %llu file descriptors for a cap of %u connections",
			 (unsigned long long)rl.rlim_cur, l->lim.max_connections);
		llog(l, 1, msg);
	}
}

static struct MHD_Daemon *start_daemon(struct pk_listener *l, const struct pk_listener_config *cfg)
{
	bool v6 = cfg->addr->ss_family == AF_INET6, tls = cfg->tls_cert != NULL;
	/* a pool is fed by the acceptor (l->lfd); a thread per connection accepts itself */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			 (v6 ? MHD_USE_IPv6 : 0) | (tls ? MHD_USE_TLS : 0) |
			 (cfg->suspend_resume ? MHD_ALLOW_SUSPEND_RESUME : 0) |
			 (cfg->threads ? MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC
				       : MHD_USE_THREAD_PER_CONNECTION);
	/* Never libmicrohttpd's limit: it would stop accepting (the backlog fills). */
	unsigned mhd_limit = l->lim.max_connections * 2 + 64;
	struct MHD_OptionItem opts[] = {
	    {cfg->threads ? MHD_OPTION_END : MHD_OPTION_SOCK_ADDR, 0, (void *)cfg->addr},
	    {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, l},
	    {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, l},
	    {MHD_OPTION_CONNECTION_LIMIT, mhd_limit, NULL},
	    {MHD_OPTION_CONNECTION_TIMEOUT, l->lim.idle_timeout_s, NULL},
	    {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, l},
	    {cfg->header_bytes ? MHD_OPTION_CONNECTION_MEMORY_LIMIT : MHD_OPTION_END,
	     (intptr_t)cfg->header_bytes, NULL},
	    {cfg->threads ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, cfg->threads, NULL},
	    {tls ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END, 0,
	     (void *)PK_LISTEN_TLS_PRIORITIES},
	    {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)cfg->tls_cert},
	    {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)cfg->tls_key},
	    {tls && cfg->tls_trust ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
	     (void *)cfg->tls_trust},
	    {MHD_OPTION_END, 0, NULL},
	};
	/* The option array ends at its first END: move the set ones forward. */
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(opts); i++)
		if (opts[i].option != MHD_OPTION_END)
			opts[n++] = opts[i];
	opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	ensure_descriptors(l, mhd_limit + 64);
	return MHD_start_daemon(flags, 0, on_accept, l, on_request, l, MHD_OPTION_ARRAY, opts,
				MHD_OPTION_END);
}

int pk_listener_start(const struct pk_listener_config *cfg, struct pk_listener **ret, char *err,
		      size_t errlen)
{
	struct pk_listener *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->stop_fd[0] = l->stop_fd[1] = l->lfd = -1;
	l->lim = cfg->limits;
	pk_listen_limits_fill(&l->lim, 1000, 100);
	l->handler = cfg->handler;
	l->handler_arg = cfg->handler_arg;
	l->completed = cfg->completed;
	l->completed_arg = cfg->completed_arg;
	l->log = cfg->log;
	l->log_arg = cfg->log_arg;
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (cfg->threads && (l->lfd = listen_socket(cfg->addr)) < 0) {
		snprintf(err, errlen, "cannot serve there: %s", strerror(-l->lfd));
		pk_listener_stop(l);
		return -EADDRNOTAVAIL;
	}
	l->d = start_daemon(l, cfg);
	if (!l->d || (l->lfd >= 0 && acceptor_start(l) < 0)) {
		snprintf(err, errlen, "cannot serve there");
		pk_listener_stop(l);
		return -EADDRNOTAVAIL;
	}
	if (pthread_create(&l->reaper, NULL, reaper_main, l) != 0) {
		snprintf(err, errlen, "cannot start the connection reaper");
		pk_listener_stop(l);
		return -ENOMEM;
	}
	l->reaper_running = true;
	if (l->lfd < 0) {
		const union MHD_DaemonInfo *info =
		    MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_BIND_PORT);

		l->port = info ? info->port : 0;
	}
	*ret = l;
	return 0;
}

uint16_t pk_listener_port(const struct pk_listener *l)
{
	return l ? l->port : 0;
}

void pk_listener_stats(struct pk_listener *l, struct pk_listener_stats *ret)
{
	pthread_mutex_lock(&l->lock);
	*ret = l->st;
	pthread_mutex_unlock(&l->lock);
}

void pk_listener_metrics(struct pk_listener *l, const char *name, FILE *f)
{
	struct pk_listener_stats s;

	if (!l)
		return;
	pk_listener_stats(l, &s);
	fprintf(
	    f,
	    "# HELP podkernel_listener_connections Open connections.\n"
	    "# TYPE podkernel_listener_connections gauge\n"
	    "podkernel_listener_connections{listener=\"%s\"} %u\n"
	    "# HELP podkernel_listener_closed_total Connections the listener closed, by reason.\n"
	    "# TYPE podkernel_listener_closed_total counter\n"
	    "podkernel_listener_closed_total{listener=\"%s\",reason=\"refused\"} %llu\n"
	    "podkernel_listener_closed_total{listener=\"%s\",reason=\"displaced\"} %llu\n"
	    "podkernel_listener_closed_total{listener=\"%s\",reason=\"header_deadline\"} %llu\n"
	    "podkernel_listener_closed_total{listener=\"%s\",reason=\"body_rate\"} %llu\n",
	    name, s.open, name, (unsigned long long)s.refused, name,
	    (unsigned long long)s.displaced, name, (unsigned long long)s.header_timeouts, name,
	    (unsigned long long)s.body_timeouts);
}

void pk_listener_stop(struct pk_listener *l)
{
	if (!l)
		return;
	acceptor_stop(l); /* no connection is handed to a daemon that stops */
	if (l->reaper_running) {
		pthread_mutex_lock(&l->lock);
		l->stopping = true;
		pthread_cond_signal(&l->wake);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->reaper, NULL);
	}
	if (l->d)
		MHD_stop_daemon(l->d);
	for (size_t b = 0; b < PEER_BUCKETS; b++)
		while (l->peers[b]) {
			struct peer *p = l->peers[b];

			l->peers[b] = p->next;
			free(p);
		}
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

char *pk_listen_read_pem(const char *path, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int r = pk_read_small_file(path, PK_LISTEN_PEM_MAX_BYTES, &buf, &len);

	if (r == 0 && len == 0)
		r = -ENODATA;
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, r == -ENODATA ? "empty file" : strerror(-r));
		free(buf);
		return NULL;
	}
	return buf;
}
