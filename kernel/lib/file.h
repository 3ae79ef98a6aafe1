/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.h — reading a whole file (tokens, certificates, kubeconfigs, hwloc
 * exports, object files, simulation traces) into memory, the one reader of
 * kernel/ and agent/: a small file of a known kind (pk_read_small_file), an
 * input file or standard input (pk_read_input), an open stream
 * (pk_read_stream).
 */
#ifndef PODKERNEL_KERNEL_LIB_FILE_H
#define PODKERNEL_KERNEL_LIB_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * The whole file at path, of at most max_bytes, into a new NUL-terminated
 * buffer (*ret, the caller frees it; *ret_len its length without the NUL,
 * ret_len may be NULL).  The file is opened close-on-exec; it need not be a
 * regular file (a pipe, /dev/stdin).  Returns 0, -errno when it cannot be
 * opened, -EFBIG when it holds more than max_bytes, -EIO on a read error,
 * -ENOMEM.  Nothing is written on failure.
 */
int pk_read_small_file(const char *path, size_t max_bytes, char **ret, size_t *ret_len);
/*
 * The rest of the open stream f (stdin, a pipe, a file), as above: at most
 * max_bytes into a new NUL-terminated buffer.  size_hint (a regular file's
 * size, or 0) sizes the first allocation, so a file of that size is read in
 * one; -EFBIG, -EIO or -ENOMEM, nothing written on failure.  f stays open.
 */
int pk_read_stream(FILE *f, size_t size_hint, size_t max_bytes, char **ret, size_t *ret_len);
/*
 * An input file as the programs take one (object files, traces): path, or
 * standard input for "-", as pk_read_small_file() reads it, but a directory
 * is refused (-EISDIR: bad input, not a read error) and a regular file over
 * max_bytes before it is read (-EFBIG); its size sizes the buffer (else
 * 64 KiB, a pipe's).  Standard input is read, not closed.
 */
int pk_read_input(const char *path, size_t max_bytes, char **ret, size_t *ret_len);

#endif
