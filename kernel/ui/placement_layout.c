/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement_layout.c — the PlacementMap document: where each host is drawn,
 * what holds it, which gangs wait, and the largest free box per domain.
 *
 * Levels come from the node labels topology.podkernel.dev/<level> (not the
 * torus geometry keys of topology.h): the key with the fewest distinct
 * values is the domain (superslice, block), the one with the most is the
 * cube (cube, rack, NVLink domain); equal counts are told apart by value
 * length; levels in between are not drawn.  Hosts are sorted by domain,
 * cube and name (natural order), so each domain and cube is one run of the
 * sorted array.
 *
 * Torus layout, for a domain whose hosts all carry the torus labels of one
 * torus (topo_torus_host_parse(): host cells, host, cube and torus shapes,
 * wraparound), or at least topology.podkernel.dev/coords (older agents: the
 * host stride is then the gcd of the coordinate offsets and the cube extent
 * the largest span of one cube's hosts).  A cube's place is its first host
 * divided by the cube extent.  A cube is drawn as its z layers on a
 * near-square grid (x right, y down inside a layer, one blank cell between
 * layers: a 2x2x4-host cube is 5x5 cells); the cubes of one z slab are drawn
 * x right and y down, and the slabs on a near-square grid again.  Other
 * domains use the list layout: cubes in natural order on a near-square
 * grid, hosts in natural order, rows about half as long as wide.
 *
 * Largest free box (free = no pod, not cordoned, reachable): libtopo's
 * occupancy index, the one slice placement uses, over the domain's host
 * cells, across the seam where the torus wraps around.  In the list layout
 * the largest free domain is the cube with the most free hosts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ui/ui-internal.h"
#include "topology/topology.h"

#define BOX_MAX_CELLS (1 << 20)

enum hstate { ST_FREE, ST_BUSY, ST_CORDONED, ST_UNREACHABLE, _ST_MAX };
static const char *const state_names[_ST_MAX] = {"free", "busy", "cordoned", "unreachable"};

/* Groups told apart per host for its colour; a host shared by more is rare. */
#define HOST_USERS 8

struct lhost {
	const char *name, *domain, *cube, *coords;
	int c[3], h[3];
	bool has_coords, has_torus;
	struct topo_torus_host th; /* the node's torus labels, when has_torus */
	enum hstate st;
	int pods;
	long group; /* -1: none */
	int x, y;
	const struct ui_node *node;  /* allocatable, taints */
	json_t *req;		     /* what its pods request, resource -> milli-units */
	double fill;		     /* the scarcest resource's share in use, 0..1 */
	const char *scarce;	     /* that resource; NULL when none is known */
	long long accel, accel_used; /* accelerators allocatable, requested (milli) */
	/* the groups whose pods it holds, by weight: accelerators, then pods */
	struct {
		long group;
		long long weight;
	} users[HOST_USERS];
	int nusers;
};

struct counts {
	int n[_ST_MAX];
	int hosts, tainted;
	double used;		     /* sum of the hosts' fill */
	long long accel, accel_used; /* accelerators allocatable, requested (milli) */
};

struct lgroup {
	const char *key;
	const struct ui_group *g;
	long root;
	int pods, bound, hosts;
};

struct layout {
	struct lhost *hosts;
	size_t nhosts;
	struct lgroup *groups;
	size_t ngroups;
	json_t *group_ids;	     /* "ns/name" -> id */
	char *domain_key, *cube_key; /* label keys of the drawn levels, or NULL */
};

/* ---- levels ------------------------------------------------------------------------------ */

/*
 * The domain key (fewest values) and cube key (most values); NULL when none.
 * Equal counts (one cube per superslice) are told apart by the length of the
 * values: a level's values extend those of the level above ("ss1", "ss1-c0").
 */
static int find_levels(const struct ui_view *v, struct layout *L)
{
	json_t *seen = json_object(), *vals;
	const char *k, *dk = NULL, *ck = NULL;
	size_t dn = 0, dlen = 0, cn = 0, clen = 0;
	int r = 0;

	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < v->nnodes; i++) {
		const struct ui_node *n = v->nodes[i];

		for (size_t j = 0; j < n->nlabels; j++) {
			k = n->labels[j].key;
			if (!topo_label_is_level(k))
				continue;
			vals = json_object_get(seen, k);
			if (!vals && json_object_set_new(seen, k, vals = json_object()) < 0)
				r = -ENOMEM;
			else
				json_object_set(vals, n->labels[j].value, json_true());
		}
	}
	json_object_foreach(seen, k, vals)
	{
		size_t c = json_object_size(vals), len = 0;
		const char *val;
		json_t *t;

		json_object_foreach(vals, val, t) len += strlen(val);
		len /= c ? c : 1;
		if (!dk || c < dn || (c == dn && len < dlen)) {
			dk = k;
			dn = c;
			dlen = len;
		}
		if (!ck || c > cn || (c == cn && len > clen)) {
			ck = k;
			cn = c;
			clen = len;
		}
	}
	L->domain_key = dk ? strdup(dk) : NULL;
	L->cube_key = ck ? strdup(ck) : NULL;
	if ((dk && !L->domain_key) || (ck && !L->cube_key))
		r = -ENOMEM;
	json_decref(seen);
	return r;
}

