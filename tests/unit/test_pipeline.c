// SPDX-License-Identifier: GPL-2.0-only
/*
 * The manager's tick end to end against fakes: a scripted sampler (heat),
 * a page map standing for move_pages(2) (where each page is), the DRAM+CXL
 * topology fixture.  One hot 2 MiB range of a process on node 1 is promoted
 * to node 0 in one move_pages call with MPOL_MF_PROMOTE where the "kernel"
 * takes it; an unsampled range stays; d->stats counts exactly the bytes that
 * landed; the next tick neither moves nor queries the range again; a dry
 * run moves nothing; a plan the tick's time budget cuts goes on at the next
 * tick at once, without sampling in between.  A hot set larger than one
 * tick's candidates takes the whole cap when nothing needs demoting, and
 * leaves a quarter of it to the coldest entries when a node is short of
 * memory, so those are demoted, past ranges already on the slow node, in a
 * table smaller or larger than the views a tick takes.
 *
 *   test_pipeline FIXTURES_DIR
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "fs_tree.h"
#include "manager.h"
#include "migrate.h"
#include "sampler_fake.h"
#include "test.h"

#define SEC 1000000000ull
#define PG 4096ull
#define MIB (1ull << 20)
#define PID 4242
#define BASE 0x40000000ull
#define NPAGES 1024 /* 4 MiB: the hot first half, the unsampled second */
#define ENTRY_PAGES 512 /* a 2 MiB range of base pages */
/* The large map: 96 ranges, more than the 64 of one tick's candidates
 * (MAX_CAND_ENTRIES, 32 Ki base pages), then 8 cold on the fast node, then
 * 16 colder still on the slow one. */
#define HOT_RANGES 96
#define COLD_RANGES 8
#define SLOW_RANGES 16
#define MAP_PAGES ((HOT_RANGES + COLD_RANGES + SLOW_RANGES) * ENTRY_PAGES)
#define COLD_FIRST (HOT_RANGES * ENTRY_PAGES) /* first page of the cold ranges */
#define SLOW_FIRST (COLD_FIRST + COLD_RANGES * ENTRY_PAGES)
#define CAND_PAGES (32 << 10) /* MAX_CAND_ENTRIES in decide.c */
#define RESERVE_PAGES (CAND_PAGES / 4) /* kept for the coldest */
#define VIEWS 4096 /* MAX_VIEWS in gather.c: entries looked at a tick */
#define COLD_QUERY_RANGES 32 /* COLD_QUERY_PAGES in gather.c, in ranges */
#define QUERY_PAGES 4096 /* QUERY_PAGES in gather.c: pages one node query covers */
#define QUERY_ENTRIES 1024 /* QUERY_ENTRIES in gather.c: entries it covers */
#define GONE_PID 4343 /* a target whose queries fail with -ESRCH */
/* A second mapping of up to FAR_MAX 2 MiB ranges, every page on far_node. */
#define FAR_BASE 0x100000000ull
#define FAR_MAX 8192
#define FIXTURE_FREE_KB 12000000 /* node 0's MemFree in dram-cxl */

static const char *fixtures_dir;
/* The manager of the test's tierd; one at a time. */
static struct manager mgr;
static char tmpdir[] = "/tmp/test_pipeline.XXXXXX";

/* The fake kernel: which node each page of PID's [BASE, BASE + npages
 * pages) is on; other addresses are not mapped. */
struct page_map {
	int node[MAP_PAGES];
	int npages; /* NPAGES, or up to MAP_PAGES */
	bool has_promote;
	int queries, moves, promote_moves;
	unsigned long last_query; /* pages in the last node query */
	unsigned long queried_pages; /* in all node queries */
	int gone_queries; /* node queries of another pid than PID */
	unsigned long moved_pages;
	uint64_t clock_ns;
	uint64_t move_ns; /* fake time one move call takes; 0: 1 ms */
	int busy; /* page index + 1 that moves leave in place with -EBUSY; 0: none; -1: all */
	int far_ranges, far_node; /* the far mapping: how many ranges, their node */
	unsigned long far_moved; /* pages moves asked of it (left where they are) */
};

