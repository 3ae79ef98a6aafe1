/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_file.c — the whole-file reader: a file that fits exactly, one byte
 * over, empty, missing, a directory (a read error), a device without end,
 * a pipe (no size to trust), and the descriptor it reads through being
 * close-on-exec and closed afterwards; an open stream read from where it
 * stands, with a size hint right, short or long.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/lib/file.h"

static char dir[256], path[300];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pk-test-file.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

static void put(size_t n)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	fclose(f);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

START_TEST(test_fits_and_limit)
{
	char *buf = NULL;
	size_t len = 0;
	int before = open_fds();

	/* larger than the first step, so the buffer grows */
	put(10000);
	ck_assert_int_eq(pk_read_small_file(path, 10000, &buf, &len), 0);
	ck_assert_uint_eq(len, 10000);
	ck_assert_int_eq(buf[9999], 'a' + 9999 % 26);
	ck_assert_int_eq(buf[10000], '\0');
	free(buf);
	buf = NULL;
	ck_assert_int_eq(pk_read_small_file(path, 9999, &buf, &len), -EFBIG);
	ck_assert_ptr_null(buf);
	ck_assert_uint_eq(len, 10000); /* untouched on failure */
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* The rest of an open stream: the hint sizes the first step only; the limit holds. */
START_TEST(test_stream)
{
	static const size_t hints[] = {0, 10, 10000, 20000};
	char *buf = NULL;
	size_t len = 0;

	put(10000);
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		FILE *f = fopen(path, "r");

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(fseek(f, 100, SEEK_SET), 0);
		ck_assert_int_eq(pk_read_stream(f, hints[i], 9900, &buf, &len), 0);
		ck_assert_uint_eq(len, 9900);
		ck_assert_int_eq(buf[0], 'a' + 100 % 26);
		ck_assert_int_eq(buf[9900], '\0');
		free(buf);
		buf = NULL;
		rewind(f);
		ck_assert_int_eq(pk_read_stream(f, hints[i], 9999, &buf, &len), -EFBIG);
		ck_assert_ptr_null(buf);
		fclose(f);
	}
}
END_TEST

START_TEST(test_empty_missing_directory)
{
	char *buf = NULL;

	put(0);
	ck_assert_int_eq(pk_read_small_file(path, 16, &buf, NULL), 0);
	ck_assert_str_eq(buf, "");
	free(buf);
	buf = NULL;
	ck_assert_int_eq(pk_read_small_file("/nonexistent/f", 16, &buf, NULL), -ENOENT);
	ck_assert_int_eq(pk_read_small_file(dir, 16, &buf, NULL), -EIO);
	ck_assert_int_eq(pk_read_small_file("/dev/zero", 65536, &buf, NULL), -EFBIG);
	ck_assert_ptr_null(buf);
}
END_TEST

/* An input file: a directory is bad input, a regular file too large is refused unread. */
START_TEST(test_input)
{
	char *buf = NULL;
	size_t len = 0;

	put(10000);
	ck_assert_int_eq(pk_read_input(path, 10000, &buf, &len), 0);
	ck_assert_uint_eq(len, 10000);
	free(buf);
	buf = NULL;
	ck_assert_int_eq(pk_read_input(path, 9999, &buf, &len), -EFBIG);
	ck_assert_int_eq(pk_read_input(dir, 16, &buf, NULL), -EISDIR);
	ck_assert_int_eq(pk_read_input("/nonexistent/f", 16, &buf, NULL), -ENOENT);
	ck_assert_int_eq(pk_read_input("/dev/zero", 65536, &buf, NULL), -EFBIG);
	ck_assert_ptr_null(buf);
}
END_TEST

/* The writer end of a FIFO: sees the reader's descriptor, then feeds it. */
struct feed {
	char fifo[300];
	int reader_flags;
};

/*
 * The reader's descriptor, as its flags in fd->reader_flags: the FIFO's
 * rendezvous can wake this open before the reader's own open has put its
 * descriptor in the table, so the caller looks again until it is there.
 */
static void find_reader(struct feed *fd, int w)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char link[400], target[400], info[400], line[128];
		ssize_t n;
		FILE *f;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0 || atoi(e->d_name) == w)
			continue;
		target[n] = '\0';
		if (strcmp(target, fd->fifo) != 0)
			continue;
		snprintf(info, sizeof(info), "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(info, "re");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "flags: %o", (unsigned *)&fd->reader_flags) == 1)
				break;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

static void *feed_fifo(void *arg)
{
	struct feed *fd = arg;
	int w = open(fd->fifo, O_WRONLY | O_CLOEXEC);

	for (int tries = 0; fd->reader_flags == -1 && tries < 1000; tries++) {
		find_reader(fd, w);
		if (fd->reader_flags == -1)
			usleep(1000);
	}
	if (write(w, "token\n", 6) != 6)
		fd->reader_flags = -1;
	close(w);
	return NULL;
}

START_TEST(test_pipe_cloexec)
{
	struct feed fd = {.reader_flags = -1};
	pthread_t t;
	char *buf = NULL;
	size_t len = 0;

	snprintf(fd.fifo, sizeof(fd.fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fd.fifo, 0600), 0);
	pthread_create(&t, NULL, feed_fifo, &fd);
	ck_assert_int_eq(pk_read_small_file(fd.fifo, 64, &buf, &len), 0);
	pthread_join(t, NULL);
	unlink(fd.fifo);
	ck_assert_str_eq(buf, "token\n");
	ck_assert_uint_eq(len, 6);
	free(buf);
	ck_assert_int_ne(fd.reader_flags, -1);
	ck_assert(fd.reader_flags & O_CLOEXEC);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("file");
	TCase *tc = tcase_create("read");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fits_and_limit);
	tcase_add_test(tc, test_stream);
	tcase_add_test(tc, test_empty_missing_directory);
	tcase_add_test(tc, test_input);
	tcase_add_test(tc, test_pipe_cloexec);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
