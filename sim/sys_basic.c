// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reference systems: none (no tiering: pages stay where they start),
 * all-dram (every access costs the fast tier: the denominator of the
 * estimated run time), and the oracle.
 *
 * The oracle knows the next interval's accesses.  Its target is the
 * hottest ranges of that interval that fit the fast tier, and of a tenant
 * with a budget as many as the budget holds; it demotes just enough of
 * the coldest fast ranges outside the target to make room, on the fast
 * tier or under a tenant's budget, then promotes the target's ranges
 * hottest first.  The engine holds it to the
 * same copy time per interval as any system, at the patched kernel's copy
 * costs, the cheaper: the best placement within the most migration
 * bandwidth the machine has, for tierd on either kernel, up to the log2
 * bucketing of heat.  Its placement is sim_oracle_place(), which
 * oracle-seen (sys_oracle_seen.c) calls with less than the truth.
 *
 * The target is whole log2 buckets of heat, from the hottest down, while
 * they fit: the first bucket that would not fit is left out, and the room
 * it leaves stays free.  oracle-fill then fills that room, bucket by
 * bucket down to one access, from the slow tier; what it filled leaves,
 * as any fast range outside the target, coldest first and only when the
 * target needs the room.  It moves more bytes for a better run time where a bucket
 * is large (a Zipf tail, docs/sim-results.md); the targets' oracle is the
 * one that leaves the room.  It fills no tenant with a budget: the
 * budget's share is the target's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "system.h"

struct sim_oracle {
	const struct sim_setup *s;
	uint32_t *order, *bucket_start;
	uint8_t *target;	/* [nr_ranges]: in the interval's target */
	uint32_t *left;		/* [nr_tenants]: target ranges its budget has left */
	uint32_t *room;		/* [nr_tenants]: ranges its budget lets up now */
	uint32_t *excess;	/* [nr_tenants]: target ranges past that room */
	bool fill;	/* oracle-fill: the room the target leaves too */
};

static int none_init(void **ret, const struct sim_setup *s)
{
	*ret = (void *)s;
	return 0;
}

static int none_decide(void *st, const struct sim_view *v,
		       struct sim_move *moves, uint32_t max, uint32_t *ret_n)
{
	*ret_n = 0;
	return 0;
}

static void none_destroy(void *st)
{
}

const struct sim_system sim_sys_none = {
	.name = "none", .init = none_init, .decide = none_decide,
	.destroy = none_destroy,
};

const struct sim_system sim_sys_all_dram = {
	.name = "all-dram", .all_fast = true, .init = none_init,
	.decide = none_decide, .destroy = none_destroy,
};

int sim_oracle_new(const struct sim_setup *s, bool fill, struct sim_oracle **ret)
{
	struct sim_oracle *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->s = s;
	o->fill = fill;
	o->order = malloc(s->nr_ranges * sizeof(*o->order));
	o->bucket_start = malloc(34 * sizeof(*o->bucket_start));
	o->target = malloc(s->nr_ranges);
	o->left = calloc(s->nr_tenants + 1, sizeof(*o->left));
	o->room = calloc(s->nr_tenants + 1, sizeof(*o->room));
	o->excess = calloc(s->nr_tenants + 1, sizeof(*o->excess));
	if (!o->order || !o->bucket_start || !o->target || !o->left || !o->room || !o->excess) {
		sim_oracle_free(o);
		return -ENOMEM;
	}
	*ret = o;
	return 0;
}

void sim_oracle_free(struct sim_oracle *o)
{
	if (!o)
		return;
	free(o->order);
	free(o->bucket_start);
	free(o->target);
	free(o->left);
	free(o->room);
	free(o->excess);
	free(o);
}

static int heat_bucket(uint32_t a)
{
	return a ? 32 - __builtin_clz(a) : 0;
}

