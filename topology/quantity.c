/* SPDX-License-Identifier: Apache-2.0 */
/*
 * quantity.c — Kubernetes resource quantities as exact int64 milli-units.
 *
 * Parsing follows k8s.io/apimachinery/pkg/api/resource: an optional sign,
 * digits with an optional fraction, then a suffix: decimal SI (n u m "" k M G T
 * P E), binary SI (Ki Mi Gi Ti Pi Ei) or a decimal exponent (e3, E-2).  To stay
 * exact whatever the digits, the mantissa is kept as a decimal digit string: a
 * binary suffix multiplies that string by 1024 per step, a decimal suffix or
 * exponent just moves the decimal point.  The integer part then must fit an
 * int64 (else -ERANGE) and any non-zero fraction rounds away from zero, as
 * Kubernetes' MilliValue() does.
 *
 * Formatting writes the canonical form: the largest SI suffix (or, when asked
 * and exact, binary suffix) that keeps the number an integer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "topology/topology.h"

/* Longest quantity text accepted; longer input is -EINVAL (hostile input). */
#define QUANTITY_MAX_LEN 128
/* Exponents beyond this make any non-zero mantissa overflow or vanish. */
#define EXPONENT_CLAMP 400
/* Digits: input digits plus growth of six multiplications by 1024. */
#define DIGITS_MAX (QUANTITY_MAX_LEN + 32)

struct suffix {
	const char *text;
	int exp10;   /* decimal exponent of the suffix */
	int pow1024; /* binary exponent (power of 1024) */
};

/* One table for parser and printer (longest match first for binary). */
static const struct suffix suffixes[] = {
    {"Ki", 0, 1}, {"Mi", 0, 2}, {"Gi", 0, 3}, {"Ti", 0, 4}, {"Pi", 0, 5}, {"Ei", 0, 6},
    {"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0}, {"", 0, 0},   {"k", 3, 0},  {"M", 6, 0},
    {"G", 9, 0},  {"T", 12, 0}, {"P", 15, 0}, {"E", 18, 0},
};

static const struct suffix *suffix_lookup(const char *s)
{
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (strcmp(suffixes[i].text, s) == 0)
			return &suffixes[i];
	return NULL;
}

/* A decimal number: digits (most significant first, values 0..9) and the
 * number of them that stand before the decimal point (may exceed n or be
 * negative). */
struct decimal {
	unsigned char d[DIGITS_MAX];
	int n;
	int point;
};

static void decimal_mul_small(struct decimal *x, unsigned m)
{
	unsigned carry = 0;
	unsigned char tmp[DIGITS_MAX];
	int len = 0;

	/* Multiply from the least significant digit; collect reversed. */
	for (int i = x->n - 1; i >= 0; i--) {
		unsigned v = x->d[i] * m + carry;
		tmp[len++] = (unsigned char)(v % 10);
		carry = v / 10;
	}
	while (carry) {
		tmp[len++] = (unsigned char)(carry % 10);
		carry /= 10;
	}
	x->point += len - x->n;
	for (int i = 0; i < len; i++)
		x->d[i] = tmp[len - 1 - i];
	x->n = len;
}

/* Integer part of x (rounded away from zero by any fraction) into *ret. */
static int decimal_to_u64(const struct decimal *x, uint64_t *ret)
{
	uint64_t v = 0;
	bool fraction = false;

	for (int i = 0; i < x->n; i++) {
		if (i >= x->point) {
			if (x->d[i])
				fraction = true;
			continue;
		}
		if (v > (UINT64_MAX - x->d[i]) / 10)
			return -ERANGE;
		v = v * 10 + x->d[i];
	}
	/* Digits implied between the last digit and the point are zeros. */
	for (int i = x->n; i < x->point; i++) {
		if (v > UINT64_MAX / 10)
			return -ERANGE;
		v *= 10;
	}
	if (fraction) {
		if (v == UINT64_MAX)
			return -ERANGE;
		v++;
	}
	*ret = v;
	return 0;
}

/* Parse "[+-]digits[.digits]" into x; returns the rest of the string. */
static const char *parse_mantissa(const char *p, struct decimal *x, bool *ret_negative)
{
	bool any = false, negative = false;

	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	x->n = 0;
	x->point = 0;
	for (; *p >= '0' && *p <= '9'; p++, any = true) {
		if (x->n == 0 && *p == '0')
			continue; /* leading zeros carry no value */
		x->d[x->n++] = (unsigned char)(*p - '0');
		x->point++;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, any = true) {
			if (x->n == 0 && *p == '0') {
				x->point--;
				continue;
			}
			x->d[x->n++] = (unsigned char)(*p - '0');
		}
	}
	*ret_negative = negative;
	return any ? p : NULL;
}

