/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the DAMON source gets its regions from, behind a small ops table:
 * the damon:damon_aggregated tracepoint through bpf/damon.bpf.c (in
 * damon/feed.c), or a fake in the tests.  Without a feed, or when it cannot
 * start, damon/regions.c reads `stat` schemes' tried_regions from sysfs.
 */
#ifndef TIERD_SYS_DAMON_FEED_H
#define TIERD_SYS_DAMON_FEED_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* struct damon_feed_rec: one region of one aggregation, as the program
 * writes it and the feed hands it on. */
#include "../../bpf/damon.h"

struct damon_feed_counters {
	uint64_t seen;		/* regions of the followed kdamond, all passes */
	uint64_t overflow;	/* regions that did not fit (passes partial) */
	uint64_t retries;	/* copies that raced a new pass and were redone */
	uint64_t wakes;		/* passes the program woke tierd for */
	uint64_t wake_drops;	/* ... and could not (its ring was full) */
};

struct damon_feed;

struct damon_feed_ops {
	/* Load and attach, with room for @max_regions regions per
	 * aggregation and a known-heat sketch of @known_cells cells (a power
	 * of two, DAMON_KNOWN_CELLS_MIN..MAX); -errno and one line in @why
	 * when it cannot run here. */
	int (*start)(struct damon_feed *f, uint32_t max_regions, uint32_t known_cells,
		     char *why, size_t len);
	/* Follow the kdamond with this pid (0: none) and @nr_targets targets.
	 * *@ret_pass is the number of the aggregation now in progress: later
	 * ones began after the call. */
	int (*follow)(struct damon_feed *f, pid_t kdamond_pid, uint32_t nr_targets,
		      uint64_t *ret_pass);
	/* The newest complete aggregation, when its number is above @after:
	 * returns its record count (0 or more) with its number in *@ret_pass
	 * and the records in @buf (room for @cap); -EAGAIN when there is none
	 * newer; -EBUSY when every copy raced a new pass. */
	int (*read)(struct damon_feed *f, uint64_t after, struct damon_feed_rec *buf,
		    size_t cap, uint64_t *ret_pass);
	void (*counters)(struct damon_feed *f, struct damon_feed_counters *ret);
	/*
	 * Wake-ups (see the program's essay).  known() is the sketch, its
	 * size in *@ret_cells, for the caller to write while disarmed; NULL
	 * when not started.  arm() with @min_bytes > 0 asks for one wake
	 * at the end of the next aggregation whose fresh bytes reach
	 * @min_bytes and 1/@share of its accessed bytes, the sketch's cells
	 * read in @unit (damon.h: damon_known_unit()); 0 disarms.  Either
	 * way it drops wakes not yet taken.  wake_fd() turns readable when a
	 * wake is there (-1 when not started); wake_take() takes the wakes
	 * there are and returns how many.
	 */
	__u8 *(*known)(struct damon_feed *f, uint32_t *ret_cells);
	int (*arm)(struct damon_feed *f, uint64_t min_bytes, uint32_t share, uint32_t unit);
	int (*wake_fd)(struct damon_feed *f);
	int (*wake_take)(struct damon_feed *f);
	/* Detach and unload; safe to call twice.  free() accepts NULL. */
	void (*stop)(struct damon_feed *f);
	void (*free)(struct damon_feed *f);
};

/* Embedded first in every implementation. */
struct damon_feed {
	const struct damon_feed_ops *ops;
};

/* The sketch's size for a machine with @mem_bytes of memory: four cells per
 * 2 MiB range, a power of two within DAMON_KNOWN_CELLS_MIN..MAX (damon.h). */
static inline uint32_t damon_known_cells_for(uint64_t mem_bytes)
{
	uint64_t want = (mem_bytes >> DAMON_RANGE_SHIFT) * 4;
	uint32_t cells = DAMON_KNOWN_CELLS_MIN;

	while (cells < DAMON_KNOWN_CELLS_MAX && cells < want)
		cells <<= 1;
	return cells;
}

/* The tracepoint feed; -EOPNOTSUPP when tierd was built without BPF.
 * @btf_path: the kernel's BTF, NULL for /sys/kernel/btf/vmlinux. */
int damon_feed_bpf_new(const char *btf_path, struct damon_feed **ret);

static inline void damon_feed_free(struct damon_feed *f)
{
	if (f)
		f->ops->free(f);
}

#endif
