// SPDX-License-Identifier: GPL-2.0-only
/* Policy scenarios: topology + candidates + budgets -> exact intents. */
#include <errno.h>
#include <stdlib.h>

#include "gpu_usage.h"
#include "policy.h"
#include "test.h"
#include "test_geom.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)
#define SEC 1000000000ull
#define PG 4096ull
#define THP 512

static struct topology topo;

/* A node at index = id; @tier's watermarks set by topo_tier(). */
static void topo_node(int id, int tier, bool cpus, uint64_t total, uint64_t free_bytes)
{
	struct topo_node *n = &topo.nodes[id];

	n->id = id;
	n->tier = tier;
	n->has_cpus = cpus;
	n->has_memory = true;
	n->total_bytes = total;
	n->free_bytes = free_bytes;
	n->kernel_tier = -1;
	if (topo.nr_nodes <= id)
		topo.nr_nodes = id + 1;
	if (topo.nr_tiers <= tier)
		topo.nr_tiers = tier + 1;
	topo.tiers[tier].nodes[topo.tiers[tier].nr_nodes++] = id;
}

static void topo_reset(void)
{
	memset(&topo, 0, sizeof(topo));
}

static void topo_wmarks(int tier, unsigned int low_pct, unsigned int high_pct)
{
	topo.tiers[tier].low_watermark_pct = low_pct;
	topo.tiers[tier].high_watermark_pct = high_pct;
}

static void topo_dist(int a, int b, int d)
{
	topo.distance[a][b] = d;
	topo.distance[b][a] = d;
}

/* DRAM on node 0 (1 GiB, 512 MiB free), a slower node 1 and GPU HBM on
 * node 2 (1 GiB, 512 MiB free), nearer to node 0 than node 1 is. */
static void topo_with_gpu(uint64_t slow_total, uint64_t slow_free)
{
	topo_reset();
	topo_node(0, 0, true, 1 * GiB, 512 * MiB);
	topo_node(1, 1, false, slow_total, slow_free);
	topo_node(2, 1, false, 1 * GiB, 512 * MiB);
	topo.nodes[2].gpu = true;
	topo_dist(0, 1, 20);
	topo_dist(0, 2, 15);
	topo_dist(1, 2, 40);
}

/* Node 0 DRAM and node 1 CXL, 1 GiB each, half free. */
static void topo_pair(void)
{
	topo_reset();
	topo_node(0, 0, true, 1 * GiB, 512 * MiB);
	topo_node(1, 1, false, 1 * GiB, 512 * MiB);
	topo_dist(0, 1, 20);
}

static struct policy_page pages[16384];
static size_t nr_pages;

/* @n candidates of @pid from @addr on, @nr base pages each. */
static void add_pages(int n, int pid, uint64_t addr, uint32_t nr, int node, uint32_t heat, int cgroup)
{
	for (int i = 0; i < n; i++) {
		struct policy_page *pg = &pages[nr_pages++];

		memset(pg, 0, sizeof(*pg));
		pg->pid = pid;
		pg->addr = addr + (uint64_t)i * nr * PG;
		pg->nr_pages = nr;
		pg->node = node;
		pg->heat = heat;
		pg->cgroup = cgroup;
		pg->rule = -1;
	}
}

static struct policy_intent intents[16384];
static struct policy_output out;
static uint64_t max_bytes;	/* run()'s out.max_bytes */
static uint64_t footprint;	/* run()'s in.footprint_bytes */
static uint32_t crowded_hot;	/* run()'s in.crowded_hot */
static const struct hot_heat_bin *table_hist;	/* run()'s in.table_hist */
static uint64_t news_since;	/* run()'s in.news_since_ns */
static uint64_t *cg_wait;	/* run()'s out.cg_wait_bytes */

static int run(const struct policy_params *params, struct policy_cgroup *cgs, size_t nr_cgs,
	       const uint64_t *rule_used, struct bucket *global, uint64_t blocked, uint64_t now)
{
	struct policy *p;
	struct policy_input in = {
		.topo = &topo,
		.pages = pages,
		.nr_pages = nr_pages,
		.cgroups = cgs,
		.nr_cgroups = nr_cgs,
		.rule_used_bytes = rule_used,
		.global_rate = global,
		.blocked_nodes = blocked,
		.footprint_bytes = footprint,
		.crowded_hot = crowded_hot,
		.table_hist = table_hist,
		.news_since_ns = news_since,
		.now_ns = now,
	};
	int r;

	r = policy_new(params, nr_pages, 8, &p);
	if (r < 0)
		return r;
	memset(&out, 0, sizeof(out));
	out.intents = intents;
	out.max_intents = sizeof(intents) / sizeof(intents[0]);
	out.max_bytes = max_bytes;
	out.cg_wait_bytes = cg_wait;
	r = policy_run(p, &in, &out);
	policy_free(p);
	return r;
}

/* Intents [from, to) of kind/reason moving pages to node @dst. */
static int count(enum policy_kind kind, enum policy_reason reason, int dst)
{
	int n = 0;

	for (size_t i = 0; i < out.nr_intents; i++)
		if (intents[i].kind == kind && intents[i].reason == reason &&
		    (dst < 0 || intents[i].to_node == dst))
			n++;
	return n;
}

static void test_threshold_from_hist(void)
{
	uint64_t h[POLICY_HEAT_BINS] = { 0 };

	/* Empty: the floor. */
	CHECK_EQ_INT(policy_threshold_from_hist(h, 100, 1), 1);
	h[6] = 30;	/* heat [32, 64) */
	h[4] = 20;	/* [8, 16) */
	h[2] = 1000;	/* [2, 4) */
	CHECK_EQ_INT(policy_threshold_from_hist(h, 1049, 1), 8);
	CHECK_EQ_INT(policy_threshold_from_hist(h, 1050, 1), 2);
	CHECK_EQ_INT(policy_threshold_from_hist(h, 49, 1), 32);
	/* The hottest bin stays hot even when it alone overflows. */
	CHECK_EQ_INT(policy_threshold_from_hist(h, 10, 1), 32);
	/* The floor wins. */
	CHECK_EQ_INT(policy_threshold_from_hist(h, 1050, 5), 5);
	h[32] = 1;	/* heat >= 2^31 */
	CHECK_EQ_INT(policy_threshold_from_hist(h, 1, 1), 1u << 31);
}

/* The essay's worked example, exactly. */
static void test_worked_example(void)
{
	struct policy_params pp;

	topo_reset();
	topo_node(0, 0, true, 16 * GiB, 2 * GiB);
	topo_node(1, 1, false, 64 * GiB, 40 * GiB);
	topo_wmarks(0, 5, 10);
	topo_dist(0, 1, 20);
	nr_pages = 0;
	add_pages(150, 100, 0x10000000, THP, 1, 40, -1);
	add_pages(100, 100, 0x40000000, THP, 1, 10, -1);
	add_pages(7168, 200, 0x800000000, THP, 0, 3, -1);
	policy_params_default(&pp, &test_geom);

	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.stats.hot_threshold, 8);
	CHECK_EQ_INT(out.stats.cold_threshold, 4);
	CHECK_EQ_INT(out.nr_intents, 250);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 204);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_ROOM, 1), 46);
	CHECK_EQ_U64(out.stats.promote_bytes, 204 * 2 * MiB);
	CHECK_EQ_U64(out.stats.demote_bytes, 46 * 2 * MiB);
	CHECK_EQ_U64(out.stats.unmet_bytes, 46 * 2 * MiB);
	CHECK_EQ_INT(out.stats.held[POLICY_H_NO_ROOM], 46);
	/* Hottest first: the heat-40 THPs lead, in address order. */
	CHECK_EQ_U64(intents[0].addr, 0x10000000);
	CHECK_EQ_INT(intents[0].from_node, 1);
	CHECK_EQ_INT(intents[0].to_node, 0);
	CHECK_EQ_U64(intents[149].addr, 0x10000000 + 149 * 2 * MiB);
	CHECK_EQ_U64(intents[150].addr, 0x40000000);
	CHECK_EQ_U64(intents[203].addr, 0x40000000 + 53 * 2 * MiB);
	/* Then the room demotions: the lowest addresses of the heat-3 set. */
	CHECK_EQ_U64(intents[204].addr, 0x800000000);
	CHECK_EQ_INT(intents[204].kind, POLICY_DEMOTE);
	CHECK_EQ_U64(intents[249].addr, 0x800000000 + 45 * 2 * MiB);

	/* Without room demotion only the promotions remain. */
	pp.demote_for_room = false;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 204);
}

