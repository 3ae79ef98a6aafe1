/* SPDX-License-Identifier: Apache-2.0 */
/*
 * map.c — `podctl map`: the placement map of /ui/api/placement in a
 * terminal, for people on SSH.
 *
 * The server's document already says where each host is drawn (cube grid
 * positions, host cells inside a cube), so this file only paints: each
 * domain (superslice or block) becomes a block of text, one cube per tile
 * with thin lines between tiles, each host two columns wide (terminal cells
 * are about twice as tall as wide; the blank cells between torus z layers
 * are one column wide).  Busy hosts are full
 * blocks coloured by their gang (256-colour ANSI, the hue from the root
 * gang's name and the shade from the sub-group's, as the page does), free
 * hosts light shade, cordoned medium shade, unreachable a cross.  Domain
 * blocks sit side by side as the width allows; after them come the gangs
 * holding hosts, the pending gangs with their reasons and the largest free
 * box or domain of each domain.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/api/api.h"
#include "kernel/lib/hash.h"
#include "kernel/podctl/podctl.h"

#define MAP_MAX_ONLY 32
#define MAP_MAX_CELLS (1 << 22)

struct map_opts {
	bool color;
	int width;
	const char *only[MAP_MAX_ONLY];
	size_t nonly;
};

/* One painted cell: a glyph (UTF-8, one column) and a 256-colour index or -1. */
struct cell {
	const char *glyph;
	int color;
};

/* A domain painted: rows of text with their display width. */
struct block {
	char **lines;
	int *widths; /* display columns of each line */
	size_t nlines;
	int width;
};

/*
 * Without colour, a busy host is drawn with its gang's symbol instead of a
 * solid block, so neighbouring gangs stay apart and the legend names them:
 * the gangs holding hosts take A-Z, a-z, 0-9 in the legend's order, and any
 * beyond those 62 share '#'.
 */
static const char GANG_SYMBOLS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
#define GANG_SYMBOL_MAX (sizeof(GANG_SYMBOLS) - 1)
static char gang_glyphs[GANG_SYMBOL_MAX + 1][2];

/* Per group index: its root's symbol (a one-character string), or NULL. */
static const char **gang_symbols(const json_t *groups, const json_int_t *hosts)
{
	size_t n = json_array_size(groups), next = 0, i;
	const char **sym = calloc(n + 1, sizeof(*sym));
	const json_t *g;

	if (!sym)
		return NULL;
	for (i = 0; i <= GANG_SYMBOL_MAX; i++) {
		gang_glyphs[i][0] = i < GANG_SYMBOL_MAX ? GANG_SYMBOLS[i] : '#';
		gang_glyphs[i][1] = '\0';
	}
	for (i = 0; i < n; i++)
		if (json_integer_value(json_object_get(json_array_get(groups, i), "root")) ==
			(json_int_t)i &&
		    hosts[i]) {
			sym[i] = gang_glyphs[next];
			next += next < GANG_SYMBOL_MAX;
		}
	json_array_foreach(groups, i, g)
	{
		json_int_t root = json_integer_value(json_object_get(g, "root"));
		if (root >= 0 && (size_t)root < n)
			sym[i] = sym[root];
	}
	return sym;
}

/* Hosts held per root gang (index of the root in groups). */
static json_int_t *root_hosts(const json_t *groups)
{
	json_int_t *hosts = calloc(json_array_size(groups) + 1, sizeof(*hosts));
	const json_t *g;
	size_t i;

	if (!hosts)
		return NULL;
	json_array_foreach(groups, i, g)
	{
		json_int_t root = json_integer_value(json_object_get(g, "root"));
		if (root >= 0 && (size_t)root < json_array_size(groups))
			hosts[root] += json_integer_value(json_object_get(g, "hosts"));
	}
	return hosts;
}

static const char GLYPH_BUSY[] = "\u2588", GLYPH_FREE[] = "\u2591", GLYPH_CORDONED[] = "\u2592",
		  GLYPH_UNREACHABLE[] = "\u2573";

/* ---- colours (the page's rule, map.js groupColor) ---------------------------------------- */

