// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/candidates without the kernel: a hotness table, a fake node query
 * (where each page of a process is), a two-tier topology.  A hot 2 MiB
 * range of base pages all on the slow node is one candidate of 512 pages
 * in one query; known fast, it is not queried again until its recheck,
 * which looks at 16 of its pages; a rate bucket smaller than 2 MiB, or
 * pages on two nodes, make it 512 candidates.  The fill pass stages the
 * mappings' ranges the table does not hold, on the slow node.
 */
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "test.h"
#include "test_geom.h"

#define SEC 1000000000ull
#define PG 4096ull
#define PID 77
#define BASE 0x40000000ull
#define MAX_CAND 2048
#define SPAN 6 /* 2 MiB ranges the fake knows, from BASE */

struct fake_node {
	int node[SPAN * 512]; /* of each page of [BASE, BASE + SPAN * 2 MiB) */
	int queries;
	size_t last_count, pages;
};

static int fake_query(void *ctx, pid_t pid, size_t count, void **addrs, int *status)
{
	struct fake_node *f = ctx;

	f->queries++;
	f->last_count = count;
	f->pages += count;
	for (size_t i = 0; i < count; i++) {
		uint64_t a = (uint64_t)(uintptr_t)addrs[i];

		status[i] = pid == PID && a >= BASE && a < BASE + SPAN * 512 * PG ?
				    f->node[(a - BASE) / PG] : -14 /* -EFAULT */;
	}
	return 0;
}

static struct topology topo;
static struct hot_table hot;
static struct cand_procs procs;
static struct cand_ranges ranges;
static struct policy_page cand[MAX_CAND];

static void setup(void)
{
	static void *mem;
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
	free(mem);
	mem = calloc(1, len);
	CHECK_EQ_INT(hot_init(&hot, &hp, mem, len, 0), 0);
	CHECK(hot_record(&hot, PID, BASE, TEST_HUGE_SIZE, 20.0, 1 * SEC) > 0);
	cand_ranges_init(&ranges, &test_geom);
	procs = (struct cand_procs){ .nr = 1 };
	procs.procs[0] = (struct cand_proc){ .pid = PID, .cgroup = -1, .rule = -1 };
}

static const struct idle_set *fill; /* run()'s in.fill */
static const bool *capped; /* run()'s in.cg_capped */

static size_t run(struct cand_select *sel, struct fake_node *f, uint64_t global_burst,
		  uint64_t now_ns, struct cand_out *out)
{
	struct cand_io io = { .query = fake_query, .ctx = f };
	struct cand_in in = { .topo = &topo, .hot = &hot, .procs = &procs, .ranges = &ranges,
			      .global_burst = global_burst, .fill = fill, .cg_capped = capped };

	*out = (struct cand_out){ .cand = cand };
	cand_select_run(sel, &in, &io, now_ns, out);
	return out->nr_cand;
}

static void test_range_one_candidate(void)
{
	static struct fake_node f;
	struct cand_select *sel;
	struct cand_out out;

	setup();
	for (int i = 0; i < 512; i++)
		f.node[i] = 1;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	CHECK_EQ_U64(run(sel, &f, 0, 2 * SEC, &out), 1);
	CHECK_EQ_INT(f.queries, 1);
	CHECK_EQ_U64(f.last_count, 512);
	CHECK_EQ_U64(out.slots, 512);
	CHECK_EQ_INT(cand[0].nr_pages, 512);
	CHECK_EQ_INT(cand[0].node, 1);
	CHECK(cand[0].flags & POLICY_F_PAGES);
	CHECK(!out.capped);

	/* Moved to the fast tier and known there: not queried again. */
	for (int i = 0; i < 512; i++)
		f.node[i] = 0;
	cand_range(&ranges, PID, BASE)->fast_seen = cand_time(2 * SEC);
	CHECK_EQ_U64(run(sel, &f, 0, 3 * SEC, &out), 0);
	CHECK_EQ_INT(f.queries, 1);
	/* Its recheck time over: a sample of 16 pages, still fast. */
	CHECK_EQ_U64(run(sel, &f, 0, 13 * SEC, &out), 0);
	CHECK_EQ_INT(f.queries, 2);
	CHECK_EQ_U64(f.last_count, 16);
	cand_select_free(sel);
}

static void test_range_split(void)
{
	static struct fake_node f;
	struct cand_select *sel;
	struct cand_out out;

	setup();
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	for (int i = 0; i < 512; i++)
		f.node[i] = 1;
	/* A bucket of 1 MiB: 2 MiB would never pass it, so page by page. */
	CHECK_EQ_U64(run(sel, &f, 1 << 20, 2 * SEC, &out), 512);
	CHECK_EQ_INT(cand[0].nr_pages, 1);
	/* Half on each node: page by page too. */
	cand_ranges_init(&ranges, &test_geom);
	for (int i = 256; i < 512; i++)
		f.node[i] = 0;
	CHECK_EQ_U64(run(sel, &f, 0, 3 * SEC, &out), 512);
	CHECK_EQ_U64(out.slots, 512);
	cand_select_free(sel);
}

/*
 * A range wholly on a GPU node is known fast whatever the node's tier:
 * promotion never moves it, and the rule's usage is read from the node
 * (core/gpu_usage), not from these queries.  Wholly on a tier-1 node that
 * is not a GPU node, it is not.
 */
