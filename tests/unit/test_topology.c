// SPDX-License-Identifier: GPL-2.0-only
/*
 * sys/topo_read.c on fixture sysfs trees (tests/fixtures/topology/NAME) and
 * core/tiers.c on what it reads: single node, DRAM + CXL lumped by the kernel
 * and split by HMAT, DRAM + CXL in two kernel tiers, a Grace-Hopper-like
 * machine with a GPU node, and all nodes in one tier.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "topo_read.h"
#include "test.h"
#include "tiers.h"

static const char *fixtures;
static const struct tiers_config no_config = {
	.default_low_watermark_pct = 2,
	.default_high_watermark_pct = 4,
};

static int load(const char *name, struct topology *topo)
{
	char root[4096];

	snprintf(root, sizeof(root), "%s/%s", fixtures, name);
	return topo_read(root, 4096, topo);
}

static void test_single(void)
{
	struct topology t;

	CHECK_EQ_INT(load("single", &t), 0);
	CHECK_EQ_INT(t.nr_nodes, 1);
	CHECK_EQ_INT(t.nodes[0].id, 0);
	CHECK_EQ_INT(t.nodes[0].nr_cpus, 4);
	CHECK(t.nodes[0].has_cpus && t.nodes[0].has_memory);
	CHECK_EQ_U64(t.nodes[0].total_bytes, 16384000ull * 1024);
	CHECK_EQ_U64(t.nodes[0].free_bytes, 8192000ull * 1024);
	CHECK_EQ_INT(t.nodes[0].kernel_tier, 4);
	CHECK_EQ_INT(t.distance[0][0], 10);
	/* zoneinfo high: 12 + 500 + 1488 pages */
	CHECK_EQ_U64(t.nodes[0].high_wmark_bytes,
		     2000ull * sysconf(_SC_PAGESIZE));
	CHECK_EQ_INT(t.nodes[0].read_latency_ns, 0);
	CHECK_EQ_INT(tiers_derive(&t, &no_config, NULL), 0);
	CHECK_EQ_INT(t.nr_tiers, 1);
	CHECK_EQ_STR(t.tiers[0].name, "tier0");
	CHECK_EQ_INT(t.tiers[0].nr_nodes, 1);
	CHECK_EQ_INT(t.tiers[0].low_watermark_pct, 2);
	CHECK_EQ_INT(t.tiers[0].high_watermark_pct, 4);
	CHECK_EQ_INT(t.tier_source, TOPO_TIER_KERNEL);
	CHECK(!t.kernel_tiers_flat);
}

static void test_dram_cxl_lumped(void)
{
	struct topology t;

	CHECK_EQ_INT(load("dram-cxl", &t), 0);
	CHECK_EQ_INT(t.nr_nodes, 2);
	CHECK(!t.nodes[1].has_cpus && t.nodes[1].has_memory);
	CHECK_EQ_INT(t.nodes[0].kernel_tier, 4);
	CHECK_EQ_INT(t.nodes[1].kernel_tier, 4);
	CHECK_EQ_INT(t.nodes[1].read_latency_ns, 400);
	CHECK_EQ_INT(t.nodes[1].write_bandwidth_mbps, 5120);
	CHECK_EQ_INT(t.distance[0][1], 20);
	CHECK_EQ_INT(t.distance[1][0], 20);
	CHECK_EQ_U64(t.nodes[1].high_wmark_bytes, 0); /* no zoneinfo: unknown */
	CHECK_EQ_INT(tiers_derive(&t, &no_config, NULL), 0);
	CHECK_EQ_INT(t.nr_tiers, 2);
	CHECK_EQ_INT(t.tiers[0].nodes[0], 0);
	CHECK_EQ_INT(t.tiers[1].nodes[0], 1);
	CHECK_EQ_INT(t.nodes[1].tier, 1);
	CHECK_EQ_INT(t.tier_source, TOPO_TIER_HMAT);
	CHECK(t.kernel_tiers_flat);
}

static void test_dram_cxl_kmem(void)
{
	struct topology t;

	CHECK_EQ_INT(load("dram-cxl-kmem", &t), 0);
	CHECK_EQ_INT(t.nodes[1].kernel_tier, 22);
	CHECK_EQ_INT(tiers_derive(&t, &no_config, NULL), 0);
	CHECK_EQ_INT(t.nr_tiers, 2);
	CHECK_EQ_INT(t.nodes[0].tier, 0);
	CHECK_EQ_INT(t.nodes[1].tier, 1);
	CHECK_EQ_INT(t.tier_source, TOPO_TIER_KERNEL);
	CHECK(!t.kernel_tiers_flat);
}

