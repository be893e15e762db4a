// SPDX-License-Identifier: GPL-2.0-only
#include "damon_fit.h"
#include "test.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

/* tierd's defaults (conf_schema.c): 5 ms, 100 ms, 200..2000 regions. */
static const struct damon_attrs CONF = {
	.sample_us = 5000, .aggr_us = 100000, .min_nr_regions = 200, .max_nr_regions = 2000,
};

static void check_attrs(const struct damon_attrs *a, uint64_t sample, uint64_t aggr,
			uint32_t min, uint32_t max)
{
	CHECK_EQ_U64(a->sample_us, sample);
	CHECK_EQ_U64(a->aggr_us, aggr);
	CHECK_EQ_U64(a->min_nr_regions, min);
	CHECK_EQ_U64(a->max_nr_regions, max);
}

static void test_small_footprint_keeps_conf(void)
{
	struct damon_attrs a;

	/* 2000 ranges of 2 MiB: DAMON's own regions reach a range. */
	damon_fit(&CONF, 2000 * 2 * MIB, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 5000, 100000, 200, 2000);
	damon_fit(&CONF, 0, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 5000, 100000, 200, 2000);
	/* Four targets of 1 GiB: each starts with its 512 ranges. */
	damon_fit(&CONF, 4 * GIB, 4, 2 * MIB, 0, &a);
	check_attrs(&a, 5120, 102400, 512, 2048);
	/* No region size: nothing to fit to. */
	damon_fit(&CONF, 256 * GIB, 1, 0, 0, &a);
	check_attrs(&a, 5000, 100000, 200, 2000);
}

static void test_aggregation_spans_a_drain(void)
{
	/* 7 ms / 100 ms: a drain every 500 ms takes 71 samples (497 ms),
	 * whole sampling intervals, never past the drain. */
	const struct damon_attrs c = { .sample_us = 7000, .aggr_us = 100000,
				       .min_nr_regions = 10, .max_nr_regions = 1000 };
	struct damon_attrs a;

	damon_fit(&CONF, 1 * GIB, 1, 2 * MIB, 500000, &a);
	check_attrs(&a, 5000, 500000, 200, 2000);
	damon_fit(&c, 1 * GIB, 1, 2 * MIB, 500000, &a);
	check_attrs(&a, 7000, 497000, 10, 1000);
	/* Also where there is nothing to fit regions to. */
	damon_fit(&CONF, 1 * GIB, 1, 0, 1000000, &a);
	check_attrs(&a, 5000, 1000000, 200, 2000);
	/* A fitted aggregation longer than the drain stays. */
	damon_fit(&CONF, 256 * GIB, 1, 2 * MIB, 1000000, &a);
	check_attrs(&a, 327680, 1966080, 131072, 131072);
	/* A drain shorter than a sampling interval changes nothing. */
	damon_fit(&CONF, 1 * GIB, 1, 2 * MIB, 4000, &a);
	check_attrs(&a, 5000, 100000, 200, 2000);
}

static void test_one_region_per_range(void)
{
	struct damon_attrs a;

	/* 256 GiB: 131072 regions of one range, sampled 65.536 times as
	 * seldom (327.68 ms), 6 samples an aggregation (1.97 s; 20 would be
	 * 6.55 s, past DAMON_FIT_MAX_AGGR_US). */
	damon_fit(&CONF, 256 * GIB, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 327680, 1966080, 131072, 131072);
	/* The pages checked a second stay the configuration's. */
	CHECK(a.max_nr_regions * 1000000ull / a.sample_us <=
	      CONF.max_nr_regions * 1000000ull / CONF.sample_us);
	/* A partial range is a region; the interval rounds up. */
	damon_fit(&CONF, 2001 * 2 * MIB + 1, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 5005, 100100, 2002, 2002);
	damon_fit(&CONF, 2003 * 2 * MIB, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 5008, 100160, 2003, 2003);
	/* A larger unit: 2 TiB in 512 MiB regions. */
	damon_fit(&CONF, 2 * 1024 * GIB, 1, 512 * MIB, 0, &a);
	check_attrs(&a, 10240, 204800, 4096, 4096);
}

static void test_most_regions(void)
{
	struct damon_attrs a;

	/* 1 TiB is 524288 ranges: DAMON_FIT_MAX_REGIONS regions of four. */
	damon_fit(&CONF, 1024 * GIB, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 327680, 1966080, DAMON_FIT_MAX_REGIONS, DAMON_FIT_MAX_REGIONS);
}

static void test_targets_share_min(void)
{
	struct damon_attrs a;

	/* Four targets of 64 GiB: each starts with a quarter of the regions. */
	damon_fit(&CONF, 256 * GIB, 4, 2 * MIB, 0, &a);
	check_attrs(&a, 327680, 1966080, 32768, 131072);
	/* Never below the configured minimum. */
	damon_fit(&CONF, 8 * GIB, 64, 2 * MIB, 0, &a);
	check_attrs(&a, 10240, 204800, 200, 4096);
}

static void test_samples_per_aggregation_kept(void)
{
	/* 10 ms / 250 ms / 10..1000: 25 samples an aggregation, the unit of
	 * nr_accesses the policy's thresholds are in. */
	const struct damon_attrs c = { .sample_us = 10000, .aggr_us = 250000,
				       .min_nr_regions = 10, .max_nr_regions = 1000 };
	struct damon_attrs a;

	damon_fit(&c, 8 * GIB, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 40960, 1024000, 4096, 4096);
	CHECK_EQ_U64(a.aggr_us / a.sample_us, c.aggr_us / c.sample_us);
}

static void test_longest_aggregation(void)
{
	/* 100 ms / 2 s / 10..2000 over 1 TiB: sampled every 6.55 s, so
	 * DAMON_FIT_MIN_SAMPLES samples, past DAMON_FIT_MAX_AGGR_US. */
	const struct damon_attrs slow = { .sample_us = 100000, .aggr_us = 2000000,
					  .min_nr_regions = 10, .max_nr_regions = 2000 };
	/* 5 ms / 10 ms: 2 samples, below DAMON_FIT_MIN_SAMPLES, kept. */
	const struct damon_attrs two = { .sample_us = 5000, .aggr_us = 10000,
					 .min_nr_regions = 10, .max_nr_regions = 2000 };
	struct damon_attrs a;

	damon_fit(&slow, 1024 * GIB, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 6553600, 4 * 6553600, DAMON_FIT_MAX_REGIONS, DAMON_FIT_MAX_REGIONS);
	damon_fit(&two, 256 * GIB, 1, 2 * MIB, 0, &a);
	check_attrs(&a, 327680, 655360, 131072, 131072);
	/* The defaults at 256 GiB: at most DAMON_FIT_MAX_AGGR_US. */
	damon_fit(&CONF, 256 * GIB, 1, 2 * MIB, 0, &a);
	CHECK(a.aggr_us <= DAMON_FIT_MAX_AGGR_US);
	CHECK(a.aggr_us + a.sample_us > DAMON_FIT_MAX_AGGR_US);
}

int main(void)
{
	RUN(test_small_footprint_keeps_conf);
	RUN(test_aggregation_spans_a_drain);
	RUN(test_one_region_per_range);
	RUN(test_most_regions);
	RUN(test_targets_share_min);
	RUN(test_samples_per_aggregation_kept);
	RUN(test_longest_aggregation);
	return TEST_EXIT();
}
