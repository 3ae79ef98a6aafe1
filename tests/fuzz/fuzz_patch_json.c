/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_patch_json.c — libFuzzer target for the JSON patch (RFC 6902) engine of
 * kernel/store/patch.c; the input and the invariants are patch_fuzz.h's.
 */
#include "tests/fuzz/patch_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_patch(data, size, PK_PATCH_JSON);
}