static void test_grace_hopper(void)
{
	struct tiers_config cfg = no_config;
	struct topology t;
	int bad = 0;

	CHECK_EQ_INT(load("grace-hopper", &t), 0);
	CHECK_EQ_INT(t.nodes[0].nr_cpus, 72);
	CHECK(!t.nodes[1].has_cpus);
	/* From the CPUs, HBM over C2C costs more than LPDDR: HMAT splits. */
	CHECK_EQ_INT(tiers_derive(&t, &cfg, NULL), 0);
	CHECK_EQ_INT(t.nr_tiers, 2);
	CHECK_EQ_INT(t.nodes[1].tier, 1);
	CHECK(!t.nodes[1].gpu);

	/* The config marks node 1 GPU-coherent and puts it first. */
	cfg.nr_gpu_nodes = 1;
	cfg.gpu_nodes[0] = 1;
	cfg.nr_tiers = 2;
	cfg.tiers[0] = (struct tier_spec){ .name = "hbm",
					   .nr_nodes = 1,
					   .nodes = { 1 },
					   .low_watermark_pct = 5,
					   .high_watermark_pct = 10 };
	cfg.tiers[1] = (struct tier_spec){ .name = "lpddr",
					   .nr_nodes = 1,
					   .nodes = { 0 } };
	CHECK_EQ_INT(tiers_derive(&t, &cfg, NULL), 0);
	CHECK_EQ_INT(t.tier_source, TOPO_TIER_CONFIG);
	CHECK(t.nodes[1].gpu);
	CHECK(!t.nodes[0].gpu);
	CHECK_EQ_INT(t.nodes[1].tier, 0);
	CHECK_EQ_STR(t.tiers[0].name, "hbm");
	CHECK_EQ_INT(t.tiers[0].high_watermark_pct, 10);
	CHECK(t.kernel_tiers_flat);

	/* A node the machine does not have. */
	cfg.tiers[1].nodes[0] = 7;
	CHECK_EQ_INT(tiers_derive(&t, &cfg, &bad), -ENODEV);
	CHECK_EQ_INT(bad, 7);
	cfg.tiers[1].nodes[0] = 0;
	cfg.gpu_nodes[0] = 9;
	CHECK_EQ_INT(tiers_derive(&t, &cfg, &bad), -ENODEV);
	CHECK_EQ_INT(bad, 9);
}

static void test_flat(void)
{
	struct tiers_config cfg = no_config;
	struct topology t;
	int bad = 0;

	CHECK_EQ_INT(load("flat", &t), 0);
	CHECK_EQ_INT(t.nr_nodes, 3);
	CHECK(!t.nodes[2].has_memory);
	CHECK_EQ_INT(t.nodes[2].nr_cpus, 2);
	CHECK_EQ_INT(t.nodes[2].kernel_tier, -1);
	CHECK_EQ_INT(tiers_derive(&t, &cfg, NULL), 0);
	/* Nothing tells nodes 0 and 1 apart: one tier, not flat. */
	CHECK_EQ_INT(t.nr_tiers, 1);
	CHECK_EQ_INT(t.tiers[0].nr_nodes, 2);
	CHECK_EQ_INT(t.nodes[2].tier, -1);
	CHECK(!t.kernel_tiers_flat);

	/* The config separates them: flat, and the config wins. */
	cfg.nr_tiers = 2;
	cfg.tiers[0] = (struct tier_spec){ .name = "near",
					   .nr_nodes = 1,
					   .nodes = { 0 } };
	cfg.tiers[1] = (struct tier_spec){ .name = "far",
					   .nr_nodes = 1,
					   .nodes = { 1 } };
	CHECK_EQ_INT(tiers_derive(&t, &cfg, NULL), 0);
	CHECK_EQ_INT(t.nr_tiers, 2);
	CHECK_EQ_INT(t.nodes[1].tier, 1);
	CHECK(t.kernel_tiers_flat);
	/* A memoryless node cannot be in a tier. */
	cfg.tiers[1].nodes[0] = 2;
	CHECK_EQ_INT(tiers_derive(&t, &cfg, &bad), -ENODEV);
	CHECK_EQ_INT(bad, 2);
}

static void test_missing(void)
{
	struct topology t;

	CHECK_EQ_INT(load("does-not-exist", &t), -ENOENT);
}

int main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "tests/fixtures/topology";
	RUN(test_single);
	RUN(test_dram_cxl_lumped);
	RUN(test_dram_cxl_kmem);
	RUN(test_grace_hopper);
	RUN(test_flat);
	RUN(test_missing);
	return TEST_EXIT();
}
