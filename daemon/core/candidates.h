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
#define CAND_RANGE_SLOTS (1u << 16) /* remembered 2 MiB ranges */

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

/*
 * What tierd last did to a 2 MiB range of a process: the policy's cool-down
 * and ping-pong inputs, and when the range was last seen wholly on the fast
 * tier (so a hot range already there is not queried every tick) or wholly
 * on the lowest (so a cold one there is not queried for demotion).  A
 * direct-mapped cache: a collision forgets the older range, which only
 * costs a node query or a shorter cool-down.
 *
 * 32 bytes: the times are cand_time()s, not nanoseconds (48 bytes with
 * them, 3 MiB for the 64 Ki slots; with a table full of the DAMON source's
 * 2 MiB ranges most slots are in use, see daemon_rss).
 */
struct cand_range {
	uint64_t base; /* 2 MiB aligned */
	pid_t pid;
	uint32_t last_promote;
	uint32_t last_demote;
	uint32_t fast_seen; /* 0 = not known to be on the fast tier */
	/* 0 = not known to be wholly on the lowest tier, where nothing can be
	 * demoted from (the cold passes do not query it again) */
	uint32_t low_seen;
};

struct cand_ranges {
	struct cand_range slot[CAND_RANGE_SLOTS];
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

/* The slot of the 2 MiB range holding @addr of @pid; claimed (zeroed) for
 * it when another range held it. */
struct cand_range *cand_range(struct cand_ranges *r, pid_t pid, uint64_t addr);

/* The slot of that range if it is the one remembered, else NULL. */
const struct cand_range *cand_range_peek(const struct cand_ranges *r, pid_t pid,
					 uint64_t addr);

/* The I/O selection needs, from the caller. */
struct cand_io {
	/* Where @count pages of @pid are: node ids or negative errnos in
	 * @status; a negative errno when the whole call failed. */
	int (*query)(void *ctx, pid_t pid, size_t count, void **addrs, int *status);
	/* 1 when the 2 MiB at @addr of @pid is a PMD THP; NULL: never. */
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
	/* The rate buckets' sizes (0: no limit), globally and per cgroup
	 * index: a range is one candidate only where 2 MiB fits them. */
	uint64_t global_burst;
	const uint64_t *cg_burst;
};

struct cand_out {
	struct policy_page *cand; /* max_cand entries, the caller's */
	size_t nr_cand;
	size_t slots; /* base pages queried, THPs counted once */
	bool capped; /* the cap stopped it with table entries left */
	uint64_t rule_used[POLICY_MAX_RULES]; /* bytes on GPU nodes per rule */
};

struct cand_select;

/* Scratch for up to @max_cand candidates a tick.  0 or -ENOMEM. */
int cand_select_new(size_t max_cand, struct cand_select **ret);
void cand_select_free(struct cand_select *m);

/* This tick's candidates into @out, their nodes queried through @io. */
void cand_select_run(struct cand_select *m, const struct cand_in *in, const struct cand_io *io,
		     uint64_t now_ns, struct cand_out *out);

#endif
