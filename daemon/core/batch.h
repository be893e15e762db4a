/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The batcher: this tick's intents cut into move_pages(2) calls.
 *
 * One call per (direction, pid, target node), addresses sorted ascending,
 * one address per THP (the kernel walks every address it is given, so the
 * 511 tail addresses would be 511 wasted lookups) and one per page of a
 * range of base pages (POLICY_F_PAGES), at most batch_pages base pages per
 * call, and at most tick_max_pages / tick_max_bytes per tick.
 * Demotion batches come before promotion batches so that the room they
 * make exists before the promotions that may need it.
 *
 * The arrays in struct batch_plan are laid out for move_pages: batch k is
 * addrs[first .. first + count), with nodes[] and status[] beside it.  The
 * batcher owns them; they stay valid until the next batch_build().
 */
#ifndef TIERD_CORE_BATCH_H
#define TIERD_CORE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#define BATCH_MIN_DEFAULT_PAGES 1024

struct batch_params {
	uint32_t batch_pages;	/* most base pages per call, >= 1 */
	uint64_t tick_max_pages;	/* 0 = no limit */
	uint64_t tick_max_bytes;	/* 0 = no limit */
	uint32_t page_size;	/* bytes of a base page */
};

/*
 * Defaults: batch_pages = the larger of 1024 and @kernel_batch_pages (the
 * patched kernel's vm.migrate_batch_pages; 0 when absent), so every call is
 * large enough for the kernel's batched copy (both count base pages, of
 * @g's size); no per-tick limit.
 */
void batch_params_default(struct batch_params *p, uint32_t kernel_batch_pages,
			  const struct page_geom *g);

struct batch {
	int pid;
	int node;		/* target node id */
	bool promote;		/* pass MPOL_MF_PROMOTE where the kernel has it */
	size_t first;		/* index into the plan's arrays */
	size_t count;		/* addresses */
	uint64_t nr_pages;	/* base pages */
};

struct batch_plan {
	struct batch *batches;
	size_t nr_batches;
	void **addrs;
	int *nodes;		/* target node per address, for move_pages */
	int *status;		/* move_pages writes here */
	uint32_t *intent;	/* the intent index behind each address */
	size_t nr_entries;
	uint64_t pages;		/* base pages planned */
	uint64_t bytes;
	uint64_t deferred;	/* intents left for a later tick by the budget */
	uint64_t duplicates;	/* dropped: same page twice, or inside a listed THP */
};

struct batcher;

/*
 * The intent behind plan entry @e, as that entry alone: for a range of base
 * pages (POLICY_F_PAGES), which the plan lists page by page, the entry's own
 * page (one page, no flag: what account counts, and what it retries when
 * that page was busy); else the intent as it is.
 */
static inline struct policy_intent batch_entry_intent(const struct batch_plan *pl, size_t e,
						      const struct policy_intent *intents)
{
	struct policy_intent it = intents[pl->intent[e]];

	if (it.flags & POLICY_F_PAGES) {
		it.addr = (uint64_t)(uintptr_t)pl->addrs[e];
		it.nr_pages = 1;
		it.flags = 0;
	}
	return it;
}

/* For at most @max_intents plan entries (addresses) a tick.  0, -EINVAL
 * (batch_pages or page_size 0), -ENOMEM. */
int batch_new(const struct batch_params *params, size_t max_intents, struct batcher **ret);
void batch_free(struct batcher *b);

/*
 * Cut @intents (in priority order, as policy_run writes them) into batches.
 * Intents beyond the tick budget, or whose addresses the plan has no room
 * for, are skipped (counted in deferred); a later smaller one that still
 * fits is taken.  Returns 0 and the plan through
 * @ret_plan (pointing into the batcher), or -EINVAL when @n exceeds
 * max_intents.
 */
int batch_build(struct batcher *b, const struct policy_intent *intents, size_t n,
		const struct batch_plan **ret_plan);

#endif
