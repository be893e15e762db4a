// SPDX-License-Identifier: GPL-2.0-only
/* Generators and the trace source against hand-computed intervals. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "source.h"
#include "test.h"

#define MIB (1ull << 20)

struct got {
	struct sim_source src;
	struct sim_layout l;
	uint32_t acc[64];
};

static int make(struct got *g, const char *spec, uint64_t seed)
{
	char err[SIM_ERR_LEN];
	int r;

	memset(g, 0, sizeof(*g));
	r = sim_gen_create(spec, 2 * MIB, 1000000000, seed, &g->src, &g->l, err);
	if (r)
		fprintf(stderr, "%s\n", err);
	return r;
}

static void fill(struct got *g, uint64_t i)
{
	bool end;

	memset(g->acc, 0, sizeof(g->acc));
	CHECK_EQ_INT(g->src.fill(g->src.state, i, g->acc, &end), 0);
	CHECK(!end);
}

static void done(struct got *g)
{
	sim_gen_destroy(&g->src);
	sim_layout_free(&g->l);
}

static uint32_t count_eq(const uint32_t *a, uint32_t n, uint32_t v)
{
	uint32_t c = 0;

	for (uint32_t i = 0; i < n; i++)
		c += a[i] == v;
	return c;
}

/* 10 ranges, 2 hot, 1000 accesses a second, no cold share: 500 each. */
static void test_uniform(void)
{
	struct got g;

	CHECK_EQ_INT(make(&g, "uniform:footprint=20M,hot=0.2,cold=0,rate=1000", 1), 0);
	CHECK_EQ_INT(g.l.nr_ranges, 10);
	fill(&g, 0);
	CHECK_EQ_INT(count_eq(g.acc, 10, 500), 2);
	CHECK_EQ_INT(count_eq(g.acc, 10, 0), 8);
	done(&g);
}

/* Two ranges, alpha 1: weights 1 and 1/2 of 1.5, so 2000 and 1000. */
static void test_zipf(void)
{
	struct got g;

	CHECK_EQ_INT(make(&g, "zipf:footprint=4M,alpha=1,rate=3000", 7), 0);
	fill(&g, 0);
	CHECK((g.acc[0] == 2000 && g.acc[1] == 1000) ||
	      (g.acc[0] == 1000 && g.acc[1] == 2000));
	done(&g);
}

/* The hot pair moves every 2 s: interval 2's hot ranges differ from 0's. */
static void test_shift(void)
{
	uint32_t first[64];
	struct got g;

	CHECK_EQ_INT(make(&g, "shift:footprint=20M,hot=0.2,cold=0,rate=1000,shift=2", 3), 0);
	fill(&g, 0);
	memcpy(first, g.acc, sizeof(first));
	fill(&g, 1);
	CHECK(!memcmp(first, g.acc, sizeof(first)));
	fill(&g, 2);
	CHECK_EQ_INT(count_eq(g.acc, 10, 500), 2);
	for (int r = 0; r < 10; r++)
		CHECK(!(first[r] == 500 && g.acc[r] == 500));
	done(&g);
}

/* 8 cold ranges read over 4 s from t=0: two a second, 512 pages each. */
static void test_scan(void)
{
	struct got g;

	CHECK_EQ_INT(make(&g, "scan:footprint=20M,hot=0.2,cold=0,rate=1000,scan_at=0,scan_s=4,seconds=8", 3), 0);
	for (int i = 0; i < 4; i++) {
		fill(&g, i);
		CHECK_EQ_INT(count_eq(g.acc, 10, 512), 2);
		CHECK_EQ_INT(count_eq(g.acc, 10, 500), 2);
	}
	fill(&g, 4);
	CHECK_EQ_INT(count_eq(g.acc, 10, 512), 0);
	done(&g);
}

/* Two tenants of 4 ranges, hot 0.5: 2 hot each; budgets 1 and 2 ranges. */
static void test_tenants(void)
{
	struct got g;

	CHECK_EQ_INT(make(&g, "tenants:footprint=16M,tenants=2,hot=0.5,cold=0,rate=1000", 3), 0);
	CHECK_EQ_INT(g.l.nr_tenants, 2);
	CHECK_EQ_U64(g.l.budget_bytes[0], 2 * MIB);
	CHECK_EQ_U64(g.l.budget_bytes[1], 4 * MIB);
	CHECK_EQ_STR(g.l.tenant_names[1], "/gen/t1");
	fill(&g, 0);
	CHECK_EQ_INT(count_eq(g.acc, 4, 250), 2);
	CHECK_EQ_INT(count_eq(g.acc + 4, 4, 250), 2);
	CHECK_EQ_INT(g.l.range_tenant[5], 1);
	done(&g);
}

/* The same with move=2: each tenant's other two ranges are hot from 2 s
 * on, and its first two again from 4 s. */
static void test_tenants_move(void)
{
	uint32_t first[8];
	struct got g;

	CHECK_EQ_INT(make(&g, "tenants:footprint=16M,tenants=2,hot=0.5,cold=0,rate=1000,move=2", 3), 0);
	fill(&g, 1);
	memcpy(first, g.acc, sizeof(first));
	CHECK_EQ_INT(count_eq(first, 4, 250), 2);
	CHECK_EQ_INT(count_eq(first + 4, 4, 250), 2);
	fill(&g, 2);
	for (int r = 0; r < 8; r++)
		CHECK_EQ_INT(g.acc[r], first[r] ? 0 : 250);
	fill(&g, 4);
	CHECK(!memcmp(g.acc, first, sizeof(first)));
	done(&g);
}

