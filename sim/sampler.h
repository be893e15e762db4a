/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sampler models: what a system learns of the true accesses.
 *
 *   exact     every access (what no real sampler sees; the upper bound)
 *   hw:N      hardware sampling, one access in N (PEBS, IBS), each sample
 *             costing CPU (sampler.c); hw, hw:auto: N the system's to set
 *             (struct sim_rate), as tierd sets it within its CPU budget
 *   hint      NUMA hint faults: a window of the address space is made
 *             inaccessible per scan, and the first access to each range in
 *             it faults once
 *   damon     DAMON's regions with split and merge (damon.c)
 */
#ifndef TIERD_SIM_SAMPLER_H
#define TIERD_SIM_SAMPLER_H

#include "engine.h"

int sim_sampler_create(const char *spec, const struct sim_setup *s,
		       struct sim_sampler *out, char *err);
void sim_sampler_destroy(struct sim_sampler *smp);

#endif
