// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "hot_table.h"
#include "test.h"
#include "test_geom.h"

#define SEC 1000000000ull
#define PG TEST_PAGE_SIZE
#define HUGE TEST_HUGE_SIZE

static uint64_t mem[1 << 16];

static void mk(struct hot_table *t, uint64_t half_life_ns, uint32_t max)
{
	struct hot_params p = { .half_life_ns = half_life_ns, .max_entries = max, .geom = TEST_GEOM_INIT };
	int r = hot_init(t, &p, mem, sizeof(mem), 0);

	CHECK_EQ_INT(r, 0);
}

/* Tolerance for sums of powers of two computed through hot_exp2(). */
static int near(double a, double b)
{
	double d = a > b ? a - b : b - a;

	return d <= 1e-9 * (b > 1.0 ? b : 1.0);
}

/* The same for heats the table stored: a float rounds each sum to 24 bits
 * (2^-24 relative), so k additions are off by at most k * 2^-24. */
static int near_stored(double a, double b, int k)
{
	double d = a > b ? a - b : b - a;

	return d <= k * 0x1p-24 * (b > 1.0 ? b : 1.0);
}

static void test_exp2(void)
{
	double h = hot_exp2(0.5);

	CHECK(hot_exp2(0.0) == 1.0);
	CHECK(hot_exp2(10.0) == 1024.0);
	CHECK(hot_exp2(-3.0) == 0.125);
	CHECK(near(h * h, 2.0));
	CHECK(near(hot_exp2(-0.25) * hot_exp2(-0.75), 0.5));
	CHECK(hot_exp2(-1060.0) > 0.0);	/* subnormal, not zero */
	CHECK(hot_exp2(-2000.0) == 0.0);
}

static void test_decay_exact(void)
{
	struct hot_table t;

	mk(&t, SEC, 16);
	CHECK_EQ_INT(hot_record(&t, 7, 0x1000, PG, 8.0, 0), 1);
	CHECK(hot_heat(&t, 7, 0x1000, 0) == 8.0);
	CHECK(hot_heat(&t, 7, 0x1fff, SEC) == 4.0);	/* same page */
	CHECK(hot_heat(&t, 7, 0x1000, 3 * SEC) == 1.0);
	/* A new sample adds to the decayed heat. */
	hot_record(&t, 7, 0x1000, PG, 4.0, SEC);
	CHECK(hot_heat(&t, 7, 0x1000, SEC) == 8.0);
	CHECK(hot_heat(&t, 7, 0x1000, 2 * SEC) == 4.0);
	/* Other pids and pages are separate. */
	CHECK(hot_heat(&t, 8, 0x1000, SEC) == 0.0);
	CHECK(hot_heat(&t, 7, 0x2000, SEC) == 0.0);
	/* Half a half-life: 1/sqrt(2). */
	CHECK(near(hot_heat(&t, 7, 0x1000, SEC + SEC / 2), 8.0 / hot_exp2(0.5)));
}

/* A new half-life keeps each entry's heat and decays it at the new rate
 * from then on; samples after it add at the new rate too. */
static void test_set_half_life(void)
{
	struct hot_table t;

	mk(&t, SEC, 16);
	hot_record(&t, 7, 0x1000, PG, 8.0, 0);
	hot_record(&t, 7, 0x2000, PG, 2.0, 0);
	hot_set_half_life(&t, 4 * SEC, 2 * SEC);
	CHECK(near(hot_heat(&t, 7, 0x1000, 2 * SEC), 2.0));
	CHECK(near(hot_heat(&t, 7, 0x2000, 2 * SEC), 0.5));
	CHECK(near(hot_heat(&t, 7, 0x1000, 6 * SEC), 1.0));
	hot_record(&t, 7, 0x1000, PG, 3.0, 6 * SEC);
	CHECK(near(hot_heat(&t, 7, 0x1000, 14 * SEC), 1.0));
	/* Back to a second: 1.0 halves each second again. */
	hot_set_half_life(&t, SEC, 14 * SEC);
	CHECK(near(hot_heat(&t, 7, 0x1000, 16 * SEC), 0.25));
}

/* Samples are fresh onto no entry, or onto one whose heat has decayed
 * under HOT_FRESH_HEAT, as many as the record's weight; a range that
 * absorbs heated pages is not. */
static void test_fresh(void)
{
	struct hot_table t;

	mk(&t, SEC, 64);
	hot_record(&t, 7, 0x1000, PG, 1.0, 0);			/* new: fresh */
	hot_record(&t, 7, 0x1000, PG, 1.0, 0);			/* heat 1 */
	CHECK_EQ_U64(t.st.fresh, 1);
	hot_record(&t, 7, 0x1000, PG, 3.0, 3 * SEC);		/* 2 -> 0.25: fresh */
	CHECK_EQ_U64(t.st.fresh, 4);
	hot_record(&t, 7, 0x1000, PG, 1.0, 5 * SEC);		/* 3.25 -> 0.81 */
	CHECK_EQ_U64(t.st.fresh, 4);
	CHECK_EQ_U64(t.st.records, 4);
	CHECK_EQ_U64(t.st.samples, 6);
	/* A range over that page holds its heat: not fresh; a range over
	 * nothing is. */
	hot_record(&t, 7, 0, HUGE, 2.0, 5 * SEC);
	CHECK_EQ_U64(t.st.fresh, 4);
	hot_record(&t, 7, 4 * HUGE, HUGE, 2.0, 5 * SEC);
	CHECK_EQ_U64(t.st.fresh, 6);
	CHECK_EQ_U64(t.st.samples, 10);
}

