/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_proto.c — libFuzzer target for the Kubernetes protobuf reader
 * (kernel/server/proto.c): any bytes as a request body.  Inputs without the
 * "k8s\0" envelope prefix get it, so the fuzzer spends its time in the
 * envelope, the depth walk, libprotobuf-c and the conversion to JSON rather
 * than on the first four bytes.  Crashes, sanitizer reports, leaks, a
 * success without an object, and a decoding that held more than the bound
 * it promises (pk_srv_pb_decode_limit(): a fixed multiple of the body, under
 * a memory ceiling counted by mem_ceiling.h) are findings.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"
#include "tests/fuzz/mem_ceiling.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 4), err[256];
	size_t n = size;
	json_t *obj = NULL;
	if (!buf)
		return 0;
	if (size >= 4 && memcmp(data, "k8s", 4) == 0) {
		memcpy(buf, data, size);
	} else {
		memcpy(buf, "k8s", 4);
		memcpy(buf + 4, data, size);
		n += 4;
	}
	mc_begin();
	int rc = pk_srv_proto_decode(buf, n, &obj, err, sizeof(err));
	bool object = json_is_object(obj);
	json_decref(obj);
	size_t peak = mc_end();
	if (rc == 0 && !object)
		abort();
	if (peak > pk_srv_pb_decode_limit(n)) {
		fprintf(stderr, "fuzz_proto: %zu bytes decoded holding %zu bytes (bound %zu)\n", n,
			peak, pk_srv_pb_decode_limit(n));
		abort();
	}
	free(buf);
	return 0;
}