/*
 * Node 0 below its low watermark: coldest cold pages go down until the
 * planned free reaches high; warm and hot pages stay.
 */
static void test_watermark_demotion(void)
{
	struct policy_params pp;

	topo_reset();
	/* 1000 MiB, low 10% = 100 MiB, high 20% = 200 MiB, 60 MiB free. */
	topo_node(0, 0, true, 1000 * MiB, 60 * MiB);
	topo_node(1, 1, false, 4 * GiB, 3 * GiB);
	topo_wmarks(0, 10, 20);
	topo_dist(0, 1, 20);
	nr_pages = 0;
	add_pages(40, 7, 0x200000, THP, 0, 50, -1);	/* cold: C = 50 */
	add_pages(40, 7, 0x20000000, THP, 0, 0, -1);	/* coldest */
	add_pages(40, 7, 0x40000000, THP, 0, 60, -1);	/* warm: stays */
	add_pages(40, 7, 0x60000000, THP, 0, 200, -1);	/* hot: stays */
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;

	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	/* need = 200 - 60 = 140 MiB = 70 THPs: 40 at heat 0, 30 at heat 50. */
	CHECK_EQ_INT(out.nr_intents, 70);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_WMARK, 1), 70);
	CHECK_EQ_U64(intents[0].addr, 0x20000000);
	CHECK_EQ_U64(intents[39].addr, 0x20000000 + 39 * 2 * MiB);
	CHECK_EQ_U64(intents[40].addr, 0x200000);
	CHECK_EQ_U64(intents[69].addr, 0x200000 + 29 * 2 * MiB);
	CHECK_EQ_U64(out.stats.demote_bytes, 140 * MiB);

	/* The lower node has room for only 20 MiB above its own high. */
	topo.nodes[1].free_bytes = 20 * MiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 10);
	CHECK_EQ_INT(out.stats.held[POLICY_H_NO_ROOM], 70);
}

/*
 * Promotion's hysteresis (min_room_bytes): a node that starts the tick with
 * less room than that takes no promotion, however little a page needs; one
 * with that much is filled down to its high target; room demotions for a
 * closed node make enough to open it.  Node 0: 1000 MiB, high 20% = 200 MiB.
 */
static void test_min_room(void)
{
	struct policy_params pp;

	topo_reset();
	topo_node(0, 0, true, 1000 * MiB, 201 * MiB);	/* 1 MiB of room */
	topo_node(1, 1, false, 4 * GiB, 3 * GiB);
	topo_wmarks(0, 10, 20);
	topo_dist(0, 1, 20);
	nr_pages = 0;
	add_pages(300, 7, 0x10000000, 1, 1, 200, -1);	/* hot 4 KiB pages */
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	pp.demote = false;
	CHECK_EQ_U64(pp.min_room_bytes, 2 * MiB);

	/* Closed: 1 MiB is room for 256 of them, but below 2 MiB. */
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 0);
	CHECK_EQ_U64(out.stats.unmet_bytes, 300 * PG);
	CHECK_EQ_INT(out.stats.held[POLICY_H_REFILL], 300);
	CHECK_EQ_INT(out.stats.held[POLICY_H_NO_ROOM], 0);
	CHECK_EQ_STR(policy_hold_name(POLICY_H_REFILL), "refill");

	/* Without the hysteresis, the 1 MiB is filled. */
	pp.min_room_bytes = 0;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 256);

	/* Open (exactly 2 MiB): filled down to high in the same tick, past
	 * the point where less than 2 MiB is left. */
	pp.min_room_bytes = 2 * MiB;
	topo.nodes[0].free_bytes = 202 * MiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 300);
	topo.nodes[0].free_bytes = 202 * MiB - 1;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 0);

	/* Closed, 200.5 MiB free: 1.5 MiB short of open.  Of 2 MiB of cold
	 * 4 KiB pages on node 0, room demotions take 1.5 MiB (384 pages),
	 * more than the 300 hot pages' 1.17 MiB that would leave it closed. */
	pp.demote = true;
	add_pages(512, 7, 0x80000000, 1, 0, 0, -1);
	topo.nodes[0].free_bytes = 200 * MiB + 512 * KiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_ROOM, 1), 384);
}

/*
 * policy_may_demote() against what policy_run() does on the same nodes: at
 * each boundary it checks (free at the low target vs a byte under it, room
 * for a tick's promotion or not, a cgroup at or over its cap) it says yes
 * where policy_run() may demote.  It may say yes where policy_run() then
 * demotes nothing (room short of a whole tick, but enough for this tick's
 * pages): it is an upper bound, not the decision.  Node 0: 1000 MiB,
 * low 10% = 100 MiB, high 20% = 200 MiB; one tick promotes at most 64 MiB.
 */
