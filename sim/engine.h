/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine: a clock of fixed intervals, the placement of every range on a
 * node, and the bill.  Per interval it takes the true accesses from a
 * source, charges latency x accesses at each range's node, passes what the
 * sampler model saw to the system, and executes the moves it asks for:
 * grouped into one move_pages() call per (tenant, target node), each call
 * costing the machine's call + folio + byte figures, never past a node's
 * capacity or a tenant's fast-tier budget, and never more copy time than
 * the interval holds.  Copy time is charged as a stall.
 *
 * Memory: per range 1 (node) + 2 (tenant) + 1 (moves) + 3 x 4 (accesses,
 * next, seen) bytes = 16 bytes, plus the source's own (a generator: 4 or
 * 12 bytes a range).  A 1 TiB footprint in 2 MiB ranges is 524288 ranges:
 * about 14 MiB.  The result's series of the hot set's fast-tier share is
 * 16 KiB whatever the run's length (series.h).
 */
#ifndef TIERD_SIM_ENGINE_H
#define TIERD_SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "series.h"
#include "system.h"

/* Where the true accesses come from: a generator or a binned trace. */
struct sim_source {
	void *state;
	/* Accesses of interval @i into @acc[nr_ranges]; *ret_end past the end. */
	int (*fill)(void *state, uint64_t i, uint32_t *acc, bool *ret_end);
};

/*
 * The rate of a sampler whose user sets it, as tierd's BPF source sets its
 * events' period from their CPU cost at every drain.
 */
struct sim_rate {
	uint64_t period;	/* accesses per sample */
	uint64_t cost_ns;	/* CPU cost since the user last took it */
};

/* What a sampler model reports of the true accesses. */
struct sim_sampler {
	const char *name;
	void *state;
	struct sim_rate *rate;	/* NULL: the run fixed the sampler's rate */
	/* @seen[r] from @acc[r]; adds its CPU cost to *cost_ns. */
	void (*sample)(void *state, const uint32_t *acc, uint32_t n,
		       uint32_t *seen, uint64_t *cost_ns);
	/* NULL, or the ranges it saw no access in as of its newest report
	 * (sim_view.idle_ms), as DAMON reports regions with nr_accesses 0
	 * and their age. */
	const uint32_t *(*idle_ms)(void *state);
	void (*destroy)(void *state);
};

struct sim_tenant_result {
	uint64_t budget_bytes;
	uint64_t max_fast_bytes;	/* the most it held on the fast tier */
	uint64_t initial_fast_bytes;	/* where the footprint spilled at start */
};

struct sim_result {
	uint64_t intervals;
	uint64_t footprint_bytes;
	uint64_t accesses;
	double access_ns;		/* latency x accesses */
	double dram_ns;			/* the same accesses all at the fast tier */
	uint64_t stall_ns;		/* migration copy time */
	uint64_t sampler_ns;		/* the sampler's modelled CPU cost */
	uint64_t bytes_migrated;
	uint64_t bytes_pingpong;	/* moves of a range moved before */
	uint64_t moves_refused;		/* no room, over budget, out of time */
	int64_t t50_ns, t90_ns;		/* hot set 50/90 % on the fast tier; -1 */
	/* ... in the system's own units (sim_system.units) by then; -1 */
	int64_t u50, u90;
	struct sim_series *series;	/* the hot set's fast share over time */
	uint32_t nr_tenants;
	struct sim_tenant_result *tenants;
	/* Invariants, checked every interval; the CI scenario asserts them. */
	bool over_capacity;
	bool over_budget;
	bool pages_lost;
};

struct sim_run {
	const struct sim_setup *s;
	const struct sim_system *sys;
	struct sim_source src;
	struct sim_sampler *sampler;	/* NULL: the system sees every access */
	uint64_t max_intervals;
	/*
	 * Where the footprint starts: false, the slowest tier filled first
	 * (the workload starts where promotion is needed); true, where first
	 * touch puts it on a server: the nodes with CPUs first, each to its
	 * low watermark, then the CPU-less ones, fastest tier first, the
	 * tenants' ranges taken in turn, each tenant's in address order.
	 */
	bool start_touch;
	/*
	 * NULL, or where each interval's placement goes, one line an interval:
	 * "SYSTEM END_S NODES HOT UNITS", NODES a digit a range (its node after the
	 * interval's moves), HOT a '1' a range of the interval's hot set (the
	 * one time_to_90pct_s scores) and '0' elsewhere, UNITS the system's own
	 * count so far (sim_system.units) or '-'.
	 */
	FILE *placement;
};

/*
 * Run to the end of the source or @max_intervals.  0 with @res filled
 * (free with sim_result_free()), or a negative errno (-ENOSPC when the
 * footprint does not fit the machine).
 */
int sim_engine_run(const struct sim_run *run, struct sim_result *res);

void sim_result_free(struct sim_result *res);

/*
 * The access threshold T such that the ranges with acc >= T (never more
 * than @max_count of them) cover as much of the total as a log2 histogram
 * allows, stopping once @cover of the total is reached.  0 when nothing was
 * accessed.  The hot set of an interval is {r : acc[r] >= T, acc[r] > 0}.
 */
uint32_t sim_hot_threshold(const uint32_t *acc, uint32_t n, uint32_t max_count,
			   double cover);

/* Ranges of @bytes each fits in a node's capacity. */
uint32_t sim_node_ranges(const struct sim_setup *s, int node);

#endif
