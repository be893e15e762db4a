// SPDX-License-Identifier: GPL-2.0-only
/*
 * The manager's tick end to end against fakes (pipe_env.h), where the
 * candidates a tick can take run out: a hot set larger than one tick's
 * candidates takes the whole cap when nothing needs demoting, and leaves a
 * quarter of it to the coldest entries when a node is short of memory, so
 * those are demoted, past ranges already on the slow node, in a table
 * smaller or larger than the views a tick takes; rate limits and the cap;
 * memory the source saw idle, which the table has no heat for.
 *
 *   test_pipeline_cold FIXTURES_DIR
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_tree.h"
#include "pipe_env.h"
#include "test.h"

/*
 * Nothing to demote (node 0 has 11.4 GiB free against a high target of
 * 655 MiB): a hot set larger than a tick's candidates gets all of them,
 * 32 Ki pages promoted in one tick, though demotion is on, and the next
 * tick comes at once for the rest.  Then the cap full but nothing landing
 * (every move refused with -EBUSY, then a dry run): no backlog, the next
 * tick waits its interval; a full cap alone must not make tierd tick
 * without pause on what cannot move.
 */
static void test_full_cap(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	for (int land = 1; land >= 0; land--) {
		setup_big(&d, root, sizeof(root), &sf, &map, &fk);
		CHECK_EQ_INT(start(&d, &fk), 0);
		map.busy = land ? 0 : -1;
		CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, HOT_RANGES * 2 * MIB, 20.0), 0);
		CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + COLD_FIRST * PG,
					       COLD_RANGES * 2 * MIB, 1.0), 0);
		CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
		CHECK_EQ_U64(mgr.gathered.slots, CAND_PAGES);
		CHECK_EQ_U64(map.queried_pages, CAND_PAGES);
		CHECK_EQ_INT(map.queries, CAND_PAGES / QUERY_PAGES);
		CHECK(map.moves > 0);
		CHECK_EQ_U64(map.moved_pages, land ? CAND_PAGES : 0);
		CHECK_EQ_INT(count_on(&map, 0, COLD_FIRST, 0), land ? CAND_PAGES : 0);
		CHECK_EQ_INT(count_on(&map, COLD_FIRST, SLOW_FIRST, 0), COLD_RANGES * ENTRY_PAGES);
		CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, land ? CAND_PAGES * PG : 0);
		CHECK_EQ_INT(mgr.backlog, land);
		CHECK_EQ_INT(manager_interval_ms(&mgr) == 0, land);
		if (!land) {
			map.busy = 0;
			d.dry_run = true;
			CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
			CHECK_EQ_U64(map.moved_pages, 0);
			CHECK(!mgr.backlog);
			CHECK(manager_interval_ms(&mgr) > 0);
		}
		stop(&d);
	}
}

/*
 * The cap refuses a range of 512 base pages with fewer slots left (one page
 * of the first range is not populated, so the candidates are not a multiple
 * of 512): the tick is still capped, and followed at once.
 */
static void test_cap_partial_range(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup_big(&d, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	map.node[5] = -ENOENT;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, HOT_RANGES * 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_U64(mgr.gathered.slots, CAND_PAGES - 1);
	CHECK(mgr.gathered.capped);
	CHECK(mgr.backlog);
	stop(&d);
}

/*
 * A capped tick whose candidates a rate limit held back: no backlog.  The
 * next tick at once would find the bucket nearly empty, move what it
 * refilled in the few ms between, and gather and sort all over again.
 */
static void test_rate_no_spin(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	uint64_t now = 1 * SEC;

	setup(&d, "interval_ms: 500\n"
		  "tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
		  "promotion: {max_rate_mb_per_s: 64, batch_pages: 2048, hot_threshold: 8}\n"
		  "copy_threads: {mode: off}\n", root, sizeof(root), &sf, &map, &fk);
	map.npages = MAP_PAGES;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, HOT_RANGES * 2 * MIB, 20.0), 0);
	for (int k = 0; k < 4; k++) {
		unsigned long before = map.moved_pages;

		CHECK_EQ_INT(manager_tick(&mgr, now), 0);
		CHECK(map.moved_pages > before);
		CHECK(mgr.gathered.capped);
		CHECK(mgr.decided.stats.held[POLICY_H_GLOBAL_RATE] > 0);
		CHECK(!mgr.backlog);
		CHECK(manager_interval_ms(&mgr) > 0);
		/* As if the next tick came soon: 100 ms refill 6.4 MiB, three of
		 * the 2 MiB ranges (each one candidate, all on node 1). */
		now += 100 * 1000000ull;
	}
	stop(&d);
}

