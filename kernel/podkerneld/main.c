/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podkerneld — the appliance: parse flags, open the durable store, serve the
 * Kubernetes-shaped API, and wait for SIGTERM/SIGINT.  The scheduling loop and
 * controllers (kernel/appliance/, kernel/controllers/) start and stop at the
 * marked hook.  With --kubeconfig or --in-cluster it attaches to an existing
 * cluster instead (kernel/attach/): no store, no API, the cluster's pods are
 * scheduled.  In both modes the placement map (kernel/ui/) registers on the
 * loop as hooks and answers /ui/; it is freed after the loop stopped.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/kube/kubeconfig.h"
#include "kernel/lib/log.h"
#include "kernel/podkerneld/config.h"
#include "kernel/appliance/appliance.h"
#include "kernel/controllers/controllers.h"
#include "kernel/attach/attach.h"
#include "kernel/builder/builder.h"
#include "kernel/sched/sched.h"
#include "kernel/server/server.h"
#include "kernel/store/store.h"
#include "kernel/ui/ui.h"
#include "topology/topology.h"

/* How podkerneld is run, the first lines of --help. */
static const char usage_synopsis[] =
    "Usage: podkerneld [--listen ADDR:PORT] [--data-dir DIR] [--token-auth-file FILE]\n"
    "                  [--tls-cert-file FILE --tls-private-key-file FILE]\n"
    "                  [--insecure-allow-non-loopback] [--insecure-allow-anonymous-admin]\n"
    "                  [--simulate-board FILE] [-v LEVEL] [--write-kubeconfig FILE]\n"
    "                  [--no-scheduling] [--allow-damaged-store] [--gated-gangs-wait]\n"
    "                  [--sim-lifecycle] [--sim-start-delay S]\n"
    "                  [--sim-failure-rate P] [--sim-seed N] [--sim-node-loss T:NODE,...]\n"
    "                  [--config FILE] [--strategy NAME] [--log-format text|json]\n"
    "                  [--audit-log-path FILE [--audit-log-maxsize MB]\n"
    "                   [--audit-log-maxbackup N]]\n"
    "       podkerneld (--kubeconfig FILE [--context NAME] | --in-cluster)\n"
    "                  [--scheduler-name NAME] [--workload-api GROUP/VERSION]\n"
    "                  [--leader-elect [--leader-elect-namespace NS]\n"
    "                   [--leader-elect-lease-name NAME] [--leader-elect-identity ID]\n"
    "                   [--leader-elect-lease-duration S] [--leader-elect-renew-deadline "
    "S]\n"
    "                   [--leader-elect-retry-period S]] [--queues podkernel|cluster]\n"
    "                  [--listen ADDR:PORT] [-v LEVEL]\n"
    "       podkerneld --print-crds [--workload-api GROUP/VERSION]\n"
    "\n";

