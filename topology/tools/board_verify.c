/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_verify.c — `podctl board verify BOARD --links REPORT`.
 *
 * Compares the ICI cabling podagent found with the wiring the board demands
 * (topo_board_ici_peer).  REPORT holds link reports, YAML or JSON, one or
 * many (a List): a podagent LinkReport object, or a Node whose
 * ici.podkernel.dev/links annotation holds one.  Each report names its host
 * (hostIndex, else the host name looked up among the board's hosts) and
 * lists ports with operstate, carrier and peer ("<host>/<port>").  For every
 * port the board gives the host, the verifier reports a missing link, a
 * missing or wrong peer, a port that is down, and cabling on a port the
 * board leaves unwired; ports the board does not know are reported too.
 * Exit 0 when everything matches, 1 on any mismatch, 2 on bad input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "topology/tools/board_verify.h"
#include "topology/topology.h"

#define MAX_PORT_NAME 64

enum { VERIFY_OK = 0, VERIFY_MISMATCH = 1, VERIFY_USAGE = 2 };

/* ---- host names of the cluster, sorted for lookup -------------------------- */

struct host_name {
	char name[TOPO_LABEL_NAME_MAX + 1];
	int64_t index;
};

struct cluster {
	const struct topo_board *board;
	int superslices;
	struct host_name *names;
	int64_t n;
};

static int cmp_host_name(const void *a, const void *b)
{
	return strcmp(((const struct host_name *)a)->name, ((const struct host_name *)b)->name);
}

static int cluster_init(struct cluster *c, const struct topo_board *board, int superslices)
{
	int64_t n = topo_board_host_count(board, superslices);

	c->board = board;
	c->superslices = superslices;
	if (n < 0)
		return (int)n;
	c->names = calloc((size_t)n + 1, sizeof(*c->names));
	if (!c->names)
		return -ENOMEM;
	for (int64_t i = 0; i < n; i++) {
		struct topo_host h;
		int r = topo_board_host(board, superslices, i, &h);

		if (r < 0)
			return r;
		memcpy(c->names[i].name, h.name, sizeof(h.name));
		c->names[i].index = i;
	}
	c->n = n;
	qsort(c->names, (size_t)n, sizeof(*c->names), cmp_host_name);
	return 0;
}

static int64_t cluster_find(const struct cluster *c, const char *name)
{
	struct host_name key = { 0 }, *hit;

	if (!name || strlen(name) > TOPO_LABEL_NAME_MAX)
		return -1;
	strcpy(key.name, name);
	hit = bsearch(&key, c->names, (size_t)c->n, sizeof(*c->names), cmp_host_name);
	return hit ? hit->index : -1;
}

static const char *cluster_name(const struct cluster *c, int64_t index, char *buf,
				size_t len)
{
	struct topo_host h;

	if (topo_board_host(c->board, c->superslices, index, &h) < 0)
		snprintf(buf, len, "host#%lld", (long long)index);
	else
		snprintf(buf, len, "%s", h.name);
	return buf;
}

/* ---- reading reports ---------------------------------------------------------- */

/*
 * The LinkReport inside obj (a new reference): obj itself, or the parsed
 * annotation of a Node.  Errors name the field path under item.
 */
static json_t *report_of(const json_t *obj, const char *item, char *err, size_t errlen)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *text;
	json_t *rep;
	json_error_t jerr;

	if (kind && strcmp(kind, "LinkReport") == 0)
		return json_incref((json_t *)obj);
	if (!kind || strcmp(kind, "Node") != 0) {
		snprintf(err, errlen, "%s.kind: expected Node or LinkReport, got %s", item,
			 kind ? kind : "nothing");
		return NULL;
	}
	text = json_string_value(json_object_get(
		json_object_get(json_object_get(obj, "metadata"), "annotations"), TOPO_ANN_LINKS));
	if (!text) {
		snprintf(err, errlen, "%s.metadata.annotations[%s]: missing: not a podagent Node",
			 item, TOPO_ANN_LINKS);
		return NULL;
	}
	rep = json_loads(text, 0, &jerr);
	if (!json_is_object(rep)) {
		snprintf(err, errlen, "%s.metadata.annotations[%s]: not a JSON object: %s", item,
			 TOPO_ANN_LINKS, rep ? "wrong type" : jerr.text);
		json_decref(rep);
		return NULL;
	}
	return rep;
}

struct port_state {
	const char *port, *operstate, *peer;
	bool carrier;
};