/*
 * A rate whose bucket holds less than 2 MiB (2 MB/s, 500 ms ticks: 1 MiB):
 * a range on one node stays 512 candidates, so the pages that fit a tick's
 * tokens still move (one 2 MiB candidate never would).
 */
static void test_rate_below_range(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup(&d, "interval_ms: 500\n"
		  "tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
		  "promotion: {max_rate_mb_per_s: 2, batch_pages: 2048}\n"
		  "demotion: {enabled: false}\n"
		  "copy_threads: {mode: off}\n", root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_U64(d.stats.decision.intents[POLICY_R_HOT], 256);
	CHECK_EQ_U64(map.moved_pages, 256);
	CHECK_EQ_INT(count_on(&map, 0, 256, 0), 256);
	stop(&d);
}

/*
 * Node 0 short of memory (@free_kb free: below its low target of 327.68
 * MiB, or above it but under its high target of 655.36 MiB): @nr_hot hot
 * ranges on node 1, the cold ones on node 0, and the colder slow ones on
 * node 1.  The first tick sees only the cold and slow ranges (too recently
 * accessed to demote): the reserve, 16 ranges, takes the slow ones from the
 * tail, found wholly on the lowest tier; the head the cold ones, found
 * wholly on node 0, known fast.  The second adds the hot ones: the cold
 * ranges, at the tail of the hottest-first table, are candidates however
 * many hot ones there are, and all of them are demoted for @reason; the
 * slow ones, colder still, are left to the head, known to be where
 * demotion cannot take them further.  No range is queried twice a tick.
 */
static void cold_reserve(unsigned long free_kb, int nr_hot, enum policy_reason reason)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	char root[4096];
	int ranges = nr_hot + COLD_RANGES + SLOW_RANGES;
	int cand = ranges * ENTRY_PAGES < CAND_PAGES ? ranges * ENTRY_PAGES : CAND_PAGES;
	struct manager_ops fk;
	unsigned long queried;

	setup_big(&d, root, sizeof(root), &sf, &map, &fk);
	writable_root(&d, free_kb);
	CHECK_EQ_INT(start(&d, &fk), 0);

	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + COLD_FIRST * PG, COLD_RANGES * 2 * MIB,
				       1.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + SLOW_FIRST * PG, SLOW_RANGES * 2 * MIB,
				       0.5), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_U64(map.queried_pages, (COLD_RANGES + SLOW_RANGES) * ENTRY_PAGES);
	CHECK_EQ_INT(map.moves, 0);

	queried = map.queried_pages;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, nr_hot * 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK_EQ_U64(mgr.gathered.slots, cand);
	CHECK_EQ_U64(map.queried_pages - queried, cand);
	/* Each cold range wholly on node 0: one intent for its 512 pages. */
	CHECK_EQ_U64(mgr.decided.stats.intents[reason], COLD_RANGES);
	CHECK_EQ_INT(count_on(&map, COLD_FIRST, SLOW_FIRST, 1), COLD_RANGES * ENTRY_PAGES);
	/* No room on node 0: nothing is promoted. */
	CHECK_EQ_U64(map.moved_pages, COLD_RANGES * ENTRY_PAGES);
	CHECK_EQ_U64(d.stats.tier[1].demoted_bytes_total, COLD_RANGES * 2 * MIB);
	stop(&d);
	fs_tree_remove(tree);
}