static int ansi_of_hsl(double hue, double sat, double light)
{
	double c = (1 - fabs(2 * light - 1)) * sat, hp = hue / 60.0;
	double x = c * (1 - fabs(fmod(hp, 2) - 1)), m = light - c / 2, rgb[3] = {0};
	int i = (int)hp % 6, idx[3];

	static const int pick[6][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1},
				       {2, 1, 0}, {1, 2, 0}, {0, 2, 1}};
	/* pick[i]: which of (c, x, 0) goes to r, g, b */
	double v[3] = {c, x, 0};

	for (int k = 0; k < 3; k++)
		rgb[k] = v[pick[i][k]] + m;
	for (int k = 0; k < 3; k++)
		idx[k] = (int)lround(rgb[k] * 5);
	return 16 + 36 * idx[0] + 6 * idx[1] + idx[2];
}

static int group_color(const json_t *groups, json_int_t id)
{
	const json_t *g = json_array_get(groups, (size_t)id);
	const json_t *root =
	    json_array_get(groups, (size_t)json_integer_value(json_object_get(g, "root")));
	char key[512];
	double hue, light;

	if (!g)
		return -1;
	if (!root)
		root = g;
	snprintf(key, sizeof(key), "%s/%s", json_string_value(json_object_get(root, "namespace")),
		 json_string_value(json_object_get(root, "name")));
	hue = fmod((double)pk_fnv1a32(key) * 137.508, 360.0);
	light =
	    root == g
		? 0.48
		: 0.34 + (double)(pk_fnv1a32(json_string_value(json_object_get(g, "name"))) % 5) *
			     0.07;
	return ansi_of_hsl(hue, 0.62, light);
}

/* ---- painting a domain ------------------------------------------------------------------------
 */

