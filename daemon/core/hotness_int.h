/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotness table's layout, shared by the files that implement it
 * (hotness.c has the essay): the key and tail encodings, the slot and
 * process-slot structs, the probe and the occupancy bitmap, inline because
 * every record goes through them.  Not part of the API: include hot_table.h.
 */
#ifndef TIERD_CORE_HOTNESS_INT_H
#define TIERD_CORE_HOTNESS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "hot_table.h"

/* Key: page number (45 bits: 57-bit addresses) | huge | process slot + 1. */
#define KEY_PAGE_BITS 45
#define KEY_HUGE (1ull << KEY_PAGE_BITS)
#define KEY_PID_SHIFT (KEY_PAGE_BITS + 1)
#define KEY_PAGE(k) ((k) & (KEY_HUGE - 1))
#define KEY_PSLOT(k) ((uint32_t)((k) >> KEY_PID_SHIFT) - 1)

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
	uint32_t nhuge;		/* of which ranges */
	uint32_t last_tick;	/* its last record, for choosing one to evict */
};

_Static_assert(sizeof(struct hot_entry) == 16, "hot_entry grew: update the essay");
_Static_assert(sizeof(struct hot_pid) == 16, "hot_pid grew: update the essay");
_Static_assert(HOT_MAX_PIDS < (1u << (64 - KEY_PID_SHIFT)), "process slot does not fit the key");
_Static_assert(HOT_SAMPLES_MAX == (1u << TAIL_SAMPLE_BITS) - 1, "samples field width");

/* Key bits of the range holding base page @page. */
static inline uint64_t hot_huge_page(const struct hot_table *t, uint64_t page)
{
	return page & ~(page_geom_range_pages(&t->params.geom) - 1);
}

static inline uint32_t hot_tick(const struct hot_table *t, uint64_t now_ns)
{
	uint64_t d;

	if (now_ns <= t->time_base_ns)
		return 0;
	d = (now_ns - t->time_base_ns) >> HOT_TIME_SHIFT;
	return d < TICK_WINDOW ? (uint32_t)d : TICK_WINDOW - 1;
}

static inline uint32_t pid_home(const struct hot_table *t, pid_t pid)
{
	return (((uint32_t)pid * 2654435761u) >> 16) & t->pid_index_mask;
}

/* ---- the occupancy bitmap: a bit per OCC_GROUP slots, set while any holds a key ---- */

static inline void occ_set(struct hot_table *t, uint32_t pos)
{
	uint32_t g = pos / OCC_GROUP;

	t->occ[g / 64] |= 1ull << (g % 64);
}

/* 64-bit words of the bitmap for @nslots slots. */
static inline uint32_t hot_occ_words(uint32_t nslots)
{
	return (nslots + OCC_GROUP * 64 - 1) / (OCC_GROUP * 64);
}

static inline uint32_t occ_group_end(const struct hot_table *t, uint32_t g)
{
	uint32_t end = (g + 1) * OCC_GROUP;

	return end < t->nslots ? end : t->nslots;
}

/* The first group at or after @g that holds an entry, or t->ngroups. */
static inline uint32_t occ_next(const struct hot_table *t, uint32_t g)
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

/* ---- the open-addressed table ---- */

static inline uint32_t hot_home(const struct hot_table *t, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(((h >> 32) * t->nslots) >> 32);
}

/* True with the slot of @key in *ret_pos, or false with the empty slot that
 * ends its probe run (where it would go). */
static inline bool hot_probe(const struct hot_table *t, uint64_t key, uint32_t *ret_pos)
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

/* hotness.c: remove the entry at @pos (entries after it may move). */
void hot_remove_at(struct hot_table *t, uint32_t pos);

/* hotness_decay.c */
double hot_scale(const struct hot_table *t, uint64_t t_ns);
void hot_maybe_rebase(struct hot_table *t, uint64_t now_ns);

/* hotness_evict.c: the slot to evict from the full table; drop pool[@i]. */
uint32_t hot_victim(struct hot_table *t);
void hot_pool_del(struct hot_table *t, uint32_t i);

/* hotness_pid.c */
uint32_t hot_pid_find(const struct hot_table *t, pid_t pid);
void hot_pid_put(struct hot_table *t, uint32_t ps);
void hot_drop_slot(struct hot_table *t, uint32_t ps, size_t *ret_n);

#endif
