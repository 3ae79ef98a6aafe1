/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board.c — what a loaded board knows: accessors, the hosts of a simulated
 * cluster, and the ICI cabling the hardware must have.
 *
 * A simulated cluster is the board's level tree multiplied out: the outermost
 * level has `count` domains (or as many as the caller asks for), every inner
 * level `count` per parent, the host level last.  Host number i therefore
 * decomposes into one ordinal per level by division, outermost first, and its
 * labels follow from the ordinals.  On torus boards the levels from the
 * superslice down are tiles of the torus (superslice, cube, host shapes); an
 * ordinal is then a row-major tile index inside the parent tile, which gives
 * every host its chip coordinates, and a chip coordinate maps back to a host.
 * The ICI wiring is the torus: a host port leaves one chip in one direction,
 * and its peer is the port on the neighbouring chip facing back.  The loader
 * lives in board_yaml.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/board-internal.h"

static const char *const shape_names[_BOARD_SHAPE_MAX] = {
    [BOARD_SHAPE_SUPERSLICE] = "superslice",
    [BOARD_SHAPE_CUBE] = "cube",
    [BOARD_SHAPE_HOST] = "host",
};

enum board_shape topo__board_shape_from_string(const char *s)
{
	for (int i = 0; s && i < _BOARD_SHAPE_MAX; i++)
		if (strcmp(shape_names[i], s) == 0)
			return (enum board_shape)i;
	return BOARD_SHAPE_NONE;
}

struct topo_board *topo_board_new(void)
{
	struct topo_board *b = calloc(1, sizeof(*b));

	if (b)
		b->torus_level = -1;
	return b;
}

void topo__board_reset(struct topo_board *b)
{
	free(b->name);
	free(b->description);
	free(b->resource);
	free(b->devices);
	for (size_t i = 0; i < b->nalloc; i++)
		free(b->alloc_names[i]);
	free(b->alloc_names);
	free(b->alloc_milli);
	for (size_t i = 0; i < TOPO_BOARD_MAX_LEVELS; i++) {
		free(b->levels[i].name);
		free(b->levels[i].key);
		free(b->levels[i].prefix);
	}
	for (size_t i = 0; i < b->nports; i++)
		free(b->ports[i].name);
	free(b->ports);
	free(b->hostname_pattern);
	free(b->dra_driver);
	free(b->dra_channel_driver);
	memset(b, 0, sizeof(*b));
	b->torus_level = -1;
}

void topo_board_free(struct topo_board *b)
{
	if (!b)
		return;
	topo__board_reset(b);
	free(b);
}

/* ---- accessors ---------------------------------------------------------------- */

#define LOADED(b) ((b) && (b)->loaded)

const char *topo_board_name(const struct topo_board *b)
{
	return LOADED(b) ? b->name : NULL;
}

const char *topo_board_dra_driver(const struct topo_board *b)
{
	return LOADED(b) ? b->dra_driver : NULL;
}

bool topo_board_dra_shareable(const struct topo_board *b)
{
	return LOADED(b) && b->dra_driver && b->dra_shareable;
}

const char *topo_board_dra_channel_driver(const struct topo_board *b)
{
	return LOADED(b) ? b->dra_channel_driver : NULL;
}

int topo_board_dra_channel_level(const struct topo_board *b)
{
	return LOADED(b) && b->dra_channel_driver ? b->dra_channel_level : -1;
}

const char *topo_board_description(const struct topo_board *b)
{
	return LOADED(b) ? b->description : NULL;
}

const char *topo_board_accel_resource(const struct topo_board *b)
{
	return LOADED(b) ? b->resource : NULL;
}

unsigned topo_board_accel_vendor(const struct topo_board *b)
{
	return LOADED(b) ? b->vendor : 0;
}

size_t topo_board_accel_device_count(const struct topo_board *b)
{
	return LOADED(b) ? b->ndevices : 0;
}