static int block_add(struct block *b, const char *text, int width)
{
	char **l = realloc(b->lines, (b->nlines + 1) * sizeof(*l));
	int *w;

	if (!l)
		return -ENOMEM;
	b->lines = l;
	w = realloc(b->widths, (b->nlines + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	b->widths = w;
	b->widths[b->nlines] = width;
	b->lines[b->nlines] = strdup(text);
	if (!b->lines[b->nlines])
		return -ENOMEM;
	b->nlines++;
	b->width = width > b->width ? width : b->width;
	return 0;
}

static void block_clear(struct block *b)
{
	for (size_t i = 0; i < b->nlines; i++)
		free(b->lines[i]);
	free(b->lines);
	free(b->widths);
	memset(b, 0, sizeof(*b));
}

static int integer(const json_t *o, const char *path)
{
	return (int)json_integer_value(pk_get(o, path));
}

/* Host h at text column X (two columns wide) and row y. */
static void paint_host(struct cell *cells, int W, int X, int y, const json_t *h,
		       const json_t *groups, const char **sym)
{
	const char *state = json_string_value(json_object_get(h, "state"));
	const json_t *gid = json_object_get(h, "group");
	struct cell c = {GLYPH_FREE, -1};

	if (state && strcmp(state, "busy") == 0)
		c = (struct cell){GLYPH_BUSY,
				  gid ? group_color(groups, json_integer_value(gid)) : 244};
	if (c.glyph == GLYPH_BUSY && sym && gid && json_integer_value(gid) >= 0 &&
	    (size_t)json_integer_value(gid) < json_array_size(groups) &&
	    sym[json_integer_value(gid)])
		c.glyph = sym[json_integer_value(gid)];
	else if (state && strcmp(state, "cordoned") == 0)
		c = (struct cell){GLYPH_CORDONED, 245};
	else if (state && strcmp(state, "unreachable") == 0)
		c = (struct cell){GLYPH_UNREACHABLE, 160};
	cells[y * W + X] = c;
	cells[y * W + X + 1] = c;
}

/* One text row of cells (ANSI colour only where it changes). */
static int row_text(const struct cell *row, int W, bool color, struct block *b)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int cur = -1, r;

	if (!f)
		return -ENOMEM;
	for (int x = 0; x < W; x++) {
		int want = row[x].glyph ? row[x].color : -1;

		if (color && want != cur) {
			if (want < 0)
				fputs("\033[0m", f);
			else
				fprintf(f, "\033[38;5;%dm", want);
			cur = want;
		}
		fputs(row[x].glyph ? row[x].glyph : " ", f);
	}
	if (color && cur >= 0)
		fputs("\033[0m", f);
	fclose(f);
	r = text ? block_add(b, text, W) : -ENOMEM;
	free(text);
	return r;
}

/*
 * Text columns of one cube: a column no host uses (the blank cell between
 * torus z layers) is one character wide, the others two.  ret_x[i] is the
 * offset of cell column i; returns the cube's width.
 */
static int cube_columns(const json_t *dom, int cw, int *ret_x)
{
	bool *used = calloc((size_t)cw + 1, sizeof(*used));
	const json_t *c, *h;
	size_t i, j;
	int x = 0;

	if (!used)
		return -ENOMEM;
	json_array_foreach(json_object_get(dom, "cubes"), i, c)
	    json_array_foreach(json_object_get(c, "hosts"), j, h)
	{
		int hx = integer(h, "x");

		if (hx >= 0 && hx < cw)
			used[hx] = true;
	}
	for (int k = 0; k < cw; k++) {
		ret_x[k] = x;
		x += used[k] ? 2 : 1;
	}
	free(used);
	return x;
}

/* Lines between cubes: " │ " between columns, "─" (with "┼") between rows. */
static void paint_frame(struct cell *cells, int W, int H, int tw, int ch)
{
	for (int y = 0; y < H; y++)
		for (int X = 0; X < W; X++) {
			bool vline = (X % (tw + 3)) == tw + 1, hline = (y % (ch + 1)) == ch;

			if (vline || hline)
				cells[y * W + X] = (struct cell){vline && hline ? "\u253c"
								 : vline	? "\u2502"
										: "\u2500",
								 240};
		}
}

/* sym: the gangs' symbols when drawing without colour (NULL with colour). */
static int paint_domain(const json_t *dom, const json_t *groups, bool color, const char **sym,
			struct block *b)
{
	int cw = integer(dom, "cubeSize.cols"), ch = integer(dom, "cubeSize.rows");
	int gc = integer(dom, "grid.cols"), gr = integer(dom, "grid.rows"), tw, W, H;
	const json_t *c, *h, *lf = json_object_get(dom, "largestFree");
	struct cell *cells;
	int *colx;
	char line[512];
	size_t i, j;
	int r = 0;

	/* a hostile document must not make us allocate without bound */
	if (cw <= 0 || ch <= 0 || gc <= 0 || gr <= 0 || cw > MAP_MAX_CELLS || ch > MAP_MAX_CELLS ||
	    (long long)cw * ch > MAP_MAX_CELLS || (long long)gc * gr > MAP_MAX_CELLS ||
	    (long long)cw * ch * gc * gr > MAP_MAX_CELLS)
		return -E2BIG;
	colx = calloc((size_t)cw, sizeof(*colx));
	if (!colx)
		return -ENOMEM;
	tw = cube_columns(dom, cw, colx);
	W = gc * (tw + 3) - 3;
	H = gr * (ch + 1) - 1;
	cells = tw > 0 ? calloc((size_t)W * (size_t)H, sizeof(*cells)) : NULL;
	if (!cells) {
		free(colx);
		return -ENOMEM;
	}
	paint_frame(cells, W, H, tw, ch);
	json_array_foreach(json_object_get(dom, "cubes"), i, c)
	{
		int ox = integer(c, "col") * (tw + 3), oy = integer(c, "row") * (ch + 1);

		json_array_foreach(json_object_get(c, "hosts"), j, h)
		{
			int x = integer(h, "x"), y = oy + integer(h, "y");

			if (x >= 0 && x < cw && ox + colx[x] + 1 < W && y >= 0 && y < H)
				paint_host(cells, W, ox + colx[x], y, h, groups, sym);
		}
	}
	snprintf(line, sizeof(line), "%s  %d hosts: %d busy, %d free, %d cordoned, %d unreachable",
		 json_string_value(json_object_get(dom, "name")), integer(dom, "counts.hosts"),
		 integer(dom, "counts.busy"), integer(dom, "counts.free"),
		 integer(dom, "counts.cordoned"), integer(dom, "counts.unreachable"));
	r = block_add(b, line, (int)strlen(line));
	for (int y = 0; r == 0 && y < H; y++)
		r = row_text(cells + (size_t)y * (size_t)W, W, color, b);
	if (r == 0 && json_is_integer(json_object_get(lf, "hosts"))) {
		const char *shape = json_string_value(json_object_get(lf, "shape"));
		const char *cube = json_string_value(json_object_get(lf, "cube"));

		snprintf(line, sizeof(line), "largest free: %d hosts%s%s%s, %d free cubes",
			 integer(lf, "hosts"), shape || cube ? " in " : "",
			 shape	? shape
			 : cube ? cube
				: "",
			 shape ? " chips" : "", integer(lf, "freeCubes"));
		r = block_add(b, line, (int)strlen(line));
	}
	free(cells);
	free(colx);
	return r;
}

/* ---- output -----------------------------------------------------------------------------------
 */

/* Blocks side by side, as many as fit in width, two spaces apart. */
static void print_blocks(struct block *bs, size_t n, int width)
{
	for (size_t first = 0; first < n;) {
		size_t last = first + 1;
		int used = bs[first].width;

		while (last < n && used + 2 + bs[last].width <= width)
			used += 2 + bs[last++].width;
		size_t rows = 0;

		for (size_t k = first; k < last; k++)
			rows = bs[k].nlines > rows ? bs[k].nlines : rows;
		for (size_t y = 0; y < rows; y++) {
			int pad = 0;

			for (size_t k = first; k < last; k++) {
				printf("%*s", pad, "");
				if (y < bs[k].nlines) {
					fputs(bs[k].lines[y], stdout);
					pad = bs[k].width - bs[k].widths[y] + 2;
				} else {
					pad = bs[k].width + 2;
				}
			}
			putchar('\n');
		}
		putchar('\n');
		first = last;
	}
}

static void print_gangs(const json_t *doc, bool color, const json_int_t *hosts, const char **sym)
{
	const json_t *groups = json_object_get(doc, "groups"), *g, *p;
	size_t i;

	if (!hosts)
		return;
	printf("%s busy (by gang)  %s free  %s cordoned  %s unreachable\n",
	       color || !sym ? GLYPH_BUSY : "A-Z", GLYPH_FREE, GLYPH_CORDONED, GLYPH_UNREACHABLE);
	json_array_foreach(groups, i, g)
	{
		if (json_integer_value(json_object_get(g, "root")) != (json_int_t)i || !hosts[i])
			continue;
		if (color)
			printf("\033[38;5;%dm%s%s\033[0m", group_color(groups, (json_int_t)i),
			       GLYPH_BUSY, GLYPH_BUSY);
		else
			printf("%s%s", sym && sym[i] ? sym[i] : GLYPH_BUSY,
			       sym && sym[i] ? sym[i] : GLYPH_BUSY);
		printf(" %s %s/%s: %lld hosts\n", json_string_value(json_object_get(g, "kind")),
		       json_string_value(json_object_get(g, "namespace")),
		       json_string_value(json_object_get(g, "name")), (long long)hosts[i]);
	}
	if (json_array_size(json_object_get(doc, "pending")) == 0)
		return;
	printf("\nPending gangs:\n");
	json_array_foreach(json_object_get(doc, "pending"), i, p)
	{
		g = json_array_get(groups, (size_t)json_integer_value(p));
		const char *reason = json_string_value(json_object_get(g, "reason"));
		const char *msg = json_string_value(json_object_get(g, "message"));
		size_t rl = reason ? strlen(reason) : 0;

		/* a message that already opens with its reason is not prefixed twice */
		if (reason && msg && strncmp(msg, reason, rl) == 0 && msg[rl] == ':')
			reason = NULL;

		printf("  %s %s/%s (%d/%d pods bound): %s%s%s\n",
		       json_string_value(json_object_get(g, "kind")),
		       json_string_value(json_object_get(g, "namespace")),
		       json_string_value(json_object_get(g, "name")), integer(g, "boundPods"),
		       integer(g, "pods"),
		       reason ? reason
		       : msg  ? ""
			      : "waiting",
		       reason && msg ? ": " : "", msg ? msg : "");
	}
}

/* Queued workloads not admitted yet: position in their ClusterQueue, LocalQueue, why they wait. */
static void print_queued(const json_t *doc)
{
	size_t i;
	json_t *q;

	if (json_array_size(json_object_get(doc, "queued")) == 0)
		return;
	printf("\nQueued workloads:\n");
	json_array_foreach(json_object_get(doc, "queued"), i, q)
	{
		const json_t *pos = json_object_get(q, "position");
		const char *reason = json_string_value(json_object_get(q, "reason"));

		printf("  ");
		if (json_is_integer(pos))
			printf("#%lld ", (long long)json_integer_value(pos));
		printf("%s %s/%s in %s, waits on %s: %s\n",
		       json_string_value(json_object_get(q, "kind")),
		       json_string_value(json_object_get(q, "namespace")),
		       json_string_value(json_object_get(q, "name")),
		       json_string_value(json_object_get(q, "localQueue")),
		       json_string_value(json_object_get(q, "wait")),
		       reason ? reason : "not considered yet");
	}
}

static int parse_map_opts(int argc, char **argv, struct map_opts *o)
{
	const char *color = "auto", *cols = getenv("COLUMNS");

	o->width = cols && atoi(cols) > 0 ? atoi(cols) : 120;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--color") == 0 && i + 1 < argc)
			color = argv[++i];
		else if (strncmp(a, "--color=", 8) == 0)
			color = a + 8;
		else if ((strcmp(a, "--width") == 0 || strcmp(a, "-w") == 0) && i + 1 < argc)
			o->width = atoi(argv[++i]);
		else if (strncmp(a, "--width=", 8) == 0)
			o->width = atoi(a + 8);
		else if (a[0] != '-' && o->nonly < MAP_MAX_ONLY)
			o->only[o->nonly++] = a;
		else {
			fprintf(stderr,
				"podctl map: unexpected argument '%s'\n"
				"usage: podctl map [--color auto|always|never] [--width N] "
				"[DOMAIN...]\n",
				a);
			return PODCTL_EXIT_USAGE;
		}
	}
	if (strcmp(color, "always") == 0)
		o->color = true;
	else if (strcmp(color, "auto") == 0)
		o->color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	else if (strcmp(color, "never") != 0) {
		fprintf(stderr, "podctl map: --color %s: expected auto, always or never\n", color);
		return PODCTL_EXIT_USAGE;
	}
	if (o->width < 1) {
		fprintf(stderr, "podctl map: --width: expected a positive number of columns\n");
		return PODCTL_EXIT_USAGE;
	}
	return 0;
}

