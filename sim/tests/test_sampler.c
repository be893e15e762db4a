// SPDX-License-Identifier: GPL-2.0-only
/* Sampler models against hand-computed cases; DAMON's split and merge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "damon.h"
#include "sampler.h"
#include "test.h"

#define MIB (1ull << 20)

static struct sim_machine m = { .base_page_bytes = 4096 };
static const uint16_t tenants[16];

static struct sim_setup setup(uint32_t n)
{
	return (struct sim_setup){ .m = &m, .range_bytes = 2 * MIB,
				   .interval_ns = 1000000000, .nr_ranges = n,
				   .nr_tenants = 1, .range_tenant = tenants,
				   .seed = 5 };
}

/* 1 in 10: 30 -> 3, 20 -> 2, exactly; 5 samples at 1500 ns each.  With
 * auto the period is the system's to set. */
static void test_hw(void)
{
	struct sim_setup s = setup(3);
	struct sim_sampler smp;
	uint32_t acc[3] = { 30, 0, 20 }, seen[3];
	uint64_t cost = 0;
	char err[SIM_ERR_LEN];

	CHECK_EQ_INT(sim_sampler_create("hw:10", &s, &smp, err), 0);
	smp.sample(smp.state, acc, 3, seen, &cost);
	CHECK(seen[0] == 3 && seen[1] == 0 && seen[2] == 2);
	CHECK_EQ_U64(cost, 5 * 1500);
	CHECK(smp.rate == NULL);	/* the run fixed it */
	sim_sampler_destroy(&smp);
	/* auto: the system's to set; the cost since it last took it. */
	CHECK_EQ_INT(sim_sampler_create("hw:auto:800", &s, &smp, err), 0);
	CHECK(smp.rate != NULL);
	if (smp.rate) {
		smp.rate->period = 10;
		cost = 0;
		smp.sample(smp.state, acc, 3, seen, &cost);
		smp.sample(smp.state, acc, 3, seen, &cost);
		CHECK_EQ_U64(cost, 10 * 800);
		CHECK_EQ_U64(smp.rate->cost_ns, 10 * 800);
		smp.rate->period = 5;
		smp.rate->cost_ns = 0;
		smp.sample(smp.state, acc, 3, seen, &cost);
		CHECK(seen[0] == 6 && seen[2] == 4);
		CHECK_EQ_U64(smp.rate->cost_ns, 10 * 800);
	}
	sim_sampler_destroy(&smp);
	CHECK_EQ_INT(sim_sampler_create("hw", &s, &smp, err), 0);
	CHECK(smp.rate != NULL && smp.rate->period > 1);
	sim_sampler_destroy(&smp);
	CHECK_EQ_INT(sim_sampler_create("hw:auto:x", &s, &smp, err), -EINVAL);
	CHECK_EQ_INT(sim_sampler_create("hw:0", &s, &smp, err), -EINVAL);
	CHECK_EQ_INT(sim_sampler_create("bpf", &s, &smp, err), -EINVAL);
}

/*
 * hint:8:1000 with 1 s intervals: 8 MB a second = 4 ranges a second.
 * Interval 0 covers ranges 0-3, interval 1 ranges 4-7; an accessed range
 * in the window faults once.
 */
static void test_hint(void)
{
	struct sim_setup s = setup(10);
	struct sim_sampler smp;
	uint32_t acc[10] = { 5, 0, 7, 0, 0, 9, 0, 0, 3, 3 }, seen[10];
	uint64_t cost = 0;
	char err[SIM_ERR_LEN];

	CHECK_EQ_INT(sim_sampler_create("hint:8:1000", &s, &smp, err), 0);
	smp.sample(smp.state, acc, 10, seen, &cost);
	CHECK(seen[0] == 1 && seen[1] == 0 && seen[2] == 1 && seen[5] == 0);
	CHECK_EQ_U64(cost, 2 * 1000);
	smp.sample(smp.state, acc, 10, seen, &cost);
	CHECK(seen[0] == 0 && seen[5] == 1 && seen[8] == 0);
	CHECK_EQ_U64(cost, 3 * 1000);
	sim_sampler_destroy(&smp);
}

static struct damon_model model(struct damon_region *r, uint32_t n, uint32_t cap)
{
	return (struct damon_model){ .regions = r, .nr = n, .cap = cap,
				     .min_nr = 2, .max_nr = 1000, .total = 100,
				     .max_accesses = 20, .rng = 1 };
}

