/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of kernel/podctl/board_show.c: the summary `podctl board show` prints
 * says what the loader understood (cubes, hosts, chips, levels, host names).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

#define BOARDS PODKERNEL_SRCDIR "/boards"

static struct topo_board *load(const char *file)
{
	struct topo_board *b = topo_board_new();
	char path[512], err[TOPO_ERR_MAX] = "";

	snprintf(path, sizeof(path), BOARDS "/%s", file);
	ck_assert_msg(topo_board_load_file(b, path, err, sizeof(err)) == 0, "%s", err);
	return b;
}

START_TEST(show)
{
	struct topo_board *b = load("tpu-superslice.yaml");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_int_eq(podctl_board_show(f, b, 0), 0);
	fclose(f);
	ck_assert_msg(strstr(text, "cubes:        16 per superslice\n"), "%s", text);
	ck_assert(strstr(text, "cluster:      512 hosts, 2048 chips\n"));
	ck_assert(
	    strstr(text, "topology.podkernel.dev/cube                  32 domains, 16 hosts each"));
	ck_assert(strstr(text, "hostnames:    tpu-ss0-h0 .. tpu-ss1-h255"));
	free(text);
	topo_board_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("podctl_board_show");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, show);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
