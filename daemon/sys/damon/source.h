/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The DAMON source's state and the functions its files share; not an API
 * (that is sampler_damon.h).  The source in five files:
 *
 *   sampler.c  the sampler ops, and what sampling costs (the essay)
 *   kdamond.c  the kdamond: ownership, stale-kdamond cleanup, start, schemes
 *   pace.c     the kdamond's intervals when tierd has nothing to move
 *   regions.c  regions into the table: tried_regions, or the tracepoint feed
 *   wake.c     idle peeks: the feed's newest aggregation against the table
 *   update.c   tried_regions updates, asked for and read without waiting
 *   change.c   changes of targets and pace, made without waiting
 *   sysfs.c    reads and writes of DAMON's trylocked sysfs files
 *   fit.c      regions and intervals fitted to the targets' memory
 *
 * and feed.c, the loader of bpf/damon.bpf.c behind damon_feed.h.
 */
#ifndef TIERD_SYS_DAMON_SOURCE_H
#define TIERD_SYS_DAMON_SOURCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/damon_fit.h"
#include "../sampler_damon.h"

struct hot_table;
struct idle_set;

enum damon_upd_state {
	DAMON_UPD_IDLE,		/* none asked for, or the last one read */
	DAMON_UPD_ASKED,	/* the worker or the kernel is on it */
	DAMON_UPD_DONE,		/* done, not read yet */
};

/* update.c: the worker that writes "update_schemes_tried_regions". */
struct damon_update {
	pthread_t thread;
	bool running;		/* the thread exists */
	pthread_mutex_t lock;	/* the fields below */
	pthread_cond_t cond;
	enum damon_upd_state state;
	const char *change;	/* a state to write first ("commit", "on", "off"), or NULL */
	bool regions;		/* then an update of tried_regions */
	int change_err;		/* a done change's result */
	int err;		/* a done update's result */
	bool waiting;		/* a drain came back without regions: tell the loop */
	bool quit;
	int idx;		/* the kdamond it is for */
	unsigned int pace;	/* the pace it was asked at */
	int efd;		/* eventfd: readable when what a drain waited for is done */
};

struct sampler_damon {
	struct sampler base;
	/* The attributes in effect: p.sample_us, aggr_us, min_nr_regions and
	 * max_nr_regions are fit.c's for the targets' memory, conf the
	 * configured ones they are fitted from. */
	struct sampler_damon_params p;
	struct damon_attrs conf;
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
	struct damon_feed_rec *feed_buf;
	uint32_t feed_cap;
	uint32_t known_cells;	/* the sketch's size, for the feed's start */
	struct idle_set *idle;	/* idle_into()'s, NULL: none */
	/* The kdamond's aggregations against the clock (pace.c:
	 * damon_aggr_real_ns()): the newest pass at the last drain that read
	 * one, and when (clock_ns 0: none since a change of kdamond or pace);
	 * the decayed sums, since that change, of the time between such
	 * drains and of the nominal intervals of the aggregations that ended
	 * in it. */
	uint64_t clock_pass, clock_ns;
	uint64_t clock_real_ns, clock_nominal_ns;
	/* The kdamond's CPU time at the last drain (cost_update()). */
	pid_t cost_pid;
	uint64_t cost_ticks, cost_ns;
	long clk_tck;
	struct sampler_status st;
	struct damon_update upd;
	/* A change of targets or pace asked for while an update ran: applied
	 * by the next drain (update.c says why). */
	pid_t *want_pids;
	size_t want_n;
	bool want_targets;
	unsigned int want_pace;	/* 0: none */
	/* What the change the worker writes applies, taken in by the drain
	 * after it (sampler.c: change_done()). */
	bool applying_targets;
	pid_t *apply_pids;
	size_t apply_n;
	unsigned int applying_pace;	/* 0: none */
	bool feed_switch;	/* the feed just started: the kdamond drops its schemes */
	uint64_t busy_deferred;	/* changes a tick left for later on -EBUSY */
};

#define SD(s) ((struct sampler_damon *)(s))



/* sysfs.c: @rel is relative to the admin directory; -EBUSY is retried for
 * up to DAMON_BUSY_WAIT_US on a patient thread, returned at once on the
 * loop's; a read drops the trailing newline. */
/* The calling thread may wait (start, stop, the worker); returns the old. */
bool damon_sysfs_patient(bool on);
int damon_sysfs_read(const struct sampler_damon *d, const char *rel, char *buf, size_t len);
/* One try: -EBUSY is returned, not retried. */
int damon_sysfs_read_once(const struct sampler_damon *d, const char *rel, char *buf,
			  size_t len);
int damon_sysfs_read_u64(const struct sampler_damon *d, const char *rel, uint64_t *ret);
/* The same for @path relative to the directory @dfd (@rel: for the hooks). */
int damon_sysfs_read_u64_at(const struct sampler_damon *d, int dfd, const char *rel,
			    const char *path, uint64_t *ret);
