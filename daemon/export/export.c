// SPDX-License-Identifier: GPL-2.0-only
/*
 * Step 7, export: rates from the counters, tierd's state as metric samples
 * (families in metrics.c) for the textfile and tierctl, and sd_notify's
 * STATUS=, READY=1 after the first tick and WATCHDOG=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fsutil.h"
#include "log.h"
#include "manager.h"
#include "metrics.h"
#include "notify.h"
#include "stages.h"
#include "tierd-config.h"

#define NSEC_PER_SEC 1000000000.0

static const char *const errc_names[NR_ERRC] = { "busy", "nomem", "gone",
						 "denied", "other" };

/* Per tier and per node: memory, free memory, bytes moved in. */
static void topology_metrics(const struct topology *t, const struct tierd_stats *s,
			     struct metrics *m)
{
	for (int i = 0; i < t->nr_tiers; i++) {
		const char *name = t->tiers[i].name;
		uint64_t total = 0, free_b = 0;

		for (int n = 0; n < t->nr_nodes; n++)
			if (t->nodes[n].tier == i) {
				total += t->nodes[n].total_bytes;
				free_b += t->nodes[n].free_bytes;
			}
		metrics_add(m, MET_TIER_TOTAL, total, "tier", name, NULL);
		metrics_add(m, MET_TIER_FREE, free_b, "tier", name, NULL);
		metrics_add(m, MET_TIER_PROMOTED,
			    s->tier[i].promoted_bytes_total, "tier", name,
			    NULL);
		metrics_add(m, MET_TIER_DEMOTED, s->tier[i].demoted_bytes_total,
			    "tier", name, NULL);
	}
	for (int n = 0; n < t->nr_nodes; n++) {
		const struct topo_node *node = &t->nodes[n];
		const char *tier = node->tier >= 0 ? t->tiers[node->tier].name :
						     "";
		char id[16];

		snprintf(id, sizeof(id), "%d", node->id);
		metrics_add(m, MET_NODE_TOTAL, node->total_bytes, "node", id,
			    "tier", tier, NULL);
		metrics_add(m, MET_NODE_FREE, node->free_bytes, "node", id,
			    "tier", tier, NULL);
		metrics_add(m, MET_NODE_PROMOTED,
			    s->node[n].promoted_bytes_total, "node", id, NULL);
		metrics_add(m, MET_NODE_DEMOTED, s->node[n].demoted_bytes_total,
			    "node", id, NULL);
	}
}