/* ---- hosts and groups -------------------------------------------------------------------- */

static bool parse_coords(const char *s, int c[3])
{
	int n = 0;

	if (!s || sscanf(s, "%d.%d.%d%n", &c[0], &c[1], &c[2], &n) != 3 || s[n] || c[0] < 0 ||
	    c[1] < 0 || c[2] < 0 || c[0] > 65535 || c[1] > 65535 || c[2] > 65535)
		return false;
	return true;
}

static const char *label_get(const char *key, void *arg)
{
	return ui_node_label(arg, key);
}

static int load_hosts(const struct ui_view *v, struct layout *L)
{
	size_t i;

	L->hosts = calloc(v->nnodes + 1, sizeof(*L->hosts));
	if (!L->hosts)
		return -ENOMEM;
	for (i = 0; i < v->nnodes; i++) {
		const struct ui_node *n = v->nodes[i];
		struct lhost *h = &L->hosts[i];
		const char *d = L->domain_key ? ui_node_label(n, L->domain_key) : NULL;
		const char *c = L->cube_key ? ui_node_label(n, L->cube_key) : NULL;

		h->name = n->name;
		/* a board whose levels use other label keys: its torus is still a domain */
		if (!d)
			d = ui_node_label(n, TOPO_LABEL_TORUS);
		h->domain = d ? d : "-";
		h->cube = c ? c : h->domain;
		h->coords = ui_node_label(n, TOPO_LABEL_COORDS);
		h->has_coords = parse_coords(h->coords, h->c);
		h->has_torus = topo_torus_host_parse(label_get, (void *)n, &h->th) == 0;
		h->group = -1;
		h->node = n;
		h->st = n->unreachable ? ST_UNREACHABLE : n->cordoned ? ST_CORDONED : ST_FREE;
	}
	L->nhosts = i;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct lgroup *)a)->key, ((const struct lgroup *)b)->key);
}

static long group_id(const struct layout *L, const char *ns, const char *name)
{
	char key[512];
	json_t *id;

	if (!ns || !name)
		return -1;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	id = json_object_get(L->group_ids, key);
	return id ? (long)json_integer_value(id) : -1;
}

static int load_groups(const struct ui_view *v, struct layout *L)
{
	size_t i;

	L->groups = calloc(v->ngroups + 1, sizeof(*L->groups));
	L->group_ids = json_object();
	if (!L->groups || !L->group_ids)
		return -ENOMEM;
	for (i = 0; i < v->ngroups; i++)
		L->groups[i] =
		    (struct lgroup){.key = v->groups[i]->key, .g = v->groups[i], .root = -1};
	L->ngroups = i;
	qsort(L->groups, L->ngroups, sizeof(*L->groups), key_cmp);
	for (i = 0; i < L->ngroups; i++)
		if (json_object_set_new(L->group_ids, L->groups[i].key,
					json_integer((json_int_t)i)) < 0)
			return -ENOMEM;
	for (i = 0; i < L->ngroups; i++) {
		long cur = (long)i;

		for (int d = 0; d < 16; d++) {
			const struct ui_group *g = L->groups[cur].g;
			long up = group_id(L, g->ns, g->parent);

			if (up < 0)
				break;
			cur = up;
		}
		L->groups[i].root = cur;
	}
	return 0;
}

