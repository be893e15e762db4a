/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Find a PMU event that samples memory loads with their data address, from
 * the event_source devices in sysfs: Intel PEBS (cpu/mem-loads/, or
 * cpu_core/mem-loads/ on hybrid parts, at PMU_PEBS_LDLAT_CYCLES) or AMD IBS
 * op (ibs_op, with l3missonly where the CPU has it).  @sysfs_root is "/sys"
 * in the daemon and a fixture tree in tests.
 */
#ifndef TIERD_SYS_PMU_H
#define TIERD_SYS_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The PEBS event's load-latency threshold (ldlat, core cycles): a load
 * counts towards the period, and can be sampled, only when it took longer.
 * sysfs's mem-loads says ldlat=3, which takes nearly every load, L1 hits
 * first; a hit in a cache says nothing of where its page should live.  L1
 * and L2 hits take a few to a few tens of cycles, loads the memory serves
 * hundreds; 128 is Intel's own step for such loads
 * (MEM_TRANS_RETIRED.LOAD_LATENCY_GT_128), and leaves most L3 hits out.
 */
#define PMU_PEBS_LDLAT_CYCLES 128

enum pmu_kind {
	PMU_PEBS_LDLAT,		/* Intel mem-loads: PEBS load latency */
	PMU_IBS_OP,		/* AMD IBS op */
};

struct pmu_event {
	char desc[64];		/* "PEBS cpu/mem-loads,ldlat=128/", "AMD IBS op" */
	enum pmu_kind kind;
	uint32_t type;		/* perf_event_attr.type */
	uint64_t config, config1, config2;
	int precise_ip;		/* the highest to try; the loader steps down */
	int max_precise;	/* PEBS: caps/max_precise; -1 when sysfs does not say */
	bool mem_loads_aux;	/* PEBS: events/mem-loads-aux exists (SPR, hybrid) */
	uint64_t config_mask;	/* IBS op: the optional config bits it has format files for */
	char cpus_path[96];	/* hybrid: "bus/event_source/devices/cpu_core/cpus"; "" when
				 * the PMU covers every CPU */
};

/*
 * Returns 0 with @ret filled, -ENODEV when this machine has neither (a VM, a
 * container, an older CPU), or another -errno when sysfs is unreadable or the
 * event text is malformed; @why says which in one line.
 */
int pmu_find_mem_sampler(const char *sysfs_root, struct pmu_event *ret, char *why,
			 size_t why_len);

/*
 * Put the terms of an event string ("event=0xcd,umask=0x1,ldlat=3") into
 * @ev's config words using the PMU's format files ("config:0-7",
 * "config1:0-15") under @pmu_dir/format/; a term replaces what its field
 * held, so a later one overrides.  0 or -EINVAL (unknown term, bad format),
 * -errno when a format file cannot be read.
 */
int pmu_parse_event(const char *pmu_dir, const char *terms, struct pmu_event *ev);

#endif
