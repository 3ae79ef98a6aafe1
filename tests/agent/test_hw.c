/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hw.c — accelerator classification and NUMA discovery on real hwloc XML
 * exports (tests/fixtures/hwloc and its README's expected answers), the
 * devices annotation built from them, and the size and nesting checks of an
 * XML file before hwloc reads it.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

static char fixture[512];

static const char *fx(const char *name)
{
	const char *dir = getenv("PODKERNEL_HWLOC_FIXTURES");

	snprintf(fixture, sizeof(fixture), "%s/%s",
		 dir ? dir : PODKERNEL_SRCDIR "/tests/fixtures/hwloc", name);
	return fixture;
}

static void load(const char *name, struct agent_hw *hw)
{
	char err[512] = "";
	int r = agent_hw_discover(fx(name), NULL, hw, err, sizeof(err));

	ck_assert_msg(r == 0, "%s: %d %s", name, r, err);
}

static int count_numa(const struct agent_hw *hw, int numa)
{
	int n = 0;

	for (size_t i = 0; i < hw->naccels; i++)
		n += hw->accels[i].numa == numa;
	return n;
}

START_TEST(test_class_rules)
{
	ck_assert(agent_pci_is_accel(0x0302, 0x10de, 0x15f9, NULL));
	ck_assert(agent_pci_is_accel(0x0380, 0x1002, 0x740f, NULL));
	ck_assert(agent_pci_is_accel(0x1200, 0x1ae0, 0x0063, NULL));
	ck_assert(!agent_pci_is_accel(0x0300, 0x102b, 0x0534, NULL)); /* VGA */
	ck_assert(!agent_pci_is_accel(0x0200, 0x8086, 0x10ed, NULL)); /* NIC */
	ck_assert(!agent_pci_is_accel(0x0b40, 0x1ae0, 0x0063, NULL)); /* IDs need a board */
}
END_TEST

START_TEST(test_power8_gpus_count_once)
{
	struct agent_hw hw;

	load("power8gpudistances.xml", &hw);
	ck_assert_int_eq(hw.numa_count, 2);
	/* each GPU has cuda, opencl and nvml OS devices: still 4 */
	ck_assert_uint_eq(hw.naccels, 4);
	for (size_t i = 0; i < hw.naccels; i++) {
		ck_assert_uint_eq(hw.accels[i].vendor, 0x10de);
		ck_assert_uint_eq(hw.accels[i].device, 0x15f9);
		ck_assert_uint_eq(hw.accels[i].class_id, 0x0302);
	}
	ck_assert_int_eq(count_numa(&hw, 0), 2);
	ck_assert_int_eq(count_numa(&hw, 1), 2);
	ck_assert_str_eq(hw.accels[0].bus_id, "0002:01:00.0");
	ck_assert_uint_gt(hw.numa_memory[0], 60ull << 30);
	ck_assert_uint_eq(hw.memory, hw.numa_memory[0] + hw.numa_memory[1]);
	agent_hw_clear(&hw);
}
END_TEST

START_TEST(test_24em64t_vga_excluded)
{
	struct agent_hw hw;

	load("24em64t-2n6c2t-pci.xml", &hw);
	ck_assert_int_eq(hw.numa_count, 2);
	ck_assert_int_eq(hw.packages, 2);
	ck_assert_int_eq(hw.cores, 12);
	ck_assert_int_eq(hw.pus, 24);
	ck_assert_uint_eq(hw.naccels, 3);
	ck_assert_int_eq(count_numa(&hw, 0), 1);
	ck_assert_int_eq(count_numa(&hw, 1), 2);
	for (size_t i = 0; i < hw.naccels; i++) {
		ck_assert_uint_eq(hw.accels[i].vendor, 0x10de);
		ck_assert_uint_eq(hw.accels[i].device, 0x06d2);
		ck_assert_str_ne(hw.accels[i].bus_id, "0000:01:03.0"); /* the ATI VGA */
	}
	agent_hw_clear(&hw);
}
END_TEST

START_TEST(test_many_vfs_no_accels)
{
	struct agent_hw hw;

	load("16intel64-manyVFs.xml", &hw);
	ck_assert_int_eq(hw.numa_count, 2);
	ck_assert_uint_eq(hw.naccels, 0);
	ck_assert_uint_eq(hw.pci_count, 18); /* every SR-IOV function was seen */
	agent_hw_clear(&hw);
}
END_TEST

START_TEST(test_192_numa_matrox_excluded)
{
	struct agent_hw hw;

	load("192em64t-24n8c2t.xml", &hw);
	ck_assert_int_eq(hw.numa_count, 24);
	ck_assert_int_eq(hw.pus, 384);
	ck_assert_uint_eq(hw.naccels, 0);
	ck_assert_uint_eq(hw.pci_count, 12);
	agent_hw_clear(&hw);
}
END_TEST

START_TEST(test_bad_xml)
{
	struct agent_hw hw = {.numa_count = 42};
	char err[512] = "";
	char path[] = "/tmp/podagent-bad-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("<topology><object type=", f);
	fclose(f);
	ck_assert_int_eq(agent_hw_discover(path, NULL, &hw, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_int_eq(hw.numa_count, 42); /* untouched on failure */
	unlink(path);
	ck_assert_int_eq(agent_hw_discover("/nonexistent.xml", NULL, &hw, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent.xml"));
}
END_TEST

/* Write text (repeated parts: head, mid x n, tail) to a temp file; read it. */
static int xml_read(const char *head, const char *mid, int n, const char *tail, char *err,
		    size_t errlen)
{
	char path[] = "/tmp/podagent-xml-XXXXXX", *buf = NULL;
	int fd = mkstemp(path), r;
	FILE *f = fdopen(fd, "w");
	size_t len = 0;

	ck_assert_ptr_nonnull(f);
	fputs(head, f);
	for (int i = 0; i < n; i++)
		fputs(mid, f);
	fputs(tail, f);
	fclose(f);
	r = agent_hwloc_xml_read(path, &buf, &len, err, errlen);
	if (r == 0)
		ck_assert_uint_eq(strlen(buf), len);
	free(buf);
	unlink(path);
	return r;
}

/*
 * --hwloc-xml is checked before libhwloc parses it (its parser recursed to a
 * crash on 100,000 nested elements and read /dev/zero without end): element
 * nesting over AGENT_HWLOC_XML_MAX_DEPTH and files over
 * AGENT_HWLOC_XML_MAX_BYTES are -EINVAL with the file (and position) named.
 * Markup that is not an element (comments, CDATA, a DOCTYPE subset, quoted
 * attribute values) does not count as nesting.
 */
START_TEST(test_xml_limits)
{
	char err[512], deep[64];
	int max = AGENT_HWLOC_XML_MAX_DEPTH;

	ck_assert_int_eq(xml_read("<?xml version=\"1.0\"?>\n", "<object type=\"Group\">", max + 1,
				  "", err, sizeof(err)),
			 -EINVAL);
	snprintf(deep, sizeof(deep), "nested deeper than %d levels", max);
	ck_assert_ptr_nonnull(strstr(err, deep));
	ck_assert_ptr_nonnull(strstr(err, ":2:"));
	/* exactly the limit, closed, with self-closing children: fine */
	ck_assert_int_eq(xml_read("", "<o a=\"x\">", max, "<i/></o>", err, sizeof(err)), 0);
	/* quoted > and />, comments, CDATA and a DOCTYPE subset are not elements */
	ck_assert_int_eq(
	    xml_read("<!DOCTYPE t [<!ENTITY e \"<a>\">]><t>",
		     "<!-- <a><b> --><![CDATA[<c><d>]]><?pi <e> ?><i v=\"a>b\" w='<f>'/>", 3 * max,
		     "</t>", err, sizeof(err)),
	    0);
	ck_assert_int_eq(xml_read("<t v=\"/>\">", "<a>", max - 1, "", err, sizeof(err)), 0);
	ck_assert_int_eq(xml_read("<t v=\"/>\">", "<a>", max, "", err, sizeof(err)), -EINVAL);
	/* markup never closed */
	ck_assert_int_eq(xml_read("<t>\n  <!-- never", "", 0, "", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":2:3: not an hwloc XML export: markup not closed"));
	/* size: a regular file by its size, a stream after the limit */
	ck_assert_int_eq(xml_read("", "                ", AGENT_HWLOC_XML_MAX_BYTES / 16 + 1, "",
				  err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "larger than 16777216 bytes"));
	ck_assert_int_eq(
	    agent_hw_discover("/dev/zero", NULL, &(struct agent_hw){0}, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "/dev/zero: larger than 16777216 bytes, not an hwloc XML export");
}
END_TEST

START_TEST(test_devices_annotation)
{
	struct agent_hw hw;
	json_t *arr, *o;

	load("24em64t-2n6c2t-pci.xml", &hw);
	arr = agent_devices_json(hw.accels, hw.naccels);
	ck_assert_uint_eq(json_array_size(arr), 3);
	o = json_array_get(arr, 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "vendorId")), "10de");
	ck_assert_str_eq(json_string_value(json_object_get(o, "deviceId")), "06d2");
	ck_assert_int_eq(strlen(json_string_value(json_object_get(o, "pciBusId"))), 12);
	ck_assert(json_is_integer(json_object_get(o, "numaNode")));
	json_decref(arr);
	agent_hw_clear(&hw);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent-hw");
	TCase *tc = tcase_create("hwloc");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_class_rules);
	tcase_add_test(tc, test_power8_gpus_count_once);
	tcase_add_test(tc, test_24em64t_vga_excluded);
	tcase_add_test(tc, test_many_vfs_no_accels);
	tcase_add_test(tc, test_192_numa_matrox_excluded);
	tcase_add_test(tc, test_bad_xml);
	tcase_add_test(tc, test_xml_limits);
	tcase_add_test(tc, test_devices_annotation);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
