/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_yaml.c — the board file loader.
 *
 * libyaml loads the file into a document (a node graph with source marks);
 * the loader then walks it against the board schema, one small function per
 * mapping.  Every mapping is checked against its table of known fields, so an
 * unknown or duplicated key is an error at that key; every scalar is checked
 * for type and range where it is read.  Errors read "FILE:LINE:COL: path:
 * message" with the position of the offending node (libyaml marks are 0-based,
 * users count from 1).  Everything is read into a scratch board that replaces
 * the caller's only when the whole file is valid, so a failed load leaves the
 * board unloaded and unchanged.
 *
 * Sizes are bounded (file size, list lengths, strings, shape volumes, level
 * count, simulated hosts) so hostile files cost little.  The walker only ever
 * descends into the fields the schema names, so aliases (which libyaml keeps
 * as shared nodes, not copies) cannot make it loop or blow up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "topology/board-internal.h"

#define BOARD_API_VERSION "podkernel.dev/v1alpha1"
#define BOARD_KIND "Board"
#define LEVEL_NAME_MAX 32
#define PATH_MAX_LEN 128

struct ctx {
	yaml_document_t *doc;
	const char *file;
	char *err;
	size_t errlen;
};

struct field {
	const char *key;
	yaml_node_t *value;
};

static int fail_at(struct ctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(struct ctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	char msg[TOPO_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->errlen)
		snprintf(c->err, c->errlen, "%s:%zu:%zu: %s%s%s", c->file,
			 n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1,
			 path ? path : "", path ? ": " : "", msg);
	return -EINVAL;
}

static yaml_node_t *node(struct ctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

/* ---- generic walkers ---------------------------------------------------------------- */

/*
 * Match the keys of mapping n to fields f (values are NULL when absent).
 * Unknown and duplicate keys are errors at the key.
 */
static int map_fields(struct ctx *c, yaml_node_t *n, const char *path, struct field *f, size_t nf)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return fail_at(c, n, path, "expected a mapping");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node(c, p->key);
		const char *key;
		size_t i;

		if (!k || k->type != YAML_SCALAR_NODE)
			return fail_at(c, k, path, "expected a string key");
		key = (const char *)k->data.scalar.value;
		for (i = 0; i < nf && strcmp(f[i].key, key) != 0; i++)
			;
		if (i == nf)
			return fail_at(c, k, path, "unknown field \"%.64s\"", key);
		if (f[i].value)
			return fail_at(c, k, path, "duplicate field \"%s\"", key);
		f[i].value = node(c, p->value);
	}
	return 0;
}

static int need(struct ctx *c, yaml_node_t *map, const char *path, const struct field *f)
{
	if (f->value)
		return 0;
	return fail_at(c, map, path, "missing required field \"%s\"", f->key);
}

static const char *subpath(char *buf, const char *path, const char *key)
{
	snprintf(buf, PATH_MAX_LEN, "%s%s%s", path, *path ? "." : "", key);
	return buf;
}

static const char *itempath(char *buf, const char *path, size_t i)
{
	snprintf(buf, PATH_MAX_LEN, "%s[%zu]", path, i);
	return buf;
}

static int scalar(struct ctx *c, yaml_node_t *n, const char *path, const char **ret)
{
	const char *s = NULL;

	if (!n || n->type != YAML_SCALAR_NODE)
		return fail_at(c, n, path, "expected a string");
	s = (const char *)n->data.scalar.value;
	if (n->data.scalar.length > BOARD_MAX_STRING)
		return fail_at(c, n, path, "longer than %d characters", BOARD_MAX_STRING);
	if (strlen(s) != n->data.scalar.length)
		return fail_at(c, n, path, "contains a NUL character");
	*ret = s;
	return 0;
}

static int get_string(struct ctx *c, yaml_node_t *n, const char *path, char **ret)
{
	const char *s = NULL;
	char *dup;
	int r = scalar(c, n, path, &s);

	if (r < 0)
		return r;
	dup = strdup(s);
	if (!dup)
		return -ENOMEM;
	free(*ret);
	*ret = dup;
	return 0;
}

static int get_int(struct ctx *c, yaml_node_t *n, const char *path, int min, int max, int *ret)
{
	const char *s = NULL;
	long v = 0;
	int r = scalar(c, n, path, &s);

	if (r < 0)
		return r;
	if (!*s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return fail_at(c, n, path, "expected an integer, got \"%.32s\"", s);
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return fail_at(c, n, path, "expected an integer, got \"%.32s\"", s);
		if (v <= max)
			v = v * 10 + (*p - '0');
	}
	if (v < min || v > max)
		return fail_at(c, n, path, "must be between %d and %d", min, max);
	*ret = (int)v;
	return 0;
}

