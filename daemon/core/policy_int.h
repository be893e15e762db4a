/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of the policy share (policy.c has the essay): the policy's
 * scratch, the per-tick plan of the nodes, and the steps each file offers
 * the others.  Not part of the API: include policy.h.
 */
#ifndef TIERD_CORE_POLICY_INT_H
#define TIERD_CORE_POLICY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

struct policy {
	struct policy_params params;
	size_t max_pages;
	size_t max_cgroups;
	uint32_t *order;	/* candidate indices, coldest first */
	uint8_t *taken;		/* candidate already has an intent this tick */
	int64_t *cg_delta;	/* planned change of a cgroup's fast-tier bytes */
	int64_t *cg_excess;	/* bytes over the cap still to demote */
	/* Candidates a cgroup's fast-tier cap held back this tick, hottest
	 * first (nr_wait of them), and their bytes per cgroup: what the cap
	 * exchange weighs (pol_exchange_for_cap()). */
	uint32_t *wait;
	size_t nr_wait;
	uint64_t *cg_wait;
};

/* How far apart, in standard deviations of chance, a waiting page's heat
 * and a resident's must be for the cap exchange (clearly_hotter()). */
#define POLICY_EXCHANGE_SIGMAS 3

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

static inline uint64_t page_bytes(const struct policy *p, const struct policy_page *pg)
{
	return (uint64_t)pg->nr_pages * p->params.page_size;
}

static inline bool fast_node(const struct topology *topo, int idx)
{
	return topo_index_fast(topo, idx);
}

static inline void hold(struct plan *pl, int why)
{
	pl->out->stats.held[why]++;
}

/* Planned bytes free above node @i's high target: what promotion may fill. */
static inline int64_t node_room(const struct plan *pl, int i)
{
	return pl->free[i] - pl->high[i];
}

static inline bool has_room(const struct plan *pl, int i, uint64_t bytes)
{
	return node_room(pl, i) >= (int64_t)bytes;
}

/* Node index of a candidate, or -1 when it is on no node we know. */
static inline int src_index(const struct plan *pl, const struct policy_page *pg)
{
	return pg->node >= 0 ? topo_node_index(pl->topo, pg->node) : -1;
}

/* policy_target.c: where a page may go */
bool pol_nearer(const struct topology *topo, int from, int cand, int best);
int pol_pick_node(const struct policy *p, const struct plan *pl, int from, bool up,
		  uint64_t bytes, bool need_room);
int pol_pick_gpu(const struct policy *p, const struct plan *pl, const struct policy_page *pg,
		 int from, uint64_t *bytes, int *why);

/* policy_budget.c: what may move now, and writing it down */
bool pol_held_recently(struct policy *p, struct plan *pl, uint32_t i, bool promote);
bool pol_emit_bytes(struct policy *p, struct plan *pl, uint32_t i, int from, int to,
		    enum policy_kind kind, enum policy_reason reason, uint64_t bytes);
bool pol_emit(struct policy *p, struct plan *pl, uint32_t i, int from, int to,
	      enum policy_kind kind, enum policy_reason reason);
uint64_t pol_fit_bytes(const struct policy *p, const struct policy_page *pg, int64_t avail,
		       bool up);
int64_t pol_cg_over_cap(const struct policy_cgroup *cg);
int64_t pol_cap_left(const struct policy *p, const struct plan *pl,
		     const struct policy_page *pg, int to);

/* policy_demote.c, policy_promote.c: the steps of one tick */
void pol_demote_for_cap(struct policy *p, struct plan *pl);
void pol_cap_wait(struct policy *p, const struct plan *pl, uint32_t i);
void pol_exchange_for_cap(struct policy *p, struct plan *pl);
void pol_demote_cold(struct policy *p, struct plan *pl, int64_t *want,
		     enum policy_reason reason);
void pol_promote(struct policy *p, struct plan *pl);
void pol_fill(struct policy *p, struct plan *pl);
/* The crowded floor of a source whose heat counts samples, from
 * @in->table_hist, for a fast tier of @room bytes; sets @st's discovering
 * and thin (policy_noise.c). */
uint32_t pol_noise_floor(const struct policy_input *in, uint64_t room, struct policy_stats *st);
void pol_open_closed(const struct policy *p, struct plan *pl);

#endif
