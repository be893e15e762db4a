// SPDX-License-Identifier: GPL-2.0-only
/*
 * What may move now: the cool-down and ping-pong holds, the cgroup and GPU
 * caps, the rate buckets, and writing an intent with what it changes in
 * the plan.
 */
#include "policy_int.h"

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

/* True when candidate @i must stay for now; counted once per tick. */
bool pol_held_recently(struct policy *p, struct plan *pl, uint32_t i, bool promote)
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
 * What a move does to rule @rule's usage, which counts its node only: up
 * into it, down out of it.  UINT64_MAX (not read yet, core/gpu_usage)
 * stays so.
 */
static void rule_moved(const struct policy *p, struct plan *pl, int rule, int from, int to,
		       uint64_t bytes)
{
	uint64_t *used = &pl->rule_used[rule];
	int node = p->params.rules[rule].node;

	if (*used == UINT64_MAX)
		return;
	if (pl->topo->nodes[to].id == node)
		*used = *used > UINT64_MAX - 1 - bytes ? UINT64_MAX - 1 : *used + bytes;
	if (pl->topo->nodes[from].id == node)
		*used -= bytes < *used ? bytes : *used;
}

/*
 * Write the intent to move the first @bytes of candidate @i (all of it, or
 * part of a range of base pages: pol_fit_bytes()) from node index @from to @to,
 * after the rate check.  Returns true when written.
 */
bool pol_emit_bytes(struct policy *p, struct plan *pl, uint32_t i, int from, int to,
		       enum policy_kind kind, enum policy_reason reason, uint64_t bytes)
{
	const struct policy_page *pg = &pl->in->pages[i];
	struct policy_output *out = pl->out;
	struct policy_intent *it;
	int why;

	if (out->nr_intents >= out->max_intents ||
	    (out->max_bytes && out->nr_intents && out->bytes + bytes > out->max_bytes)) {
		hold(pl, POLICY_H_OUTPUT_FULL);
		return false;
	}
	why = charge(pl, pg, bytes);
	if (why >= 0) {
		hold(pl, why);
		return false;
	}
	it = &out->intents[out->nr_intents++];
	out->bytes += bytes;
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
	if (pg->rule >= 0)
		rule_moved(p, pl, pg->rule, from, to, bytes);
	out->stats.intents[reason]++;
	if (kind == POLICY_PROMOTE)
		out->stats.promote_bytes += bytes;
	if (reason == POLICY_R_FILL)
		out->stats.fill_bytes += bytes;
	if (kind == POLICY_DEMOTE)
		out->stats.demote_bytes += bytes;
	return true;
}

bool pol_emit(struct policy *p, struct plan *pl, uint32_t i, int from, int to,
		 enum policy_kind kind, enum policy_reason reason)
{
	return pol_emit_bytes(p, pl, i, from, to, kind, reason, page_bytes(p, &pl->in->pages[i]));
}

/*
 * The bytes of candidate @pg to move where a cap lets @avail bytes through
 * (0: none fit).  A base page or a THP moves whole: when it fits, or
 * (@up, a demotion down to a cap) whenever anything is to go.  A range of
 * base pages moves its first pages, as many as @avail holds, rounded down
 * (@up: up), at most all of them.
 */
uint64_t pol_fit_bytes(const struct policy *p, const struct policy_page *pg, int64_t avail,
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

/* Bytes a cgroup holds on the fast tier over its cap; 0 when under it. */
int64_t pol_cg_over_cap(const struct policy_cgroup *cg)
{
	return cg->fast_max_bytes && cg->fast_bytes > cg->fast_max_bytes ?
		       (int64_t)(cg->fast_bytes - cg->fast_max_bytes) : 0;
}

/* Bytes @pg's cgroup may still bring onto node index @to under its
 * fast-tier cap (INT64_MAX: no cap there). */
int64_t pol_cap_left(const struct policy *p, const struct plan *pl,
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
