/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the systems built with tierd's code share (sys_tierd.c): its
 * config and its hardware sampler's period.
 */
#ifndef TIERD_SIM_SYS_TIERD_H
#define TIERD_SIM_SYS_TIERD_H

#include <stdint.h>

#include "conf.h"
#include "page_geom.h"

/* sim_tierd_conf's config, or tierd's defaults without one; 0, or
 * -EINVAL with the config's errors in @err (SIM_ERR_LEN bytes). */
int sim_tierd_conf_read(struct tierd_conf *c, char *err);

/*
 * The hardware sampler's next period after @period cost @cost_ns over
 * @interval_ns, as tierd's BPF source sets it at a drain (its
 * adapt_period(): core/sample_period.h within the source's bounds and
 * @c's sampling.cpu_budget_pct); @period when @interval_ns is 0.
 */
uint64_t sim_tierd_period(const struct tierd_conf *c, const struct page_geom *g, uint64_t period,
			  uint64_t cost_ns, uint64_t interval_ns);

#endif
