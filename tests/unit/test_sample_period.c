// SPDX-License-Identifier: GPL-2.0-only
#include "sample_period.h"
#include "test.h"

#define SEC 1000000000ull

static const struct sample_period_params P = {
	.budget_pct = 1.0, .min_period = 1000, .max_period = 1000000,
};

static void test_cost_pct(void)
{
	/* 40 ms of CPU over 1 s on 4 CPUs is 1 %. */
	CHECK(sample_cost_pct(40000000, SEC, 4) == 1.0);
	CHECK(sample_cost_pct(1, 0, 4) == 0.0);
}

static void test_over_budget_grows_in_one_step(void)
{
	/* 4 % used at period 10000: next period makes it 1 % / 1.25 = 0.8 %. */
	uint64_t next = sample_period_next(&P, 10000, 160000000, SEC, 4);

	CHECK_EQ_U64(next, 50001);
	/* Cost scales as 1/period: what the new period would cost. */
	CHECK(sample_cost_pct(160000000ull * 10000 / next, SEC, 4) < P.budget_pct);
	CHECK_EQ_U64(sample_period_next(&P, 900000, 160000000, SEC, 4), P.max_period);
}

static void test_under_budget(void)
{
	/* 0.2 % is under a quarter of 1 %: halve. */
	CHECK_EQ_U64(sample_period_next(&P, 10000, 8000000, SEC, 4), 5000);
	CHECK_EQ_U64(sample_period_next(&P, 1500, 0, SEC, 4), P.min_period);
	/* 0.5 % is within the band: keep. */
	CHECK_EQ_U64(sample_period_next(&P, 10000, 20000000, SEC, 4), 10000);
	/* Nothing measured: keep. */
	CHECK_EQ_U64(sample_period_next(&P, 10000, 20000000, 0, 4), 10000);
}

static void test_half_life(void)
{
	/* At or under the period it is meant at, and without a period: as
	 * configured; sparser in proportion, up to four times. */
	CHECK_EQ_U64(sample_half_life_ns(5 * SEC, 0), 5 * SEC);
	CHECK_EQ_U64(sample_half_life_ns(5 * SEC, 1000), 5 * SEC);
	CHECK_EQ_U64(sample_half_life_ns(5 * SEC, SAMPLE_PERIOD_INIT), 5 * SEC);
	CHECK_EQ_U64(sample_half_life_ns(5 * SEC, 2 * SAMPLE_PERIOD_INIT), 10 * SEC);
	CHECK_EQ_U64(sample_half_life_ns(5 * SEC, 190974), 20 * SEC);
}

int main(void)
{
	RUN(test_cost_pct);
	RUN(test_over_budget_grows_in_one_step);
	RUN(test_under_budget);
	RUN(test_half_life);
	return TEST_EXIT();
}
