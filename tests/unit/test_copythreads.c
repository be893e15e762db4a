// SPDX-License-Identifier: GPL-2.0-only
/* Copy-thread controller: fake load + fake throughput curve -> exact choices. */
#include <errno.h>

#include "copythreads.h"
#include "test.h"

#define SEC 1000000000ull
#define MiB (1ull << 20)

/* A machine where copying scales to 4 threads and then stops: MB/s. */
static uint64_t curve_mbps(unsigned int threads)
{
	switch (threads) {
	case 1: return 1000;
	case 2: return 1800;
	case 3: return 2400;
	case 4: return 3000;
	default: return 3100;	/* 8: memory bandwidth is spent */
	}
}

/* One tick that moved 128 MiB at the curve's speed for the current count. */
static struct ct_sample move_at(const struct ct_state *s)
{
	struct ct_sample sm = { .bytes = 128 * MiB };

	sm.ns = sm.bytes * 1000 / curve_mbps(s->threads);	/* bytes / (MB/s) * 1e3 = ns (MB = 1e6) */
	return sm;
}

static const struct ct_load idle_machine = {
	.psi_some_avg10_x100 = 50,	/* 0.5 % */
	.src_cpus = 0, .src_idle = 0,	/* CXL: CPU-less */
	.dst_cpus = 16, .dst_idle = 14,
};

struct step {
	unsigned int psi_x100;
	unsigned int dst_idle;
	bool moved;
	uint64_t at_s;
	unsigned int threads;	/* expected */
	enum ct_why why;	/* expected */
};

static void test_climb_plateau_busy_recover(void)
{
	/*
	 * 1 -> 2 -> 4 -> 8 while each doubling pays 10%; 8 gives 3100 vs
	 * 3000 (+3%): back to 4.  Stress: PSI 45% halves to 2, then 1, never
	 * adds.  Stress ends: straight back to 4.  A minute after the
	 * plateau: probe 8 again, back to 4.
	 */
	static const struct step steps[] = {
		{ 50, 14, false, 0, 1, CT_W_START },
		{ 50, 14, true, 1, 2, CT_W_PROBE },	/* 1000 measured */
		{ 50, 14, true, 2, 4, CT_W_PROBE },	/* 1800 > 1100 */
		{ 50, 14, true, 3, 8, CT_W_PROBE },	/* 3000 > 1980 */
		{ 50, 14, true, 4, 4, CT_W_PLATEAU },	/* 3100 < 3300 */
		{ 50, 14, true, 5, 4, CT_W_HOLD },
		{ 4500, 14, true, 6, 2, CT_W_BUSY },
		{ 4500, 14, true, 7, 1, CT_W_BUSY },
		{ 4500, 14, true, 8, 1, CT_W_HOLD },
		{ 50, 14, true, 9, 4, CT_W_RECOVER },
		{ 50, 14, true, 10, 4, CT_W_HOLD },	/* measured 3000 at 4 */
		{ 50, 14, false, 40, 4, CT_W_HOLD },	/* plateau at 4 s; reprobe at 64 s */
		{ 50, 14, false, 64, 8, CT_W_REPROBE },
		{ 50, 14, true, 65, 4, CT_W_PLATEAU },
		/* Only 3 idle CPUs on the copying side: 3 threads at most. */
		{ 50, 3, false, 66, 3, CT_W_FEW_IDLE },
		/* No idle CPU at all: busy. */
		{ 50, 0, false, 67, 1, CT_W_BUSY },
	};
	struct ct_params p;
	struct ct_state s;
	struct ct_decision d;

	ct_params_default(&p);
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct ct_load l = idle_machine;
		struct ct_sample sm = move_at(&s);

		l.psi_some_avg10_x100 = steps[i].psi_x100;
		l.dst_idle = steps[i].dst_idle;
		ct_step(&s, &p, &l, steps[i].moved ? &sm : NULL, steps[i].at_s * SEC, &d);
		if (d.threads != steps[i].threads || d.why != steps[i].why)
			fprintf(stderr, "step %zu: %u threads (%s), expected %u (%s)\n", i,
				d.threads, ct_why_name(d.why), steps[i].threads,
				ct_why_name(steps[i].why));
		CHECK_EQ_INT(d.threads, steps[i].threads);
		CHECK_EQ_INT(d.why, steps[i].why);
		CHECK(d.apply && d.mt);
		CHECK_EQ_INT(d.pull, 1);	/* source CPU-less: the target's CPUs pull */
	}
}