/* The worked example at the top of hotness.c. */
static void test_worked_example(void)
{
	struct hot_table t;
	struct hot_stats st;
	double b10 = 0.0;
	const uint64_t A = 0x10000, B = 0x20000, C = 0x30000;

	mk(&t, 10 * SEC, 2);
	hot_record(&t, 1, A, PG, 50.0, 0);
	for (int k = 0; k <= 30; k++) {
		hot_record(&t, 1, B, PG, 10.0, k * SEC);
		if (k == 10)
			b10 = hot_heat(&t, 1, B, 10 * SEC);
	}
	CHECK(hot_heat(&t, 1, A, 10 * SEC) == 25.0);
	CHECK(near_stored(b10, 10.0 * (1.0 - hot_exp2(-1.1)) / (1.0 - hot_exp2(-0.1)), 11));
	CHECK(!near_stored(b10, 10.0 * (1.0 - hot_exp2(-1.1)) / (1.0 - hot_exp2(-0.1)) + 1e-4, 11));
	CHECK(hot_heat(&t, 1, A, 30 * SEC) == 6.25);
	CHECK(near_stored(hot_heat(&t, 1, B, 30 * SEC),
			  10.0 * (1.0 - hot_exp2(-3.1)) / (1.0 - hot_exp2(-0.1)), 31));
	hot_record(&t, 1, C, PG, 1.0, 30 * SEC);
	CHECK(hot_heat(&t, 1, A, 30 * SEC) == 0.0);	/* evicted */
	CHECK(hot_heat(&t, 1, B, 30 * SEC) > 100.0);
	CHECK(hot_heat(&t, 1, C, 30 * SEC) == 1.0);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.evictions, 1);
	CHECK_EQ_U64(st.entries, 2);
}

static void test_eviction_picks_coldest_now(void)
{
	struct hot_table t;

	/* Old heat decays below new heat: 64 at t=0 is 1 at t=6 s, less than 2. */
	mk(&t, SEC, 3);
	hot_record(&t, 1, 0 * PG, PG, 64.0, 0);
	hot_record(&t, 1, 1 * PG, PG, 2.0, 6 * SEC);
	hot_record(&t, 1, 2 * PG, PG, 3.0, 6 * SEC);
	hot_record(&t, 1, 3 * PG, PG, 5.0, 6 * SEC);
	CHECK(hot_heat(&t, 1, 0, 6 * SEC) == 0.0);
	CHECK(hot_heat(&t, 1, 1 * PG, 6 * SEC) == 2.0);
	/* A newcomer colder than everything still gets in (newest evidence). */
	hot_record(&t, 1, 4 * PG, PG, 0.5, 6 * SEC);
	CHECK(hot_heat(&t, 1, 4 * PG, 6 * SEC) == 0.5);
	CHECK(hot_heat(&t, 1, 1 * PG, 6 * SEC) == 0.0);
}

static void test_thp_folding(void)
{
	struct hot_table t;
	struct hot_entry_view v[4];
	struct hot_stats st;
	const uint64_t base = 4 * HUGE;

	mk(&t, SEC, 1024);
	hot_record(&t, 3, base + 0 * PG, PG, 1.0, 0);
	hot_record(&t, 3, base + 5 * PG, PG, 2.0, 0);
	hot_record(&t, 3, base + 511 * PG, PG, 4.0, 0);
	hot_record(&t, 3, base + 512 * PG, PG, 8.0, 0);	/* next range: stays */
	hot_record(&t, 4, base + 1 * PG, PG, 16.0, 0);	/* other pid: stays */
	/* The sampler learns the range is a PMD folio: one entry, heat summed. */
	CHECK_EQ_INT(hot_record(&t, 3, base + 7 * PG, HUGE, 0.0, SEC), 0);
	CHECK_EQ_INT(hot_record(&t, 3, base, HUGE, 1.0, SEC), 1);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.folded, 3);
	CHECK_EQ_U64(st.entries, 3);
	CHECK_EQ_U64(st.huge_entries, 1);
	CHECK(hot_heat(&t, 3, base + 300 * PG, SEC) == 3.5 + 1.0);
	CHECK_EQ_U64(hot_entry_len(&t, 3, base + 300 * PG), HUGE);
	CHECK_EQ_U64(hot_entry_len(&t, 3, base + 512 * PG), PG);
	CHECK_EQ_U64(hot_entry_len(&t, 3, base + 1024 * PG), 0);
	/* Later 4 KiB samples inside fold into it too. */
	CHECK_EQ_INT(hot_record(&t, 3, base + 100 * PG, PG, 1.5, SEC), 1);
	CHECK(hot_heat(&t, 3, base, SEC) == 6.0);
	CHECK_EQ_U64((hot_get_stats(&t, &st), st.entries), 3);
	CHECK_EQ_U64(hot_select_hottest(&t, 3, 0.0, SEC, v, 4), 2);
	CHECK_EQ_U64(v[0].addr, base);
	CHECK_EQ_U64(v[0].len, HUGE);
	CHECK_EQ_U64(v[0].samples, 3 + 2);
	CHECK_EQ_U64(v[1].addr, base + 512 * PG);
	CHECK_EQ_U64(v[1].len, PG);
	CHECK(v[1].heat == 4.0);
	/* Forgetting any address in the range forgets the folio. */
	CHECK_EQ_INT(hot_forget(&t, 3, base + 42 * PG), 0);
	CHECK_EQ_INT(hot_forget(&t, 3, base + 42 * PG), -ENOENT);
	CHECK(hot_heat(&t, 4, base + 1 * PG, 0) == 16.0);
}

