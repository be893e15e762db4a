// SPDX-License-Identifier: GPL-2.0-only
/*
 * Demotion: cgroups over their fast-tier cap, nodes below their low
 * watermark, cgroups at their cap with hotter pages waiting, and room for
 * hot pages that found none (steps 1, 2, 3b and 4 of policy.c's tick).
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

/* Candidate @i, hot, found its cgroup's fast-tier cap full (step 3). */
void pol_cap_wait(struct policy *p, const struct plan *pl, uint32_t i)
{
	const struct policy_page *pg = &pl->in->pages[i];

	p->wait[p->nr_wait++] = i;
	p->cg_wait[pg->cgroup] += page_bytes(p, pg);
}

/* From p->order[@k] on, the next candidate of cgroup @c on the fast tier
 * that is free to move; nr_pages when there is none. */
static size_t next_resident(const struct policy *p, const struct plan *pl, int c, size_t k)
{
	for (; k < pl->in->nr_pages; k++) {
		const struct policy_page *pg = &pl->in->pages[p->order[k]];
		int from = src_index(pl, pg);

		if (pg->cgroup == c && from >= 0 && fast_node(pl->topo, from) &&
		    !p->taken[p->order[k]])
			break;
	}
	return k;
}

/*
 * Is a page of heat @w clearly hotter than one of heat @r, enough to take
 * its place: @r at most cold_pct of @w, and the two apart by more than
 * POLICY_EXCHANGE_SIGMAS standard deviations of chance.  A heat counts
 * events of chance (samples, or DAMON's accessed checks: sums, decayed,
 * of counts whose variance is at most their mean), so its variance is at
 * most the heat.  The exchange sets the hottest waiting against the
 * coldest resident: where the heats are a few samples (a terabyte within
 * the sampling budget), those two are chance's extremes, twice apart
 * for nothing.
 */
static bool clearly_hotter(const struct policy *p, uint32_t w, uint32_t r)
{
	double d = (double)w - (double)r;

	return (uint64_t)r * 100 <= (uint64_t)w * p->params.cold_pct && d > 0 &&
	       d * d >= POLICY_EXCHANGE_SIGMAS * POLICY_EXCHANGE_SIGMAS * ((double)w + r);
}

/* pol_exchange_for_cap() for cgroup @c: its waiting pages, hottest first,
 * against its residents, coldest first. */
static void exchange_cgroup(struct policy *p, struct plan *pl, int c)
{
	const struct policy_page *pages = pl->in->pages;
	int64_t owed = 0;	/* waiting bytes not yet made room for */
	size_t k = 0;

	for (size_t w = 0; w < p->nr_wait; w++) {
		const struct policy_page *hot = &pages[p->wait[w]];

		if (hot->cgroup != c)
			continue;
		owed += (int64_t)page_bytes(p, hot);
		while (owed > 0) {
			uint32_t i;
			int from, to;

			k = next_resident(p, pl, c, k);
			if (k == pl->in->nr_pages)
				return;
			i = p->order[k++];
			/* The waiting pages that follow are no hotter. */
			if (!clearly_hotter(p, hot->heat, pages[i].heat))
				return;
			if (pol_held_recently(p, pl, i, false))
				continue;
			from = src_index(pl, &pages[i]);
			to = pol_pick_node(p, pl, from, false, page_bytes(p, &pages[i]), true);
			if (to < 0) {
				hold(pl, POLICY_H_NO_ROOM);
				continue;
			}
			if (pol_emit(p, pl, i, from, to, POLICY_DEMOTE, POLICY_R_EXCHANGE))
				owed -= (int64_t)page_bytes(p, &pages[i]);
		}
	}
}

/*
 * Step 3b, the cap exchange: a cgroup whose fast-tier cap held back hot
 * pages of its own (pol_cap_wait()) trades its coldest fast-tier pages
 * for them.  The hottest waiting page against the coldest resident: the
 * resident goes down while its heat is at most cold_pct of the waiting
 * page's (the heat hysteresis, as between the hot and the cold
 * threshold), as many bytes as wait; the waiting pages go up on a later
 * tick, once the cap has the room, and the cool-down holds both where
 * they went.  Without it the first hot set to fill a cap would keep it
 * for good: a cgroup at its cap takes no promotion, and what it holds
 * leaves only when it is over the cap or its node runs short.
 */
void pol_exchange_for_cap(struct policy *p, struct plan *pl)
{
	for (size_t c = 0; c < pl->in->nr_cgroups; c++)
		if (p->cg_wait[c])
			exchange_cgroup(p, pl, (int)c);
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
