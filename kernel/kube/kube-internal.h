/* SPDX-License-Identifier: Apache-2.0 */
/* kube-internal.h — what the client's modules share. */
#ifndef PODKERNEL_KERNEL_KUBE_INTERNAL_H
#define PODKERNEL_KERNEL_KUBE_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kernel/kube/kube.h"

/*
 * A file of at most PK_KUBECONFIG_MAX_BYTES, NUL-terminated (kubeconfigs,
 * CA bundles, tokens): 0, -errno, -EFBIG when larger.  ret_len may be NULL.
 */
int kube_read_small_file(const char *path, char **ret, size_t *ret_len);
/* Read a token file, first line only, into a new string. */
int kube_read_token_file(const char *path, char **ret);

/* obj.a.b as a string, or NULL. */
static inline const char *pk_kube_str(const json_t *obj, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(obj, a), b));
}
/* Monotonic milliseconds. */
int64_t kube_now_ms(void);
/*
 * Sleep ms on cond (under lock) unless *stop is set first or meanwhile (the
 * stopper signals cond); false when stopping.  Informers and the elector nap
 * between retries this way.
 */
bool kube_nap(pthread_mutex_t *lock, pthread_cond_t *cond, atomic_bool *stop, int ms);

#endif
