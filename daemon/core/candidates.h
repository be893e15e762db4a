/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Candidate selection: which entries of the hotness table a tick weighs,
 * and the node each is on.  The hottest entries for promotion, a reserve
 * of the coldest when the policy may demote (memory the source saw idle
 * first, core/idle.h, then the table's coldest), ranges known to be on the
 * fast (or lowest) tier skipped or rechecked through a sample of their
 * pages, a 2 MiB range of base pages on one node taken as one candidate,
 * all within a tick's page and candidate budgets.  What it keeps between
 * ticks: the tracked processes (which cgroup and GPU rule each belongs
 * to) and the range memory (what tierd last did to a 2 MiB range).
 *
 * Pure: the node queries and the THP lookups go through struct cand_io,
 * which the daemon's gather step (gather.c) fills with move_pages(2) and
 * sys/thp, and tests with fakes; no clock (times come in), no allocation
 * after cand_select_new().
 */
#ifndef TIERD_CORE_CANDIDATES_H
#define TIERD_CORE_CANDIDATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hot_table.h"
#include "idle.h"
#include "policy.h"
#include "topology.h"

#define CAND_MAX_PROCS 1024
#define CAND_RANGE_SLOTS (1u << 17) /* remembered 2 MiB ranges: 256 GiB */
#define CAND_RANGE_WAYS 8 /* slots a range may take, a set */

/* A tracked process, as the policy sees it. */
struct cand_proc {
	pid_t pid;
	int cgroup; /* index into conf->cgroups, -1 none */
	int rule; /* GPU placement rule, -1 none */
};

/* The tracked processes, sorted by pid; generation changes with the list. */
struct cand_procs {
	struct cand_proc procs[CAND_MAX_PROCS];
	int nr;
	uint64_t generation;
};

/* The entry of @pid, or NULL when it is not tracked. */
const struct cand_proc *cand_proc_find(const struct cand_procs *p, pid_t pid);

/* Is @pid's process in a cgroup that @marks (per cgroup index; NULL:
 * none) marks: cand_in's cg_full (at its fast-tier cap: the policy
 * promotes none of its pages, which would take every tick's candidates
 * from the other cgroups' where they are the hotter, but trades them
 * for its coldest, cand_cap.c) or cg_capped? */
bool cand_cgroup_marked(const struct cand_procs *p, const bool *marks, pid_t pid);

/*
 * What tierd last did to a range (2 MiB of 4 KiB pages) of a process: the policy's cool-down
 * and ping-pong inputs, and when the range was last seen wholly on the fast
 * tier (so a hot range already there is not queried every tick) or wholly
 * on the lowest (so a cold one there is not queried for demotion).  A
 * cache of CAND_RANGE_WAYS-way sets: a range new to a full set takes the
 * place of the one tierd did least lately with, which costs a node query
 * or a shorter cool-down.  Direct-mapped, two hot ranges that collide
 * would forget each other every tick and be queried every tick, and a
 * hot set of a few thousand ranges has dozens of such pairs (n^2 / 2
 * slots): they would take the tick's candidates from the ranges that
 * still need moving.
 *
 * 32 bytes: the times are cand_time()s, not nanoseconds (48 bytes with
 * them, 6 MiB for the 128 Ki slots instead of 4; a slot's page is
 * resident once a range hashed to it, so with a table full of the DAMON
 * source's 2 MiB ranges all of them are, see daemon_rss).
 */
struct cand_range {
	uint64_t base; /* range aligned */
	pid_t pid;
	uint32_t last_promote;
	uint32_t last_demote;
	uint32_t fast_seen; /* 0 = not known to be on the fast tier */
	/* 0 = not known to be wholly on the lowest tier, where nothing can be
	 * demoted from (the cold passes do not query it again) */
	uint32_t low_seen;
	/* The selection (cand_select's count of them) whose cap walk took
	 * the range: no other pass of that selection takes it (cand_cap.c) */
	uint32_t cap_pass;
};

/*
 * Pages the kernel refused to move (-EACCES, -EPERM: a cpuset without the
 * target node, a shared page without CAP_SYS_NICE, a shared library's page
 * the promotion path will not take), by 2 MiB range of a process.
 * Proposed again, they would be refused again every tick, counted as
 * denied every time, and take the tick's budget from pages that can move.
 * Candidate selection leaves a page out while it stays on the node it was
 * refused from (cand_denied_skip()), until something changes: the page is
 * found on another node, or, for what tierd cannot see (the other
 * processes that shared the page exit, a cpuset grows),
 * CAND_DENIED_RETRY_NS pass, doubling with each refusal after a retry up
 * to CAND_DENIED_RETRY_MAX_NS (32 min).
 * A direct-mapped cache too: a collision forgets the older range, whose
 * pages are then proposed and refused once more.
 */
#define CAND_DENIED_SLOTS 1024 /* 2 GiB of 2 MiB ranges; 88 KiB */
#define CAND_DENIED_BITS 512 /* marks per range */
#define CAND_DENIED_RETRY_NS (60 * 1000000000ull)
#define CAND_DENIED_RETRY_MAX_NS (32 * CAND_DENIED_RETRY_NS)

struct cand_denied {
	uint64_t base; /* range aligned */
	pid_t pid;
	int16_t node; /* the node its pages were refused from */
	uint8_t tries; /* refusals in a row (after a retry) */
	uint8_t err; /* the errno of the last refusal */
	uint32_t until; /* cand_time(): proposed again from then; 0 = free slot */
	uint32_t pad;
	/* bit i: a page of the range's i-th CAND_DENIED_BITS part refused
	 * (one base page of a range of 4 KiB pages; with fewer pages to a
	 * range, the 32 of 64 KiB, a page marks the first of its 16 bits) */
	uint64_t pages[CAND_DENIED_BITS / 64];
};

struct cand_ranges {
	struct page_geom geom; /* the kernel's, and tierd's range */
	/* Ranges it forgot for others: once it has, a range it does not know
	 * may be one it knew fast (cand_still_fast()). */
	uint64_t forgotten;
	struct cand_range slot[CAND_RANGE_SLOTS];
	struct cand_denied denied[CAND_DENIED_SLOTS];
};

/*
 * A time in the range memory: CLOCK_MONOTONIC in units of 2^26 ns (67 ms),
 * plus one so that 0 is "never".  32 bits hold 9 years of uptime (later
 * times stay at the last one).  cand_ns() reads it back rounded down, so a
 * cool-down (10 s and up) or a fast range's recheck (10 s) may end up to
 * 67 ms early; a time within the clock's first 67 ms reads as never.
 */
#define CAND_TIME_SHIFT 26

static inline uint32_t cand_time(uint64_t ns)
{
	uint64_t t = (ns >> CAND_TIME_SHIFT) + 1;

	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static inline uint64_t cand_ns(uint32_t t)
{
	return t ? (uint64_t)(t - 1) << CAND_TIME_SHIFT : 0;
}

/* Empty range memory for ranges of @g's range size. */
void cand_ranges_init(struct cand_ranges *r, const struct page_geom *g);

/* The slot of the range holding @addr of @pid; claimed (zeroed) for
 * it when another range held it. */
struct cand_range *cand_range(struct cand_ranges *r, pid_t pid, uint64_t addr);

/* The slot of that range if it is the one remembered, else NULL. */
/*
 * Node index @i is where promotion leaves a page (@fast_tier:
 * topo_fast_tier()): a fast-tier node that is not a
 * GPU node, or a GPU node, which promotion never moves pages off whatever
 * its tier.  A range wholly on such nodes is known fast.  A GPU node in
 * tier 0 is not fast by its tier alone: that test is for the kernel's
 * memory, not for a rule's node.
 */
static inline bool cand_settled_node(const struct topology *topo, int i, int fast_tier)
{
	return topo->nodes[i].gpu || topo->nodes[i].tier == fast_tier;
}

/* Pages a sample query of a range looks at, of its 512 (or more). */
#define CAND_SAMPLE_PAGES 16

struct cand_io;
/*
 * The nodes of CAND_SAMPLE_PAGES pages of @pid's range at @base,
 * evenly spaced from its (@off modulo the spacing)-th page, so that
 * consecutive @off look at every page in turn, into @status: what @io's
 * query returns.
 */
int cand_sample_query(const struct cand_io *io, const struct page_geom *g, pid_t pid,
		      uint64_t base, uint64_t off, int status[CAND_SAMPLE_PAGES]);

/* A range seen wholly on the fast tier (or the lowest) is not queried
 * again for this long. */
#define CAND_FAST_RECHECK_NS (10 * 1000000000ull)

/* @v's range was seen wholly on the fast tier within CAND_FAST_RECHECK_NS. */
bool cand_known_fast(const struct cand_ranges *r, const struct hot_entry_view *v,
		     uint64_t now_ns);
/* ... wholly on the lowest tier. */
bool cand_known_low(const struct cand_ranges *r, const struct hot_entry_view *v,
		    uint64_t now_ns);
struct cand_io;
struct cand_procs;
/* A range known fast whose recheck time ran out, sampled again (see
 * cand_memory.c): true, and known fast again, when it still is. */
bool cand_still_fast(struct cand_ranges *r, const struct cand_procs *procs,
		     const struct cand_io *io, const struct topology *topo,
		     const struct hot_entry_view *v, uint64_t now_ns);

const struct cand_range *cand_range_peek(const struct cand_ranges *r, pid_t pid,
					 uint64_t addr);

/*
 * The kernel refused to move @nr_pages pages (1, or a range's for a THP) at @addr
 * of @pid from @node with @err (a negative errno) at @now_ns: leave them
 * out of the candidates (cand_denied_skip()).
 */
void cand_denied_mark(struct cand_ranges *r, pid_t pid, uint64_t addr, uint32_t nr_pages,
		      int node, int err, uint64_t now_ns);

/*
 * Is the page at @addr of @pid, found on @node, one the kernel refused to
 * move from there, with nothing changed since?  A page found elsewhere
 * loses its mark.
 */
bool cand_denied_skip(struct cand_ranges *r, pid_t pid, uint64_t addr, int node,
		      uint64_t now_ns);

/*
 * The range at @addr of @pid is wholly on @node: does it hold pages
 * the kernel refused to move from there?  (Then it is no single
 * candidate.)  Refused from another node, they all moved: their marks go.
 */
bool cand_denied_whole(struct cand_ranges *r, pid_t pid, uint64_t addr, int node,
		       uint64_t now_ns);

/* The I/O selection needs, from the caller. */
struct cand_io {
	/* Where @count pages of @pid are: node ids or negative errnos in
	 * @status; a negative errno when the whole call failed. */
	int (*query)(void *ctx, pid_t pid, size_t count, void **addrs, int *status);
	/* 1 when the range at @addr of @pid is a PMD THP; NULL: never. */
	int (*is_thp)(void *ctx, pid_t pid, uint64_t addr);
	void *ctx;
};

struct cand_in {
	const struct topology *topo;
	const struct hot_table *hot;
	const struct cand_procs *procs;
	struct cand_ranges *ranges; /* read, and marked with what queries saw */
	bool demote; /* keep a quarter of the candidates for the coldest */
	/* Memory the source saw no access in (NULL: none known), and how long
	 * a range must have gone unaccessed to be a candidate: the idle pass,
	 * first in the quarter kept for the coldest (candidates.c). */
	const struct idle_set *idle;
	uint64_t idle_min_ns;
	/* The last tick's moves were cut short (its bytes, intents or
	 * migration budget): what its idle passes staged may not have
	 * moved, and they go on from the first range they staged then
	 * rather than past it. */
	bool resume_staged;
	/* The tracked processes' mappings, given while all their memory fits
	 * the fast tier's room (NULL: not now): the fill pass, after the
	 * table's entries (cand_idle.c). */
	const struct idle_set *fill;
	/* The rate buckets' sizes (0: no limit), globally and per cgroup
	 * index: a range is one candidate only where it fits them. */
	uint64_t global_burst;
	const uint64_t *cg_burst;
	/* Per cgroup index (NULL: none), true when the cgroup is at its
	 * fast-tier cap: of its ranges off the fast tier only the hottest,
	 * in the cap exchange's share of the slots, are candidates
	 * (cand_cap.c). */
	const bool *cg_full;
	/* Per cgroup index (NULL: none), true when the cgroup has a fast-tier
	 * cap: the fill pass leaves its ranges, as the policy fills none. */
	const bool *cg_capped;
	/* Per cgroup index (NULL: none), the bytes of hot candidates its
	 * fast-tier cap held back in the last tick's policy
	 * (policy_output.cg_wait_bytes): the cap walk looks for what they
	 * may take the place of (cand_cap.c). */
	const uint64_t *cg_wait;
};

struct cand_out {
	struct policy_page *cand; /* max_cand entries, the caller's */
	size_t nr_cand;
	size_t slots; /* base pages queried, THPs counted once */
	bool capped; /* the cap stopped it with table entries left */
	/* Each GPU rule's bytes on its node: not the selection's, which
	 * sees only what it queries; the gather step fills it from
	 * core/gpu_usage. */
	uint64_t rule_used[POLICY_MAX_RULES];
};

struct cand_select;

/* Scratch for up to @max_cand candidates a tick, of pages of @g (the hot
 * table's).  0 or -ENOMEM. */
int cand_select_new(size_t max_cand, const struct page_geom *g, struct cand_select **ret);
void cand_select_free(struct cand_select *m);

/* This tick's candidates into @out, their nodes queried through @io. */
void cand_select_run(struct cand_select *m, const struct cand_in *in, const struct cand_io *io,
		     uint64_t now_ns, struct cand_out *out);

#endif
