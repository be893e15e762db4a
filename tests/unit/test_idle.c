// SPDX-License-Identifier: GPL-2.0-only
/*
 * Idle memory (core/idle) and candidate selection's idle pass
 * (core/cand_idle.c) without the kernel: a set of idle ranges, a hotness
 * table holding the touched set, a fake node query over 64 MiB of one
 * process, a two-tier topology.  Idle memory becomes cold candidates of
 * heat 0 only when it has been idle long enough, only in whole 2 MiB
 * ranges, never where the table holds heat, only for tracked processes,
 * within the reserve and from where the last tick stopped; memory already
 * on the slow node costs a sample of 16 pages and is remembered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "idle.h"
#include "test.h"
#include "test_geom.h"

#define SEC 1000000000ull
#define MIB (1ull << 20)
#define PG 4096ull
#define PID 77
#define BASE 0x40000000ull
#define SPAN_PAGES 16384 /* 64 MiB from BASE */
#define RANGE (2 * MIB)

struct fake_mem {
	int node[SPAN_PAGES]; /* of each page from BASE; -2 (-ENOENT) unmapped */
	int queries;
	size_t queried_pages;
};

static int fake_query(void *ctx, pid_t pid, size_t count, void **addrs, int *status)
{
	struct fake_mem *f = ctx;

	f->queries++;
	f->queried_pages += count;
	for (size_t i = 0; i < count; i++) {
		uint64_t a = (uint64_t)(uintptr_t)addrs[i];

		status[i] = pid == PID && a >= BASE && a < BASE + SPAN_PAGES * PG ?
				    f->node[(a - BASE) / PG] : -14 /* -EFAULT */;
	}
	return 0;
}

static struct topology topo;
static struct hot_table hot;
static struct cand_procs procs;
static struct cand_ranges ranges;
static struct policy_page cand[32768];
static struct idle_range idle_mem[64];
static struct idle_set idle;
static struct fake_mem mem;

/* Two tiers, PID tracked, every page of the span on @node, no heat. */
static void setup(int node)
{
	static void *hmem;
	struct hot_params hp = { .half_life_ns = 10 * SEC, .max_entries = 64, .geom = TEST_GEOM_INIT };
	size_t len = hot_mem_size(hp.max_entries);

	memset(&topo, 0, sizeof(topo));
	topo.nr_nodes = 2;
	topo.nr_tiers = 2;
	for (int i = 0; i < 2; i++) {
		topo.nodes[i].id = i;
		topo.nodes[i].tier = i;
		topo.nodes[i].has_memory = true;
	}
	free(hmem);
	hmem = calloc(1, len);
	CHECK_EQ_INT(hot_init(&hot, &hp, hmem, len, 0), 0);
	cand_ranges_init(&ranges, &test_geom);
	procs = (struct cand_procs){ .nr = 1 };
	procs.procs[0] = (struct cand_proc){ .pid = PID, .cgroup = -1, .rule = -1 };
	idle_init(&idle, idle_mem, 64);
	memset(&mem, 0, sizeof(mem));
	for (int i = 0; i < SPAN_PAGES; i++)
		mem.node[i] = node;
}

static size_t run(struct cand_select *sel, bool demote, uint64_t idle_min_ns, uint64_t now_ns,
		  struct cand_out *out)
{
	struct cand_io io = { .query = fake_query, .ctx = &mem };
	struct cand_in in = { .topo = &topo, .hot = &hot, .procs = &procs, .ranges = &ranges,
			      .demote = demote, .idle = &idle, .idle_min_ns = idle_min_ns };

	*out = (struct cand_out){ .cand = cand };
	cand_select_run(sel, &in, &io, now_ns, out);
	return out->nr_cand;
}

/* The candidate at @addr, or NULL. */
static const struct policy_page *cand_at(const struct cand_out *out, uint64_t addr)
{
	for (size_t i = 0; i < out->nr_cand; i++)
		if (cand[i].addr == addr)
			return &cand[i];
	return NULL;
}

