/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_links.c — a board's expected ICI wiring against podagent link reports.
 *
 * Compares the ICI cabling podagent found with the wiring the board demands
 * (topo_board_ici_peer).  A report is a podagent LinkReport object, or a Node
 * whose ici.podkernel.dev/links annotation holds one; it names its host
 * (hostIndex, else the host name looked up among the board's hosts, sorted
 * once for bsearch) and lists ports with operstate, carrier and peer
 * ("<host>/<port>").  For every port the board gives the host, the verifier
 * reports a missing link, a missing or wrong peer, a port that is down, and
 * cabling on a port the board leaves unwired; ports the board does not know
 * are reported too.  `podctl board verify` is the command around it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "topology/topology.h"

#define MAX_PORT_NAME 64

/* ---- host names of the cluster, sorted for lookup -------------------------- */

struct host_name {
	char name[TOPO_LABEL_NAME_MAX + 1];
	int64_t index;
};

struct pk_board_links {
	const struct topo_board *board;
	int superslices;
	struct host_name *names;
	int64_t n;
};

static int cmp_host_name(const void *a, const void *b)
{
	return strcmp(((const struct host_name *)a)->name, ((const struct host_name *)b)->name);
}

void pk_board_links_free(struct pk_board_links *c)
{
	if (!c)
		return;
	free(c->names);
	free(c);
}

int pk_board_links_new(const struct topo_board *board, int superslices, struct pk_board_links **ret)
{
	int64_t n = topo_board_host_count(board, superslices);
	struct pk_board_links *c;

	if (n < 0)
		return (int)n;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->board = board;
	c->superslices = superslices;
	c->names = calloc((size_t)n + 1, sizeof(*c->names));
	if (!c->names) {
		pk_board_links_free(c);
		return -ENOMEM;
	}
	for (int64_t i = 0; i < n; i++) {
		struct topo_host h;
		int r = topo_board_host(board, superslices, i, &h);

		if (r < 0) {
			pk_board_links_free(c);
			return r;
		}
		memcpy(c->names[i].name, h.name, sizeof(h.name));
		c->names[i].index = i;
	}
	c->n = n;
	qsort(c->names, (size_t)n, sizeof(*c->names), cmp_host_name);
	*ret = c;
	return 0;
}

static int64_t cluster_find(const struct pk_board_links *c, const char *name)
{
	struct host_name key = {0}, *hit;

	if (!name || strlen(name) > TOPO_LABEL_NAME_MAX)
		return -1;
	strcpy(key.name, name);
	hit = bsearch(&key, c->names, (size_t)c->n, sizeof(*c->names), cmp_host_name);
	return hit ? hit->index : -1;
}

static const char *cluster_name(const struct pk_board_links *c, int64_t index, char *buf,
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
static int report_host(const struct pk_board_links *c, const json_t *rep, const char *item,
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
		if (json_object_get(l, "carrier") &&
		    !json_is_boolean(json_object_get(l, "carrier"))) {
			snprintf(err, errlen, "%s.links[%zu].carrier: expected true or false", item,
				 i);
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

static void check_port(const struct pk_board_links *c, int64_t host, const char *hname, size_t port,
		       const json_t *links, struct pk_link_tally *t, FILE *out)
{
	const char *pname = topo_board_ici_port_name(c->board, port);
	char want[TOPO_LABEL_NAME_MAX + MAX_PORT_NAME + 2], peer_host[TOPO_LABEL_NAME_MAX + 16];
	struct port_state st = {0};
	int64_t ph;
	size_t pp;
	bool wired = topo_board_ici_peer(c->board, c->superslices, host, port, &ph, &pp) == 0;
	bool found = find_port(links, pname, &st);
	bool bad = false;

	t->ports++;
	if (wired)
		snprintf(want, sizeof(want), "%s/%s",
			 cluster_name(c, ph, peer_host, sizeof(peer_host)),
			 topo_board_ici_port_name(c->board, pp));
	if (!found) {
		if (wired) {
			fprintf(out, "missing link: %s/%s (expected peer %s)\n", hname, pname,
				want);
			t->missing++;
			return;
		}
		t->ok++; /* unwired and absent: as it should be */
		return;
	}
	if (!wired) {
		if (st.peer) {
			fprintf(
			    out,
			    "unexpected link: %s/%s -> %s (the board leaves this port unwired)\n",
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

static void check_unknown_ports(const struct pk_board_links *c, const char *hname,
				const json_t *links, struct pk_link_tally *t, FILE *out)
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
			fprintf(out, "unknown port: %s/%s is not an ICI port of board %s\n", hname,
				name, topo_board_name(c->board));
			t->unknown++;
		}
	}
}

static int verify_report(const struct pk_board_links *c, const json_t *rep, const char *item,
			 struct pk_link_tally *t, FILE *out, char *err, size_t errlen)
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

int pk_board_links_verify(const struct pk_board_links *c, const json_t *reports, FILE *out,
			  struct pk_link_tally *tally, char *err, size_t errlen)
{
	char item[64];
	size_t i;
	json_t *o;

	json_array_foreach(reports, i, o)
	{
		json_t *rep;
		int r;

		snprintf(item, sizeof(item), "items[%zu]", i);
		rep = report_of(o, item, err, errlen);
		r = rep ? verify_report(c, rep, item, tally, out, err, errlen) : -EINVAL;
		json_decref(rep);
		if (r < 0)
			return r;
	}
	return 0;
}
