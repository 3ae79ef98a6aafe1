/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.c — podagent's cycle and its event loop.
 *
 * A cycle renews the node's Lease (the heartbeat), discovers (report.c),
 * writes the NFD file and publishes (a Node write only when something
 * changed).  The loop
 * polls five descriptors: a signalfd for SIGTERM/SIGINT, the udev monitor,
 * the netlink cache manager, a periodic timerfd (--interval) and a one-shot
 * debounce timerfd.  Hotplug and link events only re-arm the debounce timer,
 * so a burst of events (a card and its functions, a cable pulled and put
 * back) costs one cycle once things are quiet for debounce_ms.  A watch that
 * cannot start (no udev, no netlink permission) is logged and left out; the
 * periodic cycle still runs.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "kernel/lib/log.h"

int agent_cycle(const struct agent_daemon_config *cfg, struct agent_report *ret_report,
		int *ret_publish_rc, char *err, size_t errlen)
{
	struct agent_report r;
	int prc = 0, q;

	q = agent_report_build(&cfg->agent, &r, err, errlen);
	if (q < 0)
		return q;
	if (cfg->nfd_dir) {
		q = agent_nfd_write(cfg->nfd_dir, "podagent", &r.labels,
				    (int64_t)time(NULL) +
					(cfg->nfd_ttl_s > 0 ? cfg->nfd_ttl_s : 3600));
		if (q < 0)
			pk_errors_add(&r.warnings, "NFD file in %s: %s", cfg->nfd_dir,
				      strerror(-q));
		r.nfd_rc = q;
	}
	if (cfg->publisher) {
		json_t *node = agent_node_json(&r, cfg->agent.board);

		prc = node ? agent_publish(cfg->publisher, node, err, errlen) : -ENOMEM;
		json_decref(node);
	}
	*ret_report = r;
	*ret_publish_rc = prc;
	return 0;
}

/* The loop's own messages, to the program's sink. */
#define say(cfg, ...) pk_logf((cfg)->log, (cfg)->arg, PK_LOG_ALL, 0, __VA_ARGS__)

/* The node's Lease first: it says the agent is alive whatever the Node patch does. */
static void renew_lease(const struct agent_daemon_config *cfg)
{
	char err[1024] = "";
	int r;

	if (!cfg->publisher || !cfg->lease)
		return;
	r = agent_lease_renew(cfg->publisher, cfg->agent.node_name, err, sizeof(err));
	if (r < 0)
		say(cfg, "renewing the node's Lease: %s", err[0] ? err : strerror(-r));
}

static void run_cycle(const struct agent_daemon_config *cfg)
{
	struct agent_report r;
	char err[1024] = "";
	int prc = 0;

	renew_lease(cfg);
	if (agent_cycle(cfg, &r, &prc, err, sizeof(err)) < 0) {
		agent_health_cycle_done(cfg->health);
		if (cfg->on_report)
			cfg->on_report(NULL, 0, err, cfg->arg);
		return;
	}
	agent_health_cycle_done(cfg->health);
	if (cfg->on_report)
		cfg->on_report(&r, prc, err, cfg->arg);
	agent_report_clear(&r);
}

static int arm(int fd, long first_ms, long every_ms)
{
	struct itimerspec it = {
	    .it_value = {first_ms / 1000, (first_ms % 1000) * 1000000L},
	    .it_interval = {every_ms / 1000, (every_ms % 1000) * 1000000L},
	};

	return timerfd_settime(fd, 0, &it, NULL) < 0 ? -errno : 0;
}