/*
 * An accelerator: an extended resource, whose name has a domain
 * (nvidia.com/gpu, google.com/tpu, amd.com/gpu); cpu, memory, pods and
 * hugepages-* have none.
 */
static bool is_accelerator(const char *resource)
{
	return strchr(resource, '/') != NULL;
}

long long ui_res_accelerators(const struct ui_res *r, size_t n)
{
	long long sum = 0;

	for (size_t i = 0; i < n; i++)
		if (is_accelerator(r[i].name) && r[i].milli > 0)
			sum += r[i].milli;
	return sum;
}

long long ui_accelerators(const json_t *res)
{
	const char *k;
	json_t *v;
	long long n = 0;

	json_object_foreach((json_t *)res, k, v) if (is_accelerator(k) && json_integer_value(v) > 0)
	    n += json_integer_value(v);
	return n;
}

/*
 * Charge a pod of group G to the host's users: what it takes of the host's
 * accelerators decides, a pod counts for a tie (hosts without accelerators).
 */
static void add_user(struct lhost *h, long g, const struct ui_pod *p)
{
	long long w = ui_res_accelerators(ui_pod_req(p), p->nreq) * 1024 + 1;
	int i;

	for (i = 0; i < h->nusers && h->users[i].group != g; i++)
		;
	if (i == h->nusers) {
		if (h->nusers == HOST_USERS)
			return;
		h->users[h->nusers].group = g;
		h->users[h->nusers++].weight = 0;
	}
	h->users[i].weight += w;
}

/* The group that uses most of the host colours it (the first seen on a tie). */
static void host_colour(struct layout *L, struct lhost *h)
{
	long long best = 0;

	for (int i = 0; i < h->nusers; i++)
		if (h->users[i].weight > best) {
			best = h->users[i].weight;
			h->group = h->users[i].group;
		}
	if (h->group >= 0)
		L->groups[h->group].hosts++;
}

/* Pods onto hosts: busy state, requests, the groups that use the host. */
static void add_requests(struct lhost *h, const struct ui_pod *p)
{
	if (!h->req)
		h->req = json_object();
	for (size_t i = 0; i < p->nreq; i++)
		json_object_set_new(h->req, ui_pod_req(p)[i].name,
				    json_integer(json_integer_value(json_object_get(
						     h->req, ui_pod_req(p)[i].name)) +
						 ui_pod_req(p)[i].milli));
}

/*
 * How full a host with pods is: the largest share of any resource its pods
 * request against its allocatable (the scarcest resource decides whether
 * anything else fits).  A host whose pods request nothing it advertises
 * counts as full: its pods hold it whatever they use.
 */
static void host_fill(struct lhost *h)
{
	const char *k;
	json_t *v;

	h->fill = h->pods ? 1 : 0;
	h->scarce = NULL;
	h->accel = ui_res_accelerators(h->node->alloc, h->node->nalloc);
	h->accel_used = ui_accelerators(h->req);
	if (h->accel_used > h->accel)
		h->accel_used = h->accel;
	json_object_foreach(h->req, k, v)
	{
		json_int_t want = json_integer_value(v);
		json_int_t have = ui_res_get(h->node->alloc, h->node->nalloc, k);
		double f;

		if (want <= 0 || have <= 0)
			continue;
		f = (double)want / (double)have;
		if (!h->scarce || f > h->fill) {
			h->fill = f > 1 ? 1 : f;
			h->scarce = k;
		}
	}
}

static int place_pods(const struct ui_view *v, struct layout *L)
{
	json_t *by_name = json_object();

	if (!by_name)
		return -ENOMEM;
	for (size_t i = 0; i < L->nhosts; i++)
		json_object_set_new(by_name, L->hosts[i].name, json_integer((json_int_t)i));
	for (size_t i = 0; i < v->npods; i++) {
		const struct ui_pod *p = v->pods[i];
		long g = group_id(L, p->ns, p->group);
		json_t *hi = p->node ? json_object_get(by_name, p->node) : NULL;

		/* a finished pod holds nothing and waits for nothing */
		if (g >= 0 && !p->done) {
			L->groups[g].pods++;
			if (hi)
				L->groups[g].bound++;
		}
		if (!hi)
			continue;
		struct lhost *h = &L->hosts[json_integer_value(hi)];

		h->pods++;
		if (h->st == ST_FREE)
			h->st = ST_BUSY;
		add_requests(h, p);
		if (g >= 0)
			add_user(h, g, p);
	}
	json_decref(by_name);
	for (size_t i = 0; i < L->nhosts; i++) {
		host_fill(&L->hosts[i]);
		host_colour(L, &L->hosts[i]);
	}
	return 0;
}

