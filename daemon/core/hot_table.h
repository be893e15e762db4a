/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hotness table: decayed access heat per (pid, base page or range), bounded
 * memory, near-coldest eviction.  Pure: time comes in as now_ns, memory comes
 * in at init, nothing allocates afterwards.  The model and its costs are
 * described at the top of hotness.c.
 */
#ifndef TIERD_CORE_HOTNESS_H
#define TIERD_CORE_HOTNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "page_geom.h"

#define HOT_ADDR_LIMIT (1ull << 57)	/* user addresses, 5-level paging included */
#define HOT_MAX_PIDS 4096u		/* process slots of the largest tables */
#define HOT_SAMPLES_MAX 4095u		/* hot_entry_view.samples saturates here */
#define HOT_TIME_SHIFT 27		/* last_ns is kept in units of 2^27 ns */
#define HOT_EVICT_POOL 16		/* eviction candidates carried over */
#define HOT_FRESH_HEAT 0.5		/* hot_stats.fresh: samples onto less heat */

struct hot_params {
	uint64_t half_life_ns;	/* heat halves every half_life_ns; > 0 */
	uint32_t max_entries;	/* the most (pid, page) entries held; >= 1 */
	/* the kernel's base page and tierd's range: an entry is one or the other */
	struct page_geom geom;
	/* hot_init()'s @mem is all zero bytes already (fresh anonymous memory),
	 * and is not cleared: its pages are then touched only as the table
	 * fills, not all at start-up */
	bool mem_zeroed;
};

/* One entry as the selectors report it, heat evaluated at the caller's now. */
struct hot_entry_view {
	pid_t pid;
	uint64_t addr;		/* first byte of the page or range */
	uint64_t len;		/* geom.base or geom.range */
	double heat;		/* decayed weight at now_ns */
	uint64_t samples;	/* records folded in, up to HOT_SAMPLES_MAX */
	uint64_t last_ns;	/* time of the last record, rounded down to
				 * 2^HOT_TIME_SHIFT ns (134 ms) */
};

struct hot_stats {
	uint64_t entries;	/* in use now */
	uint64_t max_entries;
	uint64_t huge_entries;	/* of which ranges */
	uint64_t records;	/* hot_record() calls that did something */
	uint64_t samples;	/* their weights, each rounded */
	/* of them, the weight folded into entries that held no heat to
	 * speak of (under HOT_FRESH_HEAT, or none yet): samples that are
	 * news (core/discover.h) */
	uint64_t fresh;
	uint64_t inserts;
	uint64_t evictions;	/* entries pushed out by newer ones */
	uint64_t folded;	/* base page entries absorbed into a range one */
	uint64_t dropped;	/* entries removed by hot_drop_pid() */
	uint64_t rebases;	/* O(n) rescales of the stored values */
	uint64_t mem_bytes;	/* the memory given at init that is in use */
	uint64_t pids;		/* process slots in use now ... */
	uint64_t max_pids;	/* ... of min(max_entries, HOT_MAX_PIDS) */
	uint64_t pid_evictions;	/* processes dropped to free a slot */
};

struct hot_entry;
struct hot_pid;

/*
 * Told of every hot_record() that adds heat, before it is folded, with its
 * arguments as given: what the sampler saw (tierd --record).
 */
typedef void (*hot_observer_fn)(void *ctx, pid_t pid, uint64_t addr, uint64_t len,
				double weight, uint64_t now_ns);

/* An eviction candidate: where it was, what it held (see hotness.c). */
struct hot_cand {
	uint64_t key;
	float v;
	uint32_t pos;
};