void tierd_metrics(struct tierd *d, struct metrics *m)
{
	const struct tierd_stats *s = &d->stats;
	const struct topology *t = &d->topo;

	metrics_add(m, MET_BUILD_INFO, 1, "version", TIERD_VERSION, NULL);
	metrics_add(m, MET_START_TIME, d->start_realtime_ns / NSEC_PER_SEC,
		    NULL);
	metrics_add(m, MET_TICKS, d->ticks_total, NULL);
	metrics_add(m, MET_TICK_DURATION,
		    d->last_tick_duration_ns / NSEC_PER_SEC, NULL);
	metrics_add(m, MET_RELOADS, d->reloads_ok_total, "result", "ok", NULL);
	metrics_add(m, MET_RELOADS, d->reloads_failed_total, "result", "error",
		    NULL);
	metrics_add(m, MET_DRY_RUN, d->dry_run, NULL);
	metrics_add(m, MET_KERNEL_TIERS_FLAT, t->kernel_tiers_flat, NULL);
	topology_metrics(t, s, m);
	for (int e = 0; e < NR_ERRC; e++)
		metrics_add(m, MET_MIGRATE_ERRORS, s->migrate_errors_total[e],
			    "class", errc_names[e], NULL);
	metrics_add(m, MET_BUSY_BACKOFF, s->busy_backoff_pages, NULL);
	metrics_add(m, MET_MOVE_PAGES_CALLS, s->move_pages_calls_total, NULL);
	for (int i = 0; i < d->conf->nr_cgroups; i++) {
		const char *path = d->conf->cgroups[i].path;

		metrics_add(m, MET_CGROUP_FAST_BYTES,
			    s->cgroup[i].fast_tier_bytes, "cgroup", path, NULL);
		metrics_add(m, MET_CGROUP_FAST_LIMIT,
			    d->conf->cgroups[i].fast_tier_max_bytes, "cgroup",
			    path, NULL);
		metrics_add(m, MET_CGROUP_PROMOTED,
			    s->cgroup[i].promoted_bytes_total, "cgroup", path,
			    NULL);
		metrics_add(m, MET_CGROUP_DEMOTED,
			    s->cgroup[i].demoted_bytes_total, "cgroup", path,
			    NULL);
	}
	metrics_add(m, MET_COPY_THREADS, s->copy_threads, NULL);
	metrics_add(m, MET_SAMPLER_INFO, 1, "source", s->sampler_source, NULL);
	metrics_add(m, MET_SAMPLER_CPU, s->sampler_cpu_seconds_total, NULL);
	metrics_add(m, MET_SAMPLER_SAMPLES, s->sampler_samples_total, NULL);
	metrics_add(m, MET_TABLE_SAMPLES, s->table_samples_total, NULL);
	metrics_add(m, MET_TABLE_FRESH, s->table_fresh_samples_total, NULL);
	metrics_add(m, MET_SAMPLER_PEEKS, s->sampler_peeks_total, NULL);
	metrics_add(m, MET_SAMPLER_WAKES, s->sampler_wakes_total, NULL);
	metrics_add(m, MET_MIGRATE_BYTES, s->migrate_bytes_total, NULL);
	metrics_add(m, MET_MIGRATE_SECONDS, s->migrate_ns_total / NSEC_PER_SEC,
		    NULL);
	for (int i = 0; d->mgr && i < MGR_NR_STEPS; i++) {
		const char *step = manager_step_name(i);

		metrics_add(m, MET_STEP_SECONDS, d->mgr->step_ns[i] / NSEC_PER_SEC, "step",
			    step, NULL);
		metrics_add(m, MET_STEP_CPU_SECONDS, d->mgr->step_cpu_ns[i] / NSEC_PER_SEC,
			    "step", step, NULL);
	}
	metrics_add(m, MET_DECISION_HOT_THRESHOLD, s->decision.hot_threshold, NULL);
	metrics_add(m, MET_DECISION_CROWDED_FLOOR, s->decision.crowded_floor, NULL);
	metrics_add(m, MET_DECISION_NEW_HOT_SET, s->decision.discovering, NULL);
	for (int h = 0; h < POLICY_H_NR; h++)
		metrics_add(m, MET_DECISION_HELD, s->decision.held[h], "reason",
			    policy_hold_name(h), NULL);
	metrics_add(m, MET_DECISION_UNMET, s->decision.unmet_bytes, NULL);
	metrics_add(m, MET_DECISION_FILL, s->decision.fill_bytes, NULL);
	metrics_add(m, MET_MOVE_PAGES_ADDRESSES, s->move_pages_addresses_total, NULL);
	metrics_add(m, MET_MOVE_PAGES_THPS, s->move_pages_thps_total, NULL);
	metrics_add(m, MET_PAGE_SIZE, (double)d->geom.base, NULL);
	metrics_add(m, MET_PMD_SIZE, (double)d->geom.pmd, NULL);
	metrics_add(m, MET_RANGE_SIZE, (double)d->geom.range, NULL);
}

static void update_rates(struct tierd *d, uint64_t now_ns)
{
	double dt = (double)(now_ns - d->last_tick_ns) / NSEC_PER_SEC;

	if (!d->last_tick_ns || dt <= 0)
		goto out;
	for (int t = 0; t < TOPO_MAX_TIERS; t++) {
		d->stats.tier[t].promote_bytes_per_s =
			(d->stats.tier[t].promoted_bytes_total -
			 d->prev_stats.tier[t].promoted_bytes_total) /
			dt;
		d->stats.tier[t].demote_bytes_per_s =
			(d->stats.tier[t].demoted_bytes_total -
			 d->prev_stats.tier[t].demoted_bytes_total) /
			dt;
	}
out:
	d->prev_stats = d->stats;
}

static void write_textfile(struct tierd *d, uint64_t now_ns)
{
	static int last_error;
	struct metrics *m;
	char *text = NULL;
	size_t len;
	int r;

	if (!d->conf->metrics.textfile_dir[0] ||
	    (d->last_textfile_ns &&
	     now_ns - d->last_textfile_ns <
		     d->conf->metrics.textfile_interval_ms * 1000000ull))
		return;
	d->last_textfile_ns = now_ns;
	m = metrics_new();
	if (!m)
		return;
	tierd_metrics(d, m);
	r = metrics_render(m, &text, &len);
	if (r == 0)
		r = fs_write_atomic(d->conf->metrics.textfile_dir, "tierd.prom",
				    text, len, 0644);
	if (r < 0 && r != last_error)
		log_warn("Failed to write %s/tierd.prom: %s",
			 d->conf->metrics.textfile_dir, strerror(-r));
	last_error = r < 0 ? r : 0;
	free(text);
	metrics_free(m);
}

void export_step(struct tierd *d, uint64_t now_ns)
{
	char status[256];

	update_rates(d, now_ns);
	d->ticks_total++;
	d->last_tick_ns = now_ns;
	write_textfile(d, now_ns);
	tierd_status_line(d, status, sizeof(status));
	if (!d->ready) {
		notify_ready(status);
		d->ready = true;
	} else {
		notify_status(status);
	}
	notify_watchdog();
}