static bool wanted(const struct map_opts *o, const char *name)
{
	if (!o->nonly)
		return true;
	for (size_t i = 0; i < o->nonly; i++)
		if (name && strcmp(o->only[i], name) == 0)
			return true;
	return false;
}

int podctl_map(const struct podctl_globals *g, int argc, char **argv)
{
	struct map_opts o = {0};
	json_t *doc = NULL, *d;
	struct block *bs;
	size_t i, n = 0;
	int r = parse_map_opts(argc, argv, &o);

	if (r)
		return r;
	r = podctl_get_json(g, "/ui/api/placement", "placement map", &doc);
	if (r)
		return r;
	const json_t *groups = json_object_get(doc, "groups");
	json_int_t *hosts = root_hosts(groups);
	const char **sym = hosts && !o.color ? gang_symbols(groups, hosts) : NULL;
	bs = calloc(json_array_size(json_object_get(doc, "domains")) + 1, sizeof(*bs));
	if (!bs || !hosts || (!o.color && !sym)) {
		free(bs);
		free(hosts);
		free(sym);
		json_decref(doc);
		return PODCTL_EXIT_FAILURE;
	}
	json_array_foreach(json_object_get(doc, "domains"), i, d)
	{
		if (!wanted(&o, json_string_value(json_object_get(d, "name"))))
			continue;
		if (paint_domain(d, groups, o.color, sym, &bs[n++]) < 0) {
			fprintf(stderr, "podctl map: domain %s: too large to paint\n",
				json_string_value(json_object_get(d, "name")));
			r = PODCTL_EXIT_FAILURE;
		}
	}
	print_blocks(bs, n, o.width);
	/* the headline: accelerators allocated, where the hosts have any */
	if (integer(doc, "summary.accelerators") > 0)
		printf("cluster: %d of %d accelerators allocated (%.0f%%)\n",
		       integer(doc, "summary.acceleratorsAllocated"),
		       integer(doc, "summary.accelerators"),
		       100 * json_number_value(pk_get(doc, "summary.acceleratorShare")));
	printf(
	    "cluster: %d hosts: %d busy, %d free, %d cordoned, %d unreachable; %d/%d pods bound\n",
	    integer(doc, "summary.hosts"), integer(doc, "summary.busy"),
	    integer(doc, "summary.free"), integer(doc, "summary.cordoned"),
	    integer(doc, "summary.unreachable"), integer(doc, "summary.boundPods"),
	    integer(doc, "summary.pods"));
	print_gangs(doc, o.color, hosts, sym);
	print_queued(doc);
	for (i = 0; i < n; i++)
		block_clear(&bs[i]);
	free(bs);
	free(hosts);
	free(sym);
	json_decref(doc);
	return r;
}
