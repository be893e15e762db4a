// SPDX-License-Identifier: GPL-2.0-only
/* The batcher: grouping, order, THP addresses, batch size, tick budget. */
#include <errno.h>

#include "batch.h"
#include "test.h"
#include "test_geom.h"

static struct policy_intent in[64];
static size_t nr;

static void add(int pid, uint64_t addr, uint32_t nr_pages, int to, enum policy_kind kind)
{
	struct policy_intent *it = &in[nr];

	memset(it, 0, sizeof(*it));
	it->pid = pid;
	it->addr = addr;
	it->nr_pages = nr_pages;
	it->from_node = 1;
	it->to_node = to;
	it->cgroup = -1;
	it->page = (uint32_t)nr;
	it->kind = kind;
	nr++;
}

#define ADDR(pl, e) ((uint64_t)(uintptr_t)(pl)->addrs[e])

static void test_defaults(void)
{
	struct batch_params bp;

	batch_params_default(&bp, 0, &test_geom);
	CHECK_EQ_INT(bp.batch_pages, 1024);
	batch_params_default(&bp, 512, &test_geom);
	CHECK_EQ_INT(bp.batch_pages, 1024);
	batch_params_default(&bp, 4096, &test_geom);
	CHECK_EQ_INT(bp.batch_pages, 4096);
	CHECK_EQ_INT(bp.page_size, 4096);
}

/* A batcher of the default parameters for 64 intents, and no intents. */
static struct batcher *fresh_batcher(void)
{
	struct batch_params bp;
	struct batcher *b = NULL;

	batch_params_default(&bp, 0, &test_geom);
	CHECK_EQ_INT(batch_new(&bp, 64, &b), 0);
	nr = 0;
	return b;
}

static void test_group_sort_dedup(void)
{
	struct batcher *b = fresh_batcher();
	const struct batch_plan *pl;

	add(5, 0x3000, 1, 0, POLICY_PROMOTE);
	add(5, 0x1000, 1, 0, POLICY_PROMOTE);
	add(4, 0x5000, 1, 0, POLICY_PROMOTE);
	add(5, 0x201000, 1, 0, POLICY_PROMOTE);	/* inside the THP below */
	add(5, 0x200000, 512, 0, POLICY_PROMOTE);
	add(5, 0x2000, 1, 0, POLICY_PROMOTE);
	add(5, 0x1000, 1, 0, POLICY_PROMOTE);	/* twice */
	add(5, 0x7000, 1, 2, POLICY_PROMOTE);
	add(5, 0x9000, 1, 1, POLICY_DEMOTE);
	add(5, 0x400000, 1, 0, POLICY_PROMOTE);	/* past the THP */

	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->nr_batches, 4);
	CHECK_EQ_INT(pl->duplicates, 2);
	CHECK_EQ_INT(pl->nr_entries, 8);
	CHECK_EQ_U64(pl->pages, 519);
	CHECK_EQ_U64(pl->bytes, 519 * 4096);
	/* Demotions first. */
	CHECK_EQ_INT(pl->batches[0].pid, 5);
	CHECK_EQ_INT(pl->batches[0].node, 1);
	CHECK(!pl->batches[0].promote);
	CHECK_EQ_INT(pl->batches[0].count, 1);
	CHECK_EQ_U64(ADDR(pl, 0), 0x9000);
	CHECK_EQ_INT(pl->batches[1].pid, 4);
	CHECK(pl->batches[1].promote);
	CHECK_EQ_INT(pl->batches[2].pid, 5);
	CHECK_EQ_INT(pl->batches[2].node, 0);
	CHECK_EQ_INT(pl->batches[2].first, 2);
	CHECK_EQ_INT(pl->batches[2].count, 5);
	CHECK_EQ_U64(pl->batches[2].nr_pages, 516);
	CHECK_EQ_U64(ADDR(pl, 2), 0x1000);
	CHECK_EQ_U64(ADDR(pl, 3), 0x2000);
	CHECK_EQ_U64(ADDR(pl, 4), 0x3000);
	CHECK_EQ_U64(ADDR(pl, 5), 0x200000);
	CHECK_EQ_U64(ADDR(pl, 6), 0x400000);
	CHECK_EQ_INT(pl->intent[5], 4);
	CHECK_EQ_INT(pl->nodes[6], 0);
	CHECK_EQ_INT(pl->batches[3].node, 2);
	CHECK_EQ_U64(ADDR(pl, 7), 0x7000);
	CHECK_EQ_INT(batch_build(b, in, 65, &pl), -EINVAL);
	batch_free(b);
}

