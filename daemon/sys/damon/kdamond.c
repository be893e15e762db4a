// SPDX-License-Identifier: GPL-2.0-only
/*
 * The DAMON source's kdamond, through the DAMON sysfs interface: probe,
 * start, the schemes of the tried_regions route, removal, and the cleanup
 * of a kdamond that a killed tierd left.
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
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fsutil.h"
#include "source.h"

/* ---- the ownership record ---- */

struct owner {
	pid_t tierd_pid;
	int idx;
	pid_t kdamond_pid;	/* 0 while not yet on */
};

static int owner_read(const struct sampler_damon *d, struct owner *o)
{
	char buf[64];
	int r = fs_read("/", d->owner_path, buf, sizeof(buf), NULL);

	if (r < 0)
		return r == -EFBIG ? -EINVAL : r;
	r = sscanf(buf, "%d %d %d", &o->tierd_pid, &o->idx, &o->kdamond_pid);
	return r == 3 && o->idx >= 0 ? 0 : -EINVAL;
}

int damon_owner_write(const struct sampler_damon *d, pid_t kdamond_pid)
{
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "%d %d %d\n", (int)getpid(), d->idx,
			   (int)kdamond_pid);

	return fs_write_atomic(d->p.runtime_dir, DAMON_OWNER_FILE, buf, (size_t)len, 0644);
}

