/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_map.c — the string map: put, get, replace and delete against a
 * reference over 20,000 keys with churn (growth, tombstones and the rehash
 * that drops them), iteration that sees every live key once, the string
 * pool's users, and a map whose keys are its values' own.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/map.h"

#define KEYS 20000

static void key_of(int i, char *buf, size_t len)
{
	snprintf(buf, len, "ns-%d/pod-%d", i % 37, i);
}

START_TEST(map_agrees_with_a_reference_under_churn)
{
	static intptr_t ref[KEYS]; /* 0: absent, else the value */
	struct pk_map m = {0};
	char k[64];
	size_t live = 0;
	uint64_t x = 88172645463325252ULL;

	for (int step = 0; step < 8 * KEYS; step++) {
		int i;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		i = (int)(x % KEYS);
		key_of(i, k, sizeof(k));
		if (x % 3 == 0) { /* delete */
			pk_map_del(&m, k);
			live -= ref[i] != 0;
			ref[i] = 0;
		} else { /* put or replace */
			intptr_t v = (intptr_t)(step + 1);

			ck_assert_int_eq(pk_map_put(&m, k, (void *)v), 0);
			live += ref[i] == 0;
			ref[i] = v;
		}
		ck_assert_uint_eq(m.live, live);
		ck_assert(m.used * 3 <= m.cap * 2); /* load, tombstones included, at most 2/3 */
	}
	for (int i = 0; i < KEYS; i++) {
		key_of(i, k, sizeof(k));
		ck_assert_int_eq((intptr_t)pk_map_get(&m, k), ref[i]);
	}
	/* Iteration: every live key once, with its value. */
	const char *key;
	void *value;
	size_t seen = 0;

	for (size_t i = 0; pk_map_next(&m, &i, &key, &value);) {
		int n = atoi(strstr(key, "pod-") + 4);

		ck_assert_int_eq(ref[n], (intptr_t)value);
		ref[n] = -ref[n]; /* seen */
		seen++;
	}
	ck_assert_uint_eq(seen, live);
	pk_map_free(&m);
	ck_assert_uint_eq(m.cap, 0);
	ck_assert_ptr_null(pk_map_get(&m, "anything"));
	size_t i = 0;

	ck_assert(!pk_map_next(&m, &i, NULL, NULL));
}
END_TEST

/* A map whose keys come and go stays the size its live keys need. */
START_TEST(churn_does_not_grow_the_table)
{
	struct pk_map m = {0};
	char k[64];
	size_t cap = 0;

	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 100; i++) {
			snprintf(k, sizeof(k), "r%d-%d", round, i);
			ck_assert_int_eq(pk_map_put(&m, k, NULL), 0);
		}
		for (int i = 0; i < 100; i++) {
			snprintf(k, sizeof(k), "r%d-%d", round, i);
			pk_map_del(&m, k);
		}
		if (round == 5)
			cap = m.cap;
	}
	ck_assert_uint_eq(m.live, 0);
	ck_assert_uint_le(m.cap, cap);
	pk_map_free(&m);
}
END_TEST

START_TEST(pool_keeps_one_copy_per_string_until_its_last_user)
{
	struct pk_map pool = {0};
	char a[] = "accelerator.podkernel.dev/product", b[sizeof(a)];
	const char *p, *q;

	memcpy(b, a, sizeof(a));
	p = pk_intern(&pool, a);
	q = pk_intern(&pool, b);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_eq(p, q); /* one copy */
	ck_assert_ptr_ne(p, a);
	pk_unintern(&pool, a);
	ck_assert_uint_eq(pool.live, 1); /* one user left */
	ck_assert_str_eq(p, a);
	pk_unintern(&pool, b);
	ck_assert_uint_eq(pool.live, 0);
	pk_unintern(&pool, b); /* unknown: nothing */
	pk_unintern(&pool, NULL);
	pk_map_free(&pool);
}
END_TEST

/* The destructor counts what it was handed and frees it. */
static int freed;

static void count_free(void *v)
{
	freed++;
	free(v);
}