unsigned topo_board_accel_device(const struct topo_board *b, size_t i)
{
	return LOADED(b) && i < b->ndevices ? b->devices[i] : 0;
}

bool topo_board_is_accel(const struct topo_board *b, unsigned vendor, unsigned device)
{
	if (!LOADED(b) || vendor != b->vendor)
		return false;
	for (size_t i = 0; i < b->ndevices; i++)
		if (b->devices[i] == device)
			return true;
	return false;
}

int topo_board_chips_per_host(const struct topo_board *b)
{
	return LOADED(b) ? b->chips_per_host : 0;
}

int topo_board_numa_per_host(const struct topo_board *b)
{
	return LOADED(b) ? b->numa : 0;
}

bool topo_board_has_torus(const struct topo_board *b)
{
	return LOADED(b) && b->has_torus;
}

static const struct topo_shape *shape_of(const struct topo_board *b, enum board_shape s)
{
	return LOADED(b) && b->has_torus ? &b->shapes[s] : NULL;
}

const struct topo_shape *topo_board_host_shape(const struct topo_board *b)
{
	return shape_of(b, BOARD_SHAPE_HOST);
}

const struct topo_shape *topo_board_cube_shape(const struct topo_board *b)
{
	return shape_of(b, BOARD_SHAPE_CUBE);
}

const struct topo_shape *topo_board_superslice_shape(const struct topo_board *b)
{
	return shape_of(b, BOARD_SHAPE_SUPERSLICE);
}

bool topo_board_wraparound(const struct topo_board *b)
{
	return LOADED(b) && b->has_torus && b->wrap;
}

size_t topo_board_allocatable_count(const struct topo_board *b)
{
	return LOADED(b) ? b->nalloc : 0;
}

const char *topo_board_allocatable_name(const struct topo_board *b, size_t i)
{
	return LOADED(b) && i < b->nalloc ? b->alloc_names[i] : NULL;
}

int64_t topo_board_allocatable_milli(const struct topo_board *b, size_t i)
{
	return LOADED(b) && i < b->nalloc ? b->alloc_milli[i] : 0;
}

size_t topo_board_level_count(const struct topo_board *b)
{
	return LOADED(b) ? b->nlevels : 0;
}

const char *topo_board_level_name(const struct topo_board *b, size_t i)
{
	return LOADED(b) && i < b->nlevels ? b->levels[i].name : NULL;
}

const char *topo_board_level_key(const struct topo_board *b, size_t i)
{
	return LOADED(b) && i < b->nlevels ? b->levels[i].key : NULL;
}

int topo_board_level_domains(const struct topo_board *b, size_t i)
{
	int64_t n = 1;

	if (!LOADED(b) || i >= b->nlevels)
		return 0;
	for (size_t l = 0; l <= i; l++)
		n *= b->levels[l].count;
	return n > BOARD_MAX_HOSTS ? BOARD_MAX_HOSTS : (int)n;
}

int topo_board_ici_ports_per_chip(const struct topo_board *b)
{
	return LOADED(b) ? b->ports_per_chip : 0;
}

size_t topo_board_ici_port_count(const struct topo_board *b)
{
	return LOADED(b) ? b->nports : 0;
}

const char *topo_board_ici_port_name(const struct topo_board *b, size_t i)
{
	return LOADED(b) && i < b->nports ? b->ports[i].name : NULL;
}

const char *topo_board_hostname_pattern(const struct topo_board *b)
{
	return LOADED(b) ? b->hostname_pattern : NULL;
}

/* ---- ports of a host ----------------------------------------------------------- */

/*
 * Host ports in order: chips row-major, then axes x, y, z, then directions
 * -1, +1; a port exists where the chip sits on the host's face in that
 * direction and the torus has links along that axis (its size is above 1).
 */