static int get_bool(struct ctx *c, yaml_node_t *n, const char *path, bool *ret)
{
	const char *s = NULL;
	int r = scalar(c, n, path, &s);

	if (r < 0)
		return r;
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strcmp(s, "true") == 0)
		*ret = true;
	else if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strcmp(s, "false") == 0)
		*ret = false;
	else
		return fail_at(c, n, path, "expected true or false, got \"%.32s\"", s);
	return 0;
}

static int get_shape(struct ctx *c, yaml_node_t *n, const char *path, struct topo_shape *ret)
{
	const char *s = NULL;
	int r = scalar(c, n, path, &s);

	if (r < 0)
		return r;
	if (topo_shape_parse(s, ret) < 0)
		return fail_at(c, n, path, "expected a shape like 4x4x4, got \"%.32s\"", s);
	if (topo_shape_volume(ret) > BOARD_MAX_CHIPS)
		return fail_at(c, n, path, "more than %d chips", BOARD_MAX_CHIPS);
	return 0;
}

/* A PCI ID as four hex digits ("1ae0"); quoted or plain. */
static int get_hex4(struct ctx *c, yaml_node_t *n, const char *path, unsigned *ret)
{
	const char *s = NULL;
	int r = scalar(c, n, path, &s);

	if (r < 0)
		return r;
	if (strlen(s) != 4 || strspn(s, "0123456789abcdefABCDEF") != 4)
		return fail_at(c, n, path, "expected a PCI ID of 4 hex digits, got \"%.32s\"", s);
	*ret = (unsigned)strtoul(s, NULL, 16);
	return 0;
}

/* A list of at most max items; returns its length in ret_n. */
static int get_list(struct ctx *c, yaml_node_t *n, const char *path, size_t min, size_t max,
		    size_t *ret_n)
{
	size_t len = 0;

	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail_at(c, n, path, "expected a list");
	len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (len < min)
		return fail_at(c, n, path, "expected at least %zu item%s", min,
			       min == 1 ? "" : "s");
	if (len > max)
		return fail_at(c, n, path, "more than %zu items", max);
	*ret_n = len;
	return 0;
}

static yaml_node_t *item(struct ctx *c, yaml_node_t *list, size_t i)
{
	return node(c, list->data.sequence.items.start[i]);
}

/* ---- spec.accelerator ------------------------------------------------------------------ */

static int load_accelerator(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	const char *path = "spec.accelerator";
	char p[PATH_MAX_LEN], why[256];
	struct field f[] = {{"resource"}, {"vendorId"}, {"deviceIds"}, {"chipsPerHost"}};
	size_t nd = 0;
	int r;

	r = map_fields(c, n, path, f, 4);
	for (size_t i = 0; r == 0 && i < 4; i++)
		r = need(c, n, path, &f[i]);
	if (r == 0)
		r = get_string(c, f[0].value, subpath(p, path, "resource"), &b->resource);
	if (r == 0 &&
	    (!strchr(b->resource, '/') || !topo_label_key_valid(b->resource, why, sizeof(why))))
		r = fail_at(c, f[0].value, p,
			    "expected an extended resource name like google.com/tpu");
	if (r == 0)
		r = get_hex4(c, f[1].value, subpath(p, path, "vendorId"), &b->vendor);
	if (r == 0)
		r = get_list(c, f[2].value, subpath(p, path, "deviceIds"), 1, BOARD_MAX_LIST, &nd);
	if (r < 0)
		return r;
	b->devices = calloc(nd, sizeof(*b->devices));
	if (!b->devices)
		return -ENOMEM;
	for (size_t i = 0; i < nd; i++) {
		char ip[PATH_MAX_LEN];

		r = get_hex4(c, item(c, f[2].value, i), itempath(ip, p, i), &b->devices[i]);
		if (r < 0)
			return r;
		b->ndevices++;
	}
	return get_int(c, f[3].value, subpath(p, path, "chipsPerHost"), 1, BOARD_MAX_CHIPS_PER_HOST,
		       &b->chips_per_host);
}

/* ---- spec.host ------------------------------------------------------------------------------ */

