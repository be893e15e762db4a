// SPDX-License-Identifier: GPL-2.0-only
/*
 * Step 1, sample: which processes are tracked (sys/targets), the hotness
 * source that watches them (sys/sampler_bpf or sys/sampler_damon, the
 * first that runs; sample_sources.c sets them up), and the bounded table their heat goes into
 * (core/hotness).  Also which configured cgroup each tracked process is in,
 * for the gather step.
 *
 * A source changes kernel state (perf events, a kdamond), so none starts
 * with --no-knobs or on a fixture tree (--root); status says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cgroup.h"
#include "daemon.h"
#include "damon_fit.h"
#include "fsutil.h"
#include "idle.h"
#include "log.h"
#include "manager.h"
#include "procmem.h"
#include "sampler.h"
#include "record.h"
#include "sample_int.h"
#include "sample_sources.h"
#include "stages.h"
#include "targets.h"

#define NSEC_PER_MSEC 1000000ull
#define SCAN_INTERVAL_NS (2000 * NSEC_PER_MSEC) /* /proc walk for targets */

/* tierd.yaml sampling.targets as targets rules (see targets.h). */
static int targets_setup(struct sample_stage *m, const struct tierd_conf *c)
{
	uint64_t min_rss = c->sampling.target_min_rss_bytes;
	struct targets_params tp = { 0 };
	size_t n = 0;

	m->cgroups = c->sampling.target_cgroups;
	m->comms = c->sampling.target_comms;
	for (int i = 0; i < m->cgroups.n; i++)
		m->rules[n++] = (struct targets_rule){ .cgroup = m->cgroups.s[i],
						       .min_rss_bytes = min_rss };
	for (int i = 0; i < m->comms.n; i++)
		m->rules[n++] = (struct targets_rule){ .comm = m->comms.s[i],
						       .min_rss_bytes = min_rss };
	if (!n)
		m->rules[n++] = (struct targets_rule){ .min_rss_bytes = min_rss };
	tp.rules = m->rules;
	tp.nrules = n;
	tp.max_targets = CAND_MAX_PROCS;
	tp.page_size = m->geom.base;
	if (m->targets_ok)
		targets_free(&m->targets);
	m->targets_ok = false;
	if (targets_init(&m->targets, &tp) < 0)
		return -ENOMEM;
	m->targets_ok = true;
	m->last_scan_ns = 0;
	return 0;
}

static int hot_setup(struct sample_stage *m, const struct tierd_conf *c,
		     const struct page_geom *g, uint64_t now_ns)
{
	struct hot_params hp = {
		.half_life_ns = c->sampling.half_life_ms * NSEC_PER_MSEC,
		.max_entries = (uint32_t)c->sampling.max_tracked_pages,
		.geom = *g,
	};
	size_t len = hot_mem_size(hp.max_entries);
	void *mem;

	if (!len)
		return -EINVAL;
	/* Fresh anonymous memory is zero: clearing the default table's 20 MiB
	 * would cost the lab guest's start-up half a second under TCG, before
	 * the first tick, and make all of it resident at once. */
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -ENOMEM;
	m->hot_mem = mem;
	m->hot_mem_len = len;
	hp.mem_zeroed = true;
	return hot_init(&m->hot, &hp, m->hot_mem, len, now_ns);
}

/*
 * Room for the idle ranges of one report: a range per region of the
 * DAMON source (its kdamond's max_nr_regions, at least as many as it
 * fits to a large footprint, core/damon_fit.h, and min_nr_regions for
 * each target), 32 bytes each, 4.4 MiB at the defaults; mapped, so only
 * the pages the reports fill become resident.  Attached where the source
 * can tell idle memory (sampler_idle_into()).
 */
static void idle_setup(struct sample_stage *m, const struct tierd_conf *c)
{
	uint64_t most = c->sampling.damon_max_regions > DAMON_FIT_MAX_REGIONS ?
				c->sampling.damon_max_regions : DAMON_FIT_MAX_REGIONS;
	uint64_t cap = most + (uint64_t)c->sampling.damon_min_regions * DAMON_MAX_TARGETS;
	void *mem;

	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	mem = mmap(NULL, cap * sizeof(struct idle_range), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		log_warn("No room for idle memory ranges (%s): only memory with heat is demoted",
			 strerror(errno));
		return;
	}
	idle_init(&m->idle, mem, (uint32_t)cap);
	m->idle_on = sampler_idle_into(m->s, &m->idle) == 0;
	if (!m->idle_on) {
		munmap(mem, cap * sizeof(struct idle_range));
		idle_init(&m->idle, NULL, 0);
		log_info("Idle memory: %s cannot tell it; only memory with heat is demoted",
			 m->s->ops->name);
		return;
	}
	m->idle_mem = mem;
	m->idle_len = cap * sizeof(struct idle_range);
}

