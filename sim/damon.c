// SPDX-License-Identifier: GPL-2.0-only
/*
 * DAMON as it sees, after mm/damon/core.c and mm/damon/vaddr.c of 6.12.
 *
 * The address space of each tenant (a DAMON target) is cut into regions.
 * Every sampling interval DAMON clears the accessed bit of one random page
 * per region (damon_va_prepare_access_checks() -> damon_va_mkold()) and, a
 * sampling interval later, counts the region accessed if that page is young
 * (damon_va_check_accesses()): nr_accesses grows by at most 1 a sample.
 * Every aggregation interval kdamond_fn():
 *
 *   1. merges neighbours whose nr_accesses differ by at most max / 10
 *      (kdamond_merge_regions(), damon_merge_regions_of(): sizes add,
 *      nr_accesses and age are size-weighted, merged regions never exceed
 *      damon_region_sz_limit() = total size / min_nr_regions; the
 *      threshold doubles while there are more than max_nr_regions);
 *      a region's age grows while its nr_accesses stays within the
 *      threshold of last_nr_accesses, and resets to 0 otherwise;
 *   2. reports the regions (the damon_aggregated tracepoint, DAMOS);
 *   3. resets nr_accesses (kdamond_reset_aggregated());
 *   4. splits every region in two (three when the count did not change
 *      since the last split and is below max_nr_regions / 3) at a random
 *      tenth of its size, unless there are more than max_nr_regions / 2
 *      (kdamond_split_regions(), damon_split_regions_of()).
 *
 * Defaults from damon_new_ctx(): sampling 5 ms, aggregation 100 ms,
 * min_nr_regions 10, max_nr_regions 1000.  Departures: the smallest
 * region is one range (2 MiB), not a page; accesses are spread evenly over
 * a range's pages, so the chosen page is young with probability
 * 1 - exp(-accesses to that page in the sampling interval); the system sees
 * each range's region's nr_accesses at the interval's last aggregation.
 * An aggregation interval longer than the simulated interval runs across
 * intervals: each interval takes its share of the samples, and the system
 * sees the regions of the aggregation that ended in it, nothing when none
 * did.
 * CPU cost: DAMON_CHECK_NS per region per sample (assumption: one page
 * table walk and a young-bit test), and DAMON_AGGR_NS per region per
 * aggregation (assumption: kdamond_merge_regions()'s compare,
 * kdamond_reset_aggregated()'s damon_aggregated event and
 * kdamond_split_regions()'s pass over the region list).
 *
 * Arguments: damon[:SAMPLE_US[:AGGR_US[:MIN_NR[:MAX_NR]]]].
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damon.h"
#include "sampler.h"
#include "source.h"

#define DAMON_CHECK_NS 500
#define DAMON_AGGR_NS 100

static void region_merge_into(struct damon_region *a,
			      const struct damon_region *b)
{
	uint64_t sa = a->end - a->start, sb = b->end - b->start;

	a->nr_accesses = (a->nr_accesses * sa + b->nr_accesses * sb) / (sa + sb);
	a->age = (a->age * sa + b->age * sb) / (sa + sb);
	a->end = b->end;
}

/* damon_merge_regions_of() over the whole list; tenants never merge. */
static void merge_pass(struct damon_model *d, uint32_t thres, uint32_t sz_limit)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < d->nr; i++) {
		struct damon_region *r = &d->regions[i];
		struct damon_region *prev = k ? &d->regions[k - 1] : NULL;
		uint32_t diff = r->nr_accesses > r->last_nr_accesses ?
					r->nr_accesses - r->last_nr_accesses :
					r->last_nr_accesses - r->nr_accesses;

		if (diff > thres)
			r->age = 0;
		else
			r->age++;
		if (prev && prev->tenant == r->tenant && prev->end == r->start &&
		    (prev->nr_accesses > r->nr_accesses ?
			     prev->nr_accesses - r->nr_accesses :
			     r->nr_accesses - prev->nr_accesses) <= thres &&
		    (r->end - prev->start) <= sz_limit)
			region_merge_into(prev, r);
		else
			d->regions[k++] = *r;
	}
	d->nr = k;
}

void damon_model_merge(struct damon_model *d, uint32_t threshold)
{
	uint32_t sz_limit = d->total / d->min_nr;

	if (sz_limit < 1)
		sz_limit = 1;
	do {
		merge_pass(d, threshold, sz_limit);
		threshold = threshold ? threshold * 2 : 1;
	} while (d->nr > d->max_nr && threshold / 2 < d->max_accesses);
}

