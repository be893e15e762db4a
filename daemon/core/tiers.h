/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tiers from three sources, best last:
 *
 *  1. the kernel's memory tiers (memory_tierN/nodelist, kernel_tier per node);
 *  2. HMAT: a kernel tier whose nodes differ in access0 performance is split;
 *  3. the config's tiers: section, which replaces both.
 *
 * The kernel often puts every boot-time memory node in the DRAM tier, CXL
 * and HBM included (only dax/kmem nodes get an HMAT-derived tier).  When
 * HMAT or the config separate nodes the kernel lumped together,
 * topology->kernel_tiers_flat is set so the daemon can say so.
 *
 * Performance of a node is compared the way the kernel computes abstract
 * distance: (read + write latency) / (read + write bandwidth).  Two nodes
 * belong to different tiers when that ratio differs by at least
 * TIERS_SPLIT_PCT percent, about one kernel tier chunk (128 of the DRAM
 * tier's 576 abstract distance units).
 */
#ifndef TIERD_CORE_TIERS_H
#define TIERD_CORE_TIERS_H

#include "topology.h"

#define TIERS_SPLIT_PCT 25

struct tier_spec {
	char name[32];
	int nr_nodes;
	int nodes[TOPO_MAX_NODES]; /* node ids */
	unsigned int low_watermark_pct;
	unsigned int high_watermark_pct;
};

struct tiers_config {
	int nr_tiers; /* 0: derive from kernel + HMAT */
	struct tier_spec tiers[TOPO_MAX_TIERS];
	/* Watermarks for derived tiers. */
	unsigned int default_low_watermark_pct;
	unsigned int default_high_watermark_pct;
	int nr_gpu_nodes;
	int gpu_nodes[TOPO_MAX_NODES]; /* node ids marked GPU-coherent */
};

/*
 * Fill the tier part of @topo (nodes[].tier, nodes[].gpu, tiers, nr_tiers,
 * tier_source, kernel_tiers_flat) from its node part and @cfg.
 * Nodes without memory get tier -1; so do memory nodes that config tiers
 * leave out (tierd does not manage them).
 *
 * Returns 0; -ENODEV with *ret_bad_node set when @cfg names a node that
 * does not exist or has no memory.
 */
int tiers_derive(struct topology *topo, const struct tiers_config *cfg,
		 int *ret_bad_node);

/* Abstract-distance-like cost of a node; 0 when HMAT says nothing. */
uint64_t tiers_node_cost(const struct topo_node *node);

#endif