static void test_region_split(void)
{
	struct hot_table t;
	struct hot_entry_view v[8];

	mk(&t, SEC, 64);
	/* [1 MiB, 5 MiB) covers half of range 0, all of range 1, half of range 2. */
	CHECK_EQ_INT(hot_record(&t, 9, HUGE / 2, 2 * HUGE, 10.0, 0), 3);
	CHECK_EQ_U64(hot_select_hottest(&t, 0, 0.0, 0, v, 8), 3);
	CHECK_EQ_U64(v[0].addr, HUGE);
	CHECK(v[0].heat == 10.0);
	CHECK_EQ_U64(v[1].addr, 0);
	CHECK(v[1].heat == 5.0);
	CHECK_EQ_U64(v[2].addr, 2 * HUGE);
	CHECK(v[2].heat == 5.0);
	/* 32 small regions of 64 KiB with frequency 20 in one range: mean 20. */
	for (int i = 0; i < 32; i++)
		hot_record(&t, 9, 8 * HUGE + i * 65536ull, 65536, 20.0, 0);
	CHECK(hot_heat(&t, 9, 8 * HUGE, 0) == 20.0);
}

static void test_bounded_memory(void)
{
	struct hot_table t;
	struct hot_stats st;
	struct hot_params p = { .half_life_ns = SEC, .max_entries = 100, .geom = TEST_GEOM_INIT };
	size_t need = hot_mem_size(100);

	CHECK(need > 0 && need <= sizeof(mem));
	CHECK_EQ_INT(hot_init(&t, &p, mem, need - 1, 0), -EINVAL);
	CHECK_EQ_INT(hot_init(&t, &p, (char *)mem + 4, sizeof(mem) - 8, 0), -EINVAL);
	p.half_life_ns = 0;
	CHECK_EQ_INT(hot_init(&t, &p, mem, sizeof(mem), 0), -EINVAL);
	p.half_life_ns = SEC;
	p.max_entries = 0;
	CHECK_EQ_INT(hot_init(&t, &p, mem, sizeof(mem), 0), -EINVAL);
	p.max_entries = 100;
	/* Everything lives inside the given bytes: fill what lies past them. */
	memset((char *)mem + need, 0xa5, 4096);
	CHECK_EQ_INT(hot_init(&t, &p, mem, need, 0), 0);
	for (uint64_t i = 0; i < 10000; i++)
		hot_record(&t, 1 + i % 3, i * PG, PG, 1.0 + (i % 7), i);
	for (uint64_t i = 0; i < 20; i++)
		hot_record(&t, 5, i * HUGE, HUGE, 1.0, 10000 + i);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.entries, 100);
	CHECK_EQ_U64(st.inserts, 10020);
	CHECK_EQ_U64(st.evictions, 9920);
	CHECK_EQ_U64(st.mem_bytes, need);
	for (size_t i = 0; i < 4096; i++)
		if (((unsigned char *)mem)[need + i] != 0xa5) {
			CHECK(!"wrote past the memory it was given");
			break;
		}
	CHECK_EQ_INT(hot_record(&t, 0, 0, PG, 1.0, 0), -EINVAL);
	CHECK_EQ_INT(hot_record(&t, 1, 0, PG, -1.0, 0), -EINVAL);
}

static void test_select_order(void)
{
	struct hot_table t;
	struct hot_entry_view v[8];
	size_t n;

	mk(&t, SEC, 64);
	/* pid 2: pages 0..5 with heats 1, 6, 3, 3, 5, 2; pid 3: one page heat 4. */
	const double heat[] = { 1, 6, 3, 3, 5, 2 };
	for (int i = 0; i < 6; i++)
		hot_record(&t, 2, i * PG, PG, heat[i], 0);
	hot_record(&t, 3, 0, PG, 4.0, 0);

	n = hot_select_hottest(&t, 0, 0.0, SEC, v, 3);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(v[0].addr, 1 * PG);
	CHECK(v[0].heat == 3.0);	/* 6 decayed by one half-life */
	CHECK_EQ_U64(v[1].addr, 4 * PG);
	CHECK_EQ_INT(v[2].pid, 3);
	/* Threshold in current heat: >= 2.0 at t = 1 s means >= 4 at t = 0. */
	CHECK_EQ_U64(hot_select_hottest(&t, 0, 2.0, SEC, v, 8), 3);
	CHECK_EQ_U64(hot_select_hottest(&t, 2, 2.0, SEC, v, 8), 2);
	/* Coldest first; equal heats by address. */
	n = hot_select_coldest(&t, 2, 0, v, 4);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(v[0].addr, 0);
	CHECK_EQ_U64(v[1].addr, 5 * PG);
	CHECK_EQ_U64(v[2].addr, 2 * PG);
	CHECK_EQ_U64(v[3].addr, 3 * PG);
	/* Fewer entries than asked: all of them, sorted. */
	n = hot_select_coldest(&t, 0, 0, v, 8);
	CHECK_EQ_U64(n, 7);
	for (size_t i = 1; i < n; i++)
		CHECK(v[i - 1].heat <= v[i].heat);
	CHECK_EQ_U64(hot_select_hottest(&t, 0, 0.0, 0, v, 0), 0);
}

/* A walk of the coldest entries window by window: every entry exactly
 * once, in the order of one big selection, across ties (20 entries of each
 * heat, over two pids) and windows that end inside a tie; a cursor from
 * before a rebase starts again from the coldest. */
