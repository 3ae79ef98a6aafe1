/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podagent — the node agent.  Parses options, loads the board, and either
 * runs one cycle (--once: print the Node, write the NFD file, publish) or the
 * daemon loop of daemon.c.  Everything else lives in libpkagent (agent.h).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "kernel/kube/kubeconfig.h"
#include "kernel/kube/kube.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
	fputs("Usage: podagent [OPTIONS]\n"
	      "\n"
	      "Discovers accelerators, NUMA nodes and ICI links (hwloc, libudev, libnl) and\n"
	      "publishes them as node labels.  Without --once it runs as a daemon.\n"
	      "\n"
	      "Discovery:\n"
	      "  --hwloc-xml FILE      read an hwloc XML export instead of this machine\n"
	      "  --board FILE          board file: accelerator IDs, chips, ICI ports, levels\n"
	      "  --host-index N        this host's index in the board's cluster (else the\n"
	      "                        Node's label topology.podkernel.dev/host-index, the\n"
	      "                        ICI neighbours' published indexes, or the node name\n"
	      "                        against the board's hostname pattern)\n"
	      "  --node-name NAME      node name (default $NODE_NAME, else the hostname)\n"
	      "  --no-udev             do not use libudev (no device nodes, no hotplug)\n"
	      "  --no-netlink          do not read network links (no ICI report)\n"
	      "Output:\n"
	      "  --once                one cycle, then exit\n"
	      "  -o, --output json|yaml  print the v1 Node (with --once)\n"
	      "  --nfd-dir DIR         write DIR/podagent, an NFD features.d file (DIR is\n"
	      "                        created when missing)\n"
	      "  --nfd-ttl SECONDS     its expiry time from now (default 3600)\n"
	      "  --compatible-labels LIST   also publish nvidia (GPU Feature Discovery's\n"
	      "                        nvidia.com/gpu.*) and/or gke (gke-tpu-topology)\n"
	      "Publishing:\n"
	      "  --publish URL         PATCH the node's labels at URL (API server or podkerneld)\n"
	      "  --in-cluster          publish with the pod's service account\n"
	      "  --kubeconfig FILE [--context NAME]   server and credentials from a kubeconfig\n"
	      "                        (e.g. the kubelet's: the node's own identity)\n"
	      "  --token TOKEN | --token-file FILE   bearer token (the file is re-read each "
	      "request)\n"
	      "  --ca-file FILE        CA bundle for https\n"
	      "  --client-certificate FILE --client-key FILE   the node's own TLS identity\n"
	      "  --insecure-skip-tls-verify\n"
	      "  --publish-status      also own status.capacity/allocatable (no kubelet)\n"
	      "  --register-node       create the Node when missing (no kubelet registers it)\n"
	      "  --lease-namespace NS  the node's heartbeat Lease (default kube-node-lease)\n"
	      "  --lease-duration S    its leaseDurationSeconds (default 40)\n"
	      "  --no-lease            do not renew a Lease\n"
	      "  --resync SECONDS      send an unchanged Node patch again after (default 300)\n"
	      "  --retries N           attempts per publish (default 5)\n"
	      "  --backoff-ms MS       first retry delay (default 500), doubled up to\n"
	      "  --backoff-max-ms MS   (default 8000)\n"
	      "Daemon:\n"
	      "  --interval SECONDS    Lease renewal and discovery period (default 10)\n"
	      "  --health-listen ADDR:PORT  serve GET /healthz (daemon): 200 while discovery\n"
	      "                        cycles finish, 503 after three intervals without one\n"
	      "  --debounce-ms MS      quiet time after hotplug or link events (default 1000)\n"
	      "\n"
	      "Exit: 0 ok, 2 bad usage or input, 1 other failure (e.g. publishing failed).\n",
	      f);
}