static void test_may_demote(void)
{
	struct policy_cgroup cg = { .fast_bytes = 10 * PG, .fast_max_bytes = 0 };
	struct policy_input in = { .topo = &topo };
	struct policy_params pp;

	topo_reset();
	topo_node(0, 0, true, 1000 * MiB, 100 * MiB);
	topo_node(1, 1, false, 4 * GiB, 3 * GiB);
	topo_wmarks(0, 10, 20);
	topo_dist(0, 1, 20);
	nr_pages = 0;
	add_pages(1, 7, 0x200000, THP, 0, 0, 0);
	add_pages(1, 7, 0x400000, THP, 1, 200, 0);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	pp.demote_for_room = false;

	/* At low: no watermark demotion; the hot page finds no room. */
	CHECK(!policy_may_demote(&pp, &in, 64 * MiB));
	CHECK_EQ_INT(run(&pp, &cg, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_U64(out.stats.demote_bytes, 0);
	/* One byte under it: the cold page goes. */
	topo.nodes[0].free_bytes = 100 * MiB - 1;
	CHECK(policy_may_demote(&pp, &in, 64 * MiB));
	CHECK_EQ_INT(run(&pp, &cg, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_WMARK, 1), 1);

	/* Room demotions: less room above high than a tick promotes. */
	pp.demote_for_room = true;
	topo.nodes[0].free_bytes = 100 * MiB;
	CHECK(policy_may_demote(&pp, &in, 64 * MiB));
	CHECK_EQ_INT(run(&pp, &cg, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_ROOM, 1), 1);
	topo.nodes[0].free_bytes = 263 * MiB;
	CHECK(policy_may_demote(&pp, &in, 64 * MiB));
	topo.nodes[0].free_bytes = 264 * MiB;
	CHECK(!policy_may_demote(&pp, &in, 64 * MiB));
	CHECK_EQ_INT(run(&pp, &cg, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 1);
	CHECK_EQ_U64(out.stats.demote_bytes, 0);

	/* The lowest tier has nowhere to demote to. */
	topo.nodes[1].free_bytes = 0;
	CHECK(!policy_may_demote(&pp, &in, 64 * MiB));

	/* Demotion off: only a cgroup over its cap demotes. */
	pp.demote = false;
	topo.nodes[0].free_bytes = 0;
	topo.nodes[1].free_bytes = 3 * GiB;
	in.cgroups = &cg;
	in.nr_cgroups = 1;
	CHECK(!policy_may_demote(&pp, &in, 64 * MiB));
	cg.fast_max_bytes = 10 * PG;
	CHECK(!policy_may_demote(&pp, &in, 64 * MiB));
	cg.fast_bytes = 10 * PG + 1;
	CHECK(policy_may_demote(&pp, &in, 64 * MiB));
	CHECK_EQ_INT(run(&pp, &cg, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_CAP, 1), 1);
}

static void test_cooldown_and_pingpong(void)
{
	struct policy_params pp;

	topo_pair();
	nr_pages = 0;
	add_pages(4, 1, 0x1000, 1, 1, 500, -1);
	policy_params_default(&pp, &test_geom);	/* cool-down 10 s, window 60 s, hold 300 s */
	pp.hot_threshold = 100;
	/* 0: demoted 5 s ago: cool-down. */
	pages[0].last_demote_ns = 995 * SEC;
	/* 1: promoted at 900 s, demoted at 930 s: ping-pong, held until 1230 s. */
	pages[1].last_promote_ns = 900 * SEC;
	pages[1].last_demote_ns = 930 * SEC;
	/* 2: promoted at 100 s, demoted at 800 s: far apart, moves. */
	pages[2].last_promote_ns = 100 * SEC;
	pages[2].last_demote_ns = 800 * SEC;
	/* 3: never moved. */

	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 2);
	CHECK_EQ_U64(intents[0].addr, 0x1000 + 2 * PG);
	CHECK_EQ_U64(intents[1].addr, 0x1000 + 3 * PG);
	CHECK_EQ_INT(out.stats.held[POLICY_H_COOLDOWN], 1);
	CHECK_EQ_INT(out.stats.held[POLICY_H_PINGPONG], 1);

	/* A page still on node 1 whose 2 MiB range was promoted in part 5 s
	 * ago (move times are kept per range): the cool-down is for moves
	 * back, and this page never moved; it is promoted. */
	nr_pages = 0;
	add_pages(1, 1, 0x1000, 1, 1, 500, -1);
	pages[0].last_promote_ns = 995 * SEC;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 1);
	CHECK_EQ_INT(out.stats.held[POLICY_H_COOLDOWN], 0);
	nr_pages = 0;
	add_pages(4, 1, 0x1000, 1, 1, 500, -1);
	pages[1].last_promote_ns = 900 * SEC;
	pages[1].last_demote_ns = 930 * SEC;

	/* At 1230 s the ping-pong hold has run out. */
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1230 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 4);
	CHECK_EQ_INT(out.stats.held[POLICY_H_PINGPONG], 0);

	/* A cold page promoted 20 s ago is past its cool-down but inside the
	 * ping-pong window: demoting it now is allowed (the pair is only
	 * complete after the move); its next promotion would be held. */
	nr_pages = 0;
	topo.nodes[0].free_bytes = 0;
	topo_wmarks(0, 10, 20);
	add_pages(1, 1, 0x1000, 1, 0, 0, -1);
	pages[0].last_promote_ns = 980 * SEC;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_WMARK, 1), 1);
	/* Demoted at 1000 s; back on node 1 and hot at 1100 s: held. */
	pages[0].node = 1;
	pages[0].heat = 500;
	pages[0].last_demote_ns = 1000 * SEC;
	topo.nodes[0].free_bytes = 512 * MiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1100 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 0);
	CHECK_EQ_INT(out.stats.held[POLICY_H_PINGPONG], 1);
}

static void test_cgroup_cap(void)
{
	struct policy_params pp;
	struct policy_cgroup cgs[2] = {
		{ .fast_bytes = 6 * PG, .fast_max_bytes = 10 * PG },
		{ .fast_bytes = 100 * PG, .fast_max_bytes = 0 },
	};

	topo_pair();
	nr_pages = 0;
	add_pages(8, 10, 0x100000, 1, 1, 300, 0);
	add_pages(8, 11, 0x100000, 1, 1, 200, 1);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;

	CHECK_EQ_INT(run(&pp, cgs, 2, NULL, NULL, 0, 1000 * SEC), 0);
	/* Cgroup 0 has room for 4 pages under its cap; cgroup 1 for all 8. */
	CHECK_EQ_INT(out.nr_intents, 12);
	CHECK_EQ_INT(out.stats.held[POLICY_H_CGROUP_CAP], 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(intents[i].pid, 10);
	for (int i = 4; i < 12; i++)
		CHECK_EQ_INT(intents[i].pid, 11);

	/* Over the cap by 3 pages: its 3 coldest fast-tier pages go down,
	 * and nothing of it is promoted. */
	cgs[0].fast_bytes = 13 * PG;
	nr_pages = 0;
	add_pages(4, 10, 0x100000, 1, 1, 300, 0);
	add_pages(5, 10, 0x900000, 1, 0, 200, 0);
	pages[8].heat = 1;
	pages[6].heat = 2;
	CHECK_EQ_INT(run(&pp, cgs, 2, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 3);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_CAP, 1), 3);
	CHECK_EQ_U64(intents[0].addr, 0x900000 + 4 * PG);
	CHECK_EQ_U64(intents[1].addr, 0x900000 + 2 * PG);
	CHECK_EQ_U64(intents[2].addr, 0x900000);
	CHECK_EQ_INT(out.stats.held[POLICY_H_CGROUP_CAP], 4);
}

/*
 * A cgroup at its cap whose hotter pages wait below trades its coldest
 * fast-tier pages for them (pol_exchange_for_cap()): the hottest waiting
 * against the coldest resident, while the resident's heat is at most
 * cold_pct (50) of the waiting page's and three standard deviations of
 * chance below it, as many bytes as wait.  The waiting pages are
 * promoted on a later tick.
 */
