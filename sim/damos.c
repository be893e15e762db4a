// SPDX-License-Identifier: GPL-2.0-only
/*
 * DAMOS migrate_hot / migrate_cold as 6.12 runs them.  In 6.12 both
 * actions exist for physical address monitoring only (mm/damon/paddr.c,
 * damon_pa_migrate()), so the model monitors each node's physical ranges,
 * not processes: one DAMON context (damon.c) over the slow node's slots
 * with a migrate_hot scheme to the fast node, one over the fast node's
 * slots with a migrate_cold scheme to the slow node.  A range that moves
 * takes the first free slot of its new node.
 *
 * At each aggregation, after the merge (kdamond_fn() -> kdamond_apply_schemes()):
 *  - a region is a target when its nr_accesses and age fit the scheme's
 *    access pattern (__damos_valid_target(): hot >= 1 access, any age;
 *    cold 0 accesses for at least DAMOS_COLD_MIN_AGE aggregations);
 *  - its score is damon_hot_score() (mm/damon/ops-common.c: frequency
 *    subscore nr_accesses x 100 / max, age subscore from log2 of the age in
 *    seconds, negative when not accessed, weights 1 and 1, scaled to
 *    DAMOS_MAX_SCORE 99) or 99 minus it for cold (damon_cold_score());
 *  - damos_adjust_quota() picks the lowest score whose regions, best
 *    first, fill the size quota, and damos_apply_scheme() applies the
 *    action to regions at or above it in address order, cutting the last
 *    to what the quota has left; the quota resets every reset_interval
 *    (1 s);
 *  - the cold scheme is active only while the fast node's free memory is
 *    under DAMOS_COLD_FREE_PERMIL (DAMOS watermarks on free_mem_rate).
 * Quotas (explicit, as the sysfs interface sets them): 1 GiB/s each.
 * DAMON's own sampling cost is the model's (damon.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "damon.h"
#include "damos.h"

#define DAMOS_QUOTA_BYTES (1ull << 30)	/* per reset interval */
#define DAMOS_RESET_MS 1000
#define DAMOS_COLD_MIN_AGE 10		/* aggregations: 1 s */
#define DAMOS_COLD_FREE_PERMIL 50
#define DAMOS_MAX_SCORE 99
#define DAMON_MAX_SUBSCORE 100
#define DAMON_MAX_AGE_IN_LOG 32

int damos_hot_score(uint32_t nr_accesses, uint32_t max_nr_accesses,
		    uint32_t age, uint64_t aggr_us)
{
	int freq = nr_accesses * DAMON_MAX_SUBSCORE / max_nr_accesses;
	uint64_t age_s = (uint64_t)age * aggr_us / 1000000;
	int age_log = 0, age_sub, hot;

	for (; age_log < DAMON_MAX_AGE_IN_LOG && age_s; age_log++, age_s >>= 1)
		;
	if (!freq)
		age_log = -age_log;
	age_log += DAMON_MAX_AGE_IN_LOG;
	age_sub = age_log * DAMON_MAX_SUBSCORE / DAMON_MAX_AGE_IN_LOG / 2;
	hot = (freq + age_sub) / 2;
	hot = hot * DAMOS_MAX_SCORE / DAMON_MAX_SUBSCORE;
	return hot < 0 ? 0 : hot > DAMOS_MAX_SCORE ? DAMOS_MAX_SCORE : hot;
}

struct ctx {
	struct damon_model d;
	int node;			/* monitored */
	int target;			/* where the scheme moves to */
	bool hot;
	uint32_t nr_slots;
	uint32_t *slot_range;		/* [nr_slots], UINT32_MAX empty */
	uint32_t *acc;			/* [nr_slots] */
	uint32_t *free_slots, nr_free;	/* a stack, lowest slot on top */
	uint64_t charged, charge_from_ms;
	bool active;
};

struct damos {
	const struct sim_setup *s;
	struct ctx ctx[2];		/* 0: hot on slow, 1: cold on fast */
	uint32_t *range_slot;		/* [nr_ranges] */
	uint8_t *range_node;		/* what the slots say */
	uint8_t *pending;		/* chosen in this interval */
	bool synced;
	struct sim_move *moves;
	uint32_t nr_moves, max_moves;
	uint64_t now_ms, quota_ranges;
};

struct apply_arg {
	struct damos *ds;
	struct ctx *c;
	uint8_t *pending;
};

