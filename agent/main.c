/* SPDX-License-Identifier: Apache-2.0 */
/* podagent — entry point (grows with its issue). */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("podagent %s\n", PODKERNEL_VERSION);
			return 0;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("Usage: podagent [OPTIONS]\n");
			return 0;
		}
		fprintf(stderr, "podagent: unknown option '%s'\n", argv[i]);
		return 2;
	}
	return 0;
}
