// SPDX-License-Identifier: GPL-2.0-only
/*
 * Candidate selection's passes over sets of memory ranges (candidates.c
 * has the whole): memory the hotness source saw no access in, as cold
 * candidates (the idle pass), and, while all the processes' memory fits
 * the fast tier, their memory on a lower tier that the table does not
 * hold, as fill candidates (the fill pass).
 */
#include "cand_int.h"

/*
 * What a sample query of @pid's range at @addr says is worth staging:
 * CAND_SAMPLE_PAGES of its pages, evenly spaced.  The idle pass wants one
 * above the lowest tier (something to demote), the fill pass one below
 * where promotion leaves pages (something to promote).  A range whose
 * sample is all on the lowest tier (idle) or all settled (fill) is
 * remembered so (the passes skip it for CAND_FAST_RECHECK_NS); one whose
 * sample is all unmapped is sparse memory, little to gain, and left.  So
 * a terabyte of idle memory already on the slow tier costs the pass 16
 * page queries a range, not 512 (32 of 64 KiB pages).
 */
static bool range_worth(struct cand_select *m, pid_t pid, uint64_t addr, bool fill,
			uint64_t now_ns)
{
	int status[CAND_SAMPLE_PAGES], fast_tier = topo_fast_tier(m->topo);
	size_t mapped = 0;

	if (cand_sample_query(m->io, &m->geom, pid, addr, 0, status) < 0)
		return false;
	for (size_t i = 0; i < CAND_SAMPLE_PAGES; i++) {
		int idx = status[i] >= 0 ? topo_node_index(m->topo, status[i]) : -1;

		if (idx < 0)
			continue;
		mapped++;
		if (fill ? !cand_settled_node(m->topo, idx, fast_tier) :
			   m->topo->nodes[idx].tier != m->topo->nr_tiers - 1)
			return true;
	}
	if (mapped == CAND_SAMPLE_PAGES) {
		struct cand_range *r = cand_range(m->ranges, pid, addr);

		if (fill)
			r->fast_seen = cand_time(now_ns);
		else
			r->low_seen = cand_time(now_ns);
	}
	return false;
}

/*
 * One pass @w over the ranges of @s, whole 2 MiB ranges of each (a range's
 * edges are pages, and the rest of an edge range may be in use), each
 * staged as one entry of the table would be: the pages of a range on one
 * node are one candidate (cand_flush_staged()), of heat 0.  A range the
 * table holds an entry for is left, whatever the source says now: the
 * table saw it accessed while tierd ran, and the passes over the table
 * weigh it by its heat; so the hot set is never taken for idle.  (The DAMON
 * source, the only one that reports idle ranges, keeps 2 MiB entries: one
 * lookup covers the range.  The sampling-event source's entries are base
 * pages: a fill range holding a hot one that is not its first is staged
 * too, and the page is asked to move twice; the second finds it there.)
 * A range known to be where the pass would move
 * it from nowhere (the lowest tier for idle, settled for fill) is skipped,
 * and any other is first sampled (range_worth()).
 *
 * Bounded per tick: IDLE_VISITS ranges looked at, IDLE_QUERY_PAGES pages
 * queried.  Where it stops, (pid, address), the next tick goes on, in
 * whatever the set holds then (idle_find()), or, the idle passes after a
 * tick whose moves were cut short, from the first range they staged
 * (cand_walks_begin()); at its end the next pass starts again from the
 * first range.
 */
enum walk_kind { WALK_IDLE, WALK_FILL, WALK_CAP_IDLE };

static void walk(struct cand_select *m, struct cand_walk *w, const struct idle_set *s,
		 enum walk_kind kind, size_t limit, uint64_t now_ns)
{
	bool fill = kind == WALK_FILL;

	for (uint32_t i = idle_find(s, w->pid, w->addr); i < s->n; i++) {
		const struct idle_range *r = &s->r[i];
		uint64_t range = m->geom.range;
		uint64_t a = page_geom_range_base(&m->geom, r->start + range - 1);

		if (!cand_proc_find(m->procs, r->pid))
			continue;
		if (fill ? cand_cgroup_marked(m->procs, m->in->cg_capped, r->pid) :
			   now_ns < r->since_ns || now_ns - r->since_ns < m->in->idle_min_ns ||
			   (kind == WALK_CAP_IDLE && !cand_cap_waiting(m, r->pid)))
			continue;
		if (r->pid == w->pid && a < w->addr)
			a = w->addr;
		for (; a < r->end && r->end - a >= range; a += range) {
			struct hot_entry_view v = { .pid = r->pid, .addr = a, .len = range,
						    .last_ns = r->since_ns };
			bool stop = w->visited++ >= IDLE_VISITS || w->queried >= IDLE_QUERY_PAGES ||
				    cand_slots_taken(m, limit, now_ns);

			if (!stop && (hot_entry_len(m->hot, r->pid, a) ||
				      (fill ? cand_known_fast(m->ranges, &v, now_ns) :
					      cand_known_low(m->ranges, &v, now_ns))))
				continue;
			if (!stop) {
				w->queried += CAND_SAMPLE_PAGES;
				if (!range_worth(m, r->pid, a, fill, now_ns))
					continue;
				stop = !cand_stage_entry(m, &v, !fill, now_ns);
			}
			if (stop) {	/* this range first next time */
				w->pid = r->pid;
				w->addr = a;
				return;
			}
			m->staged[m->nr_staged - 1].fill = fill;
			w->found++;
			if (!w->first_pid) {
				w->first_pid = r->pid;
				w->first_addr = a;
			}
			w->queried += m->staged[m->nr_staged - 1].count;
		}
	}
	w->pid = 0;
	w->addr = 0;
	w->end = true;
}

