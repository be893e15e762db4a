// SPDX-License-Identifier: GPL-2.0-only
/*
 * Decay of the hotness table (the model is in hotness.c): what a weight
 * arriving at a time is worth against the epoch, and the rebase that moves
 * the epoch and the time base before the stored values or ticks run out.
 */
#include <stdbool.h>

#include "hotness_int.h"

/* ---- arithmetic without libm ---- */

double hot_exp2(double x)
{
	union {
		uint64_t u;
		double d;
	} scale;
	double f, term, sum;
	int64_t n;

	if (x > 1023.0)
		return __builtin_inf();
	if (x < -1074.0)
		return 0.0;
	n = (int64_t)x;
	if ((double)n > x)
		n--;	/* floor for negative non-integers */
	f = (x - (double)n) * 0.69314718055994530942;	/* f * ln 2, in [0, ln 2) */
	/* e^f by its Taylor series: 20 terms bring the error under 1e-17. */
	term = 1.0;
	sum = 1.0;
	for (int k = 1; k <= 20; k++) {
		term *= f / k;
		sum += term;
	}
	if (n < -1022) {	/* subnormal result: scale in two steps */
		scale.u = (uint64_t)(n + 1022 + 1023) << 52;
		return sum * scale.d * 2.2250738585072014e-308; /* 2^-1022 */
	}
	scale.u = (uint64_t)(n + 1023) << 52;
	return sum * scale.d;
}

/* 2^((t - epoch) / half_life): what a weight arriving at @t_ns is worth. */
double hot_scale(const struct hot_table *t, uint64_t t_ns)
{
	if (t_ns <= t->epoch_ns)
		return 1.0;
	return hot_exp2((double)(t_ns - t->epoch_ns) / (double)t->params.half_life_ns);
}

/* ---- rebasing: the one O(n) step ---- */

static float hot_rescale(float v, double f)
{
	double r = (double)v * f;

	return r < FLT_MIN_NORMAL ? 0.0f : (float)r;
}

/* Stored values to heat at @now_ns (@heat), tick stamps back by @shift. */
static void rebase(struct hot_table *t, uint64_t now_ns, bool heat, uint64_t shift)
{
	double f = heat ? 1.0 / hot_scale(t, now_ns) : 1.0;

	for_each_occupied_slot(t, i) {
		struct hot_entry *e = &t->slots[i];
		uint32_t tick = TAIL_TICK(e->tail);

		if (!e->key)
			continue;
		if (heat)
			e->v = hot_rescale(e->v, f);
		if (shift)
			e->tail = (tick > shift ? tick - (uint32_t)shift : 0) << TAIL_SAMPLE_BITS |
				  TAIL_SAMPLES(e->tail);
	}
	for (uint32_t i = 0; heat && i < t->npool; i++)
		t->pool[i].v = hot_rescale(t->pool[i].v, f);
	for (uint32_t i = 0; shift && i < t->max_pids; i++)
		t->pids[i].last_tick = t->pids[i].last_tick > shift ?
				       t->pids[i].last_tick - (uint32_t)shift : 0;
	if (heat) {
		t->epoch_ns = now_ns;
		t->scale = 0.0;	/* recompute against the new epoch */
	}
	t->time_base_ns += shift << HOT_TIME_SHIFT;
	t->st.rebases++;
}

void hot_maybe_rebase(struct hot_table *t, uint64_t now_ns)
{
	double span = (double)t->params.half_life_ns * REBASE_HALF_LIVES;
	bool heat = now_ns > t->epoch_ns && (double)(now_ns - t->epoch_ns) >= span;
	uint64_t age = now_ns > t->time_base_ns ? (now_ns - t->time_base_ns) >> HOT_TIME_SHIFT : 0;
	uint64_t shift = age >= TICK_REBASE ? age - TICK_AFTER : 0;

	if (heat || shift)
		rebase(t, now_ns, heat, shift);
}

void hot_set_half_life(struct hot_table *t, uint64_t half_life_ns, uint64_t now_ns)
{
	if (!half_life_ns || half_life_ns == t->params.half_life_ns)
		return;
	/* Each entry's heat now, then the new rate of decay from now on. */
	rebase(t, now_ns > t->epoch_ns ? now_ns : t->epoch_ns, true, 0);
	t->params.half_life_ns = half_life_ns;
}