/* Ranges in ascending log2 bucket of @heat (a counting sort). */
static void order_by_heat(struct sim_oracle *o, const uint32_t *heat)
{
	uint32_t n = o->s->nr_ranges, *b = o->bucket_start;

	memset(b, 0, 34 * sizeof(*b));
	for (uint32_t r = 0; r < n; r++)
		b[heat_bucket(heat[r]) + 1]++;
	for (int i = 1; i < 34; i++)
		b[i] += b[i - 1];
	for (uint32_t r = 0; r < n; r++)
		o->order[b[heat_bucket(heat[r])]++] = r;
}

static int pick_node(const struct sim_view *v, bool fast, uint64_t *used)
{
	const struct sim_machine *m = v->s->m;
	int best = -1;

	for (int n = 0; n < m->nr_nodes; n++) {
		if ((m->nodes[n].tier == 0) != fast ||
		    used[n] + v->s->range_bytes > m->nodes[n].capacity_bytes)
			continue;
		if (best < 0 || used[n] < used[best])
			best = n;
	}
	return best;
}

static uint16_t tenant_of(const struct sim_setup *s, uint32_t r)
{
	return s->range_tenant ? s->range_tenant[r] : 0;
}

/* Tenants, counting a layout without them as one. */
static uint32_t nr_tenants(const struct sim_setup *s)
{
	return s->nr_tenants ? s->nr_tenants : 1;
}

/* Each tenant's budget in ranges, and what it lets up now: the budget less
 * what the tenant holds on the fast tier (UINT32_MAX: no budget). */
static void budget_rooms(struct sim_oracle *o, const struct sim_view *v)
{
	const struct sim_setup *s = v->s;

	for (uint32_t ten = 0; ten < nr_tenants(s); ten++) {
		bool real = ten < s->nr_tenants;
		uint64_t b = real && s->budget_bytes ? s->budget_bytes[ten] : 0;
		uint64_t held = real && v->tenant_fast_bytes ? v->tenant_fast_bytes[ten] : 0;

		o->left[ten] = b ? (uint32_t)(b / s->range_bytes) : UINT32_MAX;
		o->room[ten] = !b ? UINT32_MAX : b > held ? (uint32_t)((b - held) / s->range_bytes) : 0;
		o->excess[ten] = 0;
	}
}

/*
 * Mark the target: the ranges at @t or hotter, hottest bucket first, as
 * many of each tenant's as its budget holds; within a bucket a tenant's
 * fast ranges before its slow ones, so that ties stay where they are.
 * Sets o->excess[] to the target's slow ranges past their tenant's room;
 * returns the target's slow ranges.
 */
static uint32_t mark_target(struct sim_oracle *o, const struct sim_view *v,
			    const uint32_t *heat, uint32_t t)
{
	const struct sim_setup *s = v->s;
	uint32_t want = 0;

	memset(o->target, 0, s->nr_ranges);
	/* order_by_heat() left each bucket's end in bucket_start[]. */
	for (int b = 32; t && b >= heat_bucket(t); b--) {
		uint32_t start = b ? o->bucket_start[b - 1] : 0, end = o->bucket_start[b];

		for (int pass = 0; pass < 2; pass++) {
			for (uint32_t i = start; i < end; i++) {
				uint32_t r = o->order[i], ten = tenant_of(s, r);
				bool fast = s->m->nodes[v->node[r]].tier == 0;

				if (fast != !pass || !o->left[ten] || heat[r] < t)
					continue;
				o->target[r] = 1;
				if (o->left[ten] != UINT32_MAX)
					o->left[ten]--;
				want += !fast;
				o->excess[ten] += !fast;
			}
		}
	}
	for (uint32_t ten = 0; ten < nr_tenants(s); ten++)
		o->excess[ten] = o->excess[ten] > o->room[ten] ? o->excess[ten] - o->room[ten] : 0;
	return want;
}

static void move_range(const struct sim_view *v, uint64_t *used, struct sim_move *mv,
		       uint32_t r, int node)
{
	used[node] += v->s->range_bytes;
	used[v->node[r]] -= v->s->range_bytes;
	*mv = (struct sim_move){ .range = r, .node = node };
}