/*
 * Threshold 2: [0,10) 4 and [10,20) 6 merge into [0,20) at 5 (size
 * weighted); [20,30) 12 stays.  The size limit is 100 / 2 = 50.
 */
static void test_damon_merge(void)
{
	struct damon_region r[3] = {
		{ .start = 0, .end = 10, .nr_accesses = 4, .last_nr_accesses = 4, .age = 2 },
		{ .start = 10, .end = 20, .nr_accesses = 6, .last_nr_accesses = 0, .age = 6 },
		{ .start = 20, .end = 30, .nr_accesses = 12, .last_nr_accesses = 12 },
	};
	struct damon_model d = model(r, 3, 3);

	damon_model_merge(&d, 2);
	CHECK_EQ_INT(d.nr, 2);
	CHECK(r[0].start == 0 && r[0].end == 20 && r[0].nr_accesses == 5);
	/* ages: 2 + 1 = 3 (steady), 6 -> 0 (changed by 6): weighted 1 */
	CHECK_EQ_INT(r[0].age, 1);
	CHECK(r[1].start == 20 && r[1].nr_accesses == 12 && r[1].age == 1);
}

/* Regions of 60 and 50 never merge: over total / min_nr_regions. */
static void test_damon_merge_limit(void)
{
	struct damon_region r[2] = {
		{ .start = 0, .end = 60, .nr_accesses = 1 },
		{ .start = 60, .end = 100, .nr_accesses = 1 },
	};
	struct damon_model d = model(r, 2, 2);

	damon_model_merge(&d, 5);
	CHECK_EQ_INT(d.nr, 2);
}

/* Every region splits in two, covering the same ranges in order. */
static void test_damon_split(void)
{
	struct damon_region r[16] = {
		{ .start = 0, .end = 10, .nr_accesses = 3 },
		{ .start = 10, .end = 12 },
		{ .start = 12, .end = 40, .tenant = 1 },
	};
	struct damon_model d = model(r, 3, 16);

	d.last_nr = 0;
	damon_model_split(&d);
	CHECK_EQ_INT(d.nr, 5);	/* [10,12) is 2 ranges: too small to split */
	for (uint32_t i = 1; i < d.nr; i++)
		CHECK_EQ_INT(r[i].start, r[i - 1].end);
	CHECK(r[0].start == 0 && r[d.nr - 1].end == 40);
	CHECK(r[1].nr_accesses == 3 && r[4].tenant == 1);
	/* The count did not change and is below max / 3: three pieces. */
	d.last_nr = d.nr;
	damon_model_split(&d);
	CHECK(d.nr > 5);
	for (uint32_t i = 1; i < d.nr; i++)
		CHECK_EQ_INT(r[i].start, r[i - 1].end);
}

/*
 * A hot half and a cold half of 64 ranges: regions split and merge until
 * only a region of two ranges (too small to split, as in the kernel) may
 * straddle the edge; every other range is seen as hot (20 of 20 samples)
 * or cold (0).
 */
static void test_damon_converges(void)
{
	static const uint16_t t64[64];
	struct sim_setup s = setup(64);
	struct sim_sampler smp;
	uint32_t acc[64] = { 0 }, seen[64], wrong = 0;
	uint64_t cost = 0;
	char err[SIM_ERR_LEN];

	s.range_tenant = t64;
	for (int r = 0; r < 32; r++)
		acc[r] = 10000000;
	CHECK_EQ_INT(sim_sampler_create("damon:5000:100000:10:100", &s, &smp, err), 0);
	for (int i = 0; i < 10; i++)
		smp.sample(smp.state, acc, 64, seen, &cost);
	for (int r = 0; r < 64; r++)
		wrong += r < 32 ? seen[r] != 20 : seen[r] != 0;
	CHECK(wrong <= 2);
	CHECK(cost > 0);
	sim_sampler_destroy(&smp);
}

/*
 * An aggregation longer than the interval: damon:400000:2000000:16:16 is
 * one region per range, 400 ms samples, 2 s aggregations of 5.  The 1 s
 * intervals take 2, 3 and 2 samples (200 ms carried); only the second
 * ends an aggregation, so only it shows regions (hot ranges 5 of 5), the
 * others nothing.  Each sample costs 16 regions x 500 ns, the
 * aggregation's end 16 x 100 ns.
 */
