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
	HOT_BPF_CACHE_HIT,	/* skipped: the load hit a CPU cache */
	HOT_BPF_COUNTED,	/* added to the hash */
	HOT_BPF_UPDATE_FAILED,	/* the hash refused a new key */
	HOT_BPF_NR_STATS,
};

/*
 * Bits of perf_mem_data_src.mem_lvl (uapi perf_event.h), repeated here because
 * vmlinux.h carries no #defines.
 */
#define HOT_MEM_LVL_SHIFT 5
#define HOT_MEM_LVL_HIT 0x02
#define HOT_MEM_LVL_L1 0x08
#define HOT_MEM_LVL_LFB 0x10
#define HOT_MEM_LVL_L2 0x20
#define HOT_MEM_LVL_L3 0x40
#define HOT_PERF_SAMPLE_DATA_SRC (1U << 15)

#endif
