/* SPDX-License-Identifier: GPL-2.0-only */
/* The DAMON model's state, exposed for its unit test (damon.c). */
#ifndef TIERD_SIM_DAMON_H
#define TIERD_SIM_DAMON_H

#include <stdint.h>

#include "engine.h"

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
};

/* kdamond_merge_regions() with @threshold (max nr_accesses / 10). */
void damon_model_merge(struct damon_model *d, uint32_t threshold);

/* kdamond_split_regions(). */
void damon_model_split(struct damon_model *d);

/* The damon sampler; sampler.c's sim_sampler_create() calls it. */
int sim_damon_create(const char *args, const struct sim_setup *s,
		     struct sim_sampler *out, char *err);

#endif