static void test_set_order_and_bounds(void)
{
	struct idle_range r[3];
	struct idle_set s;

	idle_init(&s, r, 3);
	idle_begin(&s);
	CHECK_EQ_INT(idle_add(&s, 200, 0x1000, 0x3000, 5), 0);
	CHECK_EQ_INT(idle_add(&s, 100, 0x8000, 0x9000, 6), 0);	/* out of order */
	CHECK_EQ_INT(idle_add(&s, 100, 0x2000, 0x4000, 7), 0);
	CHECK_EQ_INT(s.n, 3);
	CHECK_EQ_INT(s.r[0].pid, 100);
	CHECK_EQ_U64(s.r[0].start, 0x2000);
	CHECK_EQ_U64(s.r[1].start, 0x8000);
	CHECK_EQ_INT(s.r[2].pid, 200);
	CHECK_EQ_U64(s.r[1].since_ns, 6);
	CHECK_EQ_U64(s.bytes, 0x2000 + 0x1000 + 0x2000);
	/* Full: counted, not kept. */
	CHECK_EQ_INT(idle_add(&s, 300, 0, 0x1000, 1), -ENOSPC);
	CHECK_EQ_U64(s.dropped, 1);
	CHECK_EQ_INT(s.n, 3);
	/* Overlaps, empty ranges and bad pids are refused. */
	idle_begin(&s);
	CHECK_EQ_INT(s.n, 0);
	CHECK_EQ_U64(s.dropped, 0);
	CHECK_EQ_INT(idle_add(&s, 100, 0x2000, 0x4000, 1), 0);
	CHECK_EQ_INT(idle_add(&s, 100, 0x3000, 0x5000, 1), -EINVAL);
	CHECK_EQ_INT(idle_add(&s, 100, 0x1000, 0x2001, 1), -EINVAL);
	CHECK_EQ_INT(idle_add(&s, 100, 0x6000, 0x6000, 1), -EINVAL);
	CHECK_EQ_INT(idle_add(&s, 0, 0x6000, 0x7000, 1), -EINVAL);
	CHECK_EQ_INT(idle_add(&s, 200, 0x3000, 0x5000, 1), 0);	/* another pid */
	/* Appended where the pid's last range ends: one range, idle since
	 * the later; a gap or another pid starts a new one. */
	idle_begin(&s);
	CHECK_EQ_INT(idle_add(&s, 100, 0x2000, 0x4000, 9), 0);
	CHECK_EQ_INT(idle_add(&s, 100, 0x4000, 0x5000, 3), 0);
	CHECK_EQ_INT(idle_add(&s, 100, 0x5000, 0x6000, 12), 0);
	CHECK_EQ_INT(s.n, 1);
	CHECK_EQ_U64(s.r[0].end, 0x6000);
	CHECK_EQ_U64(s.r[0].since_ns, 12);
	CHECK_EQ_U64(s.bytes, 0x4000);
	CHECK_EQ_INT(idle_add(&s, 100, 0x7000, 0x8000, 1), 0);
	CHECK_EQ_INT(idle_add(&s, 200, 0x8000, 0x9000, 1), 0);
	CHECK_EQ_INT(s.n, 3);
	idle_begin(&s);
	CHECK_EQ_INT(idle_add(&s, 100, 0x2000, 0x4000, 1), 0);
	CHECK_EQ_INT(idle_add(&s, 200, 0x3000, 0x5000, 1), 0);	/* another pid */
	/* Where a walk goes on. */
	CHECK_EQ_INT(idle_find(&s, 0, 0), 0);
	CHECK_EQ_INT(idle_find(&s, 100, 0x3fff), 0);
	CHECK_EQ_INT(idle_find(&s, 100, 0x4000), 1);
	CHECK_EQ_INT(idle_find(&s, 150, 0), 1);
	CHECK_EQ_INT(idle_find(&s, 200, 0x5000), 2);
	/* No memory: a set that stays empty. */
	idle_init(&s, NULL, 3);
	CHECK_EQ_INT(idle_add(&s, 100, 0x1000, 0x2000, 1), -ENOSPC);
}

/*
 * 16 MiB idle since 0, the first 2 MiB of it the touched set (heat in the
 * table), everything on node 0, which is short of memory: the other seven
 * ranges are cold candidates of heat 0, idle since 0; the touched range is
 * a candidate only from the table, with its heat.  Without demotion the
 * idle pass does not run.
 */
