/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.h — podkerneld's configuration file (--config FILE; packaged as
 * /etc/podkernel/podkerneld.yaml), in the component-config style of
 * kube-scheduler: apiVersion podkernel.io/v1alpha1, kind
 * PodkerneldConfiguration, then fields that each stand for one flag
 * (docs/CONTRACT.md lists them).  The file is read into the flags it stands
 * for, which podkerneld applies before its command line: a flag given on the
 * command line overrides the file.  An unknown field, a value of the wrong
 * type or another apiVersion/kind is refused with the field's path.
 */
#ifndef PODKERNEL_KERNEL_PODKERNELD_CONFIG_H
#define PODKERNEL_KERNEL_PODKERNELD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define PKD_CONFIG_API_VERSION "podkernel.io/v1alpha1"
#define PKD_CONFIG_KIND "PodkerneldConfiguration"
/* The largest configuration file read. */
#define PKD_CONFIG_MAX_BYTES (1u << 20)

struct pkd_config_flag {
	const char *flag; /* the long option without "--" ("listen"), or "v" */
	char *value;	  /* its argument; NULL for a flag without one */
};

struct pkd_config {
	struct pkd_config_flag *flags; /* in the order of the schema */
	size_t n;
};

/*
 * Parse TEXT (YAML or JSON) named NAME into the flags it stands for.
 * Errors ("NAME: FIELD.PATH: what is wrong") go to err.  0, -EINVAL for bad
 * input, -ENOMEM.
 */
int pkd_config_parse(const char *name, const char *text, size_t len, struct pkd_config **ret,
		     char *err, size_t errlen);
/* The same from a file (at most PKD_CONFIG_MAX_BYTES); -errno when it cannot be read. */
int pkd_config_load(const char *path, struct pkd_config **ret, char *err, size_t errlen);
void pkd_config_free(struct pkd_config *cfg);

#endif