static void test_cursor_walk(void)
{
	struct hot_table t;
	struct hot_entry_view all[128], win[7];
	struct hot_cursor cur = { 0 };
	struct hot_stats st;
	size_t n, got = 0;

	mk(&t, SEC, 128);
	for (int i = 0; i < 100; i++)
		hot_record(&t, 1 + i % 2, (uint64_t)i * PG, PG, 1.0 + i % 5, 0);
	n = hot_select_coldest(&t, 0, SEC, all, 128);
	CHECK_EQ_U64(n, 100);
	for (int w = 0; w < 20; w++) {
		size_t k = hot_select_coldest_after(&t, 0, SEC, &cur, win, 7);

		for (size_t i = 0; i < k && got + i < n; i++) {
			CHECK_EQ_INT(win[i].pid, all[got + i].pid);
			CHECK_EQ_U64(win[i].addr, all[got + i].addr);
			CHECK(win[i].heat == all[got + i].heat);
		}
		got += k;
		if (k < 7)
			break;
		hot_cursor_after(&t, &win[k - 1], &cur);
		CHECK_EQ_INT(cur.pid, win[k - 1].pid);
	}
	CHECK_EQ_U64(got, 100);
	/* Past the end: nothing; NULL: from the coldest; one pid's walk. */
	hot_cursor_after(&t, &all[99], &cur);
	CHECK_EQ_U64(hot_select_coldest_after(&t, 0, SEC, &cur, win, 7), 0);
	CHECK_EQ_U64(hot_select_coldest_after(&t, 0, SEC, NULL, win, 1), 1);
	CHECK_EQ_U64(win[0].addr, all[0].addr);
	hot_cursor_after(&t, &all[0], &cur);	/* pid 1, page 0, heat 1 */
	CHECK_EQ_U64(hot_select_coldest_after(&t, 2, SEC, &cur, win, 7), 7);
	CHECK_EQ_INT(win[0].pid, 2);
	CHECK_EQ_U64(win[0].addr, 5 * PG);	/* pid 2's first heat-1 page */
	/* An entry not in the table: unset, from the coldest. */
	win[0].addr = 1000 * PG;
	hot_cursor_after(&t, &win[0], &cur);
	CHECK_EQ_INT(cur.pid, 0);
	/* A rebase (64 half-lives on) lapses a cursor. */
	hot_cursor_after(&t, &all[50], &cur);
	CHECK_EQ_U64(hot_select_coldest_after(&t, 0, SEC, &cur, win, 7), 7);
	CHECK(win[0].heat > all[50].heat || win[0].addr != all[50].addr);
	hot_record(&t, 3, 0, PG, 1.0, 64 * SEC);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.rebases, 1);
	CHECK_EQ_U64(hot_select_coldest_after(&t, 0, 64 * SEC, &cur, win, 1), 1);
	CHECK_EQ_U64(hot_select_coldest(&t, 0, 64 * SEC, all, 1), 1);
	CHECK_EQ_INT(win[0].pid, all[0].pid);
	CHECK_EQ_U64(win[0].addr, all[0].addr);
}

static void test_drop_pid(void)
{
	struct hot_table t;
	struct hot_stats st;
	struct hot_entry_view v[64];

	mk(&t, SEC, 64);
	for (int i = 0; i < 30; i++)
		hot_record(&t, 1 + i % 3, i * PG, PG, 1.0 + i, 0);
	CHECK_EQ_U64(hot_drop_pid(&t, 2), 10);
	CHECK_EQ_U64(hot_drop_pid(&t, 2), 0);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.entries, 20);
	CHECK_EQ_U64(hot_select_hottest(&t, 2, 0.0, 0, v, 64), 0);
	CHECK_EQ_U64(hot_select_hottest(&t, 0, 0.0, 0, v, 64), 20);
	/* The heap is still a heap: the coldest of the rest is page 0 (pid 1). */
	CHECK_EQ_U64(hot_select_coldest(&t, 0, 0, v, 1), 1);
	CHECK_EQ_U64(v[0].addr, 0);
	/* Freed slots are reused without eviction. */
	for (int i = 0; i < 44; i++)
		hot_record(&t, 9, i * PG, PG, 1.0, 0);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.entries, 64);
	CHECK_EQ_U64(st.evictions, 0);
}

static void test_rebase_keeps_order(void)
{
	struct hot_table t;
	struct hot_stats st;
	struct hot_entry_view v[3];

	/* A 1 ns half-life reaches the rebase point within microseconds. */
	mk(&t, 1, 8);
	hot_record(&t, 1, 0, PG, 1.0, 0);
	hot_record(&t, 1, PG, PG, 1.0, 10);
	hot_record(&t, 1, 2 * PG, PG, 1.0, 100);	/* >= 64 half-lives: rebase */
	hot_record(&t, 1, 3 * PG, PG, 3.0, 100);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.rebases, 1);
	CHECK(hot_heat(&t, 1, 2 * PG, 100) == 1.0);
	CHECK(hot_heat(&t, 1, 3 * PG, 101) == 1.5);
	CHECK_EQ_U64(hot_select_hottest(&t, 1, 0.0, 100, v, 3), 3);
	CHECK_EQ_U64(v[0].addr, 3 * PG);
	CHECK_EQ_U64(v[1].addr, 2 * PG);
	CHECK_EQ_U64(v[2].addr, PG);
	/* A sample stamped before the epoch counts at the epoch. */
	hot_record(&t, 1, 4 * PG, PG, 2.0, 5);
	CHECK(hot_heat(&t, 1, 4 * PG, 100) == 2.0);
}

/* Pids live in a per-table process slot: min(max_entries, HOT_MAX_PIDS) of
 * them.  A slot frees with its last entry; when none is free, the process
 * with the oldest last record gives up its entries. */
