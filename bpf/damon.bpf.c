// SPDX-License-Identifier: GPL-2.0-only
/*
 * DAMON's aggregated regions, read where the kernel hands them out
 * ================================================================
 *
 * The model.  At the end of every aggregation interval a kdamond walks its
 * targets in order, and each target's regions in address order, and fires
 * the damon:damon_aggregated tracepoint for every region with the number of
 * sampling intervals it was found accessed in (mm/damon/core.c:
 * kdamond_reset_aggregated(), just before it zeroes the counts).  This
 * program runs there, keeps only tierd's own kdamond (kdamond_pid, set by
 * the loader), and writes its regions, with their counts and ages (an idle
 * region's age is how long it has gone untouched: what demotion looks for
 * in memory the table has no heat for), into one half of a two-half array
 * that userspace maps: the aggregation
 * being written (pass_seq) goes to half pass_seq & 1, the newest complete
 * one (done_seq) stays readable in the other half until pass done_seq + 2
 * begins, one aggregation interval later at the soonest.  Userspace reads
 * the newest complete pass once a tick, and when the program woke it (see
 * below; daemon/sys/damon/feed.c), and checks pass_seq again after copying
 * it; a copy that raced a new pass is retried.
 *
 * Where a pass begins.  The tracepoint says which target and region, not
 * which aggregation, so a new pass is recognised by the walk going back: a
 * lower target index than the last event's, or the same target at an
 * address not above the last region's.  This needs no count of targets or
 * regions from userspace and falls back into step by itself after the
 * kdamond's targets change or another kdamond is followed.
 *
 * Worked example.  One target, 40 regions, 100 ms aggregation, 6 of them
 * accessed: every 100 ms, 40 program runs (one lookup, a few compares) and
 * 40 array writes of 32 bytes.  A tick 4 s later reads the 40 records of
 * the newest pass; the 39 passes before it were overwritten in place, so
 * nothing piles up, and nothing is lost, however long the tick.  That is
 * what replaced the sysfs route's `update_schemes_tried_regions` write
 * (blocks for up to one aggregation interval) and its three file reads per
 * region per tick, which in the lab guest were most of tierd's idle CPU.
 *
 * Where a pass ends.  Each event carries its target's region count, and
 * the loader says how many targets the kdamond has (nr_targets): the event
 * of the last target's last region ends the pass, and done_seq moves there
 * and then, not one aggregation later when the next pass begins.  When
 * the count is off (the targets just changed, the last target has no
 * region) the beginning of the next pass still ends it.
 *
 * Waking tierd.  At rest tierd ticks every few seconds, and a hot set that
 * moves waits for the next tick.  So while tierd has armed it (wake_armed,
 * after an idle tick), the program looks each accessed region up in the
 * known-heat sketch tierd wrote (damon.h: what its table knew at that
 * tick), sums the accessed bytes and the "fresh" ones of the pass, and at
 * the pass's end, when the fresh bytes reach wake_min_bytes and
 * 1/wake_share of the accessed ones, puts the pass number into the wake
 * ring buffer and disarms: the one wake-up tierd gets until its next tick
 * arms it again.  tierd then looks at that pass itself against its table
 * (daemon/sys/damon/wake.c: damon_peek()) before it ticks early.  A steady hot set
 * costs tierd no wake-up at all; the program's cost is one map lookup
 * (the sketch, sized by tierd at load) and up to DAMON_LOOK_RANGES pairs
 * of array reads per accessed region, in the kdamond.  The arm flag is
 * latched at the beginning of a pass so that a pass is summed whole or not
 * at all; a pass that tierd rewrites the sketch under is judged on a mix
 * of the two and at worst wakes tierd for nothing (its own look finds
 * nothing fresh) or not at all.
 *
 * How it fails.  More regions in one pass than half_cap (the kdamond's
 * max_nr_regions plus a margin): the rest are counted in overflow and the
 * pass reads as partial.  The tracepoint fires for every kdamond on
 * the machine; the pid filter is the first thing each run checks, so other
 * kdamonds cost one compare per region.  A pass that follows a change of
 * targets may mix the old and new targets; the loader ignores the pass in
 * progress when it changes them.  A wake that finds the ring full (tierd
 * has not taken the last one; there is room for some 250) is counted in
 * wake_drops and the program stays armed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "damon.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load: records per half (regions has twice
 * that), and the known-heat sketch's cells less one (a power of two less
 * one: the verifier reads it as a constant, which bounds every index). */
