/* SPDX-License-Identifier: GPL-2.0-only */
/* The DAMOS baseline (damos.c). */
#ifndef TIERD_SIM_DAMOS_H
#define TIERD_SIM_DAMOS_H

#include <stdint.h>

#include "system.h"

/* damon_hot_score() with weights 1 and 1: 0..99. */
int damos_hot_score(uint32_t nr_accesses, uint32_t max_nr_accesses,
		    uint32_t age, uint64_t aggr_us);

extern const struct sim_system sim_sys_damos;

#endif
