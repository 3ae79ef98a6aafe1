/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfd.c — labels as a Node Feature Discovery "features.d" file.
 *
 * NFD's local feature source reads files of "key=value" lines from
 * /etc/kubernetes/node-feature-discovery/features.d/; a leading
 * "# +expiry-time=<RFC 3339>" directive makes NFD drop the labels when the
 * agent stops refreshing them.  The file is written to a dot-file in the same
 * directory, flushed, and renamed over the old one, so NFD never reads half a
 * file; the directory is created when missing (mkdir -p).  NFD ignores files
 * over 64 KiB; so does this writer (-EFBIG).
 *
 * nfd-master always denies labels in the kubernetes.io namespace and its
 * subdomains, except feature.node.kubernetes.io and profile.node.kubernetes.io
 * (and theirs); k8s.io is Kubernetes' own as well.  Such keys
 * (kubernetes.io/hostname above all, which the kubelet sets anyway) are left
 * out of the file; the Node podagent publishes itself still carries them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"

/* ns is domain, or a subdomain of it */
static bool in_domain(const char *ns, size_t len, const char *domain)
{
	size_t d = strlen(domain);

	if (len == d)
		return memcmp(ns, domain, d) == 0;
	return len > d && ns[len - d - 1] == '.' && memcmp(ns + len - d, domain, d) == 0;
}

bool agent_nfd_key_allowed(const char *key)
{
	const char *slash = strchr(key, '/');
	size_t n;

	if (!slash)
		return true; /* NFD prefixes it with feature.node.kubernetes.io/ */
	n = (size_t)(slash - key);
	if (in_domain(key, n, "feature.node.kubernetes.io") ||
	    in_domain(key, n, "profile.node.kubernetes.io"))
		return true;
	return !in_domain(key, n, "kubernetes.io") && !in_domain(key, n, "k8s.io");
}

int agent_mkdir_p(const char *dir)
{
	char *p, *copy;
	int r = 0;

	if (!dir || !*dir)
		return -EINVAL;
	copy = strdup(dir);
	if (!copy)
		return -ENOMEM;
	for (p = copy + 1;; p++) {
		bool end = *p == '\0';

		if (!end && *p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			break;
		}
		if (end)
			break;
		*p = '/';
	}
	if (r == 0) {
		struct stat st;

		if (stat(copy, &st) < 0)
			r = -errno;
		else if (!S_ISDIR(st.st_mode))
			r = -ENOTDIR;
	}
	free(copy);
	return r;
}

int agent_nfd_format(const struct agent_labels *l, int64_t expiry, char **ret_text, size_t *ret_len)
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
		if (agent_nfd_key_allowed(l->key[i]))
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

int agent_nfd_write(const char *dir, const char *name, const struct agent_labels *l, int64_t expiry)
{
	char *text, *tmp = NULL, *dst = NULL;
	size_t len;
	int fd, r;

	if (!dir || !name || !*name || strchr(name, '/'))
		return -EINVAL;
	r = agent_mkdir_p(dir);
	if (r < 0)
		return r;
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
