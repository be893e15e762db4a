/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sampling period that keeps a sampler's CPU cost under its budget.
 * Pure: the caller measures the cost and passes it in.
 */
#ifndef TIERD_CORE_SAMPLE_PERIOD_H
#define TIERD_CORE_SAMPLE_PERIOD_H

#include <stdint.h>

struct sample_period_params {
	/* The most CPU time the sampler may use, in % of the @ncpus CPUs that
	 * sample_period_next() is given (tierd gives 1: of one CPU). */
	double budget_pct;
	uint64_t min_period;	/* events per sample, the densest sampling allowed */
	uint64_t max_period;	/* the sparsest */
};

/*
 * The period to use next, given that @period cost @cost_ns of CPU time over
 * @interval_ns of wall time on @ncpus CPUs.  Over budget: the period grows in
 * proportion to the overshoot plus a quarter, so one step lands under the
 * budget.  Under a quarter of the budget: it halves (sampling denser is worth
 * it, but gently).  In between: unchanged, so it does not oscillate.  Always
 * within [min_period, max_period]; a zero interval or CPU count keeps @period.
 */
uint64_t sample_period_next(const struct sample_period_params *p, uint64_t period,
			    uint64_t cost_ns, uint64_t interval_ns, unsigned int ncpus);

/* The CPU share in % that @cost_ns over @interval_ns on @ncpus CPUs is. */
double sample_cost_pct(uint64_t cost_ns, uint64_t interval_ns, unsigned int ncpus);

/* The BPF source's first period (sampler_bpf_params_default()'s
 * period_init, a prime so the samples do not beat with loop strides), and
 * the one the configured half-life is meant at. */
#define SAMPLE_PERIOD_INIT 10007
#define SAMPLE_HALF_LIFE_STRETCH 4 /* the longest, in configured half-lives */

/*
 * The hotness table's half-life for a source sampling one event in
 * @period, from @base_ns, the configured one: in proportion longer for a
 * period sparser than SAMPLE_PERIOD_INIT, at most
 * SAMPLE_HALF_LIFE_STRETCH times, never shorter; @base_ns for a source
 * without a period (0: DAMON).
 *
 * Why.  A range's heat is its samples decayed: for a steady access rate
 * about rate / period * half-life / ln 2.  The CPU budget sets the period
 * (on a busy host of a terabyte one event in 90000 to 190000), and at a
 * fixed half-life it scales every range's heat down by as much: a hot
 * range draws a sample every few seconds, and the crowded floor's two
 * samples within a half-life of 5 s come to a hot range of tierd-sim's
 * dram+cxl 1 TiB shift workload in about 1 s out of 40.  With the
 * half-life in proportion to the period a rate reads as about the same
 * heat whatever the period, and the thresholds (the crowded floor, a fixed
 * hot_threshold) mean the same rate; the stretch is capped because heat
 * follows a cooling page by the half-life too.
 */
uint64_t sample_half_life_ns(uint64_t base_ns, uint64_t period);

#endif
