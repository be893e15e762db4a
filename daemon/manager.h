/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The manager: the pipeline's stages and the arrays they hand on, and
 * manager_tick(), which runs them in order (manager.c; docs/architecture.md
 * has the picture):
 *
 *   1 sample  2 gather  3 decide  4 batch  5 migrate  6 account  7 export
 *
 * with the copy-thread controller between account and export.  Each
 * stage's inputs and outputs are arguments: arrays the manager owns, sized
 * at start from the config; nothing is allocated per tick.
 *
 * The event loop (loop.c) calls manager_tick() on its timer and
 * manager_peek() when the hotness source's descriptor turns readable, or
 * every manager_peek_every_ms() for a source that has none; the
 * lab's policy driver and the benchmarks call the same functions with
 * their fakes in struct manager_ops.
 */
#ifndef TIERD_MANAGER_H
#define TIERD_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon.h"
#include "migrate.h"
#include "stages.h"

struct sampler;
struct thp_ops;

/*
 * What stands in for the kernel, for tests, benchmarks and the lab's
 * drivers; NULL (or a NULL member) is the real thing.
 */
struct manager_ops {
	struct sampler *sampler; /* instead of probing BPF and DAMON */
	const pid_t *pids; /* tracked instead of scanning /proc; sorted */
	size_t nr_pids;
	const struct mig_ops *mig_ops; /* instead of move_pages(2) */
	void *mig_ctx;
	/* THP lookups (sys/thp.h) on ROOT/proc's pagemaps, instead of none
	 * under a fixture root */
	const struct thp_ops *thp_ops;
	void *thp_ctx;
};

enum manager_step {
	MGR_SAMPLE,
	MGR_GATHER,
	MGR_DECIDE,
	MGR_BATCH,
	MGR_MIGRATE,
	MGR_ACCOUNT,
	MGR_THREADS,
	MGR_EXPORT,
	MGR_NR_STEPS,
};

/* "sample", "gather", ...: the metrics' step label. */
const char *manager_step_name(enum manager_step s);

struct manager {
	struct tierd *d; /* config, topology, counters */
	struct manager_ops ops;

	struct sample_stage *sample;
	struct gather_stage *gather;
	struct decide_stage *decide;
	struct move_stage *move;
	struct threads *threads;

	/* What the stages hand on, sized at start. */
	struct cand_procs *procs; /* sample -> gather */
	struct cand_ranges *ranges; /* account -> gather (range memory) */
	uint64_t fast_bytes[CONF_MAX_CGROUPS]; /* gather -> decide */
	struct cand_out gathered; /* gather -> decide; .cand: max_cand */
	struct hot_heat_bin table_hist[POLICY_HEAT_BINS]; /* sample -> decide */
	struct decide_out decided; /* decide -> batch; .intents */
	const struct batch_plan *plan; /* batch -> migrate; NULL: nothing */
	struct acct_call *calls; /* migrate -> account, one per batch */
	struct mig_run_result run; /* migrate -> account */

	/*
	 * More was worth moving than one tick's budget carried (decide's time
	 * budget cut the intents, or migrate's budget stopped the plan).  The
	 * next tick comes at once and moves on from the table as it is,
	 * sampling again only every STAGE_BACKLOG_SAMPLE_EVERY ticks: a drain
	 * costs as much as a second of copying in the lab, and heat a second
	 * old still names the same pages.  Also when gather's candidate cap
	 * left table entries unlooked at and the tick's moves landed, so a
	 * hot set larger than one tick's candidates moves tick after tick at
	 * once; when nothing landed (moves refused, a dry run) or a rate limit
	 * held candidates back, the next tick waits its interval, and tierd
	 * does not spin on what cannot, or may not yet, move.
	 */
	bool backlog;
	/* The last tick's moves were cut short, at decide's bytes or intents
	 * or migrate's budget: gather's idle passes go on from what they
	 * staged then (core/cand_idle.c, cand_walks_begin()). */
	bool moves_cut;
	/* This tick's decide held a move back for a rate limit: the moves
	 * wait for the bucket, not for heat, so the tick is not idle. */
	bool rate_held;
	uint64_t moved_bytes_total; /* reached their target node */
	uint64_t move_ns_total; /* time spent in move_pages calls */