static void test_pid_slots(void)
{
	struct hot_table t;
	struct hot_stats st;
	struct hot_entry_view v[4];
	const uint32_t n = HOT_MAX_PIDS;

	mk(&t, 3600 * SEC, 2 * n);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.max_pids, n);
	for (uint32_t i = 0; i < n; i++) {
		hot_record(&t, 1000 + i, 0, PG, 1.0, i * SEC);
		hot_record(&t, 1000 + i, PG, PG, 1.0, i * SEC);
	}
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.pids, n);
	CHECK_EQ_U64(st.entries, 2 * n);
	/* Pid 1000 recorded last at 0 s: it goes, both its entries with it. */
	CHECK_EQ_INT(hot_record(&t, 99999, 0, PG, 5.0, n * SEC), 1);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.pid_evictions, 1);
	CHECK_EQ_U64(st.evictions, 2);
	CHECK_EQ_U64(st.pids, n);
	CHECK_EQ_U64(st.entries, 2 * n - 1);
	CHECK(hot_heat(&t, 1000, 0, n * SEC) == 0.0);
	CHECK(near_stored(hot_heat(&t, 1001, PG, SEC), 1.0, 1));
	CHECK(near_stored(hot_heat(&t, 99999, 0, n * SEC), 5.0, 1));
	CHECK_EQ_U64(hot_select_hottest(&t, 1000, 0.0, n * SEC, v, 4), 0);
	/* Re-recorded, pid 1001 is no longer the oldest: 1002 goes next. */
	hot_record(&t, 1001, 0, PG, 1.0, n * SEC);
	hot_record(&t, 100000, 0, PG, 1.0, n * SEC);
	CHECK(hot_heat(&t, 1001, 0, n * SEC) > 0.0);
	CHECK(hot_heat(&t, 1002, 0, n * SEC) == 0.0);
	/* A dropped pid frees its slot: the next new pid evicts nobody. */
	CHECK_EQ_U64(hot_drop_pid(&t, 1003), 2);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.pids, n - 1);
	hot_record(&t, 100001, 0, PG, 1.0, n * SEC);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.pid_evictions, 2);
	CHECK_EQ_U64(st.pids, n);
	CHECK(hot_heat(&t, 1004, PG, n * SEC) > 0.0);
	/* The last-pid cache must not outlive the slot: record, drop, record
	 * another pid into the freed slot, then the first pid again. */
	hot_record(&t, 100002, 0, PG, 3.0, n * SEC);	/* evicts 1004 */
	CHECK_EQ_U64(hot_drop_pid(&t, 100002), 1);
	hot_record(&t, 100003, 0, PG, 7.0, n * SEC);
	hot_record(&t, 100002, PG, PG, 2.0, n * SEC);	/* evicts 1005 */
	CHECK(near_stored(hot_heat(&t, 100003, 0, n * SEC), 7.0, 1));
	CHECK(hot_heat(&t, 100002, 0, n * SEC) == 0.0);
	CHECK(near_stored(hot_heat(&t, 100002, PG, n * SEC), 2.0, 1));
	CHECK_EQ_U64(hot_select_hottest(&t, 100003, 0.0, n * SEC, v, 4), 1);
	CHECK_EQ_INT(v[0].pid, 100003);
}

/* A small table's process slots are as many as its entries, so a new pid in
 * a full table evicts an entry, never a whole process. */
static void test_pid_slots_small_table(void)
{
	struct hot_table t;
	struct hot_stats st;

	mk(&t, SEC, 4);
	for (int i = 0; i < 4; i++)
		hot_record(&t, 10 + i, 0, PG, 1.0 + i, 0);
	hot_record(&t, 20, 0, PG, 9.0, 0);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.max_pids, 4);
	CHECK_EQ_U64(st.pids, 4);
	CHECK_EQ_U64(st.evictions, 1);
	CHECK_EQ_U64(st.pid_evictions, 0);
	CHECK(hot_heat(&t, 10, 0, 0) == 0.0);	/* the coldest */
	CHECK(hot_heat(&t, 11, 0, 0) == 2.0);
}

/* last_ns is kept in 2^27 ns ticks (134 ms) since a time base that moves
 * when 15/16 of the 20-bit window (36.7 h) has passed; an entry older than
 * the new base reports the base, 26.9 h old, older than any cold_age_s. */
static void test_time_ticks_and_rebase(void)
{
	struct hot_table t;
	struct hot_stats st;
	struct hot_entry_view v[2];
	const uint64_t late = 40 * 3600 * SEC;
	const uint64_t tick = 1ull << HOT_TIME_SHIFT;

	mk(&t, 3600 * SEC, 16);
	hot_record(&t, 1, 0, PG, 8.0, SEC);
	CHECK_EQ_U64(hot_select_hottest(&t, 1, 0.0, SEC, v, 2), 1);
	CHECK_EQ_U64(v[0].last_ns, SEC / tick * tick);	/* 939524096 */
	CHECK_EQ_U64(v[0].samples, 1);
	hot_record(&t, 1, PG, PG, 1.0, late);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.rebases, 1);	/* the time base only: 40 < 64 half-lives */
	CHECK_EQ_U64(hot_select_hottest(&t, 1, 0.0, late, v, 2), 2);
	CHECK_EQ_U64(v[0].addr, PG);
	CHECK_EQ_U64(v[0].last_ns, late / tick * tick);
	CHECK_EQ_U64(v[1].addr, 0);
	CHECK_EQ_U64(v[1].last_ns, (late / tick - (1u << 20) / 16 * 11) * tick);
	CHECK(late - v[1].last_ns >= 26 * 3600 * SEC);
	CHECK(near(v[1].heat, 8.0 / hot_exp2(40.0 - 1.0 / 3600)));
	/* Samples saturate at 12 bits. */
	for (int i = 0; i < 5000; i++)
		hot_record(&t, 1, 0, PG, 1.0, late);
	CHECK_EQ_U64(hot_select_hottest(&t, 1, 0.0, late, v, 1), 1);
	CHECK_EQ_U64(v[0].samples, HOT_SAMPLES_MAX);
}

