/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The running kernel's page geometry: the base page (4, 16 or 64 KiB) and
 * the span of one PMD (2 MiB, 32 MiB or 512 MiB: a page-table page of
 * 8-byte entries, base * base / 8 on x86-64 and arm64), which is the size
 * of a PMD THP and of the hotness table's ranges.  Read once at start
 * (sys/page_geom_read.h), then handed to every stage that counts pages:
 * nothing in tierd assumes a page size of its own.
 */
#ifndef TIERD_CORE_PAGE_GEOM_H
#define TIERD_CORE_PAGE_GEOM_H

#include <stdbool.h>
#include <stdint.h>

struct page_geom {
	uint64_t base;		/* bytes of a base page */
	unsigned int shift;	/* log2(base) */
	uint64_t pmd;		/* bytes one PMD maps: a PMD THP, a hotness range */
	unsigned int pmd_shift;	/* log2(pmd) */
	bool thp;		/* the kernel has PMD THPs (hpage_pmd_size exists) */
};

/* A geometry for constant @base and @pmd bytes (tests, the simulator). */
#define PAGE_GEOM_INIT(base_, pmd_)                                                   \
	{ .base = (base_), .shift = (unsigned int)__builtin_ctzll(base_), .pmd = (pmd_), \
	  .pmd_shift = (unsigned int)__builtin_ctzll(pmd_), .thp = true }

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

#endif
