/* SPDX-License-Identifier: Apache-2.0 */
/*
 * torus.c — geometry of 3-D chip tori.
 *
 * A shape is the size of a box of chips along x, y and z ("4x4x4"); a
 * coordinate is a chip position in it.  Chips are numbered row-major with x
 * fastest, so an index and a coordinate convert with a few divisions.
 * Neighbours follow the ICI links of a torus: one per direction per axis,
 * wrapping at the edges when the torus has wraparound links.  A dimension of
 * size 2 wraps onto the same chip in both directions and a dimension of size 1
 * has no link at all, so both are special-cased to avoid duplicate or self
 * neighbours.  Sub-cuboid enumeration walks the origins of every box of one
 * shape inside another, the search space of topology-aware placement.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "topology/topology.h"

/* Largest accepted size of one axis; keeps volumes far from int64 overflow. */
#define TOPO_DIM_MAX 65536

int topo_shape_parse(const char *s, struct topo_shape *ret_shape)
{
	struct topo_shape shape;
	const char *p = s;

	if (!s || !ret_shape)
		return -EINVAL;
	for (int i = 0; i < TOPO_DIMS; i++) {
		long v = 0;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			v = v * 10 + (*p - '0');
			if (v > TOPO_DIM_MAX)
				return -EINVAL;
		}
		if (v < 1)
			return -EINVAL;
		shape.dim[i] = (int)v;
		if (i + 1 < TOPO_DIMS && *p++ != 'x')
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	*ret_shape = shape;
	return 0;
}

int topo_shape_format(const struct topo_shape *shape, char *buf, size_t len)
{
	int n;

	if (!shape || !buf)
		return -EINVAL;
	n = snprintf(buf, len, "%dx%dx%d", shape->dim[0], shape->dim[1], shape->dim[2]);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

int64_t topo_shape_volume(const struct topo_shape *shape)
{
	int64_t v = 1;

	for (int i = 0; i < TOPO_DIMS; i++)
		v *= shape->dim[i];
	return v;
}

bool topo_shape_divides(const struct topo_shape *inner, const struct topo_shape *outer)
{
	for (int i = 0; i < TOPO_DIMS; i++)
		if (inner->dim[i] < 1 || outer->dim[i] % inner->dim[i] != 0)
			return false;
	return true;
}

int64_t topo_coord_index(const struct topo_shape *shape, const struct topo_coord *c)
{
	return c->c[0] + (int64_t)shape->dim[0] * (c->c[1] + (int64_t)shape->dim[1] * c->c[2]);
}

void topo_coord_of_index(const struct topo_shape *shape, int64_t index, struct topo_coord *ret)
{
	for (int i = 0; i < TOPO_DIMS; i++) {
		ret->c[i] = (int)(index % shape->dim[i]);
		index /= shape->dim[i];
	}
}

bool topo_coord_in(const struct topo_shape *shape, const struct topo_coord *c)
{
	for (int i = 0; i < TOPO_DIMS; i++)
		if (c->c[i] < 0 || c->c[i] >= shape->dim[i])
			return false;
	return true;
}

int topo_torus_neighbors(const struct topo_shape *shape, bool wrap, const struct topo_coord *c,
			 struct topo_coord ret[2 * TOPO_DIMS])
{
	int n = 0;

	for (int axis = 0; axis < TOPO_DIMS; axis++) {
		int size = shape->dim[axis];

		if (size < 2)
			continue;
		for (int dir = -1; dir <= 1; dir += 2) {
			int v = c->c[axis] + dir;

			if (v < 0 || v >= size) {
				if (!wrap)
					continue;
				v = (v + size) % size;
			}
			/* Size 2 with wraparound: both directions reach one chip. */
			if (wrap && size == 2 && dir == 1)
				continue;
			ret[n] = *c;
			ret[n].c[axis] = v;
			n++;
		}
	}
	return n;
}

void topo_coord_block(const struct topo_coord *c, const struct topo_shape *block,
		      struct topo_coord *ret)
{
	for (int i = 0; i < TOPO_DIMS; i++)
		ret->c[i] = c->c[i] / block->dim[i];
}

int topo_subcuboids_foreach(const struct topo_shape *outer, const struct topo_shape *sub,
			    const struct topo_shape *stride,
			    int (*fn)(const struct topo_coord *origin, void *arg), void *arg)
{
	struct topo_coord o;

	if (!outer || !sub || !stride || !fn)
		return -EINVAL;
	for (int i = 0; i < TOPO_DIMS; i++)
		if (sub->dim[i] < 1 || stride->dim[i] < 1 || sub->dim[i] > outer->dim[i])
			return -EINVAL;
	for (o.c[2] = 0; o.c[2] + sub->dim[2] <= outer->dim[2]; o.c[2] += stride->dim[2])
		for (o.c[1] = 0; o.c[1] + sub->dim[1] <= outer->dim[1]; o.c[1] += stride->dim[1])
			for (o.c[0] = 0; o.c[0] + sub->dim[0] <= outer->dim[0];
			     o.c[0] += stride->dim[0]) {
				int r = fn(&o, arg);

				if (r)
					return r;
			}
	return 0;
}
