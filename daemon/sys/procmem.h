/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A process's memory: how much is resident (/proc/PID/statm, cheap), and
 * how much of it sits on given nodes (/proc/PID/numa_maps, which walks the
 * process's page tables: its cost grows with the process's size, so
 * callers pace it; see core/watch.h).  Both take the procfs root, so tests
 * read fixture trees.  numa_maps needs the ptrace-read access that
 * CAP_SYS_PTRACE gives for processes of other users.
 */
#ifndef TIERD_SYS_PROCMEM_H
#define TIERD_SYS_PROCMEM_H

#include <stdint.h>
#include <sys/types.h>

#include "idle.h"

/* Resident bytes of @pid: statm's second field times @page_size.  0,
 * -ESRCH when the process is gone, -EINVAL for a kernel thread (no memory
 * map), or another negative errno. */
int proc_rss_bytes(const char *proc_root, pid_t pid, uint64_t page_size, uint64_t *ret);

/* Bytes of @pid's mappings on the nodes of @node_mask (bit N: node id N),
 * from the N<id>=<pages> fields of numa_maps times each mapping's
 * kernelpagesize_kB.  0, -ESRCH when the process is gone, or another
 * negative errno. */
int proc_node_bytes(const char *proc_root, pid_t pid, uint64_t node_mask, uint64_t *ret);

/*
 * @pid's mappings that hold its data, from /proc/PID/maps, added to @s as
 * ranges (since_ns 0) for the fill pass (core/candidates.h): readable and
 * not executable (program and library text is shared, small, and the
 * promotion path may refuse it), not the kernel's [vdso], [vvar] and
 * [vsyscall].  0; -ESRCH when the process is gone; -EPROTO for a line
 * that does not parse; -ENOSPC when @s is full (the mappings before
 * stay); another negative errno.
 */
int proc_data_maps(const char *proc_root, pid_t pid, struct idle_set *s);

#endif
