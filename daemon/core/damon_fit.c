// SPDX-License-Identifier: GPL-2.0-only
/*
 * DAMON's regions sized to the memory it watches.
 *
 * The model.  A kdamond checks one page of each region every sampling
 * interval (mm/damon/vaddr.c: damon_va_prepare_access_checks(),
 * damon_va_check_accesses()), so what it costs is the pages it checks a
 * second, max_nr_regions / sample_us at the most, and what it can tell
 * apart is a region.  DAMON adapts regions by merging neighbours that read
 * alike and splitting every region in two or three at random
 * (kdamond_merge_regions(), kdamond_split_regions()), within
 * [min_nr_regions, max_nr_regions].  Where the hot memory is runs of
 * ranges scattered through a large footprint, each run in a region
 * also holding cold ones, a region reads what its few hot pages give
 * the one page checked, about what its cold neighbours read; the merge
 * joins them again, and the hot ranges stay inside coarse regions.
 * tierd moves ranges, so a region larger than one is a range whose
 * heat it cannot tell from its neighbours'.
 *
 * The rule.  Up to max_nr_regions ranges of footprint, the configured
 * attributes stand: DAMON's own regions reach a range.  Above it, one
 * region per range: max_nr_regions = the footprint's ranges, and
 * min_nr_regions the same over the targets (DAMON starts every target
 * with min_nr_regions regions, damon_va_init(), and merges no region past
 * the watched bytes over min_nr_regions, damon_region_sz_limit()), so
 * that with one target no merge goes past a range, and with n targets of
 * one size none past n ranges; the kdamond never splits (it splits only
 * below max_nr_regions / 2);
 * the sampling interval grows by as much as the regions, so the pages
 * checked a second stay what the configuration allows; the aggregation
 * keeps the configuration's samples while that is at most
 * DAMON_FIT_MAX_AGGR_US, else as many as fit in it (at least
 * DAMON_FIT_MIN_SAMPLES).  A longer sampling interval costs nothing in
 * what a check sees: a page's accessed bit records any access within the
 * interval, so a hot page is seen at almost every check and a cold one at
 * few.  Last, an aggregation lasts at least one of tierd's drains.
 *
 * Why an aggregation spans a drain.  tierd folds the newest aggregation a
 * drain finds into its table (sys/damon/regions.c) and no other: at the
 * defaults, 100 ms aggregations and a tick every 500 ms to 1 s, the
 * counts of four in five to nine in ten are never read.  An aggregation
 * as long as the drain costs no more (the same checks a second, fewer
 * aggregation walks) and carries all of them: a region reads 0-100 at
 * 500 ms instead of 0-20, and where the accessed bits are set at most
 * checks that is the contrast left.  On grace-hopper's 64 KiB pages a
 * cold range of the tenants workload at 4 GiB reads 16.4 of 20 on
 * average, a hot one 18.4 (tierd-sim: the regions' counts against the
 * workload's).  The first aggregation, all tierd had when it filled the
 * cgroups' caps, told them apart too little, and a cgroup at its cap
 * takes no promotions: run time 1.553 of all-DRAM, the oracle's 1.315.
 * With aggregations as long as its 500 ms ticks tierd places the
 * oracle's ranges, at the oracle's run time (`tierd-sim run --machine
 * sim/machines/grace-hopper.yaml --gen tenants:footprint=4G,seconds=60
 * --system oracle,tierd-patched --sampler damon`).  A count is still a
 * check that found the page accessed (the unit of the fitted intervals,
 * sys/damon/pace.c): the policy's hot threshold follows the heat's
 * spread and its crowded floor counts checks (core/policy.h).  While
 * tierd is idle the aggregation is the idle pace's, which shows a moved
 * hot set sooner (pace.c).
 *
 * Why the aggregation is cut.  The first heat tierd sees comes after one
 * aggregation, and a new hot set's after one more: 20 samples of a
 * stretched interval are 6.55 s at 256 GiB.  tierd's hot table adds each
 * aggregation's nr_accesses to a range's heat and decays it (half_life),
 * so six samples every 2 s give about the heat twenty every 6.55 s do,
 * three times as often: the same heat a second, the policy's thresholds
 * the same.  In tierd-sim (dram+cxl, 256 GiB, DAMON, 60 s) tierd-patched's
 * run time is 1.07-1.10 of all-DRAM on the uniform, shift and Zipf
 * workloads with 6 samples and 1.19-1.22 with 20, the oracle's 1.04-1.06
 * (bench/sim --sampler damon, docs/sim-results.md).  The price is
 * the aggregation's walk over the regions (one damon_aggregated event
 * each) three times as often: at 131072 regions, 65536 events a second
 * instead of 20000.
 *
 * A worked example, the defaults (5 ms, 100 ms, 200..2000 regions:
 * 400000 checks a second) over 256 GiB of a workload: 131072 ranges of
 * 2 MiB; 131072 regions, sampled every 327.68 ms (131072 / 400000 s),
 * aggregated every 1.97 s (6 samples, not 20: 6.55 s).  A page touched 100 times a second
 * is seen young at nearly every check; one touched once in 3 s at one
 * check in ten.
 *
 * What it costs.  The same checks a second as the configuration at its
 * most regions; the kernel holds a struct damon_region per region (some
 * 100 bytes: 13 MiB for 131072), tierd a feed record per region (4 MiB
 * at DAMON_FIT_MAX_REGIONS), and the aggregation walks them all once
 * (merge, split, one damon_aggregated event each), twenty times less
 * often than it checks them.  DAMON_FIT_MAX_REGIONS bounds all three:
 * past 256 GiB of 2 MiB ranges a region holds more than one range.
 *
 * How it fails.  A footprint whose hot memory is one dense block loses
 * DAMON's adaptivity (it would find the block with fewer, coarser regions
 * and sample them more often); the cost stays within the configuration's.
 * The footprint is what tierd knows of its targets (their resident
 * memory, when the targets change), not the virtual ranges the kdamond
 * watches: sparse mappings, and memory a target maps after, get regions
 * larger than a range; so does the largest of targets of unequal sizes
 * (its share of min_nr_regions is the others').  An aggregation of up to
 * 2 s, or of a drain where that is longer, is the first heat tierd sees
 * after a start or a change of targets.  The drain is interval_ms as
 * tierd started: a reload that changes it keeps the aggregations until a
 * restart.
 */
