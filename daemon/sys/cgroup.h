/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup v2 readers: which cgroup a process is in, and how much memory a
 * cgroup holds on each NUMA node.  Both take the directory to read under
 * ("/proc" and "/sys/fs/cgroup" on a real system), so tests read fixture
 * trees.
 */
#ifndef TIERD_SYS_CGROUP_H
#define TIERD_SYS_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "topo_read.h"

/*
 * The cgroup v2 path of @pid ("/user.slice/app.service"), from the "0::"
 * line of PROC_ROOT/PID/cgroup.  Returns 0, -ESRCH when the process is gone,
 * -ENOENT when the file has no v2 line, -ENAMETOOLONG when @len is too small,
 * or another negative errno.
 */
int cg_path_of_pid(const char *proc_root, int pid, char *buf, size_t len);

struct cg_numa_stat {
	int nr_nodes;			/* highest node id seen + 1 */
	uint64_t anon[TOPO_MAX_NODES];	/* bytes */
	uint64_t file[TOPO_MAX_NODES];	/* bytes, shmem and tmpfs included */
};

/*
 * Parse CGROUP_ROOT/PATH/memory.numa_stat.  Node ids at or above
 * TOPO_MAX_NODES are ignored.  Returns 0, -ENOENT (no such cgroup, or the
 * memory controller is not enabled for it), -EINVAL (no anon or file line),
 * or another negative errno.
 */
int cg_read_numa_stat(const char *cgroup_root, const char *path, struct cg_numa_stat *ret);

/* Bytes the cgroup holds on node @id (anon + file), 0 for unknown nodes. */
uint64_t cg_node_bytes(const struct cg_numa_stat *s, int id);

/* Bytes it holds on the fast tier's nodes (topo_fast_tier(): GPU nodes
 * are never part of it; policy_cgroup.fast_bytes). */
uint64_t cg_fast_bytes(const struct cg_numa_stat *s, const struct topology *topo);

/* Bytes it holds on GPU nodes (for a rule that names this cgroup). */
uint64_t cg_gpu_bytes(const struct cg_numa_stat *s, const struct topology *topo);

#endif
