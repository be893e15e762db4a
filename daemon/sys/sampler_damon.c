// SPDX-License-Identifier: GPL-2.0-only
/*
 * DAMON source: a kdamond of tierd's own, made through the sysfs admin
 * interface, and its regions read from the damon:damon_aggregated tracepoint.
 *
 * Two ways to get the regions.  The kdamond is always made and steered
 * through sysfs (CONFIG_DAMON_SYSFS; writes only, a few per change of
 * targets or pace).  Its regions come from a damon_feed once one runs:
 * bpf/damon.bpf.c on the tracepoint keeps the accessed regions of the
 * newest aggregation of tierd's kdamond in a mapped array, and a drain copies
 * them out -- no sysfs reads, no waiting, no schemes for the kdamond to
 * apply.  Before that, and where the feed cannot run (built without BPF, no
 * kernel BTF, no CAP_BPF/CAP_PERFMON), each target gets a `stat` scheme and
 * a drain writes "update_schemes_tried_regions" and reads the regions back
 * from sysfs.  Both hand the table the same thing, one aggregation's
 * nr_accesses per region per drain, so the policy's thresholds mean the same
 * with either.
 *
 * When the feed starts: at the first idle pace (set_pace() > 1), not at
 * start().  Loading the program parses the kernel's BTF; in the lab guest,
 * with the workload busy on every vCPU, loading it at start put tierd's first
 * promotion 0.4-1.0 s later than the sysfs route's (three A/B pairs in one
 * boot), and a tierd that has just started has pages to move.  Once idle it
 * has nothing better to do, and from then on the cheap route is what runs
 * for as long as tierd does (steady state is where the cost matters).
 *
 * Why the tracepoint is worth a BPF program (measured in the lab guest,
 * tierd at rest next to a busy workload, 4 s ticks): the sysfs route costs
 * a blocking write (the kdamond applies its schemes, up to an aggregation
 * interval plus the kernel's 100 ms poll) and three file reads per accessed
 * region in directories the kernel rebuilds for every update, ~150
 * open/read/close a tick there; that was most of tierd's idle CPU (perf:
 * openat 29% of it).  The tracepoint program costs the kdamond one compare
 * per region of other kdamonds and a 24-byte array write per accessed region
 * of ours.
 *
 * The sysfs route.  A tried region does not say which target it belongs to.
 * That is solved with one scheme per target, each excluding every other
 * target with a `target` filter (matching=N on damon_target_idx=i), so
 * scheme i's regions are target i's.  The scheme's access_pattern maxima
 * must be set explicitly (sysfs defaults them to 0, which matches nothing
 * but idle, zero-sized regions).  Cost per drain: the blocking state write,
 * then three small sysfs reads per accessed region: ~3000 reads for one
 * target at the default 1000 regions, a few milliseconds.  In the lab guest
 * (TCG) this found the 64 MiB hot region of a 512 MiB process in 5 to 9
 * drains (2 s).
 *
 * Ownership.  The DAMON sysfs interface recreates every kdamond directory when
 * nr_kdamonds is written (and refuses while any runs), so tierd only adds its
 * kdamond when nr_kdamonds is 0, i.e. nobody else configured DAMON through
 * sysfs; otherwise it says so and the daemon uses another source.  Kernel
 * modules such as damon_reclaim run their own kdamonds outside sysfs and are
 * not affected.  The record <runtime_dir>/damon.owner holds "tierd_pid index
 * kdamond_pid"; at start, a record left by a dead tierd whose kdamond index
 * still runs with the recorded kdamond pid is turned off and removed.  A
 * kdamond keeps running after its creator dies, so this is what cleans up
 * after a kill -9.
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
 *  - -EBUSY from DAMON's trylocked sysfs files (see busy_backoff()): retried
 *    for up to DAMON_BUSY_WAIT_US, then the drain fails with -EBUSY.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/hotness.h"
#include "fsutil.h"
#include "sampler_damon.h"

struct sampler_damon {
	struct sampler base;
	struct sampler_damon_params p;
	char admin[256];
	char owner_path[512];
	int idx;		/* our kdamond's index, -1 when none */
	bool on;
	unsigned int pace;	/* the sampling interval is p.sample_us times this */
	char stale_note[160];	/* what clean_stale() removed, for the status */
	pid_t *targets;
	size_t ntargets;
	struct damon_feed *feed;	/* NULL: none was given */
	bool feed_tried;	/* feed_start() ran since start */
	bool feed_on;		/* regions come from the feed, no schemes */
	char feed_note[160];	/* where regions come from, for the status */
	pid_t kdamond_pid;	/* our running kdamond's, 0 unknown or off */
	uint64_t feed_after;	/* aggregations up to this one: folded or stale */
	uint64_t peek_after;	/* ... and up to this one looked at by a peek */
	bool feed_fresh;	/* followed, nothing folded since: worth a wait */
	struct damon_feed_rec *feed_buf;
	uint32_t feed_cap;
	uint32_t known_cells;	/* the sketch's size, for the feed's start */
	/* The kdamond's CPU time at the last drain (cost_update()). */
	pid_t cost_pid;
	uint64_t cost_ticks, cost_ns;
	long clk_tck;
	struct sampler_status st;
};

