// SPDX-License-Identifier: GPL-2.0-only
/*
 * DAMON source: a kdamond of tierd's own, made through the sysfs admin
 * interface, and its regions read from the damon:damon_aggregated tracepoint.
 *
 * Two ways to get the regions.  The kdamond is always made and steered
 * through sysfs (CONFIG_DAMON_SYSFS; writes only, a few per change of
 * targets or pace).  Its regions come from a damon_feed once one runs:
 * bpf/damon.bpf.c on the tracepoint keeps the regions of the
 * newest aggregation of tierd's kdamond in a mapped array, and a drain copies
 * them out -- no sysfs reads, no waiting, no schemes for the kdamond to
 * apply.  Before that, and where the feed cannot run (built without BPF, no
 * kernel BTF, no CAP_BPF/CAP_PERFMON), each target gets a `stat` scheme, a
 * drain asks the kdamond for "update_schemes_tried_regions" and the next
 * one reads the regions back from sysfs, so that no tick waits for the
 * kdamond (update.c).  Both hand the table the same thing, one
 * aggregation's nr_accesses per region per drain, so the policy's
 * thresholds mean the same with either.
 *
 * When the feed starts: at the first idle pace (set_pace() > 1), not at
 * start().  Loading the program parses the kernel's BTF; in the lab guest,
 * with the workload busy on every vCPU, loading it at start puts tierd's
 * first promotion 0.4-1.0 s later than the sysfs route's, and a tierd that
 * has just started has pages to move.  Once idle it
 * has nothing better to do, and from then on the cheap route is what runs
 * for as long as tierd does (steady state is where the cost matters).
 *
 * Why the tracepoint is worth a BPF program (in the lab guest, tierd at
 * rest next to a busy workload, 4 s ticks): the sysfs route costs a write
 * that sleeps in the kernel (the kdamond applies its schemes, up to an
 * aggregation interval plus the kernel's 100 ms poll; in a worker thread,
 * update.c), the kdamond's hold of DAMON's sysfs lock for all that time,
 * and three file reads per accessed region in directories the kernel
 * rebuilds for every update, ~150 open/read/close a tick there: most of
 * tierd's idle CPU on that route (perf: openat 29% of it).  The tracepoint
 * program costs the kdamond one compare per region of other kdamonds and a
 * 32-byte array write per region of ours.
 *
 * How it fails.
 *  - A target DAMON sees no access in: the vaddr check clears a page's
 *    accessed bit without a TLB flush (mm/damon/ops-common.c:
 *    damon_ptep_mkold() -> ptep_clear_young_notify(); x86 relies on "a context
 *    switch or a VM operation" to flush) and counts an access only when the
 *    CPU sets the bit again on a TLB refill.  While a process's hot pages stay
 *    TLB-resident -- it has a CPU to itself and the TLB never evicts them --
 *    every one of its regions reads nr_accesses 0 and nothing here turns hot.
 *    QEMU TCG's soft TLB (up to 2^20 entries, emptied only on a CR3 reload or
 *    a flush) does this to a busy process that owns a vCPU.  Hardware TLBs
 *    evict, so this should be rare there, but with PCID (entries survive
 *    context switches) and 2 MiB pages a small hot set may stay resident too
 *    (not measured).  tierd has no side-effect-free way to flush another
 *    process's TLB, so it lives with it; the lab test keeps a sleeper on every
 *    vCPU (tests/lab/damon-hot-region).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/hot_table.h"
#include "../fsutil.h"
#include "source.h"

/* Keeps feed_cap (max_nr_regions, or fit.c's most, + min_nr_regions *
 * max_targets) in 32 bits. */
#define FEED_MAX_TARGETS 65536

/*
 * What sampling costs here is the kdamond's CPU time: its page-table checks
 * every sampling interval, and, on the tracepoint, the program's copy and
 * look at every aggregation, which run in it.  utime + stime from
 * /proc/PID/stat once a drain; over the drain interval that is cost_pct.
 * A new kdamond (set_targets() turned it off and on) starts a new
 * baseline.  When tierd turns its kdamond off (no targets, or stop) it
 * reads the count one last time first (damon_cost_final()); when the kdamond
 * stops by itself (every target exited), its time after the last drain's
 * reading goes uncounted: the thread is gone.  tierd's own reads (the
 * sysfs route) are tierd's CPU, not counted here.
 */
static int kdamond_ticks(const struct sampler_damon *d, uint64_t *ret)
{
	unsigned long long utime, stime;
	char id[16], buf[1024];
	const char *p;

	snprintf(id, sizeof(id), "%d", (int)d->kdamond_pid);
	/* State, 10 fields, utime, stime. */
	if (fs_read_pid_stat(d->p.procfs_root ? d->p.procfs_root : "/proc", id, buf, sizeof(buf),
			     &p) < 0 ||
	    sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
		   &stime) != 2)
		return -EINVAL;
	*ret = utime + stime;
	return 0;
}

