// SPDX-License-Identifier: GPL-2.0-only
/*
 * The manager's tick end to end against fakes: a scripted sampler (heat),
 * a page map standing for move_pages(2) (where each page is), the DRAM+CXL
 * topology fixture.  One hot 2 MiB range of a process on node 1 is promoted
 * to node 0 in one move_pages call with MPOL_MF_PROMOTE where the "kernel"
 * takes it; an unsampled range stays; d->stats counts exactly the bytes that
 * landed; the next tick neither moves nor queries the range again; a dry
 * run moves nothing; a plan the tick's time budget cuts goes on at the next
 * tick at once, without sampling in between.  Peeks, the idle pace, node
 * queries per run of entries.  (test_pipeline_cold.c: the candidate cap
 * and the coldest entries.)
 *
 *   test_pipeline FIXTURES_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_tree.h"
#include "pipe_env.h"
#include "sample_period.h"
#include "test.h"

static void test_promote(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	int queries;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_STR(d.stats.sampler_source, "fake");
	CHECK(move_has_promote(mgr.move));

	/* The first 2 MiB are accessed (as DAMON reports a region). */
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(sf.ntargets, 1);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 512);
	CHECK_EQ_INT(count_on(&map, 512, NPAGES, 1), 512);
	/* One call for the whole range, with the promotion flag. */
	CHECK_EQ_INT(map.moves, 1);
	CHECK_EQ_INT(map.promote_moves, 1);
	CHECK_EQ_U64(d.stats.move_pages_calls_total, 1);
	/* As 512 addresses: no THP lookups under a fixture root. */
	CHECK_EQ_U64(d.stats.move_pages_addresses_total, 512);
	CHECK_EQ_U64(d.stats.move_pages_thps_total, 0);
	CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, 2 * MIB);
	CHECK_EQ_U64(d.stats.node[0].promoted_bytes_total, 2 * MIB);
	CHECK_EQ_U64(d.stats.tier[1].promoted_bytes_total, 0);
	CHECK_EQ_U64(mgr.moved_bytes_total, 2 * MIB);
	CHECK_EQ_U64(d.stats.migrate_bytes_total, 2 * MIB);
	CHECK_EQ_U64(d.stats.migrate_ns_total, 1000000); /* one fake call */
	/* The decision status and metrics show. */
	CHECK_EQ_U64(d.stats.decision.promote_bytes, 2 * MIB);
	CHECK_EQ_U64(d.stats.decision_candidate_pages, 512);
	/* The range's 512 base pages, all on node 1: one candidate. */
	CHECK_EQ_U64(d.stats.decision.intents[POLICY_R_HOT], 1);
	CHECK(d.stats.decision.hot_threshold > 0);

	/* Still hot, now on the fast tier: no move, and no query either: the
	 * range went wholly to the fast tier, so it is known to be there. */
	queries = map.queries;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
	CHECK_EQ_INT(map.moves, 1);
	CHECK_EQ_INT(map.queries, queries);
	CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, 2 * MIB);

	/* The second half turns hot: promoted; the first half, known to be on
	 * the fast tier, is not queried again (one query, the second half's). */
	queries = map.queries;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + 2 * MIB, 2 * MIB, 40.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK_EQ_INT(map.queries, queries + 1);
	CHECK_EQ_INT(map.moves, 2);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 0), NPAGES);
	CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, 4 * MIB);
	CHECK_EQ_U64(map.moved_pages, NPAGES);
	stop(&d);
	CHECK(d.mgr == NULL);
}

/* Peeks between idle ticks: only while idle, only for new heat in enough
 * memory and a large enough share of what was accessed, once per tick, and
 * after a woken tick that moved nothing, only for twice that one's. */
