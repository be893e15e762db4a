/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a tiering system is to the simulator.  Once per interval the engine
 * shows a system a view: the placement of every range, each node's used
 * bytes, each tenant's fast-tier bytes, and the accesses its sampler model
 * saw during the interval.  The system answers with migration requests;
 * the engine executes them under the machine's cost model, its capacities
 * and the tenants' budgets, in the order given (so demotions that make room
 * come first).  A system never changes the placement itself.
 *
 * Only the oracles read the true accesses (`truth`, `next`): the oracle
 * is the bound a real policy is compared with, oracle-seen the bound of a
 * policy that moves only what its sampler named.
 */
#ifndef TIERD_SIM_SYSTEM_H
#define TIERD_SIM_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

struct sim_rate;

struct sim_setup {
	const struct sim_machine *m;
	uint64_t range_bytes;	/* the unit of placement, 2 MiB by default */
	uint64_t interval_ns;
	uint32_t nr_ranges;
	uint32_t nr_tenants;
	const uint16_t *range_tenant;	/* [nr_ranges] */
	const uint64_t *budget_bytes;	/* [nr_tenants], fast tier; 0 = none */
	uint64_t seed;
	/* tierd's source looks between idle ticks for heat its table lacks,
	 * as its DAMON source (the tracepoint feed's wake) and its hardware
	 * sampling source (the BPF count map, every interval_ms) do. */
	bool source_peeks;
	/* The sampler's view is DAMON's newest aggregation, which a drain
	 * takes whole, not counts that add up until the drain. */
	bool view_newest;
	/* The sampler tells idle memory (sim_view.idle_ms): tierd's source
	 * reports it into the manager's idle set, as its DAMON source does. */
	bool source_idle;
};

struct sim_view {
	uint64_t interval;
	uint64_t now_ns;		/* at the end of the interval */
	const struct sim_setup *s;
	const uint8_t *node;		/* [nr_ranges], index into m->nodes */
	const uint64_t *used_bytes;	/* [m->nr_nodes] */
	const uint64_t *tenant_fast_bytes;	/* [nr_tenants] */
	const uint32_t *seen;		/* [nr_ranges], the sampler's view */
	/* NULL (the sampler cannot tell), or [nr_ranges]: for how long, in
	 * ms, the sampler has seen no access in range r as of the report
	 * @seen holds; 0 where it saw one (or just changed its mind). */
	const uint32_t *idle_ms;
	struct sim_rate *rate;		/* the sampler's, where the system sets it */
	const uint32_t *truth;		/* [nr_ranges], oracle only */
	const uint32_t *next;		/* next interval's, oracle only; may be NULL */
};

#define SIM_MOVE_FAULT 0x1	/* one folio per hint fault, not a batch call */

struct sim_move {
	uint32_t range;
	uint8_t node;			/* target, index into m->nodes */
	uint8_t flags;			/* SIM_MOVE_* */
};

struct sim_system {
	const char *name;
	enum sim_kernel kernel;		/* whose migration cost applies */
	bool all_fast;			/* cost every access at the fast tier */
	bool own_sampler;		/* reads the truth through its own model */
	/* Samples as tierd's source does: DAMON with the attributes tierd
	 * asks for (sim_tierd_damon_spec()). */
	bool tierd_source;
	uint64_t fault_ns;		/* a SIM_MOVE_FAULT's cost per folio */
	int (*init)(void **ret_state, const struct sim_setup *s);
	/*
	 * Write at most @max moves to @moves and their number to @ret_n.
	 * 0, or a negative errno that stops the run.
	 */
	int (*decide)(void *state, const struct sim_view *v,
		      struct sim_move *moves, uint32_t max, uint32_t *ret_n);
	void (*destroy)(void *state);
	/*
	 * The system's own clock, where it has one: @unit ("ticks",
	 * "scan passes") and @units(), how many have passed so far.  The
	 * lab counts the same (tierd's tick lines, mm->numa_scan_seq), and
	 * they do not depend on how fast the machine runs.  NULL: none.
	 */
	const char *unit;
	uint64_t (*units)(void *state);
};

/*
 * The oracle's placement (sys_basic.c), for a system that is the oracle
 * told less: its moves for @v were @heat the next interval's accesses.
 */
struct sim_oracle;
/* @fill: oracle-fill's placement (sys_basic.c). */
int sim_oracle_new(const struct sim_setup *s, bool fill, struct sim_oracle **ret);
void sim_oracle_free(struct sim_oracle *o);
int sim_oracle_place(struct sim_oracle *o, const struct sim_view *v, const uint32_t *heat,
		     struct sim_move *moves, uint32_t max, uint32_t *ret_n);

/* The system called @name, or NULL. */
const struct sim_system *sim_system_find(const char *name);

/* The tierd systems' tierd.yaml (--tierd-conf); NULL: one made from the
 * machine model's tiers and configs/cxl-promotion.yaml's settings. */
extern const char *sim_tierd_conf;

/*
 * The DAMON sampler spec a tierd system's kdamond would run with over
 * @s's footprint: "damon:SAMPLE_US:AGGR_US:MIN_NR:MAX_NR" from the
 * sampling.damon keys of sim_tierd_conf, or tierd's defaults, fitted to
 * the footprint as tierd's DAMON source fits them (core/damon_fit.h).
 * 0, or a negative errno with the config's errors in @err (SIM_ERR_LEN
 * bytes).
 */
int sim_tierd_damon_spec(char *buf, size_t len, const struct sim_setup *s, char *err);

/* Names of all systems, NULL-terminated, for --help. */
extern const struct sim_system *const sim_systems[];

#endif