/* The configured cgroup a process is in: the longest configured path that
 * is its cgroup or an ancestor of it; -1 when none. */
static int cgroup_index(const struct sample_stage *m, const struct tierd_conf *c, pid_t pid)
{
	char path[CONF_PATH_MAX];
	size_t best_len = 0;
	int best = -1;

	if (!c->nr_cgroups || cg_path_of_pid(m->proc_root, pid, path, sizeof(path)) < 0)
		return -1;
	for (int i = 0; i < c->nr_cgroups; i++) {
		size_t len = strlen(c->cgroups[i].path);

		if (strncmp(path, c->cgroups[i].path, len) ||
		    (path[len] && path[len] != '/' && len > 1))
			continue;
		if (len > best_len) {
			best_len = len;
			best = i;
		}
	}
	return best;
}

static void procs_update(struct sample_stage *m, const struct tierd_conf *c,
			 struct cand_procs *procs)
{
	procs->nr = 0;
	for (size_t i = 0; i < m->nr_pids; i++)
		procs->procs[procs->nr++] = (struct cand_proc){
			.pid = m->pids[i],
			.cgroup = cgroup_index(m, c, m->pids[i]),
			.rule = -1,
		};
	procs->generation++;
}

static void set_reason(struct tierd_stats *st, const char *why)
{
	snprintf(st->sampler_reason, sizeof(st->sampler_reason), "%.*s",
		 (int)sizeof(st->sampler_reason) - 1, why);
}

static int sample_start(struct sample_stage *m, const struct tierd *d,
			const struct manager_ops *ops, struct tierd_stats *st)
{
	char why[512] = "", skipped[512];
	int r;

	m->pids = calloc(CAND_MAX_PROCS, sizeof(*m->pids));
	if (!m->pids)
		return -ENOMEM;
	r = targets_setup(m, d->conf);
	if (r < 0)
		return r;
	r = hot_setup(m, d->conf, &m->geom, 0);
	if (r < 0)
		return r;
	if (d->record)
		hot_set_observer(&m->hot, record_observe, d->record);
	if (ops && ops->sampler) {
		r = sampler_pick(&ops->sampler, 1, why, sizeof(why));
		if (r < 0)
			return r;
		m->s = ops->sampler;
		snprintf(st->sampler_source, sizeof(st->sampler_source), "%s", m->s->ops->name);
		idle_setup(m, d->conf);
		return 0;
	}
	if (d->no_knobs || strcmp(d->root, "/")) {
		snprintf(st->sampler_reason, sizeof(st->sampler_reason),
			 "%s: a hotness source changes kernel state (perf events, a kdamond)",
			 d->no_knobs ? "--no-knobs" : "--root is a fixture tree");
		log_notice("No hotness source: %s", st->sampler_reason);
		return 0;
	}
	r = sample_sources_new(d, st, m->cands, &m->nr_cands);
	if (r < 0)
		return r;
	r = sampler_pick_skipped(m->cands, m->nr_cands, why, sizeof(why), skipped,
				 sizeof(skipped));
	sample_list_add(st->sampler_not_taken, sizeof(st->sampler_not_taken), skipped);
	if (r < 0) {
		set_reason(st, why);
		log_warn("No hotness source, nothing will be promoted: %s", why);
		return 0;
	}
	m->s = m->cands[r];
	snprintf(st->sampler_source, sizeof(st->sampler_source), "%s", m->s->ops->name);
	set_reason(st, why);
	log_info("Hotness source: %s", why);
	idle_setup(m, d->conf);
	return 0;
}

/* How many processes the source may watch: DAMON_MAX_TARGETS for the
 * DAMON source, every tracked one for the others. */
static int watch_setup(struct sample_stage *m, struct tierd_stats *st)
{
	size_t bound = strcmp(m->s->ops->name, "damon") ? CAND_MAX_PROCS : DAMON_MAX_TARGETS;
	int r;

	m->watched = calloc(CAND_MAX_PROCS, sizeof(*m->watched));
	m->fake_rss = calloc(CAND_MAX_PROCS, sizeof(*m->fake_rss));
	if (!m->watched || !m->fake_rss)
		return -ENOMEM;
	r = sample_watch_init(&m->watch, bound, CAND_MAX_PROCS);
	if (r < 0)
		return r;
	m->watch.proc_root = m->proc_root; /* ROOT/proc, as every reader here */
	m->watch_ok = true;
	st->watch_bound = bound;
	return 0;
}

