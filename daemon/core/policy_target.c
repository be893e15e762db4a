// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a page may go: each node's free-memory targets, the nearest node
 * of a tier above or below with room, and a GPU rule's node (policy.c's
 * essay has the model).
 */
#include "policy_int.h"

static unsigned int dist(const struct topology *topo, int a, int b)
{
	unsigned int d = topo->distance[a][b];

	return d ? d : 256;	/* unknown: after every known distance */
}

static bool usable_target(const struct plan *pl, int idx)
{
	const struct topo_node *n = &pl->topo->nodes[idx];

	return n->has_memory && !(pl->in->blocked_nodes & (1ull << idx));
}

/* Is @cand nearer to @from than @best (distance, then tier, then index)? */
bool pol_nearer(const struct topology *topo, int from, int cand, int best)
{
	unsigned int dc = dist(topo, from, cand), db;

	if (best < 0)
		return true;
	db = dist(topo, from, best);
	if (dc != db)
		return dc < db;
	if (topo->nodes[cand].tier != topo->nodes[best].tier)
		return topo->nodes[cand].tier < topo->nodes[best].tier;
	return cand < best;
}

/* A GPU node whose rule lets demotions in. */
static bool gpu_demotion_target(const struct plan *pl, const struct policy *p, int idx)
{
	for (int r = 0; r < p->params.nr_rules; r++)
		if (p->params.rules[r].node == pl->topo->nodes[idx].id &&
		    p->params.rules[r].demotion_target)
			return true;
	return false;
}

/*
 * Nearest non-GPU node (or, down, a GPU node that takes demotions) one or
 * more tiers above (@up) or below (!@up) node
 * index @from with room for @bytes (any room when @bytes is 0 and
 * !@need_room).
 */
int pol_pick_node(const struct policy *p, const struct plan *pl, int from, bool up,
		     uint64_t bytes, bool need_room)
{
	const struct topology *topo = pl->topo;
	int tier = topo->nodes[from].tier, best = -1;

	for (int i = 0; i < topo->nr_nodes; i++) {
		const struct topo_node *n = &topo->nodes[i];

		if (i == from || !usable_target(pl, i))
			continue;
		if (n->gpu && (up || !gpu_demotion_target(pl, p, i)))
			continue;
		if (up ? n->tier >= tier : n->tier <= tier)
			continue;
		if (need_room && (!has_room(pl, i, bytes) || (up && !pl->open[i])))
			continue;
		if (pol_nearer(topo, from, i, best))
			best = i;
	}
	return best;
}

/*
 * Node index @i's free-memory targets: demotion starts below *@ret_low,
 * promotion leaves *@ret_high free (the model above).
 */
void policy_node_targets(const struct topology *topo, int i, int64_t *ret_low,
			 int64_t *ret_high)
{
	const struct topo_node *n = &topo->nodes[i];
	uint64_t lo = n->high_wmark_bytes, hi;

	if (n->tier >= 0 && n->tier < topo->nr_tiers) {
		const struct topo_tier *t = &topo->tiers[n->tier];
		uint64_t l = n->total_bytes / 100 * t->low_watermark_pct +
			     n->total_bytes % 100 * t->low_watermark_pct / 100;
		uint64_t h = n->total_bytes / 100 * t->high_watermark_pct +
			     n->total_bytes % 100 * t->high_watermark_pct / 100;

		if (l > lo)
			lo = l;
		hi = h > lo ? h : lo;
	} else {
		hi = lo;
	}
	*ret_low = (int64_t)lo;
	*ret_high = (int64_t)hi;
}

/* The rule's GPU node with room for *@bytes, nearest first; -1 and *why.
 * A range that the rule's max_bytes leaves short is cut to what fits. */
int pol_pick_gpu(const struct policy *p, const struct plan *pl, const struct policy_page *pg,
		    int from, uint64_t *bytes, int *why)
{
	const struct policy_gpu_rule *r = &p->params.rules[pg->rule];
	const struct topology *topo = pl->topo;
	uint64_t used = pl->rule_used[pg->rule];
	int best = -1;

	*why = POLICY_H_NO_ROOM;
	if (r->max_bytes) {
		*bytes = pol_fit_bytes(p, pg, used < r->max_bytes ? (int64_t)(r->max_bytes - used) : 0,
				   false);
		if (!*bytes) {
			*why = POLICY_H_GPU_CAP;
			return -1;
		}
	}
	for (int i = 0; i < topo->nr_nodes; i++) {
		if (!topo->nodes[i].gpu || i == from || !usable_target(pl, i))
			continue;
		if (topo->nodes[i].id != r->node)
			continue;
		if (!has_room(pl, i, *bytes))
			continue;
		if (!pl->open[i]) {
			*why = POLICY_H_REFILL;
			continue;
		}
		if (pol_nearer(topo, from, i, best))
			best = i;
	}
	return best;
}