void damon_model_split(struct damon_model *d)
{
	uint32_t subs = 2, n = d->nr, k;

	if (n > d->max_nr / 2)
		return;
	if (d->last_nr == n && n < d->max_nr / 3)
		subs = 3;
	if (n * subs > d->cap)
		return;
	/* Each region yields at most @subs: fill from the back in place. */
	k = n * subs;
	for (uint32_t i = n; i-- > 0;) {
		struct damon_region left = d->regions[i], right[2];
		int nr_right = 0;

		/* damon_split_regions_of(): the left part is split again. */
		for (uint32_t s = 0; s + 1 < subs && left.end - left.start > 2; s++) {
			uint32_t sz = left.end - left.start;
			uint32_t sub = (1 + sim_rand(&d->rng) % 9) * sz / 10;

			if (!sub || sub >= sz)
				continue;
			right[nr_right] = left;
			right[nr_right++].start = left.start + sub;
			left.end = left.start + sub;
		}
		for (int j = 0; j < nr_right; j++)
			d->regions[--k] = right[j];
		d->regions[--k] = left;
	}
	memmove(d->regions, d->regions + k, (n * subs - k) * sizeof(*d->regions));
	d->nr = n * subs - k;
	d->last_nr = n;
}

/* One sampling interval: each region's one random page, young or not. */
static void sample_once(struct damon_model *d, const uint32_t *acc,
			uint32_t *max_acc)
{
	double per_page = (double)d->sample_ns / d->interval_ns / d->range_pages;

	for (uint32_t i = 0; i < d->nr; i++) {
		struct damon_region *r = &d->regions[i];
		uint32_t pick = r->start + sim_rand(&d->rng) % (r->end - r->start);
		double p = 1 - exp(-(double)acc[pick] * per_page);

		if (acc[pick] && sim_rand_unit(&d->rng) < p)
			r->nr_accesses++;
		if (r->nr_accesses > *max_acc)
			*max_acc = r->nr_accesses;
	}
}

/* The report: each range's region's nr_accesses, and where that is 0 its
 * age (tierd's source counts an age of 0 as nothing to go by). */
static void fill_seen(void *arg, struct damon_model *d)
{
	uint32_t *seen = arg;

	for (uint32_t i = 0; i < d->nr; i++) {
		const struct damon_region *g = &d->regions[i];
		uint64_t ms = g->nr_accesses ? 0 : (uint64_t)g->age * d->aggr_ns / 1000000;

		for (uint32_t r = g->start; r < g->end; r++) {
			seen[r] = g->nr_accesses;
			if (d->idle_ms)
				d->idle_ms[r] = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
		}
	}
}

/* The end of an aggregation: merge, @apply, reset, split, and their cost. */
static void aggregate_end(struct damon_model *d, uint32_t max_acc,
			  void (*apply)(void *arg, struct damon_model *d), void *arg,
			  uint64_t *cost_ns)
{
	damon_model_merge(d, max_acc / 10);
	if (apply)
		apply(arg, d);
	*cost_ns += (uint64_t)d->nr * DAMON_AGGR_NS;
	for (uint32_t i = 0; i < d->nr; i++) {
		d->regions[i].last_nr_accesses = d->regions[i].nr_accesses;
		d->regions[i].nr_accesses = 0;
	}
	damon_model_split(d);
}

void damon_model_aggregate(struct damon_model *d, const uint32_t *acc,
			   uint64_t *cost_ns,
			   void (*apply)(void *arg, struct damon_model *d),
			   void *arg)
{
	uint32_t max_acc = 0;

	for (uint32_t s = 0; s < d->max_accesses; s++) {
		sample_once(d, acc, &max_acc);
		*cost_ns += (uint64_t)d->nr * DAMON_CHECK_NS;
	}
	aggregate_end(d, max_acc, apply, arg, cost_ns);
}

/*
 * An aggregation longer than the interval: the interval's share of its
 * samples (the remainder carried), and the regions into @seen only when
 * one ends within it; else @seen is all 0, as a drain finds no new
 * aggregation.
 */
