/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Types shared by bpf/hotness.bpf.c and its loader (daemon/sys/sampler_bpf.c).
 * Types only: no kernel or libc headers, so both sides can include it.
 */
#ifndef TIERD_BPF_HOTNESS_H
#define TIERD_BPF_HOTNESS_H

/* Key of the LRU hash of sample counts: one virtual page of one process. */
struct hot_bpf_key {
	__u32 tgid;
	__u32 pad;	/* zero: keys are compared as bytes */
	__u64 page;	/* data address >> page_shift */
};

/* Indices of the per-CPU counter array. */
enum hot_bpf_stat {
	HOT_BPF_SAMPLES,	/* program runs */
	HOT_BPF_UNTRACKED,	/* sample of a process that is not a target */
	HOT_BPF_NO_ADDR,	/* the PMU gave no data address */
	HOT_BPF_KERNEL_ADDR,	/* a kernel address (IBS samples kernel mode too) */
	HOT_BPF_COUNTED,	/* added to the hash */
	HOT_BPF_UPDATE_FAILED,	/* the hash refused a new key */
	HOT_BPF_NR_STATS,
};

/*
 * x86-64 user addresses are below 2^47 (2^56 with 5-level paging); kernel
 * addresses have the top bit set.
 */
#define HOT_USER_ADDR_END (1ULL << 63)

#endif