#define SD(s) ((struct sampler_damon *)(s))

/* The first drain after new targets polls the feed this often, for up to two
 * aggregation intervals and this much more. */
#define FEED_POLL_US 5000
#define FEED_WAIT_SLACK_US 100000

/* Keeps feed_cap (max_nr_regions + min_nr_regions * max_targets) in 32 bits. */
#define FEED_MAX_TARGETS 65536

/*
 * Most DAMON sysfs files take damon_sysfs_lock with mutex_trylock() and fail
 * with -EBUSY when it is held (mm/damon/sysfs.c: state_show(), state_store(),
 * pid_show(), nr_*_store(); "avoid deadlock due to concurrent state_store").
 * A running kdamond takes the lock after every sampling interval
 * (damon_sysfs_cmd_request_callback()), so a read or write of ours collides
 * with it now and then: in the lab guest about one drain in 300.  That is not
 * an error; try again for up to DAMON_BUSY_WAIT_US in all, with doubling sleeps.
 */
#define BUSY_FIRST_US 1000	/* first sleep after -EBUSY */
#define BUSY_MAX_US 64000	/* longest single sleep */

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static int busy_backoff(uint64_t *slept_us)
{
	uint64_t us = *slept_us ? *slept_us : BUSY_FIRST_US;

	if (us > BUSY_MAX_US)
		us = BUSY_MAX_US;
	if (*slept_us >= DAMON_BUSY_WAIT_US)
		return -EBUSY;
	sleep_us(us);
	*slept_us += us;
	return 0;
}

/*
 * Read @path, relative to the directory @dfd (AT_FDCWD: a full path), into
 * @buf without its newline; @rel, relative to the admin directory, is what
 * the before_io test hook sees.  -EBUSY is retried (busy_backoff()).
 */
