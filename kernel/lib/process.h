/* SPDX-License-Identifier: Apache-2.0 */
/*
 * process.h — the process_* metrics every Prometheus client library exports
 * (CPU seconds, resident and virtual memory, open and maximum file
 * descriptors, start time), read from /proc/self, and the program's
 * podkernel_build_info line.
 */
#ifndef PODKERNEL_KERNEL_LIB_PROCESS_H
#define PODKERNEL_KERNEL_LIB_PROCESS_H

#include <stdio.h>

/* Write the process_* metrics and podkernel_build_info{version=VERSION} 1 to f. */
void pk_process_metrics(FILE *f, const char *version);

#endif
