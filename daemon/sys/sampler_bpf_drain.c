// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF sampler once started: keep the kernel's tgid map in step with
 * the targets, drain the (tgid, page) counts into the hotness table, and
 * adapt the sampling period to the CPU budget (sampler_bpf.c's top says
 * how the cost is measured).
 */
#ifdef TIERD_HAVE_BPF_SKEL
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "pmu_attr.h"
#include "sample_period.h"
#include "sampler_bpf_int.h"

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int sampler_bpf_set_targets(struct sampler *s, const pid_t *pids, size_t n)
{
	struct sampler_bpf *b = SB(s);
	int fd, r = 0;
	__u8 one = 1;

	if (!b->skel)
		return -ENOTCONN;
	if (n > b->p.max_targets)
		return -E2BIG;
	fd = bpf_map__fd(b->skel->maps.hot_tgids);
	/* Both lists are sorted: one merge pass finds who left and who came. */
	for (size_t i = 0; i < b->ntargets; i++)
		if (!n || !bsearch(&b->targets[i], pids, n, sizeof(*pids), pid_cmp)) {
			__u32 k = b->targets[i];

			bpf_map_delete_elem(fd, &k);
		}
	for (size_t i = 0; i < n; i++) {
		__u32 k = pids[i];

		if (b->ntargets &&
		    bsearch(&pids[i], b->targets, b->ntargets, sizeof(*pids), pid_cmp))
			continue;
		if (bpf_map_update_elem(fd, &k, &one, BPF_ANY) < 0 && r == 0)
			r = -errno;
	}
	if (n) /* pids may be NULL when there are none (UBSan) */
		memcpy(b->targets, pids, n * sizeof(*pids));
	b->ntargets = n;
	return r;
}

static int read_stats(struct sampler_bpf *b, uint64_t *ret)
{
	int fd = bpf_map__fd(b->skel->maps.hot_stats);

	for (__u32 i = 0; i < HOT_BPF_NR_STATS; i++) {
		if (bpf_map_lookup_elem(fd, &i, b->percpu) < 0)
			return -errno;
		ret[i] = 0;
		for (int c = 0; c < b->npossible; c++)
			ret[i] += b->percpu[c];
	}
	return 0;
}

static void adapt_period(struct sampler_bpf *b, uint64_t samples, uint64_t now_ns)
{
	struct sample_period_params sp = {
		.budget_pct = b->p.cpu_budget_pct,
		.min_period = b->p.period_min,
		.max_period = b->p.period_max,
	};
	uint64_t interval = b->last_ns && now_ns > b->last_ns ? now_ns - b->last_ns : 0;
	uint64_t cost = samples * SAMPLE_COST_EST_NS, next;

	if (b->use_bpf_stats) {
		struct bpf_prog_info info = {};
		__u32 ilen = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(b->skel->progs.hot_sample), &info,
					   &ilen) == 0) {
			cost = info.run_time_ns - b->last_run_ns;
			b->last_run_ns = info.run_time_ns;
		}
	}
	/* The budget is a share of one CPU, summed over all the CPUs sampled. */
	b->st.cost_pct = sample_cost_pct(cost, interval, 1);
	b->st.cpu_seconds += (double)cost / 1e9;
	if ((b->p.fault_pid > 0 && !b->p.fault_adapt) || !interval)
		return;	/* the test event samples every fault by design */
	next = sample_period_next(&sp, b->period, cost, interval, 1);
	if (b->p.fault_pid <= 0)
		next = pmu_attr_period(&b->ev, next);
	if (next == b->period)
		return;
	for (int i = 0; i < b->nfds; i++)
		if (ioctl(b->fds[i], PERF_EVENT_IOC_PERIOD, &next) < 0 && i == 0)
			return;	/* keep the period the events have */
	b->period = next;
}

/* One drained count into the table, as a range entry when the page is part
 * of a PMD THP.  A page already covered by a range entry folds without a
 * probe; a failed probe (the process exited) records the base page. */
static int record(struct sampler_bpf *b, struct hot_table *t, pid_t pid, uint64_t addr,
		  uint64_t count, uint64_t now_ns)
{
	const struct page_geom *g = &t->params.geom;
	uint64_t len = g->base;
	int n;

	if (b->thp_on && hot_entry_len(t, pid, addr) != g->range &&
	    thp_is_huge(&b->thp, pid, addr) == 1) {
		addr = page_geom_range_base(g, addr);
		len = g->range;
	}
	n = hot_record(t, pid, addr, len, (double)count, now_ns);
	return n > 0 ? n : 0;
}

