// SPDX-License-Identifier: GPL-2.0-only
/*
 * Candidate selection (candidates.h), from the hotness table to a tick's
 * candidates, each with the node it is on:
 *
 *  0. for a cgroup whose fast-tier cap held hot candidates back, its
 *     residents: its idle memory (while the policy may not demote), its
 *     coldest ranges seen on the fast tier, then whole ranges never
 *     queried (the cap exchange, cand_cap.c);
 *  1. the hottest entries of the table (promotion) and, when the policy
 *     may demote this tick (policy_may_demote(): a node short of free
 *     memory, a cgroup over its cap), up to a quarter of them from the
 *     coldest (demotion; see select_candidates()): first memory the
 *     source saw no access in at all (cand_idle.c), then the table's
 *     coldest entries; while all the memory fits the fast tier, what
 *     the source never named on a lower tier (the fill pass, cand_idle.c);
 *  2. a range entry (2 MiB: 512 pages of 4 KiB, 32 of 64 KiB) is one
 *     candidate when it is a PMD THP, else its base pages are queried,
 *     and are one candidate when they are all on one node
 *     (cand_flush_staged()); at most max_cand slots (a page queried, a
 *     THP) a tick, so the node queries and the memory are bounded;
 *  3. a range seen wholly on the fast tier, or moved there wholly by the
 *     last tick (the account step), is not queried again for promotion
 *     for CAND_FAST_RECHECK_NS: the budget goes to the ranges that may still
 *     need moving (cand_still_fast() rechecks a sample of its pages after);
 *  4. where each candidate is: node queries, one call for a run of
 *     entries of one process, up to QUERY_ENTRIES entries and QUERY_PAGES
 *     pages (see cand_stage_entry()).
 *
 * What a tick looks at is bounded: MAX_VIEWS entries of the table a
 * selection, 1 + HOT_WINDOWS selections for the hottest (head_walk(),
 * which rechecks at most HEAD_RECHECKS ranges by sample) and
 * COLD_WINDOWS for the coldest, COLD_QUERY_PAGES pages the coldest pass
 * queries, IDLE_QUERY_PAGES and IDLE_VISITS 2 MiB ranges each of the idle
 * and fill passes, and max_cand slots in all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cand_int.h"

int cand_select_new(size_t max_cand, const struct page_geom *g, struct cand_select **ret)
{
	struct cand_select *m = calloc(1, sizeof(*m));

	*ret = NULL;
	if (!m)
		return -ENOMEM;
	m->geom = *g;
	m->range_pages = (uint32_t)page_geom_range_pages(g);
	m->query_pages = m->range_pages > QUERY_PAGES ? m->range_pages : QUERY_PAGES;
	m->max_cand = max_cand;
	m->views = calloc(MAX_VIEWS, sizeof(*m->views));
	m->staged = calloc(QUERY_ENTRIES, sizeof(*m->staged));
	m->addrs = calloc(m->query_pages, sizeof(*m->addrs));
	m->status = calloc(m->query_pages, sizeof(*m->status));
	if (!m->views || !m->staged || !m->addrs || !m->status) {
		cand_select_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

void cand_select_free(struct cand_select *m)
{
	if (!m)
		return;
	free(m->views);
	free(m->staged);
	free(m->addrs);
	free(m->status);
	free(m);
}

/*
 * The staged entries' nodes into status[]: one move_pages node query for
 * each run of staged entries of one process (in the common case of one
 * workload, one call for up to QUERY_ENTRIES entries or QUERY_PAGES
 * pages; a query per entry would be up to 32 Ki calls a tick for the
 * sampling-event source's 4 KiB entries).
 */
static void query_staged(struct cand_select *m)
{
	size_t run = 0;

	for (size_t k = 1; k <= m->nr_staged; k++) {
		const struct staged *r = &m->staged[run], *last = &m->staged[k - 1];
		size_t count;

		if (k < m->nr_staged && m->staged[k].v.pid == r->v.pid)
			continue;
		/* staged[run, k): their pages follow each other in addrs[].  A
		 * call that fails (the process gone) leaves them unmapped. */
		count = last->first + last->count - r->first;
		if (m->io->query(m->io->ctx, r->v.pid, count, m->addrs + r->first,
			      m->status + r->first) < 0)
			for (size_t i = r->first; i < r->first + count; i++)
				m->status[i] = -ESRCH;
		run = k;
	}
}

/* Can a 2 MiB candidate ever pass the rate limits of @proc?  Not when a
 * bucket holds less (a rate below 4 MiB/s at 500 ms ticks): its pages stay
 * candidates of their own then, as they fit a tick's refill. */