static int host_cmp(const void *a, const void *b)
{
	const struct lhost *x = a, *y = b;
	int r = strverscmp(x->domain, y->domain);

	if (r == 0)
		r = strverscmp(x->cube, y->cube);
	return r ? r : strverscmp(x->name, y->name);
}

/* ---- layouts ------------------------------------------------------------------------------ */

struct span {
	size_t first, n;
};

/* Runs of equal cube in hosts[first, first+n); returns the count (spans malloc'ed). */
static size_t cube_spans(const struct lhost *hosts, struct span dom, struct span **ret)
{
	struct span *s = calloc(dom.n + 1, sizeof(*s));
	size_t k = 0;

	if (!s)
		return 0;
	for (size_t i = dom.first; i < dom.first + dom.n; i++) {
		if (k == 0 || strcmp(hosts[i].cube, hosts[s[k - 1].first].cube) != 0)
			s[k++] = (struct span){i, 0};
		s[k - 1].n++;
	}
	*ret = s;
	return k;
}

struct geom {
	bool torus, wrap;
	int grid_cols, grid_rows, cube_cols, cube_rows;
	int stride[3], dims[3], ext[3],
	    lo[3]; /* chips per host cell, cells, cells per cube, origin */
	int *cube_col, *cube_row, *cube_w, *cube_h; /* per span */
};