struct hot_table {
	struct hot_params params;
	struct hot_entry *slots;	/* [nslots] open addressing, key 0 = empty */
	uint64_t *occ;			/* a bit per 16 slots: set while one is used */
	struct hot_pid *pids;		/* [max_pids] process slots */
	uint16_t *pid_index;		/* [pid_index_mask + 1] pid -> slot + 1 */
	uint32_t nslots;		/* max_entries + max_entries / 4 + 1 */
	uint32_t ngroups;		/* bits of occ: nslots / 16, rounded up */
	uint32_t nused;
	uint32_t max_pids;
	uint32_t pid_index_mask;
	uint32_t pid_free;		/* free process slots chained, or UINT32_MAX */
	uint32_t npids;
	pid_t cache_pid;		/* hot_record()'s last pid ... */
	uint32_t cache_slot;		/* ... and its slot + 1 (0: none) */
	uint64_t epoch_ns;	/* stored values are heat * 2^((t - epoch) / half-life) */
	uint64_t scale_ns;	/* hot_record()'s last now_ns ... */
	double scale;		/* ... and its 2^((now - epoch) / half-life) */
	uint64_t time_base_ns;	/* entry times count 2^HOT_TIME_SHIFT ns from here */
	uint64_t rng;		/* xorshift state for eviction sampling */
	struct hot_cand pool[HOT_EVICT_POOL];	/* coldest candidates, ascending v */
	uint32_t npool;
	size_t mem_bytes;
	struct hot_stats st;
	hot_observer_fn observe;	/* hot_set_observer(), NULL: none */
	void *observe_ctx;
};

/* Bytes of memory hot_init() needs for @max_entries (0 if too many). */
size_t hot_mem_size(uint32_t max_entries);

/*
 * Set up @t over @mem (at least hot_mem_size(p->max_entries) bytes, aligned
 * for uint64_t), which must stay valid for the table's life.  Returns 0, or
 * -EINVAL when the params are out of range (p->geom unset included) or
 * @mem_bytes is too small.
 */
int hot_init(struct hot_table *t, const struct hot_params *p, void *mem,
	     size_t mem_bytes, uint64_t now_ns);

/*
 * Fold @weight accesses at @now_ns into the entries that cover
 * [@addr, @addr + @len) of @pid:
 *   @len <= geom.base: the base page of @addr, or the range entry that already
 *     covers it (THP folding);
 *   @len == geom.range and @addr range aligned: one range entry (a PMD folio
 *     of 4 KiB pages, 2 MiB of a larger one), which absorbs the heat of
 *     the base page entries it covers;
 *   other lengths (a region, e.g. from DAMON): every range it overlaps,
 *     each given @weight times the share of the range the region covers, so
 *     a region's access frequency becomes the range's mean frequency.
 * A full table evicts a cold entry: the coldest when the table has at most
 * 64 slots, else the coldest of a sample (see hotness.c for how close); the
 * newcomer is inserted even when it is colder still (it is the newest
 * evidence).  Zero weight creates nothing.  Returns the number of entries
 * touched (>= 0), -EINVAL (pid <= 0, negative weight) or -ERANGE (@addr at
 * or above HOT_ADDR_LIMIT; a region is cut there).
 */
int hot_record(struct hot_table *t, pid_t pid, uint64_t addr, uint64_t len,
	       double weight, uint64_t now_ns);

/* Call @fn for each record from now on; NULL stops it. */
void hot_set_observer(struct hot_table *t, hot_observer_fn fn, void *ctx);

/* Heat halves every @half_life_ns from @now_ns on; every entry keeps the
 * heat it has at @now_ns.  One pass over the table. */
void hot_set_half_life(struct hot_table *t, uint64_t half_life_ns, uint64_t now_ns);

/* Length of the entry covering @addr of @pid: geom.range, geom.base, or 0. */
uint64_t hot_entry_len(const struct hot_table *t, pid_t pid, uint64_t addr);

/* Heat of the entry covering @addr of @pid at @now_ns; 0 when none. */
double hot_heat(const struct hot_table *t, pid_t pid, uint64_t addr, uint64_t now_ns);

/* The time a record at @ns reads back as (hot_entry_view.last_ns): down to
 * the table's 2^HOT_TIME_SHIFT ns tick, no earlier than its time base. */
uint64_t hot_record_time(const struct hot_table *t, uint64_t ns);

/* The same for many lookups at one time, without a power of two each: the
 * heat is hot_weight() / hot_weight_scale(@now_ns), the scale taken once
 * (valid until the next hot_record(), which may rebase the weights). */
double hot_weight(const struct hot_table *t, pid_t pid, uint64_t addr);
double hot_weight_scale(const struct hot_table *t, uint64_t now_ns);

