// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's clock and bill (engine.h).  One interval:
 *
 *   1. bill   latency x accesses at each range's node, and the same
 *             accesses at the fast tier for the all-DRAM reference;
 *   2. score  how much of this interval's hot set sits on the fast tier;
 *   3. sample what the system's sampler model would have seen;
 *   4. decide the system's moves;
 *   5. move   execute them under cost, capacity, budget and time;
 *   6. check  recount the placement: no page lost, no node over capacity,
 *             no tenant over budget.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define ENGINE_HOT_COVER 0.8

struct engine {
	const struct sim_run *run;
	const struct sim_setup *s;
	const struct sim_machine *m;
	uint8_t *node, *moved;
	uint32_t *acc, *next, *seen;
	struct sim_move *moves;
	uint32_t max_moves;
	uint64_t used[SIM_MAX_NODES];
	uint64_t *tenant_fast;
	int fast;		/* the fastest node: the all-DRAM reference */
	uint32_t hot_t;		/* the interval's hot set: acc >= hot_t; 0 none */
	uint64_t folios_per_range;
};

uint32_t sim_node_ranges(const struct sim_setup *s, int node)
{
	return s->m->nodes[node].capacity_bytes / s->range_bytes;
}

uint32_t sim_hot_threshold(const uint32_t *acc, uint32_t n, uint32_t max_count,
			   double cover)
{
	uint64_t cnt[33] = { 0 }, sum[33] = { 0 }, total = 0, got = 0, have = 0;

	for (uint32_t r = 0; r < n; r++) {
		int b = acc[r] ? 32 - __builtin_clz(acc[r]) : 0;

		cnt[b]++;
		sum[b] += acc[r];
		total += acc[r];
	}
	if (!total)
		return 0;
	for (int b = 32; b >= 1; b--) {
		if (!cnt[b])
			continue;
		if (have && have + cnt[b] > max_count)
			return 1u << b;
		have += cnt[b];
		got += sum[b];
		if (got >= cover * total || b == 1)
			return 1u << (b - 1);
	}
	return 1;
}

static bool on_fast_tier(const struct engine *e, int node)
{
	return e->m->nodes[node].tier == 0;
}

/* The share of a node with CPUs that first touch leaves free: the
 * kernel's low watermark, about 0.15% of a large node at 6.12's defaults
 * (min_free_kbytes at its 256 MiB cap, watermark_scale_factor's 0.1%),
 * rounded up. */
#define TOUCH_FREE 0.002

static void place(struct engine *e, uint32_t r, int n)
{
	e->node[r] = n;
	e->used[n] += e->s->range_bytes;
	if (on_fast_tier(e, n))
		e->tenant_fast[e->s->range_tenant[r]] += e->s->range_bytes;
}

/*
 * The nodes in the order the footprint fills them, into @order: the
 * slowest tier first; or with run->start_touch, first touch's: the nodes
 * with CPUs (where the threads run) by tier, then the CPU-less ones by
 * tier.  Returns how many.
 */
static int fill_order(const struct engine *e, int *order)
{
	bool touch = e->run->start_touch;
	int k = 0;

	for (int pass = 0; pass < (touch ? 2 : 1); pass++)
		for (int t = 0; t <= 7; t++)
			for (int n = 0; n < e->m->nr_nodes; n++) {
				const struct sim_node *nd = &e->m->nodes[n];

				if (nd->tier == (touch ? t : 7 - t) &&
				    (!touch || nd->cpuless == (pass == 1)))
					order[k++] = n;
			}
	return k;
}

/* Node @n's room for the footprint's start, in ranges. */
static uint32_t start_room(const struct engine *e, int n)
{
	uint64_t cap = e->m->nodes[n].capacity_bytes;

	if (e->run->start_touch && !e->m->nodes[n].cpuless)
		cap -= (uint64_t)(cap * TOUCH_FREE);
	return cap / e->s->range_bytes;
}

/*
 * The ranges in the order they are first touched, into @order: address
 * order; with run->start_touch and tenants, the tenants in turn (they
 * start together), each in address order.
 */