static void test_peek_wakes(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	uint32_t gen = 0;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	/* No descriptor until the source offers one. */
	CHECK_EQ_INT(manager_peek_fd(&mgr, &gen), -1);
	sf.peek_fd = 7;
	sf.peek_gen = 3;
	CHECK_EQ_INT(manager_peek_fd(&mgr, &gen), 7);
	CHECK_EQ_INT(gen, 3);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.moves, 1);
	/* Not idle: ticks come at interval_ms anyway; the source is disarmed
	 * and not asked. */
	CHECK_EQ_INT(sf.arms, 1);
	CHECK(!sf.armed);
	sf.peek_ret = 1;
	sf.peek = (struct sampler_peek){ .accessed_bytes = 64 * MIB, .new_bytes = 64 * MIB };
	CHECK_EQ_INT(manager_peek(&mgr, 1 * SEC + SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 0);
	CHECK_EQ_U64(d.stats.sampler_peeks_total, 0);

	/* Idle: armed until the next tick, with the wake bars. */
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
	CHECK_EQ_INT(mgr.idle_ticks, 1);
	CHECK(sf.armed);
	CHECK_EQ_U64(sf.arm_at_ns, 2 * SEC + (uint64_t)manager_interval_ms(&mgr) * 1000000);
	CHECK_EQ_U64(sf.arm_min_bytes, 8 * MIB);
	CHECK_EQ_INT(sf.arm_share, 8);
	/* Too little new heat, or too small a share of what was accessed (a
	 * converged hot set's moving edges), or nothing new: no wake. */
	sf.peek = (struct sampler_peek){ .accessed_bytes = 4 * MIB, .new_bytes = 4 * MIB };
	CHECK_EQ_INT(manager_peek(&mgr, 2 * SEC + SEC / 10), 0);
	sf.peek = (struct sampler_peek){ .accessed_bytes = 100 * MIB, .new_bytes = 12 * MIB };
	CHECK_EQ_INT(manager_peek(&mgr, 2 * SEC + 2 * SEC / 10), 0);
	sf.peek_ret = 0;
	CHECK_EQ_INT(manager_peek(&mgr, 2 * SEC + 3 * SEC / 10), 0);
	sf.peek_ret = -EOPNOTSUPP;
	CHECK_EQ_INT(manager_peek(&mgr, 2 * SEC + 4 * SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 4);
	CHECK_EQ_U64(d.stats.sampler_peeks_total, 4);
	CHECK_EQ_U64(d.stats.sampler_wakes_total, 0);
	/* A hot set arriving: wake; a second wake before that tick ran is
	 * not looked at, and disarms the source. */
	sf.peek_ret = 1;
	sf.peek = (struct sampler_peek){ .accessed_bytes = 64 * MIB, .new_bytes = 8 * MIB };
	CHECK_EQ_INT(manager_peek(&mgr, 2 * SEC + 5 * SEC / 10), 1);
	CHECK_EQ_U64(d.stats.sampler_wakes_total, 1);
	CHECK(sf.armed);
	CHECK_EQ_INT(manager_peek(&mgr, 2 * SEC + 6 * SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 5);
	CHECK(!sf.armed);
	/* The woken tick moves the new heat: not idle, disarmed, no peeks. */
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + 2 * MIB, 2 * MIB, 40.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC + 5 * SEC / 10), 0);
	CHECK_EQ_INT(map.moves, 2);
	CHECK_EQ_INT(mgr.idle_ticks, 0);
	CHECK(!sf.armed);
	CHECK_EQ_INT(manager_peek(&mgr, 2 * SEC + 7 * SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 5);

	/* A false alarm: the woken tick finds nothing to move; armed again,
	 * the next wake needs twice the new heat that one saw (8 MiB). */
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK(sf.armed);
	CHECK_EQ_U64(sf.arm_min_bytes, 8 * MIB);
	CHECK_EQ_INT(manager_peek(&mgr, 3 * SEC + SEC / 10), 1);
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC + SEC / 10), 0);
	CHECK_EQ_INT(mgr.idle_ticks, 2);
	CHECK(sf.armed);
	CHECK_EQ_U64(sf.arm_min_bytes, 16 * MIB);
	CHECK_EQ_INT(manager_peek(&mgr, 3 * SEC + 2 * SEC / 10), 0);
	sf.peek = (struct sampler_peek){ .accessed_bytes = 64 * MIB, .new_bytes = 15 * MIB };
	CHECK_EQ_INT(manager_peek(&mgr, 3 * SEC + 3 * SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 8);
	sf.peek = (struct sampler_peek){ .accessed_bytes = 64 * MIB, .new_bytes = 16 * MIB };
	CHECK_EQ_INT(manager_peek(&mgr, 3 * SEC + 4 * SEC / 10), 1);
	/* Nothing again: 32 MiB.  The next regular tick keeps the bar ... */
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC + 4 * SEC / 10), 0);
	CHECK_EQ_U64(sf.arm_min_bytes, 32 * MIB);
	CHECK_EQ_INT(manager_tick(&mgr, 5 * SEC), 0);
	CHECK_EQ_U64(sf.arm_min_bytes, 32 * MIB);
	CHECK_EQ_U64(d.stats.sampler_wakes_total, 3);
	CHECK_EQ_INT(map.moves, 2);
	/* ... and one that moves memory puts it back: a third range, mapped
	 * on node 1, turns hot. */
	for (int i = NPAGES; i < NPAGES + 512; i++)
		map.node[i] = 1;
	map.npages = NPAGES + 512;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + 4 * MIB, 2 * MIB, 40.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 6 * SEC), 0);
	CHECK_EQ_INT(map.moves, 3);
	CHECK_EQ_INT(manager_tick(&mgr, 7 * SEC), 0);
	CHECK(sf.armed);
	CHECK_EQ_U64(sf.arm_min_bytes, 8 * MIB);
	CHECK_EQ_INT(manager_peek(&mgr, 7 * SEC + SEC / 10), 1);

	/* sampling.damon.idle_peek: false: nothing armed, no descriptor, the
	 * source is not asked; true again: it is. */
	CHECK_EQ_INT(manager_tick(&mgr, 9 * SEC), 0);	/* the woken one */
	d.conf->sampling.damon_idle_peek = false;
	CHECK_EQ_INT(manager_tick(&mgr, 13 * SEC), 0);
	CHECK(!sf.armed);
	CHECK_EQ_INT(manager_peek_fd(&mgr, &gen), -1);
	CHECK_EQ_INT(manager_peek(&mgr, 13 * SEC + SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 10);
	d.conf->sampling.damon_idle_peek = true;
	CHECK_EQ_INT(manager_tick(&mgr, 17 * SEC), 0);
	CHECK(sf.armed);
	sf.peek = (struct sampler_peek){ .accessed_bytes = 64 * MIB, .new_bytes = 64 * MIB };
	CHECK_EQ_INT(manager_peek(&mgr, 17 * SEC + SEC / 10), 1);
	CHECK_EQ_INT(sf.peeks, 11);
	stop(&d);
}

