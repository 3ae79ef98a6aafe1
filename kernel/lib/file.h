/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.h — reading a whole small file (tokens, certificates, kubeconfigs,
 * hwloc exports) into memory, the one reader of kernel/ and agent/.
 */
#ifndef PODKERNEL_KERNEL_LIB_FILE_H
#define PODKERNEL_KERNEL_LIB_FILE_H

#include <stddef.h>

/*
 * The whole file at path, of at most max_bytes, into a new NUL-terminated
 * buffer (*ret, the caller frees it; *ret_len its length without the NUL,
 * ret_len may be NULL).  The file is opened close-on-exec; it need not be a
 * regular file (a pipe, /dev/stdin).  Returns 0, -errno when it cannot be
 * opened, -EFBIG when it holds more than max_bytes, -EIO on a read error,
 * -ENOMEM.  Nothing is written on failure.
 */
int pk_read_small_file(const char *path, size_t max_bytes, char **ret, size_t *ret_len);

#endif
