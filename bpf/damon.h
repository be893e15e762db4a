/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Types and the known-heat sketch shared by bpf/damon.bpf.c and its loader
 * (daemon/sys/damon/feed.c, daemon/sys/damon/).  No kernel or libc
 * headers, so both sides can include it: the functions below run in the
 * program, in tierd, and in the unit tests that check the program's sums.
 */
#ifndef TIERD_BPF_DAMON_H
#define TIERD_BPF_DAMON_H

/* One region of one aggregation: an element of the regions array. */
struct damon_feed_rec {
	__u64 start;		/* [start, end): the region's virtual addresses */
	__u64 end;
	__u32 target;		/* the target's index in the kdamond's context */
	__u32 nr_accesses;	/* sampling intervals it was seen accessed in */
	/* Aggregation intervals its access count has stayed about the same
	 * (DAMON's age): with nr_accesses 0, how long it has been idle. */
	__u32 age;
	__u32 reserved;
};

/*
 * The known-heat sketch.  tierd writes, for every 2 MiB range its table
 * holds heat for (each 2 MiB of a larger PMD entry), that heat into two cells chosen by a hash of (target,
 * range), each cell keeping the most of what lands in it; a range's known
 * heat is the smaller of its two cells.  A collision can only make a range
 * look hotter than it is (fewer wakes, never more).  Heat is in hot_record()
 * units (sampling intervals seen accessed, times the share of the range a
 * region covers), kept in 8 bits as heat * unit, where the unit is what
 * damon_known_unit() picks for the aggregations the program looks at: an
 * access resolves to 1/16 while an aggregation has up to 31 samples, and
 * coarser beyond.  The program only asks whether a range's known heat is
 * below half of what one aggregation adds (damon_known_look()), so a cell
 * that saturates at 255 answers as a wider one would as long as one
 * aggregation cannot add more than 510 (samples * unit); 16 bits, as it
 * once had, doubled the sketch, up to 4 MiB of tierd's RSS.
 *
 * Its size is set at load, a power of two of DAMON_KNOWN_CELLS_MIN to
 * DAMON_KNOWN_CELLS_MAX cells: four cells per 2 MiB range of the machine's
 * memory (damon_feed.h: damon_known_cells_for()).  With all of that memory
 * hot, half a range writes each cell on average, and a new range finds both
 * its cells taken by others 15% of the time; with a quarter of it hot, 1.4%.
 * 2^15 cells (32 KiB) is for up to 16 GiB; 2^21 (2 MiB) from 1 TiB, where
 * the figures above hold for the first TiB's worth of hot ranges.  Only
 * ranges with heat are written, not the whole footprint.  Cell indexes are
 * masked with cells - 1 (@mask below).
 */
#define DAMON_KNOWN_CELLS_MIN (1u << 15)
#define DAMON_KNOWN_CELLS_MAX (1u << 21)
#define DAMON_KNOWN_UNIT 16		/* the finest unit: 1/16 of an access */
#define DAMON_KNOWN_MAX 0xffu
/* The sketch's range: 2 MiB whatever the kernel's pages, as the hot
 * table's range entries (daemon/core/page_geom.h; known_fill_one() in
 * daemon/sys/damon/wake.c writes an entry into the ranges it covers). */
#define DAMON_RANGE_SHIFT 21
#define DAMON_RANGE_SIZE (1ull << DAMON_RANGE_SHIFT)
/* The ranges of one region looked up at most: those of a larger region are
 * sampled, evenly spaced, each standing for the ones it skips (DAMON counts
 * a region's accesses as one anyway). */
#define DAMON_LOOK_RANGES 8

/* The unit for aggregations of up to @max_nr_accesses samples: the finest
 * power of two up to DAMON_KNOWN_UNIT with which one aggregation adds at
 * most twice what a cell holds (1 beyond 510 samples, where cells of
 * known heat above 255 accesses saturate and read as fresh what adds more
 * than 510). */
static inline __u32 damon_known_unit(__u64 max_nr_accesses)
{
	__u32 unit = DAMON_KNOWN_UNIT;

	while (unit > 1 && max_nr_accesses * unit > 2 * DAMON_KNOWN_MAX)
		unit >>= 1;
	return unit;
}

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

/* The known heat of the range of @addr, in the sketch's unit, from the
 * sketch @known of @mask + 1 cells. */
static inline __u32 damon_known_get(const __u8 *known, __u32 mask, __u32 target, __u64 addr)
{
	__u64 h = damon_known_hash(target, addr);
	__u32 a = known[damon_known_cell(h, 0, mask)], b = known[damon_known_cell(h, 1, mask)];

	return a < b ? a : b;
}

/* Note @units (heat in the sketch's unit, saturated) for the range of @addr. */
static inline void damon_known_put(__u8 *known, __u32 mask, __u32 target, __u64 addr,
				   __u32 units)
{
	__u64 h = damon_known_hash(target, addr);

	if (units > DAMON_KNOWN_MAX)
		units = DAMON_KNOWN_MAX;
	for (int i = 0; i < 2; i++) {
		__u32 c = damon_known_cell(h, i, mask);

		if (known[c] < units)
			known[c] = (__u8)units;
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
 * One accessed region against the sketch (its cells in @unit), as tierd's
 * own peek does it against the table (daemon/sys/damon/wake.c: peek_region()): its
 * bytes into *@accessed, and into *@fresh those of its ranges whose known
 * heat is below half of what this region alone would add to them
 * (nr_accesses times the share of the range it covers).
 */
static inline void damon_known_look(const __u8 *known, __u32 mask, __u32 unit, __u32 target,
				    __u64 start, __u64 end, __u32 nr_accesses,
				    __u64 *accessed, __u64 *fresh)
{
	*accessed += end - start;
	for (int i = 0; i < DAMON_LOOK_RANGES; i++) {
		__u64 lo, bytes, stands, add;

		if (!damon_look_range(start, end, i, &lo, &bytes, &stands))
			break;
		/* what the region adds, in @unit */
		add = (__u64)nr_accesses * bytes * unit >> DAMON_RANGE_SHIFT;
		if (2 * (__u64)damon_known_get(known, mask, target, lo) < add)
			*fresh += bytes * stands;
	}
}

#endif
