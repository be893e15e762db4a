// SPDX-License-Identifier: GPL-2.0-only
/*
 * oracle-seen: the oracle, told of a range only once tierd's source has
 * named it.  It knows the next interval's accesses of every range the
 * sampler has seen at least once since the start, and nothing of the
 * others (heat 0), and places as the oracle does, within the same copy
 * time (sys_basic.c).  Its sampler is tierd's: DAMON with the attributes
 * tierd asks for (sim_tierd_damon_spec()), hardware sampling at the period
 * tierd's CPU budget sets (sampling.cpu_budget_pct of --tierd-conf, or
 * tierd's default), adapted to each interval's cost as the BPF source
 * adapts it at a drain.
 *
 * What it tells: no policy that moves only what its source has named does
 * better on run time (up to the oracle's log2 bucketing of heat).  Where
 * tierd misses the oracle and this misses by about as much, the sampler's
 * coverage is the limit, not the policy, and a larger sampling budget is
 * what helps; where this meets and tierd does not, the policy is.  tierd's
 * fill moves memory no sample named while the memory fits the fast tier,
 * so there tierd can do better than this.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "sys_tierd.h"
#include "system.h"

struct oracle_seen {
	struct sim_oracle *o;
	uint8_t *named;		/* [nr_ranges]: the sampler has seen it */
	uint32_t *heat;		/* [nr_ranges]: the next interval's, where named */
	struct tierd_conf conf;
	struct page_geom geom;
};

static void seen_destroy(void *st)
{
	struct oracle_seen *t = st;

	sim_oracle_free(t->o);
	free(t->named);
	free(t->heat);
	free(t);
}

static int seen_init(void **ret, const struct sim_setup *s)
{
	struct oracle_seen *t = calloc(1, sizeof(*t));
	char err[SIM_ERR_LEN];
	int r;

	if (!t)
		return -ENOMEM;
	t->named = calloc(s->nr_ranges, sizeof(*t->named));
	t->heat = calloc(s->nr_ranges, sizeof(*t->heat));
	r = t->named && t->heat ? sim_oracle_new(s, false, &t->o) : -ENOMEM;
	r = r ?: sim_tierd_conf_read(&t->conf, err);
	if (r == -EINVAL)
		fprintf(stderr, "tierd-sim: oracle-seen: %s\n", err);
	r = r ?: page_geom_set(&t->geom, s->m->base_page_bytes, s->m->thp_bytes);
	if (r) {
		seen_destroy(t);
		return r < 0 ? r : -EINVAL;
	}
	*ret = t;
	return 0;
}

static int seen_decide(void *st, const struct sim_view *v, struct sim_move *moves, uint32_t max,
		       uint32_t *ret_n)
{
	struct oracle_seen *t = st;
	const uint32_t *next = v->next ? v->next : v->truth;

	if (v->rate) {
		v->rate->period = sim_tierd_period(&t->conf, &t->geom, v->rate->period,
						   v->rate->cost_ns, v->s->interval_ns);
		v->rate->cost_ns = 0;
	}
	for (uint32_t r = 0; r < v->s->nr_ranges; r++) {
		t->named[r] |= v->seen[r] != 0;
		t->heat[r] = t->named[r] ? next[r] : 0;
	}
	return sim_oracle_place(t->o, v, t->heat, moves, max, ret_n);
}

const struct sim_system sim_sys_oracle_seen = {
	.name = "oracle-seen", .kernel = SIM_KERNEL_PATCHED, .tierd_source = true,
	.init = seen_init, .decide = seen_decide, .destroy = seen_destroy,
};
