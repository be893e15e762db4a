// SPDX-License-Identifier: GPL-2.0-only
/*
 * Candidate selection's idle pass (candidates.c has the whole): memory the
 * hotness source saw no access in, as cold candidates.
 */
#include "cand_int.h"

/*
 * Does the range at @addr of @pid hold pages tierd could demote?
 * CAND_SAMPLE_PAGES of its pages, evenly spaced: true when one is on a node
 * above the lowest tier.  A range whose sample is all on the lowest tier
 * is remembered as low (the passes skip it for CAND_FAST_RECHECK_NS); one whose
 * sample is all unmapped is sparse memory, little to gain, and left.  So
 * a terabyte of idle memory already on the slow tier costs the pass 16
 * page queries a range, not 512 (32 of 64 KiB pages).
 */
static bool idle_worth(struct cand_select *m, pid_t pid, uint64_t addr, uint64_t now_ns)
{
	int status[CAND_SAMPLE_PAGES];
	size_t mapped = 0;

	if (cand_sample_query(m->io, &m->geom, pid, addr, 0, status) < 0)
		return false;
	for (size_t i = 0; i < CAND_SAMPLE_PAGES; i++) {
		int idx = status[i] >= 0 ? topo_node_index(m->topo, status[i]) : -1;

		if (idx < 0)
			continue;
		mapped++;
		if (m->topo->nodes[idx].tier != m->topo->nr_tiers - 1)
			return true;
	}
	if (mapped == CAND_SAMPLE_PAGES)
		cand_range(m->ranges, pid, addr)->low_seen = cand_time(now_ns);
	return false;
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
 * Only whole 2 MiB ranges inside an idle range are taken (a region's
 * edges are pages, and the rest of an edge range may be in use), each as
 * one entry of the table would be: the pages of a range on one node are
 * one candidate (cand_flush_staged()).  A range the table holds an entry for
 * is left, whatever the source says now: the table saw it accessed while
 * tierd ran, and the coldest pass weighs it by its heat; so the hot set
 * is never taken for idle.  (The DAMON source, the only one that reports
 * idle ranges, keeps 2 MiB entries: one lookup covers the range.)  A
 * range known to be on the lowest tier is skipped, and any other is first
 * sampled (idle_worth()).
 *
 * Bounded per tick: IDLE_VISITS ranges looked at, IDLE_QUERY_PAGES pages
 * queried.  Where it stops, (pid, address), the next tick goes on, in
 * whatever the source reports then (idle_find()); at the end of the set
 * the next pass starts again from the first range.  A worked example: a
 * 1 GiB data set untouched for an hour, on a node under its watermark, is
 * 512 ranges; a tick samples each at 16 pages and queries the whole of
 * those on the fast node, 512 pages each, until the reserve's slots are
 * taken (a quarter of a tick's candidates, 8 Ki at the most: 16 ranges,
 * 32 MiB), then, with a table of a small hot set, in the rest of the
 * tick's slots up to its 64 Ki pages queried: some 120 ranges (240 MiB)
 * in all, one candidate each.  The policy demotes them, all at heat 0,
 * until the node is back at its high target; a node further short goes
 * on at the next tick, from there.  With the data set on the
 * slow tier already, a tick samples 4 Ki ranges (8 GiB) within its 64 Ki
 * pages, and skips them for CAND_FAST_RECHECK_NS after.
 */
void cand_idle_walk(struct cand_select *m, size_t limit, uint64_t now_ns)
{
	const struct idle_set *s = m->in->idle;

	if (!s || !s->n || m->idle_end)
		return;
	for (uint32_t i = idle_find(s, m->idle_pid, m->idle_addr); i < s->n; i++) {
		const struct idle_range *r = &s->r[i];
		uint64_t range = m->geom.range;
		uint64_t a = page_geom_range_base(&m->geom, r->start + range - 1);

		if (now_ns < r->since_ns || now_ns - r->since_ns < m->in->idle_min_ns ||
		    !cand_proc_find(m->procs, r->pid))
			continue;
		if (r->pid == m->idle_pid && a < m->idle_addr)
			a = m->idle_addr;
		for (; a < r->end && r->end - a >= range; a += range) {
			struct hot_entry_view v = { .pid = r->pid, .addr = a, .len = range,
						    .last_ns = r->since_ns };
			bool stop = m->idle_visited++ >= IDLE_VISITS ||
				    m->idle_queried >= IDLE_QUERY_PAGES ||
				    cand_slots_taken(m, limit, now_ns);

			if (!stop && (hot_entry_len(m->hot, r->pid, a) || cand_known_low(m->ranges, &v, now_ns)))
				continue;
			if (!stop) {
				m->idle_queried += CAND_SAMPLE_PAGES;
				if (!idle_worth(m, r->pid, a, now_ns))
					continue;
				stop = !cand_stage_entry(m, &v, true, now_ns);
			}
			if (stop) {	/* this range first next time */
				m->idle_pid = r->pid;
				m->idle_addr = a;
				return;
			}
			m->idle_queried += m->staged[m->nr_staged - 1].count;
		}
	}
	m->idle_pid = 0;
	m->idle_addr = 0;
	m->idle_end = true;
}
