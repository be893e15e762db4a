/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The "threads" pipeline module: the kernel knobs tierd owns
 * (sys/knobs.c) and the copy-thread controller (core/copythreads.c).
 *
 * start: recover knobs a crashed run left behind; detect NUMA balancing and
 *        reclaim-time demotion and, with kernel.numa_balancing: takeover,
 *        turn NUMA balancing off (restored on exit); say once when the
 *        kernel lacks the copy knobs.
 * tick:  PSI cpu pressure and the idle CPUs of the nodes that have CPUs in,
 *        migration throughput since the last tick (d->stats.migrate_bytes_total
 *        and migrate_ns_total, filled by the migrate module) in; the
 *        controller's thread count out to vm.migrate_copy_*; an
 *        administrator's change to one of them makes tierd leave them alone.
 * restore_knobs: every knob still holding tierd's value gets its original.
 * No knob is written under --no-knobs or in a dry run.
 */
#ifndef TIERD_THREADS_H
#define TIERD_THREADS_H

#include "daemon.h"

extern const struct tierd_module threads_module;

#endif
