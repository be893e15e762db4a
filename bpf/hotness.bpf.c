// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page-access counting from sampled memory loads
 * ==============================================
 *
 * The model.  The PMU interrupts every sample_period-th memory load (Intel
 * PEBS mem-loads, AMD IBS op) and records the load's data address.  This
 * program runs on each such sample, in NMI context on the sampled CPU, and
 * counts it in an LRU hash keyed by (tgid, virtual page).  Userspace drains
 * the hash once a tick (lookup-and-delete in batches) into the hotness table,
 * so the kernel-to-user traffic is one record per distinct page per tick, not
 * one per sample, and there is no ring buffer on this path.  Samples of
 * processes that are not targets are dropped here, at the first map lookup.
 *
 * Worked example.  A CPU retiring 2e9 loads/s with sample_period 10007 gives
 * ~200k samples/s per CPU; a process with a 64 MiB hot set (16384 pages)
 * touched uniformly gets each page sampled ~12 times/s, so after a 1 s tick the
 * hash holds 16384 keys with counts around 12.  With 1000 cold pages touched
 * once in the tick, those show up with count 1: the hotness table's decay and
 * the policy's threshold separate them, not this program.
 *
 * Cost.  Per sample: two or three hash lookups (the tgid filter, the count,
 * an insert for a new page) and a per-CPU counter, ~100-300 ns on top of the
 * PMU interrupt itself (~1-3 us for PEBS), which dominates.  The loader keeps
 * the total under the configured CPU share by raising sample_period.  Memory
 * is the LRU hash: max_pages * ~64 bytes, set by the loader before load.
 *
 * How it fails.  When more distinct pages are sampled in one tick than the
 * hash holds, the LRU drops the least recently updated keys with their
 * counts: cold pages go first, which is what we want, but counts are lost
 * silently (HOT_BPF_UPDATE_FAILED only counts refused inserts).  Size
 * max_pages above the pages sampled per tick.  The data address is virtual:
 * a page counted just before munmap + mmap is attributed to the new mapping.
 * Samples with no address (IBS ops that are not loads/stores) are counted in
 * HOT_BPF_NO_ADDR and dropped.  IBS cannot exclude kernel mode (its PMU
 * refuses every exclude_* flag), so it also samples the kernel's own loads:
 * a kernel address is counted in HOT_BPF_KERNEL_ADDR and dropped, a user
 * address loaded by the kernel (a read(2) into a buffer) is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "hotness.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load: log2 of the running kernel's base page
 * (12, 14 or 16), so a sample counts against the page it lies in. */
const volatile __u32 page_shift;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct hot_bpf_key);
	__type(value, __u64);
	__uint(max_entries, 65536);	/* the loader sets max_pages */
} hot_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
	__uint(max_entries, 1024);	/* the loader sets max_targets */
} hot_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, HOT_BPF_NR_STATS);
} hot_stats SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&hot_stats, &idx);

	if (v)
		(*v)++;
}

SEC("perf_event")
int hot_sample(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 addr = ctx->addr;
	struct hot_bpf_key key = {};
	__u64 one = 1, *cnt;

	stat_inc(HOT_BPF_SAMPLES);
	if (!bpf_map_lookup_elem(&hot_tgids, &tgid)) {
		stat_inc(HOT_BPF_UNTRACKED);
		return 0;
	}
	if (!addr) {
		stat_inc(HOT_BPF_NO_ADDR);
		return 0;
	}
	if (addr >= HOT_USER_ADDR_END) {
		stat_inc(HOT_BPF_KERNEL_ADDR);
		return 0;
	}
	key.tgid = tgid;
	key.page = addr >> page_shift;
	cnt = bpf_map_lookup_elem(&hot_counts, &key);
	if (!cnt && bpf_map_update_elem(&hot_counts, &key, &one, BPF_NOEXIST) == 0) {
		stat_inc(HOT_BPF_COUNTED);
		return 0;
	}
	if (!cnt)	/* another CPU inserted it first */
		cnt = bpf_map_lookup_elem(&hot_counts, &key);
	if (!cnt) {
		stat_inc(HOT_BPF_UPDATE_FAILED);
		return 0;
	}
	__sync_fetch_and_add(cnt, 1);
	stat_inc(HOT_BPF_COUNTED);
	/* 0: no perf ring-buffer record for this sample. */
	return 0;
}