/* The heat rebase every 64 half-lives scales every value alike: the order
 * and the heat survive it, and values far below 2^-126 become 0. */
static void test_heat_rebase(void)
{
	struct hot_table t;
	struct hot_stats st;

	mk(&t, SEC, 16);
	hot_record(&t, 1, 0, PG, 1.0, 0);
	hot_record(&t, 1, PG, PG, 3.0, 0);
	hot_record(&t, 1, 2 * PG, PG, 5.0, 63 * SEC);	/* v = 5 * 2^63 */
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.rebases, 0);
	CHECK(hot_heat(&t, 1, 2 * PG, 63 * SEC) == 5.0);
	CHECK(hot_heat(&t, 1, PG, 62 * SEC) == 3.0 / hot_exp2(62.0));
	hot_record(&t, 1, 3 * PG, PG, 1.0, 70 * SEC);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.rebases, 1);
	CHECK(hot_heat(&t, 1, 2 * PG, 70 * SEC) == 5.0 / 128.0);
	CHECK(hot_heat(&t, 1, 3 * PG, 70 * SEC) == 1.0);
	CHECK(hot_heat(&t, 1, PG, 70 * SEC) == 3.0 / hot_exp2(70.0));
	/* Another 64 half-lives: 2^-134 of the first pages is below float's
	 * normal range, so they read 0 (they are still entries, the coldest). */
	hot_record(&t, 1, 4 * PG, PG, 1.0, 134 * SEC);
	CHECK(hot_heat(&t, 1, PG, 134 * SEC) == 0.0);
	CHECK_EQ_U64(hot_entry_len(&t, 1, PG), PG);
	CHECK(hot_heat(&t, 1, 3 * PG, 134 * SEC) == 1.0 / hot_exp2(64.0));
}

static void test_address_limit(void)
{
	struct hot_table t;
	struct hot_entry_view v[4];

	mk(&t, SEC, 16);
	CHECK_EQ_INT(hot_record(&t, 1, HOT_ADDR_LIMIT, PG, 1.0, 0), -ERANGE);
	CHECK_EQ_INT(hot_record(&t, 1, HOT_ADDR_LIMIT - PG, PG, 1.0, 0), 1);
	/* A region across the limit is cut there. */
	CHECK_EQ_INT(hot_record(&t, 2, HOT_ADDR_LIMIT - HUGE, 4 * HUGE, 2.0, 0), 1);
	CHECK_EQ_U64(hot_select_hottest(&t, 0, 0.0, 0, v, 4), 2);
	CHECK_EQ_U64(v[0].addr, HOT_ADDR_LIMIT - HUGE);
	CHECK_EQ_U64(v[0].len, HUGE);
	CHECK_EQ_U64(v[1].addr, HOT_ADDR_LIMIT - PG);
	CHECK(hot_heat(&t, 1, HOT_ADDR_LIMIT, 0) == 0.0);
}

/* A THP recorded into a full table absorbs its base pages first, so it
 * evicts nothing. */
static void test_thp_fold_full_table(void)
{
	struct hot_table t;
	struct hot_stats st;

	mk(&t, SEC, 8);
	for (int i = 0; i < 8; i++)
		hot_record(&t, 1, HUGE + i * PG, PG, 1.0, 0);
	CHECK_EQ_INT(hot_record(&t, 1, HUGE, HUGE, 1.0, 0), 1);
	hot_get_stats(&t, &st);
	CHECK_EQ_U64(st.evictions, 0);
	CHECK_EQ_U64(st.folded, 8);
	CHECK_EQ_U64(st.entries, 1);
	CHECK(hot_heat(&t, 1, HUGE + 5 * PG, 0) == 9.0);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)((rng_state >> 32) * n >> 32);
}

/*
 * Linear probing deletes by shifting later entries of the run back into the
 * hole.  Against a model: random records (new and repeated), forgets, pid
 * drops and evictions in a table with long runs that wrap around its end;
 * after every step every key of the universe must read exactly as modelled,
 * and the whole-table walks (hot_foreach, the selectors), which skip the
 * 16-slot groups the occupancy bitmap calls empty, must see every entry.
 */
#define U_PIDS 3
#define U_PAGES 150
static double model[U_PIDS][U_PAGES];

struct walk {
	uint32_t seen, wrong;
};

static int model_cb(const struct hot_entry_view *e, void *arg)
{
	struct walk *w = arg;
	uint32_t p = (uint32_t)e->pid - 100, k = (uint32_t)(e->addr / PG);

	w->seen++;
	if (p >= U_PIDS || k >= U_PAGES || e->heat != model[p][k])
		w->wrong++;
	return 0;
}