static void test_idle_ranges_never_touched(void)
{
	const uint64_t now = 100 * SEC;
	struct cand_select *sel;
	struct cand_out out;

	setup(0);
	CHECK(hot_record(&hot, PID, BASE, RANGE, 20.0, now) > 0);
	idle_begin(&idle);
	CHECK_EQ_INT(idle_add(&idle, PID, BASE, BASE + 16 * MIB, 0), 0);
	CHECK_EQ_INT(cand_select_new(32768, &test_geom, &sel), 0);
	run(sel, true, 60 * SEC, now, &out);
	CHECK_EQ_U64(out.nr_cand, 8);
	for (uint64_t a = BASE + RANGE; a < BASE + 16 * MIB; a += RANGE) {
		const struct policy_page *c = cand_at(&out, a);

		CHECK(c != NULL);
		if (!c)
			continue;
		CHECK_EQ_INT(c->heat, 0);
		CHECK_EQ_INT(c->nr_pages, 512);
		CHECK_EQ_INT(c->node, 0);
		CHECK(c->flags & POLICY_F_PAGES);
		CHECK_EQ_U64(c->last_access_ns, 0);
	}
	CHECK(cand_at(&out, BASE) != NULL);
	CHECK(cand_at(&out, BASE) && cand_at(&out, BASE)->heat == 20);

	/* Nothing to demote: only the table's entry. */
	cand_ranges_init(&ranges, &test_geom);
	run(sel, false, 60 * SEC, now, &out);
	CHECK_EQ_U64(out.nr_cand, 1);
	CHECK_EQ_U64(cand[0].addr, BASE);
	cand_select_free(sel);
}

/*
 * Ages and edges: a range idle for 30 s is not cold at 60 s, one idle for
 * 90 s is; of a range whose edges are not 2 MiB aligned, only the whole
 * 2 MiB ranges inside it; a process that is not tracked, nothing.
 */
static void test_idle_ages_and_edges(void)
{
	const uint64_t now = 1000 * SEC;
	struct cand_select *sel;
	struct cand_out out;

	setup(0);
	idle_begin(&idle);
	CHECK_EQ_INT(idle_add(&idle, PID, BASE, BASE + 4 * MIB, now - 30 * SEC), 0);
	CHECK_EQ_INT(idle_add(&idle, PID, BASE + 8 * MIB + PG, BASE + 14 * MIB + 2 * PG,
			      now - 90 * SEC), 0);
	CHECK_EQ_INT(idle_add(&idle, PID + 1, BASE, BASE + 4 * MIB, 0), 0);
	CHECK_EQ_INT(cand_select_new(8192, &test_geom, &sel), 0);
	run(sel, true, 60 * SEC, now, &out);
	CHECK_EQ_U64(out.nr_cand, 2);
	CHECK(cand_at(&out, BASE + 10 * MIB) != NULL);
	CHECK(cand_at(&out, BASE + 12 * MIB) != NULL);
	CHECK(cand_at(&out, BASE + 10 * MIB) &&
	      cand_at(&out, BASE + 10 * MIB)->last_access_ns == now - 90 * SEC);
	/* 30 s later the first range is old enough too. */
	cand_ranges_init(&ranges, &test_geom);
	run(sel, true, 60 * SEC, now + 30 * SEC, &out);
	CHECK_EQ_U64(out.nr_cand, 4);
	CHECK(cand_at(&out, BASE) != NULL);
	CHECK(cand_at(&out, BASE + 2 * MIB) != NULL);
	cand_select_free(sel);
}

/*
 * Bounds: 32 MiB idle and a hot set of 16 ranges on the slow node, more
 * than the 4096 slots of max_cand hold.  The reserve of 1024 slots takes
 * two idle ranges a tick, the hot set the rest; the next tick goes on
 * from where the last one stopped, in a new report of the same memory,
 * and after the last range starts again from the first.
 */
