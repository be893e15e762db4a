// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tiers.h"

uint64_t tiers_node_cost(const struct topo_node *node)
{
	uint64_t lat = (uint64_t)node->read_latency_ns + node->write_latency_ns;
	uint64_t bw = (uint64_t)node->read_bandwidth_mbps +
		      node->write_bandwidth_mbps;

	if (!lat || !bw)
		return 0;
	/* Fixed point: latency in ns per GB/s, times 1000. */
	return lat * 1000000 / bw;
}

static void add_tier(struct topology *topo, const char *name, unsigned int low,
		     unsigned int high)
{
	struct topo_tier *t = &topo->tiers[topo->nr_tiers++];

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->low_watermark_pct = low;
	t->high_watermark_pct = high;
}

static void tier_add_node(struct topology *topo, int tier, int idx)
{
	struct topo_tier *t = &topo->tiers[tier];

	t->nodes[t->nr_nodes++] = topo->nodes[idx].id;
	topo->nodes[idx].tier = tier;
}

static int from_config(struct topology *topo, const struct tiers_config *cfg,
		       int *ret_bad)
{
	for (int t = 0; t < cfg->nr_tiers; t++) {
		const struct tier_spec *s = &cfg->tiers[t];

		add_tier(topo, s->name, s->low_watermark_pct,
			 s->high_watermark_pct);
		for (int k = 0; k < s->nr_nodes; k++) {
			int idx = topo_node_index(topo, s->nodes[k]);

			if (idx < 0 || !topo->nodes[idx].has_memory) {
				*ret_bad = s->nodes[k];
				return -ENODEV;
			}
			tier_add_node(topo, t, idx);
		}
	}
	topo->tier_source = TOPO_TIER_CONFIG;
	/* Flat if the config separates nodes the kernel keeps together. */
	for (int i = 0; i < topo->nr_nodes; i++)
		for (int j = i + 1; j < topo->nr_nodes; j++) {
			const struct topo_node *a = &topo->nodes[i],
					       *b = &topo->nodes[j];

			if (a->tier >= 0 && b->tier >= 0 &&
			    a->tier != b->tier &&
			    a->kernel_tier == b->kernel_tier)
				topo->kernel_tiers_flat = true;
		}
	return 0;
}

/*
 * Order memory nodes by (kernel tier, HMAT cost) and cut a new tier where the
 * kernel tier changes, or where the cost of two neighbours, both known,
 * differs by TIERS_SPLIT_PCT or more.
 */
static void from_kernel(struct topology *topo, const struct tiers_config *cfg)
{
	int order[TOPO_MAX_NODES], n = 0;
	bool split = false;

	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].has_memory)
			order[n++] = i;
	/* Insertion sort: a few dozen nodes at most. */
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i;
		const struct topo_node *a = &topo->nodes[x];

		for (; j > 0; j--) {
			const struct topo_node *b = &topo->nodes[order[j - 1]];
			uint64_t ca = tiers_node_cost(a),
				 cb = tiers_node_cost(b);

			if (b->kernel_tier < a->kernel_tier ||
			    (b->kernel_tier == a->kernel_tier &&
			     (!ca || !cb || cb <= ca)))
				break;
			order[j] = order[j - 1];
		}
		order[j] = x;
	}
	topo->tier_source = TOPO_TIER_KERNEL;
	for (int k = 0; k < n; k++) {
		const struct topo_node *node = &topo->nodes[order[k]];
		bool cut = k == 0;

		if (k > 0) {
			const struct topo_node *prev =
				&topo->nodes[order[k - 1]];
			uint64_t cp = tiers_node_cost(prev),
				 cn = tiers_node_cost(node);

			if (prev->kernel_tier != node->kernel_tier) {
				cut = true;
			} else if (cp && cn &&
				   cn * 100 >= cp * (100 + TIERS_SPLIT_PCT)) {
				cut = true;
				split = true;
			}
		}
		if (cut && topo->nr_tiers < TOPO_MAX_TIERS) {
			char name[32];

			snprintf(name, sizeof(name), "tier%d", topo->nr_tiers);
			add_tier(topo, name, cfg->default_low_watermark_pct,
				 cfg->default_high_watermark_pct);
		}
		tier_add_node(topo, topo->nr_tiers - 1, order[k]);
	}
	if (split) {
		topo->tier_source = TOPO_TIER_HMAT;
		topo->kernel_tiers_flat = true;
	}
}

int tiers_derive(struct topology *topo, const struct tiers_config *cfg,
		 int *ret_bad_node)
{
	int bad = -1, ret = 0;

	topo->nr_tiers = 0;
	topo->kernel_tiers_flat = false;
	for (int i = 0; i < topo->nr_nodes; i++) {
		topo->nodes[i].tier = -1;
		topo->nodes[i].gpu = false;
	}
	for (int g = 0; g < cfg->nr_gpu_nodes; g++) {
		int idx = topo_node_index(topo, cfg->gpu_nodes[g]);

		if (idx < 0 || !topo->nodes[idx].has_memory) {
			bad = cfg->gpu_nodes[g];
			ret = -ENODEV;
			goto out;
		}
		topo->nodes[idx].gpu = true;
	}
	if (cfg->nr_tiers > 0)
		ret = from_config(topo, cfg, &bad);
	else
		from_kernel(topo, cfg);
out:
	if (ret < 0 && ret_bad_node)
		*ret_bad_node = bad;
	return ret;
}
