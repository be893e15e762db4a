// SPDX-License-Identifier: GPL-2.0-only
#include "test.h"
#include "watch.h"

#define MIB (1ull << 20)
#define MAXP 256

static const struct watch_params P = {
	.bound = 4, .max_reads = 3, .max_read_bytes = 1024 * MIB, .stay_bytes = 2 * MIB,
};

static struct watch_proc procs[MAXP];
static size_t scratch[MAXP], idx[MAXP];

/* @n processes, pids 100.., 1 MiB resident each, never read, none watched. */
static void setup(size_t n)
{
	for (size_t i = 0; i < n; i++)
		procs[i] = (struct watch_proc){ .pid = (pid_t)(100 + i), .rss_bytes = MIB };
}

static size_t nr_watched(size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += procs[i].watched;
	return k;
}

static void test_within_bound_all_watched_nothing_read(void)
{
	setup(4);
	CHECK_EQ_INT(watch_reads(&P, procs, 4, scratch, idx), 0);
	CHECK_EQ_INT(watch_choose(&P, procs, 4, scratch), 4);
	CHECK_EQ_INT(nr_watched(4), 4);
}

/* The case, small: the few with lower-tier memory have the highest
 * pids, and are read first and watched, not the lowest pids. */
static void test_largest_read_first_and_chosen_by_lower_bytes(void)
{
	setup(200);
	for (size_t i = 197; i < 200; i++)
		procs[i].rss_bytes = 64 * MIB;
	CHECK_EQ_INT(watch_reads(&P, procs, 200, scratch, idx), 3);
	CHECK_EQ_INT(idx[0], 197);
	CHECK_EQ_INT(idx[1], 198);
	CHECK_EQ_INT(idx[2], 199);
	for (size_t i = 197; i < 200; i++) {
		procs[i].lower_bytes = 60 * MIB;
		procs[i].read_ns = 1;
	}
	CHECK_EQ_INT(watch_choose(&P, procs, 200, scratch), 4);
	CHECK(procs[197].watched && procs[198].watched && procs[199].watched);
	/* The fourth: the lowest pid among equals. */
	CHECK(procs[0].watched);
	CHECK_EQ_INT(nr_watched(200), 4);
}

/* A process whose resident bytes cannot beat the cut is never read. */
static void test_small_ones_below_the_cut_not_read(void)
{
	setup(10);
	for (size_t i = 0; i < 4; i++) {
		procs[i].lower_bytes = procs[i].rss_bytes = 8 * MIB;
		procs[i].read_ns = 5;
	}
	watch_choose(&P, procs, 10, scratch);
	/* The cut is 8 + 2 MiB: only the watched four are read again. */
	CHECK_EQ_INT(watch_reads(&P, procs, 10, scratch, idx), 3);
	for (size_t i = 0; i < 3; i++)
		CHECK(idx[i] < 4);
	/* One grows past it: read first, being never read. */
	procs[7].rss_bytes = 11 * MIB;
	CHECK_EQ_INT(watch_reads(&P, procs, 10, scratch, idx), 3);
	CHECK_EQ_INT(idx[0], 7);
}

static void test_stalest_read_first_within_bytes(void)
{
	struct watch_params p = P;

	setup(6);
	for (size_t i = 0; i < 6; i++) {
		procs[i].rss_bytes = 100 * MIB;
		procs[i].read_ns = 10 + (6 - i);	/* 5 is the stalest */
	}
	CHECK_EQ_INT(watch_reads(&p, procs, 6, scratch, idx), 3);
	CHECK_EQ_INT(idx[0], 5);
	CHECK_EQ_INT(idx[1], 4);
	CHECK_EQ_INT(idx[2], 3);
	/* 250 MiB a scan: two of 100 MiB. */
	p.max_read_bytes = 250 * MIB;
	CHECK_EQ_INT(watch_reads(&p, procs, 6, scratch, idx), 2);
	/* One larger than the budget is still read, alone. */
	p.max_read_bytes = 50 * MIB;
	CHECK_EQ_INT(watch_reads(&p, procs, 6, scratch, idx), 1);
	CHECK_EQ_INT(idx[0], 5);
}

/* Re-chosen as lower-tier bytes change, with an edge for the watched. */
static void test_rechosen_with_stay_edge(void)
{
	setup(5);
	for (size_t i = 0; i < 5; i++) {
		procs[i].rss_bytes = 100 * MIB;
		procs[i].lower_bytes = (10 + i) * MIB;
		procs[i].read_ns = 1;
	}
	watch_choose(&P, procs, 5, scratch);
	CHECK(!procs[0].watched);
	/* 0 gains 1 MiB over 1 (11 vs 11): not enough to take its place. */
	procs[0].lower_bytes = 12 * MIB;
	watch_choose(&P, procs, 5, scratch);
	CHECK(!procs[0].watched && procs[1].watched);
	/* 0 now has more than 1's 11 + 2 MiB: it takes 1's place. */
	procs[0].lower_bytes = 14 * MIB;
	watch_choose(&P, procs, 5, scratch);
	CHECK(procs[0].watched && !procs[1].watched);
	CHECK_EQ_INT(nr_watched(5), 4);
}

int main(void)
{
	RUN(test_within_bound_all_watched_nothing_read);
	RUN(test_largest_read_first_and_chosen_by_lower_bytes);
	RUN(test_small_ones_below_the_cut_not_read);
	RUN(test_stalest_read_first_within_bytes);
	RUN(test_rechosen_with_stay_edge);
	return TEST_EXIT();
}
