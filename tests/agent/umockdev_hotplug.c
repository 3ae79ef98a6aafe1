/* SPDX-License-Identifier: Apache-2.0 */
/*
 * umockdev_hotplug.c — drives podagent's hotplug path through a umockdev
 * testbed (built and run by test_udev.sh under umockdev-wrapper).
 *
 * Loads a recorded device tree, starts `podagent` as a daemon writing an NFD
 * file, then removes one accelerator (uevent "remove") and adds another
 * (uevent "add"), each time waiting for the file to show the new count
 * within a few seconds.  Finally SIGTERM must end the daemon with exit 0.
 *
 *   umockdev_hotplug PODAGENT FIXTURE NFD_DIR
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <umockdev.h>
#include <unistd.h>

static const char new_accel[] = "P: /devices/pci0000:00/0000:00:08.0\n"
				"E: PCI_CLASS=120000\n"
				"E: PCI_ID=1AE0:005E\n"
				"E: PCI_SLOT_NAME=0000:00:08.0\n"
				"E: SUBSYSTEM=pci\n"
				"A: class=0x120000\n"
				"A: device=0x005e\n"
				"A: numa_node=1\n"
				"A: vendor=0x1ae0\n";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait until the NFD file holds want; print how long it took. */
static int wait_for(const char *file, const char *want, double timeout)
{
	double start = now();
	char buf[65536];

	while (now() - start < timeout) {
		FILE *f = fopen(file, "r");

		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			buf[n] = '\0';
			fclose(f);
			if (strstr(buf, want)) {
				printf("hotplug: %.*s after %.2f s\n", (int)strcspn(want, "\n"),
				       want, now() - start);
				return 0;
			}
		}
		usleep(50 * 1000);
	}
	fprintf(stderr, "hotplug: %.*s not in %s after %.0f s\n", (int)strcspn(want, "\n"), want,
		file, timeout);
	return -1;
}

int main(int argc, char **argv)
{
	UMockdevTestbed *tb;
	GError *error = NULL;
	char file[4096];
	pid_t pid;
	int status, rc = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PODAGENT FIXTURE NFD_DIR\n", argv[0]);
		return 2;
	}
	tb = umockdev_testbed_new();
	if (!umockdev_testbed_add_from_file(tb, argv[2], &error)) {
		fprintf(stderr, "hotplug: %s: %s\n", argv[2], error->message);
		return 1;
	}
	snprintf(file, sizeof(file), "%s/podagent", argv[3]);
	pid = fork();
	if (pid == 0) {
		execl(argv[1], argv[1], "--no-netlink", "--node-name", "tpu-h0", "--nfd-dir",
		      argv[3], "--debounce-ms", "300", "--interval", "3600", (char *)NULL);
		_exit(127);
	}
	if (wait_for(file, "accelerator.podkernel.dev/count=4\n", 20) < 0)
		goto out;

	/* unplug the last accelerator: event first, then the device goes */
	umockdev_testbed_uevent(tb, "/sys/devices/pci0000:00/0000:00:07.0", "remove");
	umockdev_testbed_remove_device(tb, "/sys/devices/pci0000:00/0000:00:07.0");
	if (wait_for(file, "accelerator.podkernel.dev/count=3\n", 10) < 0)
		goto out;

	/* plug in a new one */
	if (!umockdev_testbed_add_from_string(tb, new_accel, &error)) {
		fprintf(stderr, "hotplug: %s\n", error->message);
		goto out;
	}
	umockdev_testbed_uevent(tb, "/sys/devices/pci0000:00/0000:00:08.0", "add");
	if (wait_for(file, "accelerator.podkernel.dev/count=4\n", 10) < 0)
		goto out;
	rc = 0;
out:
	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) == pid && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		fprintf(stderr, "hotplug: podagent did not exit cleanly on SIGTERM (status %d)\n",
			status);
		rc = 1;
	}
	g_object_unref(tb);
	return rc;
}
