/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The migrator: one move_pages(2) call per batch of a plan (core/batch),
 * each call timed; what each batch did comes back per batch (struct
 * acct_call) and per page (the plan's status array), for core/account to
 * count (account_plan()): the migrator moves, it does not account.
 *
 * Behind an ops table: mig_real_ops calls libnuma's numa_move_pages() and
 * reads CLOCK_MONOTONIC, with the root directory of /proc and /sys as its
 * context (NULL: "/"); tests/fakes/fake_migrate.c scripts statuses.
 *
 * Promotions use MPOL_MF_PROMOTE (the patched kernel's batch misplaced-folio
 * path) when mig_init() found the kernel accepts it; otherwise plain
 * MPOL_MF_MOVE.  A plain call that ends early leaves statuses unwritten
 * (vanilla do_pages_move() stops at the first failed chunk): the migrator
 * asks where those pages are, so that a page counts as moved only where it
 * is on its target.  In a dry run nothing moves: each batch is a node query
 * (nodes = NULL), and the account counts what would have moved.
 *
 * Shared pages: with MPOL_MF_MOVE alone the kernel moves only pages that
 * one process maps, and answers -EACCES for the others (a database's
 * shared buffers, the pages a forked server shares with its child, any
 * MAP_SHARED segment or file that several processes map).  Every call
 * carries MPOL_MF_MOVE_ALL when tierd holds CAP_SYS_NICE (mig_init()
 * asks the kernel), so those pages move like the others, in both
 * directions, as the kernel's own tiering (NUMA balancing's promotion,
 * reclaim's demotion) moves them.  A shared page is often in the plan
 * once per process that maps it: the first batch moves it, and a later
 * batch of another process finds it on its target already.  Before such
 * a batch (another process's batch to the same node moved pages earlier
 * in the plan) the migrator asks where its pages are, and a page that was
 * there already gets ACCT_STATUS_SHARED, so that it is counted once.
 */
#ifndef TIERD_SYS_MIGRATE_H
#define TIERD_SYS_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "account.h"
#include "batch.h"
#include "topo_read.h"

#ifndef MPOL_MF_PROMOTE
#define MPOL_MF_PROMOTE (1 << 8)	/* kernel-patches/: promotion semantics */
#endif

struct mig_ops {
	/*
	 * move_pages(2).  @nodes NULL queries where the pages are.  Returns
	 * 0 or the number of pages not moved (their status says why), or a
	 * negative errno when the whole call failed.
	 */
	int (*move_pages)(void *ctx, int pid, unsigned long count, void **addrs, const int *nodes,
			  int *status, int flags);
	uint64_t (*now_ns)(void *ctx);	/* CLOCK_MONOTONIC */
	/* MemFree of node @node, or a negative errno; NULL: never checked. */
	int (*node_free)(void *ctx, int node, uint64_t *ret_bytes);
	/*
	 * Where @count pages of @pid are (move_pages(2) with nodes NULL), 0
	 * or a negative errno.  NULL: the migrator does not look before a
	 * batch, and a shared page that an earlier batch moved through
	 * another process counts as moved by each.
	 */
	int (*query)(void *ctx, int pid, unsigned long count, void **addrs, int *status);
};

/* The real move_pages(2); its ctx is the root directory (a const char *,
 * NULL for "/") where /proc and /sys are read. */
extern const struct mig_ops mig_real_ops;

/* Addresses of one batch the migrator looks at before it moves them; a
 * larger batch is moved without looking (batch_pages is at most 65536). */
#define MIG_LOOK_MAX 65536

struct migrator {
	const struct mig_ops *ops;
	void *ctx;
	bool has_promote;	/* the kernel takes MPOL_MF_PROMOTE */
	bool has_move_all;	/* MPOL_MF_MOVE_ALL: tierd holds CAP_SYS_NICE */
	bool dry_run;
	uint64_t page_bytes;	/* of a base page: an intent's nr_pages counts them */
	/* mig_run_plan() starts no batch after this long (0: no limit). */
	uint64_t budget_ns;
	/* By node id: mig_run_plan() starts no batch that would leave that
	 * node less free memory than this (0: no floor). */
	uint64_t floor_bytes[TOPO_MAX_NODES];
	/* mig_run_plan()'s scratch, MIG_LOOK_MAX entries allocated by
	 * mig_init(): where each page of a batch is, from the look before the
	 * call (shared pages), then from the query after a plain call that
	 * ended early. */
	int *where;
};

/*
 * Set up and probe: move_pages(0, 0, NULL, NULL, NULL, MPOL_MF_PROMOTE) is 0
 * on a patched kernel and -EINVAL on a vanilla one.  Returns 0; the probe's
 * answer is in m->has_promote (a probe error other than -EINVAL is returned
 * as is, with has_promote false).  The same call with MPOL_MF_MOVE_ALL is
 * -EPERM without CAP_SYS_NICE: m->has_move_all says which.  @page_bytes:
 * the kernel's base page, what an intent's nr_pages counts.  -ENOMEM
 * without room for the scratch (nothing probed).  mig_fini() releases it.
 */
int mig_init(struct migrator *m, const struct mig_ops *ops, void *ctx, bool dry_run,
	     uint64_t page_bytes);
/* The scratch of a migrator mig_init() set up (or zeroed); again is a no-op. */
void mig_fini(struct migrator *m);

/* Where @count pages of @pid are: node ids or negative errnos in @status.
 * 0 or a negative errno for the whole call. */
int mig_query(struct migrator *m, int pid, size_t count, void **addrs, int *status);

struct mig_run_result {
	size_t calls;
	size_t looks;		/* node queries before a batch (shared pages) */
	size_t failed_calls;	/* whole call failed; its pages take that errno */
	size_t nomem_skipped_batches;	/* to a node in ENOMEM back-off */
	/* Reached their target, and would move in a dry run: what
	 * account_plan() found in the statuses (the caller fills these). */
	uint64_t moved_bytes;
	uint64_t would_pages;
	uint64_t elapsed_ns;	/* summed over calls */
	/* Of the calls that did not fail (not in a dry run): the shortest,
	 * the longest, and the first one's start to the last one's end,
	 * accounting between them included (tierd -v). */
	uint64_t min_call_ns, max_call_ns, span_ns;
	int first_error;	/* first whole-call errno (negative), 0 if none */
	size_t skipped_batches;	/* not started: budget_ns ran out */
	size_t room_skipped_batches;	/* not started: the node is at its floor */
};

/*
 * Carry out the batches of @pl in order, each one's outcome into
 * @calls[k] (nr_batches entries) and its pages' into the plan's status
 * array.  Once m->budget_ns has passed, start no more (their status
 * entries become -ECANCELED, their count is in @ret).  A batch whose
 * target node has, just before it would start, less free memory than
 * m->floor_bytes and the batch's bytes is not started either
 * (room_skipped_batches).  Nor is one to a node in -ENOMEM back-off: in
 * @nomem_nodes (bit i: node id i) at the start, or one that answered
 * -ENOMEM earlier in this plan, which would only fail again, each after
 * the kernel's direct reclaim.
 * Returns 0; per-call failures are in @calls, counted in @ret and the
 * first one kept there.
 */
int mig_run_plan(struct migrator *m, const struct batch_plan *pl, uint64_t nomem_nodes,
		 struct acct_call *calls, struct mig_run_result *ret);

#endif