static void test_probe_delete_model(void)
{
	static struct hot_entry_view views[200];
	struct hot_table t;
	struct hot_stats st;
	uint32_t count = 0, bad = 0, evicted = 0;
	const uint32_t max = 200;	/* 251 slots: runs of dozens at 0.8 */

	mk(&t, SEC, max);
	for (int step = 0; step < 20000 && !bad; step++) {
		uint32_t op = rnd(100), p = rnd(U_PIDS), g = rnd(U_PAGES);
		pid_t pid = 100 + (pid_t)p;
		struct walk walk;

		if (op < 85) {
			double w = 1 + rnd(8);

			if (model[p][g] == 0.0 && count == max)
				evicted++;	/* whichever went is found below */
			hot_record(&t, pid, g * PG, PG, w, 0);
			if (model[p][g] == 0.0)
				count++;
			model[p][g] += w;
		} else if (op < 99) {
			CHECK_EQ_INT(hot_forget(&t, pid, g * PG), model[p][g] != 0.0 ? 0 : -ENOENT);
			if (model[p][g] != 0.0)
				count--;
			model[p][g] = 0.0;
		} else {
			uint32_t n = 0;

			for (uint32_t k = 0; k < U_PAGES; k++)
				if (model[p][k] != 0.0)
					n++;
			CHECK_EQ_U64(hot_drop_pid(&t, pid), n);
			memset(model[p], 0, sizeof(model[p]));
			count -= n;
		}
		for (uint32_t q = 0; q < U_PIDS; q++) {
			for (uint32_t k = 0; k < U_PAGES; k++) {
				double h = hot_heat(&t, 100 + (pid_t)q, k * PG, 0);

				if (h == model[q][k])
					continue;
				if (h == 0.0 && evicted) {
					model[q][k] = 0.0;	/* the eviction's victim */
					count--;
					evicted--;
					continue;
				}
				if (!bad)
					fprintf(stderr, "step %d: pid %u page %u reads %g, model %g\n",
						step, 100 + q, k, h, model[q][k]);
				bad++;
			}
		}
		hot_get_stats(&t, &st);
		if (st.entries != count || evicted)
			bad++;
		walk = (struct walk){ 0, 0 };
		hot_foreach(&t, 0, model_cb, &walk);
		if (walk.seen != count || walk.wrong ||
		    hot_select_hottest(&t, 0, 0.0, 0, views, max) != count ||
		    hot_select_coldest(&t, 0, 0, views, max) != count) {
			if (!bad)
				fprintf(stderr, "step %d: walks saw %u entries (%u wrong), model %u\n",
					step, walk.seen, walk.wrong, count);
			bad++;
		}
	}
	CHECK_EQ_U64(bad, 0);
	hot_get_stats(&t, &st);
	printf("probe model: %llu inserts, %llu evictions, %llu dropped\n",
	       (unsigned long long)st.inserts, (unsigned long long)st.evictions,
	       (unsigned long long)st.dropped);
	CHECK(st.evictions > 1000);	/* the table was full for much of it */
	CHECK(st.dropped > 0);
}

/*
 * Eviction takes the coldest of a pool fed by random cache lines, not the
 * exact coldest.  How close: 4096 entries with heats 1..4096 in random
 * order, then 1024 newcomers far hotter than all; each newcomer evicts one,
 * and its rank among the old entries still present (0 = the coldest) is
 * measured.  An exact heap would give rank 0 every time.  With ten other
 * seeds this test gave means of 2.0-2.2%, 99 in 100 victims within the
 * coldest 4.4% and a worst single victim of up to 15.6%: the bounds below
 * leave that margin.  hotness_bench measures the same on 64 Ki entries for
 * the essay.
 */
static void test_eviction_near_coldest(void)
{
	static uint32_t heat_at[4096], page_of[4097];
	static unsigned char present[4097];
	const uint32_t n = 4096, m = 1024;
	struct hot_table t;
	uint32_t lo = 1, worst = 0, over5 = 0;
	uint64_t rank_sum = 0;

	rng_state = 0x2545f4914f6cdd1dull;	/* independent of the tests before */
	mk(&t, SEC, n);
	for (uint32_t i = 0; i < n; i++)
		heat_at[i] = i + 1;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = rnd(i + 1), x = heat_at[i];

		heat_at[i] = heat_at[j];
		heat_at[j] = x;
	}
	for (uint32_t i = 0; i < n; i++) {
		hot_record(&t, 1, i * PG, PG, heat_at[i], 0);
		page_of[heat_at[i]] = i;
		present[heat_at[i]] = 1;
	}
	for (uint32_t e = 0; e < m; e++) {
		uint32_t rank = 0, h;

		hot_record(&t, 2, e * PG, PG, 1e7, 0);
		for (h = lo; h <= n; h++) {
			if (!present[h])
				continue;
			if (hot_heat(&t, 1, page_of[h] * PG, 0) == 0.0)
				break;
			rank++;
		}
		CHECK(h <= n);	/* an old entry went, not a newcomer */
		if (h > n)
			break;
		present[h] = 0;
		while (lo <= n && !present[lo])
			lo++;
		rank_sum += rank;
		if (rank > worst)
			worst = rank;
		if (rank * 100 > 5 * n)
			over5++;
	}
	printf("eviction of %u from %u: victim rank mean %.2f%%, %u beyond the coldest 5%%, worst %u (%.2f%%)\n",
	       m, n, 100.0 * rank_sum / m / n, over5, worst, 100.0 * worst / n);
	CHECK(rank_sum * 1000 <= 25ull * m * n);	/* mean within the coldest 2.5% */
	CHECK(over5 * 100 <= m);		/* 99% within the coldest 5% */
	CHECK(worst * 100 <= 20 * n);		/* none beyond the coldest 20% */
}

static int count_cb(const struct hot_entry_view *e, void *arg)
{
	double *sum = arg;

	*sum += e->heat;
	return e->pid == 99 ? 7 : 0;
}