static bool range_fits_rates(const struct cand_select *m, const struct cand_proc *proc)
{
	uint64_t cg = proc->cgroup >= 0 && m->in->cg_burst ? m->in->cg_burst[proc->cgroup] : 0;

	if (m->in->global_burst && m->in->global_burst < m->geom.range)
		return false;
	return !cg || cg >= m->geom.range;
}

/*
 * The staged entries' candidates, in the order they were staged, appended
 * to cand[] with their nodes (query_staged()).  Pages not mapped are left
 * out.  A range of base pages found all on one node is one candidate
 * (POLICY_F_PAGES) instead of 512, where the rates let 2 MiB through.
 * For the cold passes, an entry found wholly on the lowest tier adds
 * nothing: there is no tier to demote it to, and it would take the
 * reserve's slots from the cold pages that can go down (its range is
 * remembered as low, see cand_known_low()).
 */
void cand_flush_staged(struct cand_select *m, uint64_t now_ns)
{
	int fast_tier = topo_fast_tier(m->topo);

	query_staged(m);
	for (size_t k = 0; k < m->nr_staged; k++) {
		const struct staged *s = &m->staged[k];
		const struct hot_entry_view *v = &s->v;
		const struct cand_proc *proc = cand_proc_find(m->procs, v->pid);
		const struct cand_range *rg = cand_range_peek(m->ranges, v->pid, v->addr);
		bool all_fast = true, all_low = true, one_node = true, whole;
		size_t added = 0, mapped = 0; /* candidates, pages found */
		int node = -1;
		uint32_t heat;

		heat = v->heat >= 4e9 ? 4000000000u : (uint32_t)(v->heat + 0.5);
		if (v->heat > 0 && !heat)
			heat = 1;
		for (size_t i = s->first; i < s->first + s->count; i++) {
			int idx = topo_node_index(m->topo, m->status[i]);

			if (m->status[i] < 0 || idx < 0)
				continue; /* not populated, or not a memory node */
			if (!cand_settled_node(m->topo, idx, fast_tier))
				all_fast = false;
			if (m->topo->nodes[idx].tier != m->topo->nr_tiers - 1)
				all_low = false;
			if (mapped++ && m->status[i] != node)
				one_node = false;
			node = m->status[i];
		}
		/* A range of base pages all on one node: one candidate. */
		whole = s->count == m->range_pages && mapped == s->count && one_node &&
			range_fits_rates(m, proc) &&
			!cand_denied_whole(m->ranges, v->pid, v->addr, node, now_ns);
		for (size_t i = s->first; i < s->first + s->count; i++) {
			if (m->status[i] < 0 || topo_node_index(m->topo, m->status[i]) < 0 ||
			    cand_denied_skip(m->ranges, v->pid, (uint64_t)(uintptr_t)m->addrs[i],
					     m->status[i], now_ns))
				continue;
			m->cand[m->n + added++] = (struct policy_page){
				.pid = v->pid,
				.addr = (uint64_t)(uintptr_t)m->addrs[i],
				.nr_pages = whole ? m->range_pages : s->nr_pages,
				.node = m->status[i],
				.heat = heat,
				.last_access_ns = v->last_ns,
				.cgroup = (int16_t)proc->cgroup,
				.flags = (whole ? POLICY_F_PAGES : 0) |
					 (s->fill ? POLICY_F_FILL : 0),
				.rule = proc->rule,
				.last_promote_ns = rg ? cand_ns(rg->last_promote) : 0,
				.last_demote_ns = rg ? cand_ns(rg->last_demote) : 0,
			};
			if (whole)
				break;
		}
		/* What the query saw, for the passes that skip ranges known fast
		 * or low; a range already remembered loses a mark it no longer
		 * earns.  Marks are per range: a base page entry says
		 * nothing of the rest. */
		if (mapped && v->len == m->geom.range && (all_fast || all_low || rg)) {
			struct cand_range *r = cand_range(m->ranges, v->pid, v->addr);

			r->fast_seen = all_fast ? cand_time(now_ns) : 0;
			r->low_seen = all_low ? cand_time(now_ns) : 0;
		}
		if ((s->cold && mapped && all_low) || (s->fill && mapped && all_fast))
			continue;
		m->n += added;
		m->slots += mapped;
	}
	m->nr_staged = 0;
	m->staged_pages = 0;
}