/*
 * A tick's moves are cut at its bytes (or intents): an idle walk that
 * staged more than they took would go on past the rest and find them
 * again only after a pass over the whole set, which over a terabyte of
 * idle memory on the slow tier takes a hundred ticks at the idle pace.
 * So after a tick cut short (in->resume_staged) the idle walks go on from
 * the first range they staged: those that moved are on the slow tier now
 * and cost a sample each.  The fill pass finds what it staged again at
 * its next read of the mappings.
 */
void cand_walks_begin(struct cand_select *m)
{
	struct cand_walk *idle[] = { &m->idle, &m->cap_idle };

	m->fill.visited = m->fill.queried = 0;
	m->fill.end = false;
	for (size_t i = 0; i < sizeof(idle) / sizeof(idle[0]); i++) {
		struct cand_walk *w = idle[i];

		w->visited = w->queried = 0;
		w->end = false;
		if (m->in->resume_staged && w->first_pid) {
			w->pid = w->first_pid;
			w->addr = w->first_addr;
		}
		w->first_pid = 0;
		w->first_addr = 0;
	}
}

/*
 * The idle pass: memory the hotness source saw no access in for at least
 * in->idle_min_ns (core/idle.h: DAMON's regions with nr_accesses 0, by
 * their age), as cold candidates of heat 0, until @limit slots are taken.
 * This is what finds a data set that nobody has touched since before
 * tierd started: it has no heat, so the table never holds it.  A tick
 * calls it twice (select_candidates()): first within the reserve kept for
 * the coldest, then, after the table's entries, in the slots they left;
 * the second call goes on from where the first stopped.
 *
 * A worked example: a 1 GiB data set untouched for an hour, on a node
 * under its watermark, is 512 ranges; a tick samples each at 16 pages and
 * queries the whole of those on the fast node, 512 pages each, until the
 * reserve's slots are taken (a quarter of a tick's candidates, 8 Ki at the
 * most: 16 ranges, 32 MiB), then, with a table of a small hot set, in the
 * rest of the tick's slots up to its 64 Ki pages queried: some 120 ranges
 * (240 MiB) in all, one candidate each.  The policy demotes them, all at
 * heat 0, until the node is back at its high target; a node further short
 * goes on at the next tick, from there.  With the data set on the slow
 * tier already, a tick samples 4 Ki ranges (8 GiB) within its 64 Ki pages,
 * and skips them for CAND_FAST_RECHECK_NS after.
 */
void cand_idle_walk(struct cand_select *m, size_t limit, uint64_t now_ns)
{
	const struct idle_set *s = m->in->idle;

	if (s && s->n && !m->idle.end)
		walk(m, &m->idle, s, WALK_IDLE, limit, now_ns);
}

/*
 * The cap exchange's idle pass (cand_cap.c): the same, over the processes
 * of the cgroups waiting at their cap only, for the ticks the idle pass
 * does not run (the policy may not demote).  Its own place in the set:
 * the idle pass's is where demotion goes on from.
 */
void cand_cap_idle_walk(struct cand_select *m, size_t limit, uint64_t now_ns)
{
	const struct idle_set *s = m->in->idle;

	if (s && s->n && !m->cap_idle.end)
		walk(m, &m->cap_idle, s, WALK_CAP_IDLE, limit, now_ns);
}

/*
 * The fill pass: in->fill holds the tracked processes' mappings (the
 * gather step reads /proc/PID/maps, sys/procmem.h), given only while
 * their memory all fits the fast tier's room (policy_footprint_fits()).
 * A sampler that sees one access in 10^5 names a range touched a few
 * times a second once in hours; the best placement has it on the fast
 * tier all the same.  So the memory the table does not hold, found on a
 * lower tier, is staged as fill candidates (POLICY_F_FILL), after the
 * table's entries, and the policy promotes them in the room the hot
 * leave.  What a tick staged and the policy did not move (the tick's
 * bytes, a rate limit) the next pass finds again; a pass that found
 * nothing to stage waits for the next read of the mappings, so that
 * memory all on the fast tier is not sampled again every tick.
 */
void cand_fill_walk(struct cand_select *m, size_t limit, uint64_t now_ns)
{
	const struct idle_set *s = m->in->fill;

	if (!s || !s->n || m->fill.end || m->fill.done == s->reports)
		return;
	walk(m, &m->fill, s, WALK_FILL, limit, now_ns);
	if (m->fill.end) {
		if (!m->fill.found)
			m->fill.done = s->reports;
		m->fill.found = 0;
	}
}
