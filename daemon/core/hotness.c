// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hotness table
 * =============
 *
 * The model.  Every tracked (pid, page) has a heat: the sum of the weights of
 * the samples that hit it, each weight halving every half_life_ns since it
 * arrived.  A sampler hands in evidence -- "page P of pid 42 was seen 3 times
 * at time t" (BPF) or "the 2 MiB ranges of region R were accessed 12 times
 * per aggregation interval" (DAMON) -- and the policy asks for the hottest
 * entries (promotion candidates) and the coldest (demotion candidates).
 *
 * Decay without touching every entry.  Storing heat and decaying it every tick
 * would cost O(n) per tick.  Instead each entry stores
 *
 *	v = heat(t) * 2^((t - epoch) / half_life)
 *
 * which does not change while no sample arrives: heat(now) = v * 2^(-(now -
 * epoch) / half_life), and that factor is the same for every entry.  So the
 * order of the stored values IS the order of the current heats; a sample of
 * weight w at time t adds w * 2^((t - epoch) / half_life) to v, and sums of
 * entries (THP folding) are plain additions.  v is a float (24-bit mantissa:
 * a heat is good to 6e-8 per addition, far finer than the sampling noise;
 * 8-bit exponent: values up to 2^128).  The values grow exponentially with
 * time, so after REBASE_HALF_LIVES = 64 half-lives the epoch moves to now and
 * every value is multiplied by the same factor (order kept): once every 64 s
 * with a 1 s half-life, every 10.7 minutes at the default 10 s, the one O(n)
 * step (a pass over the slots, 4-5 ms for a million entries).  A heat below
 * 2^-126 of the epoch's becomes 0 there: such an entry is 64 half-lives
 * cold and is evicted first anyway.
 *
 * Granularity (THP awareness).  An entry covers a 4 KiB page or a 2 MiB
 * range.  A 2 MiB entry stands for a PMD folio (the sampler says so by
 * recording len = 2 MiB) or for the part of a DAMON region inside that range;
 * once it exists, 4 KiB samples inside it fold into it, and when it is created
 * it first absorbs the 4 KiB entries it covers (up to 512 probes, only on
 * creation and only while the process has 4 KiB entries), so a full table
 * need not evict for it.  So a hot THP is one entry that the policy moves as
 * one folio, not 512.
 *
 * Layout: 16 bytes per slot, 20 per tracked page.  Issue 6 asks for tierd
 * under 32 MiB with a million tracked pages; at 48 bytes per entry (a 40-byte
 * entry, a bucket and a heap slot) the table alone took 45.8 MiB.  Now one
 * array of slots is the whole table, an open-addressed hash (linear probing:
 * a lookup reads neighbouring slots, usually in one cache line) of
 *
 *	key   64 bits: page number (45 bits: 57-bit addresses, 5-level paging)
 *	             | huge (1) | process slot + 1 (16; 0 = empty slot)
 *	v     32-bit float, as above
 *	tail  32 bits: time of the last record in 2^27 ns = 134 ms ticks (20
 *	             bits, a 39 h window) | samples, saturating at 4095 (12)
 *
 * A pid (32 bits, up to 2^22 in Linux) would not fit beside 45 bits of page;
 * a table-wide process slot does: min(max_entries, HOT_MAX_PIDS = 4096)
 * slots of 16 bytes (pid, entry count, 2 MiB count, last record) plus a
 * 2-byte pid index at load <= 0.5; a slot frees with its process's last entry.
 * The slot array is max_entries * 5/4 + 1 long, so the load stays <= 0.8
 * (at 0.8 a hit reads 3 slots on average, a miss 13: still a cache line or
 * two) and there is always an empty slot to stop a probe.  Deletion shifts
 * the later entries of the run back into the hole (no tombstones, so probes
 * do not lengthen with churn).  A bitmap with one bit per group of
 * OCC_GROUP = 16 slots (four cache lines) says which groups hold an entry,
 * so the whole-table passes (selection, rebasing, dropping a process) skip
 * the empty ones: a table sized for a million pages that tracks the 512
 * 2 MiB ranges of a DAMON-sampled GiB reads 512 groups, 128 KiB, instead of
 * all 21 MB on every tick.  For max_entries = 2^20: 1310721 slots * 16 +
 * 1281 bitmap words * 8 + 4096 * 16 + 8192 * 2 = 21063704 bytes = 20.09
 * bytes per tracked page, 19.1 MiB per million (tests/bench/hotness_bench.c
 * prints it).  The 20-bit
 * ticks: when 15/16 of the window has passed since the time base (36.7 h),
 * the rebase pass moves the base so that the window is 11/16 full; an entry
 * older than the new base then reads as recorded at the base, 26.9 h ago,
 * still older than any cold_age_s (at most 24 h) can ask for.
 *
 * Eviction: the coldest of a sample, not the exact coldest.  A heap ordered
 * by v would give the exact coldest, but needs 8 bytes per entry (a 4-byte
 * heap slot and the entry's 4-byte place in it) -- 28 bytes per tracked page
 * with the slots above, over the budget -- and a sift on every update.
 * Instead a full table samples EVICT_LINES = 8 random groups of 4 slots (one
 * 64-byte cache line each; slots are placed by hash, so neighbours are
 * unrelated) and offers the ~26 entries found to a pool of the
 * HOT_EVICT_POOL = 16 coldest candidates seen so far (key, v, slot: in the
 * table struct, not per entry).  The victim is the pool's coldest whose
 * entry still holds the v the pool saw: v only grows (rebases scale the pool
 * too), so a stored v is a lower bound, and a candidate whose v grew is
 * re-sorted, one whose entry went (forgotten, folded, moved by a deletion) is
 * found again by key or dropped.  A table of at most 64 slots (max_entries
 * <= 50) scans all of them and evicts the exact coldest.  How close it gets
 * (hotness_bench, and test_eviction_near_coldest on a smaller table: 64 Ki
 * entries with heats 1..65536 in random order, then 4096 far hotter
 * newcomers): the victim's rank among the entries present, 0 for an exact
 * heap, is 1.9-2.0% on average over ten seeds, 99 in 100 victims are among
 * the coldest 4.2%, the worst of all 41 thousand 9.9%.  What matters more,
 * how much of the hot set stays tracked (hotness_bench, a 64 Ki-entry table
 * fed Zipf streams over 4x and 16x as many pages, and a hot set that moves):
 * 99.24%, 94.19% and 85.46% of the truly hottest 32 Ki pages, against
 * 99.32%, 94.19% and 85.58% for the exact heap of 45cdbbc built into the
 * same bench; the hottest 4 Ki pages stay 100% in both.
 *
 * Worked example, half_life = 10 s.  Page A gets 50 samples at t = 0 and none
 * after; page B gets 10 samples every second from t = 0.  At t = 10 s A has
 * heat 25; B has sum_{k=0..10} 10 * 2^(-k/10) = 10 * (1 - 2^(-1.1)) /
 * (1 - 2^(-0.1)) = 79.7, so B is hotter.  At t = 30 s A is 6.25 and B
 * approaches its steady state 10 / (1 - 2^(-0.1)) = 149.3.  A promotion
 * threshold of, say, 100 picks B from t = 15 s on and never picks
 * A; A leaves the table first when room is needed.  With max_entries = 2 and a
 * third page C sampled once at t = 30, A (6.25) is evicted, not B.  The
 * stored values (epoch 0) say the same: A's v = 50, B's v = 10 * sum_{k=0..30}
 * 2^(k/10) = 1055.3, C's v = 1 * 2^(30/10) = 8.  C, colder than the A it
 * replaced, still goes in: it is the newest evidence.  (Two entries make a
 * 3-slot table, small enough to evict the exact coldest.)
 *
 * Cost (hotness_bench, 1 Mi-entry table, uniform random pages, on a loaded
 * 2-vCPU VM; the README has the ranges).  hot_record() of a 4 KiB sample is
 * one probe, two when the process has 2 MiB entries (the range that may
 * cover the page first), and a float add: 0.1-0.2 us, most of it the cache
 * miss on the slot; no allocation, no clock read.  A record that must evict
 * adds the 8 cache lines of the sample: 0.3-0.4 us.  The selectors and
 * hot_drop_pid() scan every slot (21 MB sequentially): 12-22 ms for a
 * million entries, so call them once per tick, not per sample.
 *
 * How it fails.
 *  - A hot set larger than max_entries: new pages evict each other (the
 *    one-sample newcomers are the coldest), the truly hot ones survive because
 *    they are re-sampled, but medium-hot pages flicker in and out.  The
 *    evictions counter grows as fast as inserts; raise max_entries.
 *  - The sampled eviction can take an entry up to a few percent of ranks
 *    above the coldest (see above); a page just above the coldest may leave
 *    before one just below.  A hot entry never goes in practice: one in the
 *    hotter half is evicted only if the ~26 samples of an eviction and the
 *    pool all are in the hotter half, 2^-26 or less.
 *  - More than HOT_MAX_PIDS processes with entries: the one whose last
 *    record is oldest loses all its entries at once (O(n) scan), counted in
 *    pid_evictions.  tierd tracks at most 1024 processes and drops exited
 *    ones, so this takes late samples of many processes that already left.
 *  - Pages never sampled have no entry: the coldest entries are pages that
 *    were hot once and cooled, not the coldest pages of the process.  Demotion
 *    needs a source that reports cold memory too (DAMON regions with
 *    nr_accesses 0 carry no weight here and create nothing).
 *  - A THP split after its 2 MiB entry exists: samples keep folding into the
 *    range until it cools or is forgotten; the policy then moves 512 base
 *    pages where fewer would do.  Memory unmapped and remapped at the same
 *    address inherits the old heat until it decays; a pid reused after an exit
 *    would too, which is why the caller must hot_drop_pid() exited processes.
 *  - Addresses at or above 2^57 (no Linux user address is) are refused with
 *    -ERANGE.  last_ns is 134 ms coarse (rounded down), and the sample count
 *    stops at 4095: both only inform the policy (cold_age_s is whole seconds).
 *  - A sample stamped before the current epoch counts as arriving at the
 *    epoch; older stamps after it are honoured (a late sample weighs less,
 *    as it should).  Weights from
 *    different sources (sample counts, DAMON frequencies) are not comparable;
 *    feed one table from one source.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "hotness.h"

/* Key: page number (45 bits: 57-bit addresses) | huge | process slot + 1. */
#define KEY_PAGE_BITS 45
#define KEY_HUGE (1ull << KEY_PAGE_BITS)
#define KEY_PID_SHIFT (KEY_PAGE_BITS + 1)
#define KEY_PAGE(k) ((k) & (KEY_HUGE - 1))
#define KEY_PSLOT(k) ((uint32_t)((k) >> KEY_PID_SHIFT) - 1)
#define HOT_HUGE_PAGES (HOT_HUGE_SIZE / HOT_PAGE_SIZE)	/* 512 */

/* Tail: time of the last record in ticks (20 bits) | samples (12 bits). */
#define TAIL_SAMPLE_BITS 12
#define TAIL_TICK(tl) ((tl) >> TAIL_SAMPLE_BITS)
#define TAIL_SAMPLES(tl) ((tl) & HOT_SAMPLES_MAX)
#define TICK_WINDOW (1u << (32 - TAIL_SAMPLE_BITS))	/* 2^20 ticks: 39 h */
#define TICK_REBASE (TICK_WINDOW / 16 * 15)	/* shift the time base here ... */
#define TICK_AFTER (TICK_WINDOW / 16 * 11)	/* ... back to this age (26.9 h) */

#define REBASE_HALF_LIVES 64.0	/* float values stay below heat * 2^64 */
#define FLT_MIN_NORMAL 1.17549435e-38	/* below it: 0, no slow subnormals */
#define EVICT_SCAN_ALL 64	/* tables this small evict the exact coldest */
#define EVICT_LINES 8		/* random slot groups sampled per eviction ... */
#define EVICT_GROUP 4		/* ... of 4 slots, a 64-byte cache line */
#define PID_NONE UINT32_MAX
#define OCC_GROUP 16		/* slots per bit of the occupancy bitmap */

struct hot_entry {
	uint64_t key;		/* 0: empty slot */
	float v;		/* heat scaled to the epoch, see above */
	uint32_t tail;		/* TAIL_TICK, TAIL_SAMPLES */
};

struct hot_pid {
	int32_t pid;		/* 0: free */
	uint32_t nents;		/* its entries, +1 while pinned; next free when free */
	uint32_t nhuge;		/* of which 2 MiB ranges */
	uint32_t last_tick;	/* its last record, for choosing one to evict */
};

_Static_assert(sizeof(struct hot_entry) == 16, "hot_entry grew: update the essay");
_Static_assert(sizeof(struct hot_pid) == 16, "hot_pid grew: update the essay");
_Static_assert(HOT_MAX_PIDS < (1u << (64 - KEY_PID_SHIFT)), "process slot does not fit the key");
_Static_assert(HOT_SAMPLES_MAX == (1u << TAIL_SAMPLE_BITS) - 1, "samples field width");

/* ---- arithmetic without libm ---- */

double hot_exp2(double x)
{
	union {
		uint64_t u;
		double d;
	} scale;
	double f, term, sum;
	int64_t n;

	if (x > 1023.0)
		return __builtin_inf();
	if (x < -1074.0)
		return 0.0;
	n = (int64_t)x;
	if ((double)n > x)
		n--;	/* floor for negative non-integers */
	f = (x - (double)n) * 0.69314718055994530942;	/* f * ln 2, in [0, ln 2) */
	/* e^f by its Taylor series: 20 terms bring the error under 1e-17. */
	term = 1.0;
	sum = 1.0;
	for (int k = 1; k <= 20; k++) {
		term *= f / k;
		sum += term;
	}
	if (n < -1022) {	/* subnormal result: scale in two steps */
		scale.u = (uint64_t)(n + 1022 + 1023) << 52;
		return sum * scale.d * 2.2250738585072014e-308; /* 2^-1022 */
	}
	scale.u = (uint64_t)(n + 1023) << 52;
	return sum * scale.d;
}

/* 2^((t - epoch) / half_life): what a weight arriving at @t_ns is worth. */
static double hot_scale(const struct hot_table *t, uint64_t t_ns)
{
	if (t_ns <= t->epoch_ns)
		return 1.0;
	return hot_exp2((double)(t_ns - t->epoch_ns) / (double)t->params.half_life_ns);
}

static uint32_t hot_tick(const struct hot_table *t, uint64_t now_ns)
{
	uint64_t d;

	if (now_ns <= t->time_base_ns)
		return 0;
	d = (now_ns - t->time_base_ns) >> HOT_TIME_SHIFT;
	return d < TICK_WINDOW ? (uint32_t)d : TICK_WINDOW - 1;
}

/* ---- process slots ---- */

static uint32_t pid_home(const struct hot_table *t, pid_t pid)
{
	return (((uint32_t)pid * 2654435761u) >> 16) & t->pid_index_mask;
}

/* The slot of @pid, or PID_NONE. */
static uint32_t pid_find(const struct hot_table *t, pid_t pid)
{
	uint32_t i = pid_home(t, pid);
	uint16_t s;

	while ((s = t->pid_index[i]) != 0) {
		if (t->pids[s - 1].pid == pid)
			return s - 1;
		i = (i + 1) & t->pid_index_mask;
	}
	return PID_NONE;
}

static void pid_free(struct hot_table *t, uint32_t ps)
{
	uint32_t mask = t->pid_index_mask;
	uint32_t hole = pid_home(t, t->pids[ps].pid), j;

	while (t->pid_index[hole] != ps + 1)
		hole = (hole + 1) & mask;
	/* Backward-shift deletion: pull later members of the run into the hole
	 * when the hole lies on their probe path. */
	for (j = (hole + 1) & mask; t->pid_index[j]; j = (j + 1) & mask) {
		uint32_t home = pid_home(t, t->pids[t->pid_index[j] - 1].pid);

		if (((j - home) & mask) >= ((j - hole) & mask)) {
			t->pid_index[hole] = t->pid_index[j];
			hole = j;
		}
	}
	t->pid_index[hole] = 0;
	t->pids[ps].pid = 0;
	t->pids[ps].nents = t->pid_free;
	t->pid_free = ps;
	t->npids--;
	if (t->cache_slot == ps + 1)
		t->cache_slot = 0;
}

/* One entry (or pin) of @ps fewer: the slot is freed with its last entry. */
static void pid_put(struct hot_table *t, uint32_t ps)
{
	if (--t->pids[ps].nents == 0)
		pid_free(t, ps);
}

static void hot_drop_slot(struct hot_table *t, uint32_t ps, size_t *ret_n);
static void hot_remove_at(struct hot_table *t, uint32_t pos);
static uint32_t hot_victim(struct hot_table *t);

/*
 * The slot of @pid, made when it has none, pinned (nents + 1) so that no
 * eviction frees it while the caller works; the caller's insert keeps the
 * pin as its entry's count, or pid_put() drops it.
 */
static uint32_t pid_get(struct hot_table *t, pid_t pid, uint32_t tick)
{
	uint32_t ps, i;

	if (t->cache_slot && t->cache_pid == pid) {
		ps = t->cache_slot - 1;
	} else if ((ps = pid_find(t, pid)) == PID_NONE) {
		if (t->pid_free == PID_NONE && t->max_pids == t->params.max_entries) {
			/* As many process slots as entries, all taken: the
			 * table is full, one entry each, and the eviction the
			 * insert would do anyway frees a slot. */
			hot_remove_at(t, hot_victim(t));
			t->st.evictions++;
		}
		if (t->pid_free == PID_NONE) {
			/* Every slot is taken: give up the process that has gone
			 * longest without a record (it most likely exited). */
			uint32_t old = 0;
			size_t n = 0;

			for (i = 1; i < t->max_pids; i++)
				if (t->pids[i].last_tick < t->pids[old].last_tick)
					old = i;
			hot_drop_slot(t, old, &n);
			t->st.evictions += n;
			t->st.pid_evictions++;
		}
		ps = t->pid_free;
		t->pid_free = t->pids[ps].nents;
		t->pids[ps] = (struct hot_pid){ .pid = pid };
		for (i = pid_home(t, pid); t->pid_index[i]; i = (i + 1) & t->pid_index_mask)
			;
		t->pid_index[i] = (uint16_t)(ps + 1);
		t->npids++;
	}
	t->cache_pid = pid;
	t->cache_slot = ps + 1;
	t->pids[ps].nents++;
	t->pids[ps].last_tick = tick;
	return ps;
}

/* ---- the open-addressed table ---- */

/* ---- the occupancy bitmap: a bit per OCC_GROUP slots, set while any holds a key ---- */

static void occ_set(struct hot_table *t, uint32_t pos)
{
	uint32_t g = pos / OCC_GROUP;

	t->occ[g / 64] |= 1ull << (g % 64);
}

/* 64-bit words of the bitmap for @nslots slots. */
static uint32_t hot_occ_words(uint32_t nslots)
{
	return (nslots + OCC_GROUP * 64 - 1) / (OCC_GROUP * 64);
}

static uint32_t occ_group_end(const struct hot_table *t, uint32_t g)
{
	uint32_t end = (g + 1) * OCC_GROUP;

	return end < t->nslots ? end : t->nslots;
}

/* Slot @pos was just emptied: clear its group's bit if it was the last. */
static void occ_check(struct hot_table *t, uint32_t pos)
{
	uint32_t g = pos / OCC_GROUP, end = occ_group_end(t, g);

	for (uint32_t i = g * OCC_GROUP; i < end; i++)
		if (t->slots[i].key)
			return;
	t->occ[g / 64] &= ~(1ull << (g % 64));
}

/* The first group at or after @g that holds an entry, or t->ngroups. */
static uint32_t occ_next(const struct hot_table *t, uint32_t g)
{
	uint32_t w = g / 64, nwords = hot_occ_words(t->nslots);
	uint64_t bits;

	if (g >= t->ngroups)
		return t->ngroups;
	bits = t->occ[w] & (~0ull << (g % 64));
	while (!bits) {
		if (++w == nwords)
			return t->ngroups;
		bits = t->occ[w];
	}
	return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

/*
 * Every slot of every group that holds an entry, in slot order (a superset
 * of the used slots: the caller still skips key 0).  The body may remove
 * entries: later groups are looked up as the walk reaches them.
 */
#define for_each_occupied_slot(t, pos)						\
	for (uint32_t g_ = occ_next(t, 0); g_ < (t)->ngroups; g_ = occ_next(t, g_ + 1))	\
		for (uint32_t pos = g_ * OCC_GROUP, e_ = occ_group_end(t, g_); pos < e_; pos++)

static uint32_t hot_home(const struct hot_table *t, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(((h >> 32) * t->nslots) >> 32);
}

/* True with the slot of @key in *ret_pos, or false with the empty slot that
 * ends its probe run (where it would go). */
static bool hot_probe(const struct hot_table *t, uint64_t key, uint32_t *ret_pos)
{
	uint32_t i = hot_home(t, key);

	for (;;) {
		uint64_t k = t->slots[i].key;

		if (k == key || k == 0) {
			*ret_pos = i;
			return k != 0;
		}
		if (++i == t->nslots)
			i = 0;
	}
}

/* Empty slot @hole, then pull back the entries of its run that may fill it,
 * so lookups need no tombstones.  Entries move: positions are not kept. */
static void hot_unlink(struct hot_table *t, uint32_t hole)
{
	uint32_t n = t->nslots, j = hole;

	for (;;) {
		uint32_t home;
		uint64_t k;

		if (++j == n)
			j = 0;
		k = t->slots[j].key;
		if (!k)
			break;
		home = hot_home(t, k);
		/* Movable when the hole is on its path: home .. hole .. j. */
		if ((j >= home ? j - home : j + n - home) >= (j >= hole ? j - hole : j + n - hole)) {
			t->slots[hole] = t->slots[j];
			hole = j;
		}
	}
	t->slots[hole].key = 0;
	occ_check(t, hole);
}

static void hot_remove_at(struct hot_table *t, uint32_t pos)
{
	uint64_t key = t->slots[pos].key;
	uint32_t ps = KEY_PSLOT(key);

	if (key & KEY_HUGE) {
		t->st.huge_entries--;
		t->pids[ps].nhuge--;
	}
	hot_unlink(t, pos);
	t->nused--;
	pid_put(t, ps);
}

/* ---- eviction ---- */

static uint32_t hot_rand_below(struct hot_table *t, uint32_t n)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return (uint32_t)(((t->rng >> 32) * n) >> 32);
}

/* Restore the pool's ascending order after pool[i] changed. */
static void pool_fix(struct hot_table *t, uint32_t i)
{
	struct hot_cand c = t->pool[i];

	while (i > 0 && t->pool[i - 1].v > c.v) {
		t->pool[i] = t->pool[i - 1];
		i--;
	}
	while (i + 1 < t->npool && t->pool[i + 1].v < c.v) {
		t->pool[i] = t->pool[i + 1];
		i++;
	}
	t->pool[i] = c;
}

static void pool_del(struct hot_table *t, uint32_t i)
{
	memmove(&t->pool[i], &t->pool[i + 1], (t->npool - i - 1) * sizeof(t->pool[0]));
	t->npool--;
}

/* Offer the entry at @pos: the pool keeps the HOT_EVICT_POOL coldest seen. */
static void pool_offer(struct hot_table *t, uint32_t pos)
{
	struct hot_cand c = { .key = t->slots[pos].key, .v = t->slots[pos].v, .pos = pos };
	uint32_t i;

	if (t->npool == HOT_EVICT_POOL && c.v >= t->pool[HOT_EVICT_POOL - 1].v)
		return;	/* the common case once the pool is full */
	for (i = 0; i < t->npool; i++)
		if (t->pool[i].key == c.key)
			break;
	if (i == t->npool && t->npool < HOT_EVICT_POOL)
		t->npool++;
	else if (i == t->npool)
		i--;	/* replaces the warmest */
	t->pool[i] = c;
	pool_fix(t, i);
}

/*
 * Offer the used slots of @lines random groups of EVICT_GROUP slots: one
 * cache miss brings a 64-byte line of four slots, and the entries in it are
 * unrelated (placed by hash), so a group is as good a sample as four misses.
 * Returns how many were offered.
 */
static uint32_t pool_sample(struct hot_table *t, uint32_t lines)
{
	uint32_t ngroups = (t->nslots + EVICT_GROUP - 1) / EVICT_GROUP, got = 0;

	for (uint32_t l = 0; l < lines; l++) {
		uint32_t pos = hot_rand_below(t, ngroups) * EVICT_GROUP;

		for (uint32_t k = 0; k < EVICT_GROUP && pos < t->nslots; k++, pos++) {
			if (t->slots[pos].key) {
				pool_offer(t, pos);
				got++;
			}
		}
	}
	return got;
}

/*
 * The slot to evict from the full table.  A candidate's stored v is a lower
 * bound of its entry's v (values only grow, and rebases scale both alike), so
 * the first candidate whose entry still holds exactly its v is the coldest
 * the pool knows of.
 */
static uint32_t hot_victim(struct hot_table *t)
{
	uint32_t best = PID_NONE;

	if (t->nslots <= EVICT_SCAN_ALL) {
		for (uint32_t i = 0; i < t->nslots; i++)
			if (t->slots[i].key && (best == PID_NONE || t->slots[i].v < t->slots[best].v))
				best = i;
		return best;
	}
	pool_sample(t, EVICT_LINES);
	for (;;) {
		struct hot_cand *c = &t->pool[0];

		if (!t->npool) {
			pool_sample(t, 1);
			continue;
		}
		if (t->slots[c->pos].key != c->key && !hot_probe(t, c->key, &c->pos)) {
			pool_del(t, 0);	/* gone: forgotten, folded or moved away */
			continue;
		}
		if (t->slots[c->pos].v != c->v) {
			c->v = t->slots[c->pos].v;	/* sampled again since */
			pool_fix(t, 0);
			continue;
		}
		best = c->pos;
		pool_del(t, 0);
		return best;
	}
}

/*
 * A new entry for @key (absent; @pos: the empty slot hot_probe() gave),
 * its process slot pinned by pid_get(): the pin becomes the entry's count.
 */
static void hot_insert(struct hot_table *t, uint64_t key, uint32_t pos, double v,
		       uint32_t samples, uint32_t tick)
{
	if (t->nused == t->params.max_entries) {
		hot_remove_at(t, hot_victim(t));
		t->st.evictions++;
		hot_probe(t, key, &pos);	/* entries moved */
	}
	t->slots[pos].key = key;
	occ_set(t, pos);
	t->slots[pos].v = (float)v;
	t->slots[pos].tail = tick << TAIL_SAMPLE_BITS |
			     (samples < HOT_SAMPLES_MAX ? samples : HOT_SAMPLES_MAX);
	t->nused++;
	if (key & KEY_HUGE) {
		t->st.huge_entries++;
		t->pids[KEY_PSLOT(key)].nhuge++;
	}
	t->st.inserts++;
}

static void hot_add(struct hot_table *t, uint32_t pos, double dv, uint32_t samples,
		    uint32_t tick)
{
	struct hot_entry *e = &t->slots[pos];
	uint32_t n = TAIL_SAMPLES(e->tail) + samples;
	uint32_t old = TAIL_TICK(e->tail);

	e->v = (float)((double)e->v + dv);
	e->tail = (tick > old ? tick : old) << TAIL_SAMPLE_BITS |
		  (n < HOT_SAMPLES_MAX ? n : HOT_SAMPLES_MAX);
}

/* ---- rebasing: the one O(n) step ---- */

static float hot_rescale(float v, double f)
{
	double r = (double)v * f;

	return r < FLT_MIN_NORMAL ? 0.0f : (float)r;
}

static void hot_maybe_rebase(struct hot_table *t, uint64_t now_ns)
{
	double span = (double)t->params.half_life_ns * REBASE_HALF_LIVES;
	bool heat = now_ns > t->epoch_ns && (double)(now_ns - t->epoch_ns) >= span;
	uint64_t age = now_ns > t->time_base_ns ? (now_ns - t->time_base_ns) >> HOT_TIME_SHIFT : 0;
	uint64_t shift = age >= TICK_REBASE ? age - TICK_AFTER : 0;
	double f = heat ? 1.0 / hot_scale(t, now_ns) : 1.0;

	if (!heat && !shift)
		return;
	for_each_occupied_slot(t, i) {
		struct hot_entry *e = &t->slots[i];
		uint32_t tick = TAIL_TICK(e->tail);

		if (!e->key)
			continue;
		if (heat)
			e->v = hot_rescale(e->v, f);
		if (shift)
			e->tail = (tick > shift ? tick - (uint32_t)shift : 0) << TAIL_SAMPLE_BITS |
				  TAIL_SAMPLES(e->tail);
	}
	for (uint32_t i = 0; heat && i < t->npool; i++)
		t->pool[i].v = hot_rescale(t->pool[i].v, f);
	for (uint32_t i = 0; shift && i < t->max_pids; i++)
		t->pids[i].last_tick = t->pids[i].last_tick > shift ?
				       t->pids[i].last_tick - (uint32_t)shift : 0;
	if (heat) {
		t->epoch_ns = now_ns;
		t->scale = 0.0;	/* recompute against the new epoch */
	}
	t->time_base_ns += shift << HOT_TIME_SHIFT;
	t->st.rebases++;
}

/* ---- setup ---- */

static uint32_t hot_nslots(uint32_t max_entries)
{
	return max_entries + max_entries / 4 + 1;	/* load <= 0.8, never 1 */
}

static uint32_t hot_max_pids(uint32_t max_entries)
{
	return max_entries < HOT_MAX_PIDS ? max_entries : HOT_MAX_PIDS;
}

static uint32_t hot_pid_index_size(uint32_t max_pids)
{
	uint32_t n = 1;

	while (n < 2 * max_pids)
		n <<= 1;
	return n;
}

size_t hot_mem_size(uint32_t max_entries)
{
	uint32_t np = hot_max_pids(max_entries), ns = hot_nslots(max_entries);

	if (max_entries == 0 || max_entries >= (1u << 31))
		return 0;
	return (size_t)ns * sizeof(struct hot_entry) +
	       (size_t)hot_occ_words(ns) * sizeof(uint64_t) +
	       (size_t)np * sizeof(struct hot_pid) +
	       (size_t)hot_pid_index_size(np) * sizeof(uint16_t);
}

int hot_init(struct hot_table *t, const struct hot_params *p, void *mem,
	     size_t mem_bytes, uint64_t now_ns)
{
	size_t need = hot_mem_size(p->max_entries);
	uint32_t np = hot_max_pids(p->max_entries);

	if (p->half_life_ns == 0 || need == 0 || !mem || mem_bytes < need ||
	    ((uintptr_t)mem % sizeof(uint64_t)) != 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->params = *p;
	t->nslots = hot_nslots(p->max_entries);
	t->max_pids = np;
	t->pid_index_mask = hot_pid_index_size(np) - 1;
	t->ngroups = (t->nslots + OCC_GROUP - 1) / OCC_GROUP;
	t->slots = mem;
	t->occ = (uint64_t *)(t->slots + t->nslots);
	t->pids = (struct hot_pid *)(t->occ + hot_occ_words(t->nslots));
	t->pid_index = (uint16_t *)(t->pids + np);
	if (!p->mem_zeroed)
		memset(mem, 0, need);
	for (uint32_t i = 0; i < np; i++)
		t->pids[i].nents = i + 1 < np ? i + 1 : PID_NONE;
	t->pid_free = 0;
	t->epoch_ns = now_ns;
	t->time_base_ns = now_ns;
	t->rng = 0x9e3779b97f4a7c15ull;
	t->mem_bytes = need;
	t->st.max_entries = p->max_entries;
	t->st.max_pids = np;
	return 0;
}

/* ---- recording ---- */

static void hot_record_page(struct hot_table *t, pid_t pid, uint64_t addr, double dv,
			    uint32_t tick)
{
	uint32_t ps = pid_get(t, pid, tick), pos;
	uint64_t slot_bits = (uint64_t)(ps + 1) << KEY_PID_SHIFT;
	uint64_t page = addr >> HOT_PAGE_SHIFT;

	if ((t->pids[ps].nhuge &&
	     hot_probe(t, slot_bits | KEY_HUGE | (page & ~(HOT_HUGE_PAGES - 1)), &pos)) ||
	    hot_probe(t, slot_bits | page, &pos)) {
		hot_add(t, pos, dv, 1, tick);
		pid_put(t, ps);
		return;
	}
	hot_insert(t, slot_bits | page, pos, dv, 1, tick);
}

static void hot_record_huge(struct hot_table *t, pid_t pid, uint64_t base, double dv,
			    uint32_t tick)
{
	uint32_t ps = pid_get(t, pid, tick), pos, samples = 1;
	uint64_t slot_bits = (uint64_t)(ps + 1) << KEY_PID_SHIFT;
	uint64_t first = base >> HOT_PAGE_SHIFT;
	uint64_t key = slot_bits | KEY_HUGE | first;
	struct hot_pid *pp = &t->pids[ps];

	if (hot_probe(t, key, &pos)) {
		hot_add(t, pos, dv, 1, tick);
		pid_put(t, ps);
		return;
	}
	/* Absorb the base pages the range covers before inserting it, so a full
	 * table evicts nothing for it when there were any.  Values share the
	 * epoch, so their sum is the range's heat; nents - 1 leaves out our pin. */
	for (uint64_t k = first; k < first + HOT_HUGE_PAGES && pp->nents - 1 > pp->nhuge; k++) {
		struct hot_entry *s;

		if (!hot_probe(t, slot_bits | k, &pos))
			continue;
		s = &t->slots[pos];
		dv += s->v;
		samples += TAIL_SAMPLES(s->tail);
		if (TAIL_TICK(s->tail) > tick)
			tick = TAIL_TICK(s->tail);
		hot_remove_at(t, pos);
		t->st.folded++;
	}
	hot_probe(t, key, &pos);
	hot_insert(t, key, pos, dv, samples, tick);
}

int hot_record(struct hot_table *t, pid_t pid, uint64_t addr, uint64_t len,
	       double weight, uint64_t now_ns)
{
	uint64_t end, g;
	uint32_t tick;
	double scale;
	int n = 0;

	if (pid <= 0 || !(weight >= 0.0))
		return -EINVAL;
	if (addr >= HOT_ADDR_LIMIT)
		return -ERANGE;
	if (weight == 0.0)
		return 0;
	if (now_ns < t->epoch_ns)
		now_ns = t->epoch_ns;
	hot_maybe_rebase(t, now_ns);
	/* A drain records many samples at one now_ns: one exp2 for all. */
	if (t->scale_ns != now_ns || t->scale == 0.0) {
		t->scale = hot_scale(t, now_ns);
		t->scale_ns = now_ns;
	}
	scale = t->scale;
	tick = hot_tick(t, now_ns);
	t->st.records++;

	if (len <= HOT_PAGE_SIZE) {
		hot_record_page(t, pid, addr, weight * scale, tick);
		return 1;
	}
	end = len > HOT_ADDR_LIMIT - addr ? HOT_ADDR_LIMIT : addr + len;
	for (g = addr & ~(HOT_HUGE_SIZE - 1); g < end; g += HOT_HUGE_SIZE) {
		uint64_t lo = g > addr ? g : addr;
		uint64_t hi = end - g > HOT_HUGE_SIZE ? g + HOT_HUGE_SIZE : end;

		hot_record_huge(t, pid, g, weight * scale * (double)(hi - lo) / HOT_HUGE_SIZE,
				tick);
		n++;
	}
	return n;
}

/* ---- queries ---- */

static uint32_t hot_find(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t ps = pid > 0 ? pid_find(t, pid) : PID_NONE, pos;
	uint64_t slot_bits = (uint64_t)(ps + 1) << KEY_PID_SHIFT;
	uint64_t page = addr >> HOT_PAGE_SHIFT;

	if (ps == PID_NONE || addr >= HOT_ADDR_LIMIT)
		return PID_NONE;
	if (t->pids[ps].nhuge &&
	    hot_probe(t, slot_bits | KEY_HUGE | (page & ~(HOT_HUGE_PAGES - 1)), &pos))
		return pos;
	if (hot_probe(t, slot_bits | page, &pos))
		return pos;
	return PID_NONE;
}

uint64_t hot_entry_len(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t pos = hot_find(t, pid, addr);

	if (pos == PID_NONE)
		return 0;
	return t->slots[pos].key & KEY_HUGE ? HOT_HUGE_SIZE : HOT_PAGE_SIZE;
}

double hot_weight(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t pos = hot_find(t, pid, addr);

	return pos == PID_NONE ? 0.0 : (double)t->slots[pos].v;
}

double hot_weight_scale(const struct hot_table *t, uint64_t now_ns)
{
	return hot_scale(t, now_ns);
}

double hot_heat(const struct hot_table *t, pid_t pid, uint64_t addr, uint64_t now_ns)
{
	return hot_weight(t, pid, addr) / hot_scale(t, now_ns);
}

int hot_forget(struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t pos = hot_find(t, pid, addr);

	if (pos == PID_NONE)
		return -ENOENT;
	hot_remove_at(t, pos);
	return 0;
}

/*
 * Remove every entry of process slot @ps (which frees it).  Deleting at @i
 * pulls later entries of the run back into @i, so @i is looked at again; an
 * entry only ever moves to a slot it could have started in, never past one
 * already looked at, except from the wrapped start of the table, which was
 * looked at first.
 */
static void hot_drop_slot(struct hot_table *t, uint32_t ps, size_t *ret_n)
{
	uint32_t left = t->pids[ps].nents;
	size_t n = 0;

	for_each_occupied_slot(t, i) {
		while (left && (t->slots[i].key >> KEY_PID_SHIFT) == ps + 1) {
			hot_remove_at(t, i);
			left--;
			n++;
		}
		if (!left)
			goto pool;
	}
pool:
	for (uint32_t i = t->npool; i-- > 0;)
		if (KEY_PSLOT(t->pool[i].key) == ps)
			pool_del(t, i);
	*ret_n = n;
}

size_t hot_drop_pid(struct hot_table *t, pid_t pid)
{
	uint32_t ps = pid > 0 ? pid_find(t, pid) : PID_NONE;
	size_t n = 0;

	if (ps == PID_NONE)
		return 0;
	hot_drop_slot(t, ps, &n);
	t->st.dropped += n;
	return n;
}

static void hot_view(const struct hot_table *t, uint32_t pos, double inv_scale,
		     struct hot_entry_view *v)
{
	const struct hot_entry *e = &t->slots[pos];

	v->pid = t->pids[KEY_PSLOT(e->key)].pid;
	v->addr = KEY_PAGE(e->key) << HOT_PAGE_SHIFT;
	v->len = e->key & KEY_HUGE ? HOT_HUGE_SIZE : HOT_PAGE_SIZE;
	v->heat = (double)e->v * inv_scale;
	v->samples = TAIL_SAMPLES(e->tail);
	v->last_ns = t->time_base_ns + ((uint64_t)TAIL_TICK(e->tail) << HOT_TIME_SHIFT);
}

/*
 * Selection keeps the k best seen so far in @out as a heap whose root is the
 * worst of them.  "Better" is hotter (dir > 0) or colder (dir < 0); equal heats
 * go to the lower (pid, addr), so the result does not depend on slot order.
 * The heat field holds the stored value v until the end.
 */
static bool hot_worse(const struct hot_entry_view *a, const struct hot_entry_view *b, int dir)
{
	if (a->heat != b->heat)
		return dir > 0 ? a->heat < b->heat : a->heat > b->heat;
	if (a->pid != b->pid)
		return a->pid > b->pid;
	return a->addr > b->addr;
}

static void hot_sel_down(struct hot_entry_view *h, size_t n, size_t i, int dir)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct hot_entry_view tmp;

		if (l < n && hot_worse(&h[l], &h[m], dir))
			m = l;
		if (r < n && hot_worse(&h[r], &h[m], dir))
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static size_t hot_select(const struct hot_table *t, pid_t pid, bool use_min, double min_v,
			 const struct hot_cursor *after, uint64_t now_ns,
			 struct hot_entry_view *out, size_t max, int dir)
{
	double inv = 1.0 / hot_scale(t, now_ns);
	struct hot_entry_view from = { 0 };
	uint32_t want = 0;
	size_t n = 0;

	if (after && after->pid && after->rebases == t->st.rebases) {
		from.pid = after->pid;
		from.addr = after->addr;
		from.heat = after->v;	/* stored, as v.heat below */
	} else {
		after = NULL;
	}

	if (pid) {
		want = pid > 0 ? pid_find(t, pid) + 1 : 0;
		if (!want)
			return 0;	/* no entries (PID_NONE + 1 wraps to 0) */
	}
	if (max == 0)
		return 0;
	for_each_occupied_slot(t, pos) {
		const struct hot_entry *e = &t->slots[pos];
		struct hot_entry_view v;

		if (!e->key || (want && (e->key >> KEY_PID_SHIFT) != want))
			continue;
		if (use_min && (double)e->v < min_v)
			continue;
		hot_view(t, pos, 1.0, &v);
		if (after && !hot_worse(&v, &from, dir))
			continue;	/* at or before the cursor */
		if (n < max) {
			out[n++] = v;
			if (n == max)	/* heapify once full */
				for (size_t i = n / 2; i-- > 0;)
					hot_sel_down(out, n, i, dir);
		} else if (hot_worse(&out[0], &v, dir)) {
			out[0] = v;
			hot_sel_down(out, n, 0, dir);
		}
	}
	if (n < max)
		for (size_t i = n / 2; i-- > 0;)
			hot_sel_down(out, n, i, dir);
	/* Heap sort: move the worst to the end, best ends up first. */
	for (size_t end = n; end > 1; end--) {
		struct hot_entry_view tmp = out[0];

		out[0] = out[end - 1];
		out[end - 1] = tmp;
		hot_sel_down(out, end - 1, 0, dir);
	}
	for (size_t i = 0; i < n; i++)
		out[i].heat *= inv;
	return n;
}

size_t hot_select_hottest(const struct hot_table *t, pid_t pid, double min_heat,
			  uint64_t now_ns, struct hot_entry_view *out, size_t max)
{
	return hot_select(t, pid, min_heat > 0.0, min_heat * hot_scale(t, now_ns), NULL,
			  now_ns, out, max, 1);
}

size_t hot_select_coldest(const struct hot_table *t, pid_t pid, uint64_t now_ns,
			  struct hot_entry_view *out, size_t max)
{
	return hot_select(t, pid, false, 0.0, NULL, now_ns, out, max, -1);
}

size_t hot_select_coldest_after(const struct hot_table *t, pid_t pid, uint64_t now_ns,
				const struct hot_cursor *after, struct hot_entry_view *out,
				size_t max)
{
	return hot_select(t, pid, false, 0.0, after, now_ns, out, max, -1);
}

void hot_cursor_after(const struct hot_table *t, const struct hot_entry_view *v,
		      struct hot_cursor *ret)
{
	uint32_t pos = hot_find(t, v->pid, v->addr);

	memset(ret, 0, sizeof(*ret));
	if (pos == PID_NONE)
		return;
	ret->pid = v->pid;
	ret->addr = v->addr;
	ret->v = t->slots[pos].v;
	ret->rebases = t->st.rebases;
}

int hot_foreach(const struct hot_table *t, uint64_t now_ns,
		int (*fn)(const struct hot_entry_view *e, void *arg), void *arg)
{
	double inv = 1.0 / hot_scale(t, now_ns);

	for_each_occupied_slot(t, i) {
		struct hot_entry_view v;
		int r;

		if (!t->slots[i].key)
			continue;
		hot_view(t, i, inv, &v);
		r = fn(&v, arg);
		if (r)
			return r;
	}
	return 0;
}

void hot_get_stats(const struct hot_table *t, struct hot_stats *ret_st)
{
	*ret_st = t->st;
	ret_st->entries = t->nused;
	ret_st->pids = t->npids;
	ret_st->mem_bytes = t->mem_bytes;
}
