/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tierd --record FILE: what the sampler saw, as an access trace that
 * tierd-sim replays (sim/README.md, "Traces").  Each record the hot table
 * takes becomes lines of "time_us,tenant,page,accesses":
 *   time_us   since tierd started, never going back;
 *   tenant    the process's cgroup with "/pid<N>" below it;
 *   page      a base page in a dense space per process: its ranges
 *             (2 MiB: 512 pages of 4 KiB, 32 of 64 KiB) numbered in
 *             the order they were first seen, so that a
 *             process spread over 128 TiB of address space replays as the
 *             memory it really holds;
 *   accesses  the sampler's weight rounded up (DAMON: nr_accesses times
 *             the region's share of each range; BPF: samples).
 * A region becomes one line per range it covers, at its first page in
 * that range, as the hot table folds it.  The header says the page sizes
 * ("# page_bytes: N, pmd_bytes: N"): tierd-sim replays the trace only on
 * a machine model with the same base page.  The file stops growing at
 * @max_bytes or at RECORD_MAX_RANGES ranges, said once in the journal.
 */
#ifndef TIERD_RECORD_H
#define TIERD_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "page_geom.h"

/* 4 TiB of 2 MiB ranges: the index costs 16 bytes a range at most. */
#define RECORD_MAX_RANGES (1u << 21)
#define RECORD_DEFAULT_MAX_BYTES (4ull << 30)

struct record_proc;
struct record_slot;

struct recorder {
	FILE *f;
	char path[4096];
	const char *root;	/* where /proc is read: "/" or a fixture tree */
	struct page_geom geom;	/* the kernel's: pages and ranges of the trace */
	uint64_t start_ns, last_us, last_flush_ns;
	uint64_t max_bytes, bytes, lines;
	bool full;		/* a bound was reached: nothing more is written */
	int error;		/* the first write error, 0 if none */
	struct record_proc *procs;
	uint32_t nr_procs, cap_procs, last_proc;
	struct record_slot *slots;	/* (pid, range) -> dense range, open addressing */
	uint32_t nslots, nused;
};

/*
 * Create @path (truncated) and write its header.  0, or a negative errno
 * with nothing left open.  @max_bytes 0 means RECORD_DEFAULT_MAX_BYTES.
 * Pages and ranges are those of @g.
 */
int record_open(struct recorder *r, const char *path, const char *root,
		const struct page_geom *g, uint64_t max_bytes, uint64_t start_ns);

/* A hot_observer_fn: @ctx is the recorder. */
void record_observe(void *ctx, pid_t pid, uint64_t addr, uint64_t len,
		    double weight, uint64_t now_ns);

/* Flush and close; the first write error, or 0. */
int record_close(struct recorder *r);

#endif