static int sysfs_read_at(const struct sampler_damon *d, int dfd, const char *rel,
			 const char *path, char *buf, size_t len)
{
	uint64_t slept_us = 0;
	int r;

	do {
		r = d->p.before_io ? d->p.before_io(rel, false, d->p.before_io_arg) : 0;
		if (r == 0)
			r = fs_read_at(dfd, path, buf, len, NULL);
	} while (r == -EBUSY && busy_backoff(&slept_us) == 0);
	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int sysfs_read_u64_at(const struct sampler_damon *d, int dfd, const char *rel,
			     const char *path, uint64_t *ret)
{
	char buf[32], *end;
	int r = sysfs_read_at(d, dfd, rel, path, buf, sizeof(buf));

	if (r < 0)
		return r;
	*ret = strtoull(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}

static int sysfs_read(const struct sampler_damon *d, const char *rel, char *buf, size_t len)
{
	char full[768];
	int r = fs_path(full, sizeof(full), d->admin, rel);

	return r < 0 ? r : sysfs_read_at(d, AT_FDCWD, rel, full, buf, len);
}

static int sysfs_read_u64(const struct sampler_damon *d, const char *rel, uint64_t *ret)
{
	char full[768];
	int r = fs_path(full, sizeof(full), d->admin, rel);

	return r < 0 ? r : sysfs_read_u64_at(d, AT_FDCWD, rel, full, ret);
}

static int sysfs_write(struct sampler_damon *d, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sysfs_write_once(struct sampler_damon *d, const char *rel, const char *value)
{
	char path[768];
	size_t len = strlen(value);
	ssize_t n;
	int fd;

	if (d->p.before_io) {
		int r = d->p.before_io(rel, true, d->p.before_io_arg);

		if (r < 0)
			return r;
	}
	snprintf(path, sizeof(path), "%s/%s", d->admin, rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

static int sysfs_write(struct sampler_damon *d, const char *value, const char *fmt, ...)
{
	uint64_t slept_us = 0;
	char rel[512];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	while ((r = sysfs_write_once(d, rel, value)) == -EBUSY && busy_backoff(&slept_us) == 0)
		;
	if (r == 0 && d->p.on_write)
		d->p.on_write(rel, value, d->p.on_write_arg);
	return r;
}

static int sysfs_write_u64(struct sampler_damon *d, uint64_t v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sysfs_write_u64(struct sampler_damon *d, uint64_t v, const char *fmt, ...)
{
	char rel[512], val[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	return sysfs_write(d, val, "%s", rel);
}

/* ---- the ownership record ---- */

struct owner {
	pid_t tierd_pid;
	int idx;
	pid_t kdamond_pid;	/* 0 while not yet on */
};

static int owner_read(const struct sampler_damon *d, struct owner *o)
{
	FILE *f = fopen(d->owner_path, "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%d %d %d", &o->tierd_pid, &o->idx, &o->kdamond_pid);
	fclose(f);
	return n == 3 && o->idx >= 0 ? 0 : -EINVAL;
}

static int owner_write(const struct sampler_damon *d, pid_t kdamond_pid)
{
	char tmp[600];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", d->owner_path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%d %d %d\n", (int)getpid(), d->idx, (int)kdamond_pid);
	if (fclose(f) != 0 || rename(tmp, d->owner_path) != 0) {
		int r = -errno;

		unlink(tmp);
		return r;
	}
	return 0;
}

static bool pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static int kdamond_state(const struct sampler_damon *d, int idx, bool *ret_on)
{
	char rel[64], buf[32];
	int r;

	snprintf(rel, sizeof(rel), "kdamonds/%d/state", idx);
	r = sysfs_read(d, rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	*ret_on = strcmp(buf, "on") == 0;
	return 0;
}

/* Our kdamond's pid into d->kdamond_pid: 0 when it is off (sysfs shows -1). */
static int kdamond_pid_read(struct sampler_damon *d)
{
	uint64_t pid = 0;
	char rel[64];
	int r;

	snprintf(rel, sizeof(rel), "kdamonds/%d/pid", d->idx);
	r = sysfs_read_u64(d, rel, &pid);
	d->kdamond_pid = r == 0 && pid > 0 && pid < INT32_MAX ? (pid_t)pid : 0;
	return r;
}

/* Take our kdamond away: off, then drop its directory.  Only ever our index. */
static int kdamond_remove(struct sampler_damon *d, int idx)
{
	uint64_t nr = 0;
	bool on = false;
	int r;

	if (kdamond_state(d, idx, &on) == 0 && on) {
		r = sysfs_write(d, "off", "kdamonds/%d/state", idx);
		if (r < 0)
			return r;
	}
	r = sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr);
	if (r < 0)
		return r;
	/* Ours is the last index (we only add when there were none before). */
	if (nr == (uint64_t)idx + 1)
		return sysfs_write_u64(d, idx, "kdamonds/nr_kdamonds");
	return 0;
}

/*
 * A record left by an earlier tierd: clean up after it if it is dead and the
 * kdamond at its index is still the one it recorded.  0 when there is nothing
 * (left) to do, -EBUSY when a live tierd owns it.
 */
static int clean_stale(struct sampler_damon *d, char *why, size_t len)
{
	struct owner o;
	uint64_t kpid = 0, nr = 0;
	int r = owner_read(d, &o);

	if (r == -ENOENT)
		return 0;
	if (r == 0 && o.tierd_pid != getpid() && pid_alive(o.tierd_pid)) {
		snprintf(why, len, "kdamond %d belongs to another running tierd (pid %d, %s)",
			 o.idx, o.tierd_pid, d->owner_path);
		return -EBUSY;
	}
	if (r == 0 && sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr) == 0 &&
	    (uint64_t)o.idx < nr) {
		char rel[64];
		bool on = false;

		snprintf(rel, sizeof(rel), "kdamonds/%d/pid", o.idx);
		/* Off kdamonds show pid -1; an on one must be the recorded one. */
		if (kdamond_state(d, o.idx, &on) == 0 &&
		    (!on || (sysfs_read_u64(d, rel, &kpid) == 0 && o.kdamond_pid > 0 &&
			     kpid == (uint64_t)o.kdamond_pid))) {
			r = kdamond_remove(d, o.idx);
			if (r < 0) {
				snprintf(why, len, "removing the kdamond %d a crashed tierd left: %s",
					 o.idx, strerror(-r));
				return r;
			}
			snprintf(d->stale_note, sizeof(d->stale_note),
				 "; removed kdamond %d (pid %d) left by tierd pid %d", o.idx,
				 o.kdamond_pid, o.tierd_pid);
		}
	}
	unlink(d->owner_path);
	return 0;
}

/* The status line; a long one is cut short, which is fine for a status. */
static void status_why(struct sampler_damon *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void status_why(struct sampler_damon *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->st.why, sizeof(d->st.why), fmt, ap);
	va_end(ap);
}

static void status_running(struct sampler_damon *d)
{
	status_why(d, "kdamond %d (pid %d), vaddr, %zu target(s), %llu us sampling, "
		   "%llu us aggregation, %s", d->idx, (int)d->kdamond_pid, d->ntargets,
		   (unsigned long long)d->p.sample_us, (unsigned long long)d->p.aggr_us,
		   d->feed_note);
}

/* ---- the pace ---- */

/*
 * The aggregation interval at @pace.  The sampling interval stretches by
 * the whole of @pace, the aggregation interval with it only as far as
 * IDLE_AGGR_SAMPLES sampling intervals, and never below the configured
 * one.  The kdamond's cost is its sampling; an aggregation costs a merge,
 * a split and a tracepoint event per region, and it is where a moved hot
 * set first shows: the program's wake comes at an aggregation's end.  At
 * the defaults (5 ms / 100 ms) and the idle slowdown of 10 that is 250 ms
 * aggregations instead of 1 s.  Measured in the lab (the bench's shift
 * workload, three A/B pairs in one boot): the first pages of a hot set that
 * moved while tierd was at rest went 0.32-0.71 s after the move instead of
 * 0.94-1.25 s, 90% of it 1.50-1.67 s instead of 1.82-2.86 s; the kdamond at
 * rest used 2.0-2.4% of a vCPU against 2.0-2.9% (three more pairs).
 */
#define IDLE_AGGR_SAMPLES 5

static uint64_t aggr_us_at(const struct sampler_damon *d, unsigned int pace)
{
	uint64_t aggr = d->p.aggr_us * pace, most = IDLE_AGGR_SAMPLES * d->p.sample_us * pace;

	if (aggr <= most)
		return aggr;
	return most > d->p.aggr_us ? most : d->p.aggr_us;
}

/*
 * What an aggregation's nr_accesses at the current pace is worth in the
 * configured pace's: the table's heat and the policy's thresholds keep one
 * unit, the most a region can read at the configured intervals (aggr /
 * sample, as the kernel has it: damon_max_nr_accesses()).  At pace 10 of
 * the defaults a region reads 0-5 instead of 0-20, so each access counts
 * 4.  The kernel converts the counts of the aggregation under way when new
 * intervals are committed (mm/damon/core.c:
 * damon_update_monitoring_results()), which happens just before that
 * aggregation's tracepoint events; so every aggregation read after
 * set_pace() returns is in the new pace's unit.
 */
static uint64_t max_nr_accesses(const struct sampler_damon *d)
{
	return aggr_us_at(d, d->pace) / (d->p.sample_us * d->pace);
}

static double acc_scale(const struct sampler_damon *d)
{
	uint64_t now = max_nr_accesses(d);

	return now ? (double)(d->p.aggr_us / d->p.sample_us) / (double)now : 1.0;
}

/* ---- the feed ---- */

/* Where regions come from, before the first idle pace. */
static void feed_note_initial(struct sampler_damon *d)
{
	snprintf(d->feed_note, sizeof(d->feed_note), "%s", d->feed ?
		 "regions from tried_regions until tierd is idle, then from the "
		 "damon_aggregated tracepoint" : "regions from tried_regions");
}

/* Start the feed; when it cannot run, regions stay on sysfs. */
static void feed_start(struct sampler_damon *d)
{
	char why[SAMPLER_WHY_MAX] = "";

	d->feed_tried = true;
	d->st.generation++;
	if (d->feed->ops->start(d->feed, d->feed_cap, d->known_cells, why, sizeof(why)) < 0) {
		snprintf(d->feed_note, sizeof(d->feed_note),
			 "regions from tried_regions (no tracepoint feed: %.100s)", why);
		return;
	}
	d->feed_on = true;
	snprintf(d->feed_note, sizeof(d->feed_note),
		 "regions from the damon_aggregated tracepoint");
}

static void feed_stop(struct sampler_damon *d)
{
	if (d->feed)
		d->feed->ops->stop(d->feed);
	d->feed_on = false;
	d->feed_tried = false;
}

/*
 * Follow kdamond @pid (0: none).  The aggregation in progress may still
 * hold the old targets (their regions are indexed by target), so only
 * those that begin after this are folded.  At full pace the next drain
 * waits for the first of them (feed_drain()).
 */
static int feed_follow(struct sampler_damon *d, pid_t pid)
{
	uint64_t pass = 0;
	int r = d->feed->ops->follow(d->feed, pid, pid > 0 ? (uint32_t)d->ntargets : 0, &pass);

	if (r < 0)
		return r;
	d->feed_after = pass;
	d->peek_after = pass;
	d->feed_fresh = pid > 0 && d->pace == 1;
	return 0;
}

/*
 * Fold the newest aggregation the feed has, if it is one not folded yet.
 * The first drain after new targets waits for one (the aggregation in
 * progress at the change is skipped, so up to two aggregation intervals), as
 * the sysfs route waits at every drain: without it, the first heat of a new
 * process -- tierd's first promotion after it starts -- comes a tick later.
 */
static int feed_drain(struct sampler_damon *d, struct hot_table *t, uint64_t now_ns)
{
	uint64_t pass = 0, waited_us = 0;
	uint64_t wait_us = 2 * aggr_us_at(d, d->pace) + FEED_WAIT_SLACK_US;
	struct damon_feed_counters c;
	double acc = acc_scale(d);
	int records = 0, n;

	while ((n = d->feed->ops->read(d->feed, d->feed_after, d->feed_buf, d->feed_cap,
				       &pass)) == -EAGAIN && d->feed_fresh && waited_us < wait_us) {
		sleep_us(FEED_POLL_US);
		waited_us += FEED_POLL_US;
	}
	d->feed_fresh = false;	/* one wait per change, even a vain one */
	if (n == -EAGAIN)
		return 0;	/* no aggregation ended since the last drain */
	if (n < 0)
		return n;
	d->feed_after = pass;
	for (int i = 0; i < n; i++) {
		const struct damon_feed_rec *g = &d->feed_buf[i];
		int r;

		if (g->target >= d->ntargets || g->end <= g->start)
			continue;
		r = hot_record(t, d->targets[g->target], g->start, g->end - g->start,
			       g->nr_accesses * acc, now_ns);
		if (r > 0)
			records += r;
	}
	d->feed->ops->counters(d->feed, &c);
	d->st.samples += (uint64_t)n;
	d->st.lost = c.overflow;
	d->st.records += records;
	d->st.drains++;
	return records;
}

/* Region @g of @pid against the table, as the program does it against the
 * sketch (damon.h: damon_known_look(), DAMON_LOOK_RANGES ranges at most):
 * its bytes in @ret->accessed_bytes, and in @ret->new_bytes those of its
 * ranges whose heat in the table is below half of what this region alone
 * would add to them (hot_record()'s weight: nr_accesses, times @acc,
 * acc_scale(), into the configured pace's unit, times the share of the
 * range the region covers).  A range hot for a while holds about four
 * aggregations' worth at 4 s idle ticks and a 10 s half-life; the half
 * keeps out ranges whose count only jumps for one aggregation (in the lab,
 * a converged hot set's edges woke tierd now and then with the whole
 * weight as the bar). */
static void peek_region(const struct hot_table *t, pid_t pid, const struct damon_feed_rec *g,
			double acc, double scale, struct sampler_peek *ret)
{
	for (int i = 0; i < DAMON_LOOK_RANGES; i++) {
		__u64 lo, bytes, stands;
		double w;

		if (!damon_look_range(g->start, g->end, i, &lo, &bytes, &stands) ||
		    lo >= HOT_ADDR_LIMIT)
			break;
		w = g->nr_accesses * acc * (double)bytes / HOT_HUGE_SIZE;
		ret->accessed_bytes += bytes * stands;
		if (2 * hot_weight(t, pid, lo) < w * scale)
			ret->new_bytes += bytes * stands;
	}
}

/* ---- ops ---- */

static int damon_probe(struct sampler *s, char *why, size_t len)
{
	struct sampler_damon *d = SD(s);
	uint64_t nr;
	struct owner o;
	int r = sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr);

	if (r < 0) {
		snprintf(why, len, "no DAMON sysfs at %s (%s): needs CONFIG_DAMON_SYSFS=y",
			 d->admin, strerror(-r));
		return r == -ENOENT ? -ENODEV : r;
	}
	if (nr == 0)
		return 0;
	/* Only a kdamond a dead tierd left behind may be there (start cleans it). */
	if (nr == 1 && owner_read(d, &o) == 0 && o.idx == 0 &&
	    (o.tierd_pid == getpid() || !pid_alive(o.tierd_pid)))
		return 0;
	snprintf(why, len, "%llu kdamond(s) in %s/kdamonds that tierd did not create; "
		 "adding one would reset them, so tierd leaves DAMON alone",
		 (unsigned long long)nr, d->admin);
	return -EBUSY;
}

static int damon_configure(struct sampler_damon *d)
{
	const char *c = "kdamonds/%d/contexts/0/%s";
	char rel[256];
	int r;

#define W(val, sub)                                                           \
	do {                                                                  \
		snprintf(rel, sizeof(rel), c, d->idx, sub);                   \
		r = sysfs_write(d, val, "%s", rel);                           \
		if (r < 0)                                                    \
			return r;                                             \
	} while (0)
#define WU(val, sub)                                                          \
	do {                                                                  \
		snprintf(rel, sizeof(rel), c, d->idx, sub);                   \
		r = sysfs_write_u64(d, val, "%s", rel);                       \
		if (r < 0)                                                    \
			return r;                                             \
	} while (0)

	r = sysfs_write(d, "1", "kdamonds/%d/contexts/nr_contexts", d->idx);
	if (r < 0)
		return r;
	W("vaddr", "operations");
	WU(d->p.sample_us, "monitoring_attrs/intervals/sample_us");
	WU(d->p.aggr_us, "monitoring_attrs/intervals/aggr_us");
	WU(d->p.update_us, "monitoring_attrs/intervals/update_us");
	WU(d->p.min_nr_regions, "monitoring_attrs/nr_regions/min");
	WU(d->p.max_nr_regions, "monitoring_attrs/nr_regions/max");
#undef W
#undef WU
	return 0;
}

static int damon_start(struct sampler *s, char *why, size_t len)
{
	struct sampler_damon *d = SD(s);
	uint64_t nr = 0;
	int r;

	if (d->idx >= 0)
		return -EALREADY;
	d->stale_note[0] = '\0';
	r = clean_stale(d, why, len);
	if (r < 0)
		return r;
	r = damon_probe(s, why, len);
	if (r < 0)
		return r;
	r = sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr);
	if (r == 0 && nr != 0)
		r = -EBUSY;	/* raced with someone else */
	if (r < 0) {
		snprintf(why, len, "kdamonds appeared in %s while starting", d->admin);
		return r;
	}
	feed_note_initial(d);
	d->idx = 0;
	/* Record first: a crash from here on is cleaned up by the next start. */
	r = owner_write(d, 0);
	if (r < 0) {
		snprintf(why, len, "cannot write %s: %s", d->owner_path, strerror(-r));
		d->idx = -1;
		return r;
	}
	r = sysfs_write(d, "1", "kdamonds/nr_kdamonds");
	if (r == 0)
		r = damon_configure(d);
	if (r < 0) {
		snprintf(why, len, "configuring kdamond 0 in %s: %s", d->admin, strerror(-r));
		kdamond_remove(d, 0);
		unlink(d->owner_path);
		d->idx = -1;
		return r;
	}
	/* The configured intervals, whatever pace an earlier start left. */
	d->pace = 1;
	d->st.running = true;
	/* Said once, in the daemon's "Hotness source" line (sampler_pick()). */
	snprintf(why, len, "%s%s", d->feed_note, d->stale_note);
	status_why(d, "kdamond %d, vaddr, %llu us sampling, %llu us aggregation, "
		   "no targets yet; %s%s", d->idx, (unsigned long long)d->p.sample_us,
		   (unsigned long long)d->p.aggr_us, d->feed_note, d->stale_note);
	return 0;
}

static int write_targets(struct sampler_damon *d, const pid_t *pids, size_t n)
{
	const char *ctx = "kdamonds/%d/contexts/0";
	char base[128];
	int r, k = d->idx;

	snprintf(base, sizeof(base), ctx, k);
	r = sysfs_write_u64(d, n, "%s/targets/nr_targets", base);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = sysfs_write_u64(d, (uint64_t)pids[i], "%s/targets/%zu/pid_target", base, i);
	if (r == 0)
		r = sysfs_write_u64(d, d->feed_on ? 0 : n, "%s/schemes/nr_schemes", base);
	for (size_t i = 0; r == 0 && !d->feed_on && i < n; i++) {
		char sc[192];

		snprintf(sc, sizeof(sc), "%s/schemes/%zu", base, i);
		r = sysfs_write(d, "stat", "%s/action", sc);
		/*
		 * Every region with at least one access matches (the maxima
		 * must be explicit).  An idle region adds no heat to the
		 * table, and reading it costs three sysfs reads a drain: with
		 * hundreds of regions a target, skipping the idle ones is
		 * what keeps a drain cheap.
		 */
		if (r == 0)
			r = sysfs_write(d, "0", "%s/access_pattern/sz/min", sc);
		if (r == 0)
			r = sysfs_write_u64(d, UINT64_MAX, "%s/access_pattern/sz/max", sc);
		if (r == 0)
			r = sysfs_write(d, "1", "%s/access_pattern/nr_accesses/min", sc);
		if (r == 0)
			r = sysfs_write_u64(d, UINT32_MAX, "%s/access_pattern/nr_accesses/max", sc);
		if (r == 0)
			r = sysfs_write(d, "0", "%s/access_pattern/age/min", sc);
		if (r == 0)
			r = sysfs_write_u64(d, UINT32_MAX, "%s/access_pattern/age/max", sc);
		/* Scheme i sees target i only: filter out every region that is not. */
		if (r == 0)
			r = sysfs_write(d, "1", "%s/filters/nr_filters", sc);
		if (r == 0)
			r = sysfs_write(d, "target", "%s/filters/0/type", sc);
		if (r == 0)
			r = sysfs_write_u64(d, i, "%s/filters/0/damon_target_idx", sc);
		if (r == 0)
			r = sysfs_write(d, "N", "%s/filters/0/matching", sc);
	}
	return r;
}

/*
 * Stretch (or restore) the kdamond's sampling and aggregation intervals
 * (aggr_us_at()), and divide (or restore) its most regions: a running
 * kdamond takes them at "commit".  Its cost is one page-table check per
 * region per sampling interval (and, as DAMON clears accessed bits, the TLB
 * refills that follow), paid by the workloads it watches, and each drain
 * reads three files per region; when tierd has nothing to move that buys
 * nothing.  Fewer regions make DAMON merge the ones that look alike, so
 * what it still tells apart is coarser, which is enough to see that
 * something changed; the first planned move restores the full resolution.
 */
static int damon_set_pace(struct sampler *s, unsigned int slowdown)
{
	struct sampler_damon *d = SD(s);
	bool tried_feed = false, switch_feed = false;
	uint64_t max_regions;
	int r;

	if (d->idx < 0)
		return -ENOTCONN;
	if (!slowdown)
		slowdown = 1;
	if (slowdown == d->pace)
		return 0;
	max_regions = d->p.max_nr_regions / slowdown;
	if (max_regions < d->p.min_nr_regions)
		max_regions = d->p.min_nr_regions;
	r = sysfs_write_u64(d, d->p.sample_us * slowdown,
			    "kdamonds/%d/contexts/0/monitoring_attrs/intervals/sample_us", d->idx);
	if (r == 0)
		r = sysfs_write_u64(d, aggr_us_at(d, slowdown),
				    "kdamonds/%d/contexts/0/monitoring_attrs/intervals/aggr_us",
				    d->idx);
	if (r == 0)
		r = sysfs_write_u64(d, max_regions,
				    "kdamonds/%d/contexts/0/monitoring_attrs/nr_regions/max",
				    d->idx);
	/* The first idle pace starts the feed: its load (parsing the kernel's
	 * BTF, 0.1-0.2 s of a CPU in the lab guest) would otherwise come
	 * before tierd's first promotion.  The schemes go with the same commit. */
	if (r == 0 && slowdown > 1 && d->feed && !d->feed_tried) {
		feed_start(d);
		tried_feed = true;
		switch_feed = d->feed_on && d->on;
		if (switch_feed)
			r = sysfs_write(d, "0", "kdamonds/%d/contexts/0/schemes/nr_schemes",
					d->idx);
	}
	if (r == 0 && d->on)
		r = sysfs_write(d, "commit", "kdamonds/%d/state", d->idx);
	if (r < 0)
		return r;
	d->pace = slowdown;
	if (switch_feed)
		r = feed_follow(d, d->kdamond_pid);
	if (tried_feed && d->on)
		status_running(d);
	return r;
}

/*
 * What sampling costs here is the kdamond's CPU time: its page-table checks
 * every sampling interval, and, on the tracepoint, the program's copy and
 * look at every aggregation, which run in it.  utime + stime from
 * /proc/PID/stat once a drain; over the drain interval that is cost_pct.
 * A new kdamond (set_targets() turned it off and on) starts a new
 * baseline.  When tierd turns its kdamond off (no targets, or stop) it
 * reads the count one last time first (cost_final()); when the kdamond
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
static void cost_final(struct sampler_damon *d)
{
	double sec;

	cost_read(d, &sec);
	d->cost_pid = 0;
}

static int damon_set_targets(struct sampler *s, const pid_t *pids, size_t n)
{
	struct sampler_damon *d = SD(s);
	bool on = false;
	int r;

	if (d->idx < 0)
		return -ENOTCONN;
	if (n > d->p.max_targets)
		return -E2BIG;
	if (n == d->ntargets && !memcmp(pids, d->targets, n * sizeof(*pids)) &&
	    kdamond_state(d, d->idx, &on) == 0 && on == (n > 0))
		return 0;
	r = kdamond_state(d, d->idx, &on);
	if (r < 0)
		return r;
	if (n == 0) {
		/* A vaddr kdamond needs a target; idle it until one comes. */
		if (on) {
			cost_final(d);
			r = sysfs_write(d, "off", "kdamonds/%d/state", d->idx);
		}
		d->ntargets = 0;
		d->on = false;
		d->kdamond_pid = 0;
		if (d->feed_on)
			feed_follow(d, 0);
		return r;
	}
	r = write_targets(d, pids, n);
	if (r == 0)
		r = sysfs_write(d, on ? "commit" : "on", "kdamonds/%d/state", d->idx);
	if (r < 0)
		return r;
	memcpy(d->targets, pids, n * sizeof(*pids));
	d->ntargets = n;
	d->on = true;
	kdamond_pid_read(d);
	if (d->kdamond_pid)
		owner_write(d, d->kdamond_pid);
	/* Without its pid the feed follows nothing; the next drain asks again. */
	if (d->feed_on) {
		r = feed_follow(d, d->kdamond_pid);
		if (r < 0)
			return r;
	}
	status_running(d);
	return 0;
}

/* One number of tried region @ri, under the directory @dfd (admin-relative
 * @dir_rel). */
static int region_u64(const struct sampler_damon *d, int dfd, const char *dir_rel,
		      unsigned long ri, const char *file, uint64_t *ret)
{
	char rel[256], path[64];

	snprintf(rel, sizeof(rel), "%s/%lu/%s", dir_rel, ri, file);
	snprintf(path, sizeof(path), "%lu/%s", ri, file);
	return sysfs_read_u64_at(d, dfd, rel, path, ret);
}

static int read_regions(struct sampler_damon *d, size_t i, struct hot_table *t,
			uint64_t now_ns, uint64_t *ret_regions)
{
	char dir[768], rel[128];
	double acc = acc_scale(d);
	struct dirent *de;
	int records = 0, dfd;
	DIR *dd;

	snprintf(rel, sizeof(rel), "kdamonds/%d/contexts/0/schemes/%zu/tried_regions",
		 d->idx, i);
	snprintf(dir, sizeof(dir), "%s/%s", d->admin, rel);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	dd = fdopendir(dfd);
	if (!dd) {
		int r = -errno;

		close(dfd);
		return r;
	}
	while ((de = readdir(dd))) {
		uint64_t start, end, nr_acc;
		unsigned long ri;
		char *e;
		int r;

		ri = strtoul(de->d_name, &e, 10);
		if (e == de->d_name || *e)
			continue;	/* total_bytes, . and .. */
		/* openat() from the directory's fd walks two path components
		 * instead of the dozen of the full sysfs path, and that walk was
		 * most of a drain's CPU (perf in the lab guest: 62% of tierd's
		 * CPU in open()'s path walks at 2000 regions). */
		r = region_u64(d, dfd, rel, ri, "start", &start);
		if (r == 0)
			r = region_u64(d, dfd, rel, ri, "end", &end);
		if (r == 0)
			r = region_u64(d, dfd, rel, ri, "nr_accesses", &nr_acc);
		if (r < 0 || end <= start)
			continue;	/* the kernel rebuilt the directory under us */
		(*ret_regions)++;
		r = hot_record(t, d->targets[i], start, end - start, nr_acc * acc, now_ns);
		if (r > 0)
			records += r;
	}
	closedir(dd);	/* closes dfd */
	return records;
}

static int damon_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	struct sampler_damon *d = SD(s);
	uint64_t regions = 0;
	int records = 0, r;
	bool on = false;

	if (d->idx < 0)
		return -ENOTCONN;
	if (!d->on)
		return 0;
	r = kdamond_state(d, d->idx, &on);
	if (r < 0)
		return r;
	if (!on) {
		/* Every target exited, and the kdamond with them: the next
		 * set_targets() turns it back on. */
		d->on = false;
		d->ntargets = 0;
		d->kdamond_pid = 0;
		return 0;
	}
	cost_update(d, now_ns);
	if (d->feed_on && !d->kdamond_pid) {
		r = kdamond_pid_read(d);
		if (r == 0 && d->kdamond_pid)
			r = feed_follow(d, d->kdamond_pid);
		return r < 0 ? r : 0;
	}
	if (d->feed_on)
		return feed_drain(d, t, now_ns);
	/* Blocks until the kdamond has applied the schemes once. */
	r = sysfs_write(d, "update_schemes_tried_regions", "kdamonds/%d/state", d->idx);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->ntargets; i++) {
		r = read_regions(d, i, t, now_ns, &regions);
		if (r < 0)
			return r;
		records += r;
	}
	d->st.samples += regions;
	d->st.records += records;
	d->st.drains++;
	return records;
}

