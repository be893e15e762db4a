/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Idle memory: address ranges of tracked processes that their hotness
 * source saw no access in, each with how long it has seen none.  The
 * hotness table holds what is accessed; a data set loaded before tierd
 * started and never touched since has no heat, so it is never in the
 * table, and only this says it is there, cold, on the fast tier.
 *
 * Ranges, not pages: a source reports a region of any size as one entry
 * (DAMON: a region with nr_accesses 0, its age), so a terabyte of idle
 * memory costs as many entries as the source has regions, a few thousand
 * at the most, not a quarter of a billion 4 KiB pages.  The set is bounded
 * by the memory the caller gives it and replaced whole by each report:
 * DAMON reports every region of every target at every aggregation, so the
 * newest report is the whole picture.
 *
 * Pure: memory comes in at init, time in the reports; nothing allocates.
 */
#ifndef TIERD_CORE_IDLE_H
#define TIERD_CORE_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct idle_range {	/* 32 bytes */
	uint64_t start;		/* [start, end) of the process's addresses */
	uint64_t end;
	uint64_t since_ns;	/* no access seen since then */
	pid_t pid;
	uint32_t reserved;
};

struct idle_set {
	struct idle_range *r;	/* [cap], the caller's; sorted by pid, then start */
	uint32_t cap;
	uint32_t n;
	uint64_t bytes;		/* the ranges' bytes */
	uint64_t dropped;	/* ranges the last report had no room for */
	uint64_t reports;	/* idle_begin() calls: changes with every report */
};

/* Set @s up over @mem, room for @cap ranges (0: a set that stays empty). */
void idle_init(struct idle_set *s, struct idle_range *mem, uint32_t cap);

/* A new report: the set is empty until idle_add() fills it again. */
void idle_begin(struct idle_set *s);

/*
 * Range [@start, @end) of @pid, unaccessed since @since_ns, into the
 * report.  Kept in (pid, start) order: a source that reports in that
 * order (DAMON's targets are sorted pids, their regions in address order)
 * appends, and a range appended where the pid's last one ends extends it
 * (idle since the later of the two).  Returns 0; -EINVAL (pid <= 0, an empty range, one that
 * overlaps a range of the same pid); -ENOSPC when the set is full (counted
 * in dropped).
 */
int idle_add(struct idle_set *s, pid_t pid, uint64_t start, uint64_t end, uint64_t since_ns);

/* The index of the first range of @pid that ends above @addr, or of the
 * first range of a higher pid; s->n when there is none: where a walk that
 * stopped at (@pid, @addr) goes on, in this report or a later one. */
uint32_t idle_find(const struct idle_set *s, pid_t pid, uint64_t addr);

#endif
