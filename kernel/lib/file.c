/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.c — the whole of a file in memory.
 *
 * Read with stdio in doubling steps, at most one byte past the limit, so a
 * file that is too large is told from one that fits exactly without reading
 * the rest of it.  A size hint only sizes the first step (/proc, pipes and
 * files that change while read report none or a wrong one): a regular file
 * of the size its caller was told is read in one allocation.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/lib/file.h"

int pk_read_stream(FILE *f, size_t size_hint, size_t max_bytes, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int r = 0;

	for (;;) {
		if (len == cap) {
			size_t want = cap ? 2 * cap : size_hint ? size_hint + 1 : 4096;
			char *nb;

			if (want > max_bytes + 1)
				want = max_bytes + 1;
			if (want <= cap) {
				r = -EFBIG;
				break;
			}
			nb = realloc(buf, want + 1); /* + the NUL */
			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap = want;
		}
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (ferror(f)) {
			r = -EIO;
			break;
		}
		if (len > max_bytes) {
			r = -EFBIG;
			break;
		}
		if (n == 0)
			break;
	}
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

int pk_read_small_file(const char *path, size_t max_bytes, char **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "re"); /* e: O_CLOEXEC */
	int r;

	if (!f)
		return -errno;
	r = pk_read_stream(f, 0, max_bytes, ret, ret_len);
	fclose(f);
	return r;
}

int pk_read_input(const char *path, size_t max_bytes, char **ret, size_t *ret_len)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "re"); /* e: O_CLOEXEC */
	struct stat st = {0};
	int r;

	if (!f)
		return -errno;
	/* a directory opens for reading on Linux */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		r = -EISDIR;
	else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max_bytes)
		r = -EFBIG;
	else
		r = pk_read_stream(f, S_ISREG(st.st_mode) ? (size_t)st.st_size : 64 * 1024,
				   max_bytes, ret, ret_len);
	if (!is_stdin)
		fclose(f);
	return r;
}