static void test_foreach(void)
{
	struct hot_table t;
	double sum = 0.0;

	mk(&t, SEC, 8);
	hot_record(&t, 1, 0, PG, 2.0, 0);
	hot_record(&t, 1, PG, PG, 4.0, 0);
	CHECK_EQ_INT(hot_foreach(&t, SEC, count_cb, &sum), 0);
	CHECK(sum == 3.0);
	hot_record(&t, 99, PG, PG, 4.0, 0);
	CHECK_EQ_INT(hot_foreach(&t, SEC, count_cb, &sum), 7);
}

/*
 * The entries by heat, half-life 1 s: base pages at 0.5, 1, 3 and 6 and
 * 0.1, a range at 40 (bin 6, [32, 64)).  One second on, every heat halves
 * and the last bin takes what is above it.
 */
static void test_heat_hist(void)
{
	struct hot_table t;
	struct hot_heat_bin b[8];

	mk(&t, SEC, 64);
	hot_record(&t, 1, 0, PG, 0.5, 0);
	hot_record(&t, 1, PG, PG, 1.0, 0);
	hot_record(&t, 1, 2 * PG, PG, 3.0, 0);
	hot_record(&t, 1, 3 * PG, PG, 6.0, 0);
	hot_record(&t, 1, 4 * PG, PG, 0.1, 0);
	hot_record(&t, 1, 8 * HUGE, HUGE, 40.0, 0);
	hot_heat_hist(&t, 0, b, 8);
	CHECK(b[0].bytes == 2 * PG && b[0].entries == 2);
	CHECK(near_stored(b[0].heat, 0.6, 2));
	CHECK(b[1].bytes == PG && b[2].bytes == PG && b[3].bytes == PG);
	CHECK(b[4].bytes == 0 && b[5].bytes == 0 && b[7].bytes == 0);
	CHECK(b[6].bytes == HUGE && b[6].entries == 1);
	CHECK(near_stored(b[6].heat, 40.0, 1));
	/* 0.25, 0.5, 1.5, 3, 20 and 0.05. */
	hot_heat_hist(&t, SEC, b, 4);
	CHECK(b[0].bytes == 3 * PG && b[0].entries == 3);
	CHECK(b[1].bytes == PG && b[2].bytes == PG && b[3].bytes == HUGE);
	CHECK(near_stored(b[3].heat, 20.0, 1));
}

/*
 * mem_zeroed: hot_init() leaves the memory as it is (the daemon hands it
 * fresh anonymous pages, so that start-up does not touch all of them), and a
 * table over zeroed memory behaves as one hot_init() cleared itself.
 */
static void test_mem_zeroed(void)
{
	static uint64_t zeroed[1 << 16];
	struct hot_params p = { .half_life_ns = SEC, .max_entries = 1000, .geom = TEST_GEOM_INIT };
	struct hot_entry_view va[64], vb[64];
	struct hot_table a, b;
	size_t need = hot_mem_size(1000), na, nb;

	CHECK(need <= sizeof(mem) && need <= sizeof(zeroed));
	/* Not cleared: a byte in the slots keeps what was there. */
	memset(mem, 0x5a, need);
	p.mem_zeroed = true;
	CHECK_EQ_INT(hot_init(&a, &p, mem, need, 0), 0);
	CHECK_EQ_INT(((unsigned char *)mem)[8], 0x5a);
	/* Cleared by hot_init() vs given zeroed: the same table. */
	p.mem_zeroed = false;
	CHECK_EQ_INT(hot_init(&a, &p, mem, need, 0), 0);
	p.mem_zeroed = true;
	CHECK_EQ_INT(hot_init(&b, &p, zeroed, need, 0), 0);
	for (uint64_t i = 0; i < 5000; i++) {
		int ra = hot_record(&a, 1 + i % 5, (i * 7919 % 3000) * PG, PG, 1.0 + i % 3, i * 1000);
		int rb = hot_record(&b, 1 + i % 5, (i * 7919 % 3000) * PG, PG, 1.0 + i % 3, i * 1000);

		CHECK(ra >= 0);
		CHECK_EQ_INT(rb, ra);
	}
	na = hot_select_hottest(&a, 0, 0.0, 5000 * 1000, va, 64);
	nb = hot_select_hottest(&b, 0, 0.0, 5000 * 1000, vb, 64);
	CHECK_EQ_U64(na, 64);
	CHECK_EQ_U64(nb, na);
	for (size_t i = 0; i < na && i < nb; i++) {
		CHECK_EQ_INT(va[i].pid, vb[i].pid);
		CHECK_EQ_U64(va[i].addr, vb[i].addr);
		CHECK(va[i].heat == vb[i].heat);
	}
}

int main(void)
{
	RUN(test_exp2);
	RUN(test_decay_exact);
	RUN(test_set_half_life);
	RUN(test_fresh);
	RUN(test_worked_example);
	RUN(test_eviction_picks_coldest_now);
	RUN(test_thp_folding);
	RUN(test_region_split);
	RUN(test_bounded_memory);
	RUN(test_select_order);
	RUN(test_cursor_walk);
	RUN(test_drop_pid);
	RUN(test_rebase_keeps_order);
	RUN(test_foreach);
	RUN(test_heat_hist);
	RUN(test_pid_slots);
	RUN(test_pid_slots_small_table);
	RUN(test_time_ticks_and_rebase);
	RUN(test_heat_rebase);
	RUN(test_address_limit);
	RUN(test_thp_fold_full_table);
	RUN(test_probe_delete_model);
	RUN(test_eviction_near_coldest);
	RUN(test_mem_zeroed);
	return TEST_EXIT();
}