static int gcd(int a, int b)
{
	while (b) {
		int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static int isqrt_ceil(size_t n)
{
	int r = 1;

	while ((size_t)r * (size_t)r < n)
		r++;
	return r;
}

/* Every host of the domain in one torus with the same geometry labels: cells from them. */
static bool cells_from_torus_labels(struct lhost *H, struct span dom, struct geom *g)
{
	const struct topo_torus_host *t0 = &H[dom.first].th;

	for (size_t i = dom.first; i < dom.first + dom.n; i++) {
		const struct topo_torus_host *t = &H[i].th;

		if (!H[i].has_torus || strcmp(t->torus, t0->torus) != 0 ||
		    memcmp(&t->chips, &t0->chips, sizeof(t->chips)) != 0 ||
		    memcmp(&t->host, &t0->host, sizeof(t->host)) != 0 || t->wrap != t0->wrap ||
		    t->has_cube != t0->has_cube ||
		    (t->has_cube && memcmp(&t->cube, &t0->cube, sizeof(t->cube)) != 0))
			return false;
	}
	for (int a = 0; a < 3; a++) {
		g->stride[a] = t0->host.dim[a];
		g->dims[a] = t0->chips.dim[a] / t0->host.dim[a];
		g->ext[a] = t0->has_cube ? t0->cube.dim[a] / t0->host.dim[a] : 0;
		g->lo[a] = 0;
	}
	g->wrap = t0->wrap;
	for (size_t i = dom.first; i < dom.first + dom.n; i++)
		memcpy(H[i].h, H[i].th.cell.c, sizeof(H[i].h));
	return true;
}

/*
 * Only coordinates (older agents): the host stride is the gcd of the
 * offsets, the origin the lowest corner, no wraparound assumed.
 */
static bool cells_from_coords(struct lhost *H, struct span dom, struct geom *g)
{
	for (int a = 0; a < 3; a++)
		g->lo[a] = 65536;
	for (size_t i = dom.first; i < dom.first + dom.n; i++) {
		if (!H[i].has_coords)
			return false;
		for (int a = 0; a < 3; a++)
			g->lo[a] = H[i].c[a] < g->lo[a] ? H[i].c[a] : g->lo[a];
	}
	for (int a = 0; a < 3; a++) {
		g->stride[a] = 0;
		for (size_t i = dom.first; i < dom.first + dom.n; i++)
			g->stride[a] = gcd(g->stride[a], H[i].c[a] - g->lo[a]);
		g->stride[a] = g->stride[a] ? g->stride[a] : 1;
		g->dims[a] = 1;
		g->ext[a] = 0;
	}
	g->wrap = false;
	for (size_t i = dom.first; i < dom.first + dom.n; i++)
		for (int a = 0; a < 3; a++) {
			H[i].h[a] = (H[i].c[a] - g->lo[a]) / g->stride[a];
			g->dims[a] = H[i].h[a] + 1 > g->dims[a] ? H[i].h[a] + 1 : g->dims[a];
		}
	return true;
}

/* Cells per cube when the labels do not say: the largest span of one cube's hosts. */
static void infer_cube_extent(const struct lhost *H, const struct span *cs, size_t nc,
			      struct geom *g)
{
	for (int a = 0; a < 3; a++)
		g->ext[a] = 1;
	for (size_t k = 0; k < nc; k++)
		for (int a = 0; a < 3; a++) {
			int mn = 1 << 30, mx = 0;

			for (size_t i = cs[k].first; i < cs[k].first + cs[k].n; i++) {
				mn = H[i].h[a] < mn ? H[i].h[a] : mn;
				mx = H[i].h[a] > mx ? H[i].h[a] : mx;
			}
			g->ext[a] = mx - mn + 1 > g->ext[a] ? mx - mn + 1 : g->ext[a];
		}
}

static bool layout_torus(struct lhost *H, struct span dom, const struct span *cs, size_t nc,
			 struct geom *g)
{
	int q[3], Q[3] = {1, 1, 1};

	if (!cells_from_torus_labels(H, dom, g) && !cells_from_coords(H, dom, g))
		return false;
	if (g->ext[0] <= 0)
		infer_cube_extent(H, cs, nc, g);
	/* z layers of a cube, and z slabs of cubes, on near-square grids */
	int lc = isqrt_ceil((size_t)g->ext[2]), lr = (g->ext[2] + lc - 1) / lc;

	g->cube_cols = lc * g->ext[0] + lc - 1;
	g->cube_rows = lr * g->ext[1] + lr - 1;
	for (size_t k = 0; k < nc; k++) {
		for (int a = 0; a < 3; a++) {
			q[a] = 1 << 30;
			for (size_t i = cs[k].first; i < cs[k].first + cs[k].n; i++)
				q[a] = H[i].h[a] / g->ext[a] < q[a] ? H[i].h[a] / g->ext[a] : q[a];
			Q[a] = q[a] + 1 > Q[a] ? q[a] + 1 : Q[a];
		}
		g->cube_col[k] = q[0];
		g->cube_row[k] = q[1];
		g->cube_h[k] = q[2]; /* the z index until Q is known */
	}
	int zc = isqrt_ceil((size_t)Q[2]), zr = (Q[2] + zc - 1) / zc;

	for (size_t k = 0; k < nc; k++) {
		g->cube_col[k] += Q[0] * (g->cube_h[k] % zc);
		g->cube_row[k] += Q[1] * (g->cube_h[k] / zc);
		g->cube_w[k] = g->cube_cols;
		g->cube_h[k] = g->cube_rows;
		for (size_t i = cs[k].first; i < cs[k].first + cs[k].n; i++) {
			int l[3];

			for (int a = 0; a < 3; a++)
				l[a] = H[i].h[a] % g->ext[a];
			H[i].x = l[0] + (l[2] % lc) * (g->ext[0] + 1);
			H[i].y = l[1] + (l[2] / lc) * (g->ext[1] + 1);
		}
	}
	g->grid_cols = Q[0] * zc;
	g->grid_rows = Q[1] * zr;
	g->torus = true;
	return true;
}

static void layout_list(struct lhost *H, const struct span *cs, size_t nc, struct geom *g)
{
	g->torus = false;
	g->grid_cols = isqrt_ceil(nc);
	g->grid_rows = (int)((nc + (size_t)g->grid_cols - 1) / (size_t)g->grid_cols);
	g->cube_cols = g->cube_rows = 1;
	for (size_t k = 0; k < nc; k++) {
		int cols = isqrt_ceil(2 * cs[k].n);

		cols = (size_t)cols > cs[k].n ? (int)cs[k].n : cols;
		g->cube_col[k] = (int)(k % (size_t)g->grid_cols);
		g->cube_row[k] = (int)(k / (size_t)g->grid_cols);
		g->cube_w[k] = cols;
		g->cube_h[k] = (int)((cs[k].n + (size_t)cols - 1) / (size_t)cols);
		g->cube_cols = g->cube_w[k] > g->cube_cols ? g->cube_w[k] : g->cube_cols;
		g->cube_rows = g->cube_h[k] > g->cube_rows ? g->cube_h[k] : g->cube_rows;
		for (size_t j = 0; j < cs[k].n; j++) {
			H[cs[k].first + j].x = (int)(j % (size_t)cols);
			H[cs[k].first + j].y = (int)(j / (size_t)cols);
		}
	}
}

/* ---- largest free box ---------------------------------------------------------------------- */

/*
 * The largest box of free hosts, in cells, by libtopo's occupancy index (the
 * one slice placement uses): every cell starts busy (a cell without a host
 * is not free), free hosts are released.  -E2BIG beyond BOX_MAX_CELLS.
 */
static int largest_box(const struct lhost *H, struct span dom, const struct geom *g,
		       struct topo_box *ret, int *ret_found)
{
	const int *d = g->dims;
	struct topo_shape grid = {{d[0], d[1], d[2]}}, block = {{g->ext[0], g->ext[1], g->ext[2]}};
	bool blocks = d[0] % g->ext[0] == 0 && d[1] % g->ext[1] == 0 && d[2] % g->ext[2] == 0;
	struct topo_occ *occ;
	struct topo_coord c;
	int r = 0;

	if ((long long)d[0] * d[1] * d[2] > BOX_MAX_CELLS)
		return -E2BIG;
	occ = topo_occ_new(&grid, blocks ? &block : NULL, g->wrap);
	if (!occ)
		return -ENOMEM;
	for (c.c[2] = 0; r == 0 && c.c[2] < d[2]; c.c[2]++)
		for (c.c[1] = 0; r == 0 && c.c[1] < d[1]; c.c[1]++)
			for (c.c[0] = 0; r == 0 && c.c[0] < d[0]; c.c[0]++)
				r = topo_occ_add(occ, &c, 1);
	for (size_t i = dom.first; r == 0 && i < dom.first + dom.n; i++)
		if (H[i].st == ST_FREE) {
			memcpy(c.c, H[i].h, sizeof(c.c));
			if (topo_occ_count(occ, &c) > 0)
				r = topo_occ_add(occ, &c, -1);
		}
	if (r == 0)
		r = topo_occ_largest_free_box(occ, ret);
	topo_occ_free(occ);
	if (r < 0)
		return r;
	*ret_found = r;
	return 0;
}

/* ---- the document ---------------------------------------------------------------------------- */

/* A share rounded to two decimals (the page draws no finer). */
static double share(double x)
{
	return (double)(long)(x * 100 + 0.5) / 100;
}

/*
 * Accelerators allocatable and requested (whole units), their share (the
 * headline), and the mean host fill (utilisation: hosts without accelerators).
 */
static json_t *counts_json(const struct counts *c)
{
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:I,s:I,s:f}", "hosts", c->hosts, "busy",
			 c->n[ST_BUSY], "free", c->n[ST_FREE], "cordoned", c->n[ST_CORDONED],
			 "unreachable", c->n[ST_UNREACHABLE], "tainted", c->tainted, "utilisation",
			 c->hosts ? share(c->used / c->hosts) : 0.0, "accelerators",
			 (json_int_t)(c->accel / 1000), "acceleratorsAllocated",
			 (json_int_t)(c->accel_used / 1000), "acceleratorShare",
			 c->accel ? share((double)c->accel_used / (double)c->accel) : 0.0);
}