/*
 * Each (tgid, page) count of the kernel's map to @fn, read in batches;
 * @take: deleted as they are read (a drain), else left (a peek).  0, or a
 * negative errno.
 */
static int walk_counts(struct sampler_bpf *b, bool take,
		       void (*fn)(struct sampler_bpf *b, pid_t pid, uint64_t addr, uint64_t count,
				  void *arg),
		       void *arg)
{
	int fd = bpf_map__fd(b->skel->maps.hot_counts);
	__u32 in_batch = 0, out_batch = 0;
	bool first = true;

	for (;;) {
		__u32 count = DRAIN_BATCH;
		int r = take ? bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in_batch,
							      &out_batch, b->keys, b->vals,
							      &count, NULL) :
			       bpf_map_lookup_batch(fd, first ? NULL : &in_batch, &out_batch,
						    b->keys, b->vals, &count, NULL);
		int err = r < 0 ? errno : 0;

		for (__u32 i = 0; i < count; i++)
			fn(b, (pid_t)b->keys[i].tgid, b->keys[i].page << b->p.geom.shift,
			   b->vals[i], arg);
		if (r < 0 && err == ENOENT)
			return 0;	/* the whole map was walked */
		if (r < 0)
			return -err;
		first = false;
		in_batch = out_batch;
	}
}

struct peek_walk {
	const struct hot_table *t;
	double scale;
	struct sampler_peek *ret;
	int seen;
};

/* One count against the table: its bytes, the range's where the table has
 * a range entry there or the page is part of a PMD THP, else the page's. */
static void peek_one(struct sampler_bpf *b, pid_t pid, uint64_t addr, uint64_t count, void *arg)
{
	struct peek_walk *w = arg;
	const struct page_geom *g = &w->t->params.geom;
	uint64_t len = g->base;

	if (hot_entry_len(w->t, pid, addr) == g->range ||
	    (b->thp_on && thp_is_huge(&b->thp, pid, addr) == 1))
		len = g->range;
	w->seen = 1;
	sampler_peek_add(w->ret, w->t, pid, addr, len, (double)count, w->scale);
}

/*
 * What the next drain would fold, without folding it: the memory of the
 * counts not drained yet, and of it the part whose heat in the table is
 * below half of what the drain adds (the DAMON source's rule,
 * sys/damon/wake.c), a sampled page in a range standing for the range.  A
 * batch read of the count map, no table change: what an idle daemon
 * affords between its ticks.  1, or 0 when nothing was sampled since.
 */
int sampler_bpf_peek(struct sampler *s, const struct hot_table *t, uint64_t now_ns,
		     struct sampler_peek *ret)
{
	struct sampler_bpf *b = SB(s);
	struct peek_walk w = { .t = t, .ret = ret };
	int r;

	if (!b->skel)
		return -ENOTCONN;
	memset(ret, 0, sizeof(*ret));
	w.scale = hot_weight_scale(t, now_ns);
	r = walk_counts(b, false, peek_one, &w);
	return r < 0 ? r : w.seen;
}

struct drain_walk {
	struct hot_table *t;
	uint64_t now_ns;
	int records;
};

static void drain_one(struct sampler_bpf *b, pid_t pid, uint64_t addr, uint64_t count, void *arg)
{
	struct drain_walk *w = arg;

	w->records += record(b, w->t, pid, addr, count, w->now_ns);
}

int sampler_bpf_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	struct sampler_bpf *b = SB(s);
	struct drain_walk w = { .t = t, .now_ns = now_ns };
	uint64_t stats[HOT_BPF_NR_STATS];
	int r;

	if (!b->skel)
		return -ENOTCONN;
	if (b->thp_on)
		thp_reset(&b->thp);
	r = walk_counts(b, true, drain_one, &w);
	if (r < 0)
		return r;
	if (read_stats(b, stats) == 0) {
		uint64_t samples = stats[HOT_BPF_SAMPLES] - b->last_samples;

		b->last_samples = stats[HOT_BPF_SAMPLES];
		b->st.samples = stats[HOT_BPF_COUNTED];
		b->st.lost = stats[HOT_BPF_UPDATE_FAILED];
		adapt_period(b, samples, now_ns);
	}
	b->last_ns = now_ns;
	b->st.records += w.records;
	b->st.drains++;
	return w.records;
}

#endif
