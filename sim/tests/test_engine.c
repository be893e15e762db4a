// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine against hand-computed cases.  Machine: a fast node of two
 * 2 MiB ranges at 100 ns, a slow node of four at 300 ns; one move_pages()
 * call costs 1000 ns + 500 ns a folio + 1 ns per 2 bytes, and a 2 MiB range
 * is one THP folio: 500 + 1048576 = 1049076 ns a range.  The patched
 * kernel's call costs 400 ns, the rest the same.
 */
#include <errno.h>
#include <string.h>

#include "engine.h"
#include "test.h"

#define MIB (1ull << 20)
#define RANGE_NS 1049076ull

static struct sim_machine machine(void)
{
	struct sim_machine m = {
		.name = "t", .base_page_bytes = 4096, .thp_bytes = 2 * MIB,
		.nr_nodes = 2,
		.nodes = {
			{ .id = 0, .tier = 0, .capacity_bytes = 4 * MIB,
			  .latency_ns = 100, .bandwidth_gbps = 10 },
			{ .id = 1, .tier = 1, .capacity_bytes = 8 * MIB,
			  .latency_ns = 300, .bandwidth_gbps = 2, .cpuless = true },
		},
	};

	m.mig[0] = (struct sim_migcost){ .call_ns = 1000, .folio_ns = 500,
					 .copy_gbps = 2, .copy_threads = 1 };
	m.mig[1] = m.mig[0];
	m.mig[1].call_ns = 400;
	return m;
}

/* Two intervals of {10, 0, 5} accesses. */
static int table_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 2;
	if (!*ret_end) {
		acc[0] = 10;
		acc[2] = 5;
	}
	return 0;
}

/* A scripted system: interval i asks for script[i][0..n). */
struct script {
	struct sim_move moves[2][3];
	uint32_t n[2];
};

static int script_init(void **ret, const struct sim_setup *s)
{
	*ret = NULL;
	return 0;
}

static const struct script *the_script;

static int script_decide(void *st, const struct sim_view *v,
			 struct sim_move *moves, uint32_t max, uint32_t *ret_n)
{
	*ret_n = the_script->n[v->interval];
	memcpy(moves, the_script->moves[v->interval],
	       *ret_n * sizeof(*moves));
	return 0;
}

static void script_destroy(void *st)
{
}

static const struct sim_system script_sys = {
	.name = "script", .init = script_init, .decide = script_decide,
	.destroy = script_destroy,
};

static struct sim_result run_source(const struct sim_system *sys,
				    int (*fill)(void *, uint64_t, uint32_t *, bool *),
				    uint64_t budget, uint64_t interval_ns)
{
	static const uint16_t tenant[3];
	struct sim_machine m = machine();
	uint64_t budgets[1] = { budget };
	struct sim_setup s = { .m = &m, .range_bytes = 2 * MIB,
			       .interval_ns = interval_ns, .nr_ranges = 3,
			       .nr_tenants = 1, .range_tenant = tenant,
			       .budget_bytes = budgets };
	struct sim_run r = { .s = &s, .sys = sys,
			     .src = { .fill = fill },
			     .max_intervals = 100 };
	struct sim_result res;

	CHECK_EQ_INT(sim_engine_run(&r, &res), 0);
	CHECK(!res.over_capacity && !res.pages_lost && !res.over_budget);
	return res;
}

static struct sim_result run(const struct sim_system *sys, uint64_t budget,
			     uint64_t interval_ns)
{
	return run_source(sys, table_fill, budget, interval_ns);
}

static void test_none(void)
{
	struct sim_result res = run(sim_system_find("none"), 0, 10000000);

	CHECK_EQ_U64(res.intervals, 2);
	CHECK_EQ_U64(res.accesses, 30);
	CHECK(res.access_ns == 30 * 300);
	CHECK(res.dram_ns == 30 * 100);
	CHECK_EQ_INT(res.t50_ns, -1);
	CHECK_EQ_U64(res.bytes_migrated, 0);
	sim_result_free(&res);
}

/* Interval 0 promotes both hot ranges in one call, at the patched
 * kernel's costs; interval 1 runs fast. */
