// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierd's state as metric samples (families in metrics.c), then each
 * module's own.
 */
#include <stdio.h>

#include "daemon.h"
#include "metrics.h"
#include "tierd-config.h"

#define NSEC_PER_SEC 1000000000.0

static const char *const errc_names[NR_ERRC] = { "busy", "nomem", "gone",
						 "denied", "other" };

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
	for (int e = 0; e < NR_ERRC; e++)
		metrics_add(m, MET_MIGRATE_ERRORS, s->migrate_errors_total[e],
			    "class", errc_names[e], NULL);
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
	metrics_add(m, MET_SAMPLER_PEEKS, s->sampler_peeks_total, NULL);
	metrics_add(m, MET_SAMPLER_WAKES, s->sampler_wakes_total, NULL);
	metrics_add(m, MET_MIGRATE_BYTES, s->migrate_bytes_total, NULL);
	metrics_add(m, MET_MIGRATE_SECONDS, s->migrate_ns_total / NSEC_PER_SEC,
		    NULL);
	for (int i = 0; i < d->nr_modules; i++) {
		const char *step = d->modules[i]->name;

		if (!d->modules[i]->tick)
			continue;
		metrics_add(m, MET_STEP_SECONDS,
			    d->module_tick_ns[i] / NSEC_PER_SEC, "step", step,
			    NULL);
		metrics_add(m, MET_STEP_CPU_SECONDS,
			    d->module_tick_cpu_ns[i] / NSEC_PER_SEC, "step",
			    step, NULL);
	}
	metrics_add(m, MET_DECISION_HOT_THRESHOLD, s->decision.hot_threshold, NULL);
	for (int h = 0; h < POLICY_H_NR; h++)
		metrics_add(m, MET_DECISION_HELD, s->decision.held[h], "reason",
			    policy_hold_name(h), NULL);
	metrics_add(m, MET_DECISION_UNMET, s->decision.unmet_bytes, NULL);
	for (int i = 0; i < d->nr_modules; i++)
		if (d->modules[i]->metrics)
			d->modules[i]->metrics(d, d->module_priv[i], m);
}
