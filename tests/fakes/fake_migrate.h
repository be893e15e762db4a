/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A scripted migrator: each move_pages call takes the next script step
 * (a whole-call errno, or statuses for its pages, or "land where asked"),
 * records what it was asked, and advances a fake clock by the step's time.
 */
#ifndef TIERD_FAKE_MIGRATE_H
#define TIERD_FAKE_MIGRATE_H

#include <stdint.h>

#include "migrate.h"

#define FAKE_MIG_STEPS 16
#define FAKE_MIG_PAGES 64

struct fake_mig_step {
	int call_err;			/* negative errno for the whole call, or 0 */
	int nr_status;			/* 0: every page lands where asked */
	int status[FAKE_MIG_PAGES];
	/*
	 * A plain call that ends early, as vanilla do_pages_move() does: it
	 * returns call_ret (> 0, the pages not moved) with only the first
	 * @written statuses written.
	 */
	int call_ret;
	int written;
	uint64_t took_ns;
};

struct fake_mig_call {
	int pid;
	unsigned long count;
	uint64_t addrs[FAKE_MIG_PAGES];
	int nodes[FAKE_MIG_PAGES];	/* -2: a query (nodes NULL) */
	int flags;
};

struct fake_mig {
	int probe_result;		/* what the MPOL_MF_PROMOTE probe returns */
	int move_all_probe;		/* the MPOL_MF_MOVE_ALL probe's: 0, -EPERM */
	int query_node;			/* node a query reports */
	struct fake_mig_step steps[FAKE_MIG_STEPS];
	int nr_steps;
	int next_step;
	struct fake_mig_call calls[FAKE_MIG_STEPS];
	int nr_calls;
	uint64_t clock_ns;
	/* node_free(): an errno (negative), else the bytes of free[node], which
	 * each page that lands takes page_bytes from. */
	int free_err;
	uint64_t free[2];
	uint64_t page_bytes;
	int free_reads;
};

extern const struct mig_ops fake_mig_ops;

#endif
