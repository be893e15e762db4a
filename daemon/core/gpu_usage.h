/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What each GPU placement rule's processes hold on the rule's node, the
 * figure its max_bytes is held against (policy_input.rule_used_bytes).
 *
 * It is what the node really holds, read from the kernel, not what the
 * tick's node queries happened to see: a rule's cgroups are read whole
 * (memory.numa_stat of each cgroup the rule names, every tick: one small
 * file each), and each tracked process the rule matches is read on its own
 * (/proc/PID/numa_maps, a walk of its page tables: at most
 * GPU_USAGE_READS_PER_TICK of them a tick, each again after
 * GPU_USAGE_REFRESH_NS, or GPU_USAGE_BUSY_REFRESH_NS while tierd moves its
 * pages there, and never sooner than GPU_USAGE_READ_SPACING times its last
 * read took: the walk of a terabyte of 4 KiB pages takes seconds, and
 * read every second it would be the tick).  A cgroup counts the pages
 * charged to it; a shared library's page cache that its processes map is
 * charged to whoever read it first, and a heated page of it moves onto
 * the node all the same (MPOL_MF_MOVE_ALL): the rule's cgroups hold the
 * larger of their reading and their tracked processes' readings.  Between
 * two reads, what tierd itself planned to promote onto the rule's node is
 * added (gpu_usage_planned()), so a read
 * that is seconds old never lets a rule past its cap: an intent that did
 * not land counts until the next read, which only holds the rule back a
 * little early.  A rule with a process never read yet, or whose cgroup
 * could not be read, is unknown (GPU_USAGE_UNKNOWN): it takes nothing
 * until it is read.
 *
 * Worked example: a rule of 64 GiB names /training.slice and "python*".
 * The slice holds 40 GiB on node 1 (memory.numa_stat), a python process
 * outside it held 20 GiB at its read 4 s ago, and tierd planned 3 GiB of
 * promotions for it since: 63 GiB used, 1 GiB of room this tick.
 *
 * Pure: the reads come in from the gather step (daemon/gather.c); fixed
 * size, no allocation, no clock (times come in).
 */
#ifndef TIERD_CORE_GPU_USAGE_H
#define TIERD_CORE_GPU_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "candidates.h"
#include "policy.h"

#define GPU_USAGE_REFRESH_NS (10 * 1000000000ull) /* a process read again after */
/* ... or after this, while tierd plans moves onto its rule's node: a plan
 * the migrate step did not carry out this tick (its time budget) counts
 * until the next reading, and would hold the rule short of its cap. */
#define GPU_USAGE_BUSY_REFRESH_NS (1000000000ull)
#define GPU_USAGE_READS_PER_TICK 4 /* numa_maps reads a tick */
/* A process's reads take at most 1/GPU_USAGE_READ_SPACING of the time
 * (1% of a CPU): one whose walk took 2 s is read again after 200 s, and
 * what tierd planned for it meanwhile counts until then (the safe side). */
#define GPU_USAGE_READ_SPACING 100
#define GPU_USAGE_UNKNOWN UINT64_MAX /* a rule not read yet: held at its cap */

/* A tracked process that a rule matches. */
struct gpu_usage_proc {
	pid_t pid;
	int16_t rule;
	bool by_cgroup; /* in one of its rule's cgroups: counted by their read */
	bool read; /* node_bytes is a reading */
	uint64_t read_ns;
	uint64_t read_cost_ns; /* what that read took */
	uint64_t node_bytes; /* on its rule's node at that read */
	uint64_t planned_bytes; /* promoted there by tierd since */
};

struct gpu_usage {
	uint32_t page_size;
	int nr_rules;
	int node[POLICY_MAX_RULES]; /* each rule's node id */
	bool has_cgroups[POLICY_MAX_RULES]; /* the rule names a cgroup */
	struct {
		bool read; /* the last read of its cgroups worked */
		uint64_t bytes; /* what they hold on the rule's node */
		uint64_t planned_bytes; /* promoted there by tierd since */
	} cg[POLICY_MAX_RULES];
	int nr;
	struct gpu_usage_proc procs[CAND_MAX_PROCS]; /* sorted by pid */
	struct gpu_usage_proc scratch[CAND_MAX_PROCS]; /* for gpu_usage_sync() */
};

/* Empty, for the rules of @params (their nodes, which name cgroups). */
void gpu_usage_init(struct gpu_usage *u, const struct policy_params *params);

/*
 * Follow the tracked processes @p (each one's rule set): those with a rule
 * are kept, with their reading when the rule is the same; @by_cgroup[i]
 * says p->procs[i] is in one of its rule's cgroups.
 */
void gpu_usage_sync(struct gpu_usage *u, const struct cand_procs *p, const bool *by_cgroup);

/*
 * Up to @max processes whose numa_maps is due at @now_ns, never-read ones
 * first, then the oldest reading older than GPU_USAGE_REFRESH_NS
 * (GPU_USAGE_BUSY_REFRESH_NS with moves planned since), and than
 * GPU_USAGE_READ_SPACING times its cost; returns how many pids are in @ret.
 */
size_t gpu_usage_due(const struct gpu_usage *u, uint64_t now_ns, pid_t *ret, size_t max);

/* The node id of @pid's rule, -1 when it has none. */
int gpu_usage_node_of(const struct gpu_usage *u, pid_t pid);

/* @pid holds @node_bytes on its rule's node at @now_ns, by a read that
 * took @cost_ns.  A process gone (the read failed with -ESRCH/-ENOENT)
 * holds 0. */
void gpu_usage_read_proc(struct gpu_usage *u, pid_t pid, uint64_t node_bytes, uint64_t now_ns,
			 uint64_t cost_ns);

/* Rule @rule's cgroups hold @bytes on its node; @ok false: not readable. */
void gpu_usage_read_cgroups(struct gpu_usage *u, int rule, bool ok, uint64_t bytes);

/* The tick's first @n intents, as decided: promotions onto a process's
 * rule node count until its next read. */
void gpu_usage_planned(struct gpu_usage *u, const struct policy_intent *intents, size_t n);

/* Each rule's bytes on its node now, GPU_USAGE_UNKNOWN when not read yet,
 * into @ret[nr_rules]. */
void gpu_usage_totals(const struct gpu_usage *u, uint64_t *ret);

#endif