static int map_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			  const int *nodes, int *status, int flags)
{
	struct page_map *m = ctx;

	if (count == 0 && !addrs)
		return (flags & MPOL_MF_PROMOTE) && !m->has_promote ? -EINVAL : 0;
	if (pid != PID) {
		m->gone_queries += !nodes;
		return -ESRCH;
	}
	if (nodes) {
		m->moves++;
		m->promote_moves += !!(flags & MPOL_MF_PROMOTE);
	} else {
		m->queries++;
		m->last_query = count;
		m->queried_pages += count;
	}
	for (unsigned long i = 0; i < count; i++) {
		uint64_t a = (uint64_t)(uintptr_t)addrs[i];
		size_t pg = (a - BASE) / PG;

		if (a >= FAR_BASE && a < FAR_BASE + (uint64_t)m->far_ranges * 2 * MIB) {
			m->far_moved += !!nodes;
			status[i] = m->far_node;
			continue;
		}
		if (a < BASE || pg >= (size_t)m->npages) {
			status[i] = -ENOENT;
			continue;
		}
		if (nodes && (m->busy == (int)pg + 1 || m->busy < 0)) {
			status[i] = -EBUSY;
			continue;
		}
		if (nodes) {
			m->node[pg] = nodes[i];
			m->moved_pages++;
		}
		status[i] = m->node[pg];
	}
	m->clock_ns += nodes && m->move_ns ? m->move_ns : 1000000;
	return 0;
}

static uint64_t map_now_ns(void *ctx)
{
	return ((struct page_map *)ctx)->clock_ns;
}

static const struct mig_ops map_ops = {
	.move_pages = map_move_pages,
	.now_ns = map_now_ns,
};

static int count_on(const struct page_map *m, int from, int to, int node)
{
	int n = 0;

	for (int i = from; i < to; i++)
		n += m->node[i] == node;
	return n;
}

static void setup(struct tierd *d, const char *conf_text, char *root, size_t root_len,
		  struct sampler_fake *sf, struct page_map *map, struct manager_ops *fk)
{
	static const pid_t pids[] = { PID };
	char path[200];
	FILE *f;

	memset(d, 0, sizeof(*d));
	snprintf(root, root_len, "%s/topology/dram-cxl", fixtures_dir);
	d->root = root;
	snprintf(path, sizeof(path), "%s/tierd.yaml", tmpdir);
	f = fopen(path, "w");
	fputs(conf_text, f);
	fclose(f);
	snprintf(d->config_path, sizeof(d->config_path), "%s", path);
	snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s", tmpdir);
	d->no_knobs = true;

	memset(map, 0, sizeof(*map));
	map->npages = NPAGES;
	for (int i = 0; i < MAP_PAGES; i++)
		map->node[i] = 1;
	map->has_promote = true;
	sampler_fake_init(sf, "fake");
	*fk = (struct manager_ops){
		.sampler = &sf->base,
		.pids = pids,
		.nr_pids = 1,
		.mig_ops = &map_ops,
		.mig_ctx = map,
	};
}

/* tierd_init() and manager_init() with the fakes, as main() runs them. */
static int start(struct tierd *d, const struct manager_ops *fk)
{
	int r = tierd_init(d);

	return r < 0 ? r : manager_init(&mgr, d, fk);
}

static void stop(struct tierd *d)
{
	manager_fini(&mgr);
	tierd_fini(d);
}