static void damon_sample_long(struct damon_model *d, const uint32_t *acc, uint32_t n,
			      uint32_t *seen, uint64_t *cost_ns)
{
	uint64_t due = (d->carry_ns + d->interval_ns) / d->sample_ns;
	bool ended = false;

	d->carry_ns = (d->carry_ns + d->interval_ns) % d->sample_ns;
	for (uint64_t k = 0; k < due; k++) {
		sample_once(d, acc, &d->aggr_max);
		*cost_ns += (uint64_t)d->nr * DAMON_CHECK_NS;
		if (++d->samples < d->max_accesses)
			continue;
		aggregate_end(d, d->aggr_max, fill_seen, seen, cost_ns);
		d->samples = 0;
		d->aggr_max = 0;
		ended = true;
	}
	if (!ended)
		memset(seen, 0, n * sizeof(*seen));
}

static void damon_sample(void *st, const uint32_t *acc, uint32_t n,
			 uint32_t *seen, uint64_t *cost_ns)
{
	struct damon_model *d = st;
	uint64_t aggrs = d->interval_ns / d->aggr_ns;

	if (!aggrs) {
		damon_sample_long(d, acc, n, seen, cost_ns);
		return;
	}
	for (uint64_t a = 0; a < aggrs; a++)
		damon_model_aggregate(d, acc, cost_ns,
				      a + 1 == aggrs ? fill_seen : NULL, seen);
}

static const uint32_t *damon_idle(void *st)
{
	return ((struct damon_model *)st)->idle_ms;
}

static void damon_destroy(void *st)
{
	struct damon_model *d = st;

	free(d->idle_ms);
	free(d->regions);
	free(d);
}

/* Each tenant's ranges evenly in min_nr regions (damon_va_init()'s end). */
static int initial_regions(struct damon_model *d, uint32_t n,
			   const uint16_t *tenant, uint32_t nr_tenants)
{
	uint32_t lo = 0;

	d->cap = 3 * (d->max_nr + nr_tenants * d->min_nr) + 3;
	d->regions = calloc(d->cap, sizeof(*d->regions));
	if (!d->regions)
		return -ENOMEM;
	while (lo < n) {
		uint32_t hi = lo, t = tenant ? tenant[lo] : 0, len, k;

		while (hi < n && (tenant ? tenant[hi] : 0) == t)
			hi++;
		len = hi - lo;
		k = len < d->min_nr ? len : d->min_nr;
		for (uint32_t i = 0; i < k && d->nr < d->cap; i++)
			d->regions[d->nr++] = (struct damon_region){
				.start = lo + (uint64_t)len * i / k,
				.end = lo + (uint64_t)len * (i + 1) / k,
				.tenant = t };
		lo = hi;
	}
	return 0;
}

int damon_model_init(struct damon_model *d, const struct sim_setup *s,
		     uint32_t n, const uint16_t *tenant, const uint64_t attrs[4])
{
	*d = (struct damon_model){
		.sample_ns = attrs[0] * 1000, .aggr_ns = attrs[1] * 1000,
		.min_nr = attrs[2], .max_nr = attrs[3],
		.max_accesses = attrs[1] / attrs[0], .total = n,
		.interval_ns = s->interval_ns,
		.range_pages = s->range_bytes / s->m->base_page_bytes,
		.rng = s->seed ^ 0x64616d6f6eull ^ n };
	return initial_regions(d, n, tenant, tenant ? s->nr_tenants : 1);
}

int sim_damon_create(const char *args, const struct sim_setup *s,
		     struct sim_sampler *out, char *err)
{
	uint64_t v[4] = { 5000, 100000, 10, 1000 };
	struct damon_model *d;
	char *end;
	int k = 0, r;

	while (args && *args && k < 4) {
		v[k++] = strtoull(args, &end, 10);
		if (end == args || (*end && *end != ':'))
			break;
		args = *end ? end + 1 : end;
	}
	if ((args && *args) || !v[0] || v[1] < v[0] || v[2] < 3 || v[3] < v[2] ||
	    v[3] > SIM_DAMON_MAX_REGIONS) {
		snprintf(err, SIM_ERR_LEN,
			 "--sampler damon: expected damon[:SAMPLE_US[:AGGR_US[:MIN_NR[:MAX_NR]]]], "
			 "sample <= aggregation, 3 <= min <= max <= %u", SIM_DAMON_MAX_REGIONS);
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	r = damon_model_init(d, s, s->nr_ranges, s->range_tenant, v);
	d->idle_ms = r ? NULL : calloc(s->nr_ranges, sizeof(*d->idle_ms));
	if (!r && !d->idle_ms)
		r = -ENOMEM;
	if (r) {
		damon_destroy(d);
		return r;
	}
	*out = (struct sim_sampler){ .name = "damon", .state = d,
				     .sample = damon_sample, .idle_ms = damon_idle,
				     .destroy = damon_destroy };
	return 0;
}