/*
 * Stage the pages of entry @v for the node query, as candidates once
 * cand_flush_staged() has their nodes; the staged entries go first when the
 * query's arrays are full, or when the staged pages might not all fit
 * in cand[] (pages found unmapped, and cold entries found on the lowest
 * tier, give their slots back).  False, and cand_full set, when the entry
 * does not fit even then.
 */
bool cand_stage_entry(struct cand_select *m, const struct hot_entry_view *v, bool cold,
		      uint64_t now_ns)
{
	uint32_t nr_pages, count;
	struct staged *s;

	if (!cand_proc_find(m->procs, v->pid))
		return true;
	count = cand_entry_slots(m, v, &nr_pages);
	if (m->nr_staged == QUERY_ENTRIES || m->staged_pages + count > m->query_pages ||
	    m->slots + m->staged_pages + count > m->max_cand)
		cand_flush_staged(m, now_ns);
	if (m->slots + count > m->max_cand) {
		m->cand_full = true; /* gather() stops at the first refusal */
		return false;
	}
	s = &m->staged[m->nr_staged++];
	*s = (struct staged){ .v = *v, .first = m->staged_pages, .count = count,
			      .nr_pages = nr_pages, .cold = cold };
	for (uint32_t i = 0; i < count; i++)
		m->addrs[s->first + i] = (void *)(uintptr_t)(v->addr + ((uint64_t)i << m->geom.shift));
	m->staged_pages += count;
	if (cold)
		m->cold_queried += count;
	return true;
}

/* Are @limit candidate slots taken?  Staged pages count as taken until
 * their query, which may give some back: then they are queried first. */
bool cand_slots_taken(struct cand_select *m, size_t limit, uint64_t now_ns)
{
	if (m->slots + m->staged_pages < limit)
		return false;
	cand_flush_staged(m, now_ns);
	return m->slots >= limit;
}

/*
 * This tick's candidates into m->cand, hottest entries first; returns how
 * many.  When the policy may demote (@demote: policy_may_demote()), a
 * quarter of max_cand is kept for the coldest entries, as demotion takes
 * only pages that are candidates: with a hot set of more than max_cand
 * pages the hottest alone fill the cap, and the cold pages the policy
 * would demote are never looked at (300 entries of 2 MiB base pages fill
 * the cap after 64).  Otherwise promotion gets the whole cap but the cap
 * exchange's share (cand_cap.c): a reserve kept always would cut each
 * tick of a hot set of base pages to 24 Ki pages.
 *
 * With fewer than MAX_VIEWS entries the views are the whole table, the
 * coldest at their tail: the reserve is taken from there first, then the
 * hottest from the head, leaving out what the reserve took.  With
 * MAX_VIEWS, the table may hold more: the hottest up to the reserve, then
 * a coldest pass (cold_walk()) over the entries colder than the last one
 * the head looked at (not the last view: with a table a little larger
 * than MAX_VIEWS, the cold entries are in the views, past where the head
 * stopped, and none is colder than the last view).  The cold passes do
 * not skip ranges known fast, they are what demotion wants, but skip
 * those known to be on the lowest tier: the coldest entries are often
 * ranges already there (demoted by an earlier tick, or placed there), and
 * would take the whole reserve every tick.  The tail's entries are every
 * entry of the table, the hot set too, so what it finds on the lowest
 * tier stays a candidate (the head skips what the tail took: one query a
 * range a tick).  The coldest pass is below everything the head looked
 * at, so an entry it finds on the lowest tier takes no slot
 * (cand_flush_staged()), and its queries are bounded by COLD_QUERY_PAGES a
 * tick: 16 Ki base pages, what a quarter of the cap's slots would query.
 * (select_candidates() follows cold_walk() and head_take(), which it calls.)
 */

/*
 * The coldest pass over a table larger than MAX_VIEWS: the entries colder
 * than @floor_heat, coldest first, MAX_VIEWS at a time (at most
 * COLD_WINDOWS selections), from where the last tick's pass stopped
 * (m->cold_cursor) until the cap is full or the tick's COLD_QUERY_PAGES
 * are staged; once it reaches @floor_heat or the end of the table, the
 * next pass starts again from the coldest.  Without the cursor a table
 * whose MAX_VIEWS coldest entries all sit on the lowest tier (more than
 * 8 GiB of 2 MiB ranges) hides every colder-than-hot page behind them on
 * the fast tier: each tick would look at the same coldest entries only.
 * A selection walks the whole table (12-19 ms for a million entries), so
 * a tick makes at most COLD_WINDOWS of them, and only while the policy
 * may demote.
 */
