// SPDX-License-Identifier: GPL-2.0-only
/*
 * The DAMON source's pace: its kdamond's intervals and most regions while
 * tierd has nothing to move, and what an aggregation's counts are worth at
 * each pace.
 */
#include <errno.h>
#include <stdint.h>

#include "source.h"

/*
 * The aggregation interval at @pace.  At pace 1, the fitted one
 * (fit.c).  Slower, the sampling interval stretches by the whole of
 * @pace, the aggregation interval with it only as far as
 * IDLE_AGGR_SAMPLES sampling intervals, and never below the configured
 * one (aggr_interval_us, not the fit's, which may span a drain: tierd
 * is idle, and an aggregation's end is when it hears of a change).
 * The kdamond's cost is its sampling; an aggregation costs a merge,
 * a split and a tracepoint event per region, and it is where a moved hot
 * set first shows: the program's wake comes at an aggregation's end.  At
 * the defaults (5 ms / 100 ms) and the idle slowdown of 10 that is 250 ms
 * aggregations instead of 1 s.  In the lab (the bench's shift workload)
 * the first pages of a hot set that moves while tierd is at rest go
 * 0.3-0.7 s after the move instead of 0.9-1.3 s, 90% of it 1.5-1.7 s
 * instead of 1.8-2.9 s, for the same kdamond CPU time at rest (2-3% of a
 * vCPU).
 */
#define IDLE_AGGR_SAMPLES 5

uint64_t damon_aggr_us_at(const struct sampler_damon *d, unsigned int pace)
{
	uint64_t aggr = d->p.aggr_us * pace, most = IDLE_AGGR_SAMPLES * d->p.sample_us * pace;

	if (pace <= 1 || aggr <= most)
		return aggr;
	return most > d->conf.aggr_us ? most : d->conf.aggr_us;
}

/*
 * An aggregation as it runs.  DAMON counts an aggregation in sampling
 * intervals, not in time (mm/damon/core.c: kdamond_fn() ends one when
 * passed_sample_intervals reaches next_aggregation_sis), and a sampling
 * interval is a sleep of sample_us plus the check of every region, so on a
 * busy machine, or with many regions, an aggregation takes longer than
 * its interval.  A region's age counts aggregations: its age times the
 * nominal interval says an idle region has been idle for less time than it
 * has, and cold_age_s stretches with the load.  The drains time them: the
 * time between drains that read a new pass, over the nominal intervals of
 * the aggregations that ended in it, each sum halved once it spans
 * DAMON_CLOCK_WINDOW_NS, so that the ratio follows the load over about
 * the time an age of cold_age_s took to build.  Never below 1: an
 * aggregation is never shorter than its samples, and what reads below is
 * a drain's timing (a tick at the most, against the window).  A change
 * of kdamond or pace starts over, from the nominal interval: the time
 * while the kdamond was off counts for nothing, and a sampling interval
 * stretched by the pace is stretched less by the same checks (the stretch
 * at one pace would read idle memory as older than it is at the other).
 */
#define DAMON_CLOCK_WINDOW_NS (60ull * 1000000000ull)

void damon_clock_note(struct sampler_damon *d, uint64_t pass, uint64_t now_ns)
{
	if (d->clock_ns && pass > d->clock_pass && now_ns > d->clock_ns) {
		d->clock_real_ns += now_ns - d->clock_ns;
		d->clock_nominal_ns += (pass - d->clock_pass) * damon_aggr_us_at(d, d->pace) * 1000;
		if (d->clock_real_ns > DAMON_CLOCK_WINDOW_NS) {
			d->clock_real_ns /= 2;
			d->clock_nominal_ns /= 2;
		}
	}
	d->clock_pass = pass;
	d->clock_ns = now_ns;
}

void damon_clock_restart(struct sampler_damon *d)
{
	d->clock_ns = 0;
	d->clock_real_ns = d->clock_nominal_ns = 0;
}

uint64_t damon_aggr_real_ns(const struct sampler_damon *d)
{
	uint64_t nominal = damon_aggr_us_at(d, d->pace) * 1000;

	if (d->clock_real_ns <= d->clock_nominal_ns)
		return nominal;
	return (uint64_t)((double)nominal * (double)d->clock_real_ns /
			  (double)d->clock_nominal_ns);
}