static void test_cap_exchange(void)
{
	struct policy_params pp;
	uint64_t wait[2];
	struct policy_cgroup cgs[2] = {
		{ .fast_bytes = 10 * PG, .fast_max_bytes = 10 * PG },
		{ .fast_bytes = 10 * PG, .fast_max_bytes = 10 * PG },
	};

	topo_pair();
	nr_pages = 0;
	add_pages(3, 10, 0x100000, 1, 1, 300, 0);	/* 0-2: waiting, 300 */
	add_pages(2, 10, 0x200000, 1, 1, 120, 0);	/* 3-4: waiting, 120 */
	add_pages(5, 10, 0x900000, 1, 0, 150, 0);	/* 5-9: residents */
	pages[5].heat = 60;
	pages[6].heat = 10;
	pages[9].heat = 200;
	add_pages(3, 11, 0x900000, 1, 0, 1, 1);	/* cgroup 1's: nothing waits */
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	cg_wait = wait;
	CHECK_EQ_INT(run(&pp, cgs, 2, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_U64(wait[0], 5 * PG);
	CHECK_EQ_U64(wait[1], 0);
	CHECK_EQ_INT(out.stats.held[POLICY_H_CGROUP_CAP], 5);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, -1), 0);
	/* The three at 300 take the coldest three (10, 60, then one at 150,
	 * half as hot); the two at 120 would take the other at 150, more
	 * than half as hot: it stays, and so does the one at 200. */
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_EXCHANGE, 1), 3);
	CHECK_EQ_INT(out.nr_intents, 3);
	CHECK_EQ_U64(intents[0].addr, 0x900000 + PG);
	CHECK_EQ_U64(intents[1].addr, 0x900000);
	CHECK_EQ_U64(intents[2].addr, 0x900000 + 2 * PG);
	CHECK_EQ_INT(intents[2].cgroup, 0);

	/* A resident promoted within the cool-down stays: the four at most
	 * half as hot as the hottest waiting one are held. */
	for (int i = 5; i < 10; i++)
		pages[i].last_promote_ns = 995 * SEC;
	CHECK_EQ_INT(run(&pp, cgs, 2, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_EXCHANGE, -1), 0);
	CHECK_EQ_INT(out.stats.held[POLICY_H_COOLDOWN], 4);

	/* Heats of a few samples: 4 against 1 is four times as hot, and
	 * what chance gives two pages alike (3 apart, sqrt(5) = 2.2 the
	 * standard deviation); 40 against 10 is not. */
	nr_pages = 0;
	add_pages(1, 10, 0x100000, 1, 1, 4, 0);
	add_pages(1, 10, 0x900000, 1, 0, 1, 0);
	pp.hot_threshold = 2;
	CHECK_EQ_INT(run(&pp, cgs, 2, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.stats.held[POLICY_H_CGROUP_CAP], 1);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_EXCHANGE, -1), 0);
	pages[0].heat = 40;
	pages[1].heat = 10;
	CHECK_EQ_INT(run(&pp, cgs, 2, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_EXCHANGE, 1), 1);
	cg_wait = NULL;
}

/*
 * A range of base pages (POLICY_F_PAGES) that a cap leaves short moves in
 * part, its first pages up to the cap; a THP does not.
 */
static void test_range_caps(void)
{
	struct policy_params pp;
	struct policy_cgroup cgs[1] = { { .fast_bytes = 10 * MiB, .fast_max_bytes = 11 * MiB } };
	uint64_t used[1] = { 2 * MiB };

	topo_with_gpu(1 * GiB, 512 * MiB);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;

	/* 1 MiB under the cap: 256 pages of the hotter range, none of the
	 * other, none of a THP. */
	nr_pages = 0;
	add_pages(2, 30, 0x200000, THP, 1, 300, 0);
	add_pages(1, 31, 0x200000, THP, 1, 200, 0);
	pages[0].flags = pages[1].flags = POLICY_F_PAGES;
	pages[1].heat = 250;
	CHECK_EQ_INT(run(&pp, cgs, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 1);
	CHECK_EQ_U64(intents[0].addr, 0x200000);
	CHECK_EQ_INT(intents[0].nr_pages, 256);
	CHECK_EQ_INT(intents[0].to_node, 0);
	CHECK_EQ_U64(out.stats.promote_bytes, 1 * MiB);
	CHECK_EQ_INT(out.stats.held[POLICY_H_CGROUP_CAP], 2);
	/* Without the flag (THPs) nothing fits. */
	pages[0].flags = pages[1].flags = 0;
	CHECK_EQ_INT(run(&pp, cgs, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 0);
	CHECK_EQ_INT(out.stats.held[POLICY_H_CGROUP_CAP], 3);

	/* Over the cap by 1 MiB and a byte: a cold range gives 257 pages. */
	cgs[0].fast_bytes = 12 * MiB + 1;
	nr_pages = 0;
	add_pages(2, 30, 0x200000, THP, 0, 1, 0);
	pages[0].flags = pages[1].flags = POLICY_F_PAGES;
	CHECK_EQ_INT(run(&pp, cgs, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 1);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_CAP, 1), 1);
	CHECK_EQ_INT(intents[0].nr_pages, 257);

	/* A GPU rule 1 MiB under its max_bytes: 256 pages of the first range
	 * to the GPU node, the second range whole to DRAM. */
	cgs[0].fast_max_bytes = 0;
	pp.nr_rules = 1;
	pp.rules[0].node = 2;
	pp.rules[0].max_bytes = 3 * MiB;
	nr_pages = 0;
	add_pages(2, 30, 0x200000, THP, 1, 300, 0);
	pages[0].flags = pages[1].flags = POLICY_F_PAGES;
	pages[0].rule = pages[1].rule = 0;
	pages[1].heat = 250;
	CHECK_EQ_INT(run(&pp, cgs, 1, used, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 2);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_GPU, 2), 1);
	CHECK_EQ_INT(intents[0].nr_pages, 256);
	CHECK_EQ_U64(intents[0].addr, 0x200000);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 1);
	CHECK_EQ_INT(intents[1].nr_pages, 512);
	CHECK_EQ_U64(intents[1].addr, 0x400000);
}

static void test_rates(void)
{
	struct policy_params pp;
	struct bucket cg_rate, global;
	struct policy_cgroup cgs[1] = { { .rate = &cg_rate } };

	topo_pair();
	nr_pages = 0;
	add_pages(10, 10, 0x100000, 1, 1, 300, 0);
	add_pages(10, 11, 0x100000, 1, 1, 200, -1);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	/* Cgroup: 8 pages a second; global: 12 pages a second. */
	bucket_init(&cg_rate, 8 * PG, 8 * PG, 1000 * SEC);
	bucket_init(&global, 12 * PG, 12 * PG, 1000 * SEC);

	CHECK_EQ_INT(run(&pp, cgs, 1, NULL, &global, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 12);
	CHECK_EQ_INT(out.stats.held[POLICY_H_CGROUP_RATE], 2);
	CHECK_EQ_INT(out.stats.held[POLICY_H_GLOBAL_RATE], 6);
	CHECK_EQ_INT(intents[7].pid, 10);
	CHECK_EQ_INT(intents[8].pid, 11);
	CHECK_EQ_U64(bucket_avail(&global, 1000 * SEC), 0);

	/* Half a second later: 4 cgroup pages and 6 global pages refilled. */
	CHECK_EQ_INT(run(&pp, cgs, 1, NULL, &global, 0, 1000 * SEC + SEC / 2), 0);
	CHECK_EQ_INT(out.nr_intents, 6);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 6);
	CHECK_EQ_INT(intents[3].pid, 10);
	CHECK_EQ_INT(intents[4].pid, 11);
}

/*
 * The tick's bytes: of 10 hot pages, 4 pages' worth planned, 6 held as
 * output-full, and the rate bucket charged for the 4 only (a cut after
 * the policy would leave it charged for all 10).  The first intent goes
 * past a bound smaller than itself.
 */
static void test_tick_bytes(void)
{
	struct policy_params pp;
	struct bucket global;

	topo_pair();
	nr_pages = 0;
	add_pages(10, 10, 0x100000, 1, 1, 300, -1);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	bucket_init(&global, 100 * PG, 100 * PG, 1000 * SEC);
	max_bytes = 4 * PG;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, &global, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 4);
	CHECK_EQ_U64(out.bytes, 4 * PG);
	CHECK_EQ_INT(out.stats.held[POLICY_H_OUTPUT_FULL], 6);
	CHECK_EQ_U64(bucket_avail(&global, 1000 * SEC), 96 * PG);
	max_bytes = PG / 2;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, &global, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 1);
	max_bytes = 0;
}

