// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "page_geom.h"

#define BASE_MIN (4ull << 10)
#define BASE_MAX (1ull << 20)
#define PMD_MAX (1ull << 40)

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int page_geom_set(struct page_geom *ret, uint64_t base, uint64_t pmd)
{
	unsigned int shift;
	bool thp = pmd != 0;

	if (!pow2(base) || base < BASE_MIN || base > BASE_MAX)
		return -EINVAL;
	shift = (unsigned int)__builtin_ctzll(base);
	if (!pmd)
		pmd = base << (shift - 3);
	if (!pow2(pmd) || pmd <= base || pmd > PMD_MAX)
		return -EINVAL;
	*ret = (struct page_geom){ .base = base, .shift = shift, .pmd = pmd,
				   .pmd_shift = (unsigned int)__builtin_ctzll(pmd), .thp = thp };
	ret->range = pmd < PAGE_GEOM_RANGE_MAX ? pmd : PAGE_GEOM_RANGE_MAX;
	ret->range_shift = (unsigned int)__builtin_ctzll(ret->range);
	return 0;
}