static int load_allocatable(struct ctx *c, struct topo_board *b, yaml_node_t *n, const char *path)
{
	size_t len = 0;

	if (!n || n->type != YAML_MAPPING_NODE)
		return fail_at(c, n, path, "expected a mapping of resource names to quantities");
	len = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (len == 0 || len > BOARD_MAX_LIST)
		return fail_at(c, n, path, "expected 1 to %d resources", BOARD_MAX_LIST);
	b->alloc_names = calloc(len, sizeof(char *));
	b->alloc_milli = calloc(len, sizeof(int64_t));
	if (!b->alloc_names || !b->alloc_milli)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		yaml_node_pair_t *pair = &n->data.mapping.pairs.start[i];
		yaml_node_t *k = node(c, pair->key), *v = node(c, pair->value);
		char p[PATH_MAX_LEN], why[256];
		const char *name = NULL, *qty = NULL;
		int64_t milli;
		int r;

		r = scalar(c, k, path, &name);
		if (r < 0)
			return r;
		snprintf(p, sizeof(p), "%s[%.64s]", path, name);
		if (!topo_label_key_valid(name, why, sizeof(why)))
			return fail_at(c, k, p, "invalid resource name: %s", why);
		for (size_t j = 0; j < b->nalloc; j++)
			if (strcmp(b->alloc_names[j], name) == 0)
				return fail_at(c, k, path, "duplicate resource \"%s\"", name);
		r = scalar(c, v, p, &qty);
		if (r < 0)
			return r;
		r = topo_quantity_parse(qty, &milli);
		if (r == -ERANGE)
			return fail_at(c, v, p, "quantity \"%.64s\" is too large", qty);
		if (r < 0)
			return fail_at(c, v, p,
				       "expected a quantity like 500m, 64 or 256Gi, got "
				       "\"%.64s\"",
				       qty);
		if (milli < 0)
			return fail_at(c, v, p, "must not be negative");
		b->alloc_names[i] = strdup(name);
		if (!b->alloc_names[i])
			return -ENOMEM;
		b->alloc_milli[i] = milli;
		b->nalloc++;
	}
	return 0;
}

static int load_host(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	const char *path = "spec.host";
	struct field f[] = {{"allocatable"}, {"numaNodes"}};
	char p[PATH_MAX_LEN];
	int r;

	r = map_fields(c, n, path, f, 2);
	for (size_t i = 0; r == 0 && i < 2; i++)
		r = need(c, n, path, &f[i]);
	if (r == 0)
		r = load_allocatable(c, b, f[0].value, subpath(p, path, "allocatable"));
	if (r == 0)
		r = get_int(c, f[1].value, subpath(p, path, "numaNodes"), 1, BOARD_MAX_NUMA,
			    &b->numa);
	if (r < 0)
		return r;
	/* The accelerator resource must be allocatable, one per chip. */
	for (size_t i = 0; i < b->nalloc; i++)
		if (strcmp(b->alloc_names[i], b->resource) == 0) {
			yaml_node_t *v = node(c, f[0].value->data.mapping.pairs.start[i].value);

			snprintf(p, sizeof(p), "spec.host.allocatable[%s]", b->resource);
			if (b->alloc_milli[i] != (int64_t)b->chips_per_host * 1000)
				return fail_at(c, v, p,
					       "must equal spec.accelerator.chipsPerHost (%d)",
					       b->chips_per_host);
			return 0;
		}
	return fail_at(c, f[0].value, "spec.host.allocatable",
		       "missing the accelerator "
		       "resource \"%s\"",
		       b->resource);
}

/* ---- spec.torus ---------------------------------------------------------------------------------
 */

static int load_torus(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	const char *path = "spec.torus";
	struct field f[] = {{"host"}, {"cube"}, {"superslice"}, {"wraparound"}};
	struct topo_shape *s = b->shapes;
	char p[PATH_MAX_LEN];
	int r;

	r = map_fields(c, n, path, f, 4);
	if (r == 0)
		r = need(c, n, path, &f[0]);
	if (r == 0)
		r = need(c, n, path, &f[1]);
	if (r == 0)
		r = need(c, n, path, &f[3]);
	if (r == 0)
		r = get_shape(c, f[0].value, subpath(p, path, "host"), &s[BOARD_SHAPE_HOST]);
	if (r == 0)
		r = get_shape(c, f[1].value, subpath(p, path, "cube"), &s[BOARD_SHAPE_CUBE]);
	s[BOARD_SHAPE_SUPERSLICE] = s[BOARD_SHAPE_CUBE];
	if (r == 0 && f[2].value)
		r = get_shape(c, f[2].value, subpath(p, path, "superslice"),
			      &s[BOARD_SHAPE_SUPERSLICE]);
	if (r == 0)
		r = get_bool(c, f[3].value, subpath(p, path, "wraparound"), &b->wrap);
	if (r < 0)
		return r;
	if (topo_shape_volume(&s[BOARD_SHAPE_HOST]) != b->chips_per_host)
		return fail_at(c, f[0].value, "spec.torus.host",
			       "holds %lld chips, spec.accelerator.chipsPerHost is %d",
			       (long long)topo_shape_volume(&s[BOARD_SHAPE_HOST]),
			       b->chips_per_host);
	if (!topo_shape_divides(&s[BOARD_SHAPE_HOST], &s[BOARD_SHAPE_CUBE]))
		return fail_at(c, f[1].value, "spec.torus.cube", "is not tiled by the host shape");
	if (!topo_shape_divides(&s[BOARD_SHAPE_CUBE], &s[BOARD_SHAPE_SUPERSLICE]))
		return fail_at(c, f[2].value, "spec.torus.superslice",
			       "is not tiled by the cube shape");
	b->has_torus = true;
	return 0;
}

/* ---- spec.ici
 * ------------------------------------------------------------------------------------- */

