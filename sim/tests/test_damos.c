// SPDX-License-Identifier: GPL-2.0-only
/* The DAMOS baseline: damon_hot_score() by hand, and quota-bound moves. */
#include <string.h>

#include "damos.h"
#include "engine.h"
#include "test.h"

#define MIB (1ull << 20)

/*
 * freq = nr x 100 / max; age_log = bits of (age x aggr in s), negated when
 * freq is 0, plus 32; age_sub = age_log x 100 / 32 / 2; (freq + age_sub) / 2
 * scaled by 99 / 100.
 */
static void test_hot_score(void)
{
	CHECK_EQ_INT(damos_hot_score(20, 20, 0, 100000), 74);	/* (100+50)/2 */
	CHECK_EQ_INT(damos_hot_score(0, 20, 100, 100000), 20);	/* 10 s: (0+43)/2 */
	CHECK_EQ_INT(damos_hot_score(10, 20, 30, 100000), 50);	/* 3 s: (50+53)/2 */
}

/* All 1024 ranges hot: migrate_hot's 1 GiB/s quota moves 512 a second. */
static int hot_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 1;
	for (int r = 0; r < 1024 && !*ret_end; r++)
		acc[r] = 100000000;
	return 0;
}

static void test_quota(void)
{
	static uint16_t tenant[1024];
	struct sim_machine m = {
		.name = "t", .base_page_bytes = 4096, .thp_bytes = 2 * MIB,
		.nr_nodes = 2,
		.nodes = {
			{ .id = 0, .tier = 0, .capacity_bytes = 4096 * MIB,
			  .latency_ns = 100, .bandwidth_gbps = 10 },
			{ .id = 1, .tier = 1, .capacity_bytes = 4096 * MIB,
			  .latency_ns = 300, .bandwidth_gbps = 2 },
		},
	};
	uint64_t budget = 0;
	struct sim_setup s = { .m = &m, .range_bytes = 2 * MIB,
			       .interval_ns = 1000000000, .nr_ranges = 1024,
			       .nr_tenants = 1, .range_tenant = tenant,
			       .budget_bytes = &budget, .seed = 1 };
	struct sim_run run = { .s = &s, .sys = &sim_sys_damos,
			       .src = { .fill = hot_fill }, .max_intervals = 10 };
	struct sim_result res;

	m.mig[0] = (struct sim_migcost){ .call_ns = 0, .folio_ns = 0,
					 .copy_gbps = 1000, .copy_threads = 1 };
	m.mig[1] = m.mig[0];
	CHECK_EQ_INT(sim_engine_run(&run, &res), 0);
	CHECK_EQ_U64(res.bytes_migrated, 512 * 2 * MIB);
	CHECK(!res.over_capacity && !res.pages_lost);
	sim_result_free(&res);
}

int main(void)
{
	RUN(test_hot_score);
	RUN(test_quota);
	return TEST_EXIT();
}
