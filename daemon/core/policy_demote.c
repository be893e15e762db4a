// SPDX-License-Identifier: GPL-2.0-only
/*
 * Demotion: cgroups over their fast-tier cap, nodes below their low
 * watermark, and room for hot pages that found none (steps 1, 2 and 4 of
 * policy.c's tick).
 */
#include "policy_int.h"

bool policy_may_demote(const struct policy_params *params, const struct policy_input *in,
		       uint64_t promote_bytes)
{
	const struct topology *topo = in->topo;

	for (size_t c = 0; c < in->nr_cgroups; c++)
		if (pol_cg_over_cap(&in->cgroups[c]) > 0)
			return true;
	if (!params->demote)
		return false;
	for (int i = 0; i < topo->nr_nodes && i < TOPO_MAX_NODES; i++) {
		const struct topo_node *n = &topo->nodes[i];
		int64_t free_b = (int64_t)n->free_bytes, lo, hi;

		if (n->tier < 0 || n->tier + 1 >= topo->nr_tiers)
			continue; /* no tier below to demote to */
		policy_node_targets(topo, i, &lo, &hi);
		if (free_b < lo)
			return true; /* watermark demotions */
		if (params->demote_for_room && !n->gpu && free_b - hi < (int64_t)promote_bytes)
			return true; /* promotions may find no room: room demotions */
	}
	return false;
}

/* cold_age_ns: a cold page must also have gone unaccessed that long. */
static bool old_enough(const struct policy *p, const struct policy_page *pg, uint64_t now)
{
	return !p->params.cold_age_ns || !pg->last_access_ns ||
	       (now > pg->last_access_ns && now - pg->last_access_ns >= p->params.cold_age_ns);
}

void pol_demote_for_cap(struct policy *p, struct plan *pl)
{
	const struct policy_input *in = pl->in;
	bool any = false;

	for (size_t c = 0; c < in->nr_cgroups; c++) {
		p->cg_excess[c] = pol_cg_over_cap(&in->cgroups[c]);
		any |= p->cg_excess[c] > 0;
	}
	if (!any)
		return;
	for (size_t k = 0; k < in->nr_pages; k++) {
		uint32_t i = p->order[k];
		const struct policy_page *pg = &in->pages[i];
		int from = src_index(pl, pg), to;
		uint64_t bytes;

		if (pg->cgroup < 0 || p->cg_excess[pg->cgroup] <= 0 || from < 0 ||
		    !fast_node(pl->topo, from) || p->taken[i])
			continue;
		if (pol_held_recently(p, pl, i, false))
			continue;
		bytes = pol_fit_bytes(p, pg, p->cg_excess[pg->cgroup], true);
		to = pol_pick_node(p, pl, from, false, bytes, true);
		if (to < 0) {
			hold(pl, POLICY_H_NO_ROOM);
			continue;
		}
		if (pol_emit_bytes(p, pl, i, from, to, POLICY_DEMOTE, POLICY_R_CAP, bytes))
			p->cg_excess[pg->cgroup] -= bytes;
	}
}

/* Coldest cold pages first off nodes with @want[] bytes to shed. */
void pol_demote_cold(struct policy *p, struct plan *pl, int64_t *want, enum policy_reason reason)
{
	const struct policy_input *in = pl->in;

	for (size_t k = 0; k < in->nr_pages; k++) {
		uint32_t i = p->order[k];
		const struct policy_page *pg = &in->pages[i];
		int from, to;

		if (pg->heat > pl->cold)
			break;	/* sorted: no colder page follows */
		from = src_index(pl, pg);
		if (from < 0 || want[from] <= 0 || p->taken[i] || !old_enough(p, pg, in->now_ns))
			continue;
		if (pol_held_recently(p, pl, i, false))
			continue;
		to = pol_pick_node(p, pl, from, false, page_bytes(p, pg), true);
		if (to < 0) {
			hold(pl, POLICY_H_NO_ROOM);
			continue;
		}
		if (pol_emit(p, pl, i, from, to, POLICY_DEMOTE, reason))
			want[from] -= page_bytes(p, pg);
	}
}