static bool ifname_valid(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= BOARD_IFNAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int load_ici(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	const char *path = "spec.ici";
	struct field f[] = {{"portsPerChip"}, {"ports"}, {"wiring"}};
	char p[PATH_MAX_LEN];
	const char *wiring = NULL;
	size_t np = 0, expect;
	int r, axes = 0;

	r = map_fields(c, n, path, f, 3);
	for (size_t i = 0; r == 0 && i < 3; i++)
		r = need(c, n, path, &f[i]);
	if (r < 0)
		return r;
	if (!b->has_torus)
		return fail_at(c, n, path, "ICI wiring needs spec.torus");
	for (int a = 0; a < TOPO_DIMS; a++)
		axes += b->shapes[BOARD_SHAPE_SUPERSLICE].dim[a] > 1;
	r = get_int(c, f[0].value, subpath(p, path, "portsPerChip"), 0, 2 * TOPO_DIMS,
		    &b->ports_per_chip);
	if (r < 0)
		return r;
	if (b->ports_per_chip != 2 * axes)
		return fail_at(c, f[0].value, p,
			       "a torus with %d linked axes has %d ports per chip", axes, 2 * axes);
	r = scalar(c, f[2].value, subpath(p, path, "wiring"), &wiring);
	if (r == 0 && strcmp(wiring, "torus") != 0)
		r = fail_at(c, f[2].value, p, "expected \"torus\", got \"%.32s\"", wiring);
	if (r == 0)
		r = get_list(c, f[1].value, subpath(p, path, "ports"), 0, BOARD_MAX_LIST, &np);
	if (r < 0)
		return r;
	expect = topo__board_host_port_count(b);
	if (np != expect)
		return fail_at(
		    c, f[1].value, p, "a %dx%dx%d host has %zu ICI ports leaving it, %zu listed",
		    b->shapes[BOARD_SHAPE_HOST].dim[0], b->shapes[BOARD_SHAPE_HOST].dim[1],
		    b->shapes[BOARD_SHAPE_HOST].dim[2], expect, np);
	b->ports = calloc(np ? np : 1, sizeof(*b->ports));
	if (!b->ports)
		return -ENOMEM;
	for (size_t i = 0; i < np; i++) {
		yaml_node_t *it = item(c, f[1].value, i);
		char ip[PATH_MAX_LEN];

		r = get_string(c, it, itempath(ip, p, i), &b->ports[i].name);
		if (r < 0)
			return r;
		b->nports++;
		if (!ifname_valid(b->ports[i].name))
			return fail_at(c, it, ip,
				       "expected a network interface name (1 to %d of "
				       "[A-Za-z0-9._-])",
				       BOARD_IFNAME_MAX);
		for (size_t j = 0; j < i; j++)
			if (strcmp(b->ports[j].name, b->ports[i].name) == 0)
				return fail_at(c, it, ip, "duplicate port \"%s\"",
					       b->ports[i].name);
	}
	return 0;
}

/* ---- spec.levels
 * ----------------------------------------------------------------------------------- */

/*
 * A level above the host may use any valid label key (podkernel's
 * topology.podkernel.dev/<level>, or a key the provider already puts on its
 * nodes), except the keys podagent publishes from what it discovers.
 */
static bool level_key_reserved(const char *key)
{
	static const char *const reserved[] = {
	    TOPO_LABEL_HOSTNAME,    TOPO_LABEL_COORDS,	     TOPO_LABEL_NUMA_COUNT,
	    TOPO_LABEL_ACCEL_COUNT, TOPO_LABEL_ACCEL_VENDOR, TOPO_LABEL_ACCEL_PRODUCT,
	    TOPO_LABEL_HOST_INDEX,
	};

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcmp(key, reserved[i]) == 0)
			return true;
	return topo_label_torus_reserved(key); /* the torus geometry labels */
}