struct options {
	struct agent_daemon_config d;
	struct agent_publish_config pub;
	const char *board_path;
	const char *output;
	bool once, in_cluster;
	const char *kubeconfig, *context;
	const char *health_listen; /* --health-listen ADDR:PORT */
	/* where to publish and how to authenticate, from the command line */
	struct {
		const char *url, *token, *token_file, *ca_file, *cert_file, *key_file;
		bool insecure;
	} srv;
	char node_name[TOPO_DNS_SUBDOMAIN_MAX + 1];
	char *last_warnings;
};

static int parse_long(const char *opt, const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "podagent: %s: expected a number from %ld to %ld, got \"%s\"\n",
			opt, min, max, s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

static void default_node_name(struct options *o, const char *given)
{
	const char *env = getenv("NODE_NAME");
	char host[256] = "";

	if (given)
		snprintf(o->node_name, sizeof(o->node_name), "%.253s", given);
	else if (env && *env)
		snprintf(o->node_name, sizeof(o->node_name), "%.253s", env);
	else {
		if (gethostname(host, sizeof(host) - 1) < 0)
			snprintf(host, sizeof(host), "localhost");
		/* Kubernetes registers hostnames lowercased */
		for (char *p = host; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		snprintf(o->node_name, sizeof(o->node_name), "%.253s", host);
	}
}

enum {
	OPT_HWLOC = 256,
	OPT_BOARD,
	OPT_HOST_INDEX,
	OPT_NODE_NAME,
	OPT_NO_UDEV,
	OPT_NO_NETLINK,
	OPT_ONCE,
	OPT_NFD_DIR,
	OPT_NFD_TTL,
	OPT_PUBLISH,
	OPT_IN_CLUSTER,
	OPT_TOKEN,
	OPT_TOKEN_FILE,
	OPT_CA_FILE,
	OPT_INSECURE,
	OPT_RETRIES,
	OPT_BACKOFF,
	OPT_BACKOFF_MAX,
	OPT_INTERVAL,
	OPT_DEBOUNCE,
	OPT_VERSION,
	OPT_STATUS,
	OPT_REGISTER,
	OPT_LEASE_NS,
	OPT_LEASE_DURATION,
	OPT_NO_LEASE,
	OPT_RESYNC,
	OPT_CERT,
	OPT_KEY,
	OPT_COMPAT,
	OPT_KUBECONFIG,
	OPT_CONTEXT,
	OPT_HEALTH,
};

static const struct option long_opts[] = {
    {"hwloc-xml", required_argument, NULL, OPT_HWLOC},
    {"board", required_argument, NULL, OPT_BOARD},
    {"host-index", required_argument, NULL, OPT_HOST_INDEX},
    {"node-name", required_argument, NULL, OPT_NODE_NAME},
    {"no-udev", no_argument, NULL, OPT_NO_UDEV},
    {"no-netlink", no_argument, NULL, OPT_NO_NETLINK},
    {"once", no_argument, NULL, OPT_ONCE},
    {"output", required_argument, NULL, 'o'},
    {"nfd-dir", required_argument, NULL, OPT_NFD_DIR},
    {"nfd-ttl", required_argument, NULL, OPT_NFD_TTL},
    {"publish", required_argument, NULL, OPT_PUBLISH},
    {"in-cluster", no_argument, NULL, OPT_IN_CLUSTER},
    {"token", required_argument, NULL, OPT_TOKEN},
    {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
    {"ca-file", required_argument, NULL, OPT_CA_FILE},
    {"insecure-skip-tls-verify", no_argument, NULL, OPT_INSECURE},
    {"publish-status", no_argument, NULL, OPT_STATUS},
    {"register-node", no_argument, NULL, OPT_REGISTER},
    {"lease-namespace", required_argument, NULL, OPT_LEASE_NS},
    {"lease-duration", required_argument, NULL, OPT_LEASE_DURATION},
    {"no-lease", no_argument, NULL, OPT_NO_LEASE},
    {"resync", required_argument, NULL, OPT_RESYNC},
    {"client-certificate", required_argument, NULL, OPT_CERT},
    {"client-key", required_argument, NULL, OPT_KEY},
    {"compatible-labels", required_argument, NULL, OPT_COMPAT},
    {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"health-listen", required_argument, NULL, OPT_HEALTH},
    {"retries", required_argument, NULL, OPT_RETRIES},
    {"backoff-ms", required_argument, NULL, OPT_BACKOFF},
    {"backoff-max-ms", required_argument, NULL, OPT_BACKOFF_MAX},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"debounce-ms", required_argument, NULL, OPT_DEBOUNCE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {0},
};

/* "nvidia,gke" into AGENT_COMPAT_* bits. */
static int parse_compat(const char *list, unsigned *ret)
{
	char buf[128];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (strcmp(w, "nvidia") == 0)
			*ret |= AGENT_COMPAT_NVIDIA;
		else if (strcmp(w, "gke") == 0)
			*ret |= AGENT_COMPAT_GKE;
		else {
			fprintf(stderr,
				"podagent: --compatible-labels: unknown set \"%s\" "
				"(nvidia, gke)\n",
				w);
			return -EINVAL;
		}
	}
	return 0;
}

/* A numeric option into *dst; returns -EINVAL on a bad value. */
static int num_opt(const char *name, long min, long max, long *dst)
{
	return parse_long(name, optarg, min, max, dst);
}

/* One option c (optarg is its value) into *o; 1 to exit 0 (--help/--version),
 * -EINVAL on bad usage. */
/* An option of publishing (--publish, credentials, Lease, retries) into
 * o->pub; -EINVAL on bad usage or an unknown option. */
static int parse_publish_opt(int c, struct options *o)
{
	long v;
	int r = 0;

	switch (c) {
	case OPT_PUBLISH:
		o->srv.url = optarg;
		break;
	case OPT_IN_CLUSTER:
		o->in_cluster = true;
		break;
	case OPT_TOKEN:
		o->srv.token = optarg;
		break;
	case OPT_TOKEN_FILE:
		o->srv.token_file = optarg;
		break;
	case OPT_CA_FILE:
		o->srv.ca_file = optarg;
		break;
	case OPT_INSECURE:
		o->srv.insecure = true;
		break;
	case OPT_STATUS:
		o->pub.status = true;
		break;
	case OPT_REGISTER:
		o->pub.register_node = true;
		break;
	case OPT_LEASE_NS:
		if (!topo_dns_label_valid(optarg)) {
			fprintf(stderr,
				"podagent: --lease-namespace: \"%s\" is not a namespace "
				"name (a DNS label)\n",
				optarg);
			return -EINVAL;
		}
		o->pub.lease_namespace = optarg;
		break;
	case OPT_LEASE_DURATION:
		r = num_opt("--lease-duration", 1, 3600, &v);
		o->pub.lease_duration_s = (int)v;
		break;
	case OPT_RESYNC:
		r = num_opt("--resync", 1, 86400, &v);
		o->pub.resync_s = (int)v;
		break;
	case OPT_CERT:
		o->srv.cert_file = optarg;
		break;
	case OPT_KEY:
		o->srv.key_file = optarg;
		break;
	case OPT_RETRIES:
		r = num_opt("--retries", 1, 100, &v);
		o->pub.retries = (int)v;
		break;
	case OPT_BACKOFF:
		r = num_opt("--backoff-ms", 1, 600000, &o->pub.backoff_ms);
		break;
	case OPT_BACKOFF_MAX:
		r = num_opt("--backoff-max-ms", 1, 3600000, &o->pub.backoff_max_ms);
		break;
	default:
		usage(stderr);
		return -EINVAL;
	}
	return r;
}

static int parse_one(int c, struct options *o, const char **node_name)
{
	long v;
	int r = 0;

	switch (c) {
	case 'h':
		usage(stdout);
		return 1;
	case OPT_VERSION:
		printf("podagent %s\n", PODKERNEL_VERSION);
		return 1;
	case OPT_HWLOC:
		o->d.agent.hwloc_xml = optarg;
		break;
	case OPT_BOARD:
		o->board_path = optarg;
		break;
	case OPT_HOST_INDEX:
		r = num_opt("--host-index", 0, INT32_MAX, &v);
		o->d.agent.host_index = v;
		break;
	case OPT_NODE_NAME:
		*node_name = optarg;
		break;
	case OPT_NO_UDEV:
		o->d.agent.use_udev = false;
		break;
	case OPT_NO_NETLINK:
		o->d.agent.use_netlink = false;
		break;
	case OPT_ONCE:
		o->once = true;
		break;
	case 'o':
		o->output = optarg;
		break;
	case OPT_NFD_DIR:
		o->d.nfd_dir = optarg;
		break;
	case OPT_NFD_TTL:
		r = num_opt("--nfd-ttl", 1, 365L * 86400, &v);
		o->d.nfd_ttl_s = (int)v;
		break;
	case OPT_NO_LEASE:
		o->d.lease = false;
		break;
	case OPT_COMPAT:
		r = parse_compat(optarg, &o->d.agent.compat);
		break;
	case OPT_KUBECONFIG:
		o->kubeconfig = optarg;
		break;
	case OPT_CONTEXT:
		o->context = optarg;
		break;
	case OPT_HEALTH:
		o->health_listen = optarg;
		break;
	case OPT_INTERVAL:
		r = num_opt("--interval", 1, 86400, &v);
		o->d.interval_s = (int)v;
		break;
	case OPT_DEBOUNCE:
		r = num_opt("--debounce-ms", 1, 600000, &v);
		o->d.debounce_ms = (int)v;
		break;
	default:
		return parse_publish_opt(c, o);
	}
	return r;
}

/* The options that exclude or need each other; -EINVAL with a message. */
static int check_args(int argc, char **argv, const struct options *o)
{
	if (optind < argc) {
		fprintf(stderr, "podagent: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->output && strcmp(o->output, "json") != 0 && strcmp(o->output, "yaml") != 0) {
		fprintf(stderr, "podagent: -o: expected json or yaml, got \"%s\"\n", o->output);
		return -EINVAL;
	}
	if (o->health_listen && o->once) {
		fprintf(stderr, "podagent: --health-listen is for the daemon, not --once\n");
		return -EINVAL;
	}
	if (o->output && !o->once) {
		fprintf(stderr, "podagent: -o needs --once\n");
		return -EINVAL;
	}
	if ((o->srv.url || o->in_cluster) && o->kubeconfig) {
		fprintf(stderr, "podagent: --kubeconfig excludes --publish and --in-cluster\n");
		return -EINVAL;
	}
	if (o->context && !o->kubeconfig) {
		fprintf(stderr, "podagent: --context needs --kubeconfig\n");
		return -EINVAL;
	}
	if (o->srv.url && o->in_cluster) {
		fprintf(stderr, "podagent: --publish and --in-cluster exclude each other\n");
		return -EINVAL;
	}
	if (!o->srv.cert_file != !o->srv.key_file) {
		fprintf(stderr, "podagent: --client-certificate and --client-key go together\n");
		return -EINVAL;
	}
	if (o->srv.token && o->srv.token_file) {
		fprintf(stderr, "podagent: --token and --token-file exclude each other\n");
		return -EINVAL;
	}
	return 0;
}

/* 0 to go on, 1 to exit 0 (--help/--version), -EINVAL on bad usage. */
static int parse_args(int argc, char **argv, struct options *o)
{
	const char *node_name = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "ho:", long_opts, NULL)) != -1) {
		r = parse_one(c, o, &node_name);
		if (r != 0)
			return r;
	}
	r = check_args(argc, argv, o);
	if (r < 0)
		return r;
	default_node_name(o, node_name);
	return 0;
}

