/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The perf_event_attr of a memory-sampling event (pmu.h) as Linux 6.12 takes
 * it: the rules of perf_event_open() (kernel/events/core.c), of the x86 core
 * PMU and PEBS (arch/x86/events/core.c, intel/core.c, intel/ds.c) and of IBS
 * (arch/x86/events/amd/ibs.c), each cited where pmu_attr.c applies it.  Pure:
 * no syscalls, so every rule is unit-tested without the hardware.
 */
#ifndef TIERD_SYS_PMU_ATTR_H
#define TIERD_SYS_PMU_ATTR_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu.h"

/* Bounds of the sample period the kernel honours for @ev's kind. */
#define PMU_PEBS_MIN_PERIOD 128ull		/* x86 limit_period(): glc/hsw/bdw */
#define PMU_IBS_MIN_PERIOD 0x10ull		/* perf_ibs_init(), perf_ibs_set_period() */
#define PMU_IBS_OP_MAX_PERIOD (0xffffull << 4)	/* IBS_OP_MAX_CNT << 4 */

/*
 * The period nearest @want that @ev takes: an IBS op period is a multiple of
 * 16 in [16, 0xffff0]; a PEBS period is at least 128.
 */
uint64_t pmu_attr_period(const struct pmu_event *ev, uint64_t want);

/*
 * Fill @ret to sample @ev every @period events, counting user and (where the
 * PMU cannot exclude it) kernel loads, with the data address
 * (PERF_SAMPLE_ADDR) and nothing else.  0, or -EINVAL with @why naming the
 * kernel rule the event or the period breaks, e.g. "ibs_op: sample period
 * 10007 has its low 4 bits set (perf_ibs_init)".
 */
int pmu_attr_build(const struct pmu_event *ev, uint64_t period, struct perf_event_attr *ret,
		   char *why, size_t why_len);

#endif