static void test_deterministic(void)
{
	uint32_t a[64];
	struct got g;

	CHECK_EQ_INT(make(&g, "zipf:footprint=100M,rate=12345", 42), 0);
	fill(&g, 0);
	memcpy(a, g.acc, sizeof(a));
	done(&g);
	CHECK_EQ_INT(make(&g, "zipf:footprint=100M,rate=12345", 42), 0);
	fill(&g, 0);
	CHECK(!memcmp(a, g.acc, sizeof(a)));
	done(&g);
	CHECK_EQ_INT(make(&g, "zipf:footprint=100M,rate=12345", 43), 0);
	fill(&g, 0);
	CHECK(memcmp(a, g.acc, sizeof(a)));
	done(&g);
}

static void test_bad_spec(void)
{
	struct sim_source src = { 0 };
	struct sim_layout l;
	char err[SIM_ERR_LEN];

	CHECK_EQ_INT(sim_gen_create("zipf:colour=red", 2 * MIB, 1000, 1, &src, &l, err),
		     -EINVAL);
	CHECK_EQ_STR(err, "--gen zipf:colour=red: colour: unknown key");
	sim_gen_destroy(&src);
	CHECK_EQ_INT(sim_gen_create("zipf:hot=2", 2 * MIB, 1000, 1, &src, &l, err),
		     -EINVAL);
	CHECK_EQ_STR(err, "--gen zipf:hot=2: hot: bad value");
	sim_gen_destroy(&src);
	CHECK_EQ_INT(sim_gen_create("normal", 2 * MIB, 1000, 1, &src, &l, err), -EINVAL);
	CHECK_EQ_STR(err, "--gen normal: unknown generator 'normal'");
	sim_gen_destroy(&src);
}

/*
 * 512 pages a range: /a's pages 0 and 600 are ranges 0 and 1, /b's page 5
 * range 2.  With 1 ms intervals, t=1500 us falls in interval 1.
 */
static void test_trace_source(void)
{
	struct sim_trace t = { 0 };
	struct sim_rec recs[] = {
		{ .time_us = 0, .page = 0, .accesses = 3, .tenant = 0 },
		{ .time_us = 10, .page = 600, .accesses = 4, .tenant = 0 },
		{ .time_us = 10, .page = 1, .accesses = 2, .tenant = 0 },
		{ .time_us = 1500, .page = 5, .accesses = 9, .tenant = 1 },
	};
	struct sim_source src;
	struct sim_layout l;
	uint32_t acc[3] = { 0 };
	bool end;

	sim_trace_tenant(&t, "/a");
	sim_trace_tenant(&t, "/b");
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_INT(sim_trace_add(&t, &recs[i]), 0);
	CHECK_EQ_INT(sim_trace_source(&t, 4096, 2 * MIB, 1000000, 0, &src, &l), 0);
	CHECK_EQ_INT(l.nr_ranges, 3);
	CHECK_EQ_INT(l.range_tenant[2], 1);
	CHECK_EQ_INT(src.fill(src.state, 0, acc, &end), 0);
	CHECK(!end && acc[0] == 5 && acc[1] == 4 && acc[2] == 0);
	memset(acc, 0, sizeof(acc));
	CHECK_EQ_INT(src.fill(src.state, 1, acc, &end), 0);
	CHECK(!end && acc[0] == 0 && acc[2] == 9);
	CHECK_EQ_INT(src.fill(src.state, 2, acc, &end), 0);
	CHECK(end);
	sim_trace_source_destroy(&src);
	sim_layout_free(&l);
	sim_trace_free(&t);
}

/*
 * The same trace looped for 5 ms: a pass lasts 2000 us (its last record's
 * time), so intervals 2 and 4 replay interval 0, 3 replays interval 1,
 * and 5 is past the loop.
 */
static void test_trace_loop(void)
{
	struct sim_trace t = { 0 };
	struct sim_rec recs[] = {
		{ .time_us = 0, .page = 0, .accesses = 3, .tenant = 0 },
		{ .time_us = 1500, .page = 600, .accesses = 9, .tenant = 0 },
		{ .time_us = 2000, .page = 600, .accesses = 0, .tenant = 0 },
	};
	struct sim_source src;
	struct sim_layout l;
	uint32_t acc[2];
	bool end;

	sim_trace_tenant(&t, "/a");
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ_INT(sim_trace_add(&t, &recs[i]), 0);
	CHECK_EQ_INT(sim_trace_source(&t, 4096, 2 * MIB, 1000000, 5000000, &src, &l), 0);
	for (uint64_t i = 0; i < 5; i++) {
		memset(acc, 0, sizeof(acc));
		CHECK_EQ_INT(src.fill(src.state, i, acc, &end), 0);
		CHECK(!end);
		CHECK_EQ_INT(acc[0], i % 2 ? 0 : 3);
		CHECK_EQ_INT(acc[1], i % 2 ? 9 : 0);
	}
	CHECK_EQ_INT(src.fill(src.state, 5, acc, &end), 0);
	CHECK(end);
	sim_trace_source_destroy(&src);
	sim_layout_free(&l);
	sim_trace_free(&t);
}

int main(void)
{
	RUN(test_uniform);
	RUN(test_zipf);
	RUN(test_shift);
	RUN(test_scan);
	RUN(test_tenants);
	RUN(test_tenants_move);
	RUN(test_deterministic);
	RUN(test_bad_spec);
	RUN(test_trace_source);
	RUN(test_trace_loop);
	return TEST_EXIT();
}
