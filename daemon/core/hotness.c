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
 * one folio, not 512.  The sizes are the kernel's (hot_params.geom): the
 * figures here are x86-64's; with 16 KiB pages a range is 2 MiB of 128
 * pages, with 64 KiB pages (arm64 servers) 2 MiB of 32 (core/page_geom.h:
 * not the 32 or 512 MiB PMD), and a range's creation probes as many.
 *
 * Layout: 16 bytes per slot, 20 per tracked page, so that tierd stays under
 * 32 MiB with a million tracked pages (at 48 bytes per entry -- a 40-byte
 * entry, a bucket and a heap slot -- the table alone would take 45.8 MiB).
 * One array of slots is the whole table, an open-addressed hash (linear probing:
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
 * 99.32%, 94.19% and 85.58% for an exact heap of the same entries; the
 * hottest 4 Ki pages stay 100% in both.
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
 *
 * Where it lives.  This file: the slots, setup and recording.
 * hotness_decay.c: exp2 and the rebase; hotness_evict.c: the eviction pool;
 * hotness_pid.c: process slots; hotness_select.c: queries and selection.
 * hotness_int.h: the layout they share (key, tail, probe, bitmap).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "hotness_int.h"

/* ---- the open-addressed table ---- */

/* Slot @pos was just emptied: clear its group's bit if it was the last. */
static void occ_check(struct hot_table *t, uint32_t pos)
{
	uint32_t g = pos / OCC_GROUP, end = occ_group_end(t, g);

	for (uint32_t i = g * OCC_GROUP; i < end; i++)
		if (t->slots[i].key)
			return;
	t->occ[g / 64] &= ~(1ull << (g % 64));
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

void hot_remove_at(struct hot_table *t, uint32_t pos)
{
	uint64_t key = t->slots[pos].key;
	uint32_t ps = KEY_PSLOT(key);

	if (key & KEY_HUGE) {
		t->st.huge_entries--;
		t->pids[ps].nhuge--;
	}
	hot_unlink(t, pos);
	t->nused--;
	hot_pid_put(t, ps);
}

/* @dv, a record's stored weight, folded into an entry without heat to
 * speak of: counted as news (hot_stats.fresh). */
static void count_fresh(struct hot_table *t, double dv)
{
	t->st.fresh += (uint64_t)(dv / t->scale + 0.5);
}

/*
 * A new entry for @key (absent; @pos: the empty slot hot_probe() gave),
 * its process slot pinned by hot_pid_get(): the pin becomes the entry's count.
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

	if ((double)e->v < HOT_FRESH_HEAT * t->scale)
		count_fresh(t, dv);
	e->v = (float)((double)e->v + dv);
	e->tail = (tick > old ? tick : old) << TAIL_SAMPLE_BITS |
		  (n < HOT_SAMPLES_MAX ? n : HOT_SAMPLES_MAX);
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
	    !p->geom.shift || p->geom.range_shift <= p->geom.shift ||
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

/*
 * The slot of @pid, made when it has none, pinned (nents + 1) so that no
 * eviction frees it while the caller works; the caller's insert keeps the
 * pin as its entry's count, or hot_pid_put() drops it.
 */
static uint32_t hot_pid_get(struct hot_table *t, pid_t pid, uint32_t tick)
{
	uint32_t ps, i;

	if (t->cache_slot && t->cache_pid == pid) {
		ps = t->cache_slot - 1;
	} else if ((ps = hot_pid_find(t, pid)) == PID_NONE) {
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


static void hot_record_page(struct hot_table *t, pid_t pid, uint64_t addr, double dv,
			    uint32_t tick)
{
	uint32_t ps = hot_pid_get(t, pid, tick), pos;
	uint64_t slot_bits = (uint64_t)(ps + 1) << KEY_PID_SHIFT;
	uint64_t page = addr >> t->params.geom.shift;

	if ((t->pids[ps].nhuge &&
	     hot_probe(t, slot_bits | KEY_HUGE | hot_huge_page(t, page), &pos)) ||
	    hot_probe(t, slot_bits | page, &pos)) {
		hot_add(t, pos, dv, 1, tick);
		hot_pid_put(t, ps);
		return;
	}
	count_fresh(t, dv);
	hot_insert(t, slot_bits | page, pos, dv, 1, tick);
}

static void hot_record_huge(struct hot_table *t, pid_t pid, uint64_t base, double dv,
			    uint32_t tick)
{
	uint32_t ps = hot_pid_get(t, pid, tick), pos, samples = 1;
	uint64_t slot_bits = (uint64_t)(ps + 1) << KEY_PID_SHIFT;
	uint64_t first = base >> t->params.geom.shift;
	uint64_t npages = page_geom_range_pages(&t->params.geom);
	uint64_t key = slot_bits | KEY_HUGE | first;
	struct hot_pid *pp = &t->pids[ps];
	double fresh_v = dv;	/* the record's, besides the pages absorbed */

	if (hot_probe(t, key, &pos)) {
		hot_add(t, pos, dv, 1, tick);
		hot_pid_put(t, ps);
		return;
	}
	/* Absorb the base pages the range covers before inserting it, so a full
	 * table evicts nothing for it when there were any.  Values share the
	 * epoch, so their sum is the range's heat; nents - 1 leaves out our pin. */
	for (uint64_t k = first; k < first + npages && pp->nents - 1 > pp->nhuge; k++) {
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
	if (dv - fresh_v < HOT_FRESH_HEAT * t->scale)
		count_fresh(t, fresh_v);
	hot_probe(t, key, &pos);
	hot_insert(t, key, pos, dv, samples, tick);
}

void hot_set_observer(struct hot_table *t, hot_observer_fn fn, void *ctx)
{
	t->observe = fn;
	t->observe_ctx = ctx;
}

int hot_record(struct hot_table *t, pid_t pid, uint64_t addr, uint64_t len,
	       double weight, uint64_t now_ns)
{
	uint64_t end, g, pmd = t->params.geom.range;
	uint32_t tick;
	double scale;
	int n = 0;

	if (pid <= 0 || !(weight >= 0.0))
		return -EINVAL;
	if (addr >= HOT_ADDR_LIMIT)
		return -ERANGE;
	if (weight == 0.0)
		return 0;
	if (t->observe)
		t->observe(t->observe_ctx, pid, addr, len, weight, now_ns);
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
	t->st.samples += (uint64_t)(weight + 0.5);

	if (len <= t->params.geom.base) {
		hot_record_page(t, pid, addr, weight * scale, tick);
		return 1;
	}
	end = len > HOT_ADDR_LIMIT - addr ? HOT_ADDR_LIMIT : addr + len;
	for (g = page_geom_range_base(&t->params.geom, addr); g < end; g += pmd) {
		uint64_t lo = g > addr ? g : addr;
		uint64_t hi = end - g > pmd ? g + pmd : end;

		hot_record_huge(t, pid, g, weight * scale * (double)(hi - lo) / (double)pmd,
				tick);
		n++;
	}
	return n;
}
