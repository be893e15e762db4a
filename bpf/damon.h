/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Types and the known-heat sketch shared by bpf/damon.bpf.c and its loader
 * (daemon/sys/damon_feed.c, daemon/sys/sampler_damon.c).  No kernel or libc
 * headers, so both sides can include it: the functions below run in the
 * program, in tierd, and in the unit tests that check the program's sums.
 */
#ifndef TIERD_BPF_DAMON_H
#define TIERD_BPF_DAMON_H

/* One accessed region of one aggregation: an element of the regions array. */
struct damon_feed_rec {
	__u64 start;		/* [start, end): the region's virtual addresses */
	__u64 end;
	__u32 target;		/* the target's index in the kdamond's context */
	__u32 nr_accesses;	/* sampling intervals it was seen accessed in */
};

/*
 * The known-heat sketch.  tierd writes, for every 2 MiB range its table
 * holds heat for, that heat into two cells chosen by a hash of (target,
 * range), each cell keeping the most of what lands in it; a range's known
 * heat is the smaller of its two cells.  A collision can only make a range
 * look hotter than it is (fewer wakes, never more).  Heat is in hot_record()
 * units (sampling intervals seen accessed, times the share of the range a
 * region covers), kept as heat * DAMON_KNOWN_UNIT in 16 bits: 1/16 of an
 * access resolves, and 4095 accesses saturate (at 20 samples per
 * aggregation a range holds about 90 at most).
 *
 * Its size is set at load, a power of two of DAMON_KNOWN_CELLS_MIN to
 * DAMON_KNOWN_CELLS_MAX cells: four cells per 2 MiB range of the machine's
 * memory (damon_feed.h: damon_known_cells_for()).  With all of that memory
 * hot, half a range writes each cell on average, and a new range finds both
 * its cells taken by others 15% of the time; with a quarter of it hot, 1.4%.
 * 2^15 cells (64 KiB) is for up to 16 GiB; 2^21 (4 MiB, the most one array
 * value may hold) from 1 TiB, where the figures above hold for the first
 * TiB's worth of hot ranges.  Only ranges with heat are written, not the
 * whole footprint.  Cell indexes are masked with cells - 1 (@mask below).
 */
#define DAMON_KNOWN_CELLS_MIN (1u << 15)
#define DAMON_KNOWN_CELLS_MAX (1u << 21)
#define DAMON_KNOWN_UNIT 16
#define DAMON_KNOWN_MAX 0xffffu
#define DAMON_RANGE_SHIFT 21		/* a 2 MiB range, hotness.h's HOT_HUGE */
#define DAMON_RANGE_SIZE (1ull << DAMON_RANGE_SHIFT)
/* The ranges of one region looked up at most: those of a larger region are
 * sampled, evenly spaced, each standing for the ones it skips (DAMON counts
 * a region's accesses as one anyway). */
#define DAMON_LOOK_RANGES 8

/* Both cells come from one 64-bit hash of (target, range): splitmix64's
 * finaliser, since the ranges of a hot set are consecutive, and a plain
 * multiply leaves consecutive keys' low and high bits in step (with it, a
 * sketch with all of memory hot read 26% of new ranges as known, not 15%). */
static inline __u64 damon_known_hash(__u32 target, __u64 addr)
{
	__u64 h = (addr >> DAMON_RANGE_SHIFT) ^ ((__u64)target << 40);

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static inline __u32 damon_known_cell(__u64 h, int i, __u32 mask)
{
	return (__u32)(i ? h >> 32 : h) & mask;
}

/* The known heat of the range of @addr, in DAMON_KNOWN_UNIT, from the
 * sketch @known of @mask + 1 cells. */
static inline __u32 damon_known_get(const __u16 *known, __u32 mask, __u32 target, __u64 addr)
{
	__u64 h = damon_known_hash(target, addr);
	__u32 a = known[damon_known_cell(h, 0, mask)], b = known[damon_known_cell(h, 1, mask)];

	return a < b ? a : b;
}

/* Note @units (heat in DAMON_KNOWN_UNIT, saturated) for the range of @addr. */
static inline void damon_known_put(__u16 *known, __u32 mask, __u32 target, __u64 addr,
				   __u32 units)
{
	__u64 h = damon_known_hash(target, addr);

	if (units > DAMON_KNOWN_MAX)
		units = DAMON_KNOWN_MAX;
	for (int i = 0; i < 2; i++) {
		__u32 c = damon_known_cell(h, i, mask);

		if (known[c] < units)
			known[c] = (__u16)units;
	}
}

/*
 * The @i-th range a look takes of region [@start, @end) (i <
 * DAMON_LOOK_RANGES): 0 when the region has no more; else 1, with the
 * range's first byte in *@lo, the bytes the region covers of it in *@bytes,
 * and in *@stands how many ranges it stands for (itself and those skipped
 * after it).  The program's look and tierd's (peek_region()) take the same.
 */
static inline int damon_look_range(__u64 start, __u64 end, int i, __u64 *lo, __u64 *bytes,
				   __u64 *stands)
{
	__u64 first = start & ~(DAMON_RANGE_SIZE - 1);
	__u64 nr = ((end - 1) >> DAMON_RANGE_SHIFT) - (first >> DAMON_RANGE_SHIFT) + 1;
	__u64 step = (nr + DAMON_LOOK_RANGES - 1) / DAMON_LOOK_RANGES;
	__u64 k = i * step, from, to;

	if (k >= nr)
		return 0;
	*lo = first + (k << DAMON_RANGE_SHIFT);
	from = *lo > start ? *lo : start;
	to = *lo + DAMON_RANGE_SIZE < end ? *lo + DAMON_RANGE_SIZE : end;
	*bytes = to - from;
	*stands = nr - k < step ? nr - k : step;
	return 1;
}

/*
 * One accessed region against the sketch, as tierd's own peek does it
 * against the table (sampler_damon.c: peek_region()): its bytes into
 * *@accessed, and into *@fresh those of its ranges whose known heat is
 * below half of what this region alone would add to them (nr_accesses
 * times the share of the range it covers).
 */
static inline void damon_known_look(const __u16 *known, __u32 mask, __u32 target,
				    __u64 start, __u64 end, __u32 nr_accesses,
				    __u64 *accessed, __u64 *fresh)
{
	*accessed += end - start;
	for (int i = 0; i < DAMON_LOOK_RANGES; i++) {
		__u64 lo, bytes, stands, add;

		if (!damon_look_range(start, end, i, &lo, &bytes, &stands))
			break;
		/* what the region adds, in DAMON_KNOWN_UNIT */
		add = (__u64)nr_accesses * bytes * DAMON_KNOWN_UNIT >> DAMON_RANGE_SHIFT;
		if (2 * (__u64)damon_known_get(known, mask, target, lo) < add)
			*fresh += bytes * stands;
	}
}

#endif
