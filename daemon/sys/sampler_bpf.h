/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF hardware-sampling source: bpf/hotness.bpf.c on per-CPU PEBS
 * mem-loads or IBS op events, counting per (tgid, page) in the kernel.
 */
#ifndef TIERD_SYS_SAMPLER_BPF_H
#define TIERD_SYS_SAMPLER_BPF_H

#include "page_geom.h"
#include "sampler.h"

struct sampler_bpf_params {
	const char *btf_path;	/* kernel BTF; NULL: /sys/kernel/btf/vmlinux */
	const char *sysfs_root;	/* NULL: "/sys" (PMU events, online CPUs) */
	const char *procfs_root;	/* NULL: "/proc" (kernel.bpf_stats_enabled, read only) */
	/*
	 * > 0: instead of the PMU, sample every software page fault of this one
	 * process (PERF_COUNT_SW_PAGE_FAULTS, period 1), which also carries the
	 * data address.  For tests and machines without a PMU.
	 */
	pid_t fault_pid;
	/* With fault_pid: sample every period_init-th fault and adapt the period
	 * to the budget as on a PMU, instead of every fault (tests the loop). */
	bool fault_adapt;
	uint32_t max_pages;	/* the kernel's LRU hash of (tgid, page) counts */
	uint32_t max_targets;	/* tracked processes */
	double cpu_budget_pct;	/* the most CPU the sampler may use, in % of one CPU
				 * (tierd.yaml sampling.cpu_budget_pct) */
	uint64_t period_init, period_min, period_max;	/* loads per sample */
	bool fold_thp;		/* record pages of PMD THPs as one PMD entry (thp.h) */
	struct page_geom geom;	/* the kernel's: the program masks addresses to its pages */
};

/* Defaults for pages of @g: 1 %, 64 Ki pages, 1024 targets, period 10007 in
 * [1009, 1000003], THP folding on. */
void sampler_bpf_params_default(struct sampler_bpf_params *p, const struct page_geom *g);

/* 0 or -ENOMEM; -EOPNOTSUPP when tierd was built without BPF (-Dbpf=disabled). */
int sampler_bpf_new(const struct sampler_bpf_params *p, struct sampler **ret);

/*
 * Route libbpf's messages to @fn (level is a syslog level).  libbpf's print
 * callback is process-wide, so this is too; the last warning is also kept to
 * explain a failed start() in its @why.
 */
void sampler_bpf_set_log(void (*fn)(int level, const char *msg));

#endif