/*
 * The newest aggregation the feed has that neither a drain nor a peek has
 * seen, against the table, without folding it (the next drain does): what
 * tierd does when the program woke it, to check the sketch's word against
 * the table itself.  Takes the wake; then a copy out of the mapped array
 * and a table lookup per 2 MiB range of its accessed regions.  Through
 * sysfs a look would cost what a drain does, so there it is not offered.
 */
static int damon_peek(struct sampler *s, const struct hot_table *t, uint64_t now_ns,
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
			peek_region(t, d->targets[g->target], g, acc_scale(d), scale, ret);
	}
	return 1;
}

struct known_fill {
	const pid_t *targets;
	uint32_t ntargets;
	__u8 *known;
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

	/* The source records regions, so 2 MiB ranges; a 4 KiB entry is
	 * another source's, and too little heat reads as none anyway. */
	if (e->len != HOT_HUGE_SIZE || units < 1)
		return 0;
	p = bsearch(&e->pid, k->targets, k->ntargets, sizeof(pid_t), pid_cmp);
	if (p)
		damon_known_put(k->known, k->mask, (__u32)(p - k->targets), e->addr,
				units < DAMON_KNOWN_MAX ? (__u32)units : DAMON_KNOWN_MAX);
	return 0;
}

void damon_known_fill(__u8 *known, uint32_t cells, uint32_t unit, const struct hot_table *t,
		      uint64_t at_ns, const pid_t *targets, uint32_t ntargets, double acc)
{
	struct known_fill k = { targets, ntargets, known, cells - 1, unit / acc };

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
static int damon_peek_arm(struct sampler *s, const struct hot_table *t, uint64_t at_ns,
			  uint64_t min_bytes, uint32_t share)
{
	struct sampler_damon *d = SD(s);
	uint32_t cells, unit = damon_known_unit(max_nr_accesses(d));
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
	damon_known_fill(known, cells, unit, t, at_ns, d->targets, d->ntargets, acc_scale(d));
	return d->feed->ops->arm(d->feed, min_bytes, share, unit);
}

static int damon_peek_fd(struct sampler *s, uint32_t *gen)
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

static void damon_stop(struct sampler *s)
{
	struct sampler_damon *d = SD(s);

	if (d->idx < 0)
		return;
	cost_final(d);
	if (kdamond_remove(d, d->idx) == 0)
		unlink(d->owner_path);
	d->idx = -1;
	d->on = false;
	d->ntargets = 0;
	d->kdamond_pid = 0;
	feed_stop(d);
	d->st.running = false;
	snprintf(d->st.why, sizeof(d->st.why), "stopped");
}

static int damon_fd(struct sampler *s)
{
	return -1;
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
	damon_feed_free(d->feed);
	free(d->feed_buf);
	free(d->targets);
	free(d);
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
	.stop = damon_stop,
	.fd = damon_fd,
	.describe = damon_describe,
	.free = damon_free,
};

void sampler_damon_params_default(struct sampler_damon_params *p)
{
	memset(p, 0, sizeof(*p));
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

	if (!p->runtime_dir || !p->max_targets || !p->sample_us ||
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
	d->feed_cap = p->max_nr_regions + p->min_nr_regions * p->max_targets;
	d->known_cells = damon_known_cells_for(p->mem_bytes ? p->mem_bytes :
					       (uint64_t)sysconf(_SC_PHYS_PAGES) *
					       (uint64_t)sysconf(_SC_PAGESIZE));
	d->targets = calloc(p->max_targets, sizeof(pid_t));
	if (d->feed)
		d->feed_buf = calloc(d->feed_cap, sizeof(*d->feed_buf));
	if (!d->targets || (d->feed && !d->feed_buf)) {
		damon_feed_free(d->feed);
		free(d->feed_buf);
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
