// SPDX-License-Identifier: GPL-2.0-only
/*
 * Promotion, hottest first: a GPU rule's node, else the nearest upper-tier
 * node with room under the cgroup's cap (step 3 of policy.c's tick); then,
 * where all the memory fits, the fill pass's ranges in the room left.
 */
#include "policy_int.h"

/* Promote candidate @i if it is hot somewhere it should not stay (@why_r:
 * POLICY_R_HOT), or, for POLICY_R_FILL, anywhere below the fast tier, to
 * the fast tier. */
static void promote_one(struct policy *p, struct plan *pl, uint32_t i, enum policy_reason why_r)
{
	const struct topology *topo = pl->topo;
	const struct policy_page *pg = &pl->in->pages[i];
	uint64_t bytes = page_bytes(p, pg), gpu_bytes = bytes, fit;
	int from, to, why, near;
	bool gpu_rule, lower;

	from = src_index(pl, pg);
	if (from < 0 || p->taken[i])
		return;
	/* A GPU node's room is for what its rule's processes use: a fill
	 * goes to DRAM, and its heat may take it on from there. */
	gpu_rule = pg->rule >= 0 && !topo->nodes[from].gpu && why_r != POLICY_R_FILL;
	lower = topo->nodes[from].tier > topo_fast_tier(topo) && !topo->nodes[from].gpu;
	if (!gpu_rule && !lower)
		return;	/* hot where it is */
	if (pol_held_recently(p, pl, i, true))
		return;
	if (gpu_rule) {
		to = pol_pick_gpu(p, pl, pg, from, &gpu_bytes, &why);
		if (to >= 0) {
			pol_emit_bytes(p, pl, i, from, to, POLICY_PROMOTE, POLICY_R_GPU, gpu_bytes);
			return;
		}
		if (!lower) {
			hold(pl, why);
			return;
		}
	}
	to = pol_pick_node(p, pl, from, true, bytes, true);
	near = to >= 0 ? to : pol_pick_node(p, pl, from, true, 0, false);
	if (near < 0) {
		hold(pl, POLICY_H_NO_ROOM);
		return;
	}
	fit = pol_fit_bytes(p, pg, pol_cap_left(p, pl, pg, near), false);
	if (!fit) {
		hold(pl, POLICY_H_CGROUP_CAP);
		pol_cap_wait(p, pl, i);
		return;
	}
	if (fit < bytes) {
		bytes = fit;
		to = pol_pick_node(p, pl, from, true, bytes, true);
	}
	if (to < 0) {
		/* Only heat makes room: a fill waits for it. */
		if (why_r != POLICY_R_FILL) {
			pl->unmet[near] += bytes;
			pl->out->stats.unmet_bytes += bytes;
		}
		hold(pl, pl->open[near] || !has_room(pl, near, bytes) ? POLICY_H_NO_ROOM
								       : POLICY_H_REFILL);
		return;
	}
	pol_emit_bytes(p, pl, i, from, to, POLICY_PROMOTE, why_r, bytes);
}

/*
 * A closed node that hot pages wanted: room demotions make enough room to
 * open it, not just what those pages need (it would stay closed).
 */
void pol_open_closed(const struct policy *p, struct plan *pl)
{
	for (int i = 0; i < pl->topo->nr_nodes; i++) {
		int64_t short_b = (int64_t)p->params.min_room_bytes - node_room(pl, i);

		if (!pl->open[i] && pl->unmet[i] > 0 && pl->unmet[i] < short_b)
			pl->unmet[i] = short_b;
	}
}

/* Hottest heat first; within one heat, in (pid, address) order. */
void pol_promote(struct policy *p, struct plan *pl)
{
	const struct policy_page *pages = pl->in->pages;
	size_t end = pl->in->nr_pages, start;

	while (end > 0) {
		uint32_t heat = pages[p->order[end - 1]].heat;

		if (heat < pl->hot)
			break;	/* sorted: no hotter page follows */
		for (start = end - 1; start > 0 && pages[p->order[start - 1]].heat == heat;)
			start--;
		for (size_t k = start; k < end; k++) {
			const struct policy_page *pg = &pages[p->order[k]];

			/* Under the usual floor, only news (policy_input.news_since_ns). */
			if (heat < POLICY_NOISE_MIN_FLOOR && pl->out->stats.discovering &&
			    pg->last_access_ns < pl->in->news_since_ns)
				continue;
			promote_one(p, pl, p->order[k], POLICY_R_HOT);
		}
		end = start;
	}
}

/*
 * The fill pass's ranges (POLICY_F_FILL), coldest first as sorted: heat 0,
 * in (pid, address) order.  Called only while the footprint fits the fast
 * tier's room, after every hotter candidate took what it wanted.  Not for
 * a cgroup with a fast-tier cap: its share is what its heat earns, and
 * memory nobody saw used would hold it against its hot set (a full cgroup's
 * ranges are no candidates at all).
 */
void pol_fill(struct policy *p, struct plan *pl)
{
	const struct policy_page *pages = pl->in->pages;

	for (size_t k = 0; k < pl->in->nr_pages; k++) {
		const struct policy_page *pg = &pages[p->order[k]];

		if (pg->heat >= pl->hot)
			break;	/* sorted: the rest were weighed as hot */
		if ((pg->flags & POLICY_F_FILL) &&
		    (pg->cgroup < 0 || !pl->in->cgroups[pg->cgroup].fast_max_bytes))
			promote_one(p, pl, p->order[k], POLICY_R_FILL);
	}
}