static int touch_order(const struct engine *e, uint32_t *order)
{
	const struct sim_setup *s = e->s;
	uint32_t *next, k = 0;

	if (!e->run->start_touch || s->nr_tenants == 1) {
		for (uint32_t r = 0; r < s->nr_ranges; r++)
			order[r] = r;
		return 0;
	}
	next = calloc(s->nr_tenants, sizeof(*next));	/* where each resumes */
	if (!next)
		return -ENOMEM;
	while (k < s->nr_ranges)
		for (uint32_t t = 0; t < s->nr_tenants; t++) {
			uint32_t r = next[t];

			while (r < s->nr_ranges && s->range_tenant[r] != t)
				r++;
			if (r < s->nr_ranges)
				order[k++] = r;
			next[t] = r + 1;
		}
	free(next);
	return 0;
}

static int place_initial(struct engine *e)
{
	const struct sim_setup *s = e->s;
	uint32_t *order = malloc(s->nr_ranges * sizeof(*order)), k = 0;
	int nodes[SIM_MAX_NODES], nr = fill_order(e, nodes);

	if (!order || touch_order(e, order)) {
		free(order);
		return -ENOMEM;
	}
	for (int i = 0; i < nr; i++)
		for (uint32_t room = start_room(e, nodes[i]); room && k < s->nr_ranges; room--)
			place(e, order[k++], nodes[i]);
	free(order);
	return k < s->nr_ranges ? -ENOSPC : 0;
}

static void bill(struct engine *e, struct sim_result *res)
{
	const struct sim_node *nodes = e->m->nodes;
	uint64_t fast_lat = nodes[e->fast].latency_ns;

	for (uint32_t r = 0; r < e->s->nr_ranges; r++) {
		uint32_t a = e->acc[r];

		if (!a)
			continue;
		res->accesses += a;
		res->dram_ns += (double)a * fast_lat;
		res->access_ns += (double)a *
			(e->run->sys->all_fast ? fast_lat :
						 nodes[e->node[r]].latency_ns);
	}
}

static void score(struct engine *e, void *st, struct sim_result *res, uint64_t now_ns)
{
	const struct sim_system *sys = e->run->sys;
	uint32_t fast_ranges = 0, t, hot = 0, hot_fast = 0;

	for (int n = 0; n < e->m->nr_nodes; n++)
		if (on_fast_tier(e, n))
			fast_ranges += sim_node_ranges(e->s, n);
	t = sim_hot_threshold(e->acc, e->s->nr_ranges, fast_ranges,
			      ENGINE_HOT_COVER);
	e->hot_t = t;
	if (!t) {
		sim_series_add(res->series, -1);
		return;
	}
	for (uint32_t r = 0; r < e->s->nr_ranges; r++) {
		if (e->acc[r] < t)
			continue;
		hot++;
		hot_fast += e->run->sys->all_fast || on_fast_tier(e, e->node[r]);
	}
	sim_series_add(res->series, (double)hot_fast / hot);
	if (res->t50_ns < 0 && 2 * hot_fast >= hot) {
		res->t50_ns = now_ns;
		res->u50 = sys->units ? (int64_t)sys->units(st) : -1;
	}
	if (res->t90_ns < 0 && 10 * (uint64_t)hot_fast >= 9 * (uint64_t)hot) {
		res->t90_ns = now_ns;
		res->u90 = sys->units ? (int64_t)sys->units(st) : -1;
	}
}

/* Whether @mv may run: a real move, room on the target, budget left. */
static bool move_allowed(const struct engine *e, const struct sim_move *mv)
{
	const struct sim_setup *s = e->s;
	uint32_t ten;

	if (mv->range >= s->nr_ranges || mv->node >= e->m->nr_nodes ||
	    e->node[mv->range] == mv->node)
		return false;
	if (e->used[mv->node] + s->range_bytes >
	    e->m->nodes[mv->node].capacity_bytes)
		return false;
	ten = s->range_tenant[mv->range];
	if (on_fast_tier(e, mv->node) && !on_fast_tier(e, e->node[mv->range]) &&
	    s->budget_bytes[ten] &&
	    e->tenant_fast[ten] + s->range_bytes > s->budget_bytes[ten])
		return false;
	return true;
}

static void apply_move(struct engine *e, const struct sim_move *mv,
		       struct sim_result *res)
{
	const struct sim_setup *s = e->s;
	uint32_t r = mv->range, ten = s->range_tenant[r];
	int from = e->node[r];

