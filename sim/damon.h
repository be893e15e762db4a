/* SPDX-License-Identifier: GPL-2.0-only */
/* The DAMON model's state, exposed for its unit test (damon.c). */
#ifndef TIERD_SIM_DAMON_H
#define TIERD_SIM_DAMON_H

#include <stdint.h>

#include "engine.h"

/* The most regions the model takes; tierd asks for at most
 * DAMON_FIT_MAX_REGIONS (core/damon_fit.h). */
#define SIM_DAMON_MAX_REGIONS 262144u

struct damon_region {
	uint32_t start, end;		/* ranges, [start, end) */
	uint32_t nr_accesses, last_nr_accesses, age;
	uint16_t tenant;
};

struct damon_model {
	struct damon_region *regions;	/* sorted by start */
	uint32_t nr, last_nr, cap;
	uint32_t min_nr, max_nr;
	uint32_t total;			/* ranges monitored */
	uint32_t max_accesses;		/* samples per aggregation */
	uint64_t sample_ns, aggr_ns, interval_ns, range_pages;
	uint64_t rng;
	/* An aggregation longer than the interval (damon_sample_long()). */
	uint64_t carry_ns;		/* of the interval, under a sample */
	uint32_t samples, aggr_max;	/* taken, the most nr_accesses so far */
	/* NULL, or [total]: each range's region's age in ms where its
	 * nr_accesses was 0 at the last report, else 0 (the sampler's
	 * sim_view.idle_ms). */
	uint32_t *idle_ms;
};

/* kdamond_merge_regions() with @threshold (max nr_accesses / 10). */
void damon_model_merge(struct damon_model *d, uint32_t threshold);

/* kdamond_split_regions(). */
void damon_model_split(struct damon_model *d);

/*
 * A model of @n ranges (per tenant regions when @tenant is given) with
 * attrs {sample_us, aggr_us, min_nr_regions, max_nr_regions}; 0 or -ENOMEM.
 * Free d->regions when done.
 */
int damon_model_init(struct damon_model *d, const struct sim_setup *s,
		     uint32_t n, const uint16_t *tenant, const uint64_t attrs[4]);

/*
 * One aggregation interval of kdamond_fn() over @acc: samples, merge, then
 * @apply (the schemes; may be NULL) sees the regions, then reset and split.
 */
void damon_model_aggregate(struct damon_model *d, const uint32_t *acc,
			   uint64_t *cost_ns,
			   void (*apply)(void *arg, struct damon_model *d),
			   void *arg);

/* The damon sampler; sampler.c's sim_sampler_create() calls it. */
int sim_damon_create(const char *args, const struct sim_setup *s,
		     struct sim_sampler *out, char *err);

#endif
