// SPDX-License-Identifier: GPL-2.0-only
/*
 * sys/gpu_mode and sys/numa_maps against fixture trees: the NVIDIA
 * driver's params file in each of its modes (CDMM chosen, CDMM by the
 * driver's default, NUMA chosen, a driver older than the choice, no
 * driver), and a numa_maps with base pages, a hugetlb mapping and 64 KiB
 * pages summed per node.
 *   test_gpu_mode FIXTURES_DIR
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "gpu_mode.h"
#include "numa_maps.h"
#include "test.h"

static const char *fixtures;

static enum gpu_mode mode_of(const char *tree, char *why, size_t size)
{
	char root[PATH_MAX];
	struct gpu_mode_info gm;

	snprintf(root, sizeof(root), "%s/gpu_mode/%s", fixtures, tree);
	CHECK_EQ_INT(gpu_mode_read(root, &gm), 0);
	snprintf(why, size, "%s", gm.why);
	return gm.mode;
}

static void test_modes(void)
{
	char why[160];

	CHECK_EQ_INT(mode_of("cdmm", why, sizeof(why)), GPU_MODE_CDMM);
	CHECK_EQ_STR(why, "CoherentGPUMemoryMode \"driver\"");
	CHECK_EQ_INT(mode_of("cdmm-default", why, sizeof(why)), GPU_MODE_CDMM);
	CHECK_EQ_STR(why, "EnableUserNUMAManagement 0, CoherentGPUMemoryMode unset");
	CHECK_EQ_INT(mode_of("numa", why, sizeof(why)), GPU_MODE_NUMA);
	CHECK_EQ_STR(why, "CoherentGPUMemoryMode \"numa\"");
	CHECK_EQ_INT(mode_of("old-driver", why, sizeof(why)), GPU_MODE_NUMA);
	CHECK_EQ_INT(mode_of("none", why, sizeof(why)), GPU_MODE_NONE);
	CHECK_EQ_STR(gpu_mode_name(GPU_MODE_CDMM), "cdmm");
}

static void test_numa_maps(void)
{
	char root[PATH_MAX];
	uint64_t b;

	snprintf(root, sizeof(root), "%s/numa_maps", fixtures);
	/* node 1: 256000 + 1024 base pages, 2 hugetlb pages of 2 MiB */
	CHECK_EQ_INT(numa_maps_node_bytes(root, 4242, 1, &b), 0);
	CHECK_EQ_U64(b, 257024ull * 4096 + 2ull * 2048 * 1024);
	/* node 0: 6190 base pages, 37 pages of 64 KiB */
	CHECK_EQ_INT(numa_maps_node_bytes(root, 4242, 0, &b), 0);
	CHECK_EQ_U64(b, 6190ull * 4096 + 37ull * 65536);
	CHECK_EQ_INT(numa_maps_node_bytes(root, 4242, 5, &b), 0);
	CHECK_EQ_U64(b, 0);
	CHECK_EQ_INT(numa_maps_node_bytes(root, 4243, 1, &b), -ESRCH);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_gpu_mode FIXTURES_DIR\n");
		return 2;
	}
	fixtures = argv[1];
	RUN(test_modes);
	RUN(test_numa_maps);
	return TEST_EXIT();
}