static void cold_walk(struct cand_select *m, double floor_heat, uint64_t now_ns)
{
	for (int w = 0; w < COLD_WINDOWS; w++) {
		size_t nv = hot_select_coldest_after(m->hot, 0, now_ns, &m->cold_cursor,
						     m->views, MAX_VIEWS);
		bool stopped = false;
		size_t i;

		for (i = 0; i < nv && m->views[i].heat < floor_heat; i++) {
			if (cand_known_low(m->ranges, &m->views[i], now_ns) ||
			    cand_cap_taken(m, &m->views[i]))
				continue;
			stopped = m->cold_queried >= COLD_QUERY_PAGES ||
				  !cand_stage_entry(m, &m->views[i], true, now_ns);
			if (stopped)	/* the tick's pages, or views[i] did not fit */
				break;
		}
		if (stopped) {	/* views[i] first next time */
			if (i > 0)
				hot_cursor_after(m->hot, &m->views[i - 1], &m->cold_cursor);
			return;
		}
		if (i < nv || nv < MAX_VIEWS) {	/* the floor or the end */
			memset(&m->cold_cursor, 0, sizeof(m->cold_cursor));
			return;
		}
		hot_cursor_after(m->hot, &m->views[nv - 1], &m->cold_cursor);
	}
}

/* Stage @v unless the cap walk took it, it is settled on the fast tier, or
 * its cgroup is full (past its share, cand_cap_left_out()); @walked:
 * head_settled() judged it, and only a range the memory does not know is
 * left to sample.  False when @limit slots are taken. */
static bool head_take(struct cand_select *m, const struct hot_entry_view *v, size_t limit,
		      uint64_t now_ns, bool walked)
{
	bool settled;

	if (cand_slots_taken(m, limit, now_ns) || m->cand_full)
		return false;
	if (walked)
		settled = !cand_range_peek(m->ranges, v->pid, v->addr) &&
			  cand_still_fast(m->ranges, m->procs, m->io, m->topo, v, now_ns);
	else
		settled = cand_cap_taken(m, v) || cand_known_fast(m->ranges, v, now_ns) ||
			  cand_still_fast(m->ranges, m->procs, m->io, m->topo, v, now_ns) ||
			  cand_cap_left_out(m, v);
	if (!settled)
		cand_stage_entry(m, v, false, now_ns);
	return true;
}

/*
 * What the head's walk leaves out: a range known fast or the cap walk's,
 * one of a cgroup at its fast-tier cap (no peeks past the first MAX_VIEWS:
 * a selection's skip comes in table order), and one seen fast whose recheck is
 * due, rechecked by its sample (cand_still_fast()) while the tick's
 * HEAD_RECHECKS last, else taken as still fast until a later tick's: a
 * settled hot set of tens of thousands of ranges, rechecked whole every
 * 10 s, would fill every window with ranges that stay where they are.
 */
#define HEAD_RECHECKS 512

struct head_skip_ctx {
	struct cand_select *m;
	uint64_t now_ns;
	unsigned int rechecks;
};

static bool head_settled(void *ctx, const struct hot_entry_view *v)
{
	struct head_skip_ctx *h = ctx;
	struct cand_select *m = h->m;
	const struct cand_range *rg;

	if (cand_known_fast(m->ranges, v, h->now_ns) || cand_cap_taken(m, v) ||
	    cand_cgroup_marked(m->procs, m->in->cg_full, v->pid))
		return true;
	rg = cand_range_peek(m->ranges, v->pid, v->addr);
	if (!rg || !rg->fast_seen)
		return false;	/* not seen fast: a candidate */
	if (h->rechecks >= HEAD_RECHECKS)
		return true;	/* its recheck is a later tick's */
	h->rechecks++;
	return cand_still_fast(m->ranges, m->procs, m->io, m->topo, v, h->now_ns);
}

/*
 * The head past the MAX_VIEWS hottest, when it looked at all of them and
 * the cap has room: a hot set of more than MAX_VIEWS entries (8 GiB of
 * 2 MiB ranges) is known fast up to there once promoted, and without this
 * the ranges past it would never be looked at.  Each tick from the head's
 * end, the hottest entries not settled on the fast tier (head_settled()),
 * MAX_VIEWS a selection (one pass over the table each), at most
 * HOT_WINDOWS selections.  Not from where an earlier tick stopped: heat
 * moves, and a range that grew hotter than that place would wait for the
 * walk to go round the whole table (on tierd-sim's 256 GiB Zipf workload
 * with hardware sampling, such a walk takes the hot set to 90% on the
 * fast tier in 39 s, this one in 9 s).  Returns the heat of the last entry
 * looked at (the coldest pass's floor).
 */
