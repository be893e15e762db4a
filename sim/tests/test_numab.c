// SPDX-License-Identifier: GPL-2.0-only
/* The NUMA balancing baseline's rules against hand-computed cases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "numab.h"
#include "test.h"

#define MIB (1ull << 20)

/* task_scan_min(): max(1000 / (2560 / 256), 1000 / (RSS / 256 MB)) ms. */
static void test_scan_min(void)
{
	CHECK_EQ_U64(numab_task_scan_min_ms(128 * MIB), 1000);
	CHECK_EQ_U64(numab_task_scan_min_ms(512 * MIB), 500);
	CHECK_EQ_U64(numab_task_scan_min_ms(4096 * MIB), 100);
	CHECK_EQ_U64(numab_task_scan_min_ms(1ull << 40), 100);
}

/* Steps of 2 x 1000 / 16 = 125 ms, once per 60 s, within [125, 2000]. */
static void test_adjust_threshold(void)
{
	struct numab_th t = { 0 };
	uint64_t limit = 1000;	/* pages a second: 60000 a period */

	numab_adjust_threshold(&t, 60001, 0, limit);
	CHECK_EQ_U64(t.th_ms, 1125);
	numab_adjust_threshold(&t, 60002, 1000000, limit);
	CHECK_EQ_U64(t.th_ms, 1125);		/* same period */
	numab_adjust_threshold(&t, 120002, 1000000, limit);
	CHECK_EQ_U64(t.th_ms, 1000);		/* 1e6 > 66000 candidates */
	numab_adjust_threshold(&t, 180003, 1000000 + 60000, limit);
	CHECK_EQ_U64(t.th_ms, 1000);		/* within 90-110 % */
	t.th_ms = 125;
	numab_adjust_threshold(&t, 240004, 3000000, limit);
	CHECK_EQ_U64(t.th_ms, 125);
	t.th_ms = 2000;
	numab_adjust_threshold(&t, 300005, 3000000, limit);
	CHECK_EQ_U64(t.th_ms, 2000);
}

/* 64 ranges with ranges 0-9 hot, three intervals. */
static int hot_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 3;
	for (int r = 0; r < 10 && !*ret_end; r++)
		acc[r] = 1000000;
	return 0;
}

/* The same ten ranges hot over eight intervals. */
static int hot_fill_long(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 8;
	for (int r = 0; r < 10 && !*ret_end; r++)
		acc[r] = 1000000;
	return 0;
}

/* Ranges 0-9 hot for 2 s, then 20-29. */
static int moving_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 8;
	for (int r = 0; r < 10 && !*ret_end; r++)
		acc[i < 2 ? r : 20 + r] = 1000000;
	return 0;
}

/* Ranges 0-3 hot throughout, 10-13 from 3 s on. */
static int late_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 8;
	for (int r = 0; r < 4 && !*ret_end; r++)
		acc[r] = 1000000;
	for (int r = 10; r < 14 && i >= 3 && !*ret_end; r++)
		acc[r] = 1000000;
	return 0;
}

/*
 * NUMA balancing over a 128 MiB task (64 ranges, one 2 MiB THP each, one
 * scan window a pass) for @intervals of 1 s, on a fast node of @fast_mib
 * over an 8 GiB slow one, a promotion costing 1000 + 500 ns + 2 MiB at
 * @copy_gbps; each interval's placement to @placement unless NULL.  0 with
 * @res filled (free with sim_result_free()).
 */
static int run_numab(int (*fill)(void *, uint64_t, uint32_t *, bool *),
		     uint64_t fast_mib, double copy_gbps, uint64_t intervals,
		     FILE *placement, struct sim_result *res)
{
	static const uint16_t tenant[64];
	struct sim_machine m = {
		.name = "t", .base_page_bytes = 4096, .thp_bytes = 2 * MIB,
		.nr_nodes = 2,
		.nodes = {
			{ .id = 0, .tier = 0, .capacity_bytes = fast_mib * MIB,
			  .latency_ns = 100, .bandwidth_gbps = 10 },
			{ .id = 1, .tier = 1, .capacity_bytes = 8192 * MIB,
			  .latency_ns = 300, .bandwidth_gbps = 2 },
		},
	};
	uint64_t budget = 0;
	struct sim_setup s = { .m = &m, .range_bytes = 2 * MIB,
			       .interval_ns = 1000000000, .nr_ranges = 64,
			       .nr_tenants = 1, .range_tenant = tenant,
			       .budget_bytes = &budget, .seed = 1 };
	struct sim_run run = { .s = &s, .sys = &sim_sys_numab,
			       .src = { .fill = fill }, .max_intervals = intervals,
			       .placement = placement };

	m.mig[0] = (struct sim_migcost){ .call_ns = 7777, .folio_ns = 500,
					 .copy_gbps = copy_gbps, .copy_threads = 1 };
	m.mig[1] = m.mig[0];
	return sim_engine_run(&run, res);
}

/*
 * The first scan at 1000 ms arms all 64 slow ranges (256 MB a scan); the
 * fast node is empty, so every fault promotes (pgdat_free_space_enough()).
 * Interval 0 moves nothing; interval 1 promotes the 10 hot ranges, one
 * fault each: 1000 + 500 + 1048576 ns.
 */
