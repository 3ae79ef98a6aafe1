/* SPDX-License-Identifier: Apache-2.0 */
/*
 * share.c — consumable capacity (KEP-5075, resource.k8s.io/v1): devices
 * with allowMultipleAllocations shared by several allocations while their
 * capacity lasts.
 *
 * A request's capacity.requests[name] is rounded up by the capacity's
 * requestPolicy as upstream's allocator does: validRange raises it to min,
 * then to the next min + k*step, and refuses more than max; validValues
 * takes the smallest listed value at least as large, and refuses more than
 * the largest.  A capacity the request does not name consumes the policy's
 * default, or without one the whole capacity.  A shared device serves a
 * request when every amount fits what its committed shares (and the picks
 * of the search under way) leave; a device allocated whole only checks that
 * each requested amount fits its capacity.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/dra/dra-internal.h"
#include "topology/topology.h"

static bool milli_of(const json_t *v, int64_t *ret)
{
	if (json_is_integer(v) && json_integer_value(v) >= -INT64_MAX / 1000 &&
	    json_integer_value(v) <= INT64_MAX / 1000) {
		*ret = json_integer_value(v) * 1000;
		return true;
	}
	return json_is_string(v) && topo_quantity_parse(json_string_value(v), ret) == 0;
}

void dra_read_policy(struct dra_policy *p, const char *key, int64_t value, const json_t *cap)
{
	json_t *rp = json_object_get(cap, "requestPolicy"), *range, *vals, *x;
	size_t i;

	const char *text = pk_get_string(cap, "value");

	*p = (struct dra_policy){.key = key, .value = value};
	p->fmt = text ? (int)topo_quantity_format_of(text) : TOPO_QUANTITY_DECIMAL_SI;
	p->has_default = milli_of(json_object_get(rp, "default"), &p->def);
	range = json_object_get(rp, "validRange");
	if (json_is_object(range) && milli_of(json_object_get(range, "min"), &p->min)) {
		p->has_range = true;
		p->has_max = milli_of(json_object_get(range, "max"), &p->max);
		if (!milli_of(json_object_get(range, "step"), &p->step) || p->step < 0)
			p->step = 0;
	}
	vals = json_object_get(rp, "validValues");
	json_array_foreach(vals, i, x)
	{
		if (p->nvalues < DRA_MAX_VALID_VALUES && milli_of(x, &p->values[p->nvalues]))
			p->nvalues++;
	}
	p->has_values = p->nvalues > 0;
}

/* The amount a request for want is rounded up to; false when the policy refuses it. */
static bool round_up(const struct dra_policy *p, int64_t want, int64_t *ret)
{
	if (p->has_range) {
		if (want < p->min) {
			want = p->min;
		} else if (p->step > 0) {
			int64_t k = (want - p->min) / p->step + ((want - p->min) % p->step != 0);

			if (k > (INT64_MAX - p->min) / p->step)
				return false;
			want = p->min + k * p->step;
		}
		if (p->has_max && want > p->max)
			return false;
	} else if (p->has_values) {
		size_t i = 0;

		while (i < p->nvalues && p->values[i] < want)
			i++;
		if (i == p->nvalues)
			return false;
		want = p->values[i];
	}
	*ret = want;
	return want <= p->value;
}

/* The capacity of d a request's name (qualified, or in the driver's domain) means. */
static int cap_index(const struct dra_device *d, const char *name)
{
	const char *slash = strchr(name, '/');
	size_t dl = slash ? (size_t)(slash - name) : 0;

	for (size_t i = 0; i < d->cel.ncaps; i++) {
		const struct cel_capacity *c = &d->caps[i];

		if (slash ? strlen(c->domain) == dl && strncmp(c->domain, name, dl) == 0 &&
				strcmp(c->name, slash + 1) == 0
			  : strcmp(c->domain, d->driver) == 0 && strcmp(c->name, name) == 0)
			return (int)i;
	}
	return -1;
}

bool dra_consumption(const struct dra_device *d, const struct dra_cap_req *q, int64_t *ret)
{
	for (size_t i = 0; i < d->cel.ncaps; i++) {
		const struct dra_policy *p = &d->pol[i];

		ret[i] = p->has_default ? p->def : p->value;
	}
	for (size_t j = 0; q && j < q->n; j++) {
		int c = cap_index(d, q->name[j]);

		if (c < 0 || !round_up(&d->pol[c], q->milli[j], &ret[c]))
			return false;
	}
	return true;
}

/* Add up what the shares of device d consume. */
static void add_shares(struct dra_device *d, json_t *shares)
{
	const char *id, *name;
	json_t *share, *v;

	json_object_foreach(shares, id, share)
	{
		json_object_foreach(share, name, v)
		{
			int c = cap_index(d, name);
			int64_t m;

			if (c < 0) {
				for (size_t k = 0; k < d->cel.ncaps && c < 0; k++)
					if (strcmp(d->pol[k].key, name) == 0)
						c = (int)k;
			}
			if (c >= 0 && milli_of(v, &m) && m > 0 && d->consumed[c] <= INT64_MAX - m)
				d->consumed[c] += m;
		}
	}
}

/* Does a request naming no capacity fit what d's shares leave? */
static bool default_fits(const struct dra_device *d)
{
	int64_t cons[DRA_MAX_CAP_REQ];

	if (d->cel.ncaps > DRA_MAX_CAP_REQ || !dra_consumption(d, NULL, cons))
		return false;
	for (size_t c = 0; c < d->cel.ncaps; c++)
		if (cons[c] > d->pol[c].value - d->consumed[c])
			return false;
	return true;
}

void dra_recount(struct dra_state *st, size_t i)
{
	struct dra_device *d = &st->devs[i];
	json_t *shares = json_object_get(st->used, d->key);

	memset(d->consumed, 0, d->cel.ncaps * sizeof(*d->consumed));
	if (json_is_object(shares))
		add_shares(d, shares);
	if (d->multi && st->inuse)
		st->inuse[i] =
		    (uint8_t)((st->inuse[i] & DRA_WHOLE) | (default_fits(d) ? 0 : DRA_NO_DEFAULT));
}

/* A UUID-shaped ID from a 64-bit sequence number, unique per device. */
void dra_share_id(struct dra_state *st, const char *k, char buf[37])
{
	json_t *shares = json_object_get(st->used, k);

	do {
		uint64_t n = ++st->share_seq, h = 14695981039346656037ULL;

		for (const char *c = k; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		snprintf(buf, 37, "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)(h >> 32),
			 (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xfff,
			 (unsigned)(n >> 48) & 0xfff, (unsigned long long)(n & 0xffffffffffffULL));
	} while (json_object_get(shares, buf));
}
