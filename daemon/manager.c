// SPDX-License-Identifier: GPL-2.0-only
/*
 * The manager: start, tick, reload, stop of the pipeline's stages.  The
 * tick is the pipeline, one numbered step after the other, each stage's
 * inputs and outputs passed here (manager.h, stages.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_usage.h"
#include "hot_table.h"
#include "log.h"
#include "manager.h"

static const char *const step_names[MGR_NR_STEPS] = {
	[MGR_SAMPLE] = "sample", [MGR_GATHER] = "gather", [MGR_DECIDE] = "decide",
	[MGR_BATCH] = "batch", [MGR_MIGRATE] = "migrate", [MGR_ACCOUNT] = "account",
	[MGR_THREADS] = "threads", [MGR_EXPORT] = "export",
};

const char *manager_step_name(enum manager_step s)
{
	return s < MGR_NR_STEPS ? step_names[s] : "?";
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct step_clock {
	uint64_t wall, cpu;
};

static void step_begin(struct step_clock *c)
{
	c->wall = clock_ns(CLOCK_MONOTONIC);
	c->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Time step @s took since @c; its error @r logged once until it changes. */
static int step_end(struct manager *m, enum manager_step s, const struct step_clock *c, int r)
{
	m->step_cpu_ns[s] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c->cpu;
	m->step_ns[s] += clock_ns(CLOCK_MONOTONIC) - c->wall;
	if (r < 0 && r != m->step_error[s])
		log_warn("%s: %s (logged once until it changes)", step_names[s], strerror(-r));
	m->step_error[s] = r < 0 ? r : 0;
	return r;
}

static int start_stages(struct manager *m, const struct manager_ops *ops, size_t max_cand)
{
	struct tierd *d = m->d;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int r;

	r = sample_new(d, ops, &d->stats, &m->sample);
	if (r == 0)
		r = gather_new(d, ops, max_cand, &d->stats, &m->gather);
	if (r == 0)
		r = decide_new(d, max_cand, &m->decide);
	if (r == 0)
		r = move_new(d, ops, &m->move);
	if (r == 0)
		r = threads_new(d, &d->stats, &m->threads);
	if (r < 0) {
		log_err("Failed to start the pipeline: %s", strerror(-r));
		return r;
	}
	/* -v: what delays the first tick */
	log_debug("pipeline started in %.3f s, %.3f s after tierd",
		  (clock_ns(CLOCK_MONOTONIC) - t0) / 1e9,
		  (clock_ns(CLOCK_MONOTONIC) - d->start_ns) / 1e9);
	return 0;
}