/* "e3", "E-2": a decimal exponent; clamped, since the mantissa is short. */
static int parse_exponent(const char *p, int *ret)
{
	bool negative = false;
	long v = 0;

	if (*p != 'e' && *p != 'E')
		return -EINVAL;
	p++;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++)
		if (v < EXPONENT_CLAMP)
			v = v * 10 + (*p - '0');
	if (*p)
		return -EINVAL;
	if (v > EXPONENT_CLAMP)
		v = EXPONENT_CLAMP;
	*ret = (int)(negative ? -v : v);
	return 0;
}

int topo_quantity_parse(const char *s, int64_t *ret_milli)
{
	struct decimal x;
	const struct suffix *suf;
	bool negative;
	const char *rest;
	int exp10 = 0, pow1024 = 0, r;
	uint64_t mag;

	if (!s || strnlen(s, QUANTITY_MAX_LEN + 1) > QUANTITY_MAX_LEN)
		return -EINVAL;
	rest = parse_mantissa(s, &x, &negative);
	if (!rest)
		return -EINVAL;
	suf = suffix_lookup(rest);
	if (suf) {
		exp10 = suf->exp10;
		pow1024 = suf->pow1024;
	} else {
		r = parse_exponent(rest, &exp10);
		if (r < 0)
			return r;
	}
	if (x.n == 0) {
		*ret_milli = 0;
		return 0;
	}
	for (int i = 0; i < pow1024; i++)
		decimal_mul_small(&x, 1024);
	/* Milli-units: three more places. */
	x.point += exp10 + 3;
	if (x.point > 20)
		return -ERANGE; /* at least 10^20 > INT64_MAX */
	r = decimal_to_u64(&x, &mag);
	if (r < 0)
		return r;
	if (mag > (uint64_t)INT64_MAX)
		return -ERANGE;
	*ret_milli = negative ? -(int64_t)mag : (int64_t)mag;
	return 0;
}

enum topo_quantity_format topo_quantity_format_of(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n >= 2 && s[n - 1] == 'i' && strchr("KMGTPE", s[n - 2]))
		return TOPO_QUANTITY_BINARY_SI;
	return TOPO_QUANTITY_DECIMAL_SI;
}

static int emit(char *buf, size_t len, bool negative, uint64_t mag, const char *suffix)
{
	int n = snprintf(buf, len, "%s%" PRIu64 "%s", negative ? "-" : "", mag, suffix);

	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

static const char *suffix_text(int exp10, int pow1024)
{
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (suffixes[i].exp10 == exp10 && suffixes[i].pow1024 == pow1024)
			return suffixes[i].text;
	return "";
}

int topo_quantity_format(int64_t milli, enum topo_quantity_format fmt, char *buf, size_t len)
{
	bool negative = milli < 0;
	/* Magnitude without overflow for INT64_MIN. */
	uint64_t mag = negative ? (uint64_t)(-(milli + 1)) + 1 : (uint64_t)milli;
	uint64_t units;
	int exp10 = 0, pow1024 = 0;

	if (!buf || len == 0)
		return -EINVAL;
	if (mag == 0)
		return emit(buf, len, false, 0, "");
	if (mag % 1000 != 0)
		return emit(buf, len, negative, mag, "m");
	units = mag / 1000;
	if (fmt == TOPO_QUANTITY_BINARY_SI && units >= 1024 && units % 1024 == 0) {
		while (units % 1024 == 0 && pow1024 < 6) {
			units /= 1024;
			pow1024++;
		}
		return emit(buf, len, negative, units, suffix_text(0, pow1024));
	}
	while (units % 1000 == 0 && exp10 < 18) {
		units /= 1000;
		exp10 += 3;
	}
	return emit(buf, len, negative, units, suffix_text(exp10, 0));
}
