// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <unistd.h>

#include "fsutil.h"
#include "page_geom_read.h"

static long real_page_size(void *ctx)
{
	return sysconf(_SC_PAGESIZE);
}

const struct page_geom_ops page_geom_real_ops = {
	.page_size = real_page_size,
};

int page_geom_read(const char *root, const struct page_geom_ops *ops, void *ctx,
		   struct page_geom *ret)
{
	long base = (ops ? ops : &page_geom_real_ops)->page_size(ctx);
	uint64_t pmd = 0;
	int r;

	if (base <= 0)
		return -EINVAL;
	r = fs_read_u64(root, PAGE_GEOM_PMD_PATH, &pmd);
	if (r == -ENOENT)
		pmd = 0;
	else if (r < 0)
		return r;
	else if (!pmd)
		return -EINVAL;
	return page_geom_set(ret, (uint64_t)base, pmd);
}
