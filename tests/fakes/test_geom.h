/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The page geometry of tests that are not about page sizes: an x86-64
 * kernel's 4 KiB base pages and 2 MiB PMDs, named once.  The pipeline's
 * page-size tests (test_pipeline_geom.c) run 16 and 64 KiB too.
 */
#ifndef TIERD_TEST_GEOM_H
#define TIERD_TEST_GEOM_H

#include "page_geom.h"

#define TEST_PAGE_SHIFT 12
#define TEST_PAGE_SIZE (1ull << TEST_PAGE_SHIFT)
#define TEST_HUGE_SHIFT 21
#define TEST_HUGE_SIZE (1ull << TEST_HUGE_SHIFT)
#define TEST_GEOM_INIT PAGE_GEOM_INIT(TEST_PAGE_SIZE, TEST_HUGE_SIZE)

static const struct page_geom test_geom = TEST_GEOM_INIT;

#endif