const volatile __u32 half_cap = 1;
const volatile __u32 known_mask = DAMON_KNOWN_CELLS_MIN - 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct damon_feed_rec);
	__uint(max_entries, 2);	/* the loader sets 2 * half_cap */
} regions SEC(".maps");

/* The sketch (damon.h), one value of known_mask + 1 cells, mapped by tierd,
 * which writes it between its ticks. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	/* Sizes, not BTF types: the value's size is set at load, and a map
	 * with a key type but no value type is refused with BTF (libbpf then
	 * logs that and retries without). */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, DAMON_KNOWN_CELLS_MIN * sizeof(__u8));	/* the loader sets it */
	__uint(max_entries, 1);
} known SEC(".maps");

/* Tells tierd that a pass had fresh heat: the pass number, one a tick. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wake SEC(".maps");

/* Written by the loader at any time: the kdamond to follow, 0 for none, and
 * how many targets it has. */
__u32 kdamond_pid;
__u32 nr_targets;

/* Written by the loader between its ticks: the sketch, then the bars, then
 * wake_armed = 1.  The program clears wake_armed when it wakes tierd. */
__u64 wake_min_bytes;
__u32 wake_share;
__u32 known_unit;	/* the sketch's unit (damon.h: damon_known_unit()) */
__u32 wake_armed;

/* Read by the loader (the .bss is mapped into it). */
__u64 pass_seq;		/* the pass being written, 0 before the first */
__u64 done_seq;		/* the newest complete pass, 0 before the first */
__u32 pass_n[2];	/* records in each half */
__u64 seen;		/* regions of our kdamond, accessed or not */
__u64 overflow;		/* regions that did not fit in their half */
__u64 wakes;		/* passes put into the wake ring */
__u64 wake_drops;	/* ... and those the ring had no room for */

/* Where the walk is: the last event's target and region start, and how
 * many of that target's regions it has seen. */
static __u32 last_target;
static __u64 last_start;
static __u32 target_seen;
/* This pass against the sketch, when wake_armed was set at its beginning. */
static __u32 pass_look, pass_unit;
static __u64 pass_accessed, pass_fresh;

static void pass_begin(void)
{
	if (pass_seq)
		done_seq = pass_seq;
	pass_seq++;
	pass_n[pass_seq & 1] = 0;
	pass_look = wake_armed;
	pass_unit = known_unit;
	pass_accessed = 0;
	pass_fresh = 0;
}

static void pass_end(void)
{
	__u64 seq = pass_seq;

	done_seq = seq;
	if (!pass_look || !wake_armed)
		return;
	pass_look = 0;
	if (pass_fresh < wake_min_bytes || pass_fresh * wake_share < pass_accessed)
		return;
	if (bpf_ringbuf_output(&wake, &seq, sizeof(seq), 0)) {
		wake_drops++;
		return;
	}
	wake_armed = 0;
	wakes++;
}

SEC("tp_btf/damon_aggregated")
int BPF_PROG(damon_aggregated, unsigned int target_id, struct damon_region *r,
	     unsigned int nr_regions)
{
	struct damon_feed_rec *rec;
	__u64 start = r->ar.start, end = r->ar.end;
	__u32 nr_accesses = r->nr_accesses;
	__u32 half, i, key;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != kdamond_pid || !kdamond_pid)
		return 0;
	if (!pass_seq || target_id < last_target ||
	    (target_id == last_target && start <= last_start)) {
		pass_begin();
		target_seen = 0;
	} else if (target_id != last_target) {
		target_seen = 0;
	}
	last_target = target_id;
	last_start = start;
	target_seen++;
	seen++;
	half = pass_seq & 1;
	i = pass_n[half];
	key = half * half_cap + i;
	rec = i < half_cap ? bpf_map_lookup_elem(&regions, &key) : NULL;
	if (rec) {
		rec->start = start;
		rec->end = end;
		rec->target = target_id;
		rec->nr_accesses = nr_accesses;
		rec->age = r->age;
		rec->reserved = 0;
		pass_n[half] = i + 1;
	} else {
		overflow++;
	}
	if (nr_accesses) {
		if (pass_look && end > start) {
			const __u8 *cells;

			key = 0;
			cells = bpf_map_lookup_elem(&known, &key);
			if (cells)
				damon_known_look(cells, known_mask, pass_unit, target_id, start,
						 end, nr_accesses, &pass_accessed, &pass_fresh);
		}
	}
	if (target_seen == nr_regions && target_id + 1 == nr_targets)
		pass_end();
	return 0;
}