static void usage(FILE *f)
{
	fputs(usage_synopsis, f);
	fprintf(
	    f,
	    "  --listen ADDR:PORT          where to serve (default %s; port 0 picks one)\n"
	    "  --data-dir DIR              durable store (default ./podkernel-data)\n"
	    "  --token-auth-file FILE      static bearer tokens: token,user,uid,\"group1,group2\"\n"
	    "                              (without it every client on loopback is admin)\n"
	    "  --tls-cert-file FILE        PEM certificate (with --tls-private-key-file)\n"
	    "  --insecure-allow-non-loopback  plain HTTP on a non-loopback address\n"
	    "  --insecure-allow-anonymous-admin  no --token-auth-file on a non-loopback address\n"
	    "  --simulate-board FILE       register the simulated nodes of a board file\n"
	    "  --sim-lifecycle             pods on simulated nodes run: Running, then Succeeded\n"
	    "                              after their sim.podkernel.dev/duration annotation\n"
	    "  --sim-start-delay S         bound -> Running after S seconds (default 0)\n"
	    "  --sim-failure-rate P        a share P of the pods with a duration fail\n"
	    "  --sim-seed N                the failures' random draws\n"
	    "  --sim-node-loss T:NODE[,...]  simulated NODE is lost T seconds after start\n"
	    "  --client-ca-file FILE       accept client certificates this CA signed: CN the\n"
	    "                              user, O the groups (e.g. system:node:NAME, "
	    "system:nodes)\n"
	    "  --node-lease-namespace NS   where node heartbeat Leases live (kube-node-lease)\n"
	    "  --write-kubeconfig FILE     once serving, write a kubeconfig for the first\n"
	    "                              system:masters token (server URL, TLS certificate)\n"
	    "  --allow-damaged-store       start even when rows fail their checksum: set them\n"
	    "                              aside (table damaged_objects), serve the rest\n"
	    "  --no-scheduling             serve the API and store only (no scheduling loop,\n"
	    "                              no controllers): a stand-in kube-apiserver; a\n"
	    "                              --simulate-board's nodes are still registered\n"
	    "  --gated-gangs-wait          (both modes) a gang waits while any member has\n"
	    "                              scheduling gates; by default gated members count\n"
	    "                              toward minCount and the others are placed\n"
	    "  --queue-controller-user USER  (with --no-scheduling) USER's writes are the queue\n"
	    "                              controller's (an attached --queues=podkernel)\n"
	    "  --print-crds                print the CustomResourceDefinitions attach mode\n"
	    "                              needs (KEP-6012 kinds; deploy/crds/) and exit\n"
	    "\nConnections (both modes; docs/appliance.md, \"Reliability\"):\n"
	    "  --max-connections N         open connections in all (default %u; attach %u)\n"
	    "  --max-connections-per-address N  from one client address (default %u; attach "
	    "%u)\n"
	    "  --request-header-timeout S  request line and headers within S seconds (%g)\n"
	    "  --request-body-min-rate B   a body averages B bytes/s after that grace (%u)\n"
	    "  --connection-idle-timeout S no byte either way for S seconds: closed (%u)\n"
	    "\nNode loss (standalone; docs/appliance.md, \"Node heartbeats and node loss\"):\n"
	    "  --node-monitor-grace-period S  silence before a node is lost (%g; also\n"
	    "                              $PODKERNEL_NODE_GRACE_SECONDS)\n"
	    "  --node-eviction-rate R      nodes declared lost per second (%g)\n"
	    "  --secondary-node-eviction-rate R  the same in a partial disruption of a large\n"
	    "                              cluster (%g)\n"
	    "  --unhealthy-zone-threshold F  this share of nodes silent (and more than 2):\n"
	    "                              a disruption (%g)\n"
	    "  --large-cluster-size-threshold N  more nodes: a large cluster (%u)\n"
	    "\nAttach mode (schedule an existing Kubernetes cluster):\n"
	    "  --kubeconfig FILE           the cluster's kubeconfig (--context NAME picks one)\n"
	    "  --in-cluster                the pod's service account\n"
	    "  --scheduler-name NAME       schedule pods with this spec.schedulerName\n"
	    "                              (default %s)\n"
	    "  --workload-api G/V          group/version of Workload, PodGroup and\n"
	    "                              CompositePodGroup (default %s)\n"
	    "  --leader-elect              one active instance, through a coordination.k8s.io/v1\n"
	    "                              Lease (default %s/%s; times in seconds)\n"
	    "  --queues podkernel|cluster  who admits queued workloads (Kueue): the cluster\n"
	    "                              (default; its Kueue, podkernel schedules what it\n"
	    "                              releases) or podkernel's queue controller\n"
	    "  --listen ADDR:PORT          in attach mode: /healthz, /readyz, /metrics only\n"
	    "  --tls-cert-file FILE --tls-private-key-file FILE  serve it over TLS (it takes\n"
	    "                              the placement map's bearer tokens)\n"
	    "\nOperations (both modes; docs/operations.md):\n"
	    "  --config FILE               a PodkerneldConfiguration (/etc/podkernel/\n"
	    "                              podkerneld.yaml): flags given override it\n"
	    "  --strategy NAME             placement strategy (fit, kep; default fit)\n"
	    "  --log-format text|json      log lines as text (default) or JSON objects\n"
	    "  --audit-log-path FILE       one audit.k8s.io/v1 Event per write, per line\n"
	    "  --audit-log-maxsize MB      rotate the audit log past MB megabytes\n"
	    "  --audit-log-maxbackup N     rotated audit logs kept (default %u)\n"
	    "\n"
	    "  -v LEVEL                    0 errors, 1 startup (default), 2 every request,\n"
	    "                              3 scheduling decisions, 4 the recursive placement "
	    "trace\n",
	    PK_SERVER_DEFAULT_LISTEN, PK_SERVER_MAX_CONNECTIONS, PK_ATTACH_HEALTH_MAX_CONNECTIONS,
	    PK_SERVER_MAX_CONNECTIONS_PER_ADDR, PK_ATTACH_HEALTH_MAX_CONNECTIONS_PER_ADDR,
	    PK_LISTEN_HEADER_TIMEOUT_MS / 1000.0, PK_LISTEN_BODY_MIN_RATE, PK_LISTEN_IDLE_TIMEOUT_S,
	    PK_STANDALONE_DEFAULT_GRACE_MS / 1000.0, PK_STANDALONE_EVICTION_RATE,
	    PK_STANDALONE_SECONDARY_EVICTION_RATE, PK_STANDALONE_UNHEALTHY_THRESHOLD,
	    PK_STANDALONE_LARGE_CLUSTER, PK_ATTACH_DEFAULT_SCHEDULER,
	    PK_ATTACH_DEFAULT_WORKLOAD_API, PK_ATTACH_DEFAULT_LEASE_NAMESPACE,
	    PK_ATTACH_DEFAULT_LEASE_NAME, PK_SERVER_AUDIT_BACKUPS);
}

/* --log-format: how every line after the flags is written. */
static enum pk_log_format log_format = PK_LOG_TEXT;

/* One log line on stderr, in one write: "TIME LEVEL podkerneld: MSG" or JSON. */
static void log_line(void *arg, int level, const char *msg)
{
	char line[4096];
	struct timespec now;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &now);
	pk_log_format_line(log_format, "podkerneld", level, &now, msg, line, sizeof(line));
	fputs(line, stderr);
}

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_line(NULL, level, msg);
}

enum {
	O_LISTEN = 256,
	O_DATA,
	O_TOKENS,
	O_CERT,
	O_KEY,
	O_INSECURE,
	O_ANON,
	O_BOARD,
	O_VERSION,
	O_PRINT_CRDS,
	O_QUEUES,
	O_QUEUE_CTL_USER,
	O_WRITE_KC,
	O_LEASE_NS,
	O_CLIENT_CA,
	O_NO_SCHED,
	O_KUBECONFIG,
	O_CONTEXT,
	O_IN_CLUSTER,
	O_SCHED_NAME,
	O_WORKLOAD_API,
	O_LE,
	O_LE_NS,
	O_LE_NAME,
	O_LE_ID,
	O_LE_DURATION,
	O_LE_RENEW,
	O_LE_RETRY,
	O_MAX_CONNS,
	O_MAX_CONNS_ADDR,
	O_HEADER_TIMEOUT,
	O_BODY_RATE,
	O_IDLE_TIMEOUT,
	O_SIM_LIFECYCLE,
	O_SIM_START_DELAY,
	O_SIM_FAILURE_RATE,
	O_SIM_SEED,
	O_SIM_NODE_LOSS,
	O_ALLOW_DAMAGED,
	O_GATED_WAIT,
	O_NODE_GRACE,
	O_EVICTION_RATE,
	O_SECONDARY_RATE,
	O_UNHEALTHY,
	O_LARGE_CLUSTER,
	O_CONFIG,
	O_LOG_FORMAT,
	O_STRATEGY,
	O_AUDIT_PATH,
	O_AUDIT_MAXSIZE,
	O_AUDIT_MAXBACKUP,
};

