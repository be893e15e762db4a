// SPDX-License-Identifier: GPL-2.0-only
/*
 * Idle peeks of the DAMON source: what the tracepoint feed's newest
 * aggregation holds that the table does not know, and the known-heat
 * sketch that lets bpf/damon.bpf.c wake tierd for it (see its essay).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/hot_table.h"
#include "source.h"

/* Region @g of @pid against the table, as the program does it against the
 * sketch (damon.h: damon_known_look(), DAMON_LOOK_RANGES ranges at most):
 * its bytes in @ret->accessed_bytes, and in @ret->new_bytes those of its
 * ranges whose heat in the table is below half of what this region alone
 * would add to them (hot_record()'s weight: nr_accesses, times @acc,
 * damon_acc_scale(), into the configured pace's unit, times the share of the
 * range the region covers).  A range hot for a while holds about four
 * aggregations' worth at 4 s idle ticks and a 10 s half-life; the half
 * keeps out ranges whose count only jumps for one aggregation (in the lab,
 * a converged hot set's edges woke tierd now and then with the whole
 * weight as the bar). */
/* The share of the range holding @lo that region @g covers: what
 * hot_record() weighs the region with there. */
static double range_share(const struct page_geom *geom, const struct damon_feed_rec *g, __u64 lo)
{
	__u64 base = page_geom_range_base(geom, lo);
	__u64 from = g->start > base ? g->start : base;
	__u64 to = g->end < base + geom->range ? g->end : base + geom->range;

	return (double)(to - from) / (double)geom->range;
}

static void peek_region(const struct hot_table *t, pid_t pid, const struct damon_feed_rec *g,
			double acc, double scale, struct sampler_peek *ret)
{
	for (int i = 0; i < DAMON_LOOK_RANGES; i++) {
		__u64 lo, bytes, stands;
		double w;

		if (!damon_look_range(g->start, g->end, i, &lo, &bytes, &stands) ||
		    lo >= HOT_ADDR_LIMIT)
			break;
		w = g->nr_accesses * acc * range_share(&t->params.geom, g, lo);
		sampler_peek_add(ret, t, pid, lo, bytes * stands, w, scale);
	}
}

/*
 * The newest aggregation the feed has that neither a drain nor a peek has
 * seen, against the table, without folding it (the next drain does): what
 * tierd does when the program woke it, to check the sketch's word against
 * the table itself.  Takes the wake; then a copy out of the mapped array
 * and a table lookup per 2 MiB range of its accessed regions.  Through
 * sysfs a look would cost what a drain does, so there it is not offered.
 */
int damon_peek(struct sampler *s, const struct hot_table *t, uint64_t now_ns,
		      struct sampler_peek *ret)
{
	struct sampler_damon *d = SD(s);
	uint64_t after = d->feed_after > d->peek_after ? d->feed_after : d->peek_after;
	uint64_t pass = 0;
	double scale;
	int n;

	if (!d->feed_on)
		return -EOPNOTSUPP;
	/* Taken whatever follows: the loop watches the wake ring level-triggered. */
	d->feed->ops->wake_take(d->feed);
	if (!d->kdamond_pid)
		return -EOPNOTSUPP;
	n = d->feed->ops->read(d->feed, after, d->feed_buf, d->feed_cap, &pass);
	if (n == -EAGAIN)
		return 0;
	if (n < 0)
		return n;
	d->peek_after = pass;
	memset(ret, 0, sizeof(*ret));
	scale = hot_weight_scale(t, now_ns);
	for (int i = 0; i < n; i++) {
		const struct damon_feed_rec *g = &d->feed_buf[i];

		if (g->target < d->ntargets && g->end > g->start && g->nr_accesses)
			peek_region(t, d->targets[g->target], g, damon_acc_scale(d), scale, ret);
	}
	return 1;
}

struct known_fill {
	const pid_t *targets;
	uint32_t ntargets;
	__u8 *known;
	uint64_t range;	/* the table's */
	uint32_t mask;
	double scale;	/* unit / acc */
};

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int known_fill_one(const struct hot_entry_view *e, void *arg)
{
	const struct known_fill *k = arg;
	/* In the unit of the aggregations the program will look at (the
	 * pace's), which it compares without scaling them. */
	double units = e->heat * k->scale;
	const pid_t *p;

	/* The source records regions, so ranges; a base page entry is
	 * another source's, and too little heat reads as none anyway. */
	if (e->len != k->range || units < 1)
		return 0;
	p = bsearch(&e->pid, k->targets, k->ntargets, sizeof(pid_t), pid_cmp);
	if (!p)
		return 0;
	/* The sketch's ranges are its own (DAMON_RANGE_SIZE, 2 MiB, no
	 * smaller than a range): an entry writes its heat into each it
	 * covers. */
	for (uint64_t a = e->addr; a < e->addr + e->len; a += DAMON_RANGE_SIZE)
		damon_known_put(k->known, k->mask, (__u32)(p - k->targets), a,
				units < DAMON_KNOWN_MAX ? (__u32)units : DAMON_KNOWN_MAX);
	return 0;
}

void damon_known_fill(__u8 *known, uint32_t cells, uint32_t unit, const struct hot_table *t,
		      uint64_t at_ns, const pid_t *targets, uint32_t ntargets, double acc)
{
	struct known_fill k = { targets, ntargets, known, t->params.geom.range, cells - 1,
				unit / acc };

	memset(known, 0, cells * sizeof(*known));
	hot_foreach(t, at_ns, known_fill_one, &k);
}

/*
 * What the table knows, into the program's sketch, and one wake asked for.
 * Heat is taken at @at_ns, the caller's next regular tick: the least it
 * will be before then, so the program wakes tierd at least whenever
 * damon_peek() would find the same bytes fresh.  A walk over the table
 * (its occupancy bitmap skips empty slots) and the sketch written (32 KiB
 * up to 2 MiB, by the machine's memory), once an idle tick, in the unit
 * that fits the aggregations of this pace (damon_known_unit()).
 */
int damon_peek_arm(struct sampler *s, const struct hot_table *t, uint64_t at_ns,
			  uint64_t min_bytes, uint32_t share)
{
	struct sampler_damon *d = SD(s);
	uint32_t cells, unit = damon_known_unit(damon_max_nr_accesses(d));
	__u8 *known;
	int r;

	if (!d->feed_on)
		return -EOPNOTSUPP;
	r = d->feed->ops->arm(d->feed, 0, 0, 0);
	if (r < 0 || !t || !min_bytes || !d->kdamond_pid)
		return r;
	known = d->feed->ops->known(d->feed, &cells);
	if (!known)
		return -ENOTCONN;
	damon_known_fill(known, cells, unit, t, at_ns, d->targets, d->ntargets, damon_acc_scale(d));
	return d->feed->ops->arm(d->feed, min_bytes, share, unit);
}

int damon_peek_fd(struct sampler *s, uint32_t *gen)
{
	struct sampler_damon *d = SD(s);
	int fd;

	if (!d->feed_on)
		return -EOPNOTSUPP;
	fd = d->feed->ops->wake_fd(d->feed);
	if (fd < 0)
		return -EOPNOTSUPP;
	*gen = d->st.generation;
	return fd;
}
