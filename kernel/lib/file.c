/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.c — the whole of a small file in memory.
 *
 * Read with stdio in growing steps (a size hint is not trusted: /proc, pipes
 * and files that change while read report none or a wrong one), at most one
 * byte past the limit, so a file that is too large is told from one that
 * fits exactly without reading the rest of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/lib/file.h"

int pk_read_small_file(const char *path, size_t max_bytes, char **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "re"); /* e: O_CLOEXEC */
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int r = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (len == cap) {
			size_t want = cap ? 2 * cap : 4096;
			char *nb;

			if (want > max_bytes + 1)
				want = max_bytes + 1;
			nb = realloc(buf, want + 1); /* + the NUL */
			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap = want;
		}
		len += fread(buf + len, 1, cap - len, f);
		if (ferror(f)) {
			r = -EIO;
			break;
		}
		if (len > max_bytes) {
			r = -EFBIG;
			break;
		}
		if (feof(f))
			break;
	}
	fclose(f);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*ret = buf;
	if (ret_len)
		*ret_len = len;
	return 0;
}