static bool valid_target(const struct ctx *c, const struct damon_region *r)
{
	if (c->hot)
		return r->nr_accesses >= 1;
	return r->nr_accesses == 0 && r->age >= DAMOS_COLD_MIN_AGE;
}

static int score(const struct ctx *c, const struct damon_region *r)
{
	int hot = damos_hot_score(r->nr_accesses, c->d.max_accesses, r->age,
				  c->d.aggr_ns / 1000);

	return c->hot ? hot : DAMOS_MAX_SCORE - hot;
}

/* damos_adjust_quota(): the lowest score that fills @left, best first. */
static int min_score(const struct ctx *c, uint64_t left)
{
	uint64_t hist[DAMOS_MAX_SCORE + 1] = { 0 }, sum = 0;
	int sc, max = 0;

	for (uint32_t i = 0; i < c->d.nr; i++) {
		const struct damon_region *r = &c->d.regions[i];

		if (!valid_target(c, r))
			continue;
		sc = score(c, r);
		hist[sc] += r->end - r->start;
		if (sc > max)
			max = sc;
	}
	for (sc = max;; sc--) {
		sum += hist[sc];
		if (sum >= left || !sc)
			return sc;
	}
}

/* kdamond_apply_schemes() for one context after its merge. */
static void apply(void *arg, struct damon_model *d)
{
	struct apply_arg *a = arg;
	struct damos *ds = a->ds;
	struct ctx *c = a->c;
	uint64_t left;
	int ms;

	if (!c->active)
		return;
	/* damos_adjust_quota(): the first window opens at the first apply. */
	if (c->charge_from_ms == UINT64_MAX)
		c->charge_from_ms = ds->now_ms;
	if (ds->now_ms - c->charge_from_ms >= DAMOS_RESET_MS) {
		c->charged = 0;
		c->charge_from_ms = ds->now_ms;
	}
	left = ds->quota_ranges - c->charged;
	if (!left)
		return;
	ms = min_score(c, left);
	for (uint32_t i = 0; i < d->nr && left; i++) {
		const struct damon_region *r = &d->regions[i];
		uint64_t sz = r->end - r->start;

		if (!valid_target(c, r) || score(c, r) < ms)
			continue;
		sz = sz < left ? sz : left;
		for (uint32_t k = r->start; k < r->start + sz; k++) {
			uint32_t rg = c->slot_range[k];

			if (rg == UINT32_MAX || a->pending[rg] ||
			    ds->nr_moves == ds->max_moves)
				continue;
			/* The folio leaves this node's physical range. */
			a->pending[rg] = 1;
			c->slot_range[k] = UINT32_MAX;
			c->acc[k] = 0;
			c->free_slots[c->nr_free++] = k;
			ds->range_slot[rg] = UINT32_MAX;
			ds->moves[ds->nr_moves++] = (struct sim_move){
				.range = rg, .node = c->target };
		}
		c->charged += sz;
		left -= sz;
	}
}

static struct ctx *ctx_of(struct damos *ds, int node)
{
	for (int i = 0; i < 2; i++)
		if (ds->ctx[i].node == node)
			return &ds->ctx[i];
	return NULL;
}

static void slot_put(struct damos *ds, uint32_t r, int node)
{
	struct ctx *c = ctx_of(ds, node);
	uint32_t k;

	ds->range_node[r] = node;
	ds->range_slot[r] = UINT32_MAX - 1;	/* on a node no context watches */
	if (!c || !c->nr_free)
		return;
	k = c->free_slots[--c->nr_free];
	c->slot_range[k] = r;
	ds->range_slot[r] = k;
}

/* Follow the engine's placement: a moved range takes a new slot. */
static void sync_slots(struct damos *ds, const struct sim_view *v)
{
	for (uint32_t r = 0; r < v->s->nr_ranges; r++) {
		struct ctx *c;

		if (ds->synced && ds->range_node[r] == v->node[r] &&
		    ds->range_slot[r] != UINT32_MAX)
			continue;
		c = ds->synced ? ctx_of(ds, ds->range_node[r]) : NULL;
		if (c && ds->range_slot[r] < c->nr_slots &&
		    c->slot_range[ds->range_slot[r]] == r) {
			c->slot_range[ds->range_slot[r]] = UINT32_MAX;
			c->free_slots[c->nr_free++] = ds->range_slot[r];
		}
		slot_put(ds, r, v->node[r]);
	}
	ds->synced = true;
}

