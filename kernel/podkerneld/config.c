/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c — the configuration file into the flags it stands for.
 *
 * One table maps each field path to its flag and its type; the document is
 * walked against it, so a field the table does not name is refused by its
 * path (as kube-scheduler's strict decoding refuses one), never ignored.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/lib/file.h"
#include "kernel/podkerneld/config.h"

enum ftype { F_STRING, F_INT, F_NUMBER, F_BOOL, F_OBJECT };

struct field {
	const char *path; /* dotted; an F_OBJECT only groups the fields below it */
	enum ftype type;
	const char *flag;
};

static const struct field SCHEMA[] = {
    {"apiVersion", F_STRING, NULL},
    {"kind", F_STRING, NULL},
    {"listen", F_STRING, "listen"},
    {"dataDir", F_STRING, "data-dir"},
    {"strategy", F_STRING, "strategy"},
    {"simulateBoard", F_STRING, "simulate-board"},
    {"noScheduling", F_BOOL, "no-scheduling"},
    {"allowDamagedStore", F_BOOL, "allow-damaged-store"},
    {"gatedGangsWait", F_BOOL, "gated-gangs-wait"},
    {"writeKubeconfig", F_STRING, "write-kubeconfig"},
    {"nodeLeaseNamespace", F_STRING, "node-lease-namespace"},
    {"logging", F_OBJECT, NULL},
    {"logging.format", F_STRING, "log-format"},
    {"logging.verbosity", F_INT, "v"},
    {"audit", F_OBJECT, NULL},
    {"audit.path", F_STRING, "audit-log-path"},
    {"audit.maxSize", F_INT, "audit-log-maxsize"},
    {"audit.maxBackup", F_INT, "audit-log-maxbackup"},
    {"authentication", F_OBJECT, NULL},
    {"authentication.tokenAuthFile", F_STRING, "token-auth-file"},
    {"authentication.clientCAFile", F_STRING, "client-ca-file"},
    {"authentication.insecureAllowAnonymousAdmin", F_BOOL, "insecure-allow-anonymous-admin"},
    {"tls", F_OBJECT, NULL},
    {"tls.certFile", F_STRING, "tls-cert-file"},
    {"tls.privateKeyFile", F_STRING, "tls-private-key-file"},
    {"tls.insecureAllowNonLoopback", F_BOOL, "insecure-allow-non-loopback"},
    {"connections", F_OBJECT, NULL},
    {"connections.maxConnections", F_INT, "max-connections"},
    {"connections.maxConnectionsPerAddress", F_INT, "max-connections-per-address"},
    {"connections.requestHeaderTimeout", F_NUMBER, "request-header-timeout"},
    {"connections.requestBodyMinRate", F_INT, "request-body-min-rate"},
    {"connections.connectionIdleTimeout", F_NUMBER, "connection-idle-timeout"},
    {"nodeLifecycle", F_OBJECT, NULL},
    {"nodeLifecycle.nodeMonitorGracePeriod", F_NUMBER, "node-monitor-grace-period"},
    {"nodeLifecycle.nodeEvictionRate", F_NUMBER, "node-eviction-rate"},
    {"nodeLifecycle.secondaryNodeEvictionRate", F_NUMBER, "secondary-node-eviction-rate"},
    {"nodeLifecycle.unhealthyZoneThreshold", F_NUMBER, "unhealthy-zone-threshold"},
    {"nodeLifecycle.largeClusterSizeThreshold", F_INT, "large-cluster-size-threshold"},
    {"clientConnection", F_OBJECT, NULL},
    {"clientConnection.kubeconfig", F_STRING, "kubeconfig"},
    {"clientConnection.context", F_STRING, "context"},
    {"clientConnection.inCluster", F_BOOL, "in-cluster"},
    {"schedulerName", F_STRING, "scheduler-name"},
    {"workloadAPI", F_STRING, "workload-api"},
    {"leaderElection", F_OBJECT, NULL},
    {"leaderElection.leaderElect", F_BOOL, "leader-elect"},
    {"leaderElection.resourceNamespace", F_STRING, "leader-elect-namespace"},
    {"leaderElection.resourceName", F_STRING, "leader-elect-lease-name"},
    {"leaderElection.identity", F_STRING, "leader-elect-identity"},
    {"leaderElection.leaseDuration", F_NUMBER, "leader-elect-lease-duration"},
    {"leaderElection.renewDeadline", F_NUMBER, "leader-elect-renew-deadline"},
    {"leaderElection.retryPeriod", F_NUMBER, "leader-elect-retry-period"},
};
#define NSCHEMA (sizeof(SCHEMA) / sizeof(SCHEMA[0]))

static const char *const TYPE_NAMES[] = {"a string", "an integer", "a number", "a boolean",
					 "a mapping"};

static const struct field *schema_field(const char *path)
{
	for (size_t i = 0; i < NSCHEMA; i++)
		if (strcmp(SCHEMA[i].path, path) == 0)
			return &SCHEMA[i];
	return NULL;
}

static bool type_ok(enum ftype t, const json_t *v)
{
	switch (t) {
	case F_STRING:
		return json_is_string(v);
	case F_INT:
		return json_is_integer(v);
	case F_NUMBER:
		return json_is_number(v);
	case F_BOOL:
		return json_is_boolean(v);
	default:
		return json_is_object(v);
	}
}

/* The flag's argument for V (a string, an integer, a number); NULL: out of memory. */
static char *flag_value(const json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v))
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else
		snprintf(buf, sizeof(buf), "%.17g", json_number_value(v));
	return strdup(buf);
}