struct options {
	struct pk_server_config cfg;
	struct pk_appliance_config app;	   /* the loop's flags (standalone) */
	struct pk_standalone_config alone; /* the node-loss flags */
	const char *data_dir;
	const char *board;
	const char *write_kubeconfig;
	const char *lease_ns;
	bool no_scheduling;
	bool allow_damaged; /* --allow-damaged-store */
	bool attach;	    /* --kubeconfig or --in-cluster */
	bool print_crds;
	bool queues_flag; /* --queues given */
	struct pk_attach_config acfg;
	struct { /* --sim-*: the simulated pod lifecycle */
		bool on;
		int64_t start_delay_ms;
		double failure_rate;
		uint64_t seed;
		const char *node_loss;
	} sim;
};

/* Seconds (fractions allowed) as milliseconds; -EINVAL unless in (0, 3600]. */
static int parse_seconds(const char *flag, const char *s, int *ret_ms)
{
	char *end;
	double v = strtod(s, &end);

	if (*end || !(v > 0 && v <= 3600)) {
		fprintf(stderr, "podkerneld: %s %s: expected seconds in (0, 3600]\n", flag, s);
		return -EINVAL;
	}
	*ret_ms = (int)(v * 1000);
	return 0;
}

/* The --sim-* flags; 0 taken, 1 not one of them, -EINVAL bad value. */
static int parse_sim_arg(int c, const char *arg, struct options *o)
{
	char *end;
	int ms = 0;

	switch (c) {
	case O_SIM_LIFECYCLE:
		o->sim.on = true;
		return 0;
	case O_SIM_START_DELAY:
		o->sim.on = true;
		if (parse_seconds("--sim-start-delay", arg, &ms) < 0)
			return -EINVAL;
		o->sim.start_delay_ms = ms;
		return 0;
	case O_SIM_FAILURE_RATE:
		o->sim.on = true;
		o->sim.failure_rate = strtod(arg, &end);
		if (*end || !(o->sim.failure_rate >= 0 && o->sim.failure_rate <= 1)) {
			fprintf(stderr, "podkerneld: --sim-failure-rate %s: expected 0..1\n", arg);
			return -EINVAL;
		}
		return 0;
	case O_SIM_SEED:
		o->sim.seed = strtoull(arg, &end, 10);
		if (*end || !*arg) {
			fprintf(stderr, "podkerneld: --sim-seed %s: expected an integer\n", arg);
			return -EINVAL;
		}
		return 0;
	case O_SIM_NODE_LOSS:
		o->sim.on = true;
		o->sim.node_loss = arg;
		return 0;
	default:
		return 1;
	}
}

/* The attach-mode flags; 0 taken, 1 not one of them, -EINVAL bad value. */
static int parse_attach_arg(int c, const char *arg, struct options *o)
{
	struct pk_attach_config *a = &o->acfg;

	switch (c) {
	case O_KUBECONFIG:
		a->kubeconfig = arg;
		o->attach = true;
		return 0;
	case O_CONTEXT:
		a->context = arg;
		return 0;
	case O_IN_CLUSTER:
		a->in_cluster = true;
		o->attach = true;
		return 0;
	case O_SCHED_NAME:
		a->scheduler_name = arg;
		return 0;
	case O_WORKLOAD_API:
		a->workload_api = arg;
		return 0;
	case O_LE:
		a->leader_elect = true;
		return 0;
	case O_LE_NS:
		a->lease_namespace = arg;
		return 0;
	case O_LE_NAME:
		a->lease_name = arg;
		return 0;
	case O_LE_ID:
		a->identity = arg;
		return 0;
	case O_QUEUES:
		if (strcmp(arg, "podkernel") != 0 && strcmp(arg, "cluster") != 0) {
			fprintf(stderr, "podkerneld: --queues %s: expected podkernel or cluster\n",
				arg);
			return -EINVAL;
		}
		a->queues = strcmp(arg, "podkernel") == 0;
		o->queues_flag = true;
		return 0;
	case O_LE_DURATION:
		return parse_seconds("--leader-elect-lease-duration", arg, &a->lease_duration_ms);
	case O_LE_RENEW:
		return parse_seconds("--leader-elect-renew-deadline", arg, &a->renew_deadline_ms);
	case O_LE_RETRY:
		return parse_seconds("--leader-elect-retry-period", arg, &a->retry_ms);
	default:
		return 1;
	}
}

