/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the pipeline modules share within one tick (daemon.h has the order):
 *
 *   sample   (mod_sample.c)  targets -> sampler -> hot table; which cgroup
 *                            and GPU rule each tracked process belongs to
 *   decide   (mod_decide.c)  hottest and coldest entries -> node query ->
 *                            policy -> batcher: this tick's plan
 *   migrate  (mod_migrate.c) the plan through move_pages -> account ->
 *                            d->stats; moved ranges into the range memory
 *   threads  (threads.c)     d->stats.migrate_{bytes,ns}_total + load ->
 *                            copy threads, NUMA balancing takeover
 *
 * The struct lives in struct tierd (d->pipe), created by the first module
 * that starts and freed by the daemon after every module stopped.  Each
 * module fills only its own part and reads the others'; nothing here is
 * allocated per tick.
 */
#ifndef TIERD_PIPELINE_H
#define TIERD_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "account.h"
#include "batch.h"
#include "hotness.h"
#include "policy.h"

struct mig_ops;
struct sampler;
struct tierd;

#define PIPE_MAX_PROCS 1024
#define PIPE_RANGE_SLOTS (1u << 16) /* remembered 2 MiB ranges */

/* A tracked process, as the policy sees it. */
struct pipe_proc {
	pid_t pid;
	int cgroup; /* index into conf->cgroups, -1 none */
	int rule; /* GPU placement rule, -1 none */
};

/*
 * What tierd last did to a 2 MiB range of a process: the policy's cool-down
 * and ping-pong inputs, and when the range was last seen wholly on the fast
 * tier (so a hot range already there is not queried every tick) or wholly
 * on the lowest (so a cold one there is not queried for demotion).  A
 * direct-mapped cache: a collision forgets the older range, which only
 * costs a node query or a shorter cool-down.
 *
 * 32 bytes: the times are pipe_time()s, not nanoseconds (48 bytes with
 * them, 3 MiB for the 64 Ki slots; with a table full of the DAMON source's
 * 2 MiB ranges most slots are in use, see daemon_rss).
 */
struct pipe_range {
	uint64_t base; /* 2 MiB aligned */
	pid_t pid;
	uint32_t last_promote;
	uint32_t last_demote;
	uint32_t fast_seen; /* 0 = not known to be on the fast tier */
	/* 0 = not known to be wholly on the lowest tier, where nothing can be
	 * demoted from (decide's cold passes do not query it again) */
	uint32_t low_seen;
};

/*
 * A time in the range memory: CLOCK_MONOTONIC in units of 2^26 ns (67 ms),
 * plus one so that 0 is "never".  32 bits hold 9 years of uptime (later
 * times stay at the last one).  pipe_ns() reads it back rounded down, so a
 * cool-down (10 s and up) or a fast range's recheck (10 s) may end up to
 * 67 ms early; a time within the clock's first 67 ms reads as never.
 */
#define PIPE_TIME_SHIFT 26

static inline uint32_t pipe_time(uint64_t ns)
{
	uint64_t t = (ns >> PIPE_TIME_SHIFT) + 1;

	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static inline uint64_t pipe_ns(uint32_t t)
{
	return t ? (uint64_t)(t - 1) << PIPE_TIME_SHIFT : 0;
}

/*
 * Fakes in place of the kernel, for the unit test of the pipeline: set
 * d->pipe->fake (through pipe_get()) before tierd_init().
 */
struct pipe_fakes {
	struct sampler *sampler; /* instead of probing BPF and DAMON */
	const pid_t *pids; /* tracked instead of scanning /proc; sorted */
	size_t nr_pids;
	const struct mig_ops *mig_ops; /* instead of move_pages(2) */
	void *mig_ctx;
};

/* The move_pages time one tick may take: decide plans what the measured
 * throughput carries in it, migrate starts no batch after it. */
#define PIPE_MOVE_BUDGET_NS (2 * 1000000000ull)

/* While a backlog lasts, sample on one tick in this many (see backlog). */
#define PIPE_BACKLOG_SAMPLE_EVERY 3

struct pipeline {
	const struct pipe_fakes *fake; /* NULL: the real kernel */

	/* sample */
	struct hot_table *hot; /* NULL while no sampler runs */
	struct pipe_proc procs[PIPE_MAX_PROCS]; /* sorted by pid */
	int nr_procs;
	uint64_t targets_generation; /* bumped when procs[] changes */

	/* migrate's account, for decide's retries and node back-off */
	struct account *acct;

	/* decide -> migrate */
	const struct batch_plan *plan; /* NULL: nothing this tick */
	const struct policy_intent *intents;
	struct policy_stats policy_stats;
	uint64_t candidates_pages; /* base pages considered last tick */
	/*
	 * More was worth moving than one tick's budget carried (decide's time
	 * budget cut the intents, or migrate's budget stopped the plan).  The
	 * next tick comes at once and moves on from the table as it is,
	 * sampling again only every PIPE_BACKLOG_SAMPLE_EVERY ticks: a drain
	 * costs as much as a second of copying in the lab, and heat a second
	 * old still names the same pages.
	 */
	bool backlog;
	/*
	 * decide: the candidate cap stopped this tick's gather() with table
	 * entries left unlooked at.  When the tick's moves also landed, the
	 * migrate step sets backlog, so a hot set larger than one tick's
	 * candidates moves tick after tick at once; when nothing landed (moves
	 * refused, a dry run) or a rate limit held candidates back, the next
	 * tick waits its interval, and tierd does not spin on what cannot, or
	 * may not yet, move.
	 */
	bool cand_capped;

	/* migrate's totals (d->stats has the same for threads.c) */
	uint64_t moved_bytes_total; /* reached their target node */
	uint64_t move_ns_total; /* time spent in move_pages calls */
	bool has_promote; /* the kernel takes MPOL_MF_PROMOTE */

	struct pipe_range ranges[PIPE_RANGE_SLOTS];
};

/* d->pipe, created on first use.  NULL only when out of memory. */
struct pipeline *pipe_get(struct tierd *d);

/* The process entry of @pid, or NULL when it is not tracked. */
const struct pipe_proc *pipe_proc(const struct pipeline *p, pid_t pid);

/* The memory slot of the 2 MiB range holding @addr of @pid; claimed
 * (zeroed) for it when another range held it. */
struct pipe_range *pipe_range(struct pipeline *p, pid_t pid, uint64_t addr);

/* The slot of that range if it is the one remembered, else NULL. */
const struct pipe_range *pipe_range_peek(const struct pipeline *p, pid_t pid,
					 uint64_t addr);

#endif
