/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the gather step keeps between ticks and looks things up in: the
 * tracked processes (which cgroup and GPU rule each belongs to) and the
 * range memory (what tierd last did to a 2 MiB range).  Pure: no I/O, no
 * clock; times come in.
 */
#ifndef TIERD_CORE_CANDIDATES_H
#define TIERD_CORE_CANDIDATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hotness.h"

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

#endif