static int add_flag(struct pkd_config *c, const struct field *f, const json_t *v)
{
	struct pkd_config_flag *fl = &c->flags[c->n];

	if (f->type == F_BOOL && !json_is_true(v))
		return 0; /* false: the flag is not given */
	fl->flag = f->flag;
	fl->value = NULL;
	if (f->type != F_BOOL && !(fl->value = flag_value(v)))
		return -ENOMEM;
	c->n++;
	return 0;
}

static int walk(struct pkd_config *c, const char *name, const char *prefix, const json_t *obj,
		char *err, size_t errlen)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)obj, k, v)
	{
		char path[256];
		const struct field *f;
		int r;

		if (snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", k) >=
		    (int)sizeof(path)) {
			snprintf(err, errlen, "%s: %.80s...: unknown field", name, path);
			return -EINVAL;
		}
		f = schema_field(path);
		if (!f) {
			snprintf(err, errlen, "%s: %s: unknown field", name, path);
			return -EINVAL;
		}
		if (!type_ok(f->type, v)) {
			snprintf(err, errlen, "%s: %s: expected %s", name, path,
				 TYPE_NAMES[f->type]);
			return -EINVAL;
		}
		r = f->type == F_OBJECT ? walk(c, name, path, v, err, errlen)
		    : f->flag		? add_flag(c, f, v)
					: 0;
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_kind(const char *name, const json_t *doc, char *err, size_t errlen)
{
	const char *api = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));

	if (!api || strcmp(api, PKD_CONFIG_API_VERSION) != 0) {
		snprintf(err, errlen, "%s: apiVersion: expected \"%s\"", name,
			 PKD_CONFIG_API_VERSION);
		return -EINVAL;
	}
	if (!kind || strcmp(kind, PKD_CONFIG_KIND) != 0) {
		snprintf(err, errlen, "%s: kind: expected \"%s\"", name, PKD_CONFIG_KIND);
		return -EINVAL;
	}
	return 0;
}

void pkd_config_free(struct pkd_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n; i++)
		free(cfg->flags[i].value);
	free(cfg->flags);
	free(cfg);
}

int pkd_config_parse(const char *name, const char *text, size_t len, struct pkd_config **ret,
		     char *err, size_t errlen)
{
	struct pkd_config *c;
	json_t *doc = NULL;
	int r = pk_parse_document(name, text, len, &doc, err, errlen);

	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL;
	if (!json_is_object(doc)) {
		snprintf(err, errlen, "%s: expected a mapping with apiVersion and kind", name);
		json_decref(doc);
		return -EINVAL;
	}
	r = check_kind(name, doc, err, errlen);
	c = r == 0 ? calloc(1, sizeof(*c)) : NULL;
	if (r == 0 && (!c || !(c->flags = calloc(NSCHEMA, sizeof(*c->flags)))))
		r = -ENOMEM;
	if (r == 0)
		r = walk(c, name, "", doc, err, errlen);
	json_decref(doc);
	if (r < 0) {
		pkd_config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int pkd_config_load(const char *path, struct pkd_config **ret, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int r = pk_read_small_file(path, PKD_CONFIG_MAX_BYTES, &text, &len);

	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
		return r;
	}
	r = pkd_config_parse(path, text, len, ret, err, errlen);
	free(text);
	return r;
}