static const char *conf_promote =
	"interval_ms: 500\n"
	"tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
	"promotion: {max_rate_mb_per_s: 0, batch_pages: 2048}\n"
	"demotion: {enabled: false}\n"
	"copy_threads: {mode: off}\n";

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
 * after a woken tick that moved nothing, not again before a regular one. */
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

	/* A false alarm: the woken tick finds nothing to move and arms
	 * nothing; the next regular tick arms again. */
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC), 0);
	CHECK(sf.armed);
	CHECK_EQ_INT(manager_peek(&mgr, 3 * SEC + SEC / 10), 1);
	CHECK_EQ_INT(manager_tick(&mgr, 3 * SEC + SEC / 10), 0);
	CHECK_EQ_INT(mgr.idle_ticks, 2);
	CHECK(!sf.armed);
	CHECK_EQ_INT(manager_peek(&mgr, 3 * SEC + 2 * SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 6);
	CHECK_EQ_INT(manager_tick(&mgr, 5 * SEC), 0);
	CHECK(sf.armed);
	CHECK_EQ_INT(manager_peek(&mgr, 5 * SEC + SEC / 10), 1);
	CHECK_EQ_U64(d.stats.sampler_wakes_total, 3);
	CHECK_EQ_INT(map.moves, 2);

	/* sampling.damon.idle_peek: false: nothing armed, no descriptor, the
	 * source is not asked; true again: it is. */
	CHECK_EQ_INT(manager_tick(&mgr, 9 * SEC), 0);	/* the woken one */
	d.conf->sampling.damon_idle_peek = false;
	CHECK_EQ_INT(manager_tick(&mgr, 13 * SEC), 0);
	CHECK(!sf.armed);
	CHECK_EQ_INT(manager_peek_fd(&mgr, &gen), -1);
	CHECK_EQ_INT(manager_peek(&mgr, 13 * SEC + SEC / 10), 0);
	CHECK_EQ_INT(sf.peeks, 7);
	d.conf->sampling.damon_idle_peek = true;
	CHECK_EQ_INT(manager_tick(&mgr, 17 * SEC), 0);
	CHECK(sf.armed);
	CHECK_EQ_INT(manager_peek(&mgr, 17 * SEC + SEC / 10), 1);
	CHECK_EQ_INT(sf.peeks, 8);
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

	setup(&d,
	      "interval_ms: 500\n"
	      "tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
	      "promotion: {max_rate_mb_per_s: 0, batch_pages: 512}\n"
	      "demotion: {enabled: false}\n"
	      "copy_threads: {mode: off}\n",
	      root, sizeof(root), &sf, &map, &fk);
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

/*
 * The large map: HOT_RANGES ranges on node 1, COLD_RANGES on node 0,
 * SLOW_RANGES on node 1; demotion on, a fixed hot threshold of 8 (cold at
 * 4 and below).
 */
static const char *conf_big =
	"interval_ms: 500\n"
	"tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
	"promotion: {max_rate_mb_per_s: 0, batch_pages: 2048, hot_threshold: 8}\n"
	"demotion: {enabled: true, cold_age_s: 1}\n"
	"copy_threads: {mode: off}\n";

static void setup_big(struct tierd *d, char *root, size_t root_len, struct sampler_fake *sf,
		      struct page_map *map, struct manager_ops *fk)
{
	setup(d, conf_big, root, root_len, sf, map, fk);
	map->npages = MAP_PAGES;
	for (int i = COLD_FIRST; i < SLOW_FIRST; i++)
		map->node[i] = 0;
}

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

/* Node 0 of the tree at @root has @free_kb free from now on. */
static void node0_free(const char *root, unsigned long free_kb)
{
	char meminfo[256];

	snprintf(meminfo, sizeof(meminfo),
		 "Node 0 MemTotal:       16777216 kB\nNode 0 MemFree:        %lu kB\n", free_kb);
	CHECK_EQ_INT(fs_tree_put(root, "sys/devices/system/node/node0/meminfo", meminfo), 0);
}

/* A writable copy of the fixture, made by writable_root(). */
static char tree[sizeof("/tmp/test_pipeline_root.XXXXXX")];

/* d->root: a copy of the fixture (d->root) where node 0 has @free_kb free;
 * fs_tree_remove(tree) after tierd_fini(). */
static void writable_root(struct tierd *d, unsigned long free_kb)
{
	snprintf(tree, sizeof(tree), "/tmp/test_pipeline_root.XXXXXX");
	CHECK_EQ_INT(fs_tree_copy(d->root, tree), 0);
	node0_free(tree, free_kb);
	d->root = tree;
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

int main(int argc, char **argv)
{
	if (argc != 2 || !mkdtemp(tmpdir)) {
		fprintf(stderr, "usage: test_pipeline FIXTURES_DIR\n");
		return 2;
	}
	fixtures_dir = argv[1];
	RUN(test_range_times);
	RUN(test_promote);
	RUN(test_peek_wakes);
	RUN(test_idle_pace);
	RUN(test_partial_move_requeried);
	RUN(test_recheck_sampled);
	RUN(test_vanilla_kernel);
	RUN(test_dry_run);
	RUN(test_backlog);
	RUN(test_full_cap);
	RUN(test_cap_partial_range);
	RUN(test_rate_no_spin);
	RUN(test_rate_below_range);
	RUN(test_cold_reserve);
	RUN(test_cold_pass_large_table);
	RUN(test_cold_walk);
	RUN(test_small_entries_no_range_mark);
	RUN(test_query_runs);
	RUN(test_cold_walk_small_entries);
	RUN(test_mark_follows_query);
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/tierd.yaml", tmpdir);
		unlink(path);
		rmdir(tmpdir);
	}
	return TEST_EXIT();
}
