/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfd.c — labels as a Node Feature Discovery "features.d" file.
 *
 * NFD's local feature source reads files of "key=value" lines from
 * /etc/kubernetes/node-feature-discovery/features.d/; a leading
 * "# +expiry-time=<RFC 3339>" directive makes NFD drop the labels when the
 * agent stops refreshing them.  The file is written to a dot-file in the same
 * directory, flushed, and renamed over the old one, so NFD never reads half a
 * file.  NFD ignores files over 64 KiB; so does this writer (-EFBIG).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

int agent_nfd_format(const struct agent_labels *l, int64_t expiry, char **ret_text,
		     size_t *ret_len)
{
	char *text = NULL;
	size_t len = 0;
	char when[32];
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	pk_time_format(expiry, when);
	fprintf(f, "# podagent: node labels, refreshed every cycle\n");
	fprintf(f, "# +expiry-time=%s\n", when);
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s=%s\n", l->key[i], l->value[i]);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	if (len > AGENT_NFD_MAX_BYTES) {
		free(text);
		return -EFBIG;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int agent_nfd_write(const char *dir, const char *name, const struct agent_labels *l,
		    int64_t expiry)
{
	char *text, *tmp = NULL, *dst = NULL;
	size_t len;
	int fd, r;

	if (!dir || !name || !*name || strchr(name, '/'))
		return -EINVAL;
	r = agent_nfd_format(l, expiry, &text, &len);
	if (r < 0)
		return r;
	if (asprintf(&tmp, "%s/.%s.tmp", dir, name) < 0 || asprintf(&dst, "%s/%s", dir, name) < 0) {
		r = -ENOMEM;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	r = write_all(fd, text, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, dst) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
out:
	free(tmp);
	free(dst);
	free(text);
	return r;
}
