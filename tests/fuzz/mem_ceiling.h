/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mem_ceiling.h — what a libFuzzer target holds at most while it runs one
 * call, through the sanitizer's malloc and free hooks: mc_begin() starts
 * counting, mc_end() returns the peak of the bytes allocated since and not
 * yet freed.  A target compares it with the bound its code promises (a fixed
 * multiple of the input), so that an amplification is a finding however far
 * below libFuzzer's -rss_limit_mb it stays.  Without AddressSanitizer (a
 * build that is no fuzz build) nothing is counted and mc_end() returns 0.
 */
#ifndef PODKERNEL_TESTS_FUZZ_MEM_CEILING_H
#define PODKERNEL_TESTS_FUZZ_MEM_CEILING_H

#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MC_ASAN 1
#endif
#endif
#if !defined(MC_ASAN) && defined(__SANITIZE_ADDRESS__)
#define MC_ASAN 1
#endif

#ifdef MC_ASAN
#include <sanitizer/allocator_interface.h>

static size_t mc_live, mc_peak;
static int mc_on;

static void mc_malloc(const volatile void *p, size_t n)
{
	(void)p;
	if (!mc_on)
		return;
	mc_live += n;
	if (mc_live > mc_peak)
		mc_peak = mc_live;
}

/* A block allocated before mc_begin() and freed after counts as freed:
 * the peak is never overstated. */
static void mc_free(const volatile void *p)
{
	size_t n;

	if (!mc_on || !p)
		return;
	n = __sanitizer_get_allocated_size((const void *)p);
	mc_live = n < mc_live ? mc_live - n : 0;
}

static inline void mc_begin(void)
{
	static int installed;

	if (!installed)
		installed = __sanitizer_install_malloc_and_free_hooks(mc_malloc, mc_free) != 0;
	mc_live = mc_peak = 0;
	mc_on = 1;
}

static inline size_t mc_end(void)
{
	mc_on = 0;
	return mc_peak;
}
#else
static inline void mc_begin(void)
{
}

static inline size_t mc_end(void)
{
	return 0;
}
#endif

#endif