static bool port_exists(const struct topo_board *b, const struct topo_coord *local, int axis,
			int dir)
{
	const struct topo_shape *host = &b->shapes[BOARD_SHAPE_HOST];

	if (b->shapes[BOARD_SHAPE_SUPERSLICE].dim[axis] < 2)
		return false;
	return dir < 0 ? local->c[axis] == 0 : local->c[axis] == host->dim[axis] - 1;
}

int topo__board_host_port(const struct topo_board *b, size_t i, struct board_port *ret)
{
	const struct topo_shape *host = &b->shapes[BOARD_SHAPE_HOST];
	size_t n = 0;

	if (!b->has_torus)
		return -ENOENT;
	for (int64_t chip = 0; chip < topo_shape_volume(host); chip++) {
		struct topo_coord local;

		topo_coord_of_index(host, chip, &local);
		for (int axis = 0; axis < TOPO_DIMS; axis++)
			for (int dir = -1; dir <= 1; dir += 2) {
				if (!port_exists(b, &local, axis, dir))
					continue;
				if (n++ == i) {
					*ret = (struct board_port){
					    .chip = (int)chip, .axis = axis, .dir = dir};
					return 0;
				}
			}
	}
	return -ENOENT;
}

size_t topo__board_host_port_count(const struct topo_board *b)
{
	struct board_port p;
	size_t n = 0;

	while (topo__board_host_port(b, n, &p) == 0)
		n++;
	return n;
}