static void test_oracle(void)
{
	struct sim_result res = run(sim_system_find("oracle"), 0, 10000000);

	CHECK(res.access_ns == 15 * 300 + 15 * 100);
	CHECK_EQ_U64(res.stall_ns, 400 + 2 * RANGE_NS);
	CHECK_EQ_U64(res.bytes_migrated, 4 * MIB);
	CHECK_EQ_U64(res.bytes_pingpong, 0);
	CHECK_EQ_INT(res.t50_ns, 10000000);
	CHECK_EQ_INT(res.t90_ns, 10000000);
	CHECK_EQ_INT(res.u90, -1);	/* no clock of its own */
	sim_result_free(&res);
}

/* Two intervals of {10, 3, 2}: buckets 8-15 (one range) and 2-3 (two). */
static int bucket_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 2;
	if (!*ret_end) {
		acc[0] = 10;
		acc[1] = 3;
		acc[2] = 2;
	}
	return 0;
}

/*
 * The fast node holds two ranges: the oracle's target is range 0's bucket
 * alone (the next bucket's two would not fit), and the room left stays
 * free; oracle-fill moves range 2 into it too (the bucket's last range
 * first), in the same call: interval 1 reads 10 + 2 accesses at 100 ns.
 */
static void test_oracle_fill(void)
{
	struct sim_result o = run_source(sim_system_find("oracle"), bucket_fill, 0, 10000000);
	struct sim_result f = run_source(sim_system_find("oracle-fill"), bucket_fill, 0,
					 10000000);

	CHECK_EQ_U64(o.bytes_migrated, 2 * MIB);
	CHECK(o.access_ns == 15 * 300 + 10 * 100 + 5 * 300);
	CHECK_EQ_U64(o.stall_ns, 400 + RANGE_NS);
	CHECK_EQ_U64(f.bytes_migrated, 4 * MIB);
	CHECK(f.access_ns == 15 * 300 + 12 * 100 + 3 * 300);
	CHECK_EQ_U64(f.stall_ns, 400 + 2 * RANGE_NS);
	CHECK_EQ_U64(f.bytes_pingpong, 0);
	sim_result_free(&o);
	sim_result_free(&f);
}

/* Four intervals: range 0 hot in the first two, range 2 in the last two. */
static int move_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 4;
	if (!*ret_end)
		acc[i < 2 ? 0 : 2] = 10;
	return 0;
}

/*
 * A budget of one range, and the hot range moves: the oracle promotes
 * range 0 for interval 1, then, its budget full, demotes range 0 and
 * promotes range 2 for interval 2, in that order.  Interval 0 reads
 * 10 x 300 ns, the others 10 x 100 ns.
 */
static void test_oracle_budget(void)
{
	struct sim_result res = run_source(sim_system_find("oracle"), move_fill, 2 * MIB,
					   10000000);

	CHECK(res.access_ns == 10 * 300 + 3 * 10 * 100);
	CHECK_EQ_U64(res.bytes_migrated, 6 * MIB);
	CHECK_EQ_U64(res.bytes_pingpong, 2 * MIB);
	CHECK_EQ_U64(res.tenants[0].max_fast_bytes, 2 * MIB);
	sim_result_free(&res);
}

/* Three intervals: {10, 0, 5}, nothing, {10, 0, 5}. */
static int gap_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 3;
	if (!*ret_end && i != 1) {
		acc[0] = 10;
		acc[2] = 5;
	}
	return 0;
}

/* A sampler that sees range 0 in the first interval only, and range 2
 * never; each call costs 1 ms of CPU (10% of a 10 ms interval). */
static struct sim_rate blind_rate;

static void blind_sample(void *st, const uint32_t *acc, uint32_t n, uint32_t *seen,
			 uint64_t *cost_ns)
{
	int *calls = st;

	memset(seen, 0, n * sizeof(*seen));
	if (!(*calls)++)
		seen[0] = acc[0];
	blind_rate.cost_ns += 1000000;
	*cost_ns += 1000000;
}

/*
 * oracle-seen knows the next interval's accesses of the ranges its
 * sampler has named, ever: range 0, seen in interval 0 and idle in
 * interval 1, moves at the end of interval 1 for interval 2 (10 x 100 ns
 * there); range 2, never seen, stays slow (5 x 300 ns in intervals 0 and
 * 2).  The oracle moves both.  The period goes as tierd's source sets it:
 * 10% of a CPU is over the 2% budget, so longer.
 */
