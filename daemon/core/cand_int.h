/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of candidate selection share (candidates.c has the
 * essay; cand_idle.c is its idle pass): the selection's scratch, its
 * bounds, and the steps that stage and query entries.  Not part of the
 * API: include candidates.h.
 */
#ifndef TIERD_CORE_CAND_INT_H
#define TIERD_CORE_CAND_INT_H

#include "candidates.h"

#define NSEC_PER_SEC 1000000000ull
#define MAX_VIEWS 4096 /* table entries looked at a tick */
#define COLD_QUERY_PAGES (16u << 10) /* base pages the coldest pass queries a tick */
#define QUERY_ENTRIES 1024 /* entries one node query may cover */
#define QUERY_PAGES 4096 /* base pages it may cover (a range of 4 KiB pages is 512),
			  * or a range's when more */
#define COLD_WINDOWS 2 /* MAX_VIEWS selections the coldest pass makes a tick */
#define HOT_WINDOWS 2 /* and the head past its first MAX_VIEWS */
/* The cap exchange's share of a tick's slots, 1 / CAND_CAP_SHARE each:
 * for the waiting entries of cgroups at their cap, and for the residents
 * of cgroups whose cap held some back (cand_cap.c). */
#define CAND_CAP_SHARE 8
#define IDLE_QUERY_PAGES (64u << 10) /* base pages the idle (fill) pass queries a tick */
#define IDLE_VISITS (64u << 10) /* 2 MiB ranges it looks at a tick: 128 GiB */

/*
 * A pass over a set of memory ranges (core/idle.h): where it goes on from,
 * and what it did this tick.
 */
struct cand_walk {
	pid_t pid; /* where it goes on from (0: the first range) */
	uint64_t addr;
	/* This tick: ranges looked at, pages queried, and whether it went
	 * through the whole set (a later call adds nothing). */
	size_t visited, queried;
	bool end;
	size_t found; /* ranges staged since the pass began */
	/* The first range staged this tick (pid 0: none): where the next
	 * tick goes on from when this one's moves are cut short. */
	pid_t first_pid;
	uint64_t first_addr;
	uint64_t done; /* the fill pass: the report a pass found nothing in */
};

/* An entry of the table chosen as candidates, waiting for its node query. */
struct staged {
	struct hot_entry_view v;
	uint32_t first, count; /* its pages in addrs[] */
	uint32_t nr_pages; /* base pages per queried page: a range's for a THP, else 1 */
	bool cold; /* staged by a cold pass */
	bool fill; /* staged by the fill pass (POLICY_F_FILL) */
};

struct cand_select {
	struct page_geom geom; /* the hot table's */
	uint32_t range_pages; /* base pages in a range */
	size_t query_pages; /* QUERY_PAGES, or a range's pages when more */
	size_t max_cand; /* candidates (array entries) a tick */
	bool cand_full; /* cand_stage_entry() refused an entry for max_cand this tick */
	size_t n; /* candidates in cand[] this tick, queried */
	/* Their slots: one per page the query found, one per THP.  A range
	 * of base pages on one node is one candidate but 512 slots, so a
	 * tick queries and plans the pages it did when each page was a
	 * candidate (max_cand), and cand[] holds up to max_cand candidates. */
	size_t slots;
	size_t cold_queried; /* base pages the coldest pass staged this tick */
	struct staged *staged; /* entries whose query is pending, QUERY_ENTRIES */
	size_t nr_staged, staged_pages; /* their number, and their pages in addrs[] */
	struct hot_cursor cold_cursor; /* where the coldest pass goes on from */
	/* The passes over range sets (cand_idle.c): idle memory, fill, and
	 * the idle memory of cgroups waiting at their cap (cand_cap.c). */
	struct cand_walk idle, fill, cap_idle;
	struct hot_entry_view *views;
	uint64_t cold_taken[MAX_VIEWS / 64]; /* views the cold reserve added */
	void **addrs; /* the staged entries' pages, query_pages */
	int *status;
	bool capped;
	uint32_t pass; /* selections run, this one's among them (cand_range.cap_pass) */
	bool cap_walked; /* this selection's cap walk took entries */
	size_t cap_peeks; /* entries of cgroups at their cap the head staged */
	/* This run's inputs and outputs (cand_select_run()'s arguments). */
	const struct cand_in *in;
	const struct cand_io *io;
	const struct topology *topo;
	const struct hot_table *hot;
	const struct cand_procs *procs;
	struct cand_ranges *ranges;
	struct policy_page *cand;
	uint64_t *rule_used;
};

/* The slots entry @v takes staged, its pages queried (a range of base
 * pages: 512 of 4 KiB; a THP or a base page: one), and through
 * *@nr_pages the base pages each of them stands for. */
static inline uint32_t cand_entry_slots(const struct cand_select *m,
					const struct hot_entry_view *v, uint32_t *nr_pages)
{
	*nr_pages = 1;
	if (v->len != m->geom.range)
		return 1;
	if (m->io->is_thp && m->io->is_thp(m->io->ctx, v->pid, v->addr) == 1) {
		*nr_pages = m->range_pages;
		return 1;
	}
	return m->range_pages;
}

/* candidates.c */
/* The staged entries' candidates appended to cand[], with their nodes. */
void cand_flush_staged(struct cand_select *m, uint64_t now_ns);
/* Stage entry @v for the node query (@cold: by a cold pass); false, and
 * cand_full set, when it does not fit the tick's slots. */
bool cand_stage_entry(struct cand_select *m, const struct hot_entry_view *v, bool cold,
		      uint64_t now_ns);
/* Are @limit candidate slots taken (staged pages counted, queried first)? */
bool cand_slots_taken(struct cand_select *m, size_t limit, uint64_t now_ns);

/* cand_idle.c: memory the source saw idle, as cold candidates until @limit
 * slots are taken; a second call in a tick goes on where the first stopped. */
void cand_idle_walk(struct cand_select *m, size_t limit, uint64_t now_ns);
/* A new tick for the walks: their per-tick counts cleared, the idle ones
 * back to the first range they staged when the last tick was cut short. */
void cand_walks_begin(struct cand_select *m);
/* cand_idle.c: the idle pass over the processes of cgroups waiting at
 * their cap only (cand_cap_waiting()), with its own place in the set. */
void cand_cap_idle_walk(struct cand_select *m, size_t limit, uint64_t now_ns);
/* cand_idle.c: the processes' memory the table does not hold, on a lower
 * tier, as fill candidates (POLICY_F_FILL) until @limit slots are taken;
 * once through each of the set's reports. */
void cand_fill_walk(struct cand_select *m, size_t limit, uint64_t now_ns);

/* cand_cap.c: the cap exchange's candidates.  First in a selection (it
 * counts them, cand_select.pass): of the cgroups whose cap held hot
 * candidates back, their idle memory (@idle: when no other pass takes
 * idle memory this tick), then their coldest entries seen on the fast
 * tier, then their coldest whole ranges never queried, until @limit
 * slots are taken; */
void cand_cap_walk(struct cand_select *m, size_t limit, bool idle, uint64_t now_ns);
/* is @pid's cgroup one whose cap held hot candidates back; */
bool cand_cap_waiting(const struct cand_select *m, pid_t pid);
/* did this selection's cap walk take @v (no other pass takes it then); */
bool cand_cap_taken(const struct cand_select *m, const struct hot_entry_view *v);
/* does the head leave @v out for its cgroup's cap: one at its cap, past
 * its share of the tick's slots for such entries (counted here: ask only
 * of an entry the head stages unless this says no). */
bool cand_cap_left_out(struct cand_select *m, const struct hot_entry_view *v);

#endif