/* A new reading of the kdamond's CPU time: what it used since the last
 * reading of the same thread goes into the total (1, its seconds in
 * *@ret_sec); 0 for a first reading, -errno when there is none. */
static int cost_read(struct sampler_damon *d, double *ret_sec)
{
	uint64_t ticks;
	bool same;

	if (!d->kdamond_pid)
		return -ENOENT;
	if (kdamond_ticks(d, &ticks) < 0)
		return -EINVAL;
	same = d->cost_pid == d->kdamond_pid && ticks >= d->cost_ticks;
	if (same) {
		*ret_sec = (double)(ticks - d->cost_ticks) / (double)d->clk_tck;
		d->st.cpu_seconds += *ret_sec;
		d->st.cost_source = "kdamond";
	}
	d->cost_pid = d->kdamond_pid;
	d->cost_ticks = ticks;
	return same;
}

static void cost_update(struct sampler_damon *d, uint64_t now_ns)
{
	double sec;
	int r = cost_read(d, &sec);

	if (r < 0)
		return;
	if (r && now_ns > d->cost_ns)
		d->st.cost_pct = sec * 1e11 / (double)(now_ns - d->cost_ns);
	d->cost_ns = now_ns;
}

/* Before tierd turns its kdamond off: the time since the last reading into
 * the total (cost_pct stays the last drain interval's). */
void damon_cost_final(struct sampler_damon *d)
{
	double sec;

	cost_read(d, &sec);
	d->cost_pid = 0;
}

/* Asked from a tick: written now or by a later drain, never waited for. */
static int damon_set_targets(struct sampler *s, const pid_t *pids, size_t n)
{
	struct sampler_damon *d = SD(s);

	if (d->idx < 0)
		return -ENOTCONN;
	if (n > d->p.max_targets)
		return -E2BIG;
	if (n)	/* pids may be NULL then */
		memcpy(d->want_pids, pids, n * sizeof(*pids));
	d->want_n = n;
	d->want_targets = true;
	return damon_wishes_apply(d);
}

/* Every target exited, and the kdamond with them: the next set_targets()
 * turns it back on.  Read once: -EBUSY (the kdamond's own turn with the
 * sysfs lock) leaves the question to the next drain. */
static bool kdamond_gone(struct sampler_damon *d)
{
	unsigned int pace;
	bool on = true;

	if (damon_kdamond_state_once(d, d->idx, &on) < 0 || on)
		return false;
	damon_update_take(d, &pace);
	d->on = false;
	d->ntargets = 0;
	d->kdamond_pid = 0;
	return true;
}

/*
 * One aggregation into the table, never waiting: from the feed, or from
 * the tried_regions update the last drain asked for (update.c), asking
 * for the next one.
 */
static int damon_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	struct sampler_damon *d = SD(s);
	int records = 0, r;
	bool had = false;

	if (d->idx < 0)
		return -ENOTCONN;
	if (damon_update_busy(d, true))
		return 0;
	/* A change the worker wrote first, then the regions it asked for. */
	r = damon_change_take(d);
	if (r < 0)
		return r;
	if (d->on && !kdamond_gone(d) && !d->feed_on)
		records = damon_tried_take(d, t, now_ns, &had);
	r = damon_wishes_apply(d);
	if (records < 0 || r < 0)
		return records < 0 ? records : r;
	if (!d->on || damon_update_busy(d, false))
		return records;	/* off, or a change just handed to the worker */
	cost_update(d, now_ns);
	if (!d->kdamond_pid) {
		r = damon_kdamond_found(d);
		if (r < 0 || d->feed_on)
			return r < 0 ? r : records;
	}
	if (d->feed_on) {
		/* The last update read here came before the switch to the feed. */
		r = damon_tp_drain(d, t, now_ns);
		records += r > 0 ? r : 0;
	} else {
		r = damon_update_ask(d, !had);
	}
	return r < 0 ? r : records;
}

static void damon_stop(struct sampler *s)
{
	struct sampler_damon *d = SD(s);

	bool patient;

	if (d->idx < 0)
		return;
	patient = damon_sysfs_patient(true);	/* tierd is stopping, not ticking */
	damon_update_stop(d);
	d->want_targets = false;
	d->want_pace = 0;
	d->applying_targets = false;
	d->applying_pace = 0;
	d->feed_switch = false;
	damon_cost_final(d);
	if (damon_kdamond_remove(d, d->idx) == 0)
		unlink(d->owner_path);
	damon_sysfs_patient(patient);
	d->idx = -1;
	d->on = false;
	d->ntargets = 0;
	d->kdamond_pid = 0;
	damon_tp_stop(d);
	d->st.running = false;
	snprintf(d->st.why, sizeof(d->st.why), "stopped");
}