int sample_new(const struct tierd *d, const struct manager_ops *ops,
	       struct tierd_stats *st, struct sample_stage **ret)
{
	struct sample_stage *m = calloc(1, sizeof(*m));
	int r;

	*ret = NULL;
	if (!m)
		return -ENOMEM;
	r = fs_path(m->proc_root, sizeof(m->proc_root), d->root, "proc");
	if (r < 0) {
		free(m);
		return r;
	}
	if (ops && ops->pids) {
		m->fake_pids = ops->pids;
		m->nr_fake_pids = ops->nr_pids;
	}
	m->topo = &d->topo;
	m->geom = d->geom;
	r = sample_start(m, d, ops, st);
	if (r == 0 && m->s)
		r = watch_setup(m, st);
	if (r < 0) {
		sample_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

struct hot_table *sample_table(struct sample_stage *m)
{
	return m && m->s ? &m->hot : NULL;
}

const struct idle_set *sample_idle(struct sample_stage *m)
{
	return m && m->s && m->idle_on ? &m->idle : NULL;
}

uint64_t sample_footprint(const struct sample_stage *m)
{
	return m ? m->footprint : 0;
}

uint32_t sample_crowded_hot(const struct sample_stage *m)
{
	return m && m->s ? m->s->crowded_hot : 0;
}

uint64_t sample_news_since(const struct sample_stage *m)
{
	uint64_t since;

	if (sample_crowded_hot(m) != POLICY_CROWDED_BACKGROUND || !m->news.on)
		return 0;
	/* In the candidates' terms (policy_page.last_access_ns). */
	since = hot_record_time(&m->hot, m->news.since_ns);
	return since ? since : 1;
}

bool sample_table_hist(const struct sample_stage *m, const struct topology *topo,
		       uint64_t now_ns, struct hot_heat_bin *hist)
{
	uint64_t fast = 0;

	if (sample_crowded_hot(m) != POLICY_CROWDED_BACKGROUND)
		return false;
	/* The policy asks only when the footprint outgrows the fast tier's
	 * room, which its whole size bounds: no pass over the table else. */
	for (int i = 0; i < topo->nr_nodes; i++)
		fast += topo_index_fast(topo, i) ? topo->nodes[i].total_bytes : 0;
	if (m->footprint <= fast)
		return false;
	hot_heat_hist(&m->hot, now_ns, hist, POLICY_HEAT_BINS);
	return true;
}

/* Resident memory of the given processes (manager_ops.pids), each into
 * fake_rss, from their statm where the root has one; their sum. */
static uint64_t fake_footprint(struct sample_stage *m, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (proc_rss_bytes(m->proc_root, m->fake_pids[i], m->geom.base, &m->fake_rss[i]) < 0)
			m->fake_rss[i] = 0;
		sum += m->fake_rss[i];
	}
	return sum;
}

static int rescan(struct sample_stage *m, const struct tierd_conf *c, struct cand_procs *procs,
		  struct tierd_stats *st, uint64_t now_ns)
{
	const pid_t *pids = m->targets.pids;
	const uint64_t *rss = m->targets.rss;
	size_t n;
	int r;

	if (m->fake_pids) {
		pids = m->fake_pids;
		rss = m->fake_rss;
		n = m->nr_fake_pids < CAND_MAX_PROCS ? m->nr_fake_pids : CAND_MAX_PROCS;
		m->footprint = fake_footprint(m, n);
	} else {
		r = targets_scan(&m->targets, NULL);
		if (r < 0)
			return r;
		n = m->targets.n;
		m->footprint = m->targets.rss_bytes;
		if (m->scan_source != 1 + m->targets.from_cgroups) {
			m->scan_source = 1 + m->targets.from_cgroups;
			log_info("Targets: %s", m->targets.from_cgroups ?
				 "the processes of the configured cgroups (their cgroup.procs)" :
				 "a walk of every process in /proc");
		}
	}
	st->watch_candidates = n + (m->fake_pids ? 0 : m->targets.overflow);
	if (m->watch_over != (st->watch_candidates > m->watch.p.bound)) {
		m->watch_over = !m->watch_over;
		if (m->watch_over)
			log_info("Targets: %u processes, the source watches %zu: those with the "
				 "most memory on lower tiers", st->watch_candidates, m->watch.p.bound);
		else
			log_info("Targets: %u processes, all watched", st->watch_candidates);
	}
	n = sample_watch_step(&m->watch, m->topo, pids, rss, n, m->watched, now_ns);
	pids = m->watched;
	st->watch_procs = n;
	st->watch_reads_total = m->watch.reads_total;
	if (n == m->nr_pids && !memcmp(m->pids, pids, n * sizeof(pid_t)))
		return 0;
	/* Heat of a process that is no longer tracked means nothing. */
	for (size_t i = 0, j = 0; i < m->nr_pids; i++) {
		while (j < n && pids[j] < m->pids[i])
			j++;
		if (j == n || pids[j] != m->pids[i])
			hot_drop_pid(&m->hot, m->pids[i]);
	}
	r = sampler_set_targets(m->s, pids, n);
	if (r < 0)
		return r;
	memcpy(m->pids, pids, n * sizeof(pid_t));
	m->nr_pids = n;
	procs_update(m, c, procs);
	return 0;
}

int sample_step(struct sample_stage *m, const struct tierd_conf *c, const struct sample_in *in,
		struct cand_procs *procs, struct tierd_stats *st, uint64_t now_ns)
{
	struct sampler_status ss;
	int r;