int manager_init(struct manager *m, struct tierd *d, const struct manager_ops *ops)
{
	size_t max_cand = decide_max_cand(d->conf, &d->geom);
	int r;

	memset(m, 0, sizeof(*m));
	m->d = d;
	d->mgr = m;
	if (ops)
		m->ops = *ops;
	m->procs = calloc(1, sizeof(*m->procs));
	m->ranges = calloc(1, sizeof(*m->ranges));
	m->gathered.cand = calloc(max_cand, sizeof(*m->gathered.cand));
	m->decided.max_intents = max_cand + DECIDE_MAX_RETRIES;
	m->decided.intents = calloc(m->decided.max_intents, sizeof(*m->decided.intents));
	/* A plan has at most one batch per entry, one entry per intent's page
	 * (batch_new()'s bound). */
	m->calls = calloc(m->decided.max_intents, sizeof(*m->calls));
	if (m->ranges)
		cand_ranges_init(m->ranges, &d->geom);
	if (!m->procs || !m->ranges || !m->gathered.cand || !m->decided.intents || !m->calls) {
		log_err("Failed to start the pipeline: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* The stages' start is what the first tick waits for: bounded work at
	 * the tick's priority, the one tierd started at (tierd_tick_priority()). */
	r = start_stages(m, ops, max_cand);
	tierd_rest_priority(d);
	return r;
}

/*
 * The policy held candidates back for a rate limit this tick: the next tick
 * at once would find the bucket nearly empty, move the little it refilled,
 * and gather and sort all over again, tick after tick.
 */
static bool rate_held(const struct policy_stats *st)
{
	return st->held[POLICY_H_GLOBAL_RATE] || st->held[POLICY_H_CGROUP_RATE];
}

/* 2. gather: each cgroup's fast-tier bytes, then the candidates and their
 * nodes, a quarter kept for the coldest when decide may demote; the pages
 * in busy back-off left out (core/account). */
static int step_gather(struct manager *m, struct hot_table *hot, uint64_t now_ns)
{
	const struct tierd *d = m->d;
	struct gather_in in = {
		.conf = d->conf, .topo = &d->topo, .hot = hot,
		.procs = m->procs, .ranges = m->ranges, .idle = sample_idle(m->sample),
		.fast_bytes = m->fast_bytes, .cg_wait = m->decided.cg_wait,
		.cut = m->moves_cut,
	};

	gather_usage(m->gather, d->conf, &d->topo, m->fast_bytes);
	for (int i = 0; i < d->conf->nr_cgroups; i++)
		m->d->stats.cgroup[i].fast_tier_bytes = m->fast_bytes[i];
	in.demote = decide_may_demote(m->decide, d->conf, &d->topo, m->fast_bytes);
	in.footprint_bytes = sample_footprint(m->sample);
	gather_step(m->gather, &in, now_ns, &m->gathered);
	m->gathered.nr_cand = account_hold_back(move_account(m->move), m->gathered.cand,
						m->gathered.nr_cand, now_ns, NULL);
	return 0;
}

/* 3. decide: intents within the tick's time budget, then the -EBUSY
 * retries that are due. */
static int step_decide(struct manager *m, uint64_t now_ns)
{
	struct tierd *d = m->d;
	struct account *a = move_account(m->move);
	bool hist = sample_table_hist(m->sample, &d->topo, now_ns, m->table_hist);
	struct decide_in in = {
		.conf = d->conf, .topo = &d->topo, .cands = &m->gathered,
		.fast_bytes = m->fast_bytes,
		.blocked_nodes = account_blocked_mask(a, &d->topo, now_ns),
		.bytes_per_s = a->last_bytes_per_s,
		.footprint_bytes = sample_footprint(m->sample),
		.crowded_hot = sample_crowded_hot(m->sample),
		.table_hist = hist ? m->table_hist : NULL,
		.news_since_ns = sample_news_since(m->sample),
		.gpu_usage = gather_gpu_usage(m->gather),
	};
	struct decide_out *out = &m->decided;
	int r = decide_step(m->decide, &in, now_ns, out);
	size_t retries;

	if (r < 0)
		return r;
	m->backlog = out->cut;
	m->rate_held = rate_held(&out->stats);
	retries = account_take_retries(a, now_ns, out->intents + out->nr_intents,
				       DECIDE_MAX_RETRIES);
	/* The policy did not weigh them: a retry onto a GPU rule's node
	 * counts against the rule like a planned move. */
	gpu_usage_planned(in.gpu_usage, out->intents + out->nr_intents, retries);
	out->nr_intents += retries;
	d->stats.decision = out->stats;
	d->stats.decision_candidate_pages = m->gathered.slots;
	return 0;
}

/* 4. batch: the intents as move_pages calls. */
static int step_batch(struct manager *m, uint64_t now_ns)
{
	const struct decide_out *dec = &m->decided;
	int r;

	if (!dec->nr_intents)
		return 0;
	r = decide_batch(m->decide, dec->intents, dec->nr_intents, &m->plan);
	if (r < 0) {
		m->plan = NULL;
		return r;
	}
	/* -v only: what a tick decided, to see where the time goes. */
	log_debug("decide at %.3f s: %zu candidates (%zu pages queried or THPs), hot threshold %u (crowded floor %u), %zu intents, %llu pages in %zu batches",
		  (double)(now_ns - m->d->start_ns) / 1e9, m->gathered.nr_cand, m->gathered.slots,
		  dec->stats.hot_threshold, dec->stats.crowded_floor, dec->nr_intents,
		  (unsigned long long)m->plan->pages, m->plan->nr_batches);
	return 0;
}

/* 5. migrate: the plan through move_pages(2), within the time budget. */
static int step_migrate(struct manager *m, uint64_t now_ns)
{
	struct move_in in = {
		.topo = &m->d->topo, .plan = m->plan, .intents = m->decided.intents,
		.dry_run = m->d->dry_run,
	};
	struct mig_run_result *run = &m->run;
	int r = move_step(m->move, &in, now_ns, m->calls, run);

	if (r < 0)
		return r;
	return run->first_error && run->failed_calls == run->calls ? run->first_error : 0;
}

/* 6. account: what the calls did into the counters and the range memory;
 * a backlog when the budget stopped the plan, or when the candidate cap
 * did and the moves landed. */
static int step_account(struct manager *m, uint64_t now_ns)
{
	struct tierd *d = m->d;
	struct mig_run_result *run = &m->run;
	struct account_in in = {
		.conf = d->conf, .topo = &d->topo, .plan = m->plan,
		.intents = m->decided.intents, .calls = m->calls, .run = run,
		.dry_run = d->dry_run,
	};

	account_step(m->move, &in, m->ranges, &d->stats, now_ns);
	if (!d->dry_run) {
		m->moved_bytes_total += run->moved_bytes;
		m->move_ns_total += run->elapsed_ns;
	}
	m->moves_cut = m->decided.cut || run->skipped_batches;
	if (run->skipped_batches ||
	    (m->gathered.capped && run->moved_bytes && !m->rate_held))
		m->backlog = true;
	/* -v only: what a tick moved, to see where the time goes. */
	log_debug("migrate at %.3f s: %zu calls, %.1f MiB moved in %.3f s of move_pages (calls of %.3f-%.3f s, %.3f s from the first's start to the last's end), %zu batches left for later, %zu for want of room",
		  (double)(now_ns - d->start_ns) / 1e9, run->calls, run->moved_bytes / 1048576.0,
		  run->elapsed_ns / 1e9, run->min_call_ns / 1e9, run->max_call_ns / 1e9,
		  run->span_ns / 1e9, run->skipped_batches, run->room_skipped_batches);
	return 0;
}

/*
 * Idle: what is hot is where it belongs.  The table holds heat, and this
 * tick planned no move or at most 1% of the pages it found hot: DAMON's
 * regions straddle the edges of a hot set, so a converged tick still plans
 * a few hundred edge pages now and then (402 of 49734 in the lab), and
 * that must not keep the sampling at full pace.  An empty table (a sampler
 * that has seen nothing yet) is not idle: the first heat must not wait.
 */
bool manager_tick_idle(const struct hot_table *hot, const struct batch_plan *plan,
		       uint64_t cand_pages)
{
	if (!hot || !hot->nused)
		return false;
	if (!plan || !plan->nr_batches)
		return true;
	return plan->pages * 100 <= cand_pages;
}

/* Steps 2 to 6: from the table to moved pages.  An error stops the tick's
 * later steps; the next tick starts over from the table. */
static int decide_and_move(struct manager *m, struct hot_table *hot, uint64_t now_ns)
{
	struct step_clock c;
	int r;

	/* 2. gather */
	step_begin(&c);
	r = step_end(m, MGR_GATHER, &c, step_gather(m, hot, now_ns));
	m->moves_cut = false;	/* the last tick's, read; account sets this one's */
	/* 3. decide */
	step_begin(&c);
	r = step_end(m, MGR_DECIDE, &c, r < 0 ? r : step_decide(m, now_ns));
	if (r < 0)
		return r;
	/* 4. batch */
	step_begin(&c);
	r = step_end(m, MGR_BATCH, &c, step_batch(m, now_ns));
	if (r < 0 || !m->plan || !m->plan->nr_batches)
		return r;
	/* 5. migrate */
	step_begin(&c);
	r = step_end(m, MGR_MIGRATE, &c, step_migrate(m, now_ns));
	if (r < 0 && !m->run.calls)
		return r;
	/* 6. account */
	step_begin(&c);
	step_end(m, MGR_ACCOUNT, &c, step_account(m, now_ns));
	return r;
}

/* -v: where each tick's time goes, step by step. */
static void log_steps(const struct manager *m, const uint64_t *before, uint64_t now_ns)
{
	char steps[256];
	size_t len = 0;

	steps[0] = '\0';
	for (int i = 0; i < MGR_NR_STEPS && len < sizeof(steps); i++)
		len += (size_t)snprintf(steps + len, sizeof(steps) - len, " %s %.3f s",
					step_names[i], (m->step_ns[i] - before[i]) / 1e9);
	log_debug("tick at %.3f s:%s", (now_ns - m->d->start_ns) / 1e9, steps);
}

int manager_tick(struct manager *m, uint64_t now_ns)
{
	struct tierd *d = m->d;
	struct sample_in sin = {
		.backlog = m->backlog, .idle_ticks = m->idle_ticks,
		.moved_bytes_total = m->moved_bytes_total, .start_ns = d->start_ns,
	};
	uint64_t before[MGR_NR_STEPS];
	struct hot_table *hot;
	struct step_clock c;
	int r, ret = 0;

	memcpy(before, m->step_ns, sizeof(before));
	m->last_tick_woken = m->wake_pending;
	m->wake_pending = false;
	tierd_tick_priority(d);
	tierd_refresh_topology(d);

	/* 1. sample: new heat into the table */
	step_begin(&c);
	r = step_end(m, MGR_SAMPLE, &c,
		     sample_step(m->sample, d->conf, &sin, m->procs, &d->stats, now_ns));
	ret = r < 0 ? r : ret;
	m->plan = NULL;
	m->backlog = false;
	m->rate_held = false;
	m->gathered.capped = false;
	memset(&m->run, 0, sizeof(m->run));
	hot = sample_table(m->sample);
	/* 2-6. gather, decide, batch, migrate, account */
	if (hot && d->topo.nr_tiers >= 2) {
		r = decide_and_move(m, hot, now_ns);
		ret = r < 0 ? r : ret;
	}
	d->stats.busy_backoff_pages = account_busy_pages(move_account(m->move), now_ns);
	/* Copy threads, from this tick's throughput */
	step_begin(&c);
	r = step_end(m, MGR_THREADS, &c, threads_step(m->threads, d, &d->stats, now_ns));
	ret = r < 0 ? r : ret;
	tierd_rest_priority(d);

	/* A rate limit's hold is not idle: a slower pace would only
	 * stretch the wait for the bucket. */
	if (manager_tick_idle(hot, m->plan, m->gathered.slots) && !m->rate_held)
		m->idle_ticks++;
	else
		m->idle_ticks = 0;
	/* Armed while idle; a false alarm raises the next wake's bar. */
	sample_peek_settle(m->sample, m->last_tick_woken, m->idle_ticks);
	sample_peek_arm(m->sample, sample_peeks(m->sample, d->conf) && m->idle_ticks,
			now_ns + (uint64_t)manager_interval_ms(m) * 1000000);
	/* 7. export: rates, textfile metrics, sd_notify */
	step_begin(&c);
	export_step(d, now_ns);
	step_end(m, MGR_EXPORT, &c, 0);
	if (log_enabled(LOG_DEBUG))
		log_steps(m, before, now_ns);
	return ret;
}

uint32_t manager_interval_ms(const struct manager *m)
{
	const struct tierd_conf *c = m->d->conf;
	uint32_t ms = c->interval_ms, idle = c->idle_interval_ms;

	if (m->backlog)
		return 0; /* the next tick at once */
	for (uint32_t i = 0; i < m->idle_ticks && ms < idle; i++)
		ms = ms > idle / 2 ? idle : 2 * ms;
	return ms;
}

int manager_peek_fd(struct manager *m, uint32_t *gen)
{
	int fd;

	if (!sample_peeks(m->sample, m->d->conf))
		return -1;
	fd = sample_peek_fd(m->sample, gen);
	return fd >= 0 ? fd : -1;
}

uint32_t manager_peek_every_ms(struct manager *m)
{
	if (!m->idle_ticks || !sample_peeks_timed(m->sample))
		return 0;
	return m->d->conf->interval_ms;
}

int manager_sampler_fd(struct manager *m)
{
	return m->sample ? sample_fd(m->sample) : -1;
}

int manager_peek(struct manager *m, uint64_t now_ns)
{
	struct tierd *d = m->d;
	int r;

	if (!sample_peeks(m->sample, d->conf) || !m->idle_ticks || m->wake_pending) {
		/* A wake that crossed a disarm: drop it until the next tick. */
		sample_peek_arm(m->sample, false, 0);
		return 0;
	}
	d->stats.sampler_peeks_total++;
	r = sample_peek(m->sample, d->start_ns, now_ns);
	if (r < 0)
		log_debug("sample: peek: %s", strerror(-r));
	if (r <= 0)
		return 0;
	m->wake_pending = true;
	d->stats.sampler_wakes_total++;
	return 1;
}

int manager_reload_check(struct manager *m, const struct tierd_conf *next, char *why,
			 size_t why_size)
{
	const char *path = m->d->config_path;
	char swhy[256] = "";
	int r;

	r = sample_reload_check(m->d->conf, next, swhy, sizeof(swhy));
	if (r < 0) {
		snprintf(why, why_size, "%s: sample: %s\n", path, swhy[0] ? swhy : strerror(-r));
		return r;
	}
	r = decide_reload_check(next, &m->d->geom, swhy, sizeof(swhy));
	if (r < 0)
		snprintf(why, why_size, "%s: decide: %s\n", path, swhy[0] ? swhy : strerror(-r));
	return r;
}

void manager_reload_apply(struct manager *m)
{
	struct tierd *d = m->d;

	sample_reload_apply(m->sample, d->conf, m->procs);
	gather_reload_apply(m->gather, d->conf);
	decide_reload_apply(m->decide, d, d->last_tick_ns);
	threads_reload_apply(m->threads, d);
}

void manager_fini(struct manager *m)
{
	if (!m->d)
		return;
	threads_restore_knobs(m->threads, m->d->runtime_dir);
	threads_free(m->threads);
	move_free(m->move);
	decide_free(m->decide);
	gather_free(m->gather);
	sample_free(m->sample);
	free(m->calls);
	free(m->decided.intents);
	free(m->gathered.cand);
	free(m->ranges);
	free(m->procs);
	m->d->mgr = NULL;
	memset(m, 0, sizeof(*m));
}
