/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A hotness source behind one ops table: the BPF hardware-sampling source
 * (sampler_bpf.c), the DAMON source (damon/sampler.c), and a fake for tests
 * (tests/fakes/sampler_fake.c).  The daemon probes them at start, runs the
 * first that works, and drains it into the hotness table every tick.
 *
 * Contract for every implementation:
 *  - probe() starts nothing and changes no kernel state; 0 when the source can
 *    run here, else -errno and one line in @why saying what is missing.
 *  - start() takes the kernel resources (BPF programs, perf events, a kdamond);
 *    on failure it leaves nothing behind and explains in @why.
 *  - set_targets() replaces the set of processes sampled (sorted, unique).
 *  - drain() folds what was sampled since the previous drain into the table
 *    at @now_ns and returns the number of records folded, or -errno.  It
 *    never waits: what is not there yet comes at a later drain.  The DAMON
 *    source's drain takes its kdamond's newest complete aggregation from
 *    the damon_aggregated tracepoint; where that cannot run, the
 *    tried_regions update the previous drain asked the kdamond for (about
 *    one aggregation interval's work, 100-200 ms by default), and the first
 *    drain, which has none to read, comes back without regions.
 *  - set_pace() (optional) samples @slowdown times less often than
 *    configured (1: as configured), for when nothing needs moving; the
 *    DAMON source stretches its kdamond's intervals.
 *  - peek() (optional) looks at what the next drain would fold, without
 *    folding it, and says how much of it the table has not seen: how an
 *    idle daemon notices new heat before its next tick.  Returns 1 and
 *    fills @ret when there was something it had not looked at yet, 0 when
 *    not, -EOPNOTSUPP when it cannot look cheaply now (the DAMON source on
 *    sysfs), or -errno.  Must cost next to nothing: it runs between ticks.
 *  - peek_arm() and peek_fd() (optional, with peek()) let the source say
 *    when a peek is worth making.  peek_arm() hands it what the table knows
 *    (heat as of @at_ns) and two bars; peek_fd() then turns readable, once,
 *    when the source has seen fresh heat in at least @min_bytes that are at
 *    least 1/@share of what it saw accessed.  peek() and peek_arm() with
 *    @t NULL (stop) take the readiness away.  peek_fd() returns the
 *    descriptor for an event loop, *@gen changing whenever it is a new one,
 *    or -EOPNOTSUPP while there is none (the DAMON source before its
 *    tracepoint feed runs).
 *  - idle_into() (optional): from now on, every drain that reads a whole
 *    report of the source replaces @set (core/idle.h) with the memory it
 *    saw no access in, and since when; NULL stops.  The DAMON source does,
 *    from its tracepoint feed (regions with nr_accesses 0, by their age).
 *    -EOPNOTSUPP from a source that cannot tell idle memory from memory
 *    it did not look at.
 *  - stop() releases everything start() took; safe to call twice.
 *  - free() accepts NULL and stops first.
 */
#ifndef TIERD_SYS_SAMPLER_H
#define TIERD_SYS_SAMPLER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

struct hot_table;
struct idle_set;

#define SAMPLER_WHY_MAX 256

struct sampler_status {
	const char *name;	/* "bpf", "damon", "fake" */
	bool running;
	char why[SAMPLER_WHY_MAX];	/* what it runs on, or why it does not run */
	uint64_t drains;
	uint64_t records;	/* folded into the table, all drains */
	uint64_t samples;	/* raw samples or regions seen, all drains */
	uint64_t lost;		/* samples seen but not counted (full map, ...) */
	uint64_t period;	/* current sampling period; 0 if not applicable */
	double cost_pct;	/* CPU time over the last drain interval, % of one CPU */
	double cpu_seconds;	/* CPU time sampling has cost since start */
	/* How cost_pct and cpu_seconds are known: "bpf_stats" (the programs'
	 * run time), "estimate" (samples times a measured cost each),
	 * "kdamond" (its thread's CPU time), or "none" */
	const char *cost_source;
	uint32_t generation;	/* changes when how it samples changes (why says how) */
};

/* What a peek saw: the bytes of memory the next drain would record accesses
 * in, and the part of them where the table's heat is well below what
 * the next drain adds (a range that was cold, or never seen). */
struct sampler_peek {
	uint64_t accessed_bytes;
	uint64_t new_bytes;
};

/* Every source's peek rule, for @bytes at @addr of @pid that the next drain
 * would record with @weight: accessed, and new where the table's heat
 * there is below half of what the drain adds (@scale: hot_weight_scale()
 * at the peek's time, taken once). */
void sampler_peek_add(struct sampler_peek *ret, const struct hot_table *t, pid_t pid,
		      uint64_t addr, uint64_t bytes, double weight, double scale);

struct sampler;

struct sampler_ops {
	const char *name;
	int (*probe)(struct sampler *s, char *why, size_t why_len);
	int (*start)(struct sampler *s, char *why, size_t why_len);
	int (*set_targets)(struct sampler *s, const pid_t *pids, size_t n);
	int (*drain)(struct sampler *s, struct hot_table *t, uint64_t now_ns);
	int (*set_pace)(struct sampler *s, unsigned int slowdown);
	int (*peek)(struct sampler *s, const struct hot_table *t, uint64_t now_ns,
		    struct sampler_peek *ret);
	int (*peek_arm)(struct sampler *s, const struct hot_table *t, uint64_t at_ns,
			uint64_t min_bytes, uint32_t share);
	int (*peek_fd)(struct sampler *s, uint32_t *gen);
	int (*idle_into)(struct sampler *s, struct idle_set *set);
	void (*stop)(struct sampler *s);
	/* A file descriptor for the event loop, or -1: drain on the tick.
	 * Readable when a drain came back without what the source was still
	 * waiting for from the kernel, and it is there now: a loop that
	 * watches it ticks then rather than at its next interval.  The next
	 * drain takes the readiness. */
	int (*fd)(struct sampler *s);
	void (*describe)(struct sampler *s, struct sampler_status *ret);
	void (*free)(struct sampler *s);
};

/* Embedded first in every implementation's state. */
struct sampler {
	const struct sampler_ops *ops;
	/* The heat a range needs, in this source's units, to take fast-tier
	 * room while the tracked memory does not fit that room
	 * (policy_input.crowded_hot); 0: the policy's default.  An event
	 * sampler (one access in N, core/sample_period.h) counts samples,
	 * whose chance hits depend on its period and the workload: its
	 * floor is POLICY_CROWDED_BACKGROUND, the heat the memory's own
	 * background reaches by chance. */
	uint32_t crowded_hot;
};

static inline int sampler_probe(struct sampler *s, char *why, size_t len)
{
	return s->ops->probe(s, why, len);
}

static inline int sampler_start(struct sampler *s, char *why, size_t len)
{
	return s->ops->start(s, why, len);
}

static inline int sampler_set_targets(struct sampler *s, const pid_t *pids, size_t n)
{
	return s->ops->set_targets(s, pids, n);
}

static inline int sampler_set_pace(struct sampler *s, unsigned int slowdown)
{
	return s->ops->set_pace ? s->ops->set_pace(s, slowdown) : 0;
}

static inline int sampler_peek(struct sampler *s, const struct hot_table *t,
			       uint64_t now_ns, struct sampler_peek *ret)
{
	return s->ops->peek ? s->ops->peek(s, t, now_ns, ret) : -EOPNOTSUPP;
}

static inline int sampler_peek_arm(struct sampler *s, const struct hot_table *t,
				   uint64_t at_ns, uint64_t min_bytes, uint32_t share)
{
	return s->ops->peek_arm ? s->ops->peek_arm(s, t, at_ns, min_bytes, share) :
				  -EOPNOTSUPP;
}

static inline int sampler_peek_fd(struct sampler *s, uint32_t *gen)
{
	return s->ops->peek_fd ? s->ops->peek_fd(s, gen) : -EOPNOTSUPP;
}

static inline int sampler_idle_into(struct sampler *s, struct idle_set *set)
{
	return s->ops->idle_into ? s->ops->idle_into(s, set) : -EOPNOTSUPP;
}

static inline int sampler_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	return s->ops->drain(s, t, now_ns);
}

static inline void sampler_stop(struct sampler *s)
{
	s->ops->stop(s);
}

static inline int sampler_fd(struct sampler *s)
{
	return s->ops->fd(s);
}

static inline void sampler_describe(struct sampler *s, struct sampler_status *ret)
{
	s->ops->describe(s, ret);
}

static inline void sampler_free(struct sampler *s)
{
	if (s)
		s->ops->free(s);
}

/*
 * Probe the @n candidates in order of preference and start the first one that
 * probes and starts.  Returns its index, or -ENODEV when none could run.
 * @why gets one line naming each candidate skipped and why, e.g.
 * "bpf: no memory-sampling PMU (...); using damon", so the daemon can log it
 * and show it in `tierctl status`.
 */
int sampler_pick(struct sampler *const *cands, size_t n, char *why, size_t why_len);

/*
 * sampler_pick(), and @skipped gets the candidates not taken alone, one
 * "name: why" each, joined by "; " ("" when the first was taken), for
 * `tierctl status` to show after the running source's own line.
 */
int sampler_pick_skipped(struct sampler *const *cands, size_t n, char *why, size_t why_len,
			 char *skipped, size_t skipped_len);

#endif
