/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The running kernel's page geometry: the base page (4, 16 or 64 KiB), the
 * span of one PMD (2 MiB, 32 MiB or 512 MiB: a page-table page of 8-byte
 * entries, base * base / 8 on x86-64 and arm64), which is the size of a PMD
 * THP, and tierd's range: the unit of the hotness table's range entries,
 * of the range memory and of a whole-range move.  The range is the PMD up
 * to 2 MiB: on 16 and 64 KiB-page arm64 it is the span of a contiguous-PTE
 * block (CONT_PTE_SIZE, 2 MiB with either granule), not the PMD's 32 or
 * 512 MiB, which would fold a few hot 2 MiB runs and the cold memory
 * around them into one unit.  Read once at start (sys/page_geom_read.h),
 * then handed to every stage that counts pages: nothing in tierd assumes
 * a page size of its own.
 */
#ifndef TIERD_CORE_PAGE_GEOM_H
#define TIERD_CORE_PAGE_GEOM_H

#include <stdbool.h>
#include <stdint.h>

struct page_geom {
	uint64_t base;		/* bytes of a base page */
	unsigned int shift;	/* log2(base) */
	uint64_t pmd;		/* bytes one PMD maps: a PMD THP */
	unsigned int pmd_shift;	/* log2(pmd) */
	uint64_t range;		/* tierd's range: the PMD, at most PAGE_GEOM_RANGE_MAX */
	unsigned int range_shift; /* log2(range) */
	bool thp;		/* the kernel has PMD THPs (hpage_pmd_size exists) */
};

#define PAGE_GEOM_RANGE_MAX (2ull << 20)

#define PAGE_GEOM_MIN_(a_, b_) ((a_) < (b_) ? (a_) : (b_))

/* A geometry for constant @base and @pmd bytes (tests, the simulator). */
#define PAGE_GEOM_INIT(base_, pmd_)                                                   \
	{ .base = (base_), .shift = (unsigned int)__builtin_ctzll(base_), .pmd = (pmd_), \
	  .pmd_shift = (unsigned int)__builtin_ctzll(pmd_),                             \
	  .range = PAGE_GEOM_MIN_(pmd_, PAGE_GEOM_RANGE_MAX),                           \
	  .range_shift = (unsigned int)__builtin_ctzll(PAGE_GEOM_MIN_(pmd_, PAGE_GEOM_RANGE_MAX)), \
	  .thp = true }

/*
 * Fill @ret from a base page of @base bytes and a PMD of @pmd bytes; @pmd 0
 * (no THP support) takes the span of a page-table page, base * base / 8,
 * with thp false.  -EINVAL unless both are powers of two, @base in
 * [4 KiB, 1 MiB] and @pmd in (@base, 1 TiB].
 */
int page_geom_set(struct page_geom *ret, uint64_t base, uint64_t pmd);

/* Base pages in a PMD: 512, 2048 or 8192. */
static inline uint64_t page_geom_pmd_pages(const struct page_geom *g)
{
	return 1ull << (g->pmd_shift - g->shift);
}

static inline uint64_t page_geom_pmd_base(const struct page_geom *g, uint64_t addr)
{
	return addr & ~(g->pmd - 1);
}

/* Base pages in a range: 512, 128 or 32. */
static inline uint64_t page_geom_range_pages(const struct page_geom *g)
{
	return 1ull << (g->range_shift - g->shift);
}

static inline uint64_t page_geom_range_base(const struct page_geom *g, uint64_t addr)
{
	return addr & ~(g->range - 1);
}

/*
 * Can a range be one PMD THP, moved by one address?  Only where the range
 * is the PMD.  Where it is less, a PMD THP spans several ranges and tierd
 * lists a range's pages: the kernel moves the THP for the first, and the
 * rest of that call's pages of it find the folio already taken (sys/thp.h).
 */
static inline bool page_geom_range_thp(const struct page_geom *g)
{
	return g->thp && g->range == g->pmd;
}

#endif
