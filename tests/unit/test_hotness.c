// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "hotness.h"
#include "test.h"

#define SEC 1000000000ull
#define PG HOT_PAGE_SIZE
#define HUGE HOT_HUGE_SIZE

static uint64_t mem[1 << 16];

static void mk(struct hot_table *t, uint64_t half_life_ns, uint32_t max)
{
	struct hot_params p = { .half_life_ns = half_life_ns, .max_entries = max };
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
	struct hot_params p = { .half_life_ns = SEC, .max_entries = 100 };
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

int main(void)
{
	RUN(test_exp2);
	RUN(test_decay_exact);
	RUN(test_worked_example);
	RUN(test_eviction_picks_coldest_now);
	RUN(test_thp_folding);
	RUN(test_region_split);
	RUN(test_bounded_memory);
	RUN(test_select_order);
	RUN(test_drop_pid);
	RUN(test_rebase_keeps_order);
	RUN(test_foreach);
	return TEST_EXIT();
}