/* Check the shape of one report and resolve its host. */
static int report_host(const struct cluster *c, const json_t *rep, const char *item,
		       int64_t *ret_host, char *err, size_t errlen)
{
	const json_t *idx = json_object_get(rep, "hostIndex");
	const char *host = json_string_value(json_object_get(rep, "host"));
	const json_t *links = json_object_get(rep, "links");
	size_t i;
	json_t *l;

	if (!json_is_array(links)) {
		snprintf(err, errlen, "%s.links: expected a list of ports", item);
		return -EINVAL;
	}
	json_array_foreach(links, i, l)
	{
		if (!json_is_string(json_object_get(l, "port"))) {
			snprintf(err, errlen, "%s.links[%zu].port: expected a string", item, i);
			return -EINVAL;
		}
		if (json_object_get(l, "carrier") && !json_is_boolean(json_object_get(l, "carrier"))) {
			snprintf(err, errlen, "%s.links[%zu].carrier: expected true or false", item, i);
			return -EINVAL;
		}
	}
	if (idx && !json_is_integer(idx)) {
		snprintf(err, errlen, "%s.hostIndex: expected an integer", item);
		return -EINVAL;
	}
	*ret_host = idx ? json_integer_value(idx) : cluster_find(c, host);
	if (*ret_host < 0 || *ret_host >= c->n) {
		snprintf(err, errlen, "%s.host: %s%s is not a host of board %s (%lld hosts)", item,
			 host ? host : "", idx ? " (hostIndex out of range)" : "",
			 topo_board_name(c->board), (long long)c->n);
		return -ENOENT;
	}
	return 0;
}

static bool find_port(const json_t *links, const char *name, struct port_state *ret)
{
	size_t i;
	json_t *l;

	json_array_foreach(links, i, l)
	{
		if (strcmp(json_string_value(json_object_get(l, "port")), name) != 0)
			continue;
		ret->port = name;
		ret->operstate = json_string_value(json_object_get(l, "operstate"));
		ret->peer = json_string_value(json_object_get(l, "peer"));
		ret->carrier = json_is_true(json_object_get(l, "carrier"));
		if (!ret->operstate)
			ret->operstate = "unknown";
		if (ret->peer && !*ret->peer)
			ret->peer = NULL;
		return true;
	}
	return false;
}

/* ---- checking ------------------------------------------------------------------- */

struct tally {
	int hosts, ports, ok, missing, wrong, down, unexpected, unknown;
};

static void check_port(const struct cluster *c, int64_t host, const char *hname, size_t port,
		       const json_t *links, struct tally *t, FILE *out)
{
	const char *pname = topo_board_ici_port_name(c->board, port);
	char want[TOPO_LABEL_NAME_MAX + MAX_PORT_NAME + 2], peer_host[TOPO_LABEL_NAME_MAX + 16];
	struct port_state st = { 0 };
	int64_t ph;
	size_t pp;
	bool wired = topo_board_ici_peer(c->board, c->superslices, host, port, &ph, &pp) == 0;
	bool found = find_port(links, pname, &st);
	bool bad = false;

	t->ports++;
	if (wired)
		snprintf(want, sizeof(want), "%s/%s", cluster_name(c, ph, peer_host, sizeof(peer_host)),
			 topo_board_ici_port_name(c->board, pp));
	if (!found) {
		if (wired) {
			fprintf(out, "missing link: %s/%s (expected peer %s)\n", hname, pname, want);
			t->missing++;
			return;
		}
		t->ok++; /* unwired and absent: as it should be */
		return;
	}
	if (!wired) {
		if (st.peer) {
			fprintf(out, "unexpected link: %s/%s -> %s (the board leaves this port unwired)\n",
				hname, pname, st.peer);
			t->unexpected++;
		} else {
			t->ok++;
		}
		return;
	}
	if (!st.peer || strcmp(st.peer, want) != 0) {
		fprintf(out, "wrong peer: %s/%s -> %s, expected %s\n", hname, pname,
			st.peer ? st.peer : "(none)", want);
		t->wrong++;
		bad = true;
	}
	if (strcmp(st.operstate, "up") != 0 || !st.carrier) {
		fprintf(out, "down: %s/%s (operstate %s, carrier %s)\n", hname, pname, st.operstate,
			st.carrier ? "yes" : "no");
		t->down++;
		bad = true;
	}
	if (!bad)
		t->ok++;
}

static void check_unknown_ports(const struct cluster *c, const char *hname, const json_t *links,
				struct tally *t, FILE *out)
{
	size_t n = topo_board_ici_port_count(c->board), i, j;
	json_t *l;

	json_array_foreach(links, i, l)
	{
		const char *name = json_string_value(json_object_get(l, "port"));

		for (j = 0; j < n; j++)
			if (strcmp(topo_board_ici_port_name(c->board, j), name) == 0)
				break;
		if (j == n) {
			fprintf(out, "unknown port: %s/%s is not an ICI port of board %s\n", hname, name,
				topo_board_name(c->board));
			t->unknown++;
		}
	}
}

