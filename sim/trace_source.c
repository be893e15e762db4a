// SPDX-License-Identifier: GPL-2.0-only
/*
 * A recorded trace as an access source.  Each tenant's address space is
 * cut into ranges (its highest page decides how many) laid end to end in
 * tenant order; a record at time_us lands in interval time_us / interval,
 * its accesses added to its page's range (saturating at UINT32_MAX).  A
 * looped trace starts again where it ends: pass k's record at time_us
 * plays at k x the last record's time_us + time_us, until the loop's
 * intervals are over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

struct tsrc {
	const struct sim_trace *t;
	uint64_t interval_us, pages_per_range;
	uint64_t *first;	/* [nr_tenants], the tenant's first range */
	size_t cursor;
	uint64_t last_interval;
	uint64_t loop_intervals;	/* 0: the trace once */
	uint64_t pass_us;		/* a pass's length */
	uint64_t pass_start_us;		/* the cursor's pass's start */
};

static int tsrc_fill(void *state, uint64_t i, uint32_t *acc, bool *ret_end)
{
	struct tsrc *s = state;
	const struct sim_trace *t = s->t;

	*ret_end = s->loop_intervals ? i >= s->loop_intervals :
		   i > s->last_interval || !t->nr_recs;
	while (s->cursor < t->nr_recs) {
		const struct sim_rec *x = &t->recs[s->cursor];
		uint64_t r = s->first[x->tenant] + x->page / s->pages_per_range;
		uint64_t sum;

		if ((s->pass_start_us + x->time_us) / s->interval_us > i)
			break;
		sum = acc[r] + x->accesses;
		acc[r] = sum > UINT32_MAX || sum < x->accesses ? UINT32_MAX : sum;
		if (++s->cursor == t->nr_recs && s->loop_intervals) {
			s->cursor = 0;
			s->pass_start_us += s->pass_us;
		}
	}
	return 0;
}

int sim_trace_source(const struct sim_trace *t, uint64_t base_page_bytes,
		     uint64_t range_bytes, uint64_t interval_ns, uint64_t loop_ns,
		     struct sim_source *src, struct sim_layout *l)
{
	struct tsrc *s = calloc(1, sizeof(*s));
	uint64_t *max_page = calloc(t->nr_tenants + 1, sizeof(*max_page));
	uint64_t n = 0;
	int r = -ENOMEM;

	memset(l, 0, sizeof(*l));
	src->state = s;
	src->fill = tsrc_fill;
	if (!s || !max_page)
		goto out;
	s->t = t;
	s->interval_us = interval_ns / 1000 ? interval_ns / 1000 : 1;
	s->pages_per_range = range_bytes / base_page_bytes;
	s->loop_intervals = loop_ns ? (loop_ns + interval_ns - 1) / interval_ns : 0;
	s->first = calloc(t->nr_tenants + 1, sizeof(*s->first));
	l->nr_tenants = t->nr_tenants;
	l->budget_bytes = calloc(t->nr_tenants + 1, sizeof(*l->budget_bytes));
	l->tenant_names = calloc(t->nr_tenants + 1, sizeof(*l->tenant_names));
	if (!s->first || !l->budget_bytes || !l->tenant_names)
		goto out;
	for (size_t i = 0; i < t->nr_recs; i++)
		if (t->recs[i].page > max_page[t->recs[i].tenant])
			max_page[t->recs[i].tenant] = t->recs[i].page;
	if (t->nr_recs) {
		uint64_t end_us = t->recs[t->nr_recs - 1].time_us;

		s->last_interval = end_us / s->interval_us;
		/* A pass takes at least a microsecond: the loop advances. */
		s->pass_us = end_us ? end_us : 1;
	}
	for (uint32_t i = 0; i < t->nr_tenants; i++) {
		s->first[i] = n;
		n += max_page[i] / s->pages_per_range + 1;
		l->tenant_names[i] = strdup(t->tenants[i]);
		if (!l->tenant_names[i])
			goto out;
	}
	r = -E2BIG;
	if (n > UINT32_MAX)
		goto out;
	r = -ENOMEM;
	l->nr_ranges = n;
	l->range_tenant = calloc(n + 1, sizeof(*l->range_tenant));
	if (!l->range_tenant)
		goto out;
	for (uint32_t i = 0; i < t->nr_tenants; i++)
		for (uint64_t k = s->first[i]; k < (i + 1 < t->nr_tenants ? s->first[i + 1] : n); k++)
			l->range_tenant[k] = i;
	r = 0;
out:
	free(max_page);
	return r;
}

void sim_trace_source_destroy(struct sim_source *src)
{
	struct tsrc *s = src->state;

	if (!s)
		return;
	free(s->first);
	free(s);
	src->state = NULL;
}
