/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Is a sampled address inside a PMD-sized transparent huge page?  The
 * samplers count pages and ranges; before a range that is a whole PMD (2 MiB
 * of 4 KiB pages; on 16 and 64 KiB pages the range is less than the PMD,
 * core/page_geom.h, and is never asked about) goes to the policy this says
 * whether it is one folio, so that it is moved with one address instead of
 * 512 (the kernel looks up every address it is given, and the tails would
 * find the folio the head already moved).  Read only, no
 * kernel state changes.  Two ways to know, tried in this order:
 *
 *  1. PAGEMAP_SCAN (Linux >= 6.7): an ioctl on /proc/PID/pagemap that
 *     reports which parts of a range are mapped by a huge PMD
 *     (PAGE_IS_HUGE).  It needs only the ptrace-read access that opening
 *     pagemap needs (CAP_SYS_PTRACE for other users' processes), so it
 *     works under the shipped unit, which has no CAP_SYS_ADMIN.
 *  2. PFNs: /proc/PID/pagemap's PFN of the range's first and last page and
 *     /proc/kpageflags.  The kernel zeroes pagemap's PFNs without
 *     CAP_SYS_ADMIN, so this serves older kernels run as full root.  A
 *     range of N base pages counts as one PMD folio when its first page is a
 *     THP head whose PFN is N-aligned and its last page is a THP tail at
 *     PFN + N - 1
 *     (kpageflags marks smaller mTHPs as THP too; they fail that test).
 *
 * With neither (an older kernel without CAP_SYS_ADMIN), thp_open() fails
 * with the reason in thp_lookup.why, and callers treat every range as its
 * base pages.
 */
#ifndef TIERD_SYS_THP_H
#define TIERD_SYS_THP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "page_geom.h"

#define THP_CACHE 1024
#define THP_REGIONS 4	/* PAGEMAP_SCAN output regions a probe reads */

enum thp_method {
	THP_NONE,
	THP_SCAN,	/* PAGEMAP_SCAN's PAGE_IS_HUGE */
	THP_PFN,	/* pagemap PFNs and kpageflags */
};

/* One region PAGEMAP_SCAN reports: [start, end), huge (PAGE_IS_HUGE). */
struct thp_region {
	uint64_t start, end;
	bool huge;
};

/* The kernel-facing calls, for tests to replace. */
struct thp_ops {
	/*
	 * PAGEMAP_SCAN on the pagemap @fd for the present, PMD-mapped parts
	 * of [start, end): at most @n regions into @vec.  Their number, or
	 * -errno (-ENOTTY or -EINVAL: a kernel without PAGEMAP_SCAN).
	 */
	int (*scan)(void *ctx, int fd, uint64_t start, uint64_t end, struct thp_region *vec,
		    size_t n);
	/* thp_pfns_visible() */
	int (*pfns_visible)(void *ctx, const char *proc_root, unsigned int page_shift);
};

extern const struct thp_ops thp_real_ops;

struct thp_lookup {
	struct page_geom geom;	/* the kernel's base page and PMD */
	char proc_root[128];
	const struct thp_ops *ops;
	void *ctx;
	enum thp_method method;
	char why[192];		/* thp_open()'s failure, for the log */
	int kpageflags_fd;	/* THP_PFN */
	pid_t pid;		/* whose pagemap is open */
	int pagemap_fd;
	uint64_t probes;	/* PAGEMAP_SCAN or pagemap/kpageflags lookups made */
	struct {
		pid_t pid;
		uint64_t base;
		bool huge;
	} cache[THP_CACHE];	/* answers of this drain */
};

/*
 * Pick the method (PAGEMAP_SCAN when @proc_root/self/pagemap takes it, else
 * PFNs when they are visible and @proc_root/kpageflags opens): 0, or
 * -errno with l->method THP_NONE and l->why saying why neither works.
 * A kernel without PMD THPs (@g->thp false) has none to look up: -ENOTSUP.
 */
int thp_open(struct thp_lookup *l, const char *proc_root, const struct page_geom *g);
int thp_open_ops(struct thp_lookup *l, const char *proc_root, const struct page_geom *g,
		 const struct thp_ops *ops, void *ctx);
void thp_close(struct thp_lookup *l);

/* "PAGEMAP_SCAN", "pagemap PFNs", or "none". */
const char *thp_method_name(enum thp_method m);

/*
 * Whether pagemap shows this process PFNs: the kernel zeroes them without
 * CAP_SYS_ADMIN, and then no range can be recognised by its PFNs.  1, 0,
 * -errno.  @page_shift: log2 of the kernel's base page.
 */
int thp_pfns_visible(const char *proc_root, unsigned int page_shift);

/* Forget the cached answers (once per drain: folios split and collapse). */
void thp_reset(struct thp_lookup *l);

/* 1 when @addr of @pid lies in a PMD-mapped THP, 0 when not, -errno on error. */
int thp_is_huge(struct thp_lookup *l, pid_t pid, uint64_t addr);

#endif