static void damos_destroy(void *st)
{
	struct damos *ds = st;

	for (int i = 0; i < 2; i++) {
		free(ds->ctx[i].d.regions);
		free(ds->ctx[i].slot_range);
		free(ds->ctx[i].acc);
		free(ds->ctx[i].free_slots);
	}
	free(ds->range_slot);
	free(ds->range_node);
	free(ds->pending);
	free(ds);
}

static int ctx_init(struct ctx *c, const struct sim_setup *s, int node,
		    int target, bool hot)
{
	static const uint64_t attrs[4] = { 5000, 100000, 10, 1000 };

	c->node = node;
	c->target = target;
	c->hot = hot;
	c->nr_slots = sim_node_ranges(s, node);
	c->slot_range = malloc(c->nr_slots * sizeof(*c->slot_range));
	c->acc = calloc(c->nr_slots, sizeof(*c->acc));
	c->free_slots = malloc(c->nr_slots * sizeof(*c->free_slots));
	if (!c->slot_range || !c->acc || !c->free_slots || c->nr_slots < 3)
		return c->nr_slots < 3 ? -EINVAL : -ENOMEM;
	for (uint32_t k = 0; k < c->nr_slots; k++) {
		c->slot_range[k] = UINT32_MAX;
		c->free_slots[k] = c->nr_slots - 1 - k;
	}
	c->nr_free = c->nr_slots;
	c->charge_from_ms = UINT64_MAX;
	return damon_model_init(&c->d, s, c->nr_slots, NULL, attrs);
}

static int damos_init(void **ret, const struct sim_setup *s)
{
	struct damos *ds = calloc(1, sizeof(*ds));
	int fast = sim_machine_fast_node(s->m), slow = -1, r;

	if (!ds)
		return -ENOMEM;
	for (int i = 0; i < s->m->nr_nodes; i++)
		if (s->m->nodes[i].tier > 0 && slow < 0)
			slow = i;
	ds->s = s;
	ds->quota_ranges = DAMOS_QUOTA_BYTES / s->range_bytes;
	ds->range_slot = calloc(s->nr_ranges, sizeof(*ds->range_slot));
	ds->range_node = calloc(s->nr_ranges, 1);
	ds->pending = calloc(s->nr_ranges, 1);
	r = !ds->range_slot || !ds->range_node || !ds->pending ? -ENOMEM :
	    slow < 0 ? -EINVAL : 0;
	if (!r)
		r = ctx_init(&ds->ctx[0], s, slow, fast, true);
	if (!r)
		r = ctx_init(&ds->ctx[1], s, fast, slow, false);
	if (r) {
		damos_destroy(ds);
		return r;
	}
	*ret = ds;
	return 0;
}

static int damos_decide(void *st, const struct sim_view *v,
			struct sim_move *moves, uint32_t max, uint32_t *ret_n)
{
	struct damos *ds = st;
	const struct sim_node *fast = &v->s->m->nodes[ds->ctx[1].node];
	uint64_t aggr_ms = ds->ctx[0].d.aggr_ns / 1000000;
	uint64_t aggrs = v->s->interval_ns / ds->ctx[0].d.aggr_ns, cost = 0;

	sync_slots(ds, v);
	memset(ds->pending, 0, v->s->nr_ranges);
	ds->ctx[0].active = true;
	ds->ctx[1].active = (fast->capacity_bytes - v->used_bytes[ds->ctx[1].node]) *
				    1000 < fast->capacity_bytes * DAMOS_COLD_FREE_PERMIL;
	for (int i = 0; i < 2; i++) {
		struct ctx *c = &ds->ctx[i];

		for (uint32_t k = 0; k < c->nr_slots; k++)
			c->acc[k] = c->slot_range[k] == UINT32_MAX ? 0 :
				    v->truth[c->slot_range[k]];
	}
	ds->moves = moves;
	ds->nr_moves = 0;
	ds->max_moves = max;
	for (uint64_t a = 0; a < (aggrs ? aggrs : 1); a++) {
		ds->now_ms = v->interval * (v->s->interval_ns / 1000000) + (a + 1) * aggr_ms;
		/* Cold first: demotions make the room promotions need. */
		for (int i = 1; i >= 0; i--) {
			struct apply_arg arg = { ds, &ds->ctx[i], ds->pending };

			damon_model_aggregate(&ds->ctx[i].d, ds->ctx[i].acc, &cost,
					      apply, &arg);
		}
	}
	*ret_n = ds->nr_moves;
	return 0;
}

const struct sim_system sim_sys_damos = {
	.name = "damos", .own_sampler = true, .init = damos_init,
	.decide = damos_decide, .destroy = damos_destroy,
};