	e->used[from] -= s->range_bytes;
	e->used[mv->node] += s->range_bytes;
	if (on_fast_tier(e, from))
		e->tenant_fast[ten] -= s->range_bytes;
	if (on_fast_tier(e, mv->node))
		e->tenant_fast[ten] += s->range_bytes;
	e->node[r] = mv->node;
	res->bytes_migrated += s->range_bytes;
	if (e->moved[r])
		res->bytes_pingpong += s->range_bytes;
	if (e->moved[r] < UINT8_MAX)
		e->moved[r]++;
}

/*
 * Consecutive moves of one tenant to one node make one move_pages() call.
 * The interval's copy time is its length: what does not fit is refused and
 * the system may ask again.
 */
static void execute(struct engine *e, uint32_t n, struct sim_result *res)
{
	const struct sim_migcost *c = &e->m->mig[e->run->sys->kernel];
	uint64_t per_range = e->folios_per_range * c->folio_ns +
			     (uint64_t)((double)e->s->range_bytes / c->copy_gbps);
	uint64_t spent = 0;
	int last_ten = -1, last_node = -1;

	for (uint32_t i = 0; i < n; i++) {
		const struct sim_move *mv = &e->moves[i];
		uint64_t cost = per_range;
		int ten;

		if (!move_allowed(e, mv)) {
			res->moves_refused++;
			continue;
		}
		ten = e->s->range_tenant[mv->range];
		if (mv->flags & SIM_MOVE_FAULT) {
			/* migrate_misplaced_folio(): a fault per folio. */
			cost += e->folios_per_range * e->run->sys->fault_ns;
			last_ten = -1;
		} else if (ten != last_ten || mv->node != last_node) {
			cost += c->call_ns;
		}
		if (spent + cost > e->s->interval_ns) {
			res->moves_refused++;
			continue;
		}
		spent += cost;
		if (!(mv->flags & SIM_MOVE_FAULT)) {
			last_ten = ten;
			last_node = mv->node;
		}
		apply_move(e, mv, res);
	}
	res->stall_ns += spent;
}

static void dump_placement(const struct engine *e, void *st, uint64_t end_ns)
{
	const struct sim_system *sys = e->run->sys;
	FILE *f = e->run->placement;
	uint32_t n = e->s->nr_ranges;

	fprintf(f, "%s %.6f ", e->run->sys->name, end_ns / 1e9);
	for (uint32_t r = 0; r < n; r++)
		fputc('0' + e->node[r], f);
	fputc(' ', f);
	for (uint32_t r = 0; r < n; r++)
		fputc(e->hot_t && e->acc[r] >= e->hot_t ? '1' : '0', f);
	if (sys->units)
		fprintf(f, " %llu\n", (unsigned long long)sys->units(st));
	else
		fputs(" -\n", f);
}

static void check(struct engine *e, struct sim_result *res)
{
	const struct sim_setup *s = e->s;
	uint64_t used[SIM_MAX_NODES] = { 0 }, total = 0;

	for (uint32_t r = 0; r < s->nr_ranges; r++)
		used[e->node[r]] += s->range_bytes;
	for (int n = 0; n < e->m->nr_nodes; n++) {
		total += used[n];
		if (used[n] > e->m->nodes[n].capacity_bytes)
			res->over_capacity = true;
		if (used[n] != e->used[n])
			res->pages_lost = true;
	}
	if (total != res->footprint_bytes)
		res->pages_lost = true;
	for (uint32_t t = 0; t < s->nr_tenants; t++) {
		struct sim_tenant_result *tr = &res->tenants[t];

		if (e->tenant_fast[t] > tr->max_fast_bytes)
			tr->max_fast_bytes = e->tenant_fast[t];
		/* A budget bounds what moves add, not where pages start. */
		if (tr->budget_bytes && e->tenant_fast[t] > tr->budget_bytes &&
		    e->tenant_fast[t] > tr->initial_fast_bytes)
			res->over_budget = true;
	}
}

static void engine_free(struct engine *e)
{
	free(e->node);
	free(e->moved);
	free(e->acc);
	free(e->next);
	free(e->seen);
	free(e->moves);
	free(e->tenant_fast);
}

static int engine_init(struct engine *e, const struct sim_run *run,
		       struct sim_result *res)
{
	const struct sim_setup *s = run->s;
	uint32_t n = s->nr_ranges;
	uint64_t folio = s->m->thp_bytes && s->m->thp_bytes <= s->range_bytes ?
				 s->m->thp_bytes : s->m->base_page_bytes;
	int r;