static void test_small_samples_wait(void)
{
	struct ct_params p;
	struct ct_state s;
	struct ct_decision d;
	struct ct_sample small = { .bytes = 16 * MiB, .ns = 16 * MiB };	/* ~1 GB/s */

	ct_params_default(&p);	/* 64 MiB per measurement */
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_step(&s, &p, &idle_machine, NULL, 0, &d);
	for (int i = 0; i < 3; i++) {
		ct_step(&s, &p, &idle_machine, &small, (i + 1) * SEC, &d);
		CHECK_EQ_INT(d.threads, 1);
		CHECK(!d.changed);
	}
	ct_step(&s, &p, &idle_machine, &small, 4 * SEC, &d);
	CHECK_EQ_INT(d.threads, 2);
	CHECK(d.changed);
	CHECK_EQ_U64(s.bps[1], 1000000000);
}

/* Starting from the kernel's default of 4: no climb above a plateau it has
 * not measured, halving under pressure, straight back after. */
static void test_start_threads(void)
{
	struct ct_params p;
	struct ct_state s;
	struct ct_decision d;
	struct ct_load busy = idle_machine;
	struct ct_sample sm;

	ct_params_default(&p);
	p.max_threads = 4;
	p.start_threads = 4;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	sm = move_at(&s);
	ct_step(&s, &p, &idle_machine, &sm, 0, &d);
	CHECK_EQ_INT(d.threads, 4);
	CHECK_EQ_INT(d.why, CT_W_START);
	CHECK(d.changed);
	busy.psi_some_avg10_x100 = 3000;
	ct_step(&s, &p, &busy, NULL, SEC, &d);
	CHECK_EQ_INT(d.threads, 2);
	ct_step(&s, &p, &busy, NULL, 2 * SEC, &d);
	CHECK_EQ_INT(d.threads, 1);
	ct_step(&s, &p, &idle_machine, NULL, 3 * SEC, &d);
	CHECK_EQ_INT(d.threads, 4);
	CHECK_EQ_INT(d.why, CT_W_RECOVER);
	/* Out of range: the minimum. */
	p.start_threads = 9;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	CHECK_EQ_INT(s.threads, 1);
}

/* Before the first migration: the start count with the copy on, pulled by
 * the CPUs of the target; the first step then corrects it from the load. */
static void test_start_before_load(void)
{
	struct ct_params p;
	struct ct_state s;
	struct ct_decision d;
	struct ct_load cpus = { .dst_cpus = 16, .dst_idle = 16 };
	struct ct_load busy = idle_machine;

	ct_params_default(&p);
	p.min_threads = 2;
	p.start_threads = 4;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_start(&s, &p, &cpus, &d);
	CHECK(d.apply && d.mt && d.changed);
	CHECK_EQ_INT(d.threads, 4);
	CHECK_EQ_INT(d.pull, 1);
	CHECK_EQ_INT(d.why, CT_W_START);
	/* Busy from the first step: halved to the minimum, not a new start. */
	busy.psi_some_avg10_x100 = 3000;
	ct_step(&s, &p, &busy, NULL, SEC, &d);
	CHECK_EQ_INT(d.threads, 2);
	CHECK_EQ_INT(d.why, CT_W_BUSY);
	ct_step(&s, &p, &busy, NULL, 2 * SEC, &d);
	CHECK(!d.changed);
	CHECK_EQ_INT(d.why, CT_W_HOLD);

	p.mode = CT_FIXED;
	p.max_threads = 6;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_start(&s, &p, &cpus, &d);
	CHECK(d.apply && d.mt);
	CHECK_EQ_INT(d.threads, 6);
	CHECK_EQ_INT(d.why, CT_W_FIXED);
	ct_step(&s, &p, &cpus, NULL, SEC, &d);
	CHECK(!d.changed);

	p.mode = CT_OFF;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_start(&s, &p, &cpus, &d);
	CHECK(!d.apply);
	CHECK_EQ_INT(d.why, CT_W_OFF);
}

