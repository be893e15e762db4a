/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the BPF sampler's loader (sampler_bpf.c) and its per-tick half
 * (sampler_bpf_drain.c) share.  Built only with the BPF skeleton.
 */
#ifndef TIERD_SYS_SAMPLER_BPF_INT_H
#define TIERD_SYS_SAMPLER_BPF_INT_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/hotness.h"
#include "../core/hot_table.h"
#include "hotness.skel.h"
#include "pmu.h"
#include "sampler_bpf.h"
#include "thp.h"

#define SAMPLE_COST_EST_NS 2000ull	/* PMI + program per sample, a typical figure */
#define DRAIN_BATCH 4096u

struct sampler_bpf {
	struct sampler base;
	struct sampler_bpf_params p;
	const char *btf_path, *sysfs_root, *procfs_root;
	struct hotness_bpf *skel;
	int *fds;
	struct bpf_link **links;
	int nfds;
	unsigned int ncpus;	/* CPUs sampled (for the status line) */
	struct pmu_event ev;
	bool use_bpf_stats;
	uint64_t period;
	pid_t *targets;		/* sorted, as in the tgid map */
	size_t ntargets;
	struct hot_bpf_key *keys;	/* drain buffers, DRAIN_BATCH each */
	__u64 *vals;
	__u64 *percpu;		/* libbpf_num_possible_cpus() values */
	int npossible;
	uint64_t last_ns, last_samples, last_run_ns, last_lost;
	bool thp_on;
	char thp_note[160];
	struct thp_lookup thp;
	struct sampler_status st;
};

#define SB(s) ((struct sampler_bpf *)(s))

/* sampler_bpf_drain.c: the ops that run once started. */
int sampler_bpf_set_targets(struct sampler *s, const pid_t *pids, size_t n);
int sampler_bpf_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns);
int sampler_bpf_peek(struct sampler *s, const struct hot_table *t, uint64_t now_ns,
		     struct sampler_peek *ret);

#endif