/* The fill's promotions after the hot ones, in calls of their own. */
static void test_fill_last(void)
{
	struct batcher *b = fresh_batcher();
	const struct batch_plan *pl;

	add(5, 0x1000, 1, 0, POLICY_PROMOTE);
	in[0].reason = POLICY_R_FILL;
	add(5, 0x3000, 1, 0, POLICY_PROMOTE);
	add(5, 0x2000, 1, 0, POLICY_PROMOTE);
	in[2].reason = POLICY_R_FILL;
	add(5, 0x5000, 1, 0, POLICY_PROMOTE);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->nr_batches, 2);
	CHECK_EQ_INT(pl->batches[0].count, 2);
	CHECK_EQ_U64(ADDR(pl, 0), 0x3000);
	CHECK_EQ_U64(ADDR(pl, 1), 0x5000);
	CHECK_EQ_INT(pl->batches[1].count, 2);
	CHECK_EQ_U64(ADDR(pl, 2), 0x1000);
	CHECK_EQ_U64(ADDR(pl, 3), 0x2000);
	batch_free(b);
}

static void test_batch_size_and_budget(void)
{
	struct batcher *b = fresh_batcher();
	const struct batch_plan *pl;
	struct batch_params bp;

	for (int i = 0; i < 5; i++)
		add(9, 0x40000000 + (uint64_t)i * 0x200000, 512, 0, POLICY_PROMOTE);
	for (int i = 0; i < 3; i++)
		add(9, 0x1000 + (uint64_t)i * 0x1000, 1, 0, POLICY_PROMOTE);
	/* 1024 pages a call: 3 base pages + 2 THPs would be 1027. */
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->nr_batches, 3);
	CHECK_EQ_INT(pl->batches[0].count, 4);
	CHECK_EQ_U64(pl->batches[0].nr_pages, 515);
	CHECK_EQ_INT(pl->batches[1].count, 2);
	CHECK_EQ_U64(pl->batches[1].nr_pages, 1024);
	CHECK_EQ_INT(pl->batches[2].count, 2);
	batch_free(b);

	/* The kernel's own bound: one THP per call. */
	batch_params_default(&bp, 0, &test_geom);
	bp.batch_pages = 512;
	CHECK_EQ_INT(batch_new(&bp, 64, &b), 0);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->nr_batches, 6);
	batch_free(b);

	/* 1200 pages a tick: two THPs, the third is deferred, base pages fit. */
	batch_params_default(&bp, 0, &test_geom);
	bp.tick_max_pages = 1200;
	CHECK_EQ_INT(batch_new(&bp, 64, &b), 0);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_U64(pl->pages, 1027);
	CHECK_EQ_INT(pl->deferred, 3);
	batch_free(b);

	/* A byte budget of 3 MiB: one THP and the base pages. */
	batch_params_default(&bp, 0, &test_geom);
	bp.tick_max_bytes = 3 << 20;
	CHECK_EQ_INT(batch_new(&bp, 64, &b), 0);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_U64(pl->pages, 515);
	CHECK_EQ_INT(pl->deferred, 4);
	batch_free(b);

	bp.batch_pages = 0;
	CHECK_EQ_INT(batch_new(&bp, 64, &b), -EINVAL);
	batch_free(NULL);
}