static int load_level(struct ctx *c, struct topo_board *b, yaml_node_t *n, size_t i, bool last,
		      yaml_node_t **ret_count, yaml_node_t **ret_shape)
{
	struct board_level *lv = &b->levels[i];
	struct field f[] = {{"name"}, {"key"}, {"prefix"}, {"shape"}, {"count"}};
	char path[PATH_MAX_LEN], p[PATH_MAX_LEN], why[256];
	int r;

	itempath(path, "spec.levels", i);
	lv->shape = BOARD_SHAPE_NONE;
	r = map_fields(c, n, path, f, 5);
	if (r == 0)
		r = need(c, n, path, &f[0]);
	if (r == 0)
		r = need(c, n, path, &f[1]);
	if (r == 0)
		r = get_string(c, f[0].value, subpath(p, path, "name"), &lv->name);
	if (r == 0 && (!topo_dns_label_valid(lv->name) || strlen(lv->name) > LEVEL_NAME_MAX ||
		       strcmp(lv->name, "index") == 0))
		r = fail_at(c, f[0].value, p,
			    "expected a lowercase name of at most %d characters "
			    "(a-z, 0-9, '-'), not \"index\"",
			    LEVEL_NAME_MAX);
	for (size_t j = 0; r == 0 && j < i; j++)
		if (strcmp(b->levels[j].name, lv->name) == 0)
			r = fail_at(c, f[0].value, p, "duplicate level \"%s\"", lv->name);
	if (r == 0)
		r = get_string(c, f[1].value, subpath(p, path, "key"), &lv->key);
	if (r == 0 && !topo_label_key_valid(lv->key, why, sizeof(why)))
		r = fail_at(c, f[1].value, p, "%s", why);
	if (r == 0 && last && strcmp(lv->key, TOPO_LABEL_HOSTNAME) != 0)
		r = fail_at(c, f[1].value, p,
			    "the last level is the host: expected " TOPO_LABEL_HOSTNAME);
	if (r == 0 && !last && level_key_reserved(lv->key))
		r = fail_at(c, f[1].value, p,
			    "\"%s\" is a label podagent sets itself: a level "
			    "needs a key of its own (e.g. " TOPO_LABEL_LEVEL_PREFIX
			    "%s, or a provider's such as "
			    "cloud.google.com/gce-topology-block)",
			    lv->key, lv->name);
	for (size_t j = 0; r == 0 && j < i; j++)
		if (strcmp(b->levels[j].key, lv->key) == 0)
			r = fail_at(c, f[1].value, p, "duplicate key \"%s\"", lv->key);
	if (r == 0 && f[2].value) {
		r = get_string(c, f[2].value, subpath(p, path, "prefix"), &lv->prefix);
		if (r == 0 && (!topo_dns_label_valid(lv->prefix) || strlen(lv->prefix) > 16))
			r = fail_at(c, f[2].value, p,
				    "expected a lowercase prefix of at most 16 characters");
	}
	if (r == 0 && !lv->prefix) {
		lv->prefix = strdup(lv->name);
		if (!lv->prefix)
			r = -ENOMEM;
	}
	if (r == 0 && f[3].value) {
		const char *s = NULL;

		r = scalar(c, f[3].value, subpath(p, path, "shape"), &s);
		if (r == 0) {
			lv->shape = topo__board_shape_from_string(s);
			if (lv->shape == BOARD_SHAPE_NONE)
				r = fail_at(c, f[3].value, p,
					    "expected superslice, cube or host, got \"%.32s\"", s);
		}
	}
	if (r == 0 && f[4].value)
		r = get_int(c, f[4].value, subpath(p, path, "count"), 1, BOARD_MAX_COUNT,
			    &lv->count);
	*ret_count = f[4].value;
	*ret_shape = f[3].value;
	return r;
}

/*
 * Torus boards: the levels from the first shaped one down are tiles of the
 * torus, shapes strictly nested (superslice, cube, host), the host level last;
 * their counts follow from the shapes except the first one's.
 */
static int check_torus_levels(struct ctx *c, struct topo_board *b, yaml_node_t *list,
			      yaml_node_t **counts, yaml_node_t **shapes)
{
	size_t last = b->nlevels - 1;
	int first = -1;
	char p[PATH_MAX_LEN];

	if (b->levels[last].shape == BOARD_SHAPE_NONE)
		b->levels[last].shape = BOARD_SHAPE_HOST;
	if (b->levels[last].shape != BOARD_SHAPE_HOST)
		return fail_at(c, shapes[last], itempath(p, "spec.levels", last),
			       "the host level has shape host");
	for (size_t l = 0; l < b->nlevels; l++) {
		struct board_level *lv = &b->levels[l];

		itempath(p, "spec.levels", l);
		if (lv->shape == BOARD_SHAPE_NONE) {
			if (first >= 0)
				return fail_at(c, item(c, list, l), p,
					       "levels inside the torus need a shape");
			continue;
		}
		if (first < 0) {
			first = (int)l;
			if (memcmp(&b->shapes[lv->shape], &b->shapes[BOARD_SHAPE_SUPERSLICE],
				   sizeof(struct topo_shape)) != 0)
				return fail_at(c, shapes[l], p,
					       "the outermost shaped level must be "
					       "the whole torus (superslice)");
			continue;
		}
		if (lv->shape <= b->levels[l - 1].shape)
			return fail_at(c, shapes[l] ? shapes[l] : item(c, list, l), p,
				       "shapes go from superslice to cube to host");
		{
			int64_t derived = topo_shape_volume(&b->shapes[b->levels[l - 1].shape]) /
					  topo_shape_volume(&b->shapes[lv->shape]);

			if (counts[l] && lv->count != derived)
				return fail_at(c, counts[l], p, "count is %lld by the torus shapes",
					       (long long)derived);
			lv->count = (int)derived;
		}
	}
	if (!counts[first])
		return fail_at(c, item(c, list, (size_t)first), itempath(p, "spec.levels", first),
			       "missing required field \"count\"");
	for (int l = 0; l < first; l++)
		if (!counts[l])
			return fail_at(c, item(c, list, (size_t)l), itempath(p, "spec.levels", l),
				       "missing required field \"count\"");
	return 0;
}