/* The sampling pace: full while moving, slow after two idle ticks; once
 * slow, a tick that moves less than TIERD_IDLE_MOVE_BYTES (one 2 MiB range)
 * keeps it slow, and one that moves more puts it back at full pace. */
static void test_idle_pace(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	uint64_t t = SEC;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	map.npages = 8 * ENTRY_PAGES;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, t), 0);
	CHECK_EQ_INT(map.moves, 1);
	CHECK_EQ_INT(sf.pace, 1);
	/* Idle: the third tick after the move samples at the slow pace. */
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(manager_tick(&mgr, t += SEC), 0);
	CHECK_EQ_INT(sf.pace, d.conf->sampling.damon_idle_slowdown);
	CHECK(sf.pace > 1);
	/* One more range turns hot and moves: 2 MiB, not idle, but the next
	 * tick stays at the slow pace. */
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + 2 * MIB, 2 * MIB, 40.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, t += SEC), 0);
	CHECK_EQ_INT(map.moves, 2);
	CHECK_EQ_U64(mgr.moved_bytes_total, 4 * MIB);
	CHECK_EQ_INT(mgr.idle_ticks, 0);
	CHECK_EQ_INT(manager_tick(&mgr, t += SEC), 0);
	CHECK_EQ_INT(sf.pace, d.conf->sampling.damon_idle_slowdown);
	/* A hot set arrives: 12 MiB moved, the next tick at full pace. */
	for (int i = 0; i < 6; i++)
		CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + (4 + 2 * (uint64_t)i) * MIB,
					       2 * MIB, 40.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, t += SEC), 0);
	CHECK_EQ_INT(count_on(&map, 0, 8 * ENTRY_PAGES, 0), 8 * ENTRY_PAGES);
	CHECK_EQ_U64(mgr.moved_bytes_total, 16 * MIB);
	CHECK_EQ_INT(manager_tick(&mgr, t += SEC), 0);
	CHECK_EQ_INT(sf.pace, 1);
	stop(&d);
}