static void test_cold_reserve(void)
{
	/* 100 MiB free: watermark demotions; the cap is full. */
	cold_reserve(100 << 10, HOT_RANGES, POLICY_R_WMARK);
	/* 500 MiB free: no room for the hot ranges, room demotions. */
	cold_reserve(500 << 10, HOT_RANGES, POLICY_R_ROOM);
	/* A table smaller than the cap: every range once, the cold ones
	 * from the reserve, the rest, the slow ones too, from the head. */
	cold_reserve(100 << 10, 20, POLICY_R_WMARK);
}

/*
 * Node 0 below its low target, and memory that has no heat at all: the
 * source reports the first 104 ranges idle, of which the first (on node 0)
 * is the touched set, hot in the table, the next 95 are on node 1 and the
 * last 8 (the cold ranges) on node 0.  Idle for less than cold_age_s,
 * nothing moves; once idle long enough, the 8 ranges on node 0 are
 * demoted, one intent each, and the touched range stays.
 */
static void test_idle_demoted(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	char root[4096];
	struct manager_ops fk;

	setup_big(&d, root, sizeof(root), &sf, &map, &fk);
	writable_root(&d, 100 << 10);
	for (int i = 0; i < ENTRY_PAGES; i++)
		map.node[i] = 0;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 21.0), 0);
	CHECK_EQ_INT(sampler_fake_idle(&sf, PID, BASE, BASE + SLOW_FIRST * PG, SEC / 2), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.moves, 0);
	CHECK_EQ_U64(sample_idle(mgr.sample)->bytes, SLOW_FIRST * PG);

	CHECK_EQ_INT(sampler_fake_idle(&sf, PID, BASE, BASE + SLOW_FIRST * PG, SEC / 2), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK_EQ_U64(mgr.decided.stats.intents[POLICY_R_WMARK], COLD_RANGES);
	CHECK_EQ_INT(count_on(&map, COLD_FIRST, SLOW_FIRST, 1), COLD_RANGES * ENTRY_PAGES);
	CHECK_EQ_INT(count_on(&map, 0, ENTRY_PAGES, 0), ENTRY_PAGES);
	CHECK_EQ_U64(map.moved_pages, COLD_RANGES * ENTRY_PAGES);
	CHECK_EQ_U64(d.stats.tier[1].demoted_bytes_total, COLD_RANGES * 2 * MIB);
	stop(&d);
	fs_tree_remove(tree);
}

/*
 * A table of MAX_VIEWS entries and 2 more, the cold ranges at its tail:
 * 96 mapped hot ranges (heat 21), 3994 hot ranges outside the map (heat 20;
 * their queries find nothing, but they fill the table), 8 cold ranges on
 * node 0, below its low target.  The hottest 4096 views end with 6 of the
 * cold ranges; the head stops after 48 hot ranges (24 Ki pages, the cap
 * less the reserve), and the coldest pass takes what is colder than those:
 * the cold ranges, all demoted.
 */
static void test_cold_pass_large_table(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	char root[4096];
	struct manager_ops fk;
	int unmapped = VIEWS + 2 - HOT_RANGES - COLD_RANGES;

	setup_big(&d, root, sizeof(root), &sf, &map, &fk);
	writable_root(&d, 100 << 10);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + COLD_FIRST * PG, COLD_RANGES * 2 * MIB,
				       1.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.moves, 0);

	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, HOT_RANGES * 2 * MIB, 21.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + MAP_PAGES * PG, unmapped * 2 * MIB, 20.0),
		     0);
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK_EQ_U64(sample_table(mgr.sample)->nused, VIEWS + 2);
	CHECK_EQ_U64(mgr.gathered.slots,
		     CAND_PAGES - RESERVE_PAGES + COLD_RANGES * ENTRY_PAGES);
	CHECK_EQ_U64(mgr.decided.stats.intents[POLICY_R_WMARK], COLD_RANGES);
	CHECK_EQ_INT(count_on(&map, COLD_FIRST, SLOW_FIRST, 1), COLD_RANGES * ENTRY_PAGES);
	CHECK_EQ_U64(map.moved_pages, COLD_RANGES * ENTRY_PAGES);
	stop(&d);
	fs_tree_remove(tree);
}