static void drain_fd(int fd)
{
	char buf[sizeof(struct signalfd_siginfo)];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

enum { FD_SIGNAL, FD_UDEV, FD_NETLINK, FD_TICK, FD_DEBOUNCE, FD_COUNT };

struct loop {
	struct pollfd pfd[FD_COUNT];
	struct agent_udev_monitor *udev;
	struct agent_link_watch *links;
	sigset_t old;
};

static int loop_open(const struct agent_daemon_config *cfg, struct loop *l)
{
	sigset_t mask;

	for (int i = 0; i < FD_COUNT; i++)
		l->pfd[i] = (struct pollfd){.fd = -1, .events = POLLIN};
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, &l->old) < 0)
		return -errno;
	l->pfd[FD_SIGNAL].fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	l->pfd[FD_TICK].fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	l->pfd[FD_DEBOUNCE].fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->pfd[FD_SIGNAL].fd < 0 || l->pfd[FD_TICK].fd < 0 || l->pfd[FD_DEBOUNCE].fd < 0)
		return -errno;
	if (cfg->interval_s > 0)
		arm(l->pfd[FD_TICK].fd, cfg->interval_s * 1000L, cfg->interval_s * 1000L);
	if (cfg->agent.use_udev) {
		if (agent_udev_monitor_new(&l->udev) < 0)
			say(cfg, "udev monitor unavailable: no hotplug updates");
		l->pfd[FD_UDEV].fd = agent_udev_monitor_fd(l->udev);
	}
	if (cfg->agent.use_netlink) {
		if (agent_link_watch_new(cfg->agent.board, &l->links) < 0)
			say(cfg, "netlink watch unavailable: no link-change updates");
		l->pfd[FD_NETLINK].fd = agent_link_watch_fd(l->links);
	}
	return 0;
}

static void loop_close(struct loop *l)
{
	agent_udev_monitor_free(l->udev);
	agent_link_watch_free(l->links);
	for (int i = 0; i < FD_COUNT; i++)
		if (i == FD_SIGNAL || i == FD_TICK || i == FD_DEBOUNCE)
			if (l->pfd[i].fd >= 0)
				close(l->pfd[i].fd);
	sigprocmask(SIG_SETMASK, &l->old, NULL);
}

int agent_daemon_run(const struct agent_daemon_config *cfg)
{
	struct loop l = {0};
	long debounce = cfg->debounce_ms > 0 ? cfg->debounce_ms : 1000;
	int r = loop_open(cfg, &l);

	if (r < 0) {
		loop_close(&l);
		return r;
	}
	/* SIGTERM during a publish backoff ends the wait, not only the next poll. */
	agent_publisher_set_cancel_fd(cfg->publisher, l.pfd[FD_SIGNAL].fd);
	run_cycle(cfg);
	for (;;) {
		bool changed = false;

		if (poll(l.pfd, FD_COUNT, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (l.pfd[FD_SIGNAL].revents) {
			drain_fd(l.pfd[FD_SIGNAL].fd);
			break;
		}
		if (l.pfd[FD_UDEV].revents & (POLLERR | POLLNVAL)) {
			say(cfg, "udev monitor failed: no more hotplug updates");
			agent_udev_monitor_free(l.udev);
			l.udev = NULL;
			l.pfd[FD_UDEV].fd = -1;
		} else if (l.pfd[FD_UDEV].revents &&
			   agent_udev_monitor_drain(l.udev, cfg->agent.board, &changed) == 0 &&
			   changed) {
			arm(l.pfd[FD_DEBOUNCE].fd, debounce, 0);
		}
		changed = false;
		if (l.pfd[FD_NETLINK].revents) {
			if (agent_link_watch_process(l.links, &changed) < 0) {
				/* a broken socket would keep poll() busy: stop watching */
				say(cfg, "netlink watch failed: no more link-change updates");
				agent_link_watch_free(l.links);
				l.links = NULL;
				l.pfd[FD_NETLINK].fd = -1;
			} else if (changed) {
				arm(l.pfd[FD_DEBOUNCE].fd, debounce, 0);
			}
		}
		if (l.pfd[FD_DEBOUNCE].revents || l.pfd[FD_TICK].revents) {
			if (l.pfd[FD_DEBOUNCE].revents)
				say(cfg, "device or link change: discovering again");
			drain_fd(l.pfd[FD_DEBOUNCE].fd);
			drain_fd(l.pfd[FD_TICK].fd);
			run_cycle(cfg);
		}
	}
	agent_publisher_set_cancel_fd(cfg->publisher, -1);
	loop_close(&l);
	return r;
}