	uint32_t idle_ticks; /* ticks in a row that found nothing worth moving */
	bool wake_pending; /* a peek asked for the next tick now */
	bool last_tick_woken; /* the last tick was one a peek asked for */

	/* Time in each step: wall clock and this thread's CPU. */
	uint64_t step_ns[MGR_NR_STEPS];
	uint64_t step_cpu_ns[MGR_NR_STEPS];
	int step_error[MGR_NR_STEPS]; /* to log each new error once */
};

/* Start the stages for @d's config (tierd_init() first); @ops may be NULL.
 * Logs what went wrong; manager_fini() also after a failure. */
int manager_init(struct manager *m, struct tierd *d, const struct manager_ops *ops);

/* One tick at @now_ns (CLOCK_MONOTONIC): the numbered steps.  Returns the
 * last step error (each is logged once until it changes), else 0. */
int manager_tick(struct manager *m, uint64_t now_ns);

/* Could @next replace the running config?  A negative errno refuses it,
 * @why saying which stage and why ("FILE: STAGE: reason"). */
int manager_reload_check(struct manager *m, const struct tierd_conf *next, char *why,
			 size_t why_size);
/* d->conf and d->topo are the new ones now; may not fail. */
void manager_reload_apply(struct manager *m);

/* Restore knobs, stop the stages (reverse order), free the arrays. */
void manager_fini(struct manager *m);

/* Did a tick that left @hot, planned @plan (NULL: nothing) and looked at
 * @cand_pages find nothing worth moving?  manager.c says what counts. */
bool manager_tick_idle(const struct hot_table *hot, const struct batch_plan *plan,
		       uint64_t cand_pages);

/* Milliseconds to the next tick: interval_ms, doubled for each idle tick in
 * a row, at most idle_interval_ms; 0 while a backlog lasts. */
uint32_t manager_interval_ms(const struct manager *m);

/*
 * Peeks: while idle, ticks are up to idle_interval_ms apart, and new heat
 * (a workload whose hot set moved) would wait for the next one.  So each
 * idle tick arms the hotness source (sample_peek_arm()), and when it says
 * a look is worth it -- the DAMON source's program saw an aggregation with
 * heat its copy of the table does not have -- manager_peek_fd() turns
 * readable and the loop calls manager_peek(), which asks the sample stage
 * to look for itself (sampler_peek() against the table).  Returns 1 when
 * the next tick should come now, else 0.  Not while ticks come at
 * interval_ms anyway.  A woken tick that finds nothing to move was woken by
 * noise (cold memory the sampler hit): the next wake needs twice the new
 * heat that one saw (sample_peek_settle()), until a tick moves memory.
 */
/* The descriptor to watch, *@gen changing when it is a new one; -1 when
 * there is none (sampling.damon.idle_peek: false, or the source offers
 * none yet: the DAMON source's feed starts at its first idle pace). */
int manager_peek_fd(struct manager *m, uint32_t *gen);
int manager_peek(struct manager *m, uint64_t now_ns);
/* A source whose peeks are not armed (the BPF sampler, whose counts a peek
 * reads in one batch): peek every interval_ms while idle.  0 when not now
 * (not idle) or not such a source. */
uint32_t manager_peek_every_ms(struct manager *m);

/* The hotness source's descriptor (sampler_fd()): readable when a drain
 * came back without what the source waited for from the kernel and it is
 * there now, so the next tick is worth making at once.  -1 when there is
 * none; it may change when the source starts again. */
int manager_sampler_fd(struct manager *m);

#endif