static bool pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static int kdamond_state_read(const struct sampler_damon *d, int idx, bool retry,
			      bool *ret_on)
{
	char rel[64], buf[32];
	int r;

	snprintf(rel, sizeof(rel), "kdamonds/%d/state", idx);
	r = retry ? damon_sysfs_read(d, rel, buf, sizeof(buf)) :
		    damon_sysfs_read_once(d, rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	*ret_on = strcmp(buf, "on") == 0;
	return 0;
}

int damon_kdamond_state(const struct sampler_damon *d, int idx, bool *ret_on)
{
	return kdamond_state_read(d, idx, true, ret_on);
}

int damon_kdamond_state_once(const struct sampler_damon *d, int idx, bool *ret_on)
{
	return kdamond_state_read(d, idx, false, ret_on);
}

/* Our kdamond's pid into d->kdamond_pid: 0 when it is off (sysfs shows -1). */
int damon_kdamond_pid_read(struct sampler_damon *d)
{
	uint64_t pid = 0;
	char rel[64];
	int r;

	snprintf(rel, sizeof(rel), "kdamonds/%d/pid", d->idx);
	r = damon_sysfs_read_u64(d, rel, &pid);
	d->kdamond_pid = r == 0 && pid > 0 && pid < INT32_MAX ? (pid_t)pid : 0;
	return r;
}

/* Take our kdamond away: off, then drop its directory.  Only ever our index. */
int damon_kdamond_remove(struct sampler_damon *d, int idx)
{
	uint64_t nr = 0;
	bool on = false;
	int r;

	if (damon_kdamond_state(d, idx, &on) == 0 && on) {
		r = damon_sysfs_write(d, "off", "kdamonds/%d/state", idx);
		if (r < 0)
			return r;
	}
	r = damon_sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr);
	if (r < 0)
		return r;
	/* Ours is the last index (we only add when there were none before). */
	if (nr == (uint64_t)idx + 1)
		return damon_sysfs_write_u64(d, idx, "kdamonds/nr_kdamonds");
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
	if (r == 0 && damon_sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr) == 0 &&
	    (uint64_t)o.idx < nr) {
		char rel[64];
		bool on = false;

		snprintf(rel, sizeof(rel), "kdamonds/%d/pid", o.idx);
		/* Off kdamonds show pid -1; an on one must be the recorded one. */
		if (damon_kdamond_state(d, o.idx, &on) == 0 &&
		    (!on || (damon_sysfs_read_u64(d, rel, &kpid) == 0 && o.kdamond_pid > 0 &&
			     kpid == (uint64_t)o.kdamond_pid))) {
			r = damon_kdamond_remove(d, o.idx);
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
void damon_status_why(struct sampler_damon *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->st.why, sizeof(d->st.why), fmt, ap);
	va_end(ap);
}

void damon_status_running(struct sampler_damon *d)
{
	damon_status_why(d, "kdamond %d (pid %d), vaddr, %zu target(s), %llu us sampling, "
		   "%llu us aggregation, %s", d->idx, (int)d->kdamond_pid, d->ntargets,
		   (unsigned long long)d->p.sample_us, (unsigned long long)d->p.aggr_us,
		   d->feed_note);
}

/* ---- start ---- */

static int probe(struct sampler *s, char *why, size_t len)
{
	struct sampler_damon *d = SD(s);
	uint64_t nr;
	struct owner o;
	int r = damon_sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr);

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

/* Probe and start run at tierd's start, not in a tick: they may wait. */
int damon_probe(struct sampler *s, char *why, size_t len)
{
	bool patient = damon_sysfs_patient(true);
	int r = probe(s, why, len);

	damon_sysfs_patient(patient);
	return r;
}

static int damon_configure(struct sampler_damon *d)
{
	const char *c = "kdamonds/%d/contexts/0/%s";
	char rel[256];
	int r;

#define W(val, sub)                                                           \
	do {                                                                  \
		snprintf(rel, sizeof(rel), c, d->idx, sub);                   \
		r = damon_sysfs_write(d, val, "%s", rel);                           \
		if (r < 0)                                                    \
			return r;                                             \
	} while (0)
#define WU(val, sub)                                                          \
	do {                                                                  \
		snprintf(rel, sizeof(rel), c, d->idx, sub);                   \
		r = damon_sysfs_write_u64(d, val, "%s", rel);                       \
		if (r < 0)                                                    \
			return r;                                             \
	} while (0)

	r = damon_sysfs_write(d, "1", "kdamonds/%d/contexts/nr_contexts", d->idx);
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

static int start(struct sampler *s, char *why, size_t len)
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
	r = probe(s, why, len);
	if (r < 0)
		return r;
	r = damon_sysfs_read_u64(d, "kdamonds/nr_kdamonds", &nr);
	if (r == 0 && nr != 0)
		r = -EBUSY;	/* raced with someone else */
	if (r < 0) {
		snprintf(why, len, "kdamonds appeared in %s while starting", d->admin);
		return r;
	}
	damon_tp_note_initial(d);
	d->idx = 0;
	/* Record first: a crash from here on is cleaned up by the next start. */
	r = damon_owner_write(d, 0);
	if (r < 0) {
		snprintf(why, len, "cannot write %s: %s", d->owner_path, strerror(-r));
		d->idx = -1;
		return r;
	}
	r = damon_sysfs_write(d, "1", "kdamonds/nr_kdamonds");
	if (r == 0)
		r = damon_configure(d);
	if (r < 0) {
		snprintf(why, len, "configuring kdamond 0 in %s: %s", d->admin, strerror(-r));
		damon_kdamond_remove(d, 0);
		unlink(d->owner_path);
		d->idx = -1;
		return r;
	}
	/* The configured intervals, whatever pace an earlier start left. */
	d->pace = 1;
	d->st.running = true;
	/* Said once, in the daemon's "Hotness source" line (sampler_pick()). */
	snprintf(why, len, "%s%s", d->feed_note, d->stale_note);
	damon_status_why(d, "kdamond %d, vaddr, %llu us sampling, %llu us aggregation, "
		   "no targets yet; %s%s", d->idx, (unsigned long long)d->p.sample_us,
		   (unsigned long long)d->p.aggr_us, d->feed_note, d->stale_note);
	return 0;
}

/*
 * Scheme i's files, in the order they are written, "%zu" standing for i.
 * Every region with at least one access matches (the maxima must be
 * explicit).  An idle region adds no heat to the table, and reading it
 * costs three sysfs reads a drain: with hundreds of regions a target,
 * skipping the idle ones is what keeps a drain cheap.  The filter shows
 * scheme i target i only: it filters out every region that is not.
 */
static const char *const scheme_files[][2] = {
	{ "action", "stat" },
	{ "access_pattern/sz/min", "0" },
	{ "access_pattern/sz/max", "18446744073709551615" },	/* UINT64_MAX */
	{ "access_pattern/nr_accesses/min", "1" },
	{ "access_pattern/nr_accesses/max", "4294967295" },	/* UINT32_MAX */
	{ "access_pattern/age/min", "0" },
	{ "access_pattern/age/max", "4294967295" },
	{ "filters/nr_filters", "1" },
	{ "filters/0/type", "target" },
	{ "filters/0/damon_target_idx", "%zu" },
	{ "filters/0/matching", "N" },
};

static int write_scheme(struct sampler_damon *d, const char *base, size_t i)
{
	char val[32];
	int r = 0;

	for (size_t f = 0; r == 0 && f < sizeof(scheme_files) / sizeof(scheme_files[0]); f++) {
		const char *v = scheme_files[f][1];

		if (!strcmp(v, "%zu")) {
			snprintf(val, sizeof(val), "%zu", i);
			v = val;
		}
		r = damon_sysfs_write(d, v, "%s/schemes/%zu/%s", base, i, scheme_files[f][0]);
	}
	return r;
}

int damon_write_targets(struct sampler_damon *d, const pid_t *pids, size_t n)
{
	char base[128];
	int r;

	snprintf(base, sizeof(base), "kdamonds/%d/contexts/0", d->idx);
	r = damon_fit_targets(d, pids, n);
	if (r == 0)
		r = damon_sysfs_write_u64(d, n, "%s/targets/nr_targets", base);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = damon_sysfs_write_u64(d, (uint64_t)pids[i], "%s/targets/%zu/pid_target", base, i);
	if (r == 0)
		r = damon_sysfs_write_u64(d, d->feed_on ? 0 : n, "%s/schemes/nr_schemes", base);
	for (size_t i = 0; r == 0 && !d->feed_on && i < n; i++)
		r = write_scheme(d, base, i);
	return r;
}

int damon_start(struct sampler *s, char *why, size_t len)
{
	bool patient = damon_sysfs_patient(true);
	int r = start(s, why, len);

	damon_sysfs_patient(patient);
	return r;
}