/*
 * The adaptive threshold's floor: pages seen twice are hot while the
 * processes' memory fits DRAM's room (or is not known), and wait for more
 * samples once it does not; the pages seen 8 times move either way.  A
 * source's own floor (6 here) replaces the default; pages
 * seen 5 times pass the default and not the source's.
 */
static void test_crowded_floor(void)
{
	struct policy_params pp;
	const uint64_t fits[] = { 0, 512 * MiB, 1 * GiB, 4 * GiB };

	topo_pair();
	nr_pages = 0;
	add_pages(4, 10, 0x100000, 1, 1, 2, -1);
	add_pages(4, 10, 0x200000, 1, 1, 8, -1);
	policy_params_default(&pp, &test_geom);
	for (size_t i = 0; i < sizeof(fits) / sizeof(fits[0]); i++) {
		footprint = fits[i];
		CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
		CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), fits[i] > GiB ? 4 : 8);
		CHECK_EQ_INT(out.stats.hot_threshold, fits[i] > GiB ? POLICY_CROWDED_HOT : 2);
		CHECK_EQ_INT(out.stats.crowded_floor, fits[i] > GiB ? POLICY_CROWDED_HOT : 0);
	}
	nr_pages = 0;
	add_pages(4, 10, 0x100000, 1, 1, 5, -1);
	add_pages(4, 10, 0x200000, 1, 1, 8, -1);
	footprint = 4 * GiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 8);
	crowded_hot = 6;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 4);
	CHECK_EQ_INT(out.stats.hot_threshold, 6);
	crowded_hot = 0;
	/* A fixed threshold is the operator's: no floor moves it. */
	pp.hot_threshold = 1;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 8);
	footprint = 0;
}

/*
 * A source whose floor follows the background (POLICY_CROWDED_BACKGROUND):
 * 4 GiB of footprint over a fast tier of under 1 GiB (topo_pair()), the
 * table's histogram @th, empty, and @n sets of 4 candidates on node 1, set
 * i at 0x100000 * (i + 1) with heat @heat[i]; background_end() puts the
 * inputs back.
 */
static void background_start(struct policy_params *pp, struct hot_heat_bin *th,
			     const uint32_t *heat, int n)
{
	topo_pair();
	nr_pages = 0;
	for (int i = 0; i < n; i++)
		add_pages(4, 10, 0x100000 * (uint64_t)(i + 1), 1, 1, heat[i], -1);
	policy_params_default(pp, &test_geom);
	footprint = 4 * GiB;
	crowded_hot = POLICY_CROWDED_BACKGROUND;
	memset(th, 0, POLICY_HEAT_BINS * sizeof(*th));
	table_hist = th;
}

static void background_end(void)
{
	news_since = 0;
	table_hist = NULL;
	crowded_hot = 0;
	footprint = 0;
}

/*
 * A source whose floor follows the background: 4 GiB over a fast tier of
 * under 1 GiB, candidates at heat 2 and 8.  With nothing in the table,
 * heat 2 is well above chance and both sets move; the warmer the memory
 * that cannot fit (the coldest 3 GiB and more, in 2 MiB entries), the
 * higher the floor, until only the heat-8 pages move.  Heat gathered in
 * the hottest entries is not the cold memory's: the floor stays low.
 */
static void test_background_floor(void)
{
	struct policy_params pp;
	struct hot_heat_bin th[POLICY_HEAT_BINS];
	uint32_t last = 0;

	background_start(&pp, th, (const uint32_t[]){ 2, 8 }, 2);
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 8);
	/* All of it in the table, at a mean heat of 0.1 ... 1.6 an entry. */
	for (int i = 1; i <= 16; i++) {
		th[i < 10 ? 0 : 1] = (struct hot_heat_bin){ .bytes = footprint,
							   .entries = footprint / (2 * MiB),
							   .heat = 0.1 * i * 2048 };
		th[i < 10 ? 1 : 0] = (struct hot_heat_bin){ 0 };
		CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
		CHECK(out.stats.hot_threshold >= last);
		last = out.stats.hot_threshold;
	}
	CHECK(last > 2 && last <= 8);
	CHECK_EQ_INT(out.stats.crowded_floor, last);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 4);
	/* As much heat in 16 entries, the rest of the footprint unseen. */
	th[1] = (struct hot_heat_bin){ 0 };
	th[8] = (struct hot_heat_bin){ .bytes = 32 * MiB, .entries = 16, .heat = 1.6 * 2048 };
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 8);
	CHECK_EQ_INT(out.stats.crowded_floor, POLICY_NOISE_MIN_FLOOR);
	/* All of it fits: no floor. */
	th[8] = (struct hot_heat_bin){ 0 };
	th[1] = (struct hot_heat_bin){ .bytes = 512 * MiB, .entries = 256, .heat = 1.6 * 256 };
	footprint = 512 * MiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 8);
	/* No table: the params' floor. */
	footprint = 4 * GiB;
	table_hist = NULL;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.stats.hot_threshold, pp.crowded_hot_threshold);
	background_end();
}

/*
 * While a new hot set is being found, the background's floor asks one
 * sample where it would ask POLICY_NOISE_MIN_FLOOR, of the pages recorded
 * since it began; a floor that chance raises above that stays.  4 GiB
 * over a fast tier of under 1 GiB, candidates at heat 1 (two recorded
 * since, two before) and 8.
 */
static void test_discovery_floor(void)
{
	struct policy_params pp;
	struct hot_heat_bin th[POLICY_HEAT_BINS];

	background_start(&pp, th, (const uint32_t[]){ 1, 8 }, 2);
	for (int i = 0; i < 4; i++)
		pages[i].last_access_ns = (i < 2 ? 990 : 999) * SEC;
	th[8] = (struct hot_heat_bin){ .bytes = 32 * MiB, .entries = 16, .heat = 1.6 * 2048 };
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 4);
	CHECK_EQ_INT(out.stats.crowded_floor, POLICY_NOISE_MIN_FLOOR);
	CHECK(!out.stats.discovering);
	news_since = 995 * SEC;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 6);
	for (size_t i = 0; i < out.nr_intents; i++)
		CHECK(out.intents[i].page >= 2);
	CHECK_EQ_INT(out.stats.crowded_floor, 1);
	CHECK(out.stats.discovering);
	/* The whole footprint warm (mean heat 1.6 an entry): chance's floor. */
	th[8] = (struct hot_heat_bin){ 0 };
	th[1] = (struct hot_heat_bin){ .bytes = footprint, .entries = footprint / (2 * MiB),
				       .heat = 1.6 * 2048 };
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK(out.stats.crowded_floor > POLICY_NOISE_MIN_FLOOR);
	CHECK(!out.stats.discovering);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 4);
	background_end();
}

/*
 * A hot set sampled thinly (a Zipf tail): a few ranges far hotter than the
 * rest, and a third of the table's heat on ranges at heat 1 or 2, over a
 * chance floor above 2.  The floor drops to where the hottest hold 90%
 * of the heat, so the heat-2 candidates move too, and no lone sample is
 * left out for being old (no news).  The same entries at one heat, memory
 * read evenly, keep chance's floor.
 */