static void test_damon_long_aggregation(void)
{
	struct sim_setup s = setup(16);
	struct sim_sampler smp;
	uint32_t acc[16] = { 0 }, seen[16];
	uint64_t cost = 0;
	char err[SIM_ERR_LEN];

	for (int r = 0; r < 16; r += 2)
		acc[r] = 10000000;
	CHECK_EQ_INT(sim_sampler_create("damon:400000:2000000:16:16", &s, &smp, err), 0);
	memset(seen, 0xff, sizeof(seen));
	smp.sample(smp.state, acc, 16, seen, &cost);
	for (int r = 0; r < 16; r++)
		CHECK_EQ_U64(seen[r], 0);
	CHECK_EQ_U64(cost, 2 * 16 * 500);
	smp.sample(smp.state, acc, 16, seen, &cost);
	for (int r = 0; r < 16; r++)
		CHECK_EQ_U64(seen[r], r % 2 ? 0 : 5);
	CHECK_EQ_U64(cost, 5 * 16 * 500 + 16 * 100);
	smp.sample(smp.state, acc, 16, seen, &cost);
	for (int r = 0; r < 16; r++)
		CHECK_EQ_U64(seen[r], 0);
	CHECK_EQ_U64(cost, 7 * 16 * 500 + 16 * 100);
	sim_sampler_destroy(&smp);
}

/* One interval with range 1 at @acc1 accesses: its view and age, and
 * range 3's age. */
static void idle_interval(struct sim_sampler *smp, uint32_t *acc, uint32_t acc1,
			  uint32_t seen1, uint32_t idle1, uint32_t idle3)
{
	const uint32_t *idle;
	uint32_t seen[16];
	uint64_t cost = 0;

	acc[1] = acc1;
	smp->sample(smp->state, acc, 16, seen, &cost);
	idle = smp->idle_ms(smp->state);
	CHECK_EQ_U64(seen[1], seen1);
	CHECK_EQ_U64(idle[1], idle1);
	CHECK_EQ_U64(idle[3], idle3);
}

/*
 * Idle memory as DAMON reports it: damon:100000:500000:16:16 is one region
 * per range (merges stop at 16 / 16 = 1 range, splits above 8 regions),
 * two aggregations of 5 samples a 1 s interval.  The odd ranges are never
 * accessed: their age grows by one an aggregation, 500 ms each, reported
 * at the interval's last; the even ones are seen 5 of 5 and never idle.
 * Range 1 accessed once, then not: its count changed by more than the
 * threshold (5 / 10), so its age starts over, and it is idle again only
 * an aggregation later.
 */
static void test_damon_idle(void)
{
	struct sim_setup s = setup(16);
	struct sim_sampler smp;
	uint32_t acc[16] = { 0 }, seen[16];
	const uint32_t *idle;
	uint64_t cost = 0;
	char err[SIM_ERR_LEN];

	for (int r = 0; r < 16; r += 2)
		acc[r] = 10000000;
	CHECK_EQ_INT(sim_sampler_create("damon:100000:500000:16:16", &s, &smp, err), 0);
	CHECK(smp.idle_ms != NULL);
	for (uint32_t i = 1; i <= 2; i++) {
		smp.sample(smp.state, acc, 16, seen, &cost);
		idle = smp.idle_ms(smp.state);
		for (int r = 0; r < 16; r++) {
			CHECK_EQ_U64(seen[r], r % 2 ? 0 : 5);
			CHECK_EQ_U64(idle[r], r % 2 ? i * 1000 : 0);
		}
	}
	idle_interval(&smp, acc, 10000000, 5, 0, 3000);
	idle_interval(&smp, acc, 0, 0, 500, 4000);
	sim_sampler_destroy(&smp);

	/* The others cannot tell idle memory. */
	CHECK_EQ_INT(sim_sampler_create("hw:10", &s, &smp, err), 0);
	CHECK(smp.idle_ms == NULL);
	sim_sampler_destroy(&smp);
}

int main(void)
{
	RUN(test_hw);
	RUN(test_hint);
	RUN(test_damon_merge);
	RUN(test_damon_merge_limit);
	RUN(test_damon_split);
	RUN(test_damon_converges);
	RUN(test_damon_long_aggregation);
	RUN(test_damon_idle);
	return TEST_EXIT();
}
