// SPDX-License-Identifier: GPL-2.0-only
/*
 * Synthetic workloads, deterministic for a seed (splitmix64, source.h).
 * Ranges are shuffled once (Fisher-Yates); "hot" ranges are a window of
 * that order.  Each interval a range gets its expected accesses, rounded
 * up or down at random in proportion (so the mean is exact).
 *
 *   uniform  the hot set shares (1 - cold) of the rate evenly, the rest
 *            shares cold
 *   zipf     rank k gets rate x (k+1)^-alpha / H(n, alpha)
 *   shift    uniform, the hot window moving by its own size every shift s
 *   phases   uniform, two hot windows alternating every period s
 *   scan     uniform, and from scan_at s on, every cold range read once
 *            (one access per base page), in order, over scan_s s
 *   tenants  N tenants of equal size, each uniform within its block;
 *            tenant t's budget is (t+1)/N of its hot set; with move s,
 *            each tenant's hot window moves by its own size every s
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "source.h"

enum gen_kind { GEN_UNIFORM, GEN_ZIPF, GEN_SHIFT, GEN_PHASES, GEN_SCAN,
		GEN_TENANTS };

static const char *const gen_names[] = { "uniform", "zipf", "shift", "phases",
					 "scan", "tenants" };

struct gen {
	enum gen_kind kind;
	uint64_t rng, footprint, range_bytes;
	double seconds, rate, hot, cold, alpha, shift, period, scan_at, scan_s, move;
	double interval_s;
	uint32_t n, hot_n, tenants;
	uint32_t *perm;
	double *weight;		/* zipf only */
};

static int parse_size(const char *s, uint64_t *ret)
{
	char *end;
	double v = strtod(s, &end);
	int shift = 0;

	switch (*end) {
	case 'T': shift += 10; /* fall through */
	case 'G': shift += 10; /* fall through */
	case 'M': shift += 10; /* fall through */
	case 'K': shift += 10; end++; break;
	default: break;
	}
	if (end == s || *end || !(v > 0))
		return -EINVAL;
	*ret = (uint64_t)(v * (double)(1ull << shift));
	return 0;
}

static int set_key(struct gen *g, const char *k, const char *v)
{
	struct { const char *name; double *p; double lo, hi; } keys[] = {
		{ "seconds", &g->seconds, 0.001, 1e7 },
		{ "rate", &g->rate, 1, 1e13 },
		{ "hot", &g->hot, 1e-6, 1 },
		{ "cold", &g->cold, 0, 1 },
		{ "alpha", &g->alpha, 0, 5 },
		{ "shift", &g->shift, 0.001, 1e7 },
		{ "period", &g->period, 0.001, 1e7 },
		{ "scan_at", &g->scan_at, 0, 1e7 },
		{ "scan_s", &g->scan_s, 0.001, 1e7 },
		{ "move", &g->move, 0.001, 1e7 },
	};
	char *end;
	double d;

	if (!strcmp(k, "footprint"))
		return parse_size(v, &g->footprint);
	if (!strcmp(k, "tenants")) {
		d = strtod(v, &end);
		if (end == v || *end || d < 1 || d > 64 || d != floor(d))
			return -EINVAL;
		g->tenants = d;
		return 0;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(k, keys[i].name))
			continue;
		d = strtod(v, &end);
		if (end == v || *end || !(d >= keys[i].lo && d <= keys[i].hi))
			return -EINVAL;
		*keys[i].p = d;
		return 0;
	}
	return -ENOENT;
}

static int parse_spec(struct gen *g, const char *spec, char *err)
{
	char buf[512], *save = NULL, *kv, *args;
	size_t i;
	int r;

	snprintf(buf, sizeof(buf), "%s", spec);
	args = strchr(buf, ':');
	if (args)
		*args++ = '\0';
	for (i = 0; i < sizeof(gen_names) / sizeof(gen_names[0]); i++)
		if (!strcmp(buf, gen_names[i]))
			break;
	if (i == sizeof(gen_names) / sizeof(gen_names[0])) {
		snprintf(err, SIM_ERR_LEN, "--gen %.200s: unknown generator '%.100s'",
			 spec, buf);
		return -EINVAL;
	}
	g->kind = i;
	for (kv = args ? strtok_r(args, ",", &save) : NULL; kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		r = eq ? (*eq = '\0', set_key(g, kv, eq + 1)) : -EINVAL;
		if (r) {
			snprintf(err, SIM_ERR_LEN, "--gen %.200s: %.100s: %s", spec, kv,
				 r == -ENOENT ? "unknown key" :
				 eq ? "bad value" : "expected KEY=VALUE");
			return -EINVAL;
		}
	}
	return 0;
}