static void test_thin_floor(void)
{
	struct policy_params pp;
	struct hot_heat_bin th[POLICY_HEAT_BINS];

	background_start(&pp, th, (const uint32_t[]){ 1, 2, 8 }, 3);
	th[7] = (struct hot_heat_bin){ .bytes = 32 * MiB, .entries = 16, .heat = 1600 };
	th[2] = (struct hot_heat_bin){ .bytes = 400 * MiB, .entries = 200, .heat = 500 };
	th[1] = (struct hot_heat_bin){ .bytes = 1600 * MiB, .entries = 800, .heat = 960 };
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.stats.crowded_floor, 1);
	CHECK(out.stats.thin);
	CHECK(!out.stats.discovering);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 12);
	/* The hottest hold 90%: chance's floor. */
	th[7] = (struct hot_heat_bin){ 0 };
	th[10] = (struct hot_heat_bin){ .bytes = 32 * MiB, .entries = 16, .heat = 16000 };
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK(out.stats.crowded_floor > POLICY_NOISE_MIN_FLOOR);
	CHECK(out.stats.crowded_floor <= 8);
	CHECK(!out.stats.thin);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 4);
	/* Evenly read: every entry at heat 1.5, as spread as chance. */
	memset(th, 0, sizeof(th));
	th[1] = (struct hot_heat_bin){ .bytes = 2 * GiB, .entries = 1024, .heat = 1536 };
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK(out.stats.crowded_floor > POLICY_NOISE_MIN_FLOOR);
	CHECK(!out.stats.thin);
	background_end();
}

/*
 * Cold memory of which most draws no sample at a moment: 400 of its 2032
 * ranges at heat 1.5 (lambda about 0.3), the rest not in the table, and 16
 * hot ranges that hold nine tenths of the heat and more.  The coldest
 * 3 GiB and more hold nearly nothing, but the cold memory whole says
 * chance brings heat 2 to too many ranges: the floor is above 2 and only
 * the heat-8 candidates move.  While a new hot set arrives its first
 * samples are among the cold ranges: the coldest alone count (none: the
 * floor is the one sample news asks), and the heat-2 candidates move too.
 */
static void test_cold_whole_floor(void)
{
	struct policy_params pp;
	struct hot_heat_bin th[POLICY_HEAT_BINS];

	background_start(&pp, th, (const uint32_t[]){ 2, 8 }, 2);
	th[9] = (struct hot_heat_bin){ .bytes = 32 * MiB, .entries = 16, .heat = 16 * 400.0 };
	th[1] = (struct hot_heat_bin){ .bytes = 800 * MiB, .entries = 400, .heat = 600.0 };
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK(out.stats.crowded_floor > POLICY_NOISE_MIN_FLOOR);
	CHECK(out.stats.crowded_floor <= 8);
	CHECK(!out.stats.thin);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 4);
	news_since = 995 * SEC;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.stats.crowded_floor, 1);
	CHECK(out.stats.discovering);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 8);
	background_end();
}

/*
 * Node 2 is GPU HBM, nearer to node 0 than node 1 is: demotion never picks
 * it, and only the rule's cgroup is placed there, up to the cap.
 */
/* The last @n candidates added are the fill pass's. */
static void mark_fill(int n)
{
	for (size_t i = nr_pages - (size_t)n; i < nr_pages; i++)
		pages[i].flags |= POLICY_F_FILL;
}

/*
 * The fill pass's candidates (heat 0) move while the footprint fits the
 * fast tier, after the hot, and never make room: a fast node with room for
 * three ranges takes three fills, keeps its cold pages, and nothing is
 * unmet; with two hot ones to promote, those and one fill.  Heat 0 without
 * the flag, or a fill range already fast, stays.  A footprint that does
 * not fit, promotion.fill off, a fixed threshold, or a cgroup with a cap:
 * no fill.  A GPU rule's fill goes to DRAM.
 */
static void test_fill(void)
{
	struct policy_params pp;

	topo_pair();
	policy_params_default(&pp, &test_geom);
	nr_pages = 0;
	add_pages(4, 10, 0x40000000, THP, 1, 0, -1);
	mark_fill(4);
	add_pages(2, 10, 0x80000000, THP, 0, 8, -1);	/* hot, placed */
	add_pages(2, 10, 0xc0000000, THP, 1, 0, -1);
	add_pages(1, 10, 0x100000000, THP, 0, 0, -1);
	mark_fill(1);
	add_pages(4, 10, 0x140000000, THP, 0, 0, -1);
	footprint = 512 * MiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, 0), 4);
	CHECK_EQ_INT(out.nr_intents, 4);
	for (size_t i = 0; i < out.nr_intents; i++)
		CHECK(intents[i].addr >= 0x40000000 && intents[i].addr < 0x80000000);
	/* Room for three: three fills, no room made for the fourth. */
	topo.nodes[0].free_bytes = 3 * THP * PG;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, 0), 3);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_ROOM, -1), 0);
	CHECK_EQ_U64(out.stats.unmet_bytes, 0);
	/* Hot pages to promote: they first. */
	pages[4].node = pages[5].node = 1;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 2);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, 0), 1);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_ROOM, -1), 0);
	CHECK_EQ_U64(out.stats.unmet_bytes, 0);
	topo.nodes[0].free_bytes = 512 * MiB;
	pages[4].node = pages[5].node = 0;
	footprint = 2 * GiB;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, -1), 0);
	footprint = 512 * MiB;
	pp.fill = false;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, -1), 0);
	/* A fixed threshold: what has that heat, nothing else. */
	pp.fill = true;
	pp.hot_threshold = 8;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, -1), 0);
	pp.hot_threshold = 0;
	/* A cgroup with a fast-tier cap, however far below it: its heat only. */
	for (size_t i = 0; i < nr_pages; i++)
		pages[i].cgroup = 0;
	{
		struct policy_cgroup cg = { .fast_max_bytes = 1 * GiB };

		CHECK_EQ_INT(run(&pp, &cg, 1, NULL, NULL, 0, 1000 * SEC), 0);
		CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, -1), 0);
		cg.fast_max_bytes = 0;
		CHECK_EQ_INT(run(&pp, &cg, 1, NULL, NULL, 0, 1000 * SEC), 0);
		CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, 0), 4);
	}
	/* A GPU rule's process: its fill goes to DRAM, the GPU node's room
	 * is for what heat names. */
	topo_with_gpu(4 * GiB, 2 * GiB);
	pp.nr_rules = 1;
	pp.rules[0].node = 2;
	pp.rules[0].max_bytes = 1 * GiB;
	nr_pages = 0;
	add_pages(2, 10, 0x40000000, THP, 1, 0, -1);
	mark_fill(2);
	pages[0].rule = pages[1].rule = 0;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_FILL, 0), 2);
	CHECK_EQ_INT(out.nr_intents, 2);
	footprint = 0;
}

