/* SPDX-License-Identifier: Apache-2.0 */
/*
 * incluster.c — the credentials of a pod's service account.
 *
 * Inside a pod, Kubernetes mounts the service account's token, the cluster
 * CA and the pod's namespace under KUBE_SA_DIR and sets
 * KUBERNETES_SERVICE_HOST/PORT to the API server's in-cluster address; this
 * turns them into the same credentials a kubeconfig resolves to
 * (kernel/kube/kubeconfig.h).  The token is referenced as a file, because it
 * rotates (the client re-reads it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kube/kube-internal.h"
#include "kernel/kube/kube.h"
#include "kernel/lib/file.h"

int kube_read_small_file(const char *path, char **ret, size_t *ret_len)
{
	return pk_read_small_file(path, PK_KUBECONFIG_MAX_BYTES, ret, ret_len);
}

int kube_read_token_file(const char *path, char **ret)
{
	char *buf = NULL;
	int r = kube_read_small_file(path, &buf, NULL);

	if (r < 0)
		return r;
	buf[strcspn(buf, "\r\n")] = '\0';
	*ret = buf;
	return 0;
}

int kube_credentials_in_cluster(const char *sa_dir, struct pk_kube_credentials *ret, char *err,
				size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct pk_kube_credentials c = {0};
	char *tok = NULL, *ns = NULL, *p = NULL;
	int r = 0;

	if (!sa_dir)
		sa_dir = KUBE_SA_DIR;
	if (!host || !*host || !port || !*port) {
		snprintf(err, errlen,
			 "in-cluster: KUBERNETES_SERVICE_HOST and "
			 "KUBERNETES_SERVICE_PORT must be set (not running in a pod?)");
		return -EINVAL;
	}
	if (asprintf(&c.server, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
		     port) < 0 ||
	    asprintf(&c.token_file, "%s/token", sa_dir) < 0 ||
	    asprintf(&c.ca_file, "%s/ca.crt", sa_dir) < 0 ||
	    asprintf(&p, "%s/namespace", sa_dir) < 0)
		r = -ENOMEM;
	if (r == 0) {
		/* the token must be readable now; it is re-read as it rotates */
		r = kube_read_token_file(c.token_file, &tok);
		if (r < 0)
			snprintf(err, errlen, "in-cluster: %s: %s", c.token_file, strerror(-r));
	}
	if (r == 0 && kube_read_small_file(p, &ns, NULL) == 0) {
		c.namespace = strndup(ns, strcspn(ns, " \r\n"));
		r = c.namespace ? 0 : -ENOMEM;
	}
	free(tok);
	free(ns);
	free(p);
	if (r < 0) {
		pk_kube_credentials_clear(&c);
		return r;
	}
	*ret = c;
	return 0;
}
