/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identity.c — where this host sits in its board's cluster.
 *
 * The host index (row-major, as `podctl board nodes` numbers hosts) comes
 * from, in this order: --host-index; the label TOPO_LABEL_HOST_INDEX an
 * operator put on the Node; the ICI neighbours (a link whose peer Node
 * published its own index gives ours: the board's expected peer of the peer's
 * port, which must be the link's own port; every such link must agree); or
 * the node name read against the board's hostname pattern
 * ("tpu-ss{superslice}-h{host}").  Never from the environment: TPU_WORKER_ID
 * is a rank inside one TPU job, not a host's place.  libtopo then gives the
 * host's coordinates and its domain at every level, which become the
 * topology labels.  The cluster is sized (superslices) just large enough to
 * hold the index.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

#define MAX_SUPERSLICES 4096

static int parse_index(const char *s, int64_t *ret)
{
	char *end;
	long long v;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Smallest cluster (in outermost domains) that holds host index. */
static int superslices_for(const struct topo_board *board, int64_t index, int *ret)
{
	int64_t per = topo_board_host_count(board, 1);

	if (per <= 0 || index / per + 1 > MAX_SUPERSLICES)
		return -ERANGE;
	*ret = (int)(index / per + 1);
	return 0;
}

/*
 * The first placeholder of pattern and its number in name: "tpu-ss{superslice}-h{host}"
 * and "tpu-ss3-h7" give "superslice" and 3.  -ENOENT when name does not have
 * the pattern's shape.
 */
static int pattern_first(const char *pattern, const char *name, char *ret_what, size_t whatlen,
			 int64_t *ret_value)
{
	const char *p = pattern, *n = name;
	int64_t first = -1;

	ret_what[0] = '\0';
	while (*p) {
		if (*p == '{') {
			const char *close = strchr(p, '}');
			int64_t v = 0;

			if (!close || !isdigit((unsigned char)*n))
				return -ENOENT;
			while (isdigit((unsigned char)*n) && v < INT32_MAX)
				v = v * 10 + (*n++ - '0');
			if (first < 0) {
				first = v;
				snprintf(ret_what, whatlen, "%.*s", (int)(close - p - 1), p + 1);
			}
			p = close + 1;
		} else if (*p++ != *n++) {
			return -ENOENT;
		}
	}
	if (*n || first < 0)
		return -ENOENT;
	*ret_value = first;
	return 0;
}

static int search_range(const struct topo_board *board, int ss, int64_t from, int64_t to,
			const char *name, int64_t *ret)
{
	struct topo_host h;

	for (int64_t i = from; i < to; i++)
		if (topo_board_host(board, ss, i, &h) == 0 && strcmp(h.name, name) == 0) {
			*ret = i;
			return 0;
		}
	return -ENOENT;
}

/*
 * The pattern's first placeholder narrows the search: {index} is the answer
 * itself (checked), the outermost level's ordinal names one outer domain;
 * otherwise the board's default cluster is searched.
 */
int agent_board_find_host(const struct topo_board *board, const char *name, int64_t *ret_index,
			  int *ret_superslices)
{
	const char *pattern = board ? topo_board_hostname_pattern(board) : NULL;
	const char *outer = board ? topo_board_level_name(board, 0) : NULL;
	int64_t v = 0, index, from = 0, to;
	char what[64];
	int ss = 0;

	if (!board || !name)
		return -EINVAL;
	if (pattern && pattern_first(pattern, name, what, sizeof(what), &v) < 0)
		return -ENOENT;
	if (pattern && (strcmp(what, "index") == 0 || (outer && strcmp(what, outer) == 0))) {
		bool is_index = strcmp(what, "index") == 0;
		int64_t per = topo_board_host_count(board, 1);

		from = is_index ? v : v * per; /* the host, or its outer domain's first */
		if (superslices_for(board, from, &ss) < 0)
			return -ENOENT;
		to = is_index ? v + 1 : from + per;
	} else {
		to = topo_board_host_count(board, 0);
	}
	if (search_range(board, ss, from, to, name, &index) < 0)
		return -ENOENT;
	if (ss == 0 && superslices_for(board, index, &ss) < 0)
		return -ENOENT;
	*ret_index = index;
	*ret_superslices = ss;
	return 0;
}

static int board_port(const struct topo_board *board, const char *name, size_t *ret)
{
	for (size_t i = 0; i < topo_board_ici_port_count(board); i++)
		if (strcmp(topo_board_ici_port_name(board, i), name) == 0) {
			*ret = i;
			return 0;
		}
	return -ENOENT;
}

/*
 * Our index from the ICI links whose peer Node is known: -ENOENT when no link
 * tells, -EINVAL (err says which) when two links disagree or a link is
 * cabled where the board has no such link.
 */
static int index_from_ici(const struct topo_board *board, const struct agent_id_hints *h,
			  int64_t *ret, char *err, size_t errlen)
{
	int64_t found = -1;
	const char *found_by = NULL;

	for (size_t i = 0; h->links && h->peers && i < h->links->n; i++) {
		const struct agent_link *l = &h->links->v[i];
		const char *slash = strchr(l->peer, '/');
		char host[sizeof(l->peer)];
		size_t peer_port, my_port;
		int64_t peer_index, mine;
		int ss;
		json_t *v;

		if (!slash || board_port(board, slash + 1, &peer_port) < 0 ||
		    board_port(board, l->name, &my_port) < 0)
			continue;
		snprintf(host, sizeof(host), "%.*s", (int)(slash - l->peer), l->peer);
		v = json_object_get(h->peers, host);
		if (!json_is_integer(v) || (peer_index = json_integer_value(v)) < 0 ||
		    superslices_for(board, peer_index, &ss) < 0)
			continue;
		if (topo_board_ici_peer(board, ss, peer_index, peer_port, &mine, &peer_port) < 0 ||
		    peer_port != my_port) {
			snprintf(err, errlen,
				 "ICI port %s: its peer %s (host %lld) is not wired to "
				 "it on this board",
				 l->name, l->peer, (long long)peer_index);
			return -EINVAL;
		}
		if (found >= 0 && mine != found) {
			snprintf(err, errlen,
				 "ICI neighbours disagree: port %s says host %lld, port %s "
				 "says host %lld",
				 found_by, (long long)found, l->name, (long long)mine);
			return -EINVAL;
		}
		found = mine;
		found_by = l->name;
	}
	if (found < 0)
		return -ENOENT;
	*ret = found;
	return 0;
}

int agent_identity_resolve(const struct topo_board *board, const struct agent_id_hints *hints,
			   const char *node_name, struct agent_identity *ret, char *err,
			   size_t errlen)
{
	static const struct agent_id_hints none = {.host_index = -1};
	struct agent_identity id = {.source = AGENT_ID_NONE, .index = -1};
	const struct agent_id_hints *h = hints ? hints : &none;
	int r;

	if (!board) {
		snprintf(err, errlen, "no board: no topology labels");
		return -ENOENT;
	}
	if (h->host_index >= 0) {
		id.index = h->host_index;
		id.source = AGENT_ID_FLAG;
	} else if (h->label) {
		if (parse_index(h->label, &id.index) < 0) {
			snprintf(err, errlen,
				 "label %s: expected a host index (0, 1, ...), got \"%.40s\"",
				 TOPO_LABEL_HOST_INDEX, h->label);
			return -EINVAL;
		}
		id.source = AGENT_ID_LABEL;
	} else if ((r = index_from_ici(board, h, &id.index, err, errlen)) != -ENOENT) {
		if (r < 0)
			return r;
		id.source = AGENT_ID_ICI;
	} else if (node_name &&
		   agent_board_find_host(board, node_name, &id.index, &id.superslices) == 0) {
		id.source = AGENT_ID_HOSTNAME;
	} else {
		snprintf(err, errlen,
			 "host index unknown: pass --host-index, label the Node %s=N, cable an ICI "
			 "port to a node that knows its index, or name the node after the board's "
			 "hostname pattern%s%s",
			 TOPO_LABEL_HOST_INDEX, topo_board_hostname_pattern(board) ? " " : "",
			 topo_board_hostname_pattern(board) ? topo_board_hostname_pattern(board)
							    : "");
		return -ENOENT;
	}
	if (id.superslices == 0 && superslices_for(board, id.index, &id.superslices) < 0) {
		snprintf(err, errlen, "host index %lld is outside board %s", (long long)id.index,
			 topo_board_name(board));
		return -ERANGE;
	}
	r = topo_board_host(board, id.superslices, id.index, &id.host);
	if (r < 0) {
		snprintf(err, errlen, "host index %lld is outside board %s", (long long)id.index,
			 topo_board_name(board));
		return r;
	}
	*ret = id;
	return 0;
}
