/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_kubeconfig.c — libFuzzer target for the kubeconfig reader: parse any
 * bytes as a kubeconfig file, then resolve its current context, its first
 * context by name and the same with every command-line override.  A
 * rejected file or context must come with an error naming what is wrong and
 * leave nothing allocated; a resolved one must have a server, and a client
 * made of it (the server URL taken apart for tls-server-name) is made or
 * refused as malformed, nothing else.  Crashes,
 * leaks, sanitizer reports and broken invariants (an abort) are findings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kube/kube.h"
#include "kernel/kube/kubeconfig.h"

static void resolve(const struct pk_kubeconfig *kc, const struct pk_kube_overrides *o)
{
	struct pk_kube_credentials c = {0};
	char err[512] = "";
	int r = pk_kubeconfig_resolve(kc, o, &c, err, sizeof(err));

	if (r < 0 && (!*err || c.server))
		abort();
	if (r == 0 && (!c.server || !*c.server))
		abort();
	if (r == 0) {
		struct kube_client *kc_client = NULL;

		r = kube_client_new(&c, &kc_client); /* takes c over */
		if (r < 0 && r != -EINVAL && r != -ENOMEM)
			abort();
		kube_client_free(kc_client);
	}
	pk_kube_credentials_clear(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pk_kube_overrides none = {0};
	struct pk_kube_overrides all = {.server = "https://127.0.0.1:6443",
					.token = "t",
					.ca_file = "/ca.pem",
					.cert_file = "/c.pem",
					.key_file = "/k.pem",
					.insecure = true,
					.namespace = "ns"};
	struct pk_kubeconfig *kc = NULL;
	char err[512] = "";
	int r = pk_kubeconfig_parse("fuzz.yaml", "/nonexistent", (const char *)data, size, &kc, err,
				    sizeof(err));

	if (r < 0) {
		if (!*err && r != -ENOMEM)
			abort();
		if (kc)
			abort();
		return 0;
	}
	resolve(kc, &none);
	all.context = pk_kubeconfig_current_context(kc);
	resolve(kc, &all);
	all.context = "not-a-context";
	resolve(kc, &all);
	pk_kubeconfig_free(kc);
	return 0;
}
