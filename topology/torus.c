/* SPDX-License-Identifier: Apache-2.0 */
/*
 * torus.c — geometry of 3-D chip tori.
 *
 * A shape is the size of a box of chips along x, y and z ("4x4x4"); a
 * coordinate is a chip position in it.  Chips are numbered row-major with x
 * fastest, so an index and a coordinate convert with a few divisions.
 * A slice (a box of chips a job asks for) may be laid out along the torus
 * axes in any of the permutations of its extents that tile into whole hosts;
 * the distinct ones are the rotations slice placement searches (with
 * occupancy.c, which knows which hosts are free).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void topo_coord_block(const struct topo_coord *c, const struct topo_shape *block,
		      struct topo_coord *ret)
{
	for (int i = 0; i < TOPO_DIMS; i++)
		ret->c[i] = c->c[i] / block->dim[i];
}

/* The 6 permutations of three axes, identity first. */
static const int perms[6][TOPO_DIMS] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
					{1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

int topo_slice_rotations(const struct topo_shape *slice, const struct topo_shape *host,
			 const struct topo_shape *torus, struct topo_rotation ret[6])
{
	int n = 0;

	for (int p = 0; p < 6; p++) {
		struct topo_rotation r;
		bool ok = true, dup = false;

		for (int a = 0; a < TOPO_DIMS; a++) {
			r.axis[a] = perms[p][a];
			r.ext.dim[a] = slice->dim[perms[p][a]];
			ok =
			    ok && r.ext.dim[a] <= torus->dim[a] && r.ext.dim[a] % host->dim[a] == 0;
		}
		for (int k = 0; ok && k < n; k++)
			dup = dup || memcmp(&ret[k].ext, &r.ext, sizeof(r.ext)) == 0;
		if (ok && !dup)
			ret[n++] = r;
	}
	return n;
}