/*
 * The coldest pass over 4 KiB entries (the BPF source's): 4224 of them on
 * the lowest tier, colder than anything else, then 8 cold ranges on node 0
 * and the hot ranges.  With node 0 below its low target a tick's head
 * takes 48 hot ranges (24 Ki pages), and its coldest pass all 4224 small
 * entries and the cold ranges behind them (8320 pages, within
 * COLD_QUERY_PAGES): the first tick after the cold ranges' cold_age_s
 * demotes them.  Its node queries are batched: QUERY_PAGES pages or
 * QUERY_ENTRIES entries a call, 12 calls in all.
 * With one call per entry the tick made 4280 (and, bounded to 256 entries
 * a tick, 304 calls, and took 18 ticks to reach the cold ranges).
 */
static void test_cold_walk_small_entries(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	const int pages = 66 * 64, head = (CAND_PAGES - RESERVE_PAGES) / ENTRY_PAGES;
	const int cold = pages + COLD_RANGES * ENTRY_PAGES;
	char root[4096];
	struct manager_ops fk;
	unsigned long queried;
	uint64_t now = 0;
	int queries;

	setup_big(&d, root, sizeof(root), &sf, &map, &fk);
	map.far_ranges = pages / ENTRY_PAGES + 1;
	map.far_node = 1;
	writable_root(&d, FIXTURE_FREE_KB);
	CHECK_EQ_INT(start(&d, &fk), 0);
	/* 64 records a drain (the fake's queue); below hot_threshold 8. */
	for (int t = 0; t < pages / 64; t++) {
		for (int i = 0; i < 64; i++)
			CHECK_EQ_INT(sampler_fake_push(&sf, PID, FAR_BASE + (uint64_t)(t * 64 + i) * PG,
						       PG, 0.5), 0);
		now += SEC / 10;
		CHECK_EQ_INT(manager_tick(&mgr, now), 0);
	}
	CHECK_EQ_U64(sample_table(mgr.sample)->nused, pages);
	CHECK_EQ_U64(map.far_moved, 0);

	node0_free(tree, 100 << 10);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + COLD_FIRST * PG, COLD_RANGES * 2 * MIB,
				       1.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, HOT_RANGES * 2 * MIB, 20.0), 0);
	now += SEC / 10;
	CHECK_EQ_INT(manager_tick(&mgr, now), 0);	/* the records' heat, now */
	queries = map.queries;
	queried = map.queried_pages;
	now += 2 * SEC;	/* past cold_age_s */
	CHECK_EQ_INT(manager_tick(&mgr, now), 0);
	CHECK_EQ_U64(map.queried_pages - queried, head * ENTRY_PAGES + cold);
	/* The head's 24 Ki pages in 6 calls, 4096 of the small entries in 4;
	 * the 128 left and 7 cold ranges fill the 7th QUERY_PAGES, the last
	 * range goes alone. */
	CHECK_EQ_INT(map.queries - queries, head * ENTRY_PAGES / QUERY_PAGES +
		     pages / QUERY_ENTRIES + 2);
	CHECK_EQ_INT(count_on(&map, COLD_FIRST, SLOW_FIRST, 1), COLD_RANGES * ENTRY_PAGES);
	CHECK_EQ_U64(map.far_moved, 0);
	stop(&d);
	fs_tree_remove(tree);
}

/*
 * A table larger than MAX_VIEWS whose coldest 4100 entries (far ranges,
 * heat 0.5) are all on the lowest tier, the 8 cold ranges on node 0
 * (heat 1) behind them, the hot ranges (heat 20) ahead; node 0 below its
 * low target.  The coldest pass of each tick goes on where the last one
 * stopped, COLD_QUERY_PAGES a tick (32 ranges), and reaches the cold
 * ranges within 4100 / 32 + 1 ticks: they are demoted.  Before, every
 * tick looked at the same 16 coldest ranges, lowest-tier ones that took
 * the reserve, and the cold ranges were never demoted.  Lowest-tier
 * entries take no candidate slot, and no tick queries more than the head
 * (48 ranges) and COLD_QUERY_PAGES.  Demoted whole, the cold ranges are
 * known low.
 */