static void test_gpu_rules(void)
{
	struct policy_params pp;
	uint64_t used[1] = { 1 * PG };

	topo_with_gpu(4 * GiB, 2 * GiB);
	topo_wmarks(0, 10, 20);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	pp.nr_rules = 1;
	pp.rules[0].nr_allow = 1;
	strcpy(pp.rules[0].allow[0], "/gpu.slice");
	pp.rules[0].node = 2;
	pp.rules[0].max_bytes = 4 * PG;
	CHECK_EQ_INT(policy_rule_match(&pp, "/gpu.slice/train", "python3"), 0);
	CHECK_EQ_INT(policy_rule_match(&pp, "/gpu.slice2", "python3"), -1);

	nr_pages = 0;
	add_pages(5, 20, 0x100000, 1, 1, 300, 0);	/* the rule's */
	add_pages(5, 21, 0x100000, 1, 1, 200, 1);	/* not */
	add_pages(2, 22, 0x100000, 1, 0, 250, 0);	/* the rule's, on DRAM */
	for (int i = 0; i < 5; i++)
		pages[i].rule = 0;
	pages[10].rule = pages[11].rule = 0;
	struct policy_cgroup cgs[2] = { { 0 }, { 0 } };

	CHECK_EQ_INT(run(&pp, cgs, 2, used, NULL, 0, 1000 * SEC), 0);
	/* 3 pages fit under the cap (1 used): the 3 hottest of the rule's. */
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_GPU, 2), 3);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 7);
	CHECK_EQ_INT(out.nr_intents, 10);
	for (size_t i = 0; i < out.nr_intents; i++)
		if (intents[i].to_node == 2)
			CHECK_EQ_INT(intents[i].pid, 20);
	CHECK_EQ_INT(out.stats.held[POLICY_H_GPU_CAP], 2);	/* pid 22 on DRAM */

	/* DRAM under its low watermark: cold pages go to node 1, not node 2. */
	topo.nodes[0].free_bytes = 50 * MiB;
	nr_pages = 0;
	add_pages(4, 23, 0x100000, THP, 0, 0, 1);
	CHECK_EQ_INT(run(&pp, cgs, 2, used, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_WMARK, 1), 4);
	CHECK_EQ_INT(out.nr_intents, 4);

	/* Unless its rule makes the GPU node a demotion target: nearer. */
	pp.rules[0].demotion_target = true;
	CHECK_EQ_INT(run(&pp, cgs, 2, used, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_DEMOTE, POLICY_R_WMARK, 2), 4);

	/* max_bytes 0: no limit, all 5 of the rule's node-1 pages and both
	 * DRAM pages go to the GPU node. */
	pp.rules[0].demotion_target = false;
	pp.rules[0].max_bytes = 0;
	topo.nodes[0].free_bytes = 512 * MiB;
	nr_pages = 0;
	add_pages(5, 20, 0x100000, 1, 1, 300, 0);
	add_pages(2, 22, 0x100000, 1, 0, 250, 0);
	for (int i = 0; i < 7; i++)
		pages[i].rule = 0;
	CHECK_EQ_INT(run(&pp, cgs, 2, used, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_GPU, 2), 7);

	/* The GPU node with 1 MiB of room, under the 2 MiB that opens it:
	 * the rule's DRAM pages are held for refill, its node-1 pages go to
	 * DRAM instead. */
	topo.nodes[2].free_bytes = 1 * MiB;
	CHECK_EQ_INT(run(&pp, cgs, 2, used, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_GPU, 2), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 5);
	CHECK_EQ_INT(out.stats.held[POLICY_H_REFILL], 2);
}

/* The GPU node (2) alone in tier 0, DRAM (node 0) in tier 1, the slow
 * node 1 in tier 2: configs/gpu-coherent.yaml's order. */
static void topo_gpu_tier0(void)
{
	topo_reset();
	topo_node(0, 1, true, 1 * GiB, 512 * MiB);
	topo_node(1, 2, false, 4 * GiB, 2 * GiB);
	topo_node(2, 0, false, 1 * GiB, 512 * MiB);
	topo.nodes[2].gpu = true;
	topo_dist(0, 1, 20);
	topo_dist(0, 2, 15);
}

/*
 * The GPU node in tier 0, above DRAM (configs/gpu-coherent.yaml): a rule's
 * usage is what core/gpu_usage read of its node plus what tierd planned
 * since, so a second tick on the same reading does not promote again; a
 * rule not read yet takes nothing.
 */
static void test_gpu_rule_usage_across_ticks(void)
{
	static struct gpu_usage u;
	struct policy_params pp;
	struct cand_procs procs = { .nr = 1 };
	bool by_cgroup[1] = { false };
	struct policy_cgroup cgs[1] = { { 0 } };
	uint64_t used[1];

	topo_gpu_tier0();
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	pp.nr_rules = 1;
	pp.rules[0].node = 2;
	pp.rules[0].max_bytes = 8 * MiB;
	gpu_usage_init(&u, &pp);
	procs.procs[0] = (struct cand_proc){ .pid = 20, .cgroup = -1, .rule = 0 };
	gpu_usage_sync(&u, &procs, by_cgroup);

	/* Ten hot 2 MiB ranges of the rule's process on DRAM. */
	nr_pages = 0;
	add_pages(10, 20, 0x40000000, THP, 0, 300, 0);
	for (size_t i = 0; i < nr_pages; i++) {
		pages[i].rule = 0;
		pages[i].flags = POLICY_F_PAGES;
	}
	/* Not read yet: held at the cap. */
	gpu_usage_totals(&u, used);
	CHECK_EQ_INT(run(&pp, cgs, 1, used, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 0);
	CHECK_EQ_U64(out.stats.promote_bytes, 0);

	/* Read: 3 MiB on node 2.  5 MiB fit: two ranges and half a third. */
	gpu_usage_read_proc(&u, 20, 3 * MiB, 1000 * SEC, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 3 * MiB);
	CHECK_EQ_INT(run(&pp, cgs, 1, used, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_GPU, 2), 3);
	CHECK_EQ_U64(out.stats.promote_bytes, 5 * MiB);
	gpu_usage_planned(&u, intents, out.nr_intents);

	/* The next tick, before the process is read again: the same ranges
	 * (the moves not seen by a query) find the rule at its cap. */
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 8 * MiB);
	CHECK_EQ_INT(run(&pp, cgs, 1, used, NULL, 0, 1001 * SEC), 0);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_GPU, 2), 0);

	/* A read 10 s later finds 6 MiB there (some moves did not land): the
	 * plan is dropped, 2 MiB fit. */
	gpu_usage_read_proc(&u, 20, 6 * MiB, 1011 * SEC, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_INT(run(&pp, cgs, 1, used, NULL, 0, 1011 * SEC), 0);
	CHECK_EQ_U64(out.stats.promote_bytes, 2 * MiB);
}

/*
 * The GPU node alone in tier 0, DRAM in tier 1 (configs/gpu-coherent.yaml):
 * the fast tier is DRAM's.  The adaptive threshold weighs DRAM's room, hot
 * pages of a process without a rule go from node 1 to DRAM, and DRAM's own
 * pages are not lower-tier pages to promote.
 */
static void test_gpu_alone_in_tier0(void)
{
	struct policy_params pp;
	struct policy_cgroup cgs[1] = { { 0 } };

	topo_gpu_tier0();
	policy_params_default(&pp, &test_geom);
	pp.nr_rules = 1;
	pp.rules[0].node = 2;
	nr_pages = 0;
	add_pages(10, 20, 0x40000000, THP, 1, 300, 0);
	add_pages(10, 21, 0x40000000, THP, 0, 300, 0);
	add_pages(600, 22, 0x80000000, THP, 1, 1, 0);
	CHECK_EQ_INT(run(&pp, cgs, 1, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK(out.stats.hot_threshold <= 300);
	CHECK_EQ_INT(count(POLICY_PROMOTE, POLICY_R_HOT, 0), 10);
	CHECK_EQ_INT(out.nr_intents, 10);
	CHECK_EQ_INT(out.stats.held[POLICY_H_NO_ROOM], 0);
}

/* cold_age_ns: a cold page must also have gone unaccessed long enough;
 * demote false: no watermark demotion at all. */
static void test_cold_age_and_demote_off(void)
{
	struct policy_params pp;

	topo_reset();
	topo_node(0, 0, true, 1000 * MiB, 60 * MiB);
	topo_node(1, 1, false, 4 * GiB, 3 * GiB);
	topo_wmarks(0, 10, 20);
	topo_dist(0, 1, 20);
	nr_pages = 0;
	add_pages(3, 7, 0x200000, THP, 0, 0, -1);
	pages[0].last_access_ns = 990 * SEC;	/* 10 s ago */
	pages[1].last_access_ns = 800 * SEC;	/* 200 s ago */
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	pp.cold_age_ns = 120 * SEC;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 2);
	CHECK_EQ_U64(intents[0].addr, 0x200000 + 2 * MiB);
	CHECK_EQ_U64(intents[1].addr, 0x200000 + 4 * MiB);
	pp.demote = false;
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 0);
}

