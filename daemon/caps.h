/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The capabilities tierd keeps once it has started, and the code that drops
 * the rest (prctl + capset, no libcap).  tierd runs as uid 0 because the
 * files it writes (sysctls, DAMON's sysfs) are root's and need no
 * capability; what root cannot do by ownership alone is:
 *
 *   CAP_SYS_NICE    move_pages(2) of another process's pages; back up to
 *                   its ticks' priority after resting lower (daemon.c)
 *   CAP_SYS_PTRACE  the ptrace-read access move_pages(2) and
 *                   /proc/PID/{maps,numa_maps,cgroup} need for processes of
 *                   other users
 *   CAP_BPF         load the sampler's BPF programs and maps
 *   CAP_PERFMON     attach them to perf sampling events on every CPU
 *
 * units/tierd.service's CapabilityBoundingSet= is the same list.
 */
#ifndef TIERD_CAPS_H
#define TIERD_CAPS_H

#include <linux/capability.h>
#include <stdint.h>

#define CAPS_BIT(c) (1ull << (c))
#define TIERD_CAPS                                           \
	(CAPS_BIT(CAP_SYS_NICE) | CAPS_BIT(CAP_SYS_PTRACE) | \
	 CAPS_BIT(CAP_BPF) | CAPS_BIT(CAP_PERFMON))

struct caps_state {
	uint64_t effective, permitted, inheritable, bounding, ambient;
};

/*
 * Keep only @keep: the bounding set loses every other capability (when
 * tierd holds CAP_SETPCAP; under the unit systemd has already narrowed it),
 * ambient and inheritable are cleared, permitted and effective become
 * @keep & permitted, and no_new_privs is set.  Returns 0 or -errno; the
 * sets afterwards in *ret when not NULL.
 */
int caps_restrict(uint64_t keep, struct caps_state *ret);

/* The calling thread's sets now. */
int caps_get(struct caps_state *ret);

/* "cap_sys_nice,cap_bpf" (or "none") for a set, into @buf. */
void caps_format(uint64_t set, char *buf, size_t size);

#endif