static int load_levels(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	yaml_node_t *counts[TOPO_BOARD_MAX_LEVELS], *shapes[TOPO_BOARD_MAX_LEVELS];
	char p[PATH_MAX_LEN];
	size_t len = 0;
	int r;

	r = get_list(c, n, "spec.levels", 1, TOPO_BOARD_MAX_LEVELS, &len);
	if (r < 0)
		return r;
	for (size_t i = 0; i < len; i++) {
		r = load_level(c, b, item(c, n, i), i, i + 1 == len, &counts[i], &shapes[i]);
		b->nlevels = i + 1; /* so that reset frees it */
		if (r < 0)
			return r;
		if (shapes[i] && !b->has_torus)
			return fail_at(c, shapes[i], itempath(p, "spec.levels", i),
				       "shape needs spec.torus");
	}
	if (b->has_torus)
		return check_torus_levels(c, b, n, counts, shapes);
	for (size_t i = 0; i < len; i++)
		if (!counts[i])
			return fail_at(c, item(c, n, i), itempath(p, "spec.levels", i),
				       "missing required field \"count\"");
	return 0;
}

/* ---- hostnamePattern
 * ---------------------------------------------------------------------------------- */

/*
 * Placeholders name levels in order (each counted inside the previous one) or
 * {index}; literal text between them keeps names unambiguous; the chain must
 * end at the host level unless {index} is used.
 */
static int check_pattern(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	const char *path = "spec.hostnamePattern", *s = b->hostname_pattern;
	int prev = -1;
	bool index = false, literal_since = true;

	while (*s) {
		const char *close;
		size_t len = 0;
		int l;

		if (*s != '{') {
			if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789-.", *s))
				return fail_at(c, n, path, "'%c' is not allowed in a node name",
					       *s);
			literal_since = true;
			s++;
			continue;
		}
		close = strchr(s, '}');
		if (!close)
			return fail_at(c, n, path, "unclosed '{'");
		if (!literal_since)
			return fail_at(c, n, path, "placeholders need text between them");
		len = (size_t)(close - s - 1);
		literal_since = false;
		if (len == 5 && strncmp(s + 1, "index", 5) == 0) {
			index = true;
			s = close + 1;
			continue;
		}
		for (l = 0; l < (int)b->nlevels; l++)
			if (strlen(b->levels[l].name) == len &&
			    strncmp(b->levels[l].name, s + 1, len) == 0)
				break;
		if (l == (int)b->nlevels)
			return fail_at(c, n, path,
				       "unknown placeholder {%.*s}: expected a level name "
				       "or {index}",
				       (int)(len > 32 ? 32 : len), s + 1);
		if (l <= prev)
			return fail_at(c, n, path, "placeholders must follow the level order");
		prev = l;
		s = close + 1;
	}
	if (!index && prev != (int)b->nlevels - 1)
		return fail_at(c, n, path, "names would not be unique: use {%s} or {index}",
			       b->levels[b->nlevels - 1].name);
	return 0;
}

/* The first and the last host must have valid names and label values. */
static int check_hosts(struct ctx *c, struct topo_board *b, yaml_node_t *at)
{
	int64_t n = topo_board_host_count(b, 0);
	int64_t probe[2] = {0, n - 1};

	for (size_t i = 0; i < 2; i++) {
		struct topo_host h;
		int r = topo_board_host(b, 0, probe[i], &h);

		if (r == -ENAMETOOLONG)
			return fail_at(
			    c, at, b->hostname_pattern ? "spec.hostnamePattern" : "spec.levels",
			    "host %lld: a name or label value is longer than %d characters",
			    (long long)probe[i], TOPO_LABEL_NAME_MAX);
		if (r < 0)
			return fail_at(
			    c, at, b->hostname_pattern ? "spec.hostnamePattern" : "metadata.name",
			    "host %lld: not a valid node name", (long long)probe[i]);
	}
	return 0;
}

/* ---- the document
 * -------------------------------------------------------------------------------------- */

static int load_metadata(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	struct field f[] = {{"name"}};
	int r;

	r = map_fields(c, n, "metadata", f, 1);
	if (r == 0)
		r = need(c, n, "metadata", &f[0]);
	if (r == 0)
		r = get_string(c, f[0].value, "metadata.name", &b->name);
	if (r == 0 && (!topo_dns_label_valid(b->name) || strlen(b->name) > 40))
		r = fail_at(c, f[0].value, "metadata.name",
			    "expected a lowercase name of at most 40 characters (a-z, 0-9, '-')");
	return r;
}

/* ---- spec.dra ------------------------------------------------------------------------- */