static void count_host(struct counts *c, const struct lhost *h)
{
	c->n[h->st]++;
	c->hosts++;
	c->tainted += h->node->ntaints > 0;
	c->used += h->fill;
	c->accel += h->accel;
	c->accel_used += h->accel_used;
}

static void add_counts(struct counts *to, const struct counts *c)
{
	for (int s = 0; s < _ST_MAX; s++)
		to->n[s] += c->n[s];
	to->hosts += c->hosts;
	to->tainted += c->tainted;
	to->used += c->used;
	to->accel += c->accel;
	to->accel_used += c->accel_used;
}

static json_t *host_json(const struct lhost *h)
{
	json_t *o = json_pack("{s:s,s:i,s:i,s:s,s:i}", "name", h->name, "x", h->x, "y", h->y,
			      "state", state_names[h->st], "pods", h->pods);

	if (o && h->pods) {
		json_object_set_new(o, "fill", json_real(share(h->fill)));
		if (h->scarce)
			json_object_set_new(o, "scarce", json_string(h->scarce));
	}
	if (o && h->node->ntaints)
		json_object_set_new(o, "taints", ui_node_taints_json(h->node));
	if (o && h->group >= 0)
		json_object_set_new(o, "group", json_integer(h->group));
	if (o && h->coords)
		json_object_set_new(o, "coords", json_string(h->coords));
	return o;
}

