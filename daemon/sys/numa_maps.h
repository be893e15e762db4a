/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How much memory a process holds on one NUMA node, from
 * PROC_ROOT/PID/numa_maps: the "N<node>=<pages>" of every mapping, each in
 * that mapping's kernelpagesize_kB.  Reading it walks the process's page
 * tables (the kernel's show_numa_map()): tens of milliseconds for tens of
 * GiB, so callers pace it (core/gpu_usage.h).
 */
#ifndef TIERD_SYS_NUMA_MAPS_H
#define TIERD_SYS_NUMA_MAPS_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Bytes @pid holds on node @node into *@ret.  0, -ESRCH when the process
 * is gone, -EINVAL for a line that does not parse, or another negative
 * errno (-EACCES without ptrace-read access to it).
 */
int numa_maps_node_bytes(const char *proc_root, pid_t pid, int node, uint64_t *ret);
/* The same for every node in @mask (bit N: node N, up to node 63). */
int numa_maps_nodes_bytes(const char *proc_root, pid_t pid, uint64_t mask, uint64_t *ret);

#endif
