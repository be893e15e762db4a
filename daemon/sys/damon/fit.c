// SPDX-License-Identifier: GPL-2.0-only
/*
 * The DAMON source's regions and intervals fitted to its targets' memory
 * (core/damon_fit.c has the rule and its cost): worked out when the
 * targets change, from their resident memory, and written with them.
 */
#include "../procmem.h"
#include "source.h"

int damon_fit_targets(struct sampler_damon *d, const pid_t *pids, size_t n)
{
	const char *proc = d->p.procfs_root ? d->p.procfs_root : "/proc";
	uint64_t total = 0, rss;
	struct damon_attrs fit;
	int r;

	if (!d->p.region_bytes || !n)
		return 0;
	/* Read here, when the targets are written: the watcher (sample_watch.c)
	 * reads RSS only while it must choose among more processes than it may
	 * watch, and a drain may write a change ticks after it was asked.  A
	 * process gone since the pid list was made is the next change's. */
	for (size_t i = 0; i < n; i++)
		if (proc_rss_bytes(proc, pids[i], d->p.geom.base, &rss) == 0)
			total += rss;
	damon_fit(&d->conf, total, (uint32_t)n, d->p.region_bytes, d->p.drain_us, &fit);
	if (fit.sample_us == d->p.sample_us && fit.aggr_us == d->p.aggr_us &&
	    fit.min_nr_regions == d->p.min_nr_regions &&
	    fit.max_nr_regions == d->p.max_nr_regions)
		return 0;
	d->p.sample_us = fit.sample_us;
	d->p.aggr_us = fit.aggr_us;
	d->p.min_nr_regions = fit.min_nr_regions;
	d->p.max_nr_regions = fit.max_nr_regions;
	r = damon_sysfs_write_u64(d, d->p.min_nr_regions,
				  "kdamonds/%d/contexts/0/monitoring_attrs/nr_regions/min", d->idx);
	return r < 0 ? r : damon_attrs_write(d, d->pace);
}
