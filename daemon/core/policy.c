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
 * linear passes; target choice scans the nodes (at most 64).  No allocation:
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
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define TIER_FAST 0

struct policy {
	struct policy_params params;
	size_t max_pages;
	size_t max_cgroups;
	uint32_t *order;	/* candidate indices, coldest first */
	uint8_t *taken;		/* candidate already has an intent this tick */
	int64_t *cg_delta;	/* planned change of a cgroup's fast-tier bytes */
	int64_t *cg_excess;	/* bytes over the cap still to demote */
};

/* Per-tick plan of the nodes, by node index. */
struct plan {
	const struct policy_input *in;
	const struct topology *topo;
	struct policy_output *out;
	int64_t free[TOPO_MAX_NODES];
	int64_t low[TOPO_MAX_NODES];
	int64_t high[TOPO_MAX_NODES];
	int64_t need[TOPO_MAX_NODES];	/* demotion bytes still wanted */
	int64_t unmet[TOPO_MAX_NODES];	/* hot bytes that wanted this node */
	bool open[TOPO_MAX_NODES];	/* room >= min_room_bytes at the start */
	uint64_t rule_used[POLICY_MAX_RULES];
	uint32_t hot;
	uint32_t cold;
};

void policy_params_default(struct policy_params *p)
{
	memset(p, 0, sizeof(*p));
	p->page_size = 4096;
	p->hot_threshold = 0;
	p->min_hot_threshold = 1;
	p->cold_pct = 50;
	p->cooldown_ns = 10ull * 1000000000ull;
	p->pingpong_window_ns = 60ull * 1000000000ull;
	p->pingpong_hold_ns = 300ull * 1000000000ull;
	p->demote = true;
	p->demote_for_room = true;
	p->cold_age_ns = 0;
	p->min_room_bytes = 512 * 4096;	/* a THP; tierd sets promotion.batch_pages */
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
	if (!p->order || !p->taken || !p->cg_delta || !p->cg_excess) {
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

static const char *const reason_names[POLICY_R_NR] = {
	[POLICY_R_HOT] = "hot",
	[POLICY_R_GPU] = "gpu-rule",
	[POLICY_R_CAP] = "cgroup-cap",
	[POLICY_R_WMARK] = "watermark",
	[POLICY_R_ROOM] = "room",
};

static const char *const hold_names[POLICY_H_NR] = {
	[POLICY_H_COOLDOWN] = "cooldown",
	[POLICY_H_PINGPONG] = "pingpong",
	[POLICY_H_NO_ROOM] = "no-room",
	[POLICY_H_CGROUP_CAP] = "cgroup-cap",
	[POLICY_H_GPU_CAP] = "gpu-cap",
	[POLICY_H_CGROUP_RATE] = "cgroup-rate",
	[POLICY_H_GLOBAL_RATE] = "global-rate",
	[POLICY_H_OUTPUT_FULL] = "output-full",
	[POLICY_H_REFILL] = "refill",
};

const char *policy_reason_name(enum policy_reason r)
{
	return (unsigned int)r < POLICY_R_NR ? reason_names[r] : "?";
}

const char *policy_hold_name(enum policy_hold h)
{
	return (unsigned int)h < POLICY_H_NR ? hold_names[h] : "?";
}

static bool cgroup_under(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (strncmp(path, top, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || (n && top[n - 1] == '/');
}

int policy_rule_match(const struct policy_params *params, const char *cgroup_path,
		      const char *comm)
{
	for (int i = 0; i < params->nr_rules; i++) {
		const struct policy_gpu_rule *r = &params->rules[i];

		for (int j = 0; j < r->nr_allow; j++) {
			const char *a = r->allow[j];

			if (a[0] == '/' ? cgroup_path && cgroup_under(cgroup_path, a) :
					  a[0] && comm && fnmatch(a, comm, 0) == 0)
				return i;
		}
	}
	return -1;
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

static uint64_t page_bytes(const struct policy *p, const struct policy_page *pg)
{
	return (uint64_t)pg->nr_pages * p->params.page_size;
}

static bool fast_node(const struct topology *topo, int idx)
{
	return topo->nodes[idx].tier == TIER_FAST && !topo->nodes[idx].gpu;
}

/* -1, or why a page that moved recently must stay (@promote: the move
 * wanted now is a promotion). */
static int recent_hold_why(const struct policy *p, const struct policy_page *pg, bool promote,
			   uint64_t now)
{
	uint64_t lp = pg->last_promote_ns, ld = pg->last_demote_ns;
	uint64_t last = lp > ld ? lp : ld;
	uint64_t back = promote ? ld : lp;	/* the move this one would undo */

	if (lp && ld && (lp > ld ? lp - ld : ld - lp) < p->params.pingpong_window_ns &&
	    now - last < p->params.pingpong_hold_ns)
		return POLICY_H_PINGPONG;
	if (back && now - back < p->params.cooldown_ns)
		return POLICY_H_COOLDOWN;
	return -1;
}

static void hold(struct plan *pl, int why)
{
	pl->out->stats.held[why]++;
}

/* True when candidate @i must stay for now; counted once per tick. */
static bool held_recently(struct policy *p, struct plan *pl, uint32_t i, bool promote)
{
	int why;

	if (p->taken[i])
		return true;
	why = recent_hold_why(p, &pl->in->pages[i], promote, pl->in->now_ns);
	if (why < 0)
		return false;
	p->taken[i] = 2;
	hold(pl, why);
	return true;
}

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
static bool nearer(const struct topology *topo, int from, int cand, int best)
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

/* Planned bytes free above node @i's high target: what promotion may fill. */
static int64_t node_room(const struct plan *pl, int i)
{
	return pl->free[i] - pl->high[i];
}

static bool has_room(const struct plan *pl, int i, uint64_t bytes)
{
	return node_room(pl, i) >= (int64_t)bytes;
}

/*
 * Nearest non-GPU node (or, down, a GPU node that takes demotions) one or
 * more tiers above (@up) or below (!@up) node
 * index @from with room for @bytes (any room when @bytes is 0 and
 * !@need_room).
 */
static int pick_node(const struct policy *p, const struct plan *pl, int from, bool up,
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
		if (nearer(topo, from, i, best))
			best = i;
	}
	return best;
}

/* -1 after charging both buckets, or the hold reason; charges nothing then. */
static int charge(const struct plan *pl, const struct policy_page *pg, uint64_t bytes)
{
	const struct policy_input *in = pl->in;
	struct bucket *cg = pg->cgroup >= 0 ? in->cgroups[pg->cgroup].rate : NULL;

	if (cg && bucket_avail(cg, in->now_ns) < bytes)
		return POLICY_H_CGROUP_RATE;
	if (in->global_rate && bucket_avail(in->global_rate, in->now_ns) < bytes)
		return POLICY_H_GLOBAL_RATE;
	if (cg)
		bucket_take(cg, bytes, in->now_ns);
	if (in->global_rate)
		bucket_take(in->global_rate, bytes, in->now_ns);
	return -1;
}

/*
 * Write the intent to move the first @bytes of candidate @i (all of it, or
 * part of a range of base pages: fit_bytes()) from node index @from to @to,
 * after the rate check.  Returns true when written.
 */
static bool emit_bytes(struct policy *p, struct plan *pl, uint32_t i, int from, int to,
		       enum policy_kind kind, enum policy_reason reason, uint64_t bytes)
{
	const struct policy_page *pg = &pl->in->pages[i];
	struct policy_output *out = pl->out;
	struct policy_intent *it;
	int why;

	if (out->nr_intents >= out->max_intents) {
		hold(pl, POLICY_H_OUTPUT_FULL);
		return false;
	}
	why = charge(pl, pg, bytes);
	if (why >= 0) {
		hold(pl, why);
		return false;
	}
	it = &out->intents[out->nr_intents++];
	it->pid = pg->pid;
	it->addr = pg->addr;
	it->nr_pages = (uint32_t)(bytes / p->params.page_size);
	it->from_node = pl->topo->nodes[from].id;
	it->to_node = pl->topo->nodes[to].id;
	it->cgroup = pg->cgroup;
	it->page = i;
	it->kind = kind;
	it->reason = reason;
	it->tries = 0;
	it->flags = (uint8_t)pg->flags;

	p->taken[i] = 1;	/* 2: held for the tick */
	pl->free[from] += bytes;
	pl->free[to] -= bytes;
	if (pg->cgroup >= 0) {
		if (fast_node(pl->topo, from))
			p->cg_delta[pg->cgroup] -= bytes;
		if (fast_node(pl->topo, to))
			p->cg_delta[pg->cgroup] += bytes;
	}
	if (pg->rule >= 0 && pl->topo->nodes[to].gpu)
		pl->rule_used[pg->rule] += bytes;
	if (pg->rule >= 0 && pl->topo->nodes[from].gpu) {
		uint64_t *used = &pl->rule_used[pg->rule];

		*used -= bytes < *used ? bytes : *used;
	}
	out->stats.intents[reason]++;
	if (kind == POLICY_PROMOTE)
		out->stats.promote_bytes += bytes;
	else
		out->stats.demote_bytes += bytes;
	return true;
}

static bool emit(struct policy *p, struct plan *pl, uint32_t i, int from, int to,
		 enum policy_kind kind, enum policy_reason reason)
{
	return emit_bytes(p, pl, i, from, to, kind, reason, page_bytes(p, &pl->in->pages[i]));
}

/*
 * The bytes of candidate @pg to move where a cap lets @avail bytes through
 * (0: none fit).  A base page or a THP moves whole: when it fits, or
 * (@up, a demotion down to a cap) whenever anything is to go.  A range of
 * base pages moves its first pages, as many as @avail holds, rounded down
 * (@up: up), at most all of them.
 */
static uint64_t fit_bytes(const struct policy *p, const struct policy_page *pg, int64_t avail,
			  bool up)
{
	uint64_t ps = p->params.page_size, whole = page_bytes(p, pg), n;

	if (avail <= 0)
		return 0;
	if ((uint64_t)avail >= whole)
		return whole;
	if (!(pg->flags & POLICY_F_PAGES))
		return up ? whole : 0;
	n = ((uint64_t)avail + (up ? ps - 1 : 0)) / ps;
	return n * ps;
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

/* Bytes a cgroup holds on the fast tier over its cap; 0 when under it. */
static int64_t cg_over_cap(const struct policy_cgroup *cg)
{
	return cg->fast_max_bytes && cg->fast_bytes > cg->fast_max_bytes ?
		       (int64_t)(cg->fast_bytes - cg->fast_max_bytes) : 0;
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

bool policy_may_demote(const struct policy_params *params, const struct policy_input *in,
		       uint64_t promote_bytes)
{
	const struct topology *topo = in->topo;

	for (size_t c = 0; c < in->nr_cgroups; c++)
		if (cg_over_cap(&in->cgroups[c]) > 0)
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

static uint32_t adaptive_threshold(const struct policy *p, const struct plan *pl)
{
	const struct topology *topo = pl->topo;
	uint64_t hist[POLICY_HEAT_BINS] = { 0 };
	uint64_t room = 0;

	for (size_t i = 0; i < pl->in->nr_pages; i++) {
		const struct policy_page *pg = &pl->in->pages[i];

		hist[heat_bin(pg->heat)] += page_bytes(p, pg);
	}
	for (int i = 0; i < topo->nr_nodes; i++)
		if (fast_node(topo, i) && topo->nodes[i].total_bytes > (uint64_t)pl->high[i])
			room += topo->nodes[i].total_bytes - (uint64_t)pl->high[i];
	return policy_threshold_from_hist(hist, room, p->params.min_hot_threshold);
}

/* Node index of a candidate, or -1 when it is on no node we know. */
static int src_index(const struct plan *pl, const struct policy_page *pg)
{
	return pg->node >= 0 ? topo_node_index(pl->topo, pg->node) : -1;
}

/* cold_age_ns: a cold page must also have gone unaccessed that long. */
static bool old_enough(const struct policy *p, const struct policy_page *pg, uint64_t now)
{
	return !p->params.cold_age_ns || !pg->last_access_ns ||
	       (now > pg->last_access_ns && now - pg->last_access_ns >= p->params.cold_age_ns);
}

static void demote_for_cap(struct policy *p, struct plan *pl)
{
	const struct policy_input *in = pl->in;
	bool any = false;

	for (size_t c = 0; c < in->nr_cgroups; c++) {
		p->cg_excess[c] = cg_over_cap(&in->cgroups[c]);
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
		if (held_recently(p, pl, i, false))
			continue;
		bytes = fit_bytes(p, pg, p->cg_excess[pg->cgroup], true);
		to = pick_node(p, pl, from, false, bytes, true);
		if (to < 0) {
			hold(pl, POLICY_H_NO_ROOM);
			continue;
		}
		if (emit_bytes(p, pl, i, from, to, POLICY_DEMOTE, POLICY_R_CAP, bytes))
			p->cg_excess[pg->cgroup] -= bytes;
	}
}

/* Coldest cold pages first off nodes with @want[] bytes to shed. */
static void demote_cold(struct policy *p, struct plan *pl, int64_t *want, enum policy_reason reason)
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
		if (held_recently(p, pl, i, false))
			continue;
		to = pick_node(p, pl, from, false, page_bytes(p, pg), true);
		if (to < 0) {
			hold(pl, POLICY_H_NO_ROOM);
			continue;
		}
		if (emit(p, pl, i, from, to, POLICY_DEMOTE, reason))
			want[from] -= page_bytes(p, pg);
	}
}

/* Bytes @pg's cgroup may still bring onto node index @to under its
 * fast-tier cap (INT64_MAX: no cap there). */
static int64_t cap_left(const struct policy *p, const struct plan *pl,
			const struct policy_page *pg, int to)
{
	const struct policy_cgroup *cg;

	if (pg->cgroup < 0 || !fast_node(pl->topo, to))
		return INT64_MAX;
	cg = &pl->in->cgroups[pg->cgroup];
	if (!cg->fast_max_bytes)
		return INT64_MAX;
	return (int64_t)cg->fast_max_bytes - (int64_t)cg->fast_bytes - p->cg_delta[pg->cgroup];
}

/* The rule's GPU node with room for *@bytes, nearest first; -1 and *why.
 * A range that the rule's max_bytes leaves short is cut to what fits. */
static int pick_gpu(const struct policy *p, const struct plan *pl, const struct policy_page *pg,
		    int from, uint64_t *bytes, int *why)
{
	const struct policy_gpu_rule *r = &p->params.rules[pg->rule];
	const struct topology *topo = pl->topo;
	uint64_t used = pl->rule_used[pg->rule];
	int best = -1;

	*why = POLICY_H_NO_ROOM;
	if (r->max_bytes) {
		*bytes = fit_bytes(p, pg, used < r->max_bytes ? (int64_t)(r->max_bytes - used) : 0,
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
		if (nearer(topo, from, i, best))
			best = i;
	}
	return best;
}

/* Promote candidate @i if it is hot somewhere it should not stay. */
static void promote_one(struct policy *p, struct plan *pl, uint32_t i)
{
	const struct topology *topo = pl->topo;
	const struct policy_page *pg = &pl->in->pages[i];
	uint64_t bytes = page_bytes(p, pg), gpu_bytes = bytes, fit;
	int from, to, why, near;
	bool gpu_rule, lower;

	from = src_index(pl, pg);
	if (from < 0 || p->taken[i])
		return;
	gpu_rule = pg->rule >= 0 && !topo->nodes[from].gpu;
	lower = topo->nodes[from].tier > TIER_FAST && !topo->nodes[from].gpu;
	if (!gpu_rule && !lower)
		return;	/* hot where it is */
	if (held_recently(p, pl, i, true))
		return;
	if (gpu_rule) {
		to = pick_gpu(p, pl, pg, from, &gpu_bytes, &why);
		if (to >= 0) {
			emit_bytes(p, pl, i, from, to, POLICY_PROMOTE, POLICY_R_GPU, gpu_bytes);
			return;
		}
		if (!lower) {
			hold(pl, why);
			return;
		}
	}
	to = pick_node(p, pl, from, true, bytes, true);
	near = to >= 0 ? to : pick_node(p, pl, from, true, 0, false);
	if (near < 0) {
		hold(pl, POLICY_H_NO_ROOM);
		return;
	}
	fit = fit_bytes(p, pg, cap_left(p, pl, pg, near), false);
	if (!fit) {
		hold(pl, POLICY_H_CGROUP_CAP);
		return;
	}
	if (fit < bytes) {
		bytes = fit;
		to = pick_node(p, pl, from, true, bytes, true);
	}
	if (to < 0) {
		pl->unmet[near] += bytes;
		pl->out->stats.unmet_bytes += bytes;
		hold(pl, pl->open[near] || !has_room(pl, near, bytes) ? POLICY_H_NO_ROOM
								       : POLICY_H_REFILL);
		return;
	}
	emit_bytes(p, pl, i, from, to, POLICY_PROMOTE, POLICY_R_HOT, bytes);
}

/*
 * A closed node that hot pages wanted: room demotions make enough room to
 * open it, not just what those pages need (it would stay closed).
 */
static void open_closed(const struct policy *p, struct plan *pl)
{
	for (int i = 0; i < pl->topo->nr_nodes; i++) {
		int64_t short_b = (int64_t)p->params.min_room_bytes - node_room(pl, i);

		if (!pl->open[i] && pl->unmet[i] > 0 && pl->unmet[i] < short_b)
			pl->unmet[i] = short_b;
	}
}

/* Hottest heat first; within one heat, in (pid, address) order. */
static void promote(struct policy *p, struct plan *pl)
{
	const struct policy_page *pages = pl->in->pages;
	size_t end = pl->in->nr_pages, start;

	while (end > 0) {
		uint32_t heat = pages[p->order[end - 1]].heat;

		if (heat < pl->hot)
			break;	/* sorted: no hotter page follows */
		for (start = end - 1; start > 0 && pages[p->order[start - 1]].heat == heat;)
			start--;
		for (size_t k = start; k < end; k++)
			promote_one(p, pl, p->order[k]);
		end = start;
	}
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

	demote_for_cap(p, &pl);
	if (p->params.demote)
		demote_cold(p, &pl, pl.need, POLICY_R_WMARK);
	promote(p, &pl);
	if (p->params.demote && p->params.demote_for_room) {
		open_closed(p, &pl);
		demote_cold(p, &pl, pl.unmet, POLICY_R_ROOM);
	}
	return 0;
}
