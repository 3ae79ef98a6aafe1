/* SPDX-License-Identifier: Apache-2.0 */
/* process.c — process_* metrics from /proc/self, as Prometheus clients name them. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kernel/lib/process.h"

static unsigned long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned long n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0; /* not the one opendir holds */
}

/* Seconds since the epoch at which the process started (/proc/self/stat field 22). */
static double start_time(void)
{
	char buf[1024], *p;
	unsigned long long ticks = 0;
	double boot = 0, up = 0;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	struct timespec now;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command may hold spaces */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		ticks = strtoull(p + 1, NULL, 10);
	f = fopen("/proc/uptime", "re");
	if (f && fscanf(f, "%lf", &up) != 1)
		up = 0;
	if (f)
		fclose(f);
	clock_gettime(CLOCK_REALTIME, &now);
	boot = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - up;
	return boot + (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

void pk_process_metrics(FILE *f, const char *version)
{
	struct rusage ru;
	struct rlimit rl;
	unsigned long vsize_pages = 0, rss_pages = 0;
	FILE *statm = fopen("/proc/self/statm", "re");
	long page = sysconf(_SC_PAGESIZE);

	if (statm && fscanf(statm, "%lu %lu", &vsize_pages, &rss_pages) != 2)
		vsize_pages = rss_pages = 0;
	if (statm)
		fclose(statm);
	getrusage(RUSAGE_SELF, &ru);
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		rl.rlim_cur = 0;
	fprintf(f,
		"# HELP process_cpu_seconds_total Total user and system CPU time spent in "
		"seconds.\n"
		"# TYPE process_cpu_seconds_total counter\n"
		"process_cpu_seconds_total %.3f\n"
		"# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
		"# TYPE process_resident_memory_bytes gauge\n"
		"process_resident_memory_bytes %lu\n"
		"# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
		"# TYPE process_virtual_memory_bytes gauge\n"
		"process_virtual_memory_bytes %lu\n"
		"# HELP process_open_fds Number of open file descriptors.\n"
		"# TYPE process_open_fds gauge\n"
		"process_open_fds %lu\n"
		"# HELP process_max_fds Maximum number of open file descriptors.\n"
		"# TYPE process_max_fds gauge\n"
		"process_max_fds %llu\n"
		"# HELP process_start_time_seconds Start time of the process since unix epoch in "
		"seconds.\n"
		"# TYPE process_start_time_seconds gauge\n"
		"process_start_time_seconds %.2f\n"
		"# HELP podkernel_build_info The build: 1, labelled with its version.\n"
		"# TYPE podkernel_build_info gauge\n"
		"podkernel_build_info{version=\"%s\"} 1\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		rss_pages * (unsigned long)page, vsize_pages * (unsigned long)page, open_fds(),
		(unsigned long long)rl.rlim_cur, start_time(), version);
}