static void test_idle_reserve_and_cursor(void)
{
	const uint64_t now = 100 * SEC;
	struct cand_select *sel;
	struct cand_out out;

	setup(0);
	for (int i = SPAN_PAGES / 2; i < SPAN_PAGES; i++)
		mem.node[i] = 1;
	CHECK(hot_record(&hot, PID, BASE + 32 * MIB, 32 * MIB, 20.0, now) > 0);
	CHECK_EQ_INT(cand_select_new(4096, &test_geom, &sel), 0);
	for (int tick = 0; tick < 9; tick++) {
		uint64_t first = BASE + (uint64_t)(2 * (tick % 8)) * RANGE;

		idle_begin(&idle);
		CHECK_EQ_INT(idle_add(&idle, PID, BASE, BASE + 32 * MIB, 0), 0);
		cand_ranges_init(&ranges, &test_geom);
		run(sel, true, 60 * SEC, now + (uint64_t)tick * SEC, &out);
		CHECK_EQ_U64(out.nr_cand, 8);
		CHECK_EQ_U64(out.slots, 4096);
		CHECK(cand_at(&out, first) && cand_at(&out, first)->heat == 0);
		CHECK(cand_at(&out, first + RANGE) && cand_at(&out, first + RANGE)->heat == 0);
		CHECK(first + 2 * RANGE == BASE + 32 * MIB || !cand_at(&out, first + 2 * RANGE));
	}
	cand_select_free(sel);
}

/*
 * The slots the table leaves: with nothing in it, the idle pass takes the
 * whole cap, 8 ranges of the 16 a tick, then the other 8, then the first
 * again.
 */
static void test_idle_spare_slots(void)
{
	const uint64_t now = 100 * SEC;
	struct cand_select *sel;
	struct cand_out out;

	setup(0);
	CHECK_EQ_INT(cand_select_new(4096, &test_geom, &sel), 0);
	for (int tick = 0; tick < 3; tick++) {
		uint64_t first = BASE + (uint64_t)(8 * (tick % 2)) * RANGE;

		idle_begin(&idle);
		CHECK_EQ_INT(idle_add(&idle, PID, BASE, BASE + 32 * MIB, 0), 0);
		run(sel, true, 60 * SEC, now + (uint64_t)tick * SEC, &out);
		CHECK_EQ_U64(out.nr_cand, 8);
		CHECK_EQ_U64(out.slots, 4096);
		for (int k = 0; k < 8; k++)
			CHECK(cand_at(&out, first + (uint64_t)k * RANGE) != NULL);
	}
	cand_select_free(sel);
}

/*
 * Idle memory already on the slow node: a sample of 16 pages a range, no
 * candidate, and remembered as low, so the next tick queries nothing.
 * A range with one page of the sample on node 0 is queried whole: its
 * pages, on two nodes, are candidates of their own.
 */
static void test_idle_on_slow_node(void)
{
	const uint64_t now = 100 * SEC;
	struct cand_select *sel;
	struct cand_out out;

	setup(1);
	mem.node[(6 * MIB + 32 * PG) / PG] = 0;	/* the second page of the sample */
	mem.node[(6 * MIB + 33 * PG) / PG] = 0;	/* not in the sample */
	idle_begin(&idle);
	CHECK_EQ_INT(idle_add(&idle, PID, BASE, BASE + 8 * MIB, 0), 0);
	CHECK_EQ_INT(cand_select_new(8192, &test_geom, &sel), 0);
	run(sel, true, 60 * SEC, now, &out);
	CHECK_EQ_U64(out.nr_cand, 512);
	CHECK(cand_at(&out, BASE + 6 * MIB + 32 * PG) &&
	      cand_at(&out, BASE + 6 * MIB + 32 * PG)->node == 0);
	CHECK(cand_at(&out, BASE + 6 * MIB + 33 * PG) &&
	      cand_at(&out, BASE + 6 * MIB + 33 * PG)->node == 0);
	CHECK(cand_at(&out, BASE + 6 * MIB) && cand_at(&out, BASE + 6 * MIB)->node == 1);
	CHECK_EQ_U64(mem.queried_pages, 4 * 16 + 512);
	run(sel, true, 60 * SEC, now + SEC, &out);
	CHECK_EQ_U64(out.nr_cand, 512);
	CHECK_EQ_U64(mem.queried_pages, 4 * 16 + 512 + 16 + 512);	/* only the mixed range */
	cand_select_free(sel);
}

int main(void)
{
	RUN(test_set_order_and_bounds);
	RUN(test_idle_ranges_never_touched);
	RUN(test_idle_ages_and_edges);
	RUN(test_idle_reserve_and_cursor);
	RUN(test_idle_spare_slots);
	RUN(test_idle_on_slow_node);
	return test_failures ? 1 : 0;
}
