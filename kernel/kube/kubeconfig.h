/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubeconfig.h — reading kubeconfig files the way kubectl does.
 *
 * One parser for every podkernel program that talks to an API server as a
 * client: podctl, and podkerneld when it attaches to a Kubernetes cluster.
 *
 *   pk_kubeconfig_load()     the files: an explicit --kubeconfig path (must
 *                            exist), else $KUBECONFIG (a ':' list; missing
 *                            files are skipped), else ~/.kube/config (when it
 *                            exists); merged with kubectl's rules
 *   pk_kubeconfig_resolve()  one context's server and credentials, with the
 *                            command line's overrides applied
 *   pk_kubeconfig_write()    a kubeconfig file for one server and token
 *
 * Merge rules (client-go clientcmd): the first file that names a cluster,
 * user or context wins that name (entries are never combined field by field);
 * the first file that sets current-context wins.  Relative file paths in an
 * entry (certificate-authority, client-certificate, client-key, tokenFile)
 * are resolved against the directory of the file that defined the entry.
 * `*-data` fields are base64 PEM, decoded here.  Not supported (an error that
 * says so): exec credential plugins, auth-provider entries and
 * impersonation (as, as-uid, as-groups, as-user-extra).
 *
 * Conventions as elsewhere: 0 or -errno, ret_* written only on success, an
 * error message naming the file and the field path in err.
 */
#ifndef PODKERNEL_KUBECONFIG_H
#define PODKERNEL_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define PK_KUBECONFIG_MAX_FILES 64
#define PK_KUBECONFIG_MAX_BYTES (1024 * 1024) /* per file */

struct pk_kubeconfig;

/*
 * Load and merge.  explicit_path: --kubeconfig, or NULL; env: the value of
 * $KUBECONFIG, or NULL; home: $HOME (for ~/.kube/config), or NULL.  A
 * kubeconfig that names no file at all (nothing given, no ~/.kube/config) is
 * an empty one (resolve then needs an explicit server).  -ENOENT when the
 * explicit file is missing, -EINVAL on a bad file (err says where).
 */
int pk_kubeconfig_load(const char *explicit_path, const char *env, const char *home,
		       struct pk_kubeconfig **ret, char *err, size_t errlen);
/* Parse one file's text (tests, and the loader). dir resolves relative paths. */
int pk_kubeconfig_parse(const char *name, const char *dir, const char *text, size_t len,
			struct pk_kubeconfig **ret, char *err, size_t errlen);
void pk_kubeconfig_free(struct pk_kubeconfig *kc);
/* The merged current-context, or NULL. */
const char *pk_kubeconfig_current_context(const struct pk_kubeconfig *kc);

/* What the command line says; NULL / false: not given. */
struct pk_kube_overrides {
	const char *context;   /* --context */
	const char *cluster;   /* --cluster */
	const char *user;      /* --user */
	const char *server;    /* --server */
	const char *token;     /* --token */
	const char *ca_file;   /* --certificate-authority */
	const char *cert_file; /* --client-certificate */
	const char *key_file;  /* --client-key */
	bool insecure;	       /* --insecure-skip-tls-verify */
	const char *namespace; /* -n / --namespace */
};

/* A server and how to authenticate to it.  Every string is owned. */
struct pk_kube_credentials {
	char *context;	       /* the context used, or NULL */
	char *server;	       /* https://host:port (never NULL after resolve) */
	char *tls_server_name; /* the name TLS asks for and verifies instead of the host, or NULL */
	char *proxy_url;       /* http://, https:// or socks5:// proxy, or NULL */
	bool insecure;	       /* do not verify the server certificate */
	char *ca_file;	       /* PEM bundle path, or NULL */
	char *ca_data;	       /* PEM bytes (decoded certificate-authority-data), or NULL */
	size_t ca_data_len;
	char *token;		    /* bearer token, or NULL */
	char *token_file;	    /* re-read before each request, or NULL */
	char *cert_file, *key_file; /* client certificate and key paths, or NULL */
	char *cert_data, *key_data; /* ... or their PEM bytes */
	size_t cert_data_len, key_data_len;
	char *username, *password; /* basic auth (rare), or NULL */
	char *namespace;	   /* the context's namespace, or the override, or NULL */
};

/*
 * Resolve the context named by o->context, else current-context, and apply
 * the overrides as kubectl does: --server replaces the cluster's server
 * (and drops its tls-server-name, which named the old server's certificate),
 * --token replaces the user's token and token file, --certificate-authority
 * replaces the CA data, --client-certificate/--client-key replace the user's
 * certificate, --insecure-skip-tls-verify drops the CA.  A context, cluster
 * or user that is named but missing is -ENOENT; no server at all is -ENOENT
 * ("no server: ..."); a CA together with insecure is -EINVAL (kubectl's
 * rule), so is a proxy-url that is not http, https or socks5; exec plugins,
 * auth providers and impersonation are -ENOTSUP.  kc may be NULL (only
 * overrides).
 */
int pk_kubeconfig_resolve(const struct pk_kubeconfig *kc, const struct pk_kube_overrides *o,
			  struct pk_kube_credentials *ret, char *err, size_t errlen);
void pk_kube_credentials_clear(struct pk_kube_credentials *c);

/*
 * Write a kubeconfig with one cluster (server, CA file contents embedded as
 * certificate-authority-data when ca_file is given), one user (the token, or
 * no credentials when token is NULL),
 * and one context named name, as current-context.  The file is created with
 * mode 0600 through a temporary file and a rename.
 */
int pk_kubeconfig_write(const char *path, const char *name, const char *server, const char *ca_file,
			const char *token, char *err, size_t errlen);

/* Standard base64 (RFC 4648, padding optional, whitespace skipped). */
int pk_base64_decode(const char *in, size_t inlen, char **ret, size_t *ret_len);
char *pk_base64_encode(const void *in, size_t len);

#endif /* PODKERNEL_KUBECONFIG_H */