static void test_oracle_seen(void)
{
	static const uint16_t tenant[3];
	struct sim_machine m = machine();
	uint64_t budgets[1] = { 0 };
	struct sim_setup s = { .m = &m, .range_bytes = 2 * MIB, .interval_ns = 10000000,
			       .nr_ranges = 3, .nr_tenants = 1, .range_tenant = tenant,
			       .budget_bytes = budgets };
	int calls = 0;
	struct sim_sampler blind = { .name = "blind", .state = &calls, .rate = &blind_rate,
				     .sample = blind_sample };
	struct sim_run r = { .s = &s, .sys = sim_system_find("oracle-seen"),
			     .src = { .fill = gap_fill }, .sampler = &blind,
			     .max_intervals = 100 };
	struct sim_result res;

	blind_rate = (struct sim_rate){ .period = 10007 };
	CHECK(r.sys != NULL);
	CHECK_EQ_INT(sim_engine_run(&r, &res), 0);
	CHECK(!res.over_capacity && !res.pages_lost && !res.over_budget);
	CHECK(res.access_ns == 15 * 300 + 10 * 100 + 5 * 300);
	CHECK_EQ_U64(res.bytes_migrated, 2 * MIB);
	CHECK_EQ_U64(res.stall_ns, 400 + RANGE_NS);
	CHECK(blind_rate.period > 10007);
	CHECK_EQ_U64(blind_rate.cost_ns, 0);
	sim_result_free(&res);
}

static void test_all_dram(void)
{
	struct sim_result res = run(sim_system_find("all-dram"), 0, 10000000);

	CHECK(res.access_ns == res.dram_ns);
	CHECK_EQ_INT(res.t90_ns, 0);
	sim_result_free(&res);
}

/* @sys over a script of one move an interval: @first, then @second. */
static struct sim_result run_two_moves(const struct sim_system *sys, struct sim_move first,
				       struct sim_move second)
{
	static struct script sc = { .n = { 1, 1 } };

	sc.moves[0][0] = first;
	sc.moves[1][0] = second;
	the_script = &sc;
	return run(sys, 0, 10000000);
}

/* Up and back down: the second move of range 0 is ping-pong. */
static void test_pingpong(void)
{
	struct sim_result res = run_two_moves(&script_sys,
					      (struct sim_move){ .range = 0, .node = 0 },
					      (struct sim_move){ .range = 0, .node = 1 });

	CHECK_EQ_U64(res.bytes_migrated, 4 * MIB);
	CHECK_EQ_U64(res.bytes_pingpong, 2 * MIB);
	CHECK_EQ_U64(res.stall_ns, 2 * (1000 + RANGE_NS));
	CHECK_EQ_U64(res.tenants[0].max_fast_bytes, 2 * MIB);
	sim_result_free(&res);
}

/* A system with a clock of its own: three ticks an interval. */
static uint64_t ticks;

static int ticking_decide(void *st, const struct sim_view *v,
			  struct sim_move *moves, uint32_t max, uint32_t *ret_n)
{
	ticks += 3;
	return script_decide(st, v, moves, max, ret_n);
}

static uint64_t ticking_units(void *st)
{
	return ticks;
}

static const struct sim_system ticking_sys = {
	.name = "ticking", .init = script_init, .decide = ticking_decide,
	.destroy = script_destroy, .unit = "ticks", .units = ticking_units,
};

/*
 * Range 0 (10 of 15 accesses) promoted in interval 0, range 2 in
 * interval 1: the hot set is half on the fast tier from interval 1, whole
 * from interval 2 (which never comes), in the clock the system had then.
 */
static void test_units(void)
{
	struct sim_result res;

	ticks = 0;
	res = run_two_moves(&ticking_sys, (struct sim_move){ .range = 0, .node = 0 },
			    (struct sim_move){ .range = 2, .node = 0 });
	CHECK_EQ_INT(res.t50_ns, 10000000);
	CHECK_EQ_INT(res.u50, 3);
	CHECK_EQ_INT(res.t90_ns, -1);
	CHECK_EQ_INT(res.u90, -1);
	sim_result_free(&res);
}

/* Three asked of a two-range node; a budget of one range; no time. */
static void test_refusals(void)
{
	struct script sc = { .n = { 3, 0 } };
	struct sim_result res;

	for (uint32_t r = 0; r < 3; r++)
		sc.moves[0][r] = (struct sim_move){ .range = r, .node = 0 };
	the_script = &sc;
	res = run(&script_sys, 0, 10000000);
	CHECK_EQ_U64(res.moves_refused, 1);
	CHECK_EQ_U64(res.bytes_migrated, 4 * MIB);
	sim_result_free(&res);
	res = run(&script_sys, 2 * MIB, 10000000);
	CHECK_EQ_U64(res.moves_refused, 2);
	CHECK_EQ_U64(res.tenants[0].max_fast_bytes, 2 * MIB);
	sim_result_free(&res);
	/* 1.5 ms holds one call of one range (1050076 ns), not two. */
	res = run(&script_sys, 0, 1500000);
	CHECK_EQ_U64(res.moves_refused, 2);
	CHECK_EQ_U64(res.stall_ns, 1000 + RANGE_NS);
	sim_result_free(&res);
}