	memset(e, 0, sizeof(*e));
	memset(res, 0, sizeof(*res));
	e->run = run;
	e->s = s;
	e->m = s->m;
	e->fast = sim_machine_fast_node(s->m);
	e->folios_per_range = s->range_bytes / folio;
	e->max_moves = n;
	e->node = calloc(n, 1);
	e->moved = calloc(n, 1);
	e->acc = calloc(n, sizeof(*e->acc));
	e->next = calloc(n, sizeof(*e->next));
	e->seen = calloc(n, sizeof(*e->seen));
	e->moves = calloc(n, sizeof(*e->moves));
	e->tenant_fast = calloc(s->nr_tenants, sizeof(*e->tenant_fast));
	res->tenants = calloc(s->nr_tenants, sizeof(*res->tenants));
	res->series = malloc(sizeof(*res->series));
	if (!e->node || !e->moved || !e->acc || !e->next || !e->seen ||
	    !e->moves || !e->tenant_fast || !res->tenants || !res->series)
		return -ENOMEM;
	sim_series_init(res->series, s->interval_ns);
	res->nr_tenants = s->nr_tenants;
	for (uint32_t t = 0; t < s->nr_tenants; t++)
		res->tenants[t].budget_bytes = s->budget_bytes[t];
	res->footprint_bytes = (uint64_t)n * s->range_bytes;
	res->t50_ns = res->t90_ns = -1;
	res->u50 = res->u90 = -1;
	r = place_initial(e);
	if (r)
		return r;
	for (uint32_t t = 0; t < s->nr_tenants; t++)
		res->tenants[t].initial_fast_bytes = e->tenant_fast[t];
	return 0;
}

static int step(struct engine *e, void *st, uint64_t i, bool last,
		struct sim_result *res)
{
	const struct sim_run *run = e->run;
	struct sim_view v = {
		.interval = i, .now_ns = (i + 1) * e->s->interval_ns,
		.s = e->s, .node = e->node, .used_bytes = e->used,
		.tenant_fast_bytes = e->tenant_fast, .seen = e->seen,
		.truth = e->acc, .next = last ? NULL : e->next,
		.rate = run->sampler ? run->sampler->rate : NULL,
	};
	uint32_t n = 0;
	int r;

	bill(e, res);
	/* The placement the interval ran on: as it stood at its start. */
	score(e, st, res, i * e->s->interval_ns);
	if (run->sampler) {
		run->sampler->sample(run->sampler->state, e->acc,
				     e->s->nr_ranges, e->seen, &res->sampler_ns);
		if (run->sampler->idle_ms)
			v.idle_ms = run->sampler->idle_ms(run->sampler->state);
	} else
		memcpy(e->seen, e->acc, e->s->nr_ranges * sizeof(*e->seen));
	r = run->sys->decide(st, &v, e->moves, e->max_moves, &n);
	if (r)
		return r;
	execute(e, n < e->max_moves ? n : e->max_moves, res);
	if (run->placement)
		dump_placement(e, st, v.now_ns);
	check(e, res);
	res->intervals++;
	return 0;
}

int sim_engine_run(const struct sim_run *run, struct sim_result *res)
{
	struct engine e;
	void *st = NULL;
	bool end = false, next_end = false;
	uint32_t *tmp;
	int r;

	r = engine_init(&e, run, res);
	if (!r)
		r = run->sys->init(&st, run->s);
	if (!r)
		r = run->src.fill(run->src.state, 0, e.acc, &end);
	for (uint64_t i = 0; !r && !end && i < run->max_intervals; i++) {
		memset(e.next, 0, run->s->nr_ranges * sizeof(*e.next));
		r = run->src.fill(run->src.state, i + 1, e.next, &next_end);
		if (!r)
			r = step(&e, st, i, next_end, res);
		tmp = e.acc;
		e.acc = e.next;
		e.next = tmp;
		end = next_end;
	}
	if (st)
		run->sys->destroy(st);
	engine_free(&e);
	if (r)
		sim_result_free(res);
	return r;
}

void sim_result_free(struct sim_result *res)
{
	free(res->tenants);
	res->tenants = NULL;
	free(res->series);
	res->series = NULL;
}
