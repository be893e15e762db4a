// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/candidates at the scale of a server's hot set: more hot 2 MiB
 * ranges than one selection of the hotness table looks at (MAX_VIEWS,
 * 4096), and more than a direct-mapped range memory keeps apart.
 *   - the range memory remembers every range of an 8 GiB hot set, and
 *     of a 192 GiB mapping;
 *   - once the hottest 4096 ranges are on the fast tier and known there,
 *     the head goes on past them: the colder ranges still on the slow
 *     node become candidates, and the next tick goes on from there;
 *   - a range that grows hotter than where the last tick's walk stopped
 *     is the next tick's first candidate, not one for when the walk has
 *     gone round the whole table;
 *   - ranges seen fast whose recheck is due: the head's walk rechecks 512
 *     of them a tick by sample and passes over the rest;
 *   - a hot set larger than the range memory: the fast ranges it forgot
 *     are rechecked by a sample, not queried whole, and the slow ranges
 *     past them are the tick's candidates;
 *   - a cgroup at its fast-tier cap, whose slow ranges are the hottest:
 *     another cgroup's colder ranges are the tick's candidates, after an
 *     eighth of the slots for its hottest (the cap exchange's);
 *   - a cgroup whose cap held candidates back: its coldest fast ranges
 *     come first, an eighth of the slots, each a candidate once; before
 *     them its idle memory on the fast tier, when no idle pass runs.
 */
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "test.h"
#include "test_geom.h"

#define SEC 1000000000ull
#define PG 4096ull
#define PID 77
#define PID2 78	/* in cgroup 1 (PID: cgroup 0), its ranges all slow */
#define BASE2 0x200000000000ull
#define BASE 0x100000000000ull
#define BASE_IDLE 0x300000000000ull	/* idle memory, on the fast node */
#define VIEWS 4096	/* MAX_VIEWS in candidates.c */
#define NR_RANGES 6000
#define CAP_RANGES 64	/* the cap, in ranges of 512 base pages */
#define MAX_CAND (CAP_RANGES * 512)
#define PEEKS (CAP_RANGES / 8)	/* ranges in the cap exchange's share (CAND_CAP_SHARE) */

static struct topology topo;
static struct hot_table hot;
static struct cand_procs procs;
static struct cand_ranges ranges;
static struct policy_page cand[MAX_CAND];
static unsigned char node_of[NR_RANGES];	/* of each range, all its pages */
static size_t sample_queries;	/* of CAND_SAMPLE_PAGES pages */
static const bool *cg_full;	/* run()'s, per cgroup */
static const uint64_t *cg_wait;	/* run()'s, per cgroup */
static bool demote;	/* run()'s */
static const struct idle_set *idle;	/* run()'s, idle for a minute at least */
static bool resume_staged;	/* run()'s: the last tick's moves were cut short */

static int fake_query(void *ctx, pid_t pid, size_t count, void **addrs, int *status)
{
	sample_queries += count == CAND_SAMPLE_PAGES;
	for (size_t i = 0; i < count; i++) {
		uint64_t a = (uint64_t)(uintptr_t)addrs[i];
		uint64_t r = (a - BASE) / TEST_HUGE_SIZE;

		status[i] = a >= BASE_IDLE ? 0 :
			    pid == PID && a >= BASE && r < NR_RANGES ? node_of[r] :
			    pid == PID2 && a >= BASE2 ? 1 : -14;
	}
	return 0;
}

static void setup(void)
{
	static void *mem;
	struct hot_params hp = { .half_life_ns = 1000 * SEC, .max_entries = 8192, .geom = TEST_GEOM_INIT };
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
	/* Range r is hotter than range r + 1. */
	for (uint64_t r = 0; r < NR_RANGES; r++)
		CHECK(hot_record(&hot, PID, BASE + r * TEST_HUGE_SIZE, TEST_HUGE_SIZE,
				 (double)(NR_RANGES - r), 1 * SEC) > 0);
	cand_ranges_init(&ranges, &test_geom);
	procs = (struct cand_procs){ .nr = 1 };
	procs.procs[0] = (struct cand_proc){ .pid = PID, .cgroup = -1, .rule = -1 };
}

/* setup(), with ranges 0..@nr_fast - 1 on the fast tier, seen there at 2 s,
 * and the rest on the slow node. */
static void setup_fast(uint64_t nr_fast)
{
	setup();
	for (uint64_t r = 0; r < NR_RANGES; r++) {
		node_of[r] = r < nr_fast ? 0 : 1;
		if (r < nr_fast)
			cand_range(&ranges, PID, BASE + r * TEST_HUGE_SIZE)->fast_seen =
				cand_time(2 * SEC);
	}
}

/* Range @i of a hot set scattered over 8 TiB, as a server's is. */
static uint64_t scattered(uint64_t i)
{
	uint64_t z = i * 0x9e3779b97f4a7c15ull + 12345;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return BASE + ((z ^ (z >> 31)) % (1u << 22)) * TEST_HUGE_SIZE;
}

/* The range memory is a cache, but an 8 GiB hot set fits in it whole
 * (4096 ranges in 128 Ki slots: direct-mapped, about n^2 / 2 slots = 64 of
 * them would forget each other). */
static void test_memory_holds_hot_set(void)
{
	size_t lost = 0;

	cand_ranges_init(&ranges, &test_geom);
	for (uint64_t r = 0; r < VIEWS; r++)
		cand_range(&ranges, PID, scattered(r))->fast_seen = cand_time(SEC);
	for (uint64_t r = 0; r < VIEWS; r++) {
		struct hot_entry_view v = { .pid = PID, .addr = scattered(r),
					    .len = TEST_HUGE_SIZE };

		lost += !cand_known_fast(&ranges, &v, 2 * SEC);
	}
	CHECK_EQ_U64(lost, 0);
}

/* So does a 192 GiB mapping of 98304 consecutive ranges, as a large heap
 * is: the sets spread them evenly, none forgotten. */
static void test_memory_holds_mapping(void)
{
	size_t lost = 0;

	cand_ranges_init(&ranges, &test_geom);
	for (uint64_t r = 0; r < 98304; r++)
		cand_range(&ranges, PID, BASE + r * TEST_HUGE_SIZE)->fast_seen = cand_time(SEC);
	CHECK_EQ_U64(ranges.forgotten, 0);
	for (uint64_t r = 0; r < 98304; r++) {
		struct hot_entry_view v = { .pid = PID, .addr = BASE + r * TEST_HUGE_SIZE,
					    .len = TEST_HUGE_SIZE };

		lost += !cand_known_fast(&ranges, &v, 2 * SEC);
	}
	CHECK_EQ_U64(lost, 0);
}

static size_t run(struct cand_select *sel, uint64_t now_ns, struct cand_out *out)
{
	struct cand_io io = { .query = fake_query };
	struct cand_in in = { .topo = &topo, .hot = &hot, .procs = &procs, .ranges = &ranges,
			      .cg_full = cg_full, .cg_wait = cg_wait, .demote = demote,
			      .idle = idle, .idle_min_ns = 60 * SEC,
			      .resume_staged = resume_staged };

	*out = (struct cand_out){ .cand = cand };
	cand_select_run(sel, &in, &io, now_ns, out);
	return out->nr_cand;
}

/* The tick's candidates are the slow ranges right past @first, in order. */
static void check_next(size_t n, uint64_t first)
{
	CHECK_EQ_U64(n, CAP_RANGES);
	for (size_t i = 0; i < n && i < CAP_RANGES; i++) {
		CHECK_EQ_INT(cand[i].node, 1);
		CHECK_EQ_U64(cand[i].addr, BASE + (first + i) * TEST_HUGE_SIZE);
	}
}

/*
 * The hottest VIEWS ranges promoted and known fast, the rest slow; a tick
 * at 3 s takes the slow ones right past them, which then move too.
 * Returns the selection for the next tick.
 */
static struct cand_select *first_tick(void)
{
	struct cand_select *sel;
	struct cand_out out;

	setup_fast(VIEWS);
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	check_next(run(sel, 3 * SEC, &out), VIEWS);
	CHECK(out.capped);
	for (uint64_t r = VIEWS; r < VIEWS + CAP_RANGES; r++) {
		node_of[r] = 0;
		cand_range(&ranges, PID, BASE + r * TEST_HUGE_SIZE)->fast_seen = cand_time(3 * SEC);
	}
	return sel;
}

/* The next tick goes on past the ranges the first one moved. */
static void test_head_past_views(void)
{
	struct cand_select *sel = first_tick();
	struct cand_out out;

	check_next(run(sel, 4 * SEC, &out), VIEWS + CAP_RANGES);
	cand_select_free(sel);
}

/*
 * After the first tick, range 5000, far down the order, grows about as hot
 * as range VIEWS + 15: hotter than every slow range left, so the next tick
 * takes it first.
 */
static void test_head_follows_heat(void)
{
	const uint64_t riser = 5000;
	struct cand_select *sel = first_tick();
	struct cand_out out;
	size_t n;

	CHECK(hot_record(&hot, PID, BASE + riser * TEST_HUGE_SIZE, TEST_HUGE_SIZE,
			 (double)(riser - (VIEWS + 15)), 3 * SEC) > 0);
	n = run(sel, 4 * SEC, &out);
	CHECK_EQ_U64(n, CAP_RANGES);
	CHECK_EQ_U64(cand[0].addr, BASE + riser * TEST_HUGE_SIZE);
	for (size_t i = 1; i < n && i < CAP_RANGES; i++)
		CHECK_EQ_U64(cand[i].addr, BASE + (VIEWS + CAP_RANGES + i - 1) * TEST_HUGE_SIZE);
	cand_select_free(sel);
}

/*
 * Ranges 0..5499 on the fast tier, seen there at 2 s; their recheck is due
 * at 13 s.  The head's VIEWS hottest are rechecked by sample, each; of the
 * 1404 past them the walk rechecks 512 (HEAD_RECHECKS in candidates.c)
 * and passes over the rest as still fast; the slow ranges after them are
 * the tick's candidates.
 */
static void test_head_recheck_bound(void)
{
	const uint64_t nr_fast = 5500;
	struct cand_select *sel;
	struct cand_out out;

	setup_fast(nr_fast);
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	sample_queries = 0;
	check_next(run(sel, 13 * SEC, &out), nr_fast);
	CHECK_EQ_U64(sample_queries, VIEWS + 512);
	cand_select_free(sel);
}

/*
 * The hottest 2000 ranges are on the fast tier, the memory saw them there,
 * then forgot them for twice its size of other ranges (a hot set past
 * CAND_RANGE_SLOTS ranges).  Queried whole, they would fill the cap with
 * candidates that have nowhere to go, tick after tick.
 */
static void test_forgotten_fast(void)
{
	const uint64_t nr_fast = 2000;
	struct cand_select *sel;
	struct cand_out out;
	size_t known = 0;

	setup_fast(nr_fast);
	for (uint64_t r = 0; r < 2 * CAND_RANGE_SLOTS; r++)
		cand_range(&ranges, PID + 1, scattered(r))->fast_seen = cand_time(2 * SEC + SEC / 2);
	for (uint64_t r = 0; r < nr_fast; r++)
		known += cand_range_peek(&ranges, PID, BASE + r * TEST_HUGE_SIZE) != NULL;
	CHECK(known < nr_fast / 10);
	CHECK(ranges.forgotten > 0);

	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	check_next(run(sel, 3 * SEC, &out), nr_fast);
	cand_select_free(sel);
}

/*
 * PID's 6000 ranges, all slow and the hottest, are in cgroup 0, at its
 * fast-tier cap; PID2's 100 colder ones in cgroup 1, below its.  The
 * policy would promote none of PID's, but weighs its hottest for the cap
 * exchange: the tick's candidates are PID's 8 hottest (an eighth of the
 * slots), then PID2's hottest, in order.
 */
static void test_full_cgroup(void)
{
	static const bool full[2] = { true, false };
	struct cand_select *sel;
	struct cand_out out;
	size_t n;

	setup_fast(0);
	for (uint64_t r = 0; r < 100; r++)
		CHECK(hot_record(&hot, PID2, BASE2 + r * TEST_HUGE_SIZE, TEST_HUGE_SIZE,
				 (double)(100 - r) / 200.0, 1 * SEC) > 0);
	procs.procs[0].cgroup = 0;
	procs.procs[1] = (struct cand_proc){ .pid = PID2, .cgroup = 1, .rule = -1 };
	procs.nr = 2;
	cg_full = full;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	n = run(sel, 3 * SEC, &out);
	cg_full = NULL;
	CHECK_EQ_U64(n, CAP_RANGES);
	for (size_t i = 0; i < n && i < CAP_RANGES; i++) {
		size_t k = i < PEEKS ? i : i - PEEKS;

		CHECK_EQ_INT(cand[i].pid, i < PEEKS ? PID : PID2);
		CHECK_EQ_U64(cand[i].addr, (i < PEEKS ? BASE : BASE2) + k * TEST_HUGE_SIZE);
	}
	cand_select_free(sel);
}

/*
 * Cgroup 0's cap held hot candidates back last tick (cg_wait): its 100
 * coldest ranges seen fast go first, as many as an eighth of the slots
 * holds (8 ranges of 512 base pages), coldest first, and no other pass
 * takes them again; the rest are the head's, as without.  With nothing
 * waiting there is no such pass.
 */
static void test_cap_walk(void)
{
	static const uint64_t wait[1] = { 2 * TEST_HUGE_SIZE };
	const uint64_t nr_fast = NR_RANGES - 100;
	struct cand_select *sel;
	struct cand_out out;
	size_t n, dup = 0;

	/* Ranges 0..99 slow (the hottest), 100..5999 fast, seen there. */
	setup();
	for (uint64_t r = 0; r < NR_RANGES; r++) {
		node_of[r] = r < NR_RANGES - nr_fast ? 1 : 0;
		if (node_of[r] == 0)
			cand_range(&ranges, PID, BASE + r * TEST_HUGE_SIZE)->fast_seen =
				cand_time(2 * SEC);
	}
	procs.procs[0].cgroup = 0;
	cg_wait = wait;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	n = run(sel, 3 * SEC, &out);
	CHECK_EQ_U64(n, CAP_RANGES);
	for (size_t i = 0; i < PEEKS; i++) {
		CHECK_EQ_INT(cand[i].node, 0);
		CHECK_EQ_U64(cand[i].addr, BASE + (NR_RANGES - 1 - i) * TEST_HUGE_SIZE);
	}
	for (size_t i = PEEKS; i < n && i < CAP_RANGES; i++) {
		CHECK_EQ_INT(cand[i].node, 1);
		CHECK_EQ_U64(cand[i].addr, BASE + (i - PEEKS) * TEST_HUGE_SIZE);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			dup += cand[i].addr == cand[j].addr;
	CHECK_EQ_U64(dup, 0);

	cg_wait = NULL;
	check_next(run(sel, 4 * SEC, &out), 0);

	/* A table of 1000 ranges, whose coldest the cold reserve takes when
	 * the policy may demote, in the quarter of the slots the cap walk's
	 * eighth is part of: the next 8, not those the cap walk took. */
	for (uint64_t r = 1000; r < NR_RANGES; r++)
		CHECK_EQ_INT(hot_forget(&hot, PID, BASE + r * TEST_HUGE_SIZE), 0);
	cg_wait = wait;
	demote = true;
	n = run(sel, 5 * SEC, &out);
	cg_wait = NULL;
	demote = false;
	CHECK_EQ_U64(n, CAP_RANGES);
	for (size_t i = 0; i < 2 * PEEKS && i < n; i++)
		CHECK_EQ_U64(cand[i].addr, BASE + (999 - i) * TEST_HUGE_SIZE);
	dup = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			dup += cand[i].addr == cand[j].addr;
	CHECK_EQ_U64(dup, 0);
	cand_select_free(sel);
}

/*
 * A waiting cgroup's ranges the head never queried (first-touch memory
 * with heat): the cap walk takes its coldest whole ranges too, each
 * queried once; those found on the slow tier are remembered so and left
 * the next tick, those found fast are the exchange's residents.
 */
static void test_cap_unqueried(void)
{
	static const uint64_t wait[1] = { 2 * TEST_HUGE_SIZE };
	struct cand_select *sel;
	struct cand_out out;
	size_t n;

	/* 0..99 slow (the hottest), 100..5995 fast, 5996..5999 slow; none
	 * queried. */
	setup_fast(0);
	for (uint64_t r = 100; r < NR_RANGES - 4; r++)
		node_of[r] = 0;
	procs.procs[0].cgroup = 0;
	cg_wait = wait;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	n = run(sel, 3 * SEC, &out);
	CHECK(n >= PEEKS);
	for (size_t i = 0; i < PEEKS && i < n; i++) {
		CHECK_EQ_U64(cand[i].addr, BASE + (NR_RANGES - 1 - i) * TEST_HUGE_SIZE);
		CHECK_EQ_INT(cand[i].node, i < 4 ? 1 : 0);
	}
	/* The next tick: the slow four are known low. */
	n = run(sel, 4 * SEC, &out);
	CHECK(n >= PEEKS);
	for (size_t i = 0; i < PEEKS && i < n; i++) {
		CHECK_EQ_U64(cand[i].addr, BASE + (NR_RANGES - 5 - i) * TEST_HUGE_SIZE);
		CHECK_EQ_INT(cand[i].node, 0);
	}
	cand_select_free(sel);

	/* Residents seen fast fill the walk's slots: never-queried ranges,
	 * colder though they are, wait for slots those leave. */
	setup_fast(NR_RANGES - 4);
	procs.procs[0].cgroup = 0;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	n = run(sel, 3 * SEC, &out);
	CHECK(n >= PEEKS);
	for (size_t i = 0; i < PEEKS && i < n; i++)
		CHECK_EQ_U64(cand[i].addr, BASE + (NR_RANGES - 5 - i) * TEST_HUGE_SIZE);
	cg_wait = NULL;
	cand_select_free(sel);
}

/*
 * Idle memory of a waiting cgroup on the fast tier: data loaded there and
 * never touched has no heat, so the table never holds it.  When the policy
 * may not demote (no idle pass this tick), the cap walk stages it first,
 * once idle for idle_min_ns, then the table's coldest fast ranges in what
 * is left of its eighth; when it may, the idle pass takes it, once.
 */
static void test_cap_idle(void)
{
	static const uint64_t wait[2] = { 2 * TEST_HUGE_SIZE, 0 };
	static struct idle_range room[2];
	struct cand_select *sel;
	struct idle_set set;
	struct cand_out out;
	size_t n, seen = 0;

	setup_fast(0);
	for (uint64_t r = 100; r < NR_RANGES; r++) {
		node_of[r] = 0;
		cand_range(&ranges, PID, BASE + r * TEST_HUGE_SIZE)->fast_seen = cand_time(2 * SEC);
	}
	procs.procs[0].cgroup = 0;
	/* PID2, in cgroup 1, does not wait. */
	procs.procs[procs.nr++] = (struct cand_proc){ .pid = PID2, .cgroup = 1, .rule = -1 };
	cg_wait = wait;
	idle_init(&set, room, 2);
	idle_begin(&set);
	CHECK_EQ_INT(idle_add(&set, PID, BASE_IDLE, BASE_IDLE + 4 * TEST_HUGE_SIZE, 1 * SEC), 0);
	CHECK_EQ_INT(idle_add(&set, PID2, BASE_IDLE, BASE_IDLE + 2 * TEST_HUGE_SIZE, 1 * SEC), 0);
	idle = &set;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	/* Idle for 2 s: not yet. */
	n = run(sel, 3 * SEC, &out);
	CHECK(n > 0);
	CHECK_EQ_U64(cand[0].addr, BASE + (NR_RANGES - 1) * TEST_HUGE_SIZE);
	/* For a minute: first, then the table's coldest; only the waiting
	 * cgroup's. */
	n = run(sel, 61 * SEC, &out);
	CHECK_EQ_U64(n, CAP_RANGES);
	for (size_t i = 0; i < 4; i++) {
		CHECK_EQ_U64(cand[i].addr, BASE_IDLE + i * TEST_HUGE_SIZE);
		CHECK_EQ_INT(cand[i].pid, PID);
		CHECK_EQ_INT(cand[i].node, 0);
		CHECK_EQ_INT(cand[i].heat, 0);
	}
	for (size_t i = 4; i < PEEKS; i++)
		CHECK_EQ_U64(cand[i].addr, BASE + (NR_RANGES - 1 - (i - 4)) * TEST_HUGE_SIZE);
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_INT(cand[i].pid, PID);
	/* The idle pass's when the policy may demote: each range once, the
	 * other cgroup's too. */
	demote = true;
	n = run(sel, 63 * SEC, &out);
	demote = false;
	for (size_t i = 0; i < n; i++)
		seen += cand[i].addr >= BASE_IDLE;
	CHECK_EQ_U64(seen, 6);
	cg_wait = NULL;
	idle = NULL;
	cand_select_free(sel);
}

/* The idle ranges among a tick's candidates: how many, and the first. */
static size_t idle_staged(size_t n, uint64_t *first)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (cand[i].addr >= BASE_IDLE && !k++)
			*first = (cand[i].addr - BASE_IDLE) / TEST_HUGE_SIZE;
	return k;
}

/*
 * Idle memory on the fast tier, more than a tick's reserve: each tick
 * stages the next ranges of the set, but after a tick whose moves were
 * cut short (they did not all move) it goes on from the first range it
 * staged then, not past them.
 */
static void test_idle_resume(void)
{
	static struct idle_range room[1];
	const size_t reserve = CAP_RANGES / 4;
	struct cand_select *sel;
	struct idle_set set;
	struct cand_out out;
	uint64_t first = ~0ull;

	setup_fast(0);
	idle_init(&set, room, 1);
	idle_begin(&set);
	CHECK_EQ_INT(idle_add(&set, PID, BASE_IDLE, BASE_IDLE + 64 * TEST_HUGE_SIZE, 1 * SEC), 0);
	idle = &set;
	demote = true;
	CHECK_EQ_INT(cand_select_new(MAX_CAND, &test_geom, &sel), 0);
	CHECK_EQ_U64(idle_staged(run(sel, 61 * SEC, &out), &first), reserve);
	CHECK_EQ_U64(first, 0);
	/* All moved: on past them. */
	CHECK_EQ_U64(idle_staged(run(sel, 62 * SEC, &out), &first), reserve);
	CHECK_EQ_U64(first, reserve);
	/* Cut short: the same ranges again, and again. */
	resume_staged = true;
	CHECK_EQ_U64(idle_staged(run(sel, 63 * SEC, &out), &first), reserve);
	CHECK_EQ_U64(first, reserve);
	CHECK_EQ_U64(idle_staged(run(sel, 64 * SEC, &out), &first), reserve);
	CHECK_EQ_U64(first, reserve);
	resume_staged = false;
	CHECK_EQ_U64(idle_staged(run(sel, 65 * SEC, &out), &first), reserve);
	CHECK_EQ_U64(first, 2 * reserve);
	demote = false;
	idle = NULL;
	cand_select_free(sel);
}

int main(void)
{
	RUN(test_memory_holds_hot_set);
	RUN(test_memory_holds_mapping);
	RUN(test_head_past_views);
	RUN(test_head_follows_heat);
	RUN(test_head_recheck_bound);
	RUN(test_forgotten_fast);
	RUN(test_full_cgroup);
	RUN(test_cap_walk);
	RUN(test_cap_unqueried);
	RUN(test_cap_idle);
	RUN(test_idle_resume);
	return TEST_EXIT();
}
