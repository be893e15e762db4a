/* SPDX-License-Identifier: GPL-2.0-only */
/* The NUMA balancing baseline's rules, exposed for their tests (numab.c). */
#ifndef TIERD_SIM_NUMAB_H
#define TIERD_SIM_NUMAB_H

#include <stdint.h>

#include "system.h"

/* pgdat's nbp_threshold, nbp_th_start and nbp_th_nr_cand. */
struct numab_th {
	uint64_t th_ms;		/* 0: the default */
	uint64_t start_ms;
	uint64_t nr_cand;
};

/* task_scan_min() for a task of @rss_bytes, in ms. */
uint64_t numab_task_scan_min_ms(uint64_t rss_bytes);

/* task_scan_max() for a task of @rss_bytes (no NUMA group), in ms. */
uint64_t numab_task_scan_max_ms(uint64_t rss_bytes);

/* numa_promotion_adjust_threshold() at @now_ms with @nr_cand candidates. */
void numab_adjust_threshold(struct numab_th *t, uint64_t now_ms,
			    uint64_t nr_cand, uint64_t rate_limit_pages);

extern const struct sim_system sim_sys_numab;

#endif