static json_t *largest_json(const struct lhost *H, struct span dom, const struct span *cs,
			    size_t nc, const struct geom *g)
{
	json_t *o = json_object();
	int whole = 0, most = -1;
	size_t most_k = 0;

	for (size_t k = 0; k < nc; k++) {
		int free_n = 0;

		for (size_t i = cs[k].first; i < cs[k].first + cs[k].n; i++)
			free_n += H[i].st == ST_FREE;
		whole += free_n == (int)cs[k].n;
		if (free_n > most) {
			most = free_n;
			most_k = k;
		}
	}
	json_object_set_new(o, "freeCubes", json_integer(whole));
	if (g->torus) {
		struct topo_box b;
		int found = 0;
		long long volume;

		if (largest_box(H, dom, g, &b, &found) < 0) {
			json_object_set_new(o, "hosts", json_null());
			return o;
		}
		volume = found ? (long long)b.ext.dim[0] * b.ext.dim[1] * b.ext.dim[2] : 0;
		json_object_set_new(o, "hosts", json_integer(volume));
		if (volume > 0) {
			char shape[64], origin[64];

			snprintf(shape, sizeof(shape), "%dx%dx%d", b.ext.dim[0] * g->stride[0],
				 b.ext.dim[1] * g->stride[1], b.ext.dim[2] * g->stride[2]);
			snprintf(origin, sizeof(origin), "%d.%d.%d",
				 g->lo[0] + b.origin.c[0] * g->stride[0],
				 g->lo[1] + b.origin.c[1] * g->stride[1],
				 g->lo[2] + b.origin.c[2] * g->stride[2]);
			json_object_set_new(o, "shape", json_string(shape));
			json_object_set_new(o, "origin", json_string(origin));
		}
		return o;
	}
	json_object_set_new(o, "hosts", json_integer(most < 0 ? 0 : most));
	if (most > 0)
		json_object_set_new(o, "cube", json_string(H[cs[most_k].first].cube));
	return o;
}

static json_t *cube_json(const struct lhost *H, struct span c, const struct geom *g, size_t k,
			 struct counts *dom_counts)
{
	json_t *hosts = json_array();
	struct counts cc = {0};

	for (size_t i = c.first; i < c.first + c.n; i++) {
		count_host(&cc, &H[i]);
		json_array_append_new(hosts, host_json(&H[i]));
	}
	add_counts(dom_counts, &cc);
	return json_pack("{s:s,s:i,s:i,s:i,s:i,s:o,s:o}", "name", H[c.first].cube, "col",
			 g->cube_col[k], "row", g->cube_row[k], "cols", g->cube_w[k], "rows",
			 g->cube_h[k], "counts", counts_json(&cc), "hosts", hosts);
}

static json_t *domain_json(struct lhost *H, struct span dom, struct counts *total)
{
	struct span *cs = NULL;
	size_t nc = cube_spans(H, dom, &cs);
	struct geom g = {0};
	json_t *cubes = json_array(), *o = NULL;
	struct counts dc = {0};

	if (!cs || !cubes)
		goto out;
	g.cube_col = calloc(nc, sizeof(int));
	g.cube_row = calloc(nc, sizeof(int));
	g.cube_w = calloc(nc, sizeof(int));
	g.cube_h = calloc(nc, sizeof(int));
	if (!g.cube_col || !g.cube_row || !g.cube_w || !g.cube_h)
		goto out;
	if (!layout_torus(H, dom, cs, nc, &g))
		layout_list(H, cs, nc, &g);
	for (size_t k = 0; k < nc; k++)
		json_array_append_new(cubes, cube_json(H, cs[k], &g, k, &dc));
	add_counts(total, &dc);
	o = json_pack("{s:s,s:s,s:o,s:{s:i,s:i},s:{s:i,s:i},s:o,s:O}", "name", H[dom.first].domain,
		      "layout", g.torus ? "torus" : "list", "counts", counts_json(&dc), "grid",
		      "cols", g.grid_cols, "rows", g.grid_rows, "cubeSize", "cols", g.cube_cols,
		      "rows", g.cube_rows, "largestFree", largest_json(H, dom, cs, nc, &g), "cubes",
		      cubes);
out:
	json_decref(cubes);
	free(g.cube_col);
	free(g.cube_row);
	free(g.cube_w);
	free(g.cube_h);
	free(cs);
	return o;
}

