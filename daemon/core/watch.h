/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which of the target processes a bounded hotness source watches.  The
 * DAMON source takes at most DAMON_MAX_TARGETS processes (each one costs
 * its kdamond at least min_nr_regions regions, and all of them share
 * max_nr_regions); a host runs hundreds.  What the policy can gain from a
 * process is its memory on lower tiers: hot pages there are what it
 * promotes.  So the source watches the processes with the most bytes on
 * lower tiers, and the choice is made again as those bytes change.
 *
 * Knowing a process's bytes per node costs a read of /proc/PID/numa_maps,
 * which walks its page tables: too dear for every process at every scan.
 * The choice reads a few per scan (watch_reads()): the ones never read,
 * the largest first, then the ones read longest ago; never one whose
 * resident size is at or under the cut (the bound-th best's score), since
 * its lower-tier bytes, at most its resident size, cannot beat the cut.
 * With no more targets than the bound there is nothing to choose and
 * nothing is read.
 *
 * Worked example: bound 64, 203 processes in the policy's cgroups, 200 of
 * them idle with 1 MiB resident, 3 with 64 MiB placed on node 1.  The
 * first scan reads the three large ones first (their sizes), and the
 * choice takes them with 61 others; later scans read the idle ones, 16 at
 * a time, stalest first, and keep the three.
 *
 * A watched process keeps its place against one that has up to stay_bytes
 * more on lower tiers: each change of targets costs the kdamond a commit
 * and the dropped process its heat, so two processes of nearly the same
 * weight do not take turns.
 */
#ifndef TIERD_CORE_WATCH_H
#define TIERD_CORE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct watch_proc {
	pid_t pid;
	uint64_t rss_bytes;	/* resident, read at every scan */
	uint64_t lower_bytes;	/* on lower tiers, at its last read */
	uint64_t read_ns;	/* when lower_bytes was read; 0: never */
	bool watched;		/* in the current choice */
};

struct watch_params {
	size_t bound;		/* the most processes watched */
	size_t max_reads;	/* node-memory reads per scan */
	uint64_t max_read_bytes;	/* their resident bytes together, per scan */
	uint64_t stay_bytes;	/* a watched process's edge in the choice */
};

/*
 * The processes whose lower-tier bytes to read at this scan: up to
 * max_reads indexes into @procs, in *@ret_idx (room for @n), whose
 * resident bytes add up to no more than max_read_bytes (the first is
 * always taken).  @scratch: room for @n indexes.  Returns how many; 0 when
 * @n is within the bound.
 */
size_t watch_reads(const struct watch_params *p, const struct watch_proc *procs, size_t n,
		   size_t *scratch, size_t *ret_idx);

/*
 * Mark the processes to watch in @procs (their watched flags): all of them
 * when @n is within the bound, else the bound best by lower-tier bytes
 * (plus stay_bytes for one watched now), then resident bytes, then the
 * lower pid.  @scratch: room for @n indexes.  Returns how many are
 * watched.
 */
size_t watch_choose(const struct watch_params *p, struct watch_proc *procs, size_t n,
		    size_t *scratch);

#endif