/* A range of which a page stayed behind (-EBUSY) is not known fast: the
 * next tick queries it again. */
static void test_partial_move_requeried(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	int queries;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	map.busy = 5 + 1;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 511);
	CHECK_EQ_INT(map.node[5], 1);
	queries = map.queries;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
	CHECK_EQ_INT(map.queries, queries + 1);
	stop(&d);
}

/* A known-fast range whose recheck time ran out is looked at through 16 of
 * its pages; only when one is off the fast tier is the whole range queried. */
static void test_recheck_sampled(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	int queries;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 512);

	/* 11 s later: a sampled query, all on node 0, nothing moves. */
	queries = map.queries;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 12 * SEC), 0);
	CHECK_EQ_INT(map.queries, queries + 1);
	CHECK_EQ_U64(map.last_query, 16);
	CHECK_EQ_INT(map.moves, 1);
	/* Known fast again: the next tick does not query. */
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 13 * SEC), 0);
	CHECK_EQ_INT(map.queries, queries + 1);

	/* The kernel puts the range back on node 1: the next recheck's sample
	 * sees it, the whole range is queried and promoted again. */
	for (int i = 0; i < 512; i++)
		map.node[i] = 1;
	queries = map.queries;
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 24 * SEC), 0);
	CHECK_EQ_INT(map.queries, queries + 2);
	CHECK_EQ_INT(map.moves, 2);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 512);
	stop(&d);
}

static void test_vanilla_kernel(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	map.has_promote = false;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK(!move_has_promote(mgr.move));
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 512);
	CHECK_EQ_INT(map.moves, 1);
	CHECK_EQ_INT(map.promote_moves, 0);
	stop(&d);
}

/* One batch of @pl through account_step(), as the migrator left it (@state). */
static void account_one(struct tierd *d, const struct batch_plan *pl,
			const struct policy_intent *in, uint8_t state, uint64_t now_ns)
{
	struct acct_call calls[1] = { { .state = state } };
	struct mig_run_result run = { .calls = state != ACCT_CALL_SKIPPED };

	account_step(mgr.move, &(struct account_in){ .conf = d->conf, .topo = &d->topo, .plan = pl,
						     .intents = in, .calls = calls, .run = &run },
		     mgr.ranges, &d->stats, now_ns);
}

/*
 * What tierd_move_pages_addresses_total and tierd_move_pages_thps_total
 * count: a THP (512 pages, one folio) is one address, a range of 512 base
 * pages 512; a batch the migrator did not start counts nothing.  The plan
 * goes through account_step() as the tick hands it on.
 */
static void test_address_counts(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct policy_intent in[2] = {
		{ .addr = BASE, .pid = PID, .nr_pages = ENTRY_PAGES, .from_node = 1,
		  .to_node = 0, .cgroup = -1, .kind = POLICY_PROMOTE },
		{ .addr = BASE + 2 * MIB, .pid = PID, .nr_pages = ENTRY_PAGES, .from_node = 1,
		  .to_node = 0, .cgroup = -1, .kind = POLICY_PROMOTE, .flags = POLICY_F_PAGES },
	};
	struct batch_params bp = { .batch_pages = 1024, .page_size = PG };
	const struct batch_plan *pl;
	struct batcher *b;
	struct manager_ops fk;
	char root[4096];

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(batch_new(&bp, 2 * ENTRY_PAGES, &b), 0);
	CHECK_EQ_INT(batch_build(b, in, 2, &pl), 0);
	CHECK_EQ_U64(pl->nr_entries, 1 + ENTRY_PAGES);
	CHECK_EQ_U64(pl->nr_batches, 1);
	for (size_t e = 0; e < pl->nr_entries; e++)
		pl->status[e] = 0;
	account_one(&d, pl, in, ACCT_CALL_DONE, 1 * SEC);
	CHECK_EQ_U64(d.stats.move_pages_addresses_total, 1 + ENTRY_PAGES);
	CHECK_EQ_U64(d.stats.move_pages_thps_total, 1);
	/* Not started (the time budget ran out): nothing passed. */
	account_one(&d, pl, in, ACCT_CALL_SKIPPED, 2 * SEC);
	CHECK_EQ_U64(d.stats.move_pages_addresses_total, 1 + ENTRY_PAGES);
	CHECK_EQ_U64(d.stats.move_pages_thps_total, 1);
	batch_free(b);
	stop(&d);
}