int damon_sysfs_write(struct sampler_damon *d, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int damon_sysfs_write_u64(struct sampler_damon *d, uint64_t v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* kdamond.c */
int damon_probe(struct sampler *s, char *why, size_t len);
int damon_start(struct sampler *s, char *why, size_t len);
int damon_kdamond_state(const struct sampler_damon *d, int idx, bool *ret_on);
/* The same, one try: -EBUSY when the lock is taken. */
int damon_kdamond_state_once(const struct sampler_damon *d, int idx, bool *ret_on);
int damon_kdamond_pid_read(struct sampler_damon *d);
int damon_kdamond_remove(struct sampler_damon *d, int idx);
int damon_owner_write(const struct sampler_damon *d, pid_t kdamond_pid);
int damon_write_targets(struct sampler_damon *d, const pid_t *pids, size_t n);
void damon_status_why(struct sampler_damon *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void damon_status_running(struct sampler_damon *d);

/* fit.c: the attributes for the memory of @pids (core/damon_fit.h) into
 * d->p, and written to the kdamond's files at the current pace when they
 * change; the "commit" or "on" that follows makes them the kdamond's.
 * 0 or the first write's -errno. */
int damon_fit_targets(struct sampler_damon *d, const pid_t *pids, size_t n);

/* pace.c */
int damon_set_pace(struct sampler *s, unsigned int slowdown);
/* The intervals and most regions of @pace written; 0 or the first
 * write's -errno. */
int damon_attrs_write(struct sampler_damon *d, unsigned int pace);
/* The intervals and most regions of @pace written (and the feed started at
 * the first idle pace): a "commit" makes them the kdamond's. */
int damon_pace_write(struct sampler_damon *d, unsigned int pace);

/* sampler.c */
void damon_cost_final(struct sampler_damon *d);

/* change.c: what set_targets() and set_pace() asked, written now when the
 * worker is idle, else by a later drain. */
int damon_wishes_apply(struct sampler_damon *d);
/* Take in a change the worker has written: 1, 0 when none is done, or its
 * -errno (asked again by the next drain). */
int damon_change_take(struct sampler_damon *d);
/* Our kdamond's pid read once: recorded, and followed by the feed. */
int damon_kdamond_found(struct sampler_damon *d);
uint64_t damon_aggr_us_at(const struct sampler_damon *d, unsigned int pace);
/* A drain read aggregations up to @pass at @now_ns; the kdamond or its
 * pace changed (the measure starts over). */
void damon_clock_note(struct sampler_damon *d, uint64_t pass, uint64_t now_ns);
void damon_clock_restart(struct sampler_damon *d);
/* The time an aggregation at the current pace takes, as measured, never
 * less than its nominal interval. */
uint64_t damon_aggr_real_ns(const struct sampler_damon *d);
uint64_t damon_max_nr_accesses(const struct sampler_damon *d);
double damon_acc_scale(const struct sampler_damon *d);
double damon_acc_scale_at(const struct sampler_damon *d, unsigned int pace);

/* regions.c */
int damon_tried_take(struct sampler_damon *d, struct hot_table *t, uint64_t now_ns,
		     bool *ret_had);
void damon_tp_note_initial(struct sampler_damon *d);
void damon_tp_start(struct sampler_damon *d);
void damon_tp_stop(struct sampler_damon *d);
int damon_tp_follow(struct sampler_damon *d, pid_t pid);
int damon_tp_drain(struct sampler_damon *d, struct hot_table *t, uint64_t now_ns);
int damon_idle_into(struct sampler *s, struct idle_set *set);

/* update.c */
int damon_update_init(struct sampler_damon *d);
/* Ask for an update; @waiting: the drain asking returns without regions. */
int damon_update_ask(struct sampler_damon *d, bool waiting);
/* An update is under way; @drain: and a drain returns without regions. */
bool damon_update_busy(struct sampler_damon *d, bool drain);
/* Ask the worker to write @state ("commit", "on", "off") to the kdamond's
 * state file; a drain takes the change in. */
int damon_update_change(struct sampler_damon *d, const char *state);
/* Take a done change: 1, or its -errno; 0 when none is done. */
int damon_update_change_take(struct sampler_damon *d);
/* Take a done update: 1 when there was one, its pace in *@ret_pace; 0 when
 * there was none (or a done change is not taken yet); its -errno when it
 * failed.  Also drops one. */
int damon_update_take(struct sampler_damon *d, unsigned int *ret_pace);
/* Wait for an update under way (stop, tests). */
void damon_update_settle(struct sampler_damon *d);
void damon_update_stop(struct sampler_damon *d);
void damon_update_fini(struct sampler_damon *d);

/* wake.c */
int damon_peek(struct sampler *s, const struct hot_table *t, uint64_t now_ns,
	       struct sampler_peek *ret);
int damon_peek_arm(struct sampler *s, const struct hot_table *t, uint64_t at_ns,
		   uint64_t min_bytes, uint32_t share);
int damon_peek_fd(struct sampler *s, uint32_t *gen);

#endif