static void test_first_scan_promotes(void)
{
	struct sim_result res;

	CHECK_EQ_INT(run_numab(hot_fill, 8192, 2, 10, NULL, &res), 0);
	CHECK_EQ_U64(res.bytes_migrated, 10 * 2 * MIB);
	CHECK_EQ_U64(res.stall_ns, 10 * (1000 + 500 + 1048576));
	CHECK_EQ_INT(res.t90_ns, 2000000000);
	CHECK(!res.over_capacity && !res.pages_lost);
	sim_result_free(&res);
}

/*
 * A 512 MiB fast node is never free enough to promote every fault
 * (pgdat_free_space_enough()), so a fault promotes only within the hot
 * threshold (1000 ms) of its range's arming.  The scan at 1000 ms arms
 * all 64 ranges; 0-3 promote at once, the first promotion of pass 1, so
 * the period doubles to 2000 ms and the next scan comes at about 3000 ms
 * (update_task_scan_period()).  That scan leaves 10-13 armed with their
 * 1000 ms stamp (change_pte_range() skips a PTE already PROT_NONE), so
 * their first faults, in [3000, 4000) ms, come 2000 ms late and do not
 * promote, and disarm them; the scan at about 5000 ms arms them again and
 * they promote in [5000, 6000) ms.  A scan every 1000 ms, or one that
 * stamped armed ranges afresh, would promote them in [3000, 4000) ms.
 */
static void test_scan_slows_down(void)
{
	struct sim_result res;

	CHECK_EQ_U64(numab_task_scan_max_ms(128 * MIB), 60000);
	CHECK_EQ_U64(numab_task_scan_max_ms(1024 * MIB), 15000);
	CHECK_EQ_U64(numab_task_scan_max_ms(1ull << 40), 100);
	CHECK_EQ_INT(run_numab(late_fill, 512, 2, 5, NULL, &res), 0);
	CHECK_EQ_U64(res.bytes_migrated, 4 * 2 * MIB);	/* 0-3 only, by 5 s */
	sim_result_free(&res);
	CHECK_EQ_INT(run_numab(late_fill, 512, 2, 6, NULL, &res), 0);
	CHECK_EQ_U64(res.bytes_migrated, 8 * 2 * MIB);	/* 10-13 in [5, 6) s */
	sim_result_free(&res);
}

/*
 * Ten hot ranges, armed at 1000 ms, all fault at once; a promotion costs
 * 1000 + 500 + 2 MiB at 0.007 GB/s = 301 ms, so three fit an interval.
 * The threads wait for their faults' migrations (do_numa_page()): three
 * promote in each of [1, 2), [2, 3) and [3, 4) s, the tenth in [4, 5) s.
 * A model that dropped the seven faults that did not fit would wait for
 * the next scan (about 3000 ms, the period doubled) to arm them again,
 * and have fewer by 4 s.
 */
static void test_fault_waits_for_copy(void)
{
	struct sim_result res;

	CHECK_EQ_INT(run_numab(hot_fill_long, 8192, 0.007, 4, NULL, &res), 0);
	CHECK_EQ_U64(res.bytes_migrated, 9 * 2 * MIB);
	sim_result_free(&res);
	CHECK_EQ_INT(run_numab(hot_fill_long, 8192, 0.007, 5, NULL, &res), 0);
	CHECK_EQ_U64(res.bytes_migrated, 10 * 2 * MIB);
	sim_result_free(&res);
}

/*
 * The same copy speed, the hot set moving from 0-9 to 20-29 at 2 s.  In
 * [1, 2) s 0-2 promote and 3-9 wait; at 2 s the threads touch only 20-29,
 * armed since 1000 ms, so 20-22 promote in [2, 3) s and 3-9 stay armed on
 * the slow node for a later access.  Serving 3-9's faults first would
 * leave 20-29 all on the slow node at 3 s.
 */
static void test_faults_follow_accesses(void)
{
	struct sim_result res;
	char *buf = NULL, *last;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	CHECK_EQ_INT(run_numab(moving_fill, 8192, 0.007, 3, f, &res), 0);
	CHECK_EQ_U64(res.bytes_migrated, 6 * 2 * MIB);
	sim_result_free(&res);
	fclose(f);
	/* "numa_balancing 3.000000 NODES HOT": the nodes after [2, 3) s. */
	last = strstr(buf, "numa_balancing 3.000000 ");
	CHECK(last != NULL);
	last += strlen("numa_balancing 3.000000 ");
	CHECK(!strncmp(last, "0001111111", 10));		/* ranges 0-9 */
	CHECK(!strncmp(last + 20, "0001111111", 10));	/* ranges 20-29 */
	free(buf);
}

int main(void)
{
	RUN(test_scan_min);
	RUN(test_adjust_threshold);
	RUN(test_first_scan_promotes);
	RUN(test_scan_slows_down);
	RUN(test_fault_waits_for_copy);
	RUN(test_faults_follow_accesses);
	return TEST_EXIT();
}
