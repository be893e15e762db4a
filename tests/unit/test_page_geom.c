// SPDX-License-Identifier: GPL-2.0-only
/*
 * The page geometry: core/page_geom's checks and arithmetic, and
 * sys/page_geom_read on fixture trees with and without hpage_pmd_size,
 * the base page standing in for sysconf.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fmt.h"
#include "fs_tree.h"
#include "numa_maps.h"
#include "page_geom_read.h"
#include "test.h"

static long fake_base;

static long fake_page_size(void *ctx)
{
	return fake_base;
}

static const struct page_geom_ops fake_ops = { .page_size = fake_page_size };

static void test_set(void)
{
	struct page_geom g;
	char buf[16];

	CHECK_EQ_INT(page_geom_set(&g, 64 << 10, 512 << 20), 0);
	CHECK_EQ_INT(g.shift, 16);
	CHECK_EQ_INT(g.pmd_shift, 29);
	CHECK(g.thp);
	CHECK_EQ_U64(page_geom_pmd_pages(&g), 8192);
	CHECK_EQ_U64(page_geom_pmd_base(&g, (3ull << 29) + 12345), 3ull << 29);
	/* The range is 2 MiB, 32 of its pages, and not one THP. */
	CHECK_EQ_U64(g.range, 2 << 20);
	CHECK_EQ_INT(g.range_shift, 21);
	CHECK_EQ_U64(page_geom_range_pages(&g), 32);
	CHECK_EQ_U64(page_geom_range_base(&g, (3ull << 29) + (5 << 20) + 12345),
		     (3ull << 29) + (4 << 20));
	CHECK(!page_geom_range_thp(&g));
	/* 4 KiB pages: the range is the PMD, and may be one THP. */
	CHECK_EQ_INT(page_geom_set(&g, 4096, 2 << 20), 0);
	CHECK_EQ_U64(g.range, g.pmd);
	CHECK_EQ_U64(page_geom_range_pages(&g), 512);
	CHECK(page_geom_range_thp(&g));
	{
		const struct page_geom c = PAGE_GEOM_INIT(16 << 10, 32 << 20);

		CHECK_EQ_U64(c.range, 2 << 20);
		CHECK_EQ_INT(c.range_shift, 21);
		CHECK(!page_geom_range_thp(&c));
	}
	/* No THP: the span of a page-table page. */
	CHECK_EQ_INT(page_geom_set(&g, 16 << 10, 0), 0);
	CHECK_EQ_U64(g.pmd, 32 << 20);
	CHECK_EQ_U64(g.range, 2 << 20);
	CHECK(!g.thp);
	CHECK(!page_geom_range_thp(&g));
	CHECK_EQ_INT(page_geom_set(&g, 4096, 0), 0);
	CHECK_EQ_U64(g.pmd, 2 << 20);
	CHECK_EQ_INT(page_geom_set(&g, 3000, 2 << 20), -EINVAL);
	CHECK_EQ_INT(page_geom_set(&g, 2048, 1 << 20), -EINVAL);
	CHECK_EQ_INT(page_geom_set(&g, 4096, 4096), -EINVAL);
	CHECK_EQ_INT(page_geom_set(&g, 4096, 3 << 20), -EINVAL);
	/* In words, as the log and tierctl status say them. */
	CHECK_EQ_STR(fmt_bytes(buf, sizeof(buf), 64 << 10), "64.0 KiB");
	CHECK_EQ_STR(fmt_bytes(buf, sizeof(buf), 512 << 20), "512.0 MiB");
	CHECK_EQ_STR(fmt_bytes(buf, sizeof(buf), 512), "512 B");
	CHECK_EQ_STR(fmt_bytes(buf, sizeof(buf), 3 << 29), "1.5 GiB");
}

static void test_read(void)
{
	char root[] = "/tmp/test_page_geom.XXXXXX";
	struct page_geom g;

	CHECK(mkdtemp(root) != NULL);
	fake_base = 64 << 10;
	/* No hpage_pmd_size: a kernel without THP. */
	CHECK_EQ_INT(page_geom_read(root, &fake_ops, NULL, &g), 0);
	CHECK_EQ_U64(g.base, 64 << 10);
	CHECK_EQ_U64(g.pmd, 512 << 20);
	CHECK(!g.thp);
	CHECK_EQ_INT(fs_tree_put(root, PAGE_GEOM_PMD_PATH, "536870912\n"), 0);
	CHECK_EQ_INT(page_geom_read(root, &fake_ops, NULL, &g), 0);
	CHECK(g.thp);
	CHECK_EQ_U64(g.pmd, 512 << 20);
	fake_base = 16 << 10;
	CHECK_EQ_INT(fs_tree_put(root, PAGE_GEOM_PMD_PATH, "33554432\n"), 0);
	CHECK_EQ_INT(page_geom_read(root, &fake_ops, NULL, &g), 0);
	CHECK_EQ_U64(g.base, 16 << 10);
	CHECK_EQ_U64(g.pmd, 32 << 20);
	CHECK_EQ_INT(fs_tree_put(root, PAGE_GEOM_PMD_PATH, "0\n"), 0);
	CHECK_EQ_INT(page_geom_read(root, &fake_ops, NULL, &g), -EINVAL);
	CHECK_EQ_INT(fs_tree_put(root, PAGE_GEOM_PMD_PATH, "huge\n"), 0);
	CHECK(page_geom_read(root, &fake_ops, NULL, &g) < 0);
	fake_base = -1;
	CHECK_EQ_INT(page_geom_read(root, &fake_ops, NULL, &g), -EINVAL);
	/* This machine, through sysconf. */
	CHECK_EQ_INT(page_geom_read("/nonexistent", NULL, NULL, &g), 0);
	CHECK_EQ_U64(g.base, (uint64_t)sysconf(_SC_PAGESIZE));
	fs_tree_remove(root);
}

/* numa_maps counts each mapping's pages at its own kernelpagesize_kB. */
static void test_numa_maps_page_sizes(void)
{
	char root[] = "/tmp/test_page_geom.XXXXXX";
	uint64_t b = 0;

	CHECK(mkdtemp(root) != NULL);
	CHECK_EQ_INT(fs_tree_put(root, "77/numa_maps",
				 "400000 default anon=3 N1=3 kernelpagesize_kB=64\n"
				 "40000000 default anon=1 N1=1 kernelpagesize_kB=524288\n"
				 "7f0000000000 default\n"), 0);
	CHECK_EQ_INT(numa_maps_node_bytes(root, 77, 1, &b), 0);
	CHECK_EQ_U64(b, (3ull << 16) + (512ull << 20));
	/* Pages without their size: no guess. */
	CHECK_EQ_INT(fs_tree_put(root, "77/numa_maps", "400000 default anon=3 N1=3\n"), 0);
	CHECK_EQ_INT(numa_maps_node_bytes(root, 77, 1, &b), -EINVAL);
	fs_tree_remove(root);
}

int main(void)
{
	RUN(test_set);
	RUN(test_read);
	RUN(test_numa_maps_page_sizes);
	return TEST_EXIT();
}