static void test_dry_run(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096], text[1024];

	snprintf(text, sizeof(text), "%sdry_run: true\n", conf_promote);
	setup(&d, text, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK(d.dry_run);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.moves, 0);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 1), NPAGES);
	CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, 0);
	CHECK_EQ_U64(move_account(mgr.move)->would[POLICY_PROMOTE].bytes, 2 * MIB);
	stop(&d);
}

/* setup() with 512-page batches, no demotion, no copy threads and a
 * promotion rate of @mb_per_s (0: none). */
static void setup_rate(struct tierd *d, unsigned int mb_per_s, char *root, size_t len,
		       struct sampler_fake *sf, struct page_map *map, struct manager_ops *fk)
{
	static char conf[512];

	snprintf(conf, sizeof(conf),
		 "interval_ms: 500\n"
		 "tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
		 "promotion: {max_rate_mb_per_s: %u, batch_pages: 512}\n"
		 "demotion: {enabled: false}\n"
		 "copy_threads: {mode: off}\n", mb_per_s);
	setup(d, conf, root, len, sf, map, fk);
}

/* Two 2 MiB batches of hot pages at 2.5 s a call: the first call uses up the
 * 2 s budget, the second batch waits -- the backlog.  The next tick comes at
 * once and moves it from the table as it is; the sample queued meanwhile is
 * drained only after the backlog. */
static void test_backlog(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup_rate(&d, 0, root, sizeof(root), &sf, &map, &fk);
	map.move_ns = 2500000000ull;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 4 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.moves, 1);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 0), 512);
	CHECK(mgr.backlog);
	CHECK_EQ_INT(manager_interval_ms(&mgr), 0);

	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 4 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
	CHECK_EQ_INT(sf.nq, 1); /* not sampled */
	CHECK_EQ_INT(map.moves, 2);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 0), NPAGES);
	CHECK(!mgr.backlog);
	CHECK_EQ_INT(manager_interval_ms(&mgr), 500);

	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK_EQ_INT(sf.nq, 0);
	CHECK_EQ_INT(map.moves, 2);
	stop(&d);
}

/* A rate limit of 4 MB/s at 500 ms ticks: a bucket of one 2 MiB range.
 * The tick after a move finds it half full and holds the next hot range;
 * that tick is not idle (the pace and the interval stay), and the range
 * moves once the bucket has refilled. */
static void test_rate_held_not_idle(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup_rate(&d, 4, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 4 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 0), ENTRY_PAGES);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC + SEC / 4), 0);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 0), ENTRY_PAGES);
	CHECK(d.stats.decision.held[POLICY_H_GLOBAL_RATE] > 0);
	CHECK_EQ_INT(mgr.idle_ticks, 0);
	CHECK_EQ_INT(manager_interval_ms(&mgr), 500);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC + 3 * SEC / 4), 0);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 0), NPAGES);
	stop(&d);
}

/*
 * 4 KiB entries (the BPF source's): page 0 of a range, on node 0, and
 * page 1, on node 1, both hot.  Page 0's query must not mark the whole
 * range fast: page 1, next in the hottest-first order, is queried and
 * promoted in the same tick (it was skipped for 10 s).
 */
static void test_small_entries_no_range_mark(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	map.node[0] = 0;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, PG, 30.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + PG, PG, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.node[1], 0);
	CHECK_EQ_U64(map.moved_pages, 1);
	stop(&d);
}