static int get_driver(struct ctx *c, yaml_node_t *n, const char *path, char **ret)
{
	int r = get_string(c, n, path, ret);

	if (r == 0 && (!topo_dns_subdomain_valid(*ret) || strlen(*ret) > 63))
		return fail_at(c, n, path,
			       "expected a DRA driver name: a DNS subdomain of at most 63 "
			       "characters like gpu.example.com");
	return r;
}

static int load_dra(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	const char *path = "spec.dra";
	struct field f[] = {{"driver"}, {"channels"}, {"shareable"}},
		     ch[] = {{"driver"}, {"level"}};
	char p[PATH_MAX_LEN], lp[PATH_MAX_LEN];
	char *level = NULL;
	int r;

	r = map_fields(c, n, path, f, 3);
	if (r == 0)
		r = need(c, n, path, &f[0]);
	if (r == 0)
		r = get_driver(c, f[0].value, subpath(p, path, "driver"), &b->dra_driver);
	if (r == 0 && f[2].value)
		r = get_bool(c, f[2].value, subpath(p, path, "shareable"), &b->dra_shareable);
	if (r < 0 || !f[1].value)
		return r;
	subpath(p, path, "channels");
	r = map_fields(c, f[1].value, p, ch, 2);
	for (size_t i = 0; r == 0 && i < 2; i++)
		r = need(c, f[1].value, p, &ch[i]);
	if (r == 0)
		r = get_driver(c, ch[0].value, subpath(lp, p, "driver"), &b->dra_channel_driver);
	if (r == 0)
		r = get_string(c, ch[1].value, subpath(lp, p, "level"), &level);
	if (r < 0) {
		free(level);
		return r;
	}
	b->dra_channel_level = -1;
	for (size_t i = 0; i + 1 < b->nlevels; i++)
		if (strcmp(b->levels[i].name, level) == 0)
			b->dra_channel_level = (int)i;
	free(level);
	if (b->dra_channel_level < 0)
		return fail_at(c, ch[1].value, lp, "expected the name of a level above the host");
	return 0;
}

enum { S_DESC, S_ACCEL, S_HOST, S_TORUS, S_ICI, S_LEVELS, S_PATTERN, S_DRA, _S_MAX };

static int load_spec(struct ctx *c, struct topo_board *b, yaml_node_t *n)
{
	struct field f[_S_MAX] = {{"description"},     {"accelerator"}, {"host"},
				  {"torus"},	       {"ici"},		{"levels"},
				  {"hostnamePattern"}, {"dra"}};
	char err[TOPO_ERR_MAX];
	int r;

	r = map_fields(c, n, "spec", f, _S_MAX);
	if (r == 0)
		r = need(c, n, "spec", &f[S_ACCEL]);
	if (r == 0)
		r = need(c, n, "spec", &f[S_HOST]);
	if (r == 0)
		r = need(c, n, "spec", &f[S_LEVELS]);
	if (r == 0 && f[S_DESC].value)
		r = get_string(c, f[S_DESC].value, "spec.description", &b->description);
	if (r == 0)
		r = load_accelerator(c, b, f[S_ACCEL].value);
	if (r == 0)
		r = load_host(c, b, f[S_HOST].value);
	if (r == 0 && f[S_TORUS].value)
		r = load_torus(c, b, f[S_TORUS].value);
	if (r == 0 && f[S_ICI].value)
		r = load_ici(c, b, f[S_ICI].value);
	if (r == 0)
		r = load_levels(c, b, f[S_LEVELS].value);
	if (r == 0 && f[S_DRA].value)
		r = load_dra(c, b, f[S_DRA].value);
	if (r == 0 && f[S_PATTERN].value) {
		r = get_string(c, f[S_PATTERN].value, "spec.hostnamePattern", &b->hostname_pattern);
		if (r == 0)
			r = check_pattern(c, b, f[S_PATTERN].value);
	}
	if (r < 0)
		return r;
	r = topo__board_finish(b, err, sizeof(err));
	if (r < 0)
		return fail_at(c, f[S_LEVELS].value, "spec.levels", "%s", err);
	b->loaded = true; /* the accessors used by check_hosts need it */
	r = check_hosts(c, b, f[S_PATTERN].value ? f[S_PATTERN].value : f[S_LEVELS].value);
	b->loaded = false;
	return r;
}

static int load_root(struct ctx *c, struct topo_board *b, yaml_node_t *root)
{
	struct field f[] = {{"apiVersion"}, {"kind"}, {"metadata"}, {"spec"}};
	const char *s = NULL;
	int r;

	r = map_fields(c, root, NULL, f, 4);
	for (size_t i = 0; r == 0 && i < 4; i++)
		r = need(c, root, NULL, &f[i]);
	if (r == 0)
		r = scalar(c, f[0].value, "apiVersion", &s);
	if (r == 0 && strcmp(s, BOARD_API_VERSION) != 0)
		r = fail_at(c, f[0].value, "apiVersion",
			    "expected " BOARD_API_VERSION ", got \"%.64s\"", s);
	if (r == 0)
		r = scalar(c, f[1].value, "kind", &s);
	if (r == 0 && strcmp(s, BOARD_KIND) != 0)
		r = fail_at(c, f[1].value, "kind", "expected " BOARD_KIND ", got \"%.64s\"", s);
	if (r == 0)
		r = load_metadata(c, b, f[2].value);
	if (r == 0)
		r = load_spec(c, b, f[3].value);
	return r;
}

