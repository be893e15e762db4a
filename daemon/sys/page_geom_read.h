/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The running kernel's page geometry (core/page_geom.h): the base page from
 * sysconf(_SC_PAGESIZE), the PMD size from
 * @root/sys/kernel/mm/transparent_hugepage/hpage_pmd_size (absent: a kernel
 * without THP).
 */
#ifndef TIERD_SYS_PAGE_GEOM_READ_H
#define TIERD_SYS_PAGE_GEOM_READ_H

#include "page_geom.h"

#define PAGE_GEOM_PMD_PATH "sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

/* What stands for sysconf(); tests and tierd-sim give their own. */
struct page_geom_ops {
	long (*page_size)(void *ctx);	/* bytes of a base page: sysconf(_SC_PAGESIZE) */
};

extern const struct page_geom_ops page_geom_real_ops;

/*
 * Read the geometry of the kernel under @root, the base page from @ops
 * (NULL: page_geom_real_ops).  0, -EINVAL when the values make no geometry
 * (core/page_geom.h), or the error reading hpage_pmd_size.
 */
int page_geom_read(const char *root, const struct page_geom_ops *ops, void *ctx,
		   struct page_geom *ret);

#endif