/* Print warnings, but in the daemon only when they changed since last time. */
static void print_warnings(struct options *o, const struct pk_errors *w)
{
	char *joined = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&joined, &len);

	if (!f)
		return;
	pk_errors_print(w, f, "podagent: warning");
	fclose(f);
	if (!joined)
		return;
	if (!o->last_warnings || strcmp(o->last_warnings, joined) != 0)
		fputs(joined, stderr);
	free(o->last_warnings);
	o->last_warnings = joined;
}

static void on_report(const struct agent_report *r, int publish_rc, const char *err, void *arg)
{
	struct options *o = arg;

	if (!r) {
		fprintf(stderr, "podagent: %s\n", err);
		return;
	}
	print_warnings(o, &r->warnings);
	if (publish_rc < 0)
		fprintf(stderr, "podagent: publishing node %s failed: %s\n", r->node_name, err);
}

static void on_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "podagent: %s\n", msg);
}

static int run_once(struct options *o)
{
	struct agent_report r;
	char err[1024] = "";
	int prc = 0, q;

	q = agent_cycle(&o->d, &r, &prc, err, sizeof(err));
	if (q < 0) {
		fprintf(stderr, "podagent: %s\n", err);
		return q == -EINVAL || q == -ENOENT ? EXIT_USAGE : EXIT_FAIL;
	}
	on_report(&r, prc, err, o);
	if (r.nfd_rc < 0)
		prc = r.nfd_rc; /* the warning said why */
	if (o->output || (!o->d.publisher && !o->d.nfd_dir)) {
		json_t *node = agent_node_json(&r, o->d.agent.board);
		bool yaml = o->output && strcmp(o->output, "yaml") == 0;

		q = node ? pk_write(stdout, node, yaml ? PK_FORMAT_YAML : PK_FORMAT_JSON) : -ENOMEM;
		json_decref(node);
		if (q < 0)
			prc = q;
	}
	agent_report_clear(&r);
	return prc < 0 ? EXIT_FAIL : EXIT_OK;
}