/*
 * A range of base pages (POLICY_F_PAGES) is listed page by page, all for
 * its one intent; a base page inside it is a duplicate, as inside a THP;
 * the calls' size counts its 512 pages; a plan with no room left for its
 * addresses defers it.
 */
static void test_ranges(void)
{
	struct batch_params bp;
	struct batcher *b;
	const struct batch_plan *pl;
	struct policy_intent one;

	batch_params_default(&bp, 0, &test_geom);
	CHECK_EQ_INT(batch_new(&bp, 1024, &b), 0);
	nr = 0;
	add(5, 0x40200000, 512, 0, POLICY_PROMOTE);	/* a THP */
	add(5, 0x40000000, 512, 0, POLICY_PROMOTE);
	in[1].flags = POLICY_F_PAGES;
	add(5, 0x40003000, 1, 0, POLICY_PROMOTE);	/* inside the range */
	add(5, 0x1000, 1, 0, POLICY_PROMOTE);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->nr_entries, 1 + 512 + 1);
	CHECK_EQ_INT(pl->duplicates, 1);
	CHECK_EQ_U64(pl->pages, 1025);
	CHECK_EQ_U64(ADDR(pl, 0), 0x1000);
	for (size_t e = 1; e <= 512; e++) {
		CHECK_EQ_U64(ADDR(pl, e), 0x40000000 + (e - 1) * 4096);
		CHECK_EQ_INT(pl->intent[e], 1);
	}
	CHECK_EQ_U64(ADDR(pl, 513), 0x40200000);
	/* 1024 pages a call: the page and the range, then the THP. */
	CHECK_EQ_INT(pl->nr_batches, 2);
	CHECK_EQ_INT(pl->batches[0].count, 513);
	CHECK_EQ_U64(pl->batches[0].nr_pages, 513);
	CHECK_EQ_INT(pl->batches[1].count, 1);
	CHECK_EQ_U64(pl->batches[1].nr_pages, 512);
	/* One entry of the range stands for its own page only. */
	one = batch_entry_intent(pl, 6, in);
	CHECK_EQ_U64(one.addr, 0x40005000);
	CHECK_EQ_INT(one.nr_pages, 1);
	CHECK_EQ_INT(one.flags, 0);
	one = batch_entry_intent(pl, 513, in);
	CHECK_EQ_U64(one.addr, 0x40200000);
	CHECK_EQ_INT(one.nr_pages, 512);
	batch_free(b);

	/* Room for 600 addresses: the second range waits, the page fits. */
	CHECK_EQ_INT(batch_new(&bp, 600, &b), 0);
	nr = 0;
	add(5, 0x40000000, 512, 0, POLICY_PROMOTE);
	in[0].flags = POLICY_F_PAGES;
	add(5, 0x40400000, 512, 0, POLICY_PROMOTE);
	in[1].flags = POLICY_F_PAGES;
	add(5, 0x1000, 1, 0, POLICY_PROMOTE);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->deferred, 1);
	CHECK_EQ_INT(pl->nr_entries, 513);
	CHECK_EQ_U64(pl->pages, 513);

	/* Part of a range (a cap left room for its first 256 pages): those
	 * are listed, and cover a page inside them, not one past them. */
	nr = 0;
	add(5, 0x40000000, 256, 0, POLICY_PROMOTE);
	in[0].flags = POLICY_F_PAGES;
	add(5, 0x400ff000, 1, 0, POLICY_PROMOTE);
	add(5, 0x40100000, 1, 0, POLICY_PROMOTE);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->duplicates, 1);
	CHECK_EQ_INT(pl->nr_entries, 257);
	CHECK_EQ_U64(pl->pages, 257);
	CHECK_EQ_U64(ADDR(pl, 255), 0x400ff000);
	CHECK_EQ_U64(ADDR(pl, 256), 0x40100000);
	CHECK_EQ_INT(pl->intent[256], 2);
	batch_free(b);
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_group_sort_dedup);
	RUN(test_fill_last);
	RUN(test_batch_size_and_budget);
	RUN(test_ranges);
	return TEST_EXIT();
}
