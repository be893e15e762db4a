/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The machine's memory as tierd sees it: NUMA nodes and the tiers they form.
 *
 * sys/topo_read.c fills the node part from sysfs (a root directory is passed in,
 * so tests use fixture trees); core/tiers.c derives the tier part from the
 * kernel's memory tiers, HMAT attributes and the config.  Everything else in
 * core/ reads this struct and never writes it.
 *
 * Plain data, fixed size: a snapshot is copied, compared and kept per tick
 * without allocation.
 */
#ifndef TIERD_CORE_TOPOLOGY_H
#define TIERD_CORE_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>

#define TOPO_MAX_NODES 64
#define TOPO_MAX_TIERS 8

/* Where a node's tier came from, for status output and logs. */
enum topo_tier_source {
	TOPO_TIER_KERNEL,	/* /sys/devices/virtual/memory_tiering */
	TOPO_TIER_HMAT,		/* split by HMAT latency/bandwidth */
	TOPO_TIER_CONFIG,	/* the tiers: section of tierd.yaml */
};

struct topo_node {
	int id;
	bool has_cpus;
	bool has_memory;
	unsigned int nr_cpus;
	uint64_t total_bytes;
	uint64_t free_bytes;
	/* Watermark-relevant: the kernel's high watermark summed over zones, 0 if unknown. */
	uint64_t high_wmark_bytes;
	/* The kernel's memory_tierN id, -1 when the kernel exposes no tiers. */
	int kernel_tier;
	/* HMAT access0 attributes as the best initiator sees them; 0 = unknown. */
	uint32_t read_latency_ns;
	uint32_t write_latency_ns;
	uint32_t read_bandwidth_mbps;
	uint32_t write_bandwidth_mbps;
	/* Marked GPU-coherent (HBM) by the config. */
	bool gpu;
	/* tierd's tier index for this node: 0 is the fastest. */
	int tier;
};

struct topo_tier {
	char name[32];
	int nr_nodes;
	int nodes[TOPO_MAX_NODES];
	/* Percent of the tier's memory that should stay free. */
	unsigned int low_watermark_pct;
	unsigned int high_watermark_pct;
};

struct topology {
	int nr_nodes;
	struct topo_node nodes[TOPO_MAX_NODES];	/* indexed 0..nr_nodes-1, not by id */
	int nr_tiers;
	struct topo_tier tiers[TOPO_MAX_TIERS];	/* tiers[0] is the fastest */
	enum topo_tier_source tier_source;
	/* The kernel put every memory node in one tier though HMAT or the config
	 * says they differ: tierd acts on the better information and says so. */
	bool kernel_tiers_flat;
	/* SLIT distances, by node index; 0 when unknown. */
	uint8_t distance[TOPO_MAX_NODES][TOPO_MAX_NODES];
};

/* Index of node @id in @topo->nodes, or -1. */
static inline int topo_node_index(const struct topology *topo, int id)
{
	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].id == id)
			return i;
	return -1;
}

/*
 * The fast tier: the fastest tier with a node that is not a GPU node.  Tier 0 but where the configuration puts GPU nodes alone above
 * DRAM (Grace Hopper's HBM): a GPU node takes pages only through its
 * placement rule, so the fast tier for everything else, the hot threshold,
 * promotion's target and cgroups' fast-tier caps, is DRAM's.
 */
static inline int topo_fast_tier(const struct topology *topo)
{
	int fast = -1;

	for (int i = 0; i < topo->nr_nodes; i++) {
		const struct topo_node *n = &topo->nodes[i];

		if (!n->gpu && n->tier >= 0 && (fast < 0 || n->tier < fast))
			fast = n->tier;
	}
	return fast < 0 ? 0 : fast;
}

/* Node index @i is on the fast tier and not a GPU node. */
static inline bool topo_index_fast(const struct topology *topo, int i)
{
	return topo->nodes[i].tier == topo_fast_tier(topo) && !topo->nodes[i].gpu;
}

/* Node @id is on the fast tier and not a GPU node: where a range tierd
 * promoted may be taken as staying. */
static inline bool topo_node_fast(const struct topology *topo, int id)
{
	int i = topo_node_index(topo, id);

	return i >= 0 && topo_index_fast(topo, i);
}

#endif
