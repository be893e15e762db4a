/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Access sources: synthetic generators (gen.c) and recorded traces binned
 * into intervals (trace_source.c).  Both produce a sim_source and the
 * tenant layout the engine's setup needs.
 */
#ifndef TIERD_SIM_SOURCE_H
#define TIERD_SIM_SOURCE_H

#include "engine.h"
#include "trace.h"

struct sim_layout {
	uint32_t nr_ranges;
	uint32_t nr_tenants;
	uint16_t *range_tenant;		/* [nr_ranges] */
	uint64_t *budget_bytes;		/* [nr_tenants] */
	char **tenant_names;		/* [nr_tenants] */
};

void sim_layout_free(struct sim_layout *l);

/* splitmix64: the simulator's only random numbers, seeded explicitly. */
static inline uint64_t sim_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform double in [0, 1). */
static inline double sim_rand_unit(uint64_t *state)
{
	return (sim_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * A generator from @spec, "KIND[:key=value,...]" (sim/README.md,
 * "Generators").  0, or a negative errno with the reason in @err.
 */
int sim_gen_create(const char *spec, uint64_t range_bytes, uint64_t interval_ns,
		   uint64_t seed, struct sim_source *src, struct sim_layout *l,
		   char *err);
void sim_gen_destroy(struct sim_source *src);

/*
 * Bin @t into intervals; @t must outlive the source.  @loop_ns 0 replays
 * the trace once; otherwise the trace is replayed end to end, again and
 * again, for @loop_ns of simulated time.
 */
int sim_trace_source(const struct sim_trace *t, uint64_t base_page_bytes,
		     uint64_t range_bytes, uint64_t interval_ns, uint64_t loop_ns,
		     struct sim_source *src, struct sim_layout *l);
void sim_trace_source_destroy(struct sim_source *src);

#endif
