/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Types shared by bpf/damon.bpf.c and its loader (daemon/sys/damon_feed.c).
 * Types only: no kernel or libc headers, so both sides can include it.
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

#endif
