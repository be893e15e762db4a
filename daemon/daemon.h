/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's state and the hook points of the pipeline.
 *
 * One tick (tierd_tick()), in order:
 *   1. topology: re-read each node's total and free memory;
 *   2. every module's tick, in the order of tierd_modules[] (modules.c):
 *        sample   sys/sampler_*.c -> core/hotness.c   (heat per region)
 *        decide   core/policy.c, batch.c, budget.c    (promote/demote intents)
 *        migrate  sys/migrate.c -> core/account.c     (move_pages, per-page status)
 *        threads  copy-thread controller + sys/knobs.c
 *      a module's error is logged (once per kind) and the tick goes on;
 *   3. rates from the counters in struct tierd_stats;
 *   4. textfile metrics when due; sd_notify STATUS= and WATCHDOG=1,
 *      READY=1 after the first good tick.
 *
 * A module is a struct tierd_module: start, reload (check, then apply),
 * tick, metrics, restore_knobs, stop.  Modules fill d->stats, which status,
 * tierctl and the metrics read; they never log on every tick.
 *
 * Kernel knobs: a module may write a knob only when tierd_knobs_allowed(d)
 * (not --no-knobs, not dry run) and must put every knob back in
 * restore_knobs(), which runs on exit, including after SIGTERM.
 */
#ifndef TIERD_DAEMON_H
#define TIERD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "policy.h"
#include "topology.h"

struct metrics;
struct pipeline;
struct sd_event;
struct tierd;

/* move_pages(2) per-page failures, as the migrator classes them. */
enum tierd_errno_class {
	ERRC_BUSY, /* -EBUSY, -EAGAIN: retried later */
	ERRC_NOMEM, /* -ENOMEM: target node full, promotion paused */
	ERRC_GONE, /* -ENOENT, -ESRCH, -EFAULT: page or process gone */
	ERRC_DENIED, /* -EACCES, -EPERM */
	ERRC_OTHER,
	NR_ERRC,
};

/* Counters the pipeline modules fill; totals only grow. */
struct tierd_stats {
	struct {
		uint64_t promoted_bytes_total; /* into this tier */
		uint64_t demoted_bytes_total; /* into this tier */
		/* Set by the daemon from the totals each tick. */
		double promote_bytes_per_s;
		double demote_bytes_per_s;
	} tier[TOPO_MAX_TIERS];
	struct {
		uint64_t promoted_bytes_total;
		uint64_t demoted_bytes_total;
	} node[TOPO_MAX_NODES]; /* by node index */
	struct {
		uint64_t fast_tier_bytes;
		uint64_t promoted_bytes_total;
		uint64_t demoted_bytes_total;
	} cgroup[CONF_MAX_CGROUPS]; /* by index in conf->cgroups */
	uint64_t migrate_errors_total[NR_ERRC];
	uint64_t move_pages_calls_total;
	/* Bytes that reached their target and the time the calls took: the
	 * migrate module adds, the copy-thread controller takes deltas. */
	uint64_t migrate_bytes_total;
	uint64_t migrate_ns_total;
	unsigned int copy_threads; /* 0 = not managed */
	int tick_nice; /* the nice value the last tick ran at */
	char sampler_source[16]; /* "none" until a sampler starts */
	char sampler_reason[160]; /* why that source */
	char sampler_not_taken[512]; /* "name: why" per source not taken, "; "-joined */
	double sampler_cpu_seconds_total; /* the source's (sampler_status) */
	double sampler_cost_pct; /* ... over its last drain interval */
	char sampler_cost_source[16]; /* how it is known; "none" */
	uint64_t sampler_samples_total;
	uint64_t sampler_peeks_total;	/* looks the source woke tierd for */
	uint64_t sampler_wakes_total;	/* ticks a peek brought forward */
	/* The last decision (mod_decide): thresholds, what it planned, what
	 * it held back and why; candidate_pages is what it weighed. */
	struct policy_stats decision;
	uint64_t decision_candidate_pages;
	/* Knobs tierd had set that someone else changed since: theirs now,
	 * never written again; "name,name" (threads.c). */
	char knobs_foreign[128];
};

struct tierd_module {
	const char *name;
	/* Config and topology are in place; may add event sources to d->event.
	 * A negative errno stops tierd from starting. */
	int (*start)(struct tierd *d, void **ret_priv);
	/* Could @next replace the running config?  A negative errno refuses
	 * the reload; @why (a sentence) says why. */
	int (*reload_check)(struct tierd *d, void *priv,
			    const struct tierd_conf *next, char *why,
			    size_t why_size);
	/* d->conf and d->topo are the new ones now; may not fail. */
	void (*reload_apply)(struct tierd *d, void *priv);
	int (*tick)(struct tierd *d, void *priv, uint64_t now_ns);
	/* Between ticks, while idle (tierd_peek()): 1 when the next tick should
	 * come now, 0 when not, -errno.  Must be cheap: no waiting. */
	int (*peek)(struct tierd *d, void *priv, uint64_t now_ns);
	/* After every tick, @on: ask the source to make peek_fd() readable
	 * when a peek is worth making before @until_ns, the next tick; off:
	 * ask it not to, and forget what it had. */
	void (*peek_arm)(struct tierd *d, void *priv, bool on, uint64_t until_ns);
	/* That descriptor, *@gen changing when it is a new one; -errno none. */
	int (*peek_fd)(struct tierd *d, void *priv, uint32_t *gen);
	void (*metrics)(struct tierd *d, void *priv, struct metrics *m);
	void (*restore_knobs)(struct tierd *d, void *priv);
	void (*stop)(struct tierd *d, void *priv);
};