/*
 * libyaml's scanner takes time quadratic in the flow nesting depth ("[[[[..."),
 * so deep flow nesting is refused before libyaml sees the text.  The scan
 * skips comments and quoted scalars (a quote opens one only where a scalar can
 * start) and counts '[' and '{'; a bracket inside a plain scalar counts too,
 * which only makes the limit stricter for such odd files.
 */
static int check_flow_depth(struct ctx *c, const char *buf, size_t len)
{
	size_t line = 1, col = 1;
	int depth = 0;
	char quote = 0, prev = '\n';
	bool comment = false;

	for (size_t i = 0; i < len; i++, col++) {
		char ch = buf[i];

		if (ch == '\n') {
			line++;
			col = 0;
			comment = false;
			if (quote == 0) {
				prev = ch;
				continue;
			}
		}
		if (comment)
			continue;
		if (quote) {
			if (quote == '"' && ch == '\\')
				i++, col++;
			else if (ch == quote && quote == '\'' && i + 1 < len && buf[i + 1] == '\'')
				i++, col++;
			else if (ch == quote)
				quote = 0;
			prev = ch;
			continue;
		}
		if (ch == '#' && strchr(" \t\r\n", prev))
			comment = true;
		else if ((ch == '"' || ch == '\'') && strchr(" \t\r\n[{,", prev))
			quote = ch;
		else if ((ch == '[' || ch == '{') && ++depth > BOARD_MAX_FLOW_DEPTH) {
			if (c->err && c->errlen)
				snprintf(c->err, c->errlen,
					 "%s:%zu:%zu: nested deeper than %d levels", c->file, line,
					 col, BOARD_MAX_FLOW_DEPTH);
			return -EINVAL;
		} else if ((ch == ']' || ch == '}') && depth > 0)
			depth--;
		prev = ch;
	}
	return 0;
}

static int yaml_error(struct ctx *c, const yaml_parser_t *p)
{
	if (c->err && c->errlen)
		snprintf(c->err, c->errlen, "%s:%zu:%zu: %s%s%s", c->file, p->problem_mark.line + 1,
			 p->problem_mark.column + 1, p->problem ? p->problem : "YAML error",
			 p->context ? " " : "", p->context ? p->context : "");
	return -EINVAL;
}

int topo_board_load_buffer(struct topo_board *board, const char *name, const char *buf, size_t len,
			   char *err, size_t errlen)
{
	struct topo_board scratch = {.torus_level = -1};
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	struct ctx c = {.doc = &doc, .file = name ? name : "<board>", .err = err, .errlen = errlen};
	yaml_node_t *root;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!board || (!buf && len))
		return -EINVAL;
	if (board->loaded)
		return -EBUSY;
	if (len > BOARD_MAX_BYTES)
		return fail_at(&c, NULL, NULL, "larger than %d bytes", BOARD_MAX_BYTES);
	r = check_flow_depth(&c, buf, len);
	if (r < 0)
		return r;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)(buf ? buf : ""), len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = yaml_error(&c, &parser);
		yaml_parser_delete(&parser);
		return r;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		r = fail_at(&c, NULL, NULL, "empty file: expected a Board");
		goto out_doc;
	}
	/* One document only: a second one would be silently ignored otherwise. */
	if (!yaml_parser_load(&parser, &extra)) {
		r = yaml_error(&c, &parser);
		goto out_doc;
	}
	if (yaml_document_get_root_node(&extra)) {
		r = fail_at(&c, yaml_document_get_root_node(&extra), NULL,
			    "a board file holds one document");
		yaml_document_delete(&extra);
		goto out_doc;
	}
	yaml_document_delete(&extra);
	r = load_root(&c, &scratch, root);
	if (r == -ENOMEM)
		fail_at(&c, NULL, NULL, "out of memory");
	if (r == 0) {
		topo__board_reset(board);
		*board = scratch;
		board->loaded = true;
		scratch = (struct topo_board){0};
	}
out_doc:
	topo__board_reset(&scratch);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int topo_board_load_file(struct topo_board *board, const char *path, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd, r;

	if (!board || !path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0)
		st.st_mode = 0;
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	if (st.st_size > BOARD_MAX_BYTES) {
		snprintf(err, errlen, "%s:1:1: larger than %d bytes", path, BOARD_MAX_BYTES);
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (got != (size_t)st.st_size) {
		snprintf(err, errlen, "%s: %s", path, strerror(EIO));
		free(buf);
		return -EIO;
	}
	r = topo_board_load_buffer(board, path, buf, got, err, errlen);
	free(buf);
	return r;
}