int sim_oracle_place(struct sim_oracle *o, const struct sim_view *v, const uint32_t *heat,
		     struct sim_move *moves, uint32_t max, uint32_t *ret_n)
{
	const struct sim_setup *s = v->s;
	const struct sim_machine *m = s->m;
	uint32_t n = s->nr_ranges, fast_ranges = 0, t, want, k = 0, excess = 0;
	uint64_t used[SIM_MAX_NODES];
	int free_fast = 0, node;

	for (int i = 0; i < m->nr_nodes; i++)
		if (m->nodes[i].tier == 0) {
			fast_ranges += sim_node_ranges(s, i);
			free_fast += (m->nodes[i].capacity_bytes - v->used_bytes[i]) /
				     s->range_bytes;
		}
	t = sim_hot_threshold(heat, n, fast_ranges, 1.0);
	memcpy(used, v->used_bytes, sizeof(used));
	order_by_heat(o, heat);
	budget_rooms(o, v);
	want = mark_target(o, v, heat, t);
	for (uint32_t ten = 0; ten < nr_tenants(s); ten++)
		excess += o->excess[ten];
	/* Demote the coldest fast ranges outside the target, only for room:
	 * the fast tier's, or a tenant's budget's for its own. */
	for (uint32_t i = 0; i < n && ((int)want > free_fast || excess) && k < max; i++) {
		uint32_t r = o->order[i], ten = tenant_of(s, r);

		if (m->nodes[v->node[r]].tier != 0 || o->target[r] ||
		    ((int)want <= free_fast && !o->excess[ten]))
			continue;
		node = pick_node(v, false, used);
		if (node < 0)
			break;
		move_range(v, used, &moves[k++], r, node);
		free_fast++;
		if (o->excess[ten]) {
			o->excess[ten]--;
			excess--;
		}
		if (o->room[ten] != UINT32_MAX)
			o->room[ten]++;
	}
	/* The target hottest first; oracle-fill then what is left down to one
	 * access, but for a tenant with a budget (its share is the target). */
	for (uint32_t i = n; t && i-- > 0 && k < max;) {
		uint32_t r = o->order[i], ten = tenant_of(s, r);

		if (heat[r] < (o->fill ? 1 : t))
			break;
		if (m->nodes[v->node[r]].tier == 0 || !o->room[ten] ||
		    (!o->target[r] && (!o->fill || o->room[ten] != UINT32_MAX)))
			continue;
		node = pick_node(v, true, used);
		if (node < 0)
			break;
		move_range(v, used, &moves[k++], r, node);
		if (o->room[ten] != UINT32_MAX)
			o->room[ten]--;
	}
	*ret_n = k;
	return 0;
}

static int oracle_open(void **ret, const struct sim_setup *s, bool fill)
{
	struct sim_oracle *o = NULL;
	int r = sim_oracle_new(s, fill, &o);

	*ret = o;
	return r;
}

static int oracle_init(void **ret, const struct sim_setup *s)
{
	return oracle_open(ret, s, false);
}

static int oracle_fill_init(void **ret, const struct sim_setup *s)
{
	return oracle_open(ret, s, true);
}

static int oracle_decide(void *st, const struct sim_view *v,
			 struct sim_move *moves, uint32_t max, uint32_t *ret_n)
{
	return sim_oracle_place(st, v, v->next ? v->next : v->truth, moves, max, ret_n);
}

static void oracle_destroy(void *st)
{
	sim_oracle_free(st);
}

const struct sim_system sim_sys_oracle = {
	.name = "oracle", .kernel = SIM_KERNEL_PATCHED, .init = oracle_init,
	.decide = oracle_decide,
	.destroy = oracle_destroy,
};

const struct sim_system sim_sys_oracle_fill = {
	.name = "oracle-fill", .kernel = SIM_KERNEL_PATCHED, .init = oracle_fill_init,
	.decide = oracle_decide,
	.destroy = oracle_destroy,
};