/* @x accesses, rounded at random in proportion. */
static uint32_t round_rand(struct gen *g, double x)
{
	double f = floor(x);

	return (uint32_t)f + (sim_rand_unit(&g->rng) < x - f);
}

/* Ranges perm[lo, lo+cnt) mod n share @x accesses; the others share @rest. */
static void fill_window(struct gen *g, uint32_t *acc, uint32_t lo,
			uint32_t cnt, double x, double rest)
{
	double hot_each = x / cnt, cold_each = g->n > cnt ? rest / (g->n - cnt) : 0;

	for (uint32_t k = 0; k < g->n; k++) {
		uint32_t off = (k + g->n - lo) % g->n;

		acc[g->perm[k]] = round_rand(g, off < cnt ? hot_each : cold_each);
	}
}

/* Cold ranges perm[hot_n..n) are read once each over [scan_at, +scan_s). */
static void fill_scan(struct gen *g, uint32_t *acc, double t)
{
	uint32_t cold = g->n - g->hot_n, pages = g->range_bytes / 4096;
	double a = (t - g->scan_at) / g->scan_s;
	double b = (t + g->interval_s - g->scan_at) / g->scan_s;
	uint32_t lo, hi;

	if (b <= 0 || a >= 1)
		return;
	lo = a <= 0 ? 0 : (uint32_t)(a * cold);
	hi = b >= 1 ? cold : (uint32_t)(b * cold);
	for (uint32_t k = lo; k < hi; k++)
		acc[g->perm[g->hot_n + k]] += pages;
}

/* Each tenant's block perm[t * per, +per): its hot window of @hot from
 * (t / move) * hot on, wrapping; moved 0 without move. */
static void fill_tenants(struct gen *g, uint32_t *acc, double x, double t)
{
	uint32_t per = g->n / g->tenants, hot = g->hot_n / g->tenants, lo = 0;

	if (!hot)
		hot = 1;
	if (g->move > 0)
		lo = (uint64_t)floor(t / g->move) * hot % per;
	for (uint32_t k = 0; k < g->n; k++) {
		uint32_t r = g->perm[k];

		acc[r] = round_rand(g, (k % per + per - lo) % per < hot ?
					       x * (1 - g->cold) / (hot * g->tenants) :
					       x * g->cold / (g->n - hot * g->tenants));
	}
}

static int gen_fill(void *state, uint64_t i, uint32_t *acc, bool *ret_end)
{
	struct gen *g = state;
	double t = i * g->interval_s, x = g->rate * g->interval_s;
	uint32_t lo = 0;

	*ret_end = t >= g->seconds;
	if (*ret_end)
		return 0;
	switch (g->kind) {
	case GEN_ZIPF:
		for (uint32_t k = 0; k < g->n; k++)
			acc[g->perm[k]] = round_rand(g, x * g->weight[k]);
		return 0;
	case GEN_TENANTS:
		fill_tenants(g, acc, x, t);
		return 0;
	case GEN_SHIFT:
		lo = (uint64_t)floor(t / g->shift) * g->hot_n % g->n;
		break;
	case GEN_PHASES:
		lo = (uint64_t)floor(t / g->period) % 2 * g->hot_n % g->n;
		break;
	default:
		break;
	}
	fill_window(g, acc, lo, g->hot_n, x * (1 - g->cold), x * g->cold);
	if (g->kind == GEN_SCAN)
		fill_scan(g, acc, t);
	return 0;
}