/*
 * Node queries go one call per run of entries of one process, in the
 * hottest-first order: PID's page 0 (heat 30), two pages of GONE_PID (25,
 * 24), whose query fails with -ESRCH, and PID's page 1 (20) make three
 * calls; the failed one costs only its own entries, both of PID's pages
 * are promoted.
 */
static void test_query_runs(void)
{
	static const pid_t pids[] = { PID, GONE_PID };
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	fk.pids = pids;
	fk.nr_pids = 2;
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, PG, 30.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, GONE_PID, BASE + 8 * PG, PG, 25.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, GONE_PID, BASE + 9 * PG, PG, 24.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + PG, PG, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.queries, 2);
	CHECK_EQ_INT(map.gone_queries, 1);
	CHECK_EQ_U64(mgr.gathered.slots, 2);
	CHECK_EQ_INT(map.node[0], 0);
	CHECK_EQ_INT(map.node[1], 0);
	CHECK_EQ_U64(map.moved_pages, 2);
	stop(&d);
}

/*
 * The range memory's 32-bit times: never is 0 and nothing else, a time
 * reads back at most one unit early and never late (a late one would put a
 * move in the future, and now - then would wrap), order is kept, and times
 * past 32 bits stay at the last one instead of wrapping to the past.
 */
static void test_range_times(void)
{
	const uint64_t unit = 1ull << CAND_TIME_SHIFT;
	const uint64_t at[] = { 1, unit - 1, unit, unit + 1, 7 * unit, SEC, 3600 * SEC,
				86400 * SEC * 365 * 9 };
	uint32_t prev = 0;

	CHECK_EQ_U64(cand_ns(0), 0);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		uint32_t t = cand_time(at[i]);

		CHECK(t != 0);
		CHECK(t >= prev);
		CHECK(cand_ns(t) <= at[i]);
		CHECK(at[i] - cand_ns(t) < unit);
		prev = t;
	}
	CHECK(cand_time(2 * unit) > cand_time(unit));
	CHECK_EQ_U64(cand_time(UINT64_MAX), UINT32_MAX);
	CHECK_EQ_U64(cand_time(unit << 32), UINT32_MAX);
	CHECK(cand_ns(UINT32_MAX) < UINT64_MAX - unit);
}

/*
 * A source whose crowded floor follows the background gets the table's
 * entries by heat handed to the policy each tick; a source with a floor of
 * its own does not.  The process's 1 TiB resident (its statm) does not fit
 * the fast tier: the one hot range is all the table holds, the rest is
 * cold and unsampled, and the floor from the background is the least one;
 * the other source's is the policy's default.
 */
static void test_background_hist(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096], rel[64], statm[64];
	uint64_t sum;

	for (int background = 0; background <= 1; background++) {
		setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
		writable_root(&d, FIXTURE_FREE_KB);
		snprintf(rel, sizeof(rel), "proc/%d/statm", PID);
		snprintf(statm, sizeof(statm), "%llu %llu 0 0 0 0 0\n", (1ull << 40) / PG,
			 (1ull << 40) / PG);
		CHECK_EQ_INT(fs_tree_put(tree, rel, statm), 0);
		sf.base.crowded_hot = background ? POLICY_CROWDED_BACKGROUND : 0;
		CHECK_EQ_INT(start(&d, &fk), 0);
		memset(mgr.table_hist, 0, sizeof(mgr.table_hist));
		CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
		CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
		sum = 0;
		for (int b = 0; b < POLICY_HEAT_BINS; b++)
			sum += mgr.table_hist[b].bytes;
		CHECK_EQ_U64(sum, background ? 2 * MIB : 0);
		/* One entry in [16, 32) */
		CHECK(!background || mgr.table_hist[5].entries == 1);
		CHECK_EQ_INT(d.stats.decision.crowded_floor,
			     background ? POLICY_NOISE_MIN_FLOOR : POLICY_CROWDED_HOT);
		stop(&d);
		fs_tree_remove(tree);
	}
}

/* PID's statm (@pages resident) and maps (one mapping over NPAGES), in
 * the writable tree, for the fill pass. */