static double head_walk(struct cand_select *m, size_t limit, uint64_t now_ns)
{
	struct head_skip_ctx ctx = { .m = m, .now_ns = now_ns };
	const struct hot_skip skip = { .fn = head_settled, .ctx = &ctx };
	double floor = m->views[MAX_VIEWS - 1].heat;
	struct hot_cursor cur;
	size_t nv, i;

	hot_cursor_after(m->hot, &m->views[MAX_VIEWS - 1], &cur);
	for (int w = 0; w < HOT_WINDOWS; w++) {
		nv = hot_select_hottest_after(m->hot, 0, now_ns, &cur, &skip, m->views,
					      MAX_VIEWS);
		for (i = 0; i < nv && head_take(m, &m->views[i], limit, now_ns, true); i++)
			;
		if (i)
			floor = m->views[i - 1].heat;
		if (i < nv) {	/* the cap */
			m->capped = true;
			return floor;
		}
		if (nv < MAX_VIEWS)	/* the end of the table */
			return floor;
		hot_cursor_after(m->hot, &m->views[nv - 1], &cur);
	}
	return floor;
}

static size_t select_candidates(struct cand_select *m, bool demote, uint64_t now_ns)
{
	size_t nv, reserve, left, i;
	double floor;
	bool tail;

	m->cand_full = false;
	m->n = m->slots = m->cold_queried = 0;
	cand_walks_begin(m);
	/* First: it takes m->views; idle memory is its own when no pass below takes it. */
	cand_cap_walk(m, m->max_cand / CAND_CAP_SHARE, !demote, now_ns);
	nv = hot_select_hottest(m->hot, 0, 0.0, now_ns, m->views, MAX_VIEWS);
	reserve = demote ? m->max_cand / 4 : 0;
	/* Idle memory first: nothing is colder.  What it leaves of the
	 * reserve is the table's coldest's. */
	if (reserve) {
		cand_idle_walk(m, reserve, now_ns);
		cand_flush_staged(m, now_ns);
		m->cand_full = false;
		m->cold_queried = 0;	/* the coldest pass's own budget */
	}
	left = reserve > m->slots ? reserve - m->slots : 0;
	tail = reserve && nv < MAX_VIEWS;
	if (tail) {
		memset(m->cold_taken, 0, sizeof(m->cold_taken));
		for (size_t k = nv; k-- > 0 && !cand_slots_taken(m, reserve, now_ns);) {
			if (cand_known_low(m->ranges, &m->views[k], now_ns) ||
			    cand_cap_taken(m, &m->views[k]))
				continue;
			cand_stage_entry(m, &m->views[k], false, now_ns);
			m->cold_taken[k / 64] |= 1ull << (k % 64);
		}
		reserve = 0;
		left = 0;
	}
	for (i = 0; i < nv; i++) {
		if (tail && (m->cold_taken[i / 64] & 1ull << (i % 64)))
			continue;
		if (!head_take(m, &m->views[i], m->max_cand - left, now_ns, false))
			break;
	}
	/* Stopped by the cap with entries left: the last one may have been
	 * refused (a range of 512 base pages with fewer slots left). */
	m->capped = m->cand_full || i < nv;
	floor = i ? m->views[i - 1].heat : 0.0;
	if (i == MAX_VIEWS && !m->capped)
		floor = head_walk(m, m->max_cand - left, now_ns);
	if (reserve && i > 0)
		cold_walk(m, floor, now_ns);
	/* All the memory fits: what the source never named (cand_idle.c). */
	if (m->in->fill && !demote && !m->cand_full)
		cand_fill_walk(m, m->max_cand, now_ns);
	/* Slots the table's entries left: more idle memory.  A node far
	 * short of free memory would otherwise get a reserve's worth a tick
	 * and, once above its low target, stop short of its high one. */
	if (demote && !m->cand_full)
		cand_idle_walk(m, m->max_cand, now_ns);
	cand_flush_staged(m, now_ns);
	return m->n;
}

void cand_select_run(struct cand_select *m, const struct cand_in *in, const struct cand_io *io,
		     uint64_t now_ns, struct cand_out *out)
{
	m->in = in;
	m->io = io;
	m->topo = in->topo;
	m->hot = in->hot;
	m->procs = in->procs;
	m->ranges = in->ranges;
	m->cand = out->cand;
	m->capped = false;
	out->nr_cand = select_candidates(m, in->demote, now_ns);
	out->slots = m->slots;
	out->capped = m->capped;
}