/* Readable when a drain came back without regions and they are there now
 * (update.c); -1 with the feed, whose drains always take what there is. */
static int damon_fd(struct sampler *s)
{
	struct sampler_damon *d = SD(s);

	return d->idx < 0 || d->feed_on ? -1 : d->upd.efd;
}

static void damon_describe(struct sampler *s, struct sampler_status *ret)
{
	*ret = SD(s)->st;
	ret->name = "damon";
}

static void damon_free(struct sampler *s)
{
	struct sampler_damon *d = SD(s);

	damon_stop(s);
	damon_update_fini(d);
	damon_feed_free(d->feed);
	free(d->feed_buf);
	free(d->apply_pids);
	free(d->want_pids);
	free(d->targets);
	free(d);
}

void sampler_damon_settle(struct sampler *s)
{
	struct sampler_damon *d = SD(s);

	damon_update_settle(d);
	damon_change_take(d);
}

static const struct sampler_ops damon_ops = {
	.name = "damon",
	.probe = damon_probe,
	.start = damon_start,
	.set_targets = damon_set_targets,
	.drain = damon_drain,
	.set_pace = damon_set_pace,
	.peek = damon_peek,
	.peek_arm = damon_peek_arm,
	.peek_fd = damon_peek_fd,
	.idle_into = damon_idle_into,
	.stop = damon_stop,
	.fd = damon_fd,
	.describe = damon_describe,
	.free = damon_free,
};

void sampler_damon_params_default(struct sampler_damon_params *p, const struct page_geom *g)
{
	memset(p, 0, sizeof(*p));
	p->geom = *g;
	p->sample_us = 5000;
	p->aggr_us = 100000;
	p->update_us = 1000000;
	p->min_nr_regions = 10;
	p->max_nr_regions = 1000;
	p->max_targets = 64;
}

int sampler_damon_new(const struct sampler_damon_params *p, struct sampler **ret)
{
	struct sampler_damon *d;

	if (!p->runtime_dir || !p->geom.base || !p->max_targets || !p->sample_us ||
	    p->aggr_us < p->sample_us || p->min_nr_regions < 3 ||
	    p->max_nr_regions < p->min_nr_regions || p->max_targets > FEED_MAX_TARGETS) {
		damon_feed_free(p->feed);
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		damon_feed_free(p->feed);
		return -ENOMEM;
	}
	d->feed = p->feed;
	/* DAMON keeps the regions of all targets under max_nr_regions (it stops
	 * splitting at half of it), but each target starts with min_nr_regions. */
	d->feed_cap = (p->region_bytes && p->max_nr_regions < DAMON_FIT_MAX_REGIONS ?
			       DAMON_FIT_MAX_REGIONS : p->max_nr_regions) +
		      p->min_nr_regions * p->max_targets;
	d->conf = (struct damon_attrs){ .sample_us = p->sample_us, .aggr_us = p->aggr_us,
					.min_nr_regions = p->min_nr_regions,
					.max_nr_regions = p->max_nr_regions };
	d->known_cells = damon_known_cells_for(p->mem_bytes ? p->mem_bytes :
					       (uint64_t)sysconf(_SC_PHYS_PAGES) *
					       (uint64_t)sysconf(_SC_PAGESIZE));
	d->targets = calloc(p->max_targets, sizeof(pid_t));
	d->want_pids = calloc(p->max_targets, sizeof(pid_t));
	d->apply_pids = calloc(p->max_targets, sizeof(pid_t));
	if (d->feed)
		d->feed_buf = calloc(d->feed_cap, sizeof(*d->feed_buf));
	d->upd.efd = -1;
	if (!d->targets || !d->want_pids || !d->apply_pids || (d->feed && !d->feed_buf) ||
	    damon_update_init(d) < 0) {
		damon_feed_free(d->feed);
		free(d->feed_buf);
		free(d->apply_pids);
		free(d->want_pids);
		free(d->targets);
		free(d);
		return -ENOMEM;
	}
	d->base.ops = &damon_ops;
	d->p = *p;
	d->st.cost_source = "none";	/* "kdamond" from the first measured drain */
	d->clk_tck = sysconf(_SC_CLK_TCK);
	if (d->clk_tck <= 0)
		d->clk_tck = 100;
	d->p.feed = NULL;
	d->idx = -1;
	d->pace = 1;
	snprintf(d->admin, sizeof(d->admin), "%s",
		 p->admin_dir ? p->admin_dir : "/sys/kernel/mm/damon/admin");
	snprintf(d->owner_path, sizeof(d->owner_path), "%s/%s", p->runtime_dir,
		 DAMON_OWNER_FILE);
	snprintf(d->st.why, sizeof(d->st.why), "not started");
	*ret = &d->base;
	return 0;
}