/* The daemon, with its health listener when asked for. */
static int run_daemon(struct options *o)
{
	char err[256];
	int r;

	if (o->health_listen) {
		r = agent_health_start(o->health_listen, o->d.interval_s, &o->d.health, err,
				       sizeof(err));
		if (r < 0) {
			fprintf(stderr, "podagent: %s\n", err);
			return r == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		}
		fprintf(stderr, "podagent: serving health on %s (port %u)\n", o->health_listen,
			(unsigned)agent_health_port(o->d.health));
	}
	r = agent_daemon_run(&o->d);
	agent_health_stop(o->d.health);
	o->d.health = NULL;
	if (r < 0) {
		fprintf(stderr, "podagent: event loop: %s\n", strerror(-r));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/*
 * Where to publish: --kubeconfig (its context's server and credentials; the
 * command line's credentials win), --in-cluster (the pod's service account)
 * or --publish URL with the command line's credentials.  1: nowhere
 * (nothing asked), 0: *c filled, else an exit code.
 */
static int server_credentials(struct options *o, struct pk_kube_credentials *c)
{
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_overrides ov = {.context = o->context,
				       .token = o->srv.token,
				       .ca_file = o->srv.ca_file,
				       .cert_file = o->srv.cert_file,
				       .key_file = o->srv.key_file,
				       .insecure = o->srv.insecure};
	const char *what = o->kubeconfig ? "--kubeconfig" : "--in-cluster";
	char err[1024] = "";
	int r;

	if (o->kubeconfig) {
		r = pk_kubeconfig_load(o->kubeconfig, NULL, NULL, &kc, err, sizeof(err));
		if (r == 0)
			r = pk_kubeconfig_resolve(kc, &ov, c, err, sizeof(err));
		pk_kubeconfig_free(kc);
	} else if (o->in_cluster) {
		r = kube_credentials_in_cluster(getenv("PODAGENT_SERVICEACCOUNT_DIR"), c, err,
						sizeof(err));
	} else if (o->srv.url) {
		*c = (struct pk_kube_credentials){.insecure = o->srv.insecure};
		r = (c->server = strdup(o->srv.url)) ? 0 : -ENOMEM;
#define DUP_FLAG(field)                                                                            \
	if (r == 0 && o->srv.field && !(c->field = strdup(o->srv.field)))                          \
		r = -ENOMEM;
		DUP_FLAG(token)
		DUP_FLAG(ca_file)
		DUP_FLAG(cert_file)
		DUP_FLAG(key_file)
#undef DUP_FLAG
		snprintf(err, sizeof(err), "%s", strerror(ENOMEM));
		what = "--publish";
	} else {
		return 1;
	}
	/* a token file on the command line replaces the kubeconfig's token */
	if (r == 0 && o->srv.token_file) {
		free(c->token);
		c->token = NULL;
		free(c->token_file);
		r = (c->token_file = strdup(o->srv.token_file)) ? 0 : -ENOMEM;
	}
	if (r < 0) {
		fprintf(stderr, "podagent: %s: %s\n", what, err[0] ? err : strerror(-r));
		pk_kube_credentials_clear(c);
		return r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
	}
	return 0;
}

static int setup_publisher(struct options *o)
{
	struct pk_kube_credentials c = {0};
	int r = server_credentials(o, &c);

	if (r == 1)
		return EXIT_OK;
	if (r != 0)
		return r;
	if (strncmp(c.server, "http://", 7) != 0 && strncmp(c.server, "https://", 8) != 0) {
		fprintf(stderr, "podagent: --publish %s: expected an http:// or https:// URL\n",
			c.server);
		pk_kube_credentials_clear(&c);
		return EXIT_USAGE;
	}
	r = agent_publisher_new(&o->pub, &c, &o->d.publisher);
	if (r < 0) {
		fprintf(stderr, "podagent: publishing: %s\n", strerror(-r));
		return r == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	/* the host index may come from the Node's label or the ICI neighbours' Nodes */
	o->d.agent.node_label = agent_publisher_node_label;
	o->d.agent.peer_index = agent_publisher_peer_index;
	o->d.agent.lookup_arg = o->d.publisher;
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct options o = {
	    .d =
		{
		    .agent = {.host_index = -1, .use_udev = true, .use_netlink = true},
		    .interval_s = 10,
		    .lease = true,
		    .debounce_ms = 1000,
		    .nfd_ttl_s = 3600,
		    .on_report = on_report,
		    .log = on_log,
		},
	    .pub = {.retries = 5, .backoff_ms = 500, .backoff_max_ms = 8000},
	};
	struct topo_board *board = NULL;
	char err[TOPO_ERR_MAX];
	int r, rc;

	r = parse_args(argc, argv, &o);
	if (r != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	o.d.arg = &o;
	o.d.agent.node_name = o.node_name;
	if (o.d.nfd_dir && (r = agent_mkdir_p(o.d.nfd_dir)) < 0) {
		fprintf(stderr, "podagent: --nfd-dir %s: cannot create the directory: %s\n",
			o.d.nfd_dir, strerror(-r));
		return r == -ENOMEM || r == -EIO || r == -ENOSPC ? EXIT_FAIL : EXIT_USAGE;
	}
	if (o.board_path) {
		board = topo_board_new();
		if (!board || topo_board_load_file(board, o.board_path, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", board ? err : "podagent: out of memory");
			topo_board_free(board);
			return board ? EXIT_USAGE : EXIT_FAIL;
		}
		o.d.agent.board = board;
	}
	rc = setup_publisher(&o);
	if (rc == EXIT_OK && o.once) {
		rc = run_once(&o);
	} else if (rc == EXIT_OK) {
		rc = run_daemon(&o);
	}
	agent_publisher_free(o.d.publisher);
	topo_board_free(board);
	free(o.last_warnings);
	return rc;
}