/* A count in [1, max]; -EINVAL otherwise. */
static int parse_count(const char *flag, const char *s, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || s[0] == '-' || v < 1 || v > max) {
		fprintf(stderr, "podkerneld: %s %s: expected a whole number in [1, %u]\n", flag, s,
			max);
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

/* The listener's caps and deadlines (both modes); 1: not one of them. */
static int parse_listen_arg(int c, const char *arg, struct pk_listen_limits *l)
{
	int ms = 0, r;

	switch (c) {
	case O_MAX_CONNS:
		return parse_count("--max-connections", arg, 100000, &l->max_connections);
	case O_MAX_CONNS_ADDR:
		return parse_count("--max-connections-per-address", arg, 100000,
				   &l->max_connections_per_addr);
	case O_HEADER_TIMEOUT:
		r = parse_seconds("--request-header-timeout", arg, &ms);
		l->header_timeout_ms = (unsigned)ms;
		return r;
	case O_BODY_RATE:
		return parse_count("--request-body-min-rate", arg, 1u << 30, &l->body_min_rate);
	case O_IDLE_TIMEOUT:
		r = parse_seconds("--connection-idle-timeout", arg, &ms);
		l->idle_timeout_s = (unsigned)(ms + 999) / 1000;
		return r;
	default:
		return 1;
	}
}

/* Every long option (the enum is shared with parse_attach_arg). */
static const struct option longopts[] = {
    {"listen", required_argument, NULL, O_LISTEN},
    {"data-dir", required_argument, NULL, O_DATA},
    {"token-auth-file", required_argument, NULL, O_TOKENS},
    {"tls-cert-file", required_argument, NULL, O_CERT},
    {"tls-private-key-file", required_argument, NULL, O_KEY},
    {"insecure-allow-non-loopback", no_argument, NULL, O_INSECURE},
    {"insecure-allow-anonymous-admin", no_argument, NULL, O_ANON},
    {"simulate-board", required_argument, NULL, O_BOARD},
    {"write-kubeconfig", required_argument, NULL, O_WRITE_KC},
    {"node-lease-namespace", required_argument, NULL, O_LEASE_NS},
    {"client-ca-file", required_argument, NULL, O_CLIENT_CA},
    {"no-scheduling", no_argument, NULL, O_NO_SCHED},
    {"allow-damaged-store", no_argument, NULL, O_ALLOW_DAMAGED},
    {"gated-gangs-wait", no_argument, NULL, O_GATED_WAIT},
    {"kubeconfig", required_argument, NULL, O_KUBECONFIG},
    {"context", required_argument, NULL, O_CONTEXT},
    {"in-cluster", no_argument, NULL, O_IN_CLUSTER},
    {"scheduler-name", required_argument, NULL, O_SCHED_NAME},
    {"workload-api", required_argument, NULL, O_WORKLOAD_API},
    {"leader-elect", no_argument, NULL, O_LE},
    {"leader-elect-namespace", required_argument, NULL, O_LE_NS},
    {"leader-elect-lease-name", required_argument, NULL, O_LE_NAME},
    {"leader-elect-name", required_argument, NULL, O_LE_NAME}, /* older spelling */
    {"leader-elect-identity", required_argument, NULL, O_LE_ID},
    {"leader-elect-lease-duration", required_argument, NULL, O_LE_DURATION},
    {"leader-elect-renew-deadline", required_argument, NULL, O_LE_RENEW},
    {"leader-elect-retry-period", required_argument, NULL, O_LE_RETRY},
    {"max-connections", required_argument, NULL, O_MAX_CONNS},
    {"max-connections-per-address", required_argument, NULL, O_MAX_CONNS_ADDR},
    {"request-header-timeout", required_argument, NULL, O_HEADER_TIMEOUT},
    {"request-body-min-rate", required_argument, NULL, O_BODY_RATE},
    {"connection-idle-timeout", required_argument, NULL, O_IDLE_TIMEOUT},
    {"sim-lifecycle", no_argument, NULL, O_SIM_LIFECYCLE},
    {"sim-start-delay", required_argument, NULL, O_SIM_START_DELAY},
    {"sim-failure-rate", required_argument, NULL, O_SIM_FAILURE_RATE},
    {"sim-seed", required_argument, NULL, O_SIM_SEED},
    {"sim-node-loss", required_argument, NULL, O_SIM_NODE_LOSS},
    {"node-monitor-grace-period", required_argument, NULL, O_NODE_GRACE},
    {"node-eviction-rate", required_argument, NULL, O_EVICTION_RATE},
    {"secondary-node-eviction-rate", required_argument, NULL, O_SECONDARY_RATE},
    {"unhealthy-zone-threshold", required_argument, NULL, O_UNHEALTHY},
    {"large-cluster-size-threshold", required_argument, NULL, O_LARGE_CLUSTER},
    {"config", required_argument, NULL, O_CONFIG},
    {"log-format", required_argument, NULL, O_LOG_FORMAT},
    {"strategy", required_argument, NULL, O_STRATEGY},
    {"audit-log-path", required_argument, NULL, O_AUDIT_PATH},
    {"audit-log-maxsize", required_argument, NULL, O_AUDIT_MAXSIZE},
    {"audit-log-maxbackup", required_argument, NULL, O_AUDIT_MAXBACKUP},
    {"version", no_argument, NULL, O_VERSION},
    {"print-crds", no_argument, NULL, O_PRINT_CRDS},
    {"queues", required_argument, NULL, O_QUEUES},
    {"queue-controller-user", required_argument, NULL, O_QUEUE_CTL_USER},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A number in [0, max] (rates, shares); -EINVAL otherwise. */
static int parse_real(const char *flag, const char *s, double max, double *ret)
{
	char *end;
	double v = strtod(s, &end);

	if (*end || end == s || !(v >= 0 && v <= max)) {
		fprintf(stderr, "podkerneld: %s %s: expected a number in [0, %g]\n", flag, s, max);
		return -EINVAL;
	}
	/* 0 means "the default" in the configuration: an explicit 0 is a tiny rate */
	*ret = v > 0 ? v : -1;
	return 0;
}

/* The node-loss monitor's flags (standalone); 1: not one of them. */
static int parse_node_loss_arg(int c, const char *arg, struct pk_standalone_config *a)
{
	int ms = 0, r;

	switch (c) {
	case O_NODE_GRACE:
		r = parse_seconds("--node-monitor-grace-period", arg, &ms);
		a->node_grace_ms = ms;
		return r;
	case O_EVICTION_RATE:
		return parse_real("--node-eviction-rate", arg, 1000, &a->node_eviction_rate);
	case O_SECONDARY_RATE:
		return parse_real("--secondary-node-eviction-rate", arg, 1000,
				  &a->secondary_node_eviction_rate);
	case O_UNHEALTHY:
		r = parse_real("--unhealthy-zone-threshold", arg, 1, &a->unhealthy_zone_threshold);
		if (r == 0 && a->unhealthy_zone_threshold <= 0) {
			fprintf(stderr,
				"podkerneld: --unhealthy-zone-threshold %s: expected a share "
				"in (0, 1]\n",
				arg);
			return -EINVAL;
		}
		return r;
	case O_LARGE_CLUSTER:
		return parse_count("--large-cluster-size-threshold", arg, 1000000,
				   &a->large_cluster_size_threshold);
	default:
		return 1;
	}
}

/* 0 ok, 1 exit 0 (help/version), -EINVAL bad usage. */
/* The flags of the listener, attach mode, the simulation and the store; 1: none of them. */
static void damage_line(void *arg, const char *msg)
{
	(void)arg;
	say(1, "store: %s", msg);
}

/* Each damaged row is said as found (damage_line); the rows set aside at open, once more in sum. */
static void report_damage(struct pk_store *store)
{
	struct pk_store_damage d;

	pk_store_get_damage(store, &d);
	if (d.quarantined)
		say(1,
		    "store: %" PRIu64 " damaged rows set aside in damaged_objects "
		    "(last: %s); serving the rest",
		    d.quarantined, d.last);
}

/* A strategy the scheduler knows: its name, or -EINVAL with the names it knows. */
static int parse_strategy(const char *arg, struct options *o)
{
	for (size_t i = 0; i < pk_sched_strategy_count(); i++)
		if (strcmp(pk_sched_strategy_name(i), arg) == 0) {
			o->app.strategy = arg;
			o->acfg.strategy = arg;
			return 0;
		}
	fprintf(stderr, "podkerneld: --strategy %s: expected one of", arg);
	for (size_t i = 0; i < pk_sched_strategy_count(); i++)
		fprintf(stderr, " %s", pk_sched_strategy_name(i));
	fprintf(stderr, "\n");
	return -EINVAL;
}

/* Logs, audit and the strategy; 1: none of them. */
static int parse_ops_arg(int c, const char *arg, struct options *o)
{
	unsigned n;

	switch (c) {
	case O_LOG_FORMAT:
		if (pk_log_format_parse(arg, &log_format) == 0)
			return 0;
		fprintf(stderr, "podkerneld: --log-format %s: expected text or json\n", arg);
		return -EINVAL;
	case O_STRATEGY:
		return parse_strategy(arg, o);
	case O_AUDIT_PATH:
		o->cfg.audit.path = arg;
		return 0;
	case O_AUDIT_MAXSIZE:
		if (parse_count("--audit-log-maxsize", arg, 1000000, &n) < 0)
			return -EINVAL;
		o->cfg.audit.max_size_mb = n;
		return 0;
	case O_AUDIT_MAXBACKUP:
		if (parse_count("--audit-log-maxbackup", arg, 1000, &n) < 0)
			return -EINVAL;
		o->cfg.audit.max_backups = n;
		return 0;
	default:
		return 1;
	}
}

static int parse_other_arg(int c, const char *arg, struct options *o)
{
	int r = parse_listen_arg(c, arg, &o->cfg.limits);

	if (r > 0)
		r = parse_node_loss_arg(c, arg, &o->alone);
	if (r > 0)
		r = parse_attach_arg(c, arg, o);
	if (r > 0)
		r = parse_sim_arg(c, arg, o);
	if (r > 0 && c == O_ALLOW_DAMAGED) {
		o->allow_damaged = true;
		r = 0;
	}
	if (r > 0 && c == O_GATED_WAIT) { /* both modes */
		o->app.gated_gangs_wait = o->acfg.gated_gangs_wait = true;
		r = 0;
	}
	return r;
}

/* One option (from the command line or the configuration file): 0, 1 exit 0, -EINVAL. */
static int apply_opt(int c, const char *arg, struct options *o)
{
	char *end;
	int r;

	switch (c) {
	case O_LISTEN:
		o->cfg.listen = arg;
		break;
	case O_DATA:
		o->data_dir = arg;
		break;
	case O_TOKENS:
		o->cfg.token_auth_file = arg;
		break;
	case O_CERT:
		o->cfg.tls_cert_file = arg;
		break;
	case O_KEY:
		o->cfg.tls_key_file = arg;
		break;
	case O_INSECURE:
		o->cfg.insecure_allow_non_loopback = true;
		break;
	case O_ANON:
		o->cfg.insecure_allow_anonymous_admin = true;
		break;
	case O_BOARD:
		o->board = arg;
		break;
	case O_WRITE_KC:
		o->write_kubeconfig = arg;
		break;
	case O_LEASE_NS:
		o->lease_ns = arg;
		break;
	case O_CLIENT_CA:
		o->cfg.client_ca_file = arg;
		break;
	case O_NO_SCHED:
		o->no_scheduling = true;
		break;
	case O_QUEUE_CTL_USER:
		o->cfg.queue_controller_user = arg;
		break;
	case O_CONFIG:
		break; /* read before the command line (apply_config) */
	case O_VERSION:
		printf("podkerneld %s\n", PODKERNEL_VERSION);
		return 1;
	case O_PRINT_CRDS:
		o->print_crds = true;
		break;
	case 'h':
		usage(stdout);
		return 1;
	case 'v':
		o->cfg.verbosity = (int)strtol(arg, &end, 10);
		if (*end || o->cfg.verbosity < 0) {
			fprintf(stderr, "podkerneld: -v %s: expected a level 0..4\n", arg);
			return -EINVAL;
		}
		break;
	default:
		r = parse_ops_arg(c, arg, o);
		if (r > 0)
			r = parse_other_arg(c, arg, o);
		if (r > 0) {
			usage(stderr);
			return -EINVAL;
		}
		return r;
	}
	return 0;
}

/* The configuration file, freed at exit: the options point into it. */
static struct pkd_config *config;

static void config_free(void)
{
	pkd_config_free(config);
}

/* --config FILE (or --config=FILE) anywhere on the command line, or NULL. */
static const char *config_path(int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			path = argv[i] + 9;
	}
	return path;
}

/* The file's fields as the flags they stand for, before the command line's. */
static int apply_config(const char *path, struct options *o)
{
	char err[1024] = "";
	int r = pkd_config_load(path, &config, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "podkerneld: --config: %s\n", err);
		return -EINVAL;
	}
	atexit(config_free);
	for (size_t i = 0; i < config->n; i++) {
		const struct pkd_config_flag *f = &config->flags[i];
		int c = strcmp(f->flag, "v") == 0 ? 'v' : 0;

		for (size_t k = 0; !c && longopts[k].name; k++)
			if (strcmp(longopts[k].name, f->flag) == 0)
				c = longopts[k].val;
		r = c ? apply_opt(c, f->value, o) : -EINVAL;
		if (r != 0) {
			fprintf(stderr, "podkerneld: --config %s: the value for --%s is refused\n",
				path, f->flag);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * --print-crds [--workload-api GROUP/VERSION]: the CRDs, served where attach
 * mode looks for the kinds; 1 (done), -EINVAL, or exit 1 when stdout fails.
 */
static int print_crds(const char *workload_api)
{
	const char *api = workload_api ? workload_api : PK_ATTACH_DEFAULT_WORKLOAD_API;
	const char *slash = strchr(api, '/');
	char group[254];

	if (!slash || slash == api || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - api) >= sizeof(group)) {
		fprintf(stderr, "podkerneld: --workload-api %s: expected GROUP/VERSION\n", api);
		return -EINVAL;
	}
	snprintf(group, sizeof(group), "%.*s", (int)(slash - api), api);
	if (pk_server_print_crds(stdout, group, slash + 1) < 0) {
		fprintf(stderr, "podkerneld: --print-crds: cannot write\n");
		exit(1);
	}
	return 1;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	const char *cfg_file = config_path(argc, argv);
	int c, r;

	o->cfg.listen = PK_SERVER_DEFAULT_LISTEN;
	o->cfg.verbosity = 1;
	o->cfg.log = log_line;
	o->data_dir = "./podkernel-data";
	if (cfg_file && apply_config(cfg_file, o) < 0)
		return -EINVAL;
	while ((c = getopt_long(argc, argv, "hv:", longopts, NULL)) != -1) {
		r = c == '?' ? (usage(stderr), -EINVAL) : apply_opt(c, optarg, o);
		if (r != 0)
			return r;
	}
	if (o->print_crds)
		return print_crds(o->acfg.workload_api);
	if (o->attach && (o->board || o->write_kubeconfig || o->no_scheduling ||
			  o->cfg.token_auth_file || o->cfg.client_ca_file)) {
		fprintf(stderr,
			"podkerneld: --kubeconfig/--in-cluster attach to a cluster: "
			"--simulate-board, --write-kubeconfig, --no-scheduling, "
			"--token-auth-file and --client-ca-file belong to standalone mode\n");
		return -EINVAL;
	}
	if (o->attach &&
	    (o->alone.node_grace_ms || o->alone.node_eviction_rate ||
	     o->alone.secondary_node_eviction_rate || o->alone.unhealthy_zone_threshold ||
	     o->alone.large_cluster_size_threshold)) {
		fprintf(stderr,
			"podkerneld: the node-loss flags (--node-monitor-grace-period, "
			"--node-eviction-rate, ...) belong to standalone mode: attached, the "
			"cluster's own node lifecycle controller decides\n");
		return -EINVAL;
	}
	if (!o->attach && (o->acfg.leader_elect || o->acfg.scheduler_name || o->acfg.workload_api ||
			   o->acfg.context)) {
		fprintf(stderr, "podkerneld: --leader-elect, --scheduler-name, --workload-api and "
				"--context need --kubeconfig or --in-cluster\n");
		return -EINVAL;
	}
	if (o->queues_flag && !o->attach) {
		fprintf(stderr,
			"podkerneld: --queues needs --kubeconfig or --in-cluster (standalone "
			"podkerneld always admits with its own queue controller)\n");
		return -EINVAL;
	}
	if (o->cfg.queue_controller_user && !o->no_scheduling) {
		fprintf(stderr, "podkerneld: --queue-controller-user needs --no-scheduling (the "
				"queue controller is then an attached podkerneld's)\n");
		return -EINVAL;
	}
	if (o->no_scheduling && o->sim.on) {
		fprintf(stderr, "podkerneld: --sim-lifecycle and the other --sim-* flags run pods "
				"through the controllers: they do not go with --no-scheduling\n");
		return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "podkerneld: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* The token of the first system:masters user of the token file, or NULL. */
static char *admin_token(const char *path, char *err, size_t errlen)
{
	struct pk_tokens *tk = NULL;
	char *tok = NULL;

	if (pk_tokens_load(path, &tk, err, errlen) < 0)
		return NULL;
	for (size_t i = 0; i < tk->n && !tok; i++)
		for (size_t g = 0; g < tk->v[i].ngroups && !tok; g++)
			if (strcmp(tk->v[i].groups[g], "system:masters") == 0)
				tok = strdup(tk->v[i].token);
	pk_tokens_free(tk);
	return tok;
}

/*
 * --write-kubeconfig: the URL clients reach (a wildcard listen address
 * becomes loopback), the serving certificate as the CA to trust, the admin
 * token.
 */
static int write_kubeconfig(const struct options *o, uint16_t port)
{
	char host[300], url[340], err[1024] = "";
	const char *l = o->cfg.listen, *colon = strrchr(l, ':');
	char *tok = NULL;
	int r;

	snprintf(host, sizeof(host), "%.*s", colon ? (int)(colon - l) : (int)strlen(l), l);
	if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	else if (strcmp(host, "[::]") == 0)
		snprintf(host, sizeof(host), "[::1]");
	snprintf(url, sizeof(url), "%s://%s:%u", o->cfg.tls_cert_file ? "https" : "http", host,
		 (unsigned)port);
	if (o->cfg.token_auth_file) {
		tok = admin_token(o->cfg.token_auth_file, err, sizeof(err));
		if (!tok) {
			fprintf(stderr,
				"podkerneld: --write-kubeconfig: no system:masters token in %s\n",
				o->cfg.token_auth_file);
			return -ENOENT;
		}
	}
	r = pk_kubeconfig_write(o->write_kubeconfig, "podkernel", url, o->cfg.tls_cert_file, tok,
				err, sizeof(err));
	if (tok)
		explicit_bzero(tok, strlen(tok));
	free(tok);
	if (r < 0)
		say(0, "--write-kubeconfig: %s", err);
	else
		say(1, "wrote kubeconfig %s (server %s)", o->write_kubeconfig, url);
	return r;
}

static int64_t saturated_ms(void *srv)
{
	return pk_server_saturated_ms(srv);
}

/* Attach mode: no store and no API of our own; health on --listen. */
/* A --simulate-board file is read before anything is served, so a bad one
 * is reported (FILE:LINE:COL) and exits 2 before "serving on". */
static int check_board(const char *path)
{
	char err[TOPO_ERR_MAX];
	struct topo_board *b = topo_board_new();
	int r;

	if (!b)
		return -ENOMEM;
	r = topo_board_load_file(b, path, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "podkerneld: --simulate-board: %s\n", err);
	topo_board_free(b);
	return r;
}

/* Create objs[from, from + n) in one transaction; an object that exists is kept. */
static int create_some(struct pk_store *store, json_t *objs, size_t from, size_t n,
		       const char *path)
{
	json_t *batch[64];
	int rcs[64], r;

	for (size_t i = 0; i < n; i++) {
		batch[i] = json_array_get(objs, from + i);
		pk_set(batch[i], "metadata.annotations",
		       json_pack("{s:s}", PK_ANN_SIMULATED, path));
	}
	r = pk_store_create_batch(store, batch, n, rcs);
	for (size_t i = 0; r == 0 && i < n; i++)
		if (rcs[i] < 0 && rcs[i] != -EEXIST) {
			say(0, "--simulate-board %s: registering %s %s: %s", path,
			    pk_kind_to_string(pk_kind_of(batch[i])), pk_name(batch[i]),
			    pk_errno_text(rcs[i]));
			r = rcs[i];
		}
	return r;
}

/*
 * --simulate-board with --no-scheduling: the board's Nodes and ResourceSlices
 * are registered as the controllers would (annotated simulated), so the API
 * serves a cluster that another scheduler (an attached podkerneld, a test)
 * places pods on.  Nothing runs their pods or watches their heartbeats.
 */
static int register_board(struct pk_store *store, const char *path)
{
	char err[TOPO_ERR_MAX];
	struct topo_board *b = topo_board_new();
	json_t *objs = NULL, *slices = NULL;
	int r = b ? topo_board_load_file(b, path, err, sizeof(err)) : -ENOMEM;

	if (r == 0)
		r = pk_board_nodes_json(b, 0, &objs);
	if (r == 0)
		r = pk_board_slices_json(b, 0, &slices);
	if (r == 0 && json_array_extend(objs, slices) < 0)
		r = -ENOMEM;
	topo_board_free(b);
	for (size_t from = 0; r == 0 && from < json_array_size(objs); from += 64)
		r = create_some(
		    store, objs, from,
		    json_array_size(objs) - from < 64 ? json_array_size(objs) - from : 64, path);
	if (r == 0)
		say(1, "--no-scheduling: registered the %zu Nodes and ResourceSlices of %s",
		    json_array_size(objs), path);
	json_decref(slices);
	json_decref(objs);
	return r;
}

static int run_attached(struct options *o, sigset_t *sigs)
{
	char err[1024] = "";
	struct pk_attach *a = NULL;
	int sig = 0, r = pk_ui_map_new(&o->acfg.map);

	if (r < 0) {
		say(0, "%s", strerror(-r));
		return 1;
	}
	o->acfg.listen = o->cfg.listen;
	o->acfg.limits = o->cfg.limits;
	o->acfg.tls_cert_file = o->cfg.tls_cert_file;
	o->acfg.tls_key_file = o->cfg.tls_key_file;
	o->acfg.verbosity = o->cfg.verbosity;
	o->acfg.log = log_line;
	o->acfg.queue_pass = pk_queues_pass_scratch;
	r = pk_attach_start(&o->acfg, &a, err, sizeof(err));
	if (r < 0) {
		say(0, "%s", *err ? err : strerror(-r));
		pk_ui_map_free(o->acfg.map);
		return r == -EINVAL || r == -ENOENT || r == -ENOTSUP ? 2 : 1;
	}
	sigwait(sigs, &sig);
	say(1, "signal %d, shutting down", sig);
	pk_attach_stop(a);
	pk_ui_map_free(o->acfg.map);
	return 0;
}

/* The placement map and the standalone loop on store, the map's hooks registered first. */
static int start_standalone(struct pk_store *store, struct pk_appliance_config *acfg,
			    const struct pk_standalone_config *scfg, struct pk_ui_map **ret_map,
			    struct pk_appliance **ret_app, char *err, size_t errlen)
{
	struct pk_ui_map *map = NULL;
	int r = pk_ui_map_new(&map);

	if (r == 0)
		r = pk_appliance_config_add_hooks(acfg, &pk_ui_map_hooks, map);
	if (r == 0)
		r = pk_standalone_start(store, acfg, scfg, ret_app, err, errlen);
	if (r < 0) {
		pk_ui_map_free(map);
		return r;
	}
	*ret_map = map;
	return 0;
}

/* /metrics beyond the server's: the loop's and the placement map's. */
struct metrics_hook {
	struct pk_appliance *app;
	struct pk_ui_map *map;
};

static void more_metrics(void *arg, FILE *f)
{
	struct metrics_hook *h = arg;

	pk_appliance_metrics_cb(h->app, f);
	pk_ui_map_metrics(h->map, f);
}

/* The node-lease namespace exists from the start, as kube-node-lease does. */
static void ensure_namespace(struct pk_store *store, const char *name)
{
	json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
			       "metadata", "name", name);

	pk_store_create(store, ns, NULL, NULL); /* -EEXIST: there already */
	json_decref(ns);
}

/* The loop with the controllers and the placement map on store, unless --no-scheduling. */
static int start_loop(const struct options *o, struct pk_store *store, struct pk_server *srv,
		      struct pk_ui_map **ret_map, struct pk_appliance **ret_app, char *err,
		      size_t errlen)
{
	struct pk_appliance_config acfg = o->app;
	struct pk_standalone_config scfg = o->alone;

	scfg.board = o->board;
	scfg.sim_lifecycle = o->sim.on;
	scfg.sim_start_delay_ms = o->sim.start_delay_ms;
	scfg.sim_failure_rate = o->sim.failure_rate;
	scfg.sim_seed = o->sim.seed;
	scfg.sim_node_loss = o->sim.node_loss;
	scfg.node_lease_namespace = o->lease_ns;
	scfg.saturated_ms = saturated_ms;
	scfg.saturated_arg = srv;
	acfg.verbosity = o->cfg.verbosity;
	acfg.log = log_line;
	if (o->no_scheduling)
		say(1, "--no-scheduling: serving the API and store only");
	if (o->no_scheduling && o->board)
		return register_board(store, o->board);
	if (o->no_scheduling)
		return 0;
	return start_standalone(store, &acfg, &scfg, ret_map, ret_app, err, errlen);
}

int main(int argc, char **argv)
{
	struct options o = {0};
	int rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 2;

	/* Block the signals before any thread starts, so only sigwait() sees them. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.attach)
		return run_attached(&o, &sigs);

	if (o.board && check_board(o.board) < 0)
		return 2;
	char err[1024] = "";
	struct pk_store *store = NULL;
	struct pk_server *srv = NULL;
	struct pk_store_open_opts sopts = {.allow_damaged = o.allow_damaged,
					   .damage_log = damage_line,
					   .admission = wb_admission,
					   .nadmission = WB_ADMISSION_N};
	rc = pk_store_open_opts(o.data_dir, &sopts, &store, err, sizeof(err));
	if (rc == -EUCLEAN) {
		say(0, "%s/podkernel.db: %s", o.data_dir, err);
		return 1;
	}
	if (rc == 0)
		report_damage(store);
	if (rc == 0 && o.lease_ns)
		ensure_namespace(store, o.lease_ns);
	o.cfg.node_lease_namespace = o.lease_ns;
	if (rc == 0)
		rc = pk_server_new(store, &o.cfg, &srv, err, sizeof(err));
	if (rc == -EINVAL) {
		say(0, "%s", err);
		pk_store_close(store);
		return 2;
	}
	if (rc == 0)
		rc = pk_server_start(srv, err, sizeof(err));
	if (rc < 0) {
		say(0, "%s", *err ? err : strerror(-rc));
		pk_server_free(srv);
		pk_store_close(store);
		/* A bad --listen, TLS files or plain HTTP off loopback: bad usage. */
		return rc == -EINVAL || rc == -EPERM ? 2 : 1;
	}
	/* The scheduling loop, controllers, node monitor (kernel/appliance/) and placement map. */
	struct pk_appliance *app = NULL;
	struct pk_ui_map *map = NULL;
	rc = start_loop(&o, store, srv, &map, &app, err, sizeof(err));
	if (rc < 0) {
		say(0, "%s", *err ? err : strerror(-rc));
		pk_store_shutdown(store);
		pk_server_free(srv);
		pk_store_close(store);
		/* A bad or missing --simulate-board file is bad input. */
		return rc == -EINVAL || rc == -ENOENT || rc == -EISDIR || rc == -EACCES ? 2 : 1;
	}

	struct metrics_hook mh = {app, map};
	if (app) {
		pk_server_set_metrics_hook(srv, more_metrics, &mh);
		pk_server_set_ui_hook(srv, pk_ui_map_serve, map);
	}
	if (o.write_kubeconfig && write_kubeconfig(&o, pk_server_port(srv)) < 0) {
		pk_server_set_metrics_hook(srv, NULL, NULL);
		pk_server_set_ui_hook(srv, NULL, NULL);
		pk_appliance_stop(app);
		pk_ui_map_free(map);
		pk_store_shutdown(store);
		pk_server_free(srv);
		pk_store_close(store);
		return 1;
	}

	int sig = 0;
	sigwait(&sigs, &sig);
	say(1, "signal %d, shutting down", sig);

	pk_server_set_metrics_hook(srv, NULL, NULL);
	pk_server_set_ui_hook(srv, NULL, NULL);
	pk_appliance_stop(app);
	pk_ui_map_free(map); /* neither the loop nor the server calls it any more */

	pk_store_shutdown(store);
	pk_server_free(srv);
	pk_store_close(store);
	return 0;
}