#include "damon_fit.h"

/* The aggregation of @a stretched to at least @drain_us (0: as it is),
 * in whole sampling intervals. */
static void span_drain(struct damon_attrs *a, uint64_t drain_us)
{
	uint64_t samples;

	if (!a->sample_us || a->aggr_us >= drain_us)
		return;
	samples = drain_us / a->sample_us;
	if (samples * a->sample_us > a->aggr_us)
		a->aggr_us = samples * a->sample_us;
}

void damon_fit(const struct damon_attrs *conf, uint64_t footprint_bytes, uint32_t nr_targets,
	       uint64_t region_bytes, uint64_t drain_us, struct damon_attrs *ret)
{
	uint64_t want, per_target, samples;

	*ret = *conf;
	if (!region_bytes || !conf->sample_us || !conf->max_nr_regions)
		goto out;
	want = footprint_bytes / region_bytes + (footprint_bytes % region_bytes != 0);
	if (want <= conf->max_nr_regions)
		goto out;
	if (want > DAMON_FIT_MAX_REGIONS)
		want = DAMON_FIT_MAX_REGIONS;
	per_target = want / (nr_targets ? nr_targets : 1);
	if (per_target > conf->min_nr_regions)
		ret->min_nr_regions = (uint32_t)per_target;
	ret->max_nr_regions = (uint32_t)want;
	ret->sample_us = (conf->sample_us * want + conf->max_nr_regions - 1) / conf->max_nr_regions;
	samples = conf->aggr_us / conf->sample_us;
	if (!samples)
		samples = 1;
	if (samples > DAMON_FIT_MIN_SAMPLES && samples * ret->sample_us > DAMON_FIT_MAX_AGGR_US) {
		samples = DAMON_FIT_MAX_AGGR_US / ret->sample_us;
		if (samples < DAMON_FIT_MIN_SAMPLES)
			samples = DAMON_FIT_MIN_SAMPLES;
	}
	ret->aggr_us = ret->sample_us * samples;
out:
	span_drain(ret, drain_us);
}