START_TEST(owning_map_frees_what_it_drops_and_nothing_else)
{
	struct pk_map m = PK_MAP_INIT(count_free);
	int *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *c = malloc(sizeof(*c)), *t;

	freed = 0;
	ck_assert_int_eq(pk_map_put(&m, "a", a), 0);
	ck_assert_int_eq(pk_map_put(&m, "a", a), 0); /* the same value again: kept */
	ck_assert_int_eq(freed, 0);
	ck_assert_int_eq(pk_map_put(&m, "a", b), 0); /* replaced: a goes */
	ck_assert_int_eq(freed, 1);
	ck_assert_ptr_eq(pk_map_get(&m, "a"), b);
	ck_assert_int_eq(pk_map_put(&m, "c", c), 0);
	t = pk_map_take(&m, "c"); /* taken back: the caller's */
	ck_assert_ptr_eq(t, c);
	ck_assert_int_eq(freed, 1);
	ck_assert_ptr_null(pk_map_get(&m, "c"));
	ck_assert_ptr_null(pk_map_take(&m, "c"));
	free(t);
	pk_map_del(&m, "a"); /* deleted: b goes */
	ck_assert_int_eq(freed, 2);
	pk_map_del(&m, "a"); /* unknown: nothing */
	ck_assert_int_eq(freed, 2);
	for (int i = 0; i < 100; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%d", i);
		ck_assert_int_eq(pk_map_put(&m, k, malloc(8)), 0);
	}
	pk_map_free(&m); /* all 100 go, and the map keeps its destructor */
	ck_assert_int_eq(freed, 102);
	ck_assert_uint_eq(m.live, 0);
	ck_assert_ptr_eq((void *)m.free_value, (void *)count_free);
	ck_assert_int_eq(pk_map_put(&m, "again", malloc(8)), 0);
	pk_map_free(&m);
	ck_assert_int_eq(freed, 103);
}
END_TEST

/* A value holding its own key, for a map that borrows keys. */
struct keyed {
	int n;
	char key[16];
};

static struct keyed *keyed_new(const char *key, int n)
{
	struct keyed *k = calloc(1, sizeof(*k));

	snprintf(k->key, sizeof(k->key), "%s", key);
	k->n = n;
	return k;
}

START_TEST(borrowed_keys_are_the_values_own)
{
	struct pk_map m = {.free_value = free, .borrow_keys = true};
	struct keyed *a = keyed_new("a", 1), *a2 = keyed_new("a", 2);
	const char *key;
	void *v;

	ck_assert_int_eq(pk_map_put(&m, a->key, a), 0);
	ck_assert_ptr_eq(pk_map_get(&m, "a"), a);
	/* a replacing value brings its key: the old one (freed) is no longer read */
	ck_assert_int_eq(pk_map_put(&m, a2->key, a2), 0);
	ck_assert_ptr_eq(pk_map_get(&m, "a"), a2);
	size_t i = 0;
	ck_assert(pk_map_next(&m, &i, &key, &v));
	ck_assert_ptr_eq(key, a2->key);
	for (int j = 0; j < 200; j++) { /* growth moves the borrowed pointers only */
		char k[16];

		snprintf(k, sizeof(k), "k%d", j);
		struct keyed *e = keyed_new(k, j);
		ck_assert_int_eq(pk_map_put(&m, e->key, e), 0);
	}
	for (int j = 0; j < 200; j += 2) {
		char k[16];

		snprintf(k, sizeof(k), "k%d", j);
		pk_map_del(&m, k);
	}
	ck_assert_uint_eq(m.live, 101);
	ck_assert_int_eq(((struct keyed *)pk_map_get(&m, "k7"))->n, 7);
	ck_assert_ptr_null(pk_map_get(&m, "k8"));
	pk_map_free(&m); /* the values go, their keys with them; the map keeps borrowing */
	ck_assert(m.borrow_keys);
	ck_assert_uint_eq(m.live, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib-map");
	TCase *tc = tcase_create("map");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, map_agrees_with_a_reference_under_churn);
	tcase_add_test(tc, churn_does_not_grow_the_table);
	tcase_add_test(tc, pool_keeps_one_copy_per_string_until_its_last_user);
	tcase_add_test(tc, owning_map_frees_what_it_drops_and_nothing_else);
	tcase_add_test(tc, borrowed_keys_are_the_values_own);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
