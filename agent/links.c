/* SPDX-License-Identifier: Apache-2.0 */
/*
 * links.c — ICI ports as the kernel's network links (libnl-route).
 *
 * The board names the netdevs that are ICI ports (without a board, every
 * link whose name starts with "ici" is one).  For each one found, the report keeps the operational
 * state, the carrier, and the peer it is cabled to, which the cabling tool writes into the link
 * alias as "peer=<host>/<port>" (ip link set ici0 alias "peer=tpu-ss0-h1/ici3").  A cache manager
 * on NETLINK_ROUTE tells the daemon when an ICI link changes.
 */
#include <errno.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

bool agent_link_is_ici(const char *name, const struct topo_board *board)
{
	size_t n = board ? topo_board_ici_port_count(board) : 0;

	if (!name)
		return false;
	if (n == 0)
		return strncmp(name, "ici", 3) == 0;
	for (size_t i = 0; i < n; i++) {
		const char *port = topo_board_ici_port_name(board, i);

		if (port && strcmp(port, name) == 0)
			return true;
	}
	return false;
}

int agent_link_parse_alias(const char *alias, char *peer, size_t peerlen)
{
	const char *p = alias, *end;

	while (p && (p = strstr(p, "peer=")) != NULL) {
		if (p == alias || p[-1] == ' ' || p[-1] == ',' || p[-1] == ';')
			break;
		p += 5;
	}
	if (!p)
		return -ENOENT;
	p += 5;
	end = p + strcspn(p, " ,;");
	if (end == p || !memchr(p, '/', (size_t)(end - p)))
		return -EINVAL;
	if ((size_t)(end - p) >= peerlen)
		return -ENAMETOOLONG;
	memcpy(peer, p, (size_t)(end - p));
	peer[end - p] = '\0';
	return 0;
}

static void link_fill(struct rtnl_link *l, struct agent_link *out)
{
	const char *alias = rtnl_link_get_ifalias(l);

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", rtnl_link_get_name(l));
	rtnl_link_operstate2str(rtnl_link_get_operstate(l), out->operstate, sizeof(out->operstate));
	out->carrier = rtnl_link_get_carrier(l) != 0;
	if (alias && agent_link_parse_alias(alias, out->peer, sizeof(out->peer)) < 0)
		out->peer[0] = '\0';
}

static int link_cmp(const void *a, const void *b)
{
	return strverscmp(((const struct agent_link *)a)->name,
			  ((const struct agent_link *)b)->name);
}

int agent_links_discover(const struct topo_board *board, struct agent_links *ret,
			 struct pk_errors *warnings)
{
	struct agent_links links = {0};
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *cache = NULL;
	size_t cap = 0;
	int r;

	if (!sk)
		return -ENOMEM;
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r == 0)
		r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
	if (r < 0) {
		pk_errors_add(warnings, "netlink: cannot list links: %s", nl_geterror(r));
		nl_socket_free(sk);
		*ret = links;
		return 0;
	}
	for (struct nl_object *o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;

		if (!agent_link_is_ici(rtnl_link_get_name(l), board))
			continue;
		if (links.n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct agent_link *n = realloc(links.v, ncap * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				break;
			}
			links.v = n;
			cap = ncap;
		}
		link_fill(l, &links.v[links.n++]);
	}
	nl_cache_free(cache);
	nl_socket_free(sk);
	if (r < 0) {
		agent_links_clear(&links);
		return r;
	}
	if (links.n)
		qsort(links.v, links.n, sizeof(*links.v), link_cmp);
	links.available = true;
	*ret = links;
	return 0;
}

void agent_links_clear(struct agent_links *links)
{
	if (!links)
		return;
	free(links->v);
	memset(links, 0, sizeof(*links));
}

/* ---- change notifications ------------------------------------------------- */

struct agent_link_watch {
	struct nl_cache_mngr *mngr;
	struct nl_cache *cache;
	const struct topo_board *board;
	bool changed;
};

static void link_changed(struct nl_cache *cache, struct nl_object *obj, int action, void *arg)
{
	struct agent_link_watch *w = arg;

	(void)cache;
	(void)action;
	if (agent_link_is_ici(rtnl_link_get_name((struct rtnl_link *)obj), w->board))
		w->changed = true;
}

int agent_link_watch_new(const struct topo_board *board, struct agent_link_watch **ret)
{
	struct agent_link_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->board = board;
	r = nl_cache_mngr_alloc(NULL, NETLINK_ROUTE, NL_AUTO_PROVIDE, &w->mngr);
	if (r == 0)
		r = nl_cache_mngr_add(w->mngr, "route/link", link_changed, w, &w->cache);
	if (r < 0) {
		agent_link_watch_free(w);
		return -EIO;
	}
	*ret = w;
	return 0;
}

int agent_link_watch_fd(const struct agent_link_watch *w)
{
	return w ? nl_cache_mngr_get_fd(w->mngr) : -1;
}

int agent_link_watch_process(struct agent_link_watch *w, bool *ret_changed)
{
	int r;

	if (!w)
		return -EINVAL;
	w->changed = false;
	r = nl_cache_mngr_data_ready(w->mngr);
	if (r < 0)
		return -EIO;
	*ret_changed = w->changed;
	return 0;
}

void agent_link_watch_free(struct agent_link_watch *w)
{
	if (!w)
		return;
	if (w->mngr)
		nl_cache_mngr_free(w->mngr);
	free(w);
}