/* The entries in one heat bin (hot_heat_hist()). */
struct hot_heat_bin {
	uint64_t bytes, entries;
	double heat;		/* theirs, summed */
};

/* The entries by heat at @now_ns into @bins[@nbins]: bin 0 below 1, bin b
 * in [2^(b-1), 2^b) (policy.h's bins), the last open.  O(entries). */
void hot_heat_hist(const struct hot_table *t, uint64_t now_ns, struct hot_heat_bin *bins,
		   int nbins);

/*
 * The @max hottest (or coldest) entries with heat >= @min_heat (or any heat
 * for coldest), of @pid or of every pid when @pid is 0, into @out sorted
 * hottest-first (coldest-first).  O(n log max), no allocation.  Returns how
 * many were written.
 */
size_t hot_select_hottest(const struct hot_table *t, pid_t pid, double min_heat,
			  uint64_t now_ns, struct hot_entry_view *out, size_t max);
size_t hot_select_coldest(const struct hot_table *t, pid_t pid, uint64_t now_ns,
			  struct hot_entry_view *out, size_t max);

/*
 * A place in the coldest-first or the hottest-first order (heat, then pid,
 * then address), for a walk over more entries than one selection holds:
 * hot_cursor_after() marks an entry a selection returned, and
 * hot_select_coldest_after() or hot_select_hottest_after() goes on past
 * it.  The cursor keeps the
 * entry's stored weight, not its decayed heat, so it is exact: decay scales
 * every weight alike and leaves the order as it was.  It lapses when the
 * table rebases its weights (hot_stats.rebases); a lapsed or unset cursor
 * (pid 0) starts from the coldest.
 */
struct hot_cursor {
	pid_t pid;		/* 0: unset */
	float v;
	uint64_t addr;
	uint64_t rebases;
};

/* @ret just past the entry @v, which must be in the table: unset if not. */
void hot_cursor_after(const struct hot_table *t, const struct hot_entry_view *v,
		      struct hot_cursor *ret);
/* hot_select_coldest() of the entries after @after (NULL: from the coldest). */
size_t hot_select_coldest_after(const struct hot_table *t, pid_t pid, uint64_t now_ns,
				const struct hot_cursor *after, struct hot_entry_view *out,
				size_t max);
/* Entries a selection leaves out: @fn true for those (its view's heat is
 * the stored weight, not yet decayed). */
struct hot_skip {
	bool (*fn)(void *ctx, const struct hot_entry_view *v);
	void *ctx;
};

/* hot_select_coldest() of the entries @skip (not NULL) does not leave
 * out, in one pass over the table; @skip is asked only of an entry cold
 * enough to enter the selection. */
size_t hot_select_coldest_skip(const struct hot_table *t, uint64_t now_ns,
			       const struct hot_skip *skip, struct hot_entry_view *out,
			       size_t max);

/*
 * hot_select_hottest() of the entries after @after in the hottest-first
 * order, colder than it (NULL or lapsed: from the hottest), leaving out
 * those @skip (NULL: none) says to: the @max hottest of the rest, in one
 * pass over the table.  @skip is asked only of an entry hot enough to
 * enter the selection.
 */
size_t hot_select_hottest_after(const struct hot_table *t, pid_t pid, uint64_t now_ns,
				const struct hot_cursor *after, const struct hot_skip *skip,
				struct hot_entry_view *out, size_t max);

/* Call @fn for every entry, in no order; stops early when @fn returns != 0
 * and returns that value.  @fn must not modify the table. */
int hot_foreach(const struct hot_table *t, uint64_t now_ns,
		int (*fn)(const struct hot_entry_view *e, void *arg), void *arg);

/* Forget every entry of @pid (it exited or is no longer tracked); O(n).
 * Returns the number of entries removed. */
size_t hot_drop_pid(struct hot_table *t, pid_t pid);

/* Remove the entry covering @addr of @pid (it was migrated, say); 0 or -ENOENT. */
int hot_forget(struct hot_table *t, pid_t pid, uint64_t addr);

void hot_get_stats(const struct hot_table *t, struct hot_stats *ret_st);

/* 2^x for x in [-1100, 1100] without libm (core links nothing). */
double hot_exp2(double x);

#endif