static void test_gpu_range_known_fast(void)
{
	static struct fake_node f;
	struct cand_select *sel;
	struct cand_out out;

	for (int gpu_tier = 0; gpu_tier < 2; gpu_tier++) {
		setup();
		topo.nr_nodes = 3;
		topo.nodes[2] = (struct topo_node){ .id = 2, .tier = gpu_tier, .gpu = true,
						    .has_memory = true };
		procs.procs[0].rule = 0;
		for (int i = 0; i < 512; i++)
			f.node[i] = 2;
		f.queries = 0;
		CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
		CHECK_EQ_U64(run(sel, &f, 0, 2 * SEC, &out), 1);
		CHECK_EQ_INT(f.queries, 1);
		CHECK(cand_range_peek(&ranges, PID, BASE) &&
		      cand_range_peek(&ranges, PID, BASE)->fast_seen);
		/* Not queried again within its recheck time. */
		CHECK_EQ_U64(run(sel, &f, 0, 3 * SEC, &out), 0);
		CHECK_EQ_INT(f.queries, 1);
		cand_select_free(sel);
	}
	/* On node 1 (tier 1, not a GPU node): queried every tick. */
	setup();
	for (int i = 0; i < 512; i++)
		f.node[i] = 1;
	f.queries = 0;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	CHECK_EQ_U64(run(sel, &f, 0, 2 * SEC, &out), 1);
	CHECK_EQ_U64(run(sel, &f, 0, 3 * SEC, &out), 1);
	CHECK_EQ_INT(f.queries, 2);
	cand_select_free(sel);
}

static void set_range(struct fake_node *f, int r, int node)
{
	for (int i = 0; i < 512; i++)
		f->node[r * 512 + i] = node;
}

static size_t count_fill(size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += !!(cand[i].flags & POLICY_F_FILL);
	return k;
}

/*
 * A mapping of five whole ranges and an edge: range 0 is the table's (hot,
 * slow), 1 and 4 slow, 2 fast, 3 unmapped.  The fill pass stages 1 and 4,
 * one candidate each at heat 0, and knows 2 fast; the table's entry stays
 * the table's.  Not moved, they are found again the next tick; moved, a
 * pass finds nothing and the next waits for a new read of the mappings.
 * A process in a cgroup with a cap has none.
 */
static void test_fill_pass(void)
{
	static struct fake_node f;
	struct idle_range mem[4];
	struct idle_set set;
	struct cand_select *sel;
	struct cand_out out;
	size_t n, pages;

	setup();
	memset(&f, 0, sizeof(f));
	idle_init(&set, mem, 4);
	idle_begin(&set);
	CHECK_EQ_INT(idle_add(&set, PID, BASE, BASE + 5 * 512 * PG + PG, 0), 0);
	set_range(&f, 0, 1);
	set_range(&f, 1, 1);
	set_range(&f, 2, 0);
	set_range(&f, 3, -14);
	set_range(&f, 4, 1);
	set_range(&f, 5, 1); /* the edge: only its first page is mapped */
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	fill = NULL;
	CHECK_EQ_U64(run(sel, &f, 0, 2 * SEC, &out), 1);
	fill = &set;
	n = run(sel, &f, 0, 2 * SEC, &out);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(count_fill(n), 2);
	for (size_t i = 0; i < n; i++) {
		bool is_fill = cand[i].flags & POLICY_F_FILL;

		CHECK_EQ_INT(cand[i].nr_pages, 512);
		CHECK_EQ_INT(cand[i].heat == 0, is_fill);
		CHECK(is_fill ? cand[i].addr == BASE + 512 * PG || cand[i].addr == BASE + 4 * 512 * PG :
				cand[i].addr == BASE);
	}
	CHECK(cand_range_peek(&ranges, PID, BASE + 2 * 512 * PG) &&
	      cand_range_peek(&ranges, PID, BASE + 2 * 512 * PG)->fast_seen);
	/* Not moved: found again. */
	CHECK_EQ_U64(count_fill(run(sel, &f, 0, 3 * SEC, &out)), 2);
	/* Moved: a pass that finds nothing, then none until a new report. */
	set_range(&f, 1, 0);
	set_range(&f, 4, 0);
	CHECK_EQ_U64(count_fill(run(sel, &f, 0, 4 * SEC, &out)), 0);
	pages = f.pages;
	CHECK_EQ_U64(run(sel, &f, 0, 5 * SEC, &out), 1);
	CHECK_EQ_U64(f.pages - pages, 512); /* the table's range only */
	/* A new report, one range slow again and its recheck due. */
	set_range(&f, 4, 1);
	idle_begin(&set);
	CHECK_EQ_INT(idle_add(&set, PID, BASE, BASE + 5 * 512 * PG + PG, 0), 0);
	n = run(sel, &f, 0, 20 * SEC, &out);
	CHECK_EQ_U64(count_fill(n), 1);
	/* In a cgroup with a cap: left (the policy fills none). */
	{
		static const bool one_capped[1] = { true };

		procs.procs[0].cgroup = 0;
		capped = one_capped;
		CHECK_EQ_U64(count_fill(run(sel, &f, 0, 21 * SEC, &out)), 0);
		capped = NULL;
		procs.procs[0].cgroup = -1;
	}
	fill = NULL;
	cand_select_free(sel);
}

int main(void)
{
	RUN(test_range_one_candidate);
	RUN(test_range_split);
	RUN(test_gpu_range_known_fast);
	RUN(test_fill_pass);
	return TEST_EXIT();
}
