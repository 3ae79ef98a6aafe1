/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.c — a response's two helpers (request.h): its warnings and its
 * release.  A watch in it is freed by the free operation its maker set
 * beside it (the API server's), so whoever answers requests links no server.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/request.h"

void pk_response_clear(struct pk_response *resp)
{
	if (!resp)
		return;
	free(resp->body);
	free(resp->warnings);
	if (resp->watch && resp->watch_free)
		resp->watch_free(resp->watch);
	memset(resp, 0, sizeof(*resp));
}

void pk_response_warn(struct pk_response *resp, const char *text)
{
	size_t have = resp->warnings_len, n = strcspn(text, "\r\n");
	if (n > PK_RESPONSE_WARNING_MAX)
		n = PK_RESPONSE_WARNING_MAX;
	if (have + n + 1 > PK_RESPONSE_WARNINGS_MAX) {
		resp->warnings_dropped++;
		return;
	}
	char *w = realloc(resp->warnings, have + n + 2);
	if (!w) {
		resp->warnings_dropped++;
		return;
	}
	memcpy(w + have, text, n);
	w[have + n] = '\n';
	w[have + n + 1] = '\0';
	resp->warnings = w;
	resp->warnings_len = have + n + 1;
}