static json_t *groups_json(const struct layout *L, json_t **ret_pending)
{
	json_t *out = json_array(), *pending = json_array();

	for (size_t i = 0; i < L->ngroups; i++) {
		const struct lgroup *lg = &L->groups[i];
		const struct ui_group *g = lg->g;
		bool scheduled = g->status && strcmp(g->status, "True") == 0;
		json_t *o = json_pack(
		    "{s:i,s:s,s:s,s:s,s:i,s:o,s:i,s:i,s:i,s:b,s:o,s:o}", "id", (int)i, "kind",
		    g->kind, "namespace", g->ns, "name", g->name, "root", (int)lg->root,
		    "sliceShape", ui_str_or_null(g->slice_shape), "pods", lg->pods, "boundPods",
		    lg->bound, "hosts", lg->hosts, "scheduled", scheduled, "reason",
		    ui_str_or_null(g->reason), "message", ui_str_or_null(g->message));

		json_array_append_new(out, o);
		/* at every level: not scheduled yet, or scheduled with pods still unbound */
		if (!scheduled || lg->bound < lg->pods)
			json_array_append_new(pending, json_integer((json_int_t)i));
	}
	*ret_pending = pending;
	return out;
}

static void layout_free(struct layout *L)
{
	for (size_t i = 0; L->hosts && i < L->nhosts; i++)
		json_decref(L->hosts[i].req);
	free(L->domain_key);
	free(L->cube_key);
	free(L->hosts);
	free(L->groups);
	json_decref(L->group_ids);
}

int ui_map_layout(const struct ui_view *v, uint64_t generation, json_t **ret)
{
	struct layout L = {0};
	struct counts total = {0};
	json_t *domains = json_array(), *pending = NULL, *gj, *doc;
	size_t i, pods_bound = 0;
	int r = domains ? find_levels(v, &L) : -ENOMEM;

	if (r == 0)
		r = load_hosts(v, &L);
	if (r == 0)
		r = load_groups(v, &L);
	if (r == 0)
		r = place_pods(v, &L);
	if (r < 0) {
		layout_free(&L);
		json_decref(domains);
		return r;
	}
	qsort(L.hosts, L.nhosts, sizeof(*L.hosts), host_cmp);
	for (i = 0; i < L.nhosts;) {
		struct span dom = {i, 0};

		while (i < L.nhosts && strcmp(L.hosts[i].domain, L.hosts[dom.first].domain) == 0)
			i++;
		dom.n = i - dom.first;
		json_array_append_new(domains, domain_json(L.hosts, dom, &total));
	}
	for (i = 0; i < L.nhosts; i++)
		pods_bound += (size_t)L.hosts[i].pods;
	gj = groups_json(&L, &pending);
	doc = json_pack("{s:s,s:s,s:I,s:{s:o,s:o},s:o,s:o,s:o,s:o}", "kind", "PlacementMap",
			"apiVersion", "podkernel.dev/v1alpha1", "generation",
			(json_int_t)generation, "levels", "domain", ui_str_or_null(L.domain_key),
			"cube", ui_str_or_null(L.cube_key), "summary", counts_json(&total),
			"groups", gj, "pending", pending, "domains", domains);
	if (doc) {
		json_t *s = json_object_get(doc, "summary");

		json_object_set_new(s, "pods", json_integer((json_int_t)v->npods));
		json_object_set_new(s, "boundPods", json_integer((json_int_t)pods_bound));
		json_object_set_new(s, "pendingGangs",
				    json_integer((json_int_t)json_array_size(pending)));
		json_object_set_new(s, "queuedWorkloads",
				    json_integer((json_int_t)json_object_size(v->queued)));
		if (json_object_set_new(doc, "queued", ui_queued_json(v->queued, v->orders)) < 0) {
			json_decref(doc);
			doc = NULL;
		}
	}
	layout_free(&L);
	if (!doc)
		return -ENOMEM;
	*ret = doc;
	return 0;
}