/* {10, 0, 5}, room for 2: buckets [8,16) and [4,8) cover 100 %. */
static void test_threshold(void)
{
	uint32_t acc[3] = { 10, 0, 5 }, none[3] = { 0 };

	CHECK_EQ_INT(sim_hot_threshold(acc, 3, 2, 0.8), 4);
	CHECK_EQ_INT(sim_hot_threshold(acc, 3, 1, 0.8), 8);
	CHECK_EQ_INT(sim_hot_threshold(acc, 3, 2, 0.5), 8);
	CHECK_EQ_INT(sim_hot_threshold(none, 3, 2, 0.8), 0);
}

/*
 * Where the footprint starts.  A fast node of 2 ranges and a slow one of
 * 4, each with room for its low watermark (TOUCH_FREE) besides; four
 * ranges, tenant 0's three then tenant 1's one.  Slowest first: all on the CPU-less node.
 * First touch: the node with CPUs first, the tenants in turn (r0, r3),
 * then the rest; with the fast node CPU-less (an HBM node), the node with
 * CPUs first all the same.
 */
static int quiet_fill(void *st, uint64_t i, uint32_t *acc, bool *ret_end)
{
	*ret_end = i >= 1;
	return 0;
}

static void check_start(bool touch, bool fast_cpuless, uint64_t t0, uint64_t t1)
{
	static const uint16_t tenant[4] = { 0, 0, 0, 1 };
	struct sim_machine m = machine();
	uint64_t budgets[2] = { 0, 0 };
	struct sim_setup s = { .m = &m, .range_bytes = 2 * MIB, .interval_ns = 10000000,
			       .nr_ranges = 4, .nr_tenants = 2, .range_tenant = tenant,
			       .budget_bytes = budgets };
	struct sim_run r = { .s = &s, .sys = sim_system_find("none"),
			     .src = { .fill = quiet_fill }, .max_intervals = 1,
			     .start_touch = touch };
	struct sim_result res;

	m.nodes[0].capacity_bytes = 4 * MIB + 16384;
	m.nodes[1].capacity_bytes = 8 * MIB + 32768;
	m.nodes[0].cpuless = fast_cpuless;
	m.nodes[1].cpuless = !fast_cpuless;
	CHECK_EQ_INT(sim_engine_run(&r, &res), 0);
	CHECK_EQ_U64(res.tenants[0].initial_fast_bytes, t0 * 2 * MIB);
	CHECK_EQ_U64(res.tenants[1].initial_fast_bytes, t1 * 2 * MIB);
	sim_result_free(&res);
}

static void test_start(void)
{
	check_start(false, false, 0, 0);
	check_start(true, false, 1, 1);
	check_start(true, true, 0, 0);
	/* Just under the watermark's room: one range. */
	{
		static const uint16_t tenant[3];
		struct sim_machine m = machine();
		uint64_t budgets[1] = { 0 };
		struct sim_setup s = { .m = &m, .range_bytes = 2 * MIB,
				       .interval_ns = 10000000, .nr_ranges = 3,
				       .nr_tenants = 1, .range_tenant = tenant,
				       .budget_bytes = budgets };
		struct sim_run r = { .s = &s, .sys = sim_system_find("none"),
				     .src = { .fill = quiet_fill }, .max_intervals = 1,
				     .start_touch = true };
		struct sim_result res;

		CHECK_EQ_INT(sim_engine_run(&r, &res), 0);
		CHECK_EQ_U64(res.tenants[0].initial_fast_bytes, 2 * MIB);
		sim_result_free(&res);
	}
}

int main(void)
{
	RUN(test_threshold);
	RUN(test_none);
	RUN(test_oracle);
	RUN(test_oracle_fill);
	RUN(test_oracle_budget);
	RUN(test_oracle_seen);
	RUN(test_all_dram);
	RUN(test_pingpong);
	RUN(test_refusals);
	RUN(test_units);
	RUN(test_start);
	return TEST_EXIT();
}
