/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_proto.c — libFuzzer target for the Kubernetes protobuf reader
 * (kernel/server/proto.c): any bytes as a request body.  Inputs without the
 * "k8s\0" envelope prefix get it, so the fuzzer spends its time in the
 * envelope, the depth walk, libprotobuf-c and the conversion to JSON rather
 * than on the first four bytes.  Crashes, sanitizer reports, leaks, and a
 * success without an object are findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"

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
	if (pk_srv_proto_decode(buf, n, &obj, err, sizeof(err)) == 0 && !json_is_object(obj))
		abort();
	json_decref(obj);
	free(buf);
	return 0;
}
