/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sampling period that keeps a sampler's CPU cost under its budget.
 * Pure: the caller measures the cost and passes it in.
 */
#ifndef TIERD_CORE_SAMPLE_PERIOD_H
#define TIERD_CORE_SAMPLE_PERIOD_H

#include <stdint.h>

struct sample_period_params {
	double budget_pct;	/* the most CPU time the sampler may use, in % of all CPUs */
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

#endif