static int layout_tenants(struct gen *g, struct sim_layout *l)
{
	uint32_t per = g->n / g->tenants;
	char name[32];

	l->nr_ranges = g->n;
	l->nr_tenants = g->tenants;
	l->range_tenant = calloc(g->n, sizeof(*l->range_tenant));
	l->budget_bytes = calloc(g->tenants, sizeof(*l->budget_bytes));
	l->tenant_names = calloc(g->tenants, sizeof(*l->tenant_names));
	if (!l->range_tenant || !l->budget_bytes || !l->tenant_names)
		return -ENOMEM;
	for (uint32_t r = 0; r < g->n; r++)
		l->range_tenant[r] = r / per;
	for (uint32_t t = 0; t < g->tenants; t++) {
		snprintf(name, sizeof(name), g->tenants > 1 ? "/gen/t%u" : "/gen",
			 t);
		l->tenant_names[t] = strdup(name);
		if (!l->tenant_names[t])
			return -ENOMEM;
		if (g->kind == GEN_TENANTS)
			l->budget_bytes[t] = (uint64_t)(g->hot_n / g->tenants) *
					     (t + 1) / g->tenants * g->range_bytes;
	}
	return 0;
}

/* Shuffle each tenant's block in place: a range never leaves its tenant. */
static void shuffle(struct gen *g)
{
	uint32_t per = g->n / g->tenants;

	for (uint32_t k = 0; k < g->n; k++)
		g->perm[k] = k;
	for (uint32_t b = 0; b < g->n; b += per)
		for (uint32_t k = per - 1; k > 0; k--) {
			uint32_t j = sim_rand(&g->rng) % (k + 1), x;

			x = g->perm[b + k];
			g->perm[b + k] = g->perm[b + j];
			g->perm[b + j] = x;
		}
}

static int zipf_weights(struct gen *g)
{
	double h = 0;

	g->weight = malloc(g->n * sizeof(*g->weight));
	if (!g->weight)
		return -ENOMEM;
	for (uint32_t k = 0; k < g->n; k++)
		h += g->weight[k] = pow(k + 1, -g->alpha);
	for (uint32_t k = 0; k < g->n; k++)
		g->weight[k] /= h;
	return 0;
}

int sim_gen_create(const char *spec, uint64_t range_bytes, uint64_t interval_ns,
		   uint64_t seed, struct sim_source *src, struct sim_layout *l,
		   char *err)
{
	struct gen *g = calloc(1, sizeof(*g));
	int r;

	memset(l, 0, sizeof(*l));
	if (!g)
		return -ENOMEM;
	*g = (struct gen){ .rng = seed, .footprint = 4ull << 30, .seconds = 60,
			   .rate = 1e9, .hot = 0.1, .cold = 0.02, .alpha = 0.99,
			   .shift = 30, .period = 30, .scan_at = -1, .scan_s = 10,
			   .tenants = 1, .range_bytes = range_bytes,
			   .interval_s = interval_ns / 1e9 };
	src->state = g;
	src->fill = gen_fill;
	r = parse_spec(g, spec, err);
	if (r)
		return r;
	if (g->kind != GEN_TENANTS)
		g->tenants = 1;
	else if (g->tenants == 1)
		g->tenants = 4;
	if (g->scan_at < 0)
		g->scan_at = g->seconds / 2;
	g->n = g->footprint / range_bytes / g->tenants * g->tenants;
	if (!g->n) {
		snprintf(err, SIM_ERR_LEN, "--gen %.200s: footprint below %u ranges",
			 spec, g->tenants);
		return -EINVAL;
	}
	g->hot_n = g->hot * g->n < 1 ? 1 : g->hot * g->n;
	g->perm = malloc(g->n * sizeof(*g->perm));
	if (!g->perm)
		return -ENOMEM;
	shuffle(g);
	r = g->kind == GEN_ZIPF ? zipf_weights(g) : 0;
	return r ? r : layout_tenants(g, l);
}

void sim_gen_destroy(struct sim_source *src)
{
	struct gen *g = src->state;

	if (!g)
		return;
	free(g->perm);
	free(g->weight);
	free(g);
	src->state = NULL;
}

void sim_layout_free(struct sim_layout *l)
{
	for (uint32_t t = 0; l->tenant_names && t < l->nr_tenants; t++)
		free(l->tenant_names[t]);
	free(l->tenant_names);
	free(l->range_tenant);
	free(l->budget_bytes);
	memset(l, 0, sizeof(*l));
}