/*
 * What an aggregation's nr_accesses at the current pace is worth in the
 * configured pace's: the table's heat and the policy's thresholds keep one
 * unit, the most a region can read at the configured intervals (aggr /
 * sample, as the kernel has it: damon_max_nr_accesses()).  At pace 10 of
 * the defaults a region reads 0-5 instead of 0-20, so each access counts
 * 4.  The kernel converts the counts of the aggregation under way when new
 * intervals are committed (mm/damon/core.c:
 * damon_update_monitoring_results()), which happens just before that
 * aggregation's tracepoint events; so every aggregation read after
 * set_pace() returns is in the new pace's unit.
 */
uint64_t damon_max_nr_accesses(const struct sampler_damon *d)
{
	return damon_aggr_us_at(d, d->pace) / (d->p.sample_us * d->pace);
}

double damon_acc_scale_at(const struct sampler_damon *d, unsigned int pace)
{
	uint64_t most = damon_aggr_us_at(d, pace) / (d->p.sample_us * pace);

	return most ? (double)(d->p.aggr_us / d->p.sample_us) / (double)most : 1.0;
}

double damon_acc_scale(const struct sampler_damon *d)
{
	return damon_acc_scale_at(d, d->pace);
}

/*
 * Stretch (or restore) the kdamond's sampling and aggregation intervals
 * (damon_aggr_us_at()), and divide (or restore) its most regions: a running
 * kdamond takes them at "commit".  Its cost is one page-table check per
 * region per sampling interval (and, as DAMON clears accessed bits, the TLB
 * refills that follow), paid by the workloads it watches, and each drain
 * reads three files per region; when tierd has nothing to move that buys
 * nothing.  Fewer regions make DAMON merge the ones that look alike, so
 * what it still tells apart is coarser, which is enough to see that
 * something changed; the first planned move restores the full resolution.
 * The files are written from the tick (no wait: -EBUSY leaves them to the
 * next drain), the "commit" by update.c's worker (the kernel waits there).
 */
int damon_attrs_write(struct sampler_damon *d, unsigned int pace)
{
	uint64_t max_regions = d->p.max_nr_regions / pace;
	int r;

	if (max_regions < d->p.min_nr_regions)
		max_regions = d->p.min_nr_regions;
	r = damon_sysfs_write_u64(d, d->p.sample_us * pace,
			    "kdamonds/%d/contexts/0/monitoring_attrs/intervals/sample_us", d->idx);
	if (r == 0)
		r = damon_sysfs_write_u64(d, damon_aggr_us_at(d, pace),
				    "kdamonds/%d/contexts/0/monitoring_attrs/intervals/aggr_us",
				    d->idx);
	if (r == 0)
		r = damon_sysfs_write_u64(d, max_regions,
				    "kdamonds/%d/contexts/0/monitoring_attrs/nr_regions/max",
				    d->idx);
	return r;
}

int damon_pace_write(struct sampler_damon *d, unsigned int pace)
{
	int r = damon_attrs_write(d, pace);

	/* The first idle pace starts the feed: its load (parsing the kernel's
	 * BTF, 0.1-0.2 s of a CPU in the lab guest) would otherwise come
	 * before tierd's first promotion.  The schemes go with the same commit. */
	if (r == 0 && pace > 1 && d->feed && !d->feed_tried) {
		damon_tp_start(d);
		d->feed_switch = d->feed_on && d->on;
		/* Said with the new generation (the daemon logs the status once). */
		if (d->on)
			damon_status_running(d);
	}
	if (r == 0 && d->feed_switch)
		r = damon_sysfs_write(d, "0", "kdamonds/%d/contexts/0/schemes/nr_schemes", d->idx);
	return r;
}

/* Asked from a tick: written now or by a later drain, never waited for. */
int damon_set_pace(struct sampler *s, unsigned int slowdown)
{
	struct sampler_damon *d = SD(s);

	if (d->idx < 0)
		return -ENOTCONN;
	d->want_pace = slowdown ? slowdown : 1;
	return damon_wishes_apply(d);
}
