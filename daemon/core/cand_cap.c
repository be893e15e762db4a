// SPDX-License-Identifier: GPL-2.0-only
/*
 * Candidate selection for the cap exchange (candidates.c has the whole;
 * the policy's side is pol_exchange_for_cap()): a cgroup at its fast-tier
 * cap trades its coldest fast-tier memory for hotter memory of its own
 * that the cap holds back.  The policy weighs only candidates, and two
 * kinds would be missing:
 *
 *  - the waiting memory: the head leaves out the ranges of a cgroup at
 *    its cap (cand_in.cg_full), which the policy cannot promote and which
 *    would take every tick's candidates from the other cgroups'; it
 *    stages the hottest of them in 1 / CAND_CAP_SHARE of the tick's
 *    slots, so the policy sees what waits (cand_cap_left_out());
 *  - the residents: the head skips what it knows is on the fast tier, and
 *    the cold passes (idle memory, the table's coldest below where the
 *    head stopped) run only while the policy may demote.  So for each
 *    cgroup whose cap held hot candidates back in the last tick's policy
 *    (cand_in.cg_wait), its residents go first (cand_cap_walk()), in as
 *    many of the tick's slots: the idle memory of its processes, when the
 *    idle pass does not run this tick (cand_cap_idle_walk(): data loaded
 *    on the fast tier and never touched since has no heat, and would hold
 *    the cap for good), then its coldest entries that were seen on the
 *    fast tier (cand_range.fast_seen), from one selection of the table a
 *    tick while some cgroup waits; and, in the slots those leave, from a
 *    second selection, its coldest whole ranges never queried:
 *    first-touch memory with heat, which the head, taking the hottest not
 *    known fast, never reaches (DAMON's first, coarse regions give a data
 *    set loaded and left a little heat).  Each is queried once and
 *    remembered where the query found it.  Second, not mixed in: a
 *    cgroup's cold tail on the slow tier, never queried either, is often
 *    colder than its residents, and would take the slots from them for
 *    as many ticks as it has ranges.  The second selection costs a tick
 *    as much as the first, and runs only when the first left slots.
 *
 * The residents the table's selections took are marked with the pass
 * (cand_range.cap_pass), and the other passes leave them (cand_cap_taken()):
 * a range must be one candidate a tick, or two intents could move it.  (The
 * idle walk stages only ranges the table does not hold, and the passes
 * that take idle memory otherwise do not run in the same tick.)  Base
 * page entries (the sampling-event source's) are not remembered so, and
 * are weighed only once seen on the fast tier.
 */
#include "cand_int.h"

bool cand_cap_waiting(const struct cand_select *m, pid_t pid)
{
	const struct cand_proc *proc = cand_proc_find(m->procs, pid);

	return m->in->cg_wait && proc && proc->cgroup >= 0 && m->in->cg_wait[proc->cgroup];
}

/* The walk's entries: of a waiting cgroup, seen on the fast tier. */
static bool not_seen_fast(void *ctx, const struct hot_entry_view *v)
{
	const struct cand_select *m = ctx;
	const struct cand_range *rg;

	if (!cand_cap_waiting(m, v->pid))
		return true;
	rg = cand_range_peek(m->ranges, v->pid, v->addr);
	return !rg || !rg->fast_seen;
}

/* ... and, in what those leave, whole ranges never queried (their query
 * says, once: the flush remembers a range found all on one side). */
static bool queried(void *ctx, const struct hot_entry_view *v)
{
	const struct cand_select *m = ctx;

	return !cand_cap_waiting(m, v->pid) || v->len != m->geom.range ||
	       cand_range_peek(m->ranges, v->pid, v->addr);
}

/* The coldest entries @skip leaves, staged until @limit slots are taken. */
static void take_coldest(struct cand_select *m, bool (*skip)(void *, const struct hot_entry_view *),
			 size_t limit, uint64_t now_ns)
{
	const struct hot_skip sk = { .fn = skip, .ctx = m };
	size_t nv = hot_select_coldest_skip(m->hot, now_ns, &sk, m->views, MAX_VIEWS);

	for (size_t i = 0; i < nv && !cand_slots_taken(m, limit, now_ns); i++) {
		const struct hot_entry_view *v = &m->views[i];

		if (!cand_stage_entry(m, v, false, now_ns))
			break;
		cand_range(m->ranges, v->pid, v->addr)->cap_pass = m->pass;
		m->cap_walked = true;
	}
}

void cand_cap_walk(struct cand_select *m, size_t limit, bool idle, uint64_t now_ns)
{
	bool any = false;

	m->pass = m->pass == UINT32_MAX ? 1 : m->pass + 1;
	m->cap_walked = false;
	m->cap_peeks = 0;
	for (int i = 0; m->in->cg_wait && i < m->procs->nr && !any; i++)
		any = cand_cap_waiting(m, m->procs->procs[i].pid);
	if (!any)
		return;
	if (idle)	/* nothing is colder */
		cand_cap_idle_walk(m, limit, now_ns);
	take_coldest(m, not_seen_fast, limit, now_ns);
	if (!cand_slots_taken(m, limit, now_ns))
		take_coldest(m, queried, limit, now_ns);
	cand_flush_staged(m, now_ns);
}

bool cand_cap_taken(const struct cand_select *m, const struct hot_entry_view *v)
{
	const struct cand_range *rg;

	if (!m->cap_walked)
		return false;
	rg = cand_range_peek(m->ranges, v->pid, v->addr);
	return rg && rg->cap_pass == m->pass;
}

bool cand_cap_left_out(struct cand_select *m, const struct hot_entry_view *v)
{
	uint32_t nr_pages, slots;

	if (!cand_cgroup_marked(m->procs, m->in->cg_full, v->pid))
		return false;
	slots = cand_entry_slots(m, v, &nr_pages);
	if (m->cap_peeks + slots > m->max_cand / CAND_CAP_SHARE)
		return true;
	m->cap_peeks += slots;
	return false;
}