static int verify_report(const struct cluster *c, const json_t *rep, const char *item,
			 struct tally *t, FILE *out, char *err, size_t errlen)
{
	const json_t *links = json_object_get(rep, "links");
	char hname[TOPO_LABEL_NAME_MAX + 16];
	int64_t host;
	int r = report_host(c, rep, item, &host, err, errlen);

	if (r < 0)
		return r;
	cluster_name(c, host, hname, sizeof(hname));
	t->hosts++;
	for (size_t p = 0; p < topo_board_ici_port_count(c->board); p++)
		check_port(c, host, hname, p, links, t, out);
	check_unknown_ports(c, hname, links, t, out);
	return 0;
}

/* ---- command ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: podctl board verify BOARD --links REPORT [--superslices N]\n"
	      "REPORT: podagent LinkReports or Nodes (YAML or JSON, a List for many hosts).\n"
	      "Exit 0 when the wiring matches, 1 on a mismatch, 2 on bad input.\n",
	      f);
}

struct verify_args {
	const char *board, *links;
	int superslices;
};

static int parse(int argc, char **argv, struct verify_args *a)
{
	for (int i = 1; i < argc; i++) {
		char *end;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 1;
		}
		if (strcmp(argv[i], "--links") == 0 && i + 1 < argc) {
			a->links = argv[++i];
		} else if (strncmp(argv[i], "--links=", 8) == 0) {
			a->links = argv[i] + 8;
		} else if (strcmp(argv[i], "--superslices") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > 4096) {
				fprintf(stderr, "podctl board verify: --superslices: expected 1..4096\n");
				return -EINVAL;
			}
			a->superslices = (int)v;
		} else if (argv[i][0] != '-' && !a->board) {
			a->board = argv[i];
		} else {
			fprintf(stderr, "podctl board verify: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!a->board || !a->links) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static int verify_all(const struct cluster *c, const char *path, const json_t *objs,
		      struct tally *t)
{
	char err[TOPO_ERR_MAX + 128], item[64];
	size_t i;
	json_t *o;

	json_array_foreach(objs, i, o)
	{
		json_t *rep;
		int r;

		snprintf(item, sizeof(item), "items[%zu]", i);
		rep = report_of(o, item, err, sizeof(err));
		r = rep ? verify_report(c, rep, item, t, stdout, err, sizeof(err)) : -EINVAL;
		json_decref(rep);
		if (r < 0) {
			fprintf(stderr, "%s: %s\n", path, err);
			return r;
		}
	}
	return 0;
}

int podctl_board_verify(int argc, char **argv)
{
	struct verify_args a = { 0 };
	struct topo_board *board = NULL;
	struct cluster c = { 0 };
	struct tally t = { 0 };
	json_t *objs = NULL;
	char err[TOPO_ERR_MAX];
	int r, rc = VERIFY_USAGE;

	r = parse(argc, argv, &a);
	if (r != 0)
		return r > 0 ? VERIFY_OK : VERIFY_USAGE;
	board = topo_board_new();
	if (!board) {
		rc = VERIFY_MISMATCH;
		goto out;
	}
	if (topo_board_load_file(board, a.board, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	if (topo_board_ici_port_count(board) == 0) {
		fprintf(stderr, "%s: board %s has no ICI ports to verify\n", a.board,
			topo_board_name(board));
		goto out;
	}
	if (pk_read_file(a.links, &objs, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	r = cluster_init(&c, board, a.superslices);
	if (r < 0) {
		fprintf(stderr, "%s: cannot enumerate the board's hosts: %s\n", a.board, strerror(-r));
		rc = r == -ENOMEM ? VERIFY_MISMATCH : VERIFY_USAGE;
		goto out;
	}
	if (json_array_size(objs) == 0) {
		fprintf(stderr, "%s: no link reports\n", a.links);
		goto out;
	}
	if (verify_all(&c, a.links, objs, &t) < 0)
		goto out;
	printf("%d hosts, %d ports: %d ok, %d missing, %d wrong peer, %d down, %d unexpected, "
	       "%d unknown\n",
	       t.hosts, t.ports, t.ok, t.missing, t.wrong, t.down, t.unexpected, t.unknown);
	rc = t.missing || t.wrong || t.down || t.unexpected || t.unknown ? VERIFY_MISMATCH
									 : VERIFY_OK;
out:
	json_decref(objs);
	free(c.names);
	topo_board_free(board);
	return rc;
}
