/* SPDX-License-Identifier: Apache-2.0 */
/* libtopo's version string. */
#include "topology/topology.h"

const char *topo_version(void)
{
	return PODKERNEL_VERSION;
}