static void test_cold_walk(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	const int far = VIEWS + 4, most = far / COLD_QUERY_RANGES + 2;
	char root[4096];
	struct manager_ops fk;
	int tick;

	setup_big(&d, root, sizeof(root), &sf, &map, &fk);
	map.far_ranges = far;
	map.far_node = 1;
	writable_root(&d, 100 << 10);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, FAR_BASE, (uint64_t)far * 2 * MIB, 0.5), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + COLD_FIRST * PG, COLD_RANGES * 2 * MIB,
				       1.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, HOT_RANGES * 2 * MIB, 20.0), 0);
	for (tick = 1; tick <= 3 * most; tick++) {
		int queries = map.queries;

		CHECK_EQ_INT(manager_tick(&mgr, SEC + (uint64_t)tick * SEC / 2), 0);
		CHECK(map.queries - queries <= (CAND_PAGES - RESERVE_PAGES) / ENTRY_PAGES +
						       COLD_QUERY_RANGES);
		if (count_on(&map, COLD_FIRST, SLOW_FIRST, 1) == COLD_RANGES * ENTRY_PAGES)
			break;
	}
	CHECK_EQ_U64(sample_table(mgr.sample)->nused, far + COLD_RANGES + HOT_RANGES);
	CHECK(tick <= most);
	CHECK_EQ_INT(count_on(&map, COLD_FIRST, SLOW_FIRST, 1), COLD_RANGES * ENTRY_PAGES);
	CHECK_EQ_U64(map.far_moved, 0);
	for (int r = 0; r < COLD_RANGES; r++) {
		const struct cand_range *rg =
			cand_range_peek(mgr.ranges, PID, BASE + (COLD_FIRST + r * ENTRY_PAGES) * PG);

		CHECK(rg && rg->low_seen == cand_time(SEC + (uint64_t)tick * SEC / 2));
	}
	stop(&d);
	fs_tree_remove(tree);
}

/*
 * A hot range known fast that the cold reserve queries again, and finds
 * half on node 1 (the kernel moved it), is no longer known fast: once node
 * 0 has room again, the next tick queries it and promotes that half.
 */
static void test_mark_follows_query(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	char root[4096];
	struct manager_ops fk;

	setup_big(&d, root, sizeof(root), &sf, &map, &fk);
	for (int i = 0; i < ENTRY_PAGES; i++)
		map.node[i] = 0;
	writable_root(&d, FIXTURE_FREE_KB);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.queries, 1);

	for (int i = ENTRY_PAGES / 2; i < ENTRY_PAGES; i++)
		map.node[i] = 1;
	node0_free(tree, 100 << 10);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
	CHECK_EQ_INT(map.queries, 2);
	CHECK_EQ_INT(map.moves, 0);

	node0_free(tree, FIXTURE_FREE_KB);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK_EQ_INT(map.queries, 3);
	CHECK_EQ_U64(map.moved_pages, ENTRY_PAGES / 2);
	CHECK_EQ_INT(count_on(&map, 0, ENTRY_PAGES, 0), ENTRY_PAGES);
	stop(&d);
	fs_tree_remove(tree);
}

int main(int argc, char **argv)
{
	int r = pipe_env_init(argc, argv, "test_pipeline_cold");

	if (r)
		return r;
	RUN(test_full_cap);
	RUN(test_cap_partial_range);
	RUN(test_rate_no_spin);
	RUN(test_rate_below_range);
	RUN(test_cold_reserve);
	RUN(test_idle_demoted);
	RUN(test_cold_pass_large_table);
	RUN(test_cold_walk);
	RUN(test_cold_walk_small_entries);
	RUN(test_mark_follows_query);
	pipe_env_fini();
	return TEST_EXIT();
}