static void put_fill_proc(unsigned long long pages)
{
	char rel[64], text[128];

	snprintf(rel, sizeof(rel), "proc/%d/statm", PID);
	snprintf(text, sizeof(text), "%llu %llu 0 0 0 0 0\n", pages, pages);
	CHECK_EQ_INT(fs_tree_put(tree, rel, text), 0);
	snprintf(rel, sizeof(rel), "proc/%d/maps", PID);
	snprintf(text, sizeof(text), "%llx-%llx rw-p 00000000 00:00 0\n",
		 (unsigned long long)BASE, (unsigned long long)(BASE + NPAGES * PG));
	CHECK_EQ_INT(fs_tree_put(tree, rel, text), 0);
}

/*
 * The fill pass end to end: the process's 4 MiB (its statm) fit the fast
 * tier, its maps name them, and the sampler saw the first range only.
 * The tick promotes that one as hot and the unsampled second one as fill,
 * in a call after the hot one's; with promotion.fill off, or with a statm
 * of 1 TiB that does not fit, the second stays.  A tracked process before
 * it whose maps cannot be read (a directory: EISDIR) leaves it filled.
 */
static void test_fill(void)
{
	enum { LOW_PID = PID - 100 };
	static const pid_t pids[] = { LOW_PID, PID };
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096], rel[64], conf[512];

	for (int k = 0; k < 4; k++) {
		unsigned long long pages = k == 2 ? (1ull << 40) / PG : NPAGES;
		bool fills = k == 0 || k == 3;

		snprintf(conf, sizeof(conf),
			 "interval_ms: 500\n"
			 "tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
			 "promotion: {max_rate_mb_per_s: 0, batch_pages: 2048%s}\n"
			 "demotion: {enabled: false}\ncopy_threads: {mode: off}\n",
			 k == 1 ? ", fill: false" : "");
		setup(&d, conf, root, sizeof(root), &sf, &map, &fk);
		writable_root(&d, FIXTURE_FREE_KB);
		put_fill_proc(pages);
		if (k == 3) {
			fk.pids = pids;
			fk.nr_pids = 2;
			snprintf(rel, sizeof(rel), "proc/%d/statm", LOW_PID);
			CHECK_EQ_INT(fs_tree_put(tree, rel, "16 16 0 0 0 0 0\n"), 0);
			snprintf(rel, sizeof(rel), "proc/%d/maps/x", LOW_PID);
			CHECK_EQ_INT(fs_tree_put(tree, rel, ""), 0);
		}
		CHECK_EQ_INT(start(&d, &fk), 0);
		CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
		CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
		CHECK_EQ_INT(count_on(&map, 0, 512, 0), 512);
		CHECK_EQ_INT(count_on(&map, 512, NPAGES, 0), fills ? 512 : 0);
		CHECK_EQ_U64(d.stats.decision.intents[POLICY_R_HOT], 1);
		CHECK_EQ_U64(d.stats.decision.intents[POLICY_R_FILL], fills ? 1 : 0);
		CHECK_EQ_U64(d.stats.decision.fill_bytes, fills ? 2 * MIB : 0);
		CHECK_EQ_INT(map.moves, fills ? 2 : 1);
		stop(&d);
		fs_tree_remove(tree);
	}
}

/*
 * The fill pass's reads of the maps back off while they find nothing to
 * fill: the first tick fills the second range; the read at 61 s finds it
 * on the fast tier, so the next waits 120 s, not 60.  The kernel then
 * demotes the range: at 121 s nothing reads the maps and it stays; at
 * 181 s the read finds it and the tick fills it again.
 */