/* Three tiers: nearest upper node with room; blocked nodes are skipped. */
static void test_nearest_and_blocked(void)
{
	struct policy_params pp;

	topo_reset();
	topo_node(0, 0, true, 1 * GiB, 512 * MiB);
	topo_node(1, 0, true, 1 * GiB, 512 * MiB);
	topo_node(2, 1, false, 1 * GiB, 512 * MiB);
	topo_node(3, 2, false, 1 * GiB, 512 * MiB);
	topo_dist(3, 0, 30);
	topo_dist(3, 1, 21);
	topo_dist(3, 2, 25);
	topo_dist(2, 0, 20);
	topo_dist(2, 1, 22);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	nr_pages = 0;
	add_pages(1, 1, 0x1000, 1, 3, 300, -1);
	add_pages(1, 1, 0x2000, 1, 2, 300, -1);

	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 2);
	CHECK_EQ_INT(intents[0].to_node, 1);	/* from 3: node 1 at 21 */
	CHECK_EQ_INT(intents[1].to_node, 0);	/* from 2: node 0 at 20 */

	/* Node 1 backs off after ENOMEM: node 2 (25) before node 0 (30). */
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 1ull << 1, 1000 * SEC), 0);
	CHECK_EQ_INT(intents[0].to_node, 2);
	CHECK_EQ_INT(intents[1].to_node, 0);
	/* Every upper node blocked: held for lack of room. */
	CHECK_EQ_INT(run(&pp, NULL, 0, NULL, NULL, 0x7, 1000 * SEC), 0);
	CHECK_EQ_INT(out.nr_intents, 0);
	CHECK_EQ_INT(out.stats.held[POLICY_H_NO_ROOM], 2);
}

static void test_output_full_and_einval(void)
{
	struct policy_params pp;
	struct policy *p;
	struct policy_input in = { .topo = &topo };

	topo_reset();
	topo_node(0, 0, true, 1 * GiB, 512 * MiB);
	topo_node(1, 1, false, 1 * GiB, 512 * MiB);
	policy_params_default(&pp, &test_geom);
	pp.hot_threshold = 100;
	nr_pages = 0;
	add_pages(5, 1, 0x1000, 1, 1, 300, -1);

	CHECK_EQ_INT(policy_new(&pp, 4, 0, &p), 0);
	in.pages = pages;
	in.nr_pages = 5;
	memset(&out, 0, sizeof(out));
	out.intents = intents;
	out.max_intents = 3;
	CHECK_EQ_INT(policy_run(p, &in, &out), -EINVAL);	/* 5 > 4 */
	in.nr_pages = 4;
	CHECK_EQ_INT(policy_run(p, &in, &out), 0);
	CHECK_EQ_INT(out.nr_intents, 3);
	CHECK_EQ_INT(out.stats.held[POLICY_H_OUTPUT_FULL], 1);
	pages[0].cgroup = 0;	/* no cgroups passed */
	CHECK_EQ_INT(policy_run(p, &in, &out), -EINVAL);
	policy_free(p);

	pp.min_hot_threshold = 0;
	CHECK_EQ_INT(policy_new(&pp, 4, 0, &p), -EINVAL);
	pp.min_hot_threshold = 1;
	pp.cold_pct = 101;
	CHECK_EQ_INT(policy_new(&pp, 4, 0, &p), -EINVAL);
	pp.cold_pct = 10;
	/* Intents keep the cgroup index and node ids in 16 bits. */
	CHECK_EQ_INT(policy_new(&pp, 4, INT16_MAX + 1, &p), -EINVAL);
	CHECK_EQ_INT(policy_new(&pp, 4, INT16_MAX, &p), 0);
	policy_free(p);
	pp.nr_rules = 1;
	pp.rules[0].node = INT16_MAX + 1;
	CHECK_EQ_INT(policy_new(&pp, 4, 0, &p), -EINVAL);
	pp.rules[0].node = INT16_MAX;
	CHECK_EQ_INT(policy_new(&pp, 4, 0, &p), 0);
	policy_free(p);
	policy_free(NULL);
}

static void test_rule_match(void)
{
	struct policy_params pp;

	policy_params_default(&pp, &test_geom);
	pp.nr_rules = 2;
	pp.rules[0].node = 2;
	pp.rules[0].nr_allow = 1;
	strcpy(pp.rules[0].allow[0], "/a/b");
	pp.rules[1].node = 3;
	pp.rules[1].nr_allow = 2;
	strcpy(pp.rules[1].allow[0], "llama-*");
	strcpy(pp.rules[1].allow[1], "/c/");
	CHECK_EQ_INT(policy_rule_match(&pp, "/a/b", "x"), 0);
	CHECK_EQ_INT(policy_rule_match(&pp, "/a/b/c", NULL), 0);
	CHECK_EQ_INT(policy_rule_match(&pp, "/a/bc", NULL), -1);
	CHECK_EQ_INT(policy_rule_match(&pp, "/a", "llama-server"), 1);
	CHECK_EQ_INT(policy_rule_match(&pp, "/c/d", "x"), 1);
	CHECK_EQ_INT(policy_rule_match(&pp, NULL, "llama"), -1);
	CHECK_EQ_INT(policy_rule_match(&pp, NULL, NULL), -1);
	pp.rules[1].nr_allow = POLICY_RULE_ALLOW + 1;
	struct policy *p;

	CHECK_EQ_INT(policy_new(&pp, 1, 1, &p), -EINVAL);
	CHECK_EQ_STR(policy_reason_name(POLICY_R_ROOM), "room");
	CHECK_EQ_STR(policy_reason_name(POLICY_R_FILL), "fill");
	CHECK_EQ_STR(policy_hold_name(POLICY_H_PINGPONG), "pingpong");
}

int main(void)
{
	RUN(test_threshold_from_hist);
	RUN(test_worked_example);
	RUN(test_watermark_demotion);
	RUN(test_may_demote);
	RUN(test_min_room);
	RUN(test_cooldown_and_pingpong);
	RUN(test_cgroup_cap);
	RUN(test_cap_exchange);
	RUN(test_range_caps);
	RUN(test_rates);
	RUN(test_tick_bytes);
	RUN(test_crowded_floor);
	RUN(test_background_floor);
	RUN(test_discovery_floor);
	RUN(test_thin_floor);
	RUN(test_cold_whole_floor);
	RUN(test_fill);
	RUN(test_gpu_rules);
	RUN(test_cold_age_and_demote_off);
	RUN(test_nearest_and_blocked);
	RUN(test_output_full_and_einval);
	RUN(test_rule_match);
	RUN(test_gpu_rule_usage_across_ticks);
	RUN(test_gpu_alone_in_tier0);
	return TEST_EXIT();
}
