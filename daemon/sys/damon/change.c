// SPDX-License-Identifier: GPL-2.0-only
/*
 * Changes of the DAMON source's targets and pace, made without waiting in
 * a tick.
 */
#include <errno.h>
#include <string.h>

#include "source.h"

/*
 * A tick never waits (the loop's rule).  Writing "commit", "on" or "off" to
 * the kdamond's state file makes the writer wait in the kernel like an
 * update of tried_regions does (damon_sysfs_handle_cmd()), so set_targets()
 * and set_pace() write the kdamond's files from the tick and hand the state
 * change to update.c's worker; the next drain takes the change in
 * (change_done()) and asks for the regions of the new targets or pace.  While
 * the worker is on something, a new change waits in the wishes (the last
 * one asked wins), and a drain after it writes it.  A file that answers
 * -EBUSY (sysfs.c) leaves the whole change in the wishes for the next
 * drain, counted in busy_deferred: the files are written again, the same
 * values, so a change half written is never committed.  Start (at tierd's
 * start) and stop (at its exit) do wait: for -EBUSY, and for the worker's
 * change under way.
 */
static int busy_defer(struct sampler_damon *d)
{
	d->busy_deferred++;
	return 0;
}

/* The kdamond's pid: in the ownership record, and followed by the feed. */
int damon_kdamond_found(struct sampler_damon *d)
{
	int r = damon_kdamond_pid_read(d);

	if (r < 0 || !d->kdamond_pid)
		return r == -EBUSY ? 0 : r;
	damon_owner_write(d, d->kdamond_pid);
	return d->feed_on ? damon_tp_follow(d, d->kdamond_pid) : 0;
}

/* The change the worker wrote is in the kernel (@err 0) or not: take it in. */
static int change_done(struct sampler_damon *d, int err)
{
	unsigned int pace = d->applying_pace;
	bool targets = d->applying_targets;

	d->applying_targets = false;
	d->applying_pace = 0;
	if (err < 0) {
		/* Asked again at the next drain, unless a newer wish replaced it. */
		if (targets && !d->want_targets) {
			memcpy(d->want_pids, d->apply_pids, d->apply_n * sizeof(pid_t));
			d->want_n = d->apply_n;
			d->want_targets = true;
		}
		if (pace && !d->want_pace)
			d->want_pace = pace;
		return err;
	}
	if (targets) {
		memcpy(d->targets, d->apply_pids, d->apply_n * sizeof(pid_t));
		d->ntargets = d->apply_n;
		d->on = d->apply_n > 0;
		d->kdamond_pid = 0;	/* a new kdamond thread, or none */
		if (!d->on && d->feed_on)
			damon_tp_follow(d, 0);
	}
	if (pace) {
		d->pace = pace;
		damon_clock_restart(d);
	}
	if (!d->on)
		return 0;
	if (targets || d->feed_switch || !d->kdamond_pid) {
		d->feed_switch = false;
		d->kdamond_pid = 0;
		err = damon_kdamond_found(d);
	}
	damon_status_running(d);
	return err;
}

int damon_change_take(struct sampler_damon *d)
{
	int r = damon_update_change_take(d);

	return r == 0 ? 0 : change_done(d, r < 0 ? r : 0);
}

/* The targets' files for @pids, or what turns the kdamond off: the state
 * change to write in *@ret_state (NULL: none is needed). */
static int targets_write(struct sampler_damon *d, const pid_t *pids, size_t n,
			 const char **ret_state, bool *ret_same)
{
	bool on = false;
	int r = damon_kdamond_state(d, d->idx, &on);

	if (r < 0)
		return r;
	*ret_same = n == d->ntargets && !memcmp(pids, d->targets, n * sizeof(*pids)) &&
		    on == (n > 0);
	if (*ret_same)
		return 0;
	if (n == 0) {
		/* A vaddr kdamond needs a target; idle it until one comes. */
		if (on) {
			damon_cost_final(d);
			*ret_state = "off";
		}
		return 0;
	}
	r = damon_write_targets(d, pids, n);
	if (r == 0)
		*ret_state = on ? "commit" : "on";
	return r;
}

int damon_wishes_apply(struct sampler_damon *d)
{
	const char *state = NULL;
	unsigned int pace = 0, old;
	bool same = true;
	int r;

	if (damon_update_busy(d, false))
		return 0;	/* the kdamond holds the sysfs lock: a later drain */
	r = damon_change_take(d);
	if (r < 0)
		return r;
	if (d->want_targets) {
		r = targets_write(d, d->want_pids, d->want_n, &state, &same);
		if (r == -EBUSY)
			return busy_defer(d);
		if (r < 0 || same)
			d->want_targets = false;
		if (r < 0)
			return r;
	}
	if (d->want_pace && d->want_pace != d->pace) {
		pace = d->want_pace;
		r = damon_pace_write(d, pace);
		if (r == -EBUSY)
			return busy_defer(d);
		if (r < 0) {
			d->want_pace = 0;
			return r;
		}
		if (!state && d->on)
			state = "commit";
	}
	d->want_pace = 0;
	if (d->want_targets || pace)
		damon_update_take(d, &old);	/* the old targets' or pace's regions */
	d->applying_targets = d->want_targets;
	if (d->want_targets) {
		memcpy(d->apply_pids, d->want_pids, d->want_n * sizeof(pid_t));
		d->apply_n = d->want_n;
		d->want_targets = false;
	}
	d->applying_pace = pace;
	if (!d->applying_targets && !pace)
		return 0;
	if (!state)
		return change_done(d, 0);	/* nothing the kernel waits on */
	/* The drain that takes it in asks for the regions of the new targets
	 * or pace. */
	r = damon_update_change(d, state);
	return r < 0 ? change_done(d, r) : 0;
}