#define TIERD_MAX_MODULES 16

struct tierd {
	struct sd_event *event; /* NULL in unit tests */
	const char *root; /* "/", or a fixture tree (--root) */
	char config_path[CONF_PATH_MAX];
	char runtime_dir[CONF_PATH_MAX];
	bool config_is_default; /* a missing default file means defaults */
	bool no_knobs; /* --no-knobs: never write a kernel knob */
	bool dry_run_override; /* tierctl dry-run on|off since the last reload */
	bool dry_run; /* in effect: conf->dry_run or the override */

	struct tierd_conf *conf;
	struct topology topo;
	gid_t control_gid; /* conf->control.group resolved; (gid_t)-1 none */

	const struct tierd_module *modules[TIERD_MAX_MODULES];
	void *module_priv[TIERD_MAX_MODULES];
	bool module_started[TIERD_MAX_MODULES];
	int nr_modules;
	int module_last_error[TIERD_MAX_MODULES]; /* to log each new error once */
	/* Time in each module's tick: wall clock and this thread's CPU. */
	uint64_t module_tick_ns[TIERD_MAX_MODULES];
	uint64_t module_tick_cpu_ns[TIERD_MAX_MODULES];

	struct pipeline *pipe; /* shared by the pipeline modules (pipeline.h) */
	struct tierd_stats stats;
	struct tierd_stats prev_stats; /* at the previous tick, for rates */

	uint64_t start_realtime_ns;
	uint64_t start_ns, last_tick_ns, last_tick_duration_ns,
		last_textfile_ns;
	uint64_t ticks_total;
	uint32_t idle_ticks; /* ticks in a row that found nothing worth moving */
	bool wake_pending; /* a peek asked for the next tick now */
	bool last_tick_woken; /* the last tick was one a peek asked for */
	int start_nice; /* the nice tierd started at: its ticks' */
	bool may_raise; /* it may go back up to start_nice after resting lower */
	int tick_nice_error; /* last errno of raising it for a tick, logged once */
	uint64_t reloads_ok_total, reloads_failed_total;
	bool ready; /* READY=1 sent */
	int topo_error; /* last topology refresh error, logged once */
};

/*
 * The least memory that matters once idle: a peek wakes tierd for new heat
 * in no less (with the share of mod_sample.c's WAKE_SHARE), and a tick that
 * moves less does not put the sampling back at full pace (mod_sample.c).
 */
#define TIERD_IDLE_MOVE_BYTES (8ull << 20)

/* Milliseconds to the next tick: interval_ms, doubled for each idle tick in
 * a row, at most idle_interval_ms; 0 while a backlog lasts (pipeline.h). */
uint32_t tierd_interval_ms(const struct tierd *d);

/*
 * Peeks: while idle, ticks are up to idle_interval_ms apart, and new heat
 * (a workload whose hot set moved) would wait for the next one.  So each
 * idle tick arms the modules' sources (peek_arm), and when one of them says
 * a look is worth it -- the DAMON source's program saw an aggregation with
 * heat its copy of the table does not have -- tierd_peek_fd() turns
 * readable and the loop calls tierd_peek(), which asks the modules to look
 * for themselves (the sample module: sampler_peek() against the table).
 * Returns 1 when the next tick should come now, else 0.  Not while ticks
 * come at interval_ms anyway, and a woken tick arms nothing: one wake-up
 * between two regular ticks at the most, and none while the hot set stays
 * where it is.
 */
/* The descriptor to watch, *@gen changing when it is a new one; -1 when
 * there is none (sampling.damon.idle_peek: false, or no source offers one
 * yet: the DAMON source's feed starts at its first idle pace). */
int tierd_peek_fd(struct tierd *d, uint32_t *gen);
int tierd_peek(struct tierd *d, uint64_t now_ns);

/* The built-in module list (modules.c), NULL-terminated. */
extern const struct tierd_module *const tierd_modules[];

static inline bool tierd_knobs_allowed(const struct tierd *d)
{
	return !d->no_knobs && !d->dry_run;
}

/* Load the config (defaults when the default path is missing), read the
 * topology, derive tiers, start the modules.  Logs what went wrong. */
int tierd_init(struct tierd *d, const struct tierd_module *const *modules);

/* One pipeline tick at @now_ns (CLOCK_MONOTONIC). */
int tierd_tick(struct tierd *d, uint64_t now_ns);

/* Parse, validate and swap in the config file; on any error keep running the
 * old one.  Returns 0, or a negative errno with @why holding the errors
 * (FILE:LINE:COLUMN: KEY: reason lines). */
int tierd_reload(struct tierd *d, char *why, size_t why_size);

/* Restore knobs and stop modules (reverse order); frees the config. */
void tierd_fini(struct tierd *d);

/* Set or clear the runtime dry-run override. */
void tierd_set_dry_run(struct tierd *d, bool on);

/* The one-line STATUS= text. */
void tierd_status_line(const struct tierd *d, char *buf, size_t size);

/* Fill @m with every metric tierd and its modules have. */
void tierd_metrics(struct tierd *d, struct metrics *m);

#endif