int topo__board_finish(struct topo_board *b, char *err, size_t errlen)
{
	int64_t hosts = 1;

	b->torus_level = -1;
	for (size_t l = 0; l < b->nlevels; l++)
		if (b->levels[l].shape != BOARD_SHAPE_NONE) {
			b->torus_level = (int)l;
			break;
		}
	for (size_t l = b->nlevels; l-- > 0;) {
		b->levels[l].hosts = hosts;
		hosts *= b->levels[l].count;
		if (hosts > BOARD_MAX_HOSTS) {
			snprintf(err, errlen, "the cluster has more than %d hosts",
				 BOARD_MAX_HOSTS);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < b->nports; i++) {
		struct board_port p;

		if (topo__board_host_port(b, i, &p) < 0) {
			snprintf(err, errlen, "host has %zu ICI ports, board lists %zu",
				 topo__board_host_port_count(b), b->nports);
			return -EINVAL;
		}
		b->ports[i].chip = p.chip;
		b->ports[i].axis = p.axis;
		b->ports[i].dir = p.dir;
	}
	return 0;
}

/* ---- hosts ----------------------------------------------------------------------- */

int64_t topo_board_host_count(const struct topo_board *b, int superslices)
{
	int64_t n;

	if (!LOADED(b) || b->nlevels == 0)
		return 0;
	if (superslices <= 0)
		superslices = b->levels[0].count;
	if (superslices > BOARD_MAX_COUNT)
		return -ERANGE;
	n = (int64_t)superslices * b->levels[0].hosts;
	return n > BOARD_MAX_HOSTS ? -ERANGE : n;
}

/* Ordinal of host index at level l: within its parent (outermost: in the cluster). */
static int64_t ordinal(const struct topo_board *b, int64_t index, size_t l)
{
	int64_t o = index / b->levels[l].hosts;

	return l == 0 ? o : o % b->levels[l].count;
}

/* Chip coordinates of a host's first chip inside its superslice torus. */
static void host_origin(const struct topo_board *b, int64_t index, struct topo_coord *ret)
{
	*ret = (struct topo_coord){{0}};
	if (b->torus_level < 0)
		return;
	for (size_t l = (size_t)b->torus_level + 1; l < b->nlevels; l++) {
		const struct topo_shape *parent = &b->shapes[b->levels[l - 1].shape];
		const struct topo_shape *tile = &b->shapes[b->levels[l].shape];
		struct topo_shape grid;
		struct topo_coord t;

		for (int a = 0; a < TOPO_DIMS; a++)
			grid.dim[a] = parent->dim[a] / tile->dim[a];
		topo_coord_of_index(&grid, ordinal(b, index, l), &t);
		for (int a = 0; a < TOPO_DIMS; a++)
			ret->c[a] += t.c[a] * tile->dim[a];
	}
}

/* Host index, within its torus, of the host that holds chip c. */
static int64_t host_of_chip(const struct topo_board *b, const struct topo_coord *c)
{
	int64_t local = 0;

	for (size_t l = (size_t)b->torus_level + 1; l < b->nlevels; l++) {
		const struct topo_shape *parent = &b->shapes[b->levels[l - 1].shape];
		const struct topo_shape *tile = &b->shapes[b->levels[l].shape];
		struct topo_shape grid;
		struct topo_coord t;

		for (int a = 0; a < TOPO_DIMS; a++) {
			grid.dim[a] = parent->dim[a] / tile->dim[a];
			t.c[a] = (c->c[a] % parent->dim[a]) / tile->dim[a];
		}
		local += topo_coord_index(&grid, &t) * b->levels[l].hosts;
	}
	return local;
}

static int append(char *buf, size_t len, size_t *pos, const char *s)
{
	size_t n = strlen(s);

	if (*pos + n >= len)
		return -ENAMETOOLONG;
	memcpy(buf + *pos, s, n + 1);
	*pos += n;
	return 0;
}

/*
 * Expand the hostname pattern: {level} is the ordinal of the host's domain at
 * that level counted inside the domain of the previous placeholder's level (the
 * whole cluster for the first), {index} the host number.
 */
static int expand_hostname(const struct topo_board *b, int64_t index, char *buf, size_t len)
{
	const char *p = b->hostname_pattern;
	int64_t outer_hosts = -1; /* hosts in the previous placeholder's domain */
	size_t pos = 0;
	char num[24];
	int r;

	buf[0] = '\0';
	if (!p) {
		snprintf(num, sizeof(num), "-%lld", (long long)index);
		r = append(buf, len, &pos, b->name);
		return r < 0 ? r : append(buf, len, &pos, num);
	}
	while (*p) {
		const char *close;
		size_t n;

		if (*p != '{') {
			n = strcspn(p, "{");
			if (pos + n >= len)
				return -ENAMETOOLONG;
			memcpy(buf + pos, p, n);
			buf[pos += n] = '\0';
			p += n;
			continue;
		}
		close = strchr(p, '}');
		if (!close)
			return -EINVAL;
		n = (size_t)(close - p - 1);
		if (n == 5 && strncmp(p + 1, "index", 5) == 0) {
			snprintf(num, sizeof(num), "%lld", (long long)index);
		} else {
			size_t l;

			for (l = 0; l < b->nlevels; l++)
				if (strlen(b->levels[l].name) == n &&
				    strncmp(b->levels[l].name, p + 1, n) == 0)
					break;
			if (l == b->nlevels)
				return -EINVAL;
			snprintf(num, sizeof(num), "%lld",
				 (long long)((outer_hosts > 0 ? index % outer_hosts : index) /
					     b->levels[l].hosts));
			outer_hosts = b->levels[l].hosts;
		}
		r = append(buf, len, &pos, num);
		if (r < 0)
			return r;
		p = close + 1;
	}
	return 0;
}

int topo_board_host(const struct topo_board *b, int superslices, int64_t index,
		    struct topo_host *ret)
{
	struct topo_host h = {.index = index};
	int64_t n = topo_board_host_count(b, superslices);
	char value[TOPO_LABEL_NAME_MAX + 1] = "";
	size_t pos = 0, last;
	int r;

	if (!LOADED(b) || !ret)
		return -EINVAL;
	if (n < 0)
		return (int)n;
	if (index < 0 || index >= n)
		return -ERANGE;
	last = b->nlevels - 1;
	r = expand_hostname(b, index, h.name, sizeof(h.name));
	if (r < 0)
		return r;
	if (!topo_dns_subdomain_valid(h.name) || !topo_label_value_valid(h.name, NULL, 0))
		return -EINVAL;
	for (size_t l = 0; l < last; l++) {
		char part[TOPO_LABEL_NAME_MAX + 24];

		snprintf(part, sizeof(part), "%s%s%lld", l ? "-" : "", b->levels[l].prefix,
			 (long long)ordinal(b, index, l));
		r = append(value, sizeof(value), &pos, part);
		if (r < 0)
			return r;
		memcpy(h.domain[l], value, pos + 1);
	}
	memcpy(h.domain[last], h.name, sizeof(h.name));
	host_origin(b, index, &h.coord);
	if (b->has_torus)
		snprintf(h.coords, sizeof(h.coords), "%d.%d.%d", h.coord.c[0], h.coord.c[1],
			 h.coord.c[2]);
	*ret = h;
	return 0;
}

static const char *const torus_keys[TOPO_TORUS_LABELS] = {
    TOPO_LABEL_COORDS,	   TOPO_LABEL_TORUS,	  TOPO_LABEL_TORUS_SHAPE,
    TOPO_LABEL_CUBE_SHAPE, TOPO_LABEL_HOST_SHAPE, TOPO_LABEL_WRAPAROUND,
};

bool topo_label_torus_reserved(const char *key)
{
	for (size_t i = 0; i < TOPO_TORUS_LABELS; i++)
		if (strcmp(key, torus_keys[i]) == 0)
			return true;
	return false;
}

bool topo_label_is_level(const char *key)
{
	return strncmp(key, TOPO_LABEL_LEVEL_PREFIX, strlen(TOPO_LABEL_LEVEL_PREFIX)) == 0 &&
	       !topo_label_torus_reserved(key) && strcmp(key, TOPO_LABEL_HOST_INDEX) != 0;
}

int topo_board_torus_labels(const struct topo_board *b, const struct topo_host *h,
			    struct topo_label ret[TOPO_TORUS_LABELS])
{
	struct topo_label l[TOPO_TORUS_LABELS];

	if (!LOADED(b) || !h || !ret)
		return -EINVAL;
	if (!b->has_torus || b->torus_level < 0)
		return 0;
	for (size_t i = 0; i < TOPO_TORUS_LABELS; i++)
		l[i].key = torus_keys[i];
	snprintf(l[0].value, sizeof(l[0].value), "%s", h->coords);
	snprintf(l[1].value, sizeof(l[1].value), "%s", h->domain[b->torus_level]);
	topo_shape_format(&b->shapes[BOARD_SHAPE_SUPERSLICE], l[2].value, sizeof(l[2].value));
	topo_shape_format(&b->shapes[BOARD_SHAPE_CUBE], l[3].value, sizeof(l[3].value));
	topo_shape_format(&b->shapes[BOARD_SHAPE_HOST], l[4].value, sizeof(l[4].value));
	snprintf(l[5].value, sizeof(l[5].value), "%s", b->wrap ? "true" : "false");
	memcpy(ret, l, sizeof(l));
	return TOPO_TORUS_LABELS;
}

/* "x.y.z" of non-negative integers. */
static int coords_parse(const char *s, struct topo_coord *ret)
{
	struct topo_coord c;
	char *end;

	for (int a = 0; a < TOPO_DIMS; a++) {
		long v;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = strtol(s, &end, 10);
		if (v > 65535 || (a < TOPO_DIMS - 1 ? *end != '.' : *end != '\0'))
			return -EINVAL;
		c.c[a] = (int)v;
		s = end + 1;
	}
	*ret = c;
	return 0;
}

int topo_torus_host_parse(const char *(*get)(const char *key, void *arg), void *arg,
			  struct topo_torus_host *ret)
{
	const char *torus = get(TOPO_LABEL_TORUS, arg), *ts = get(TOPO_LABEL_TORUS_SHAPE, arg);
	const char *hs = get(TOPO_LABEL_HOST_SHAPE, arg), *cs = get(TOPO_LABEL_CUBE_SHAPE, arg);
	const char *w = get(TOPO_LABEL_WRAPAROUND, arg), *co = get(TOPO_LABEL_COORDS, arg);
	struct topo_torus_host h = {0};
	struct topo_coord c;

	if (!torus || !*torus || !ts || !hs || !w || !co)
		return -ENOENT;
	if (strlen(torus) > TOPO_LABEL_NAME_MAX || topo_shape_parse(ts, &h.chips) < 0 ||
	    topo_shape_volume(&h.chips) > TOPO_TORUS_MAX_CHIPS ||
	    topo_shape_parse(hs, &h.host) < 0 || !topo_shape_divides(&h.host, &h.chips) ||
	    coords_parse(co, &c) < 0 || !topo_coord_in(&h.chips, &c) ||
	    (strcmp(w, "true") && strcmp(w, "false")))
		return -EINVAL;
	for (int a = 0; a < TOPO_DIMS; a++)
		if (c.c[a] % h.host.dim[a])
			return -EINVAL;
	h.has_cube = cs && topo_shape_parse(cs, &h.cube) == 0 &&
		     topo_shape_divides(&h.host, &h.cube) && topo_shape_divides(&h.cube, &h.chips);
	snprintf(h.torus, sizeof(h.torus), "%s", torus);
	h.wrap = strcmp(w, "true") == 0;
	topo_coord_block(&c, &h.host, &h.cell);
	*ret = h;
	return 0;
}

/* ---- ICI wiring -------------------------------------------------------------------- */

static int find_port(const struct topo_board *b, int chip, int axis, int dir)
{
	for (size_t i = 0; i < b->nports; i++)
		if (b->ports[i].chip == chip && b->ports[i].axis == axis && b->ports[i].dir == dir)
			return (int)i;
	return -1;
}

int topo_board_ici_peer(const struct topo_board *b, int superslices, int64_t host, size_t port,
			int64_t *ret_peer_host, size_t *ret_peer_port)
{
	const struct topo_shape *hs, *ss;
	const struct board_port *p;
	struct topo_coord origin, chip, local;
	int64_t n = topo_board_host_count(b, superslices), torus_hosts, base;
	int size, peer_port;

	if (!LOADED(b))
		return -EINVAL;
	if (n < 0)
		return (int)n;
	if (host < 0 || host >= n)
		return -ERANGE;
	if (!b->has_torus || port >= b->nports || b->torus_level < 0)
		return -ENOENT;
	hs = &b->shapes[BOARD_SHAPE_HOST];
	ss = &b->shapes[BOARD_SHAPE_SUPERSLICE];
	p = &b->ports[port];
	host_origin(b, host, &origin);
	topo_coord_of_index(hs, p->chip, &local);
	for (int a = 0; a < TOPO_DIMS; a++)
		chip.c[a] = origin.c[a] + local.c[a];
	size = ss->dim[p->axis];
	chip.c[p->axis] += p->dir;
	if (chip.c[p->axis] < 0 || chip.c[p->axis] >= size) {
		if (!b->wrap)
			return -ENOENT; /* the edge of a torus without wraparound */
		chip.c[p->axis] = (chip.c[p->axis] + size) % size;
	}
	torus_hosts = b->levels[b->torus_level].hosts;
	base = host / torus_hosts * torus_hosts;
	for (int a = 0; a < TOPO_DIMS; a++)
		local.c[a] = chip.c[a] % hs->dim[a];
	peer_port = find_port(b, (int)topo_coord_index(hs, &local), p->axis, -p->dir);
	if (peer_port < 0)
		return -ENOENT;
	*ret_peer_host = base + host_of_chip(b, &chip);
	*ret_peer_port = (size_t)peer_port;
	return 0;
}
