// SPDX-License-Identifier: GPL-2.0-only
#include "sample_period.h"

double sample_cost_pct(uint64_t cost_ns, uint64_t interval_ns, unsigned int ncpus)
{
	if (!interval_ns || !ncpus)
		return 0.0;
	return 100.0 * (double)cost_ns / ((double)interval_ns * ncpus);
}

static uint64_t clamp_period(const struct sample_period_params *p, double v)
{
	if (v < (double)p->min_period)
		return p->min_period;
	if (v > (double)p->max_period)
		return p->max_period;
	return (uint64_t)v;
}

uint64_t sample_period_next(const struct sample_period_params *p, uint64_t period,
			    uint64_t cost_ns, uint64_t interval_ns, unsigned int ncpus)
{
	double used;

	if (!interval_ns || !ncpus || p->budget_pct <= 0.0)
		return clamp_period(p, (double)period);
	used = sample_cost_pct(cost_ns, interval_ns, ncpus);
	if (used > p->budget_pct)
		/* The cost is proportional to 1 / period. */
		return clamp_period(p, (double)period * used / p->budget_pct * 1.25 + 1.0);
	if (used < p->budget_pct / 4.0)
		return clamp_period(p, (double)period / 2.0);
	return clamp_period(p, (double)period);
}

uint64_t sample_half_life_ns(uint64_t base_ns, uint64_t period)
{
	if (period <= SAMPLE_PERIOD_INIT)
		return base_ns;
	if (period >= (uint64_t)SAMPLE_PERIOD_INIT * SAMPLE_HALF_LIFE_STRETCH)
		return base_ns * SAMPLE_HALF_LIFE_STRETCH;
	return (uint64_t)((double)base_ns * (double)period / SAMPLE_PERIOD_INIT);
}
