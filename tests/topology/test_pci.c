/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of topology/pci.c: the accelerator.podkernel.dev/vendor label values. */
#include <check.h>
#include <string.h>

#include "topology/topology.h"

START_TEST(known_vendors)
{
	char buf[TOPO_PCI_VENDOR_LABEL_MAX];

	ck_assert_str_eq(topo_pci_vendor_label(0x10de, buf), "nvidia");
	ck_assert_str_eq(topo_pci_vendor_label(0x1002, buf), "amd");
	ck_assert_str_eq(topo_pci_vendor_label(0x1022, buf), "amd");
	ck_assert_str_eq(topo_pci_vendor_label(0x1ae0, buf), "google");
	ck_assert_str_eq(topo_pci_vendor_label(0x8086, buf), "intel");
}
END_TEST

START_TEST(other_vendors_are_hex)
{
	char buf[TOPO_PCI_VENDOR_LABEL_MAX];

	ck_assert_str_eq(topo_pci_vendor_label(0x15b3, buf), "15b3");
	ck_assert_str_eq(topo_pci_vendor_label(0x00ab, buf), "00ab");
	/* Only the 16-bit ID is ever written, and it is a valid label value. */
	ck_assert_str_eq(topo_pci_vendor_label(0x1d0f1d0f, buf), "1d0f");
	ck_assert(topo_label_value_valid(buf, NULL, 0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pci");
	TCase *tc = tcase_create("vendors");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, known_vendors);
	tcase_add_test(tc, other_vendors_are_hex);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