static void test_modes_and_sides(void)
{
	struct ct_params p;
	struct ct_state s;
	struct ct_decision d;
	struct ct_load l = { .src_cpus = 8, .src_idle = 6, .dst_cpus = 0 };

	ct_params_default(&p);
	p.mode = CT_FIXED;
	p.max_threads = 6;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_step(&s, &p, &l, NULL, 0, &d);
	CHECK(d.apply && d.changed);
	CHECK_EQ_INT(d.threads, 6);
	CHECK_EQ_INT(d.why, CT_W_FIXED);
	CHECK_EQ_INT(d.pull, 0);	/* demotion to a CPU-less node: push */
	ct_step(&s, &p, &l, NULL, SEC, &d);
	CHECK(!d.changed);

	p.mode = CT_OFF;
	ct_step(&s, &p, &l, NULL, 0, &d);
	CHECK(!d.apply);
	CHECK_EQ_INT(d.why, CT_W_OFF);

	/* Both sides have CPUs: the one with more idle. */
	p.mode = CT_AUTO;
	l = (struct ct_load){ .src_cpus = 8, .src_idle = 2, .dst_cpus = 8, .dst_idle = 5 };
	ct_step(&s, &p, &l, NULL, 0, &d);
	CHECK_EQ_INT(d.pull, 1);
	l.src_idle = 5;
	ct_step(&s, &p, &l, NULL, 0, &d);
	CHECK_EQ_INT(d.pull, 0);
	/* Neither (CXL to HBM): the daemon's node's idle CPUs bound it. */
	l = (struct ct_load){ .local_idle = 2 };
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	s.threads = 8;
	ct_step(&s, &p, &l, NULL, 0, &d);
	CHECK_EQ_INT(d.pull, -1);
	CHECK_EQ_INT(d.threads, 2);
	CHECK_EQ_INT(d.why, CT_W_FEW_IDLE);

	p.min_threads = 0;
	CHECK_EQ_INT(ct_init(&s, &p), -EINVAL);
	p.min_threads = 4;
	p.max_threads = 2;
	CHECK_EQ_INT(ct_init(&s, &p), -EINVAL);
	CHECK_EQ_STR(ct_why_name(CT_W_RECOVER), "recover");
}

/*
 * The kernel takes no more threads than nr_cpu_ids: on a 2-CPU machine a
 * fixed 16 is 2, auto climbs 1 -> 2 and no further with 14 idle CPUs on
 * the target, and a min of 4 is 2 even under pressure.  An unknown limit
 * (0) or one above max bounds nothing.
 */
static void test_cpu_limit(void)
{
	struct ct_params p;
	struct ct_state s;
	struct ct_decision d;
	struct ct_load busy = idle_machine;
	struct ct_sample sm;

	ct_params_default(&p);
	p.mode = CT_FIXED;
	p.min_threads = 4;
	p.max_threads = 16;
	p.cpu_limit = 2;
	CHECK_EQ_INT(ct_max_threads(&p), 2);
	CHECK_EQ_INT(ct_min_threads(&p), 2);
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_start(&s, &p, &idle_machine, &d);
	CHECK_EQ_INT(d.threads, 2);
	CHECK_EQ_INT(d.why, CT_W_FIXED);
	ct_step(&s, &p, &idle_machine, NULL, SEC, &d);
	CHECK_EQ_INT(d.threads, 2);
	CHECK(!d.changed);
	p.cpu_limit = 0;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_start(&s, &p, &idle_machine, &d);
	CHECK_EQ_INT(d.threads, 16);
	p.cpu_limit = 32;
	CHECK_EQ_INT(ct_max_threads(&p), 16);
	CHECK_EQ_INT(ct_min_threads(&p), 4);

	/* Auto, min 1: the climb stops at the limit, start count included. */
	p.mode = CT_AUTO;
	p.min_threads = 1;
	p.cpu_limit = 2;
	p.start_threads = 4;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	ct_start(&s, &p, &idle_machine, &d);
	CHECK_EQ_INT(d.threads, 1);
	for (uint64_t t = 1; t <= 4; t++) {
		sm = move_at(&s);
		ct_step(&s, &p, &idle_machine, &sm, t * SEC, &d);
		CHECK_EQ_INT(d.threads, 2);
	}
	/* Long past the reprobe time: still 2. */
	sm = move_at(&s);
	ct_step(&s, &p, &idle_machine, &sm, 600 * SEC, &d);
	CHECK_EQ_INT(d.threads, 2);

	/* Auto, min 4 above the limit: 2 whatever the load. */
	p.min_threads = 4;
	p.start_threads = 0;
	CHECK_EQ_INT(ct_init(&s, &p), 0);
	CHECK_EQ_INT(s.threads, 2);
	busy.psi_some_avg10_x100 = 9000;
	ct_step(&s, &p, &busy, NULL, SEC, &d);
	CHECK_EQ_INT(d.threads, 2);
	ct_step(&s, &p, &idle_machine, NULL, 2 * SEC, &d);
	CHECK_EQ_INT(d.threads, 2);
}

int main(void)
{
	RUN(test_climb_plateau_busy_recover);
	RUN(test_small_samples_wait);
	RUN(test_start_threads);
	RUN(test_start_before_load);
	RUN(test_modes_and_sides);
	RUN(test_cpu_limit);
	return TEST_EXIT();
}
