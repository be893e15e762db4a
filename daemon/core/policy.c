// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which pages move, and where: promotion and demotion decisions.
 *
 * The model
 * ---------
 * Each tick the daemon hands us candidates: base pages and THPs of the
 * processes it watches, each with its node (from a move_pages query), its
 * heat (decayed access count from core/hotness), its cgroup, its GPU
 * placement rule and when it last moved.  Nodes carry a free byte count and
 * two free-memory targets derived from their tier's watermarks:
 *
 *	low  = max(kernel high watermark, total * low_watermark_pct / 100)
 *	high = max(low, total * high_watermark_pct / 100)
 *
 * A node has room for a page when free - high >= the page's bytes; a node
 * needs demotion when free < low, and then until free >= high.  Promotion
 * fills a node down to high, demotion starts only below low: the gap is the
 * watermark hysteresis.  Promotion has its own: a node whose room is below
 * min_room_bytes at the start of a tick takes no promotion in it, so a
 * full node is not fed page by page as reclaim frees memory (one small
 * move_pages(2) call per tick, racing the kernel's allocations); it opens
 * again once that much is free, as the kernel's promotion watermark
 * (WMARK_PROMO) keeps a chunk above high for NUMA-balancing promotion.
 *
 * The hot threshold T is either fixed by the config or adapted, as Memtis
 * does: a histogram of candidate bytes over log2 heat bins, walked from the
 * hottest bin down while the running sum still fits the fast tier's usable
 * bytes (sum of total - high over its non-GPU nodes).  The floor of the last
 * bin that fits is T: the set of pages at or above T is what the fast tier
 * can hold.  A page is cold at or below C = T * cold_pct / 100; pages between
 * C and T stay where they are (heat hysteresis).
 *
 * One tick, in this order (the order of the intents written):
 *  1. cap demotions: a cgroup holding more fast-tier bytes than its cap has
 *     its coldest fast-tier pages demoted until it is under the cap;
 *  2. watermark demotions: a node below low has its coldest cold pages
 *     demoted, to the nearest lower-tier non-GPU node with room, until its
 *     planned free reaches high;
 *  3. promotions, hottest first: a page at or above T whose process matches
 *     a GPU placement rule goes to the rule's GPU node while the rule's bytes
 *     stay under its cap; otherwise a page on a lower tier goes to the
 *     nearest upper-tier non-GPU node with room, unless that would take its
 *     cgroup over its fast-tier cap;
 * 3b. exchange demotions: a cgroup whose cap held hot pages back trades
 *     its coldest fast-tier pages for them, each at most cold_pct of the
 *     heat of the waiting page it makes room for and three deviations of
 *     chance below it (clearly_hotter()), hottest waiting first;
 *     they are promoted on a later tick, once the room under the cap is
 *     real;
 *  4. room demotions: hot bytes that found no room are made room for by
 *     demoting as many cold bytes from the node they wanted (at least
 *     enough to open it, when it was closed); they are promoted on a later
 *     tick, once the room is real.
 * A range of base pages (POLICY_F_PAGES) that a cap leaves short moves in
 * part, its first pages up to the cap: its pages are equally hot, and
 * unlike a THP's they move one by one.  So a cgroup at its fast-tier cap
 * or a GPU rule at its max_bytes fills to within a page, and a cap
 * demotion takes no more than the excess.  Room and the rate buckets still
 * take ranges whole: room opens in chunks of min_room_bytes anyway, and the
 * buckets refill by the next tick (decide makes no ranges where a bucket's
 * burst is below 2 MiB).
 * A page that moved less than cooldown_ns ago is not moved back (a page on a
 * lower tier that was demoted, one on the fast tier that was promoted:
 * the move times are kept per 2 MiB range, and a range promoted in part
 * must not hold back its pages still on the lower tier); one promoted and
 * demoted within pingpong_window_ns is held for pingpong_hold_ns after its
 * last move.  Every intent is charged to its cgroup's rate bucket and the
 * global one before it is written; a page the buckets cannot pay for stays.
 * GPU nodes are never a target except through a rule: promotion of the
 * rule's processes, or demotion when the rule sets demotion_target.  With
 * cold_age_ns set, a cold page must also have gone unaccessed that long.
 *
 * A worked example
 * ----------------
 * Node 0: DRAM, tier 0, 16 GiB, 2 GiB free, tier watermarks 5% / 10%:
 * low = 819.2 MiB, high = 1638.4 MiB, room = 409.6 MiB.
 * Node 1: CXL, tier 1, 64 GiB, 40 GiB free.  Candidates, all 2 MiB THPs:
 * 150 THPs (300 MiB) at heat 40 and 100 THPs (200 MiB) at heat 10 on node 1;
 * 7168 THPs (14 GiB) at heat 3 on node 0.  Fast tier usable bytes:
 * 16384 - 1638.4 = 14745.6 MiB.  Histogram: bin 6 [32,64) 300 MiB, bin 4
 * [8,16) 200 MiB, bin 2 [2,4) 14336 MiB.  300 fits, 500 fits, 14836 does
 * not: T = 8, and with cold_pct 50, C = 4.  Node 0 is above low: no
 * watermark demotion.  Promotions: the 150 heat-40 THPs (300 MiB) fit,
 * 109.6 MiB of room is left, 54 of the heat-10 THPs fit; the other 46
 * (92 MiB) find no room.  Room demotions: 46 of the heat-3 THPs on node 0
 * (the coldest, at or below C) go to node 1.  Next tick the last 46 hot THPs
 * are promoted.  Intents this tick: 204 promotions, 46 demotions
 * (tests/unit/test_policy.c checks exactly this).
 *
 * What it costs
 * -------------
 * One sort of the candidate indices by heat (qsort_r, n log n: 100 000
 * candidates is ~1.7 M comparisons, a few milliseconds), then at most four
 * linear passes, and one more for each cgroup whose cap held pages back
 * (step 3b); target choice scans the nodes (at most 64).  No allocation:
 * the index array and per-cgroup scratch are sized in policy_new().
 *
 * How it fails
 * ------------
 * - It sees only candidates.  If the daemon leaves fast-tier pages out of the
 *   list, nothing there can be demoted, and room for hot pages never comes;
 *   the stats' unmet_bytes shows it.
 * - Free bytes and cgroup usage are a snapshot from the start of the tick;
 *   the kernel allocates meanwhile.  Room is only a plan: move_pages may still
 *   find the node full (ENOMEM; core/account backs that node off).
 * - Rate buckets are charged when the intent is written, so failed moves
 *   spend budget.  That errs on the side of moving less.
 * - The log2 bins are coarse: a hot set hovering around the fast tier's size
 *   can make T step by 2x between ticks.  The heat hysteresis (C < T) and the
 *   cool-down keep that from moving the same pages back and forth.
 * - Heat scales differ between sources (DAMON nr_accesses vs PEBS sample
 *   counts); a fixed threshold must be set per source.
 *
 * Where it lives
 * --------------
 * This file: set-up, the threshold and the tick (policy_run()).
 * policy_demote.c: steps 1, 2, 3b and 4; policy_promote.c: step 3;
 * policy_target.c: node targets and the choice of a node;
 * policy_budget.c: holds, caps, rate buckets and writing an intent;
 * policy_rules.c: GPU placement rules and the stats' names;
 * policy_int.h: the plan they share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

void policy_params_default(struct policy_params *p, const struct page_geom *g)
{
	memset(p, 0, sizeof(*p));
	p->page_size = (uint32_t)g->base;
	p->hot_threshold = 0;
	p->min_hot_threshold = 1;
	p->crowded_hot_threshold = POLICY_CROWDED_HOT;
	p->cold_pct = 50;
	p->cooldown_ns = 10ull * 1000000000ull;
	p->pingpong_window_ns = 60ull * 1000000000ull;
	p->pingpong_hold_ns = 300ull * 1000000000ull;
	p->demote = true;
	p->demote_for_room = true;
	p->fill = true;
	p->cold_age_ns = 0;
	p->min_room_bytes = g->range;	/* a range; tierd sets promotion.batch_pages */
}

int policy_new(const struct policy_params *params, size_t max_pages, size_t max_cgroups,
	       struct policy **ret)
{
	struct policy *p;

	if (params->min_hot_threshold == 0 || params->cold_pct > 100 || params->page_size == 0 ||
	    params->nr_rules < 0 || params->nr_rules > POLICY_MAX_RULES ||
	    max_cgroups > INT16_MAX)
		return -EINVAL;
	for (int i = 0; i < params->nr_rules; i++)
		if (params->rules[i].node < 0 || params->rules[i].node > INT16_MAX ||
		    params->rules[i].nr_allow < 0 || params->rules[i].nr_allow > POLICY_RULE_ALLOW)
			return -EINVAL;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->params = *params;
	p->max_pages = max_pages;
	p->max_cgroups = max_cgroups;
	p->order = calloc(max_pages ? max_pages : 1, sizeof(*p->order));
	p->taken = calloc(max_pages ? max_pages : 1, sizeof(*p->taken));
	p->cg_delta = calloc(max_cgroups ? max_cgroups : 1, sizeof(*p->cg_delta));
	p->cg_excess = calloc(max_cgroups ? max_cgroups : 1, sizeof(*p->cg_excess));
	p->wait = calloc(max_pages ? max_pages : 1, sizeof(*p->wait));
	p->cg_wait = calloc(max_cgroups ? max_cgroups : 1, sizeof(*p->cg_wait));
	if (!p->order || !p->taken || !p->cg_delta || !p->cg_excess || !p->wait || !p->cg_wait) {
		policy_free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	free(p->order);
	free(p->taken);
	free(p->cg_delta);
	free(p->cg_excess);
	free(p->wait);
	free(p->cg_wait);
	free(p);
}

static int heat_bin(uint32_t heat)
{
	return heat ? 32 - __builtin_clz(heat) : 0;
}

static uint32_t bin_floor(int bin)
{
	return bin ? 1u << (bin - 1) : 0;
}

uint32_t policy_threshold_from_hist(const uint64_t hist[POLICY_HEAT_BINS], uint64_t room_bytes,
				    uint32_t floor)
{
	uint64_t sum = 0;
	int chosen = 0;

	for (int b = POLICY_HEAT_BINS - 1; b >= 1; b--) {
		if (!hist[b])
			continue;
		/* The hottest bin is hot even when it alone overflows: room
		 * then limits what moves, hottest first. */
		if (chosen && sum + hist[b] > room_bytes)
			break;
		sum += hist[b];
		chosen = b;
		if (sum > room_bytes)
			break;
	}
	if (!chosen || bin_floor(chosen) < floor)
		return floor;
	return bin_floor(chosen);
}

/* Ascending heat; ties broken by pid then address so runs are repeatable. */
static int cmp_heat(const void *a, const void *b, void *arg)
{
	const struct policy_page *pages = arg;
	const struct policy_page *x = &pages[*(const uint32_t *)a];
	const struct policy_page *y = &pages[*(const uint32_t *)b];

	if (x->heat != y->heat)
		return x->heat < y->heat ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

static void plan_nodes(const struct policy *p, struct plan *pl)
{
	const struct topology *topo = pl->topo;

	for (int i = 0; i < topo->nr_nodes; i++) {
		policy_node_targets(topo, i, &pl->low[i], &pl->high[i]);
		pl->free[i] = (int64_t)topo->nodes[i].free_bytes;
		pl->need[i] = pl->free[i] < pl->low[i] ? pl->high[i] - pl->free[i] : 0;
		pl->unmet[i] = 0;
		pl->open[i] = has_room(pl, i, p->params.min_room_bytes);
	}
}

/* The fast tier's non-GPU nodes' memory above their high targets. */
static uint64_t fast_room(const struct topology *topo)
{
	uint64_t room = 0;

	for (int i = 0; i < topo->nr_nodes; i++) {
		int64_t low, high;

		if (!fast_node(topo, i))
			continue;
		policy_node_targets(topo, i, &low, &high);
		if (topo->nodes[i].total_bytes > (uint64_t)high)
			room += topo->nodes[i].total_bytes - (uint64_t)high;
	}
	return room;
}

bool policy_footprint_fits(const struct topology *topo, uint64_t footprint_bytes)
{
	return footprint_bytes && footprint_bytes <= fast_room(topo);
}

bool policy_fills(const struct policy_params *params, const struct topology *topo,
		  uint64_t footprint_bytes)
{
	return params->fill && !params->hot_threshold &&
	       policy_footprint_fits(topo, footprint_bytes);
}

static uint32_t adaptive_threshold(const struct policy *p, const struct plan *pl)
{
	uint64_t hist[POLICY_HEAT_BINS] = { 0 };
	uint32_t floor = p->params.min_hot_threshold, crowded;
	uint64_t room = fast_room(pl->topo);

	for (size_t i = 0; i < pl->in->nr_pages; i++) {
		const struct policy_page *pg = &pl->in->pages[i];

		hist[heat_bin(pg->heat)] += page_bytes(p, pg);
	}
	/* The processes' memory all fits: any heat earns the fast tier, as
	 * the best placement puts it all there.  Else the fast tier is for
	 * the hottest, and a sampler's few hits are as likely luck in a cold
	 * range as heat: they wait for the source's floor. */
	crowded = pl->in->crowded_hot ? pl->in->crowded_hot : p->params.crowded_hot_threshold;
	if (pl->in->footprint_bytes > room && crowded == POLICY_CROWDED_BACKGROUND) {
		crowded = pl->in->table_hist ? pol_noise_floor(pl->in, room, &pl->out->stats) :
					       p->params.crowded_hot_threshold;
	}
	if (pl->in->footprint_bytes > room) {
		pl->out->stats.crowded_floor = crowded;
		if (crowded > floor)
			floor = crowded;
	}
	return policy_threshold_from_hist(hist, room, floor);
}

int policy_run(struct policy *p, const struct policy_input *in, struct policy_output *out)
{
	const struct topology *topo = in->topo;
	struct plan pl;

	if (in->nr_pages > p->max_pages || in->nr_cgroups > p->max_cgroups ||
	    topo->nr_nodes > TOPO_MAX_NODES || topo->nr_nodes < 0)
		return -EINVAL;
	for (size_t i = 0; i < in->nr_pages; i++) {
		const struct policy_page *pg = &in->pages[i];

		if (pg->cgroup >= (int)in->nr_cgroups || pg->cgroup < -1 ||
		    pg->rule >= p->params.nr_rules || pg->rule < -1)
			return -EINVAL;
	}

	memset(&out->stats, 0, sizeof(out->stats));
	out->nr_intents = 0;
	out->bytes = 0;
	memset(&pl, 0, sizeof(pl));
	pl.in = in;
	pl.topo = topo;
	pl.out = out;
	for (int r = 0; r < p->params.nr_rules; r++)
		pl.rule_used[r] = in->rule_used_bytes ? in->rule_used_bytes[r] : 0;
	plan_nodes(p, &pl);

	pl.hot = p->params.hot_threshold ? p->params.hot_threshold : adaptive_threshold(p, &pl);
	pl.cold = (uint32_t)((uint64_t)pl.hot * p->params.cold_pct / 100);
	if (pl.cold >= pl.hot)
		pl.cold = pl.hot - 1;
	out->stats.hot_threshold = pl.hot;
	out->stats.cold_threshold = pl.cold;

	for (size_t i = 0; i < in->nr_pages; i++)
		p->order[i] = (uint32_t)i;
	qsort_r(p->order, in->nr_pages, sizeof(*p->order), cmp_heat, (void *)in->pages);
	memset(p->taken, 0, in->nr_pages);
	memset(p->cg_delta, 0, in->nr_cgroups * sizeof(*p->cg_delta));
	memset(p->cg_wait, 0, in->nr_cgroups * sizeof(*p->cg_wait));
	p->nr_wait = 0;

	pol_demote_for_cap(p, &pl);
	if (p->params.demote)
		pol_demote_cold(p, &pl, pl.need, POLICY_R_WMARK);
	pol_promote(p, &pl);
	pol_exchange_for_cap(p, &pl);
	if (out->cg_wait_bytes)
		memcpy(out->cg_wait_bytes, p->cg_wait, in->nr_cgroups * sizeof(*p->cg_wait));
	/* After the hot, in the room left; the batcher puts its calls last. */
	if (policy_fills(&p->params, topo, in->footprint_bytes))
		pol_fill(p, &pl);
	if (p->params.demote && p->params.demote_for_room) {
		pol_open_closed(p, &pl);
		pol_demote_cold(p, &pl, pl.unmet, POLICY_R_ROOM);
	}
	return 0;
}
