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
 *    the cold passes run only while the policy may demote, from the
 *    table's coldest, below where the head stopped.  So for each cgroup
 *    whose cap held hot candidates back in the last tick's policy
 *    (cand_in.cg_wait), its coldest entries that were seen on the fast
 *    tier (cand_range.fast_seen) go first (cand_cap_walk()), in as
 *    many of the tick's slots, from one selection of the table a tick
 *    while some cgroup waits.
 *
 * The residents the walk took are marked with the selection's pass
 * (cand_range.cap_pass), and the other passes leave them (cand_cap_taken()):
 * a range must be one candidate a tick, or two intents could move it.  A
 * resident tierd never saw on the fast tier (first-touch memory the head
 * never queried) is weighed only when another pass makes it a candidate.
 */
#include "cand_int.h"

static int waiting_cgroup(const struct cand_select *m, pid_t pid)
{
	const struct cand_proc *proc = cand_proc_find(m->procs, pid);

	if (!proc || proc->cgroup < 0 || !m->in->cg_wait[proc->cgroup])
		return -1;
	return proc->cgroup;
}

/* The walk's entries: of a waiting cgroup, seen on the fast tier. */
static bool not_resident(void *ctx, const struct hot_entry_view *v)
{
	const struct cand_select *m = ctx;
	const struct cand_range *rg;

	if (waiting_cgroup(m, v->pid) < 0)
		return true;
	rg = cand_range_peek(m->ranges, v->pid, v->addr);
	return !rg || !rg->fast_seen;
}

void cand_cap_walk(struct cand_select *m, size_t limit, uint64_t now_ns)
{
	const struct hot_skip skip = { .fn = not_resident, .ctx = m };
	bool any = false;
	size_t nv;

	m->pass = m->pass == UINT32_MAX ? 1 : m->pass + 1;
	m->cap_walked = false;
	m->cap_peeks = 0;
	for (int i = 0; m->in->cg_wait && i < m->procs->nr && !any; i++)
		any = waiting_cgroup(m, m->procs->procs[i].pid) >= 0;
	if (!any)
		return;
	nv = hot_select_coldest_skip(m->hot, now_ns, &skip, m->views, MAX_VIEWS);
	for (size_t i = 0; i < nv && !cand_slots_taken(m, limit, now_ns); i++) {
		const struct hot_entry_view *v = &m->views[i];

		if (!cand_stage_entry(m, v, false, now_ns))
			break;
		cand_range(m->ranges, v->pid, v->addr)->cap_pass = m->pass;
		m->cap_walked = true;
	}
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
