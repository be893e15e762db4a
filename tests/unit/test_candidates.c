// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/candidates without the kernel: a hotness table, a fake node query
 * (where each page of a process is), a two-tier topology.  A hot 2 MiB
 * range of base pages all on the slow node is one candidate of 512 pages
 * in one query; known fast, it is not queried again until its recheck,
 * which looks at 16 of its pages; a rate bucket smaller than 2 MiB, or
 * pages on two nodes, make it 512 candidates.
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

struct fake_node {
	int node[512]; /* of each page of [BASE, BASE + 2 MiB) */
	int queries;
	size_t last_count;
};

static int fake_query(void *ctx, pid_t pid, size_t count, void **addrs, int *status)
{
	struct fake_node *f = ctx;

	f->queries++;
	f->last_count = count;
	for (size_t i = 0; i < count; i++) {
		uint64_t a = (uint64_t)(uintptr_t)addrs[i];

		status[i] = pid == PID && a >= BASE && a < BASE + 512 * PG ?
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

static size_t run(struct cand_select *sel, struct fake_node *f, uint64_t global_burst,
		  uint64_t now_ns, struct cand_out *out)
{
	struct cand_io io = { .query = fake_query, .ctx = f };
	struct cand_in in = { .topo = &topo, .hot = &hot, .procs = &procs, .ranges = &ranges,
			      .global_burst = global_burst };

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

int main(void)
{
	RUN(test_range_one_candidate);
	RUN(test_range_split);
	RUN(test_gpu_range_known_fast);
	return TEST_EXIT();
}
