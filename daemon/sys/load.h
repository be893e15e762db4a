/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPU load for the copy-thread controller: PSI cpu pressure, per-CPU busy
 * time from /proc/stat, which CPUs belong to a node, and how many CPU ids
 * the kernel has.  Every reader takes the root directory ("" on a real
 * system) so tests use fixtures.
 */
#ifndef TIERD_SYS_LOAD_H
#define TIERD_SYS_LOAD_H

#include <stddef.h>
#include <stdint.h>

#define LOAD_MAX_CPUS 1024
#define LOAD_MASK_WORDS (LOAD_MAX_CPUS / 64)

/* "some avg10" of ROOT/proc/pressure/cpu in hundredths of a percent.
 * 0, -ENOENT (no PSI: CONFIG_PSI off or psi=0), -EINVAL. */
int load_read_psi_cpu(const char *root, unsigned int *ret_x100);

struct load_cpu_times {
	int nr;				/* highest cpu id + 1 */
	uint64_t busy[LOAD_MAX_CPUS];	/* USER_HZ ticks not idle or iowait */
	uint64_t total[LOAD_MAX_CPUS];
};

/* The per-CPU lines of ROOT/proc/stat.  0 or a negative errno. */
int load_read_cpu_times(const char *root, struct load_cpu_times *ret);

/*
 * CPUs in @mask whose utilisation from @a to @b was at most @busy_pct.
 * A CPU without ticks in between (offline, or no time passed) is not idle.
 */
unsigned int load_idle_cpus(const struct load_cpu_times *a, const struct load_cpu_times *b,
			    const uint64_t mask[LOAD_MASK_WORDS], unsigned int busy_pct);

/* ROOT/sys/devices/system/node/nodeN/cpulist as a mask; returns the CPU
 * count (0 for a CPU-less node) or a negative errno. */
int load_node_cpus(const char *root, int node, uint64_t mask[LOAD_MASK_WORDS]);

/* The kernel's nr_cpu_ids: the highest id in
 * ROOT/sys/devices/system/cpu/possible + 1 (8 for "0-3,6-7"), the most
 * threads vm.migrate_copy_threads takes.  0, -ENOENT, -EINVAL (unparsable
 * or empty), -ERANGE (an id at or above CPULIST_MAX_IDS). */
int load_possible_cpus(const char *root, unsigned int *ret_nr);

#endif
