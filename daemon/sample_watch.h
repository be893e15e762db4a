/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Step 1's choice of the processes a bounded source watches (the DAMON
 * source: DAMON_MAX_TARGETS), by their memory on lower tiers: core/watch.h
 * has the model and the cost, sys/procmem.h the reads.
 */
#ifndef TIERD_SAMPLE_WATCH_H
#define TIERD_SAMPLE_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "watch.h"

struct topology;

struct sample_watch {
	struct watch_params p;
	struct watch_proc *procs, *next;	/* by pid, [max] */
	size_t n, max;
	size_t *scratch, *idx;
	const char *proc_root;
	uint64_t reads_total;	/* numa_maps reads */
};

/* 0 or -ENOMEM.  @bound: the most watched; @max: the most candidates. */
int sample_watch_init(struct sample_watch *w, size_t bound, size_t max);
void sample_watch_free(struct sample_watch *w);

/*
 * Choose up to the bound of @pids (sorted, at most max; @rss[i] the
 * resident bytes of pids[i], as the scan that found it read them) into
 * @ret (sorted, room for the bound): all of them when they fit, else those
 * with the most bytes on lower tiers of @topo, with a few numa_maps reads
 * per call.  Returns how many.
 */
size_t sample_watch_step(struct sample_watch *w, const struct topology *topo, const pid_t *pids,
			 const uint64_t *rss, size_t n, pid_t *ret, uint64_t now_ns);

#endif