static void test_fill_backs_off(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	writable_root(&d, FIXTURE_FREE_KB);
	put_fill_proc(NPAGES);
	CHECK_EQ_INT(start(&d, &fk), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(count_on(&map, 0, NPAGES, 0), NPAGES);
	CHECK_EQ_INT(manager_tick(&mgr, 61 * SEC), 0);
	for (int i = 512; i < NPAGES; i++)
		map.node[i] = 1;
	CHECK_EQ_INT(manager_tick(&mgr, 121 * SEC), 0);
	CHECK_EQ_INT(count_on(&map, 512, NPAGES, 0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 181 * SEC), 0);
	CHECK_EQ_INT(count_on(&map, 512, NPAGES, 0), 512);
	stop(&d);
	fs_tree_remove(tree);
}

/*
 * The table's half-life follows the source's period: the configured 10 s
 * (the default) at one event in SAMPLE_PERIOD_INIT or denser, four
 * times that at four times the period or sparser (core/sample_period.h);
 * the heat an entry has when it changes stays.
 */
static void test_half_life_follows_period(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	struct hot_table *t;
	char root[4096];
	double h;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	t = sample_table(mgr.sample);
	CHECK_EQ_U64(t->params.half_life_ns, 10 * SEC);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 20.0), 0);
	sf.st.period = 4 * SAMPLE_PERIOD_INIT;
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_U64(t->params.half_life_ns, 40 * SEC);
	h = hot_heat(t, PID, BASE, 41 * SEC);
	CHECK(h > 9.99 && h < 10.01);
	sf.st.period = 1000;
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
	CHECK_EQ_U64(t->params.half_life_ns, 10 * SEC);
	stop(&d);
}

/*
 * A new hot set end to end: over a footprint of 1 TiB, a background
 * source's samples fall on one range for 30 s, then on ranges the table
 * has never seen.  Within the 256 samples after that (four ticks) the
 * policy's crowded floor is one sample (core/discover.h), for what was
 * recorded since the count that found them began, and the status says why.
 */
static void test_new_hot_set(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	uint64_t t = SEC, next = BASE + 64 * MIB, since;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	writable_root(&d, FIXTURE_FREE_KB);
	put_fill_proc((1ull << 40) / PG);
	sf.base.crowded_hot = POLICY_CROWDED_BACKGROUND;
	CHECK_EQ_INT(start(&d, &fk), 0);
	for (; t <= 30 * SEC; t += SEC) {
		for (int i = 0; i < SAMPLER_FAKE_MAX; i++)
			CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, 2 * MIB, 1.0), 0);
		CHECK_EQ_INT(manager_tick(&mgr, t), 0);
		CHECK_EQ_INT(d.stats.decision.crowded_floor, POLICY_NOISE_MIN_FLOOR);
	}
	for (int k = 0; k < 4; k++, t += SEC) {
		for (int i = 0; i < SAMPLER_FAKE_MAX; i++, next += 2 * MIB)
			CHECK_EQ_INT(sampler_fake_push(&sf, PID, next, 2 * MIB, 1.0), 0);
		CHECK_EQ_INT(manager_tick(&mgr, t), 0);
	}
	CHECK(d.stats.decision.discovering);
	CHECK_EQ_INT(d.stats.decision.crowded_floor, 1);
	/* The first sample of the one range, and the new ranges' all. */
	CHECK_EQ_U64(d.stats.table_samples_total, 34 * SAMPLER_FAKE_MAX);
	CHECK_EQ_U64(d.stats.table_fresh_samples_total, 1 + 4 * SAMPLER_FAKE_MAX);
	since = sample_news_since(mgr.sample);
	CHECK(since > 26 * SEC && since <= 31 * SEC);
	stop(&d);
	fs_tree_remove(tree);
}

int main(int argc, char **argv)
{
	int r = pipe_env_init(argc, argv, "test_pipeline");

	if (r)
		return r;
	RUN(test_range_times);
	RUN(test_promote);
	RUN(test_peek_wakes);
	RUN(test_background_hist);
	RUN(test_fill);
	RUN(test_fill_backs_off);
	RUN(test_half_life_follows_period);
	RUN(test_new_hot_set);
	RUN(test_idle_pace);
	RUN(test_partial_move_requeried);
	RUN(test_recheck_sampled);
	RUN(test_vanilla_kernel);
	RUN(test_dry_run);
	RUN(test_address_counts);
	RUN(test_backlog);
	RUN(test_rate_held_not_idle);
	RUN(test_small_entries_no_range_mark);
	RUN(test_query_runs);
	pipe_env_fini();
	return TEST_EXIT();
}
