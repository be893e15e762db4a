/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * DAMON's monitoring attributes for the memory it watches (damon_fit.c has
 * the why).  Pure: the footprint comes in, the attributes go out.
 */
#ifndef TIERD_CORE_DAMON_FIT_H
#define TIERD_CORE_DAMON_FIT_H

#include <stdint.h>

struct damon_attrs {
	uint64_t sample_us;	/* sampling interval */
	uint64_t aggr_us;	/* aggregation interval */
	uint32_t min_nr_regions;
	uint32_t max_nr_regions;
};

/* The most regions tierd gives one kdamond: a larger footprint gets larger
 * regions (damon_fit.c says what they cost). */
#define DAMON_FIT_MAX_REGIONS 131072u

/* The longest aggregation a fit makes, while it keeps at least
 * DAMON_FIT_MIN_SAMPLES samples (damon_fit.c says why). */
#define DAMON_FIT_MAX_AGGR_US 2000000u
#define DAMON_FIT_MIN_SAMPLES 4u

/*
 * The attributes for @footprint_bytes of monitored memory in @nr_targets
 * targets, watched at @region_bytes (the policy's unit, the range), read
 * by tierd every @drain_us, from the configured @conf, into *@ret.  A
 * footprint of at most @conf's max_nr_regions ranges keeps @conf's
 * regions and intervals.  A larger one gets one region per range:
 * max_nr_regions the footprint's ranges (at most DAMON_FIT_MAX_REGIONS),
 * min_nr_regions that over @nr_targets (DAMON starts each target with
 * min_nr_regions and merges no region past the watched bytes over it;
 * never below @conf's), the sampling and aggregation intervals
 * stretched by as much as the regions grew, so that the kdamond checks no
 * more pages a second than @conf allows (max_nr_regions / sample_us), and
 * an aggregation keeps @conf's samples up to DAMON_FIT_MAX_AGGR_US (cut no
 * lower than DAMON_FIT_MIN_SAMPLES).  Either way an aggregation lasts at
 * least @drain_us, in whole sampling intervals (0: no such floor).  @conf
 * must be valid (sample_us > 0, 3 <= min <= max); @region_bytes 0 keeps
 * @conf but for the drain.
 */
void damon_fit(const struct damon_attrs *conf, uint64_t footprint_bytes, uint32_t nr_targets,
	       uint64_t region_bytes, uint64_t drain_us, struct damon_attrs *ret);

#endif
