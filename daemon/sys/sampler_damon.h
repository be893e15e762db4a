/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The DAMON source: a kdamond that tierd creates through the DAMON sysfs
 * interface, monitoring the targets' virtual address spaces; each drain takes
 * the regions of its newest aggregation from the damon_aggregated tracepoint
 * (a damon_feed), or, where that cannot run, from one `stat` scheme per
 * target.  See damon/sampler.c.
 */
#ifndef TIERD_SYS_SAMPLER_DAMON_H
#define TIERD_SYS_SAMPLER_DAMON_H

#include "damon_feed.h"
#include "page_geom.h"
#include "sampler.h"

struct sampler_damon_params {
	const char *admin_dir;	/* NULL: /sys/kernel/mm/damon/admin; a fixture in tests */
	const char *runtime_dir;	/* where the ownership record lives (TIERD_RUNTIME_DIR) */
	const char *procfs_root;	/* NULL: /proc; a fixture in tests (the kdamond's CPU time) */
	uint64_t sample_us, aggr_us, update_us;	/* DAMON monitoring intervals */
	uint32_t min_nr_regions, max_nr_regions;
	/* The kernel's: statm's page counts are in its base pages. */
	struct page_geom geom;
	/* The policy's unit (the range): regions and intervals are fitted
	 * to the targets' memory at this size (core/damon_fit.h); 0: the
	 * configured ones, whatever the memory. */
	uint64_t region_bytes;
	/* How often tierd drains the source (interval_ms as tierd started):
	 * a fitted aggregation lasts at least that long; 0: no such floor. */
	uint64_t drain_us;
	uint32_t max_targets;
	/* The memory the known-heat sketch is sized for (damon_feed.h:
	 * damon_known_cells_for()); 0: this machine's. */
	uint64_t mem_bytes;
	/* Where regions come from; NULL: the schemes' tried_regions.  The
	 * sampler owns it from sampler_damon_new() on (also when that fails). */
	struct damon_feed *feed;
	/* Called after every sysfs write (path relative to admin_dir); tests use
	 * it to play the kernel's part and to check the sequence. */
	void (*on_write)(const char *rel_path, const char *value, void *arg);
	void *on_write_arg;
	/* Called before every sysfs read and write; a negative return is taken
	 * as that attempt's result.  Tests use it to play the -EBUSY the kernel
	 * returns while damon_sysfs_lock is held elsewhere.  NULL in tierd. */
	int (*before_io)(const char *rel_path, bool write, void *arg);
	void *before_io_arg;
};

/* 5 ms sampling, 100 ms aggregation, 1 s regions update, 10..1000 regions, 64 targets,
 * in the page geometry @g. */
void sampler_damon_params_default(struct sampler_damon_params *p, const struct page_geom *g);

int sampler_damon_new(const struct sampler_damon_params *p, struct sampler **ret);

/*
 * The known-heat sketch (bpf/damon.h) of @cells cells, zeroed and written
 * from the table's 2 MiB entries of @targets (sorted, their indexes the
 * kdamond's), with heat taken at @at_ns, divided by @acc (the pace's count
 * scale) into the unit of the aggregations the program looks at, and kept
 * in @unit (damon_known_unit()).  The DAMON source does it when it arms a
 * wake; exported for the memory bench (tests/bench/daemon_rss.c).
 */
struct hot_table;
void damon_known_fill(__u8 *known, uint32_t cells, uint32_t unit, const struct hot_table *t,
		      uint64_t at_ns, const pid_t *targets, uint32_t ntargets, double acc);

/*
 * Wait until the tried_regions update a drain asked for, or the state
 * change set_targets() or set_pace() handed to the source's worker, is
 * done, and take a done change in as the next drain would.  A tick never
 * waits (damon/update.c, damon/sampler.c); the tests and the lab probe,
 * which check what the kernel did, do.  tierd does not call it.
 */
void sampler_damon_settle(struct sampler *s);

/* How long a sysfs read or write keeps retrying the -EBUSY that DAMON's
 * mutex_trylock(&damon_sysfs_lock) returns before it gives up with -EBUSY,
 * where it may wait (start, stop, the source's worker); in a tick it does
 * not retry, and the next drain tries again. */
#define DAMON_BUSY_WAIT_US 1000000

/* The ownership record's file name inside runtime_dir. */
#define DAMON_OWNER_FILE "damon.owner"

#endif