	if (!m->s)
		return 0;
	/* A backlog moves on from the table as it is (manager.h). */
	if (in->backlog && ++m->backlog_ticks % STAGE_BACKLOG_SAMPLE_EVERY)
		return 0;
	if (!in->backlog)
		m->backlog_ticks = 0;
	if (!m->last_scan_ns || now_ns - m->last_scan_ns >= SCAN_INTERVAL_NS) {
		m->last_scan_ns = now_ns;
		r = rescan(m, c, procs, st, now_ns);
		if (r < 0)
			return r;
	}
	r = sampler_drain(m->s, &m->hot, now_ns);
	if (r < 0)
		return r;
	sample_watch_news(m, now_ns);
	r = sample_set_pace(m, c, in, now_ns);
	if (r < 0)
		return r;
	sampler_describe(m->s, &ss);
	sample_fit_half_life(m, c, ss.period, now_ns);
	/* E.g. the DAMON source moving to its tracepoint at the first idle pace. */
	if (ss.generation != m->generation) {
		m->generation = ss.generation;
		log_info("Hotness source: %s: %s", ss.name, ss.why);
	}
	st->sampler_samples_total = ss.samples;
	st->table_samples_total = m->hot.st.samples;
	st->table_fresh_samples_total = m->hot.st.fresh;
	st->sampler_cpu_seconds_total = ss.cpu_seconds;
	st->sampler_cost_pct = ss.cost_pct;
	st->sampler_period = ss.period;
	st->heat_half_life_ns = m->hot.params.half_life_ns;
	snprintf(st->sampler_cost_source, sizeof(st->sampler_cost_source), "%s",
		 ss.cost_source ? ss.cost_source : "none");
	set_reason(st, ss.why);
	return 0;
}

int sample_reload_check(const struct tierd_conf *c, const struct tierd_conf *next,
			char *why, size_t why_size)
{
	if (next->sampling.source != c->sampling.source ||
	    next->sampling.max_tracked_pages != c->sampling.max_tracked_pages ||
	    next->sampling.half_life_ms != c->sampling.half_life_ms ||
	    next->sampling.damon_sample_us != c->sampling.damon_sample_us ||
	    next->sampling.damon_aggr_us != c->sampling.damon_aggr_us ||
	    next->sampling.damon_min_regions != c->sampling.damon_min_regions ||
	    next->sampling.damon_max_regions != c->sampling.damon_max_regions) {
		snprintf(why, why_size,
			 "sampling.source, max_tracked_pages, half_life_ms and damon take effect on restart");
		return -EINVAL;
	}
	return 0;
}

void sample_reload_apply(struct sample_stage *m, const struct tierd_conf *c,
			 struct cand_procs *procs)
{
	/* New rules: the next tick rescans at once. */
	if (targets_setup(m, c) < 0)
		log_warn("Failed to set up the new sampling targets: out of memory");
	if (m->s)
		procs_update(m, c, procs);
}

void sample_free(struct sample_stage *m)
{
	if (!m)
		return;
	if (m->s && m->idle_on)
		sampler_idle_into(m->s, NULL); /* a fake sampler outlives the stage */
	for (size_t i = 0; i < m->nr_cands; i++)
		sampler_free(m->cands[i]); /* a fake sampler is the test's */
	if (m->targets_ok)
		targets_free(&m->targets);
	if (m->watch_ok)
		sample_watch_free(&m->watch);
	free(m->watched);
	free(m->fake_rss);
	if (m->hot_mem)
		munmap(m->hot_mem, m->hot_mem_len);
	if (m->idle_mem)
		munmap(m->idle_mem, m->idle_len);
	free(m->pids);
	free(m);
}
