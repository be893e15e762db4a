// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "sample_period.h"
#include "status.h"
#include "tierd-config.h"

#define NSEC_PER_SEC 1000000000ull

static const char *const tier_sources[] = { "kernel", "hmat", "config" };
static const char *const errc_names[NR_ERRC] = { "busy", "nomem", "gone",
						 "denied", "other" };

static void tier_bytes(const struct tierd *d, int t, uint64_t *total,
		       uint64_t *free_b)
{
	*total = *free_b = 0;
	for (int i = 0; i < d->topo.nr_nodes; i++)
		if (d->topo.nodes[i].tier == t) {
			*total += d->topo.nodes[i].total_bytes;
			*free_b += d->topo.nodes[i].free_bytes;
		}
}

static void nodes_of(const struct topo_tier *t, char *buf, size_t size)
{
	buf[0] = '\0';
	for (int k = 0; k < t->nr_nodes; k++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%d",
			 k ? "," : "", t->nodes[k]);
}

/* "sampler":{...}, the hotness source and why the others were not taken. */
static void sampler_json(const struct tierd_stats *s, FILE *f)
{
	fputs("\"sampler\":{\"source\":", f);
	json_str(f, s->sampler_source);
	fputs(",\"reason\":", f);
	json_str(f, s->sampler_reason);
	fputs(",\"not_taken\":", f);
	json_str(f, s->sampler_not_taken);
	fprintf(f, ",\"cpu_seconds\":%.3f,\"cost_pct\":%.3f,\"cost_source\":",
		s->sampler_cpu_seconds_total, s->sampler_cost_pct);
	json_str(f, s->sampler_cost_source[0] ? s->sampler_cost_source : "none");
	fprintf(f, ",\"peeks\":%llu,\"wakes\":%llu", (unsigned long long)s->sampler_peeks_total,
		(unsigned long long)s->sampler_wakes_total);
	fprintf(f, ",\"period\":%llu,\"half_life_s\":%.1f", (unsigned long long)s->sampler_period,
		(double)s->heat_half_life_ns / 1e9);
	fprintf(f, ",\"watched\":%u,\"candidates\":%u,\"watch_bound\":%u},", s->watch_procs,
		s->watch_candidates, s->watch_bound);
}

/* GPU rules are inert when the driver keeps the GPU's memory (CDMM). */
static bool gpu_inert(const struct tierd_stats *s)
{
	return !strcmp(s->gpu_mode, "cdmm");
}

/* "page_size":N,"pmd_size":N,"range_size":N,"thp":B,"gpu":{"mode","why","rules":[{node,
 * allow, used_bytes (null until read), max_bytes (0: none), inert}]} */
static void gpu_json(const struct tierd *d, FILE *f)
{
	const struct tierd_stats *s = &d->stats;

	fprintf(f, "\"page_size\":%llu,\"pmd_size\":%llu,\"range_size\":%llu,\"thp\":%s,"
		"\"gpu\":{\"mode\":",
		(unsigned long long)d->geom.base, (unsigned long long)d->geom.pmd,
		(unsigned long long)d->geom.range, d->geom.thp ? "true" : "false");
	json_str(f, s->gpu_mode[0] ? s->gpu_mode : "none");
	fputs(",\"why\":", f);
	json_str(f, s->gpu_mode_why);
	fputs(",\"rules\":[", f);
	for (int r = 0; r < d->conf->nr_gpu_nodes && r < POLICY_MAX_RULES; r++) {
		const struct conf_gpu_node *g = &d->conf->gpu_nodes[r];

		fprintf(f, "%s{\"node\":%d,\"used_bytes\":", r ? "," : "", g->node);
		if (s->gpu_rule_used[r] == UINT64_MAX || gpu_inert(s))
			fputs("null", f);
		else
			fprintf(f, "%llu", (unsigned long long)s->gpu_rule_used[r]);
		fprintf(f, ",\"max_bytes\":%llu,\"inert\":%s}",
			(unsigned long long)g->max_bytes, gpu_inert(s) ? "true" : "false");
	}
	fputs("]}", f);
}

/* The page sizes, the driver's GPU memory mode, each rule against its cap. */
static void status_gpu(const struct tierd *d, FILE *f)
{
	const struct tierd_stats *s = &d->stats;
	char page[32], pmd[32], range[32];

	fmt_bytes(page, sizeof(page), (double)d->geom.base);
	fmt_bytes(pmd, sizeof(pmd), (double)d->geom.pmd);
	fmt_bytes(range, sizeof(range), (double)d->geom.range);
	fprintf(f, "pages:    %s base pages, %s PMD%s, %s ranges\n", page, pmd,
		d->geom.thp ? " THPs" : " (no THP support)", range);
	fprintf(f, "gpu:      %s%s%s%s%s\n", s->gpu_mode[0] ? s->gpu_mode : "none",
		s->gpu_mode_why[0] ? " (" : "", s->gpu_mode_why, s->gpu_mode_why[0] ? ")" : "",
		gpu_inert(s) ? ": the GPU's memory is no NUMA node, gpu_nodes rules are inert" : "");
	for (int r = 0; r < d->conf->nr_gpu_nodes && r < POLICY_MAX_RULES; r++) {
		const struct conf_gpu_node *g = &d->conf->gpu_nodes[r];
		char used[32], max[32];

		if (gpu_inert(s)) {
			fprintf(f, "  rule for node %d: inert, the GPU's memory is no NUMA node\n",
				g->node);
			continue;
		}
		if (s->gpu_rule_used[r] == UINT64_MAX)
			snprintf(used, sizeof(used), "not read yet");
		else
			fmt_bytes(used, sizeof(used), (double)s->gpu_rule_used[r]);
		if (g->max_bytes)
			fmt_bytes(max, sizeof(max), (double)g->max_bytes);
		fprintf(f, "  rule for node %d: %s used of %s\n", g->node, used,
			g->max_bytes ? max : "no cap");
	}
}

/* The copy threads, the most the controller may set and the CPU ids that
 * bound it (threads.c); without a CPU count or while not managed, less. */
static void status_copy(const struct tierd *d, FILE *f, bool json)
{
	const struct tierd_stats *s = &d->stats;
	const char *mode = conf_copy_mode_name(d->conf->copy_threads.mode);

	if (json) {
		fprintf(f, "\"copy_threads\":%u,\"copy_threads_mode\":\"%s\",\"copy_threads_max\":%u,"
			"\"copy_threads_cpus\":%u,",
			s->copy_threads, mode, s->copy_threads_max, s->copy_threads_cpus);
		return;
	}
	fprintf(f, "copy threads: %u (mode %s", s->copy_threads, mode);
	if (s->copy_threads_max)
		fprintf(f, ", at most %u", s->copy_threads_max);
	if (s->copy_threads_max && s->copy_threads_cpus)
		fprintf(f, " of this machine's %u CPUs", s->copy_threads_cpus);
	fputs(")\n", f);
}

/* "decision":{...}, the last decision and what it held back. */
static void decision_json(const struct tierd_stats *s, FILE *f)
{
	const struct policy_stats *st = &s->decision;

	fprintf(f,
		"\"decision\":{\"hot_threshold\":%u,\"cold_threshold\":%u,\"crowded_floor\":%u,"
		"\"discovering\":%s,\"thin\":%s,\"candidate_pages\":%llu,\"promote_bytes\":%llu,"
		"\"fill_bytes\":%llu,\"demote_bytes\":%llu,\"unmet_bytes\":%llu,\"held\":{",
		st->hot_threshold, st->cold_threshold, st->crowded_floor,
		st->discovering ? "true" : "false", st->thin ? "true" : "false",
		(unsigned long long)s->decision_candidate_pages,
		(unsigned long long)st->promote_bytes, (unsigned long long)st->fill_bytes,
		(unsigned long long)st->demote_bytes, (unsigned long long)st->unmet_bytes);
	for (int h = 0; h < POLICY_H_NR; h++)
		fprintf(f, "%s\"%s\":%llu", h ? "," : "", policy_hold_name(h),
			(unsigned long long)st->held[h]);
	fputs("}},", f);
}

static void status_json(const struct tierd *d, FILE *f, uint64_t now_ns)
{
	const struct tierd_stats *s = &d->stats;

	fprintf(f,
		"{\"version\":\"%s\",\"uptime_seconds\":%.3f,\"ticks\":%llu,\"interval_ms\":%u,",
		TIERD_VERSION, (double)(now_ns - d->start_ns) / NSEC_PER_SEC,
		(unsigned long long)d->ticks_total, d->conf->interval_ms);
	fputs("\"config\":", f);
	json_str(f, d->config_path);
	fprintf(f,
		",\"reloads\":%llu,\"reloads_refused\":%llu,\"dry_run\":%s,\"knobs\":%s,",
		(unsigned long long)d->reloads_ok_total,
		(unsigned long long)d->reloads_failed_total,
		d->dry_run ? "true" : "false",
		tierd_knobs_allowed(d) ? "true" : "false");
	sampler_json(s, f);
	fprintf(f, "\"topology_changes\":%llu,\"topology_change\":",
		(unsigned long long)d->topo_changes_total);
	json_str(f, d->topo_change);
	fprintf(f, ",\"topology_change_seconds_ago\":%.3f,",
		d->topo_changes_total ? (double)(now_ns - d->topo_change_ns) / NSEC_PER_SEC : 0);
	fprintf(f,
		"\"tier_source\":\"%s\",\"kernel_tiers_flat\":%s,\"tiers\":[",
		tier_sources[d->topo.tier_source],
		d->topo.kernel_tiers_flat ? "true" : "false");
	for (int t = 0; t < d->topo.nr_tiers; t++) {
		uint64_t total, free_b;

		tier_bytes(d, t, &total, &free_b);
		fprintf(f, "%s{\"name\":", t ? "," : "");
		json_str(f, d->topo.tiers[t].name);
		fputs(",\"nodes\":[", f);
		for (int k = 0; k < d->topo.tiers[t].nr_nodes; k++)
			fprintf(f, "%s%d", k ? "," : "",
				d->topo.tiers[t].nodes[k]);
		fprintf(f,
			"],\"total_bytes\":%llu,\"free_bytes\":%llu,"
			"\"promote_bytes_per_s\":%.0f,\"demote_bytes_per_s\":%.0f,"
			"\"promoted_bytes\":%llu,\"demoted_bytes\":%llu}",
			(unsigned long long)total, (unsigned long long)free_b,
			s->tier[t].promote_bytes_per_s,
			s->tier[t].demote_bytes_per_s,
			(unsigned long long)s->tier[t].promoted_bytes_total,
			(unsigned long long)s->tier[t].demoted_bytes_total);
	}
	fputs("],\"migrate_errors\":{", f);
	for (int e = 0; e < NR_ERRC; e++)
		fprintf(f, "%s\"%s\":%llu", e ? "," : "", errc_names[e],
			(unsigned long long)s->migrate_errors_total[e]);
	fprintf(f, "},\"busy_backoff_pages\":%llu,\"knobs_left_alone\":[",
		(unsigned long long)s->busy_backoff_pages);
	for (const char *k = s->knobs_foreign; *k;) {
		size_t n = strcspn(k, ",");
		char name[64];
		size_t len = n < sizeof(name) - 1 ? n : sizeof(name) - 1;

		memcpy(name, k, len);
		name[len] = '\0';
		if (k != s->knobs_foreign)
			fputc(',', f);
		json_str(f, name);
		k += n + (k[n] == ',');
	}
	fputs("],", f);
	decision_json(s, f);
	status_copy(d, f, true);
	fprintf(f, "\"tick_nice\":%d,\"cgroups\":%d,", s->tick_nice, d->conf->nr_cgroups);
	gpu_json(d, f);
	fputs("}\n", f);
}

/* The last decision, and what it held back: why hot pages stay put. */
static void status_decision(const struct tierd_stats *s, FILE *f)
{
	const struct policy_stats *st = &s->decision;
	char up[32], down[32], unmet[32], fill[32];
	bool any = false;

	fmt_bytes(up, sizeof(up), st->promote_bytes);
	fmt_bytes(down, sizeof(down), st->demote_bytes);
	fprintf(f, "decision: %llu candidate pages, hot at heat >= %u",
		(unsigned long long)s->decision_candidate_pages, st->hot_threshold);
	if (st->crowded_floor)
		fprintf(f, " (crowded: at least %u%s)", st->crowded_floor,
			st->discovering ? ", a new hot set" :
			st->thin ? ", the hot set sampled thinly" : "");
	fprintf(f, ", cold <= %u; planned %s up", st->cold_threshold, up);
	if (st->fill_bytes) {
		fmt_bytes(fill, sizeof(fill), st->fill_bytes);
		fprintf(f, " (%s of it fill)", fill);
	}
	fprintf(f, ", %s down\n", down);
	fputs("held:    ", f);
	for (int h = 0; h < POLICY_H_NR; h++) {
		if (!st->held[h])
			continue;
		fprintf(f, "%s %s %llu", any ? "," : "", policy_hold_name(h),
			(unsigned long long)st->held[h]);
		any = true;
	}
	if (st->unmet_bytes) {
		fmt_bytes(unmet, sizeof(unmet), st->unmet_bytes);
		fprintf(f, "; %s hot found no room", unmet);
	}
	fputs(any ? "\n" : " nothing\n", f);
}

/* The "sampling:" lines: the source, its cost and pace, what it watches. */
static void sampling_text(const struct tierd_stats *s, FILE *f)
{
	fprintf(f, "sampling: %s (%s)\n", s->sampler_source, s->sampler_reason);
	if (s->sampler_not_taken[0])
		fprintf(f, "          not taken: %s\n", s->sampler_not_taken);
	if (s->sampler_cost_source[0] && strcmp(s->sampler_cost_source, "none"))
		fprintf(f, "          costs %.2f%% of a CPU (%s), %.1f s since start\n",
			s->sampler_cost_pct, s->sampler_cost_source, s->sampler_cpu_seconds_total);
	if (s->heat_half_life_ns)
		fprintf(f, "          heat halves every %.1f s%s\n", (double)s->heat_half_life_ns / 1e9,
			s->sampler_period > SAMPLE_PERIOD_INIT ?
				" (stretched for the sampling period)" : "");
	if (s->sampler_peeks_total)
		fprintf(f, "          woken %llu times by new heat while idle, %llu ticks brought forward\n",
			(unsigned long long)s->sampler_peeks_total,
			(unsigned long long)s->sampler_wakes_total);
	if (s->watch_bound)
		fprintf(f, "          watches %u of %u processes (at most %u%s)\n", s->watch_procs,
			s->watch_candidates, s->watch_bound,
			s->watch_candidates > s->watch_bound ?
				": those with the most memory on lower tiers" : "");
}

void status_render(const struct tierd *d, FILE *f, bool json, uint64_t now_ns)
{
	const struct tierd_stats *s = &d->stats;
	uint64_t up = (now_ns - d->start_ns) / NSEC_PER_SEC;

	if (json) {
		status_json(d, f, now_ns);
		return;
	}
	fprintf(f, "tierd %s: running %llus, %llu ticks every %u ms\n",
		TIERD_VERSION, (unsigned long long)up,
		(unsigned long long)d->ticks_total, d->conf->interval_ms);
	fprintf(f, "config:   %s (%llu reloads, %llu refused)\n",
		d->config_path, (unsigned long long)d->reloads_ok_total,
		(unsigned long long)d->reloads_failed_total);
	fprintf(f, "mode:     %s; kernel knobs %s\n",
		d->dry_run ? "dry run (nothing moves)" : "active",
		tierd_knobs_allowed(d) ? "managed" : "left alone");
	if (s->knobs_foreign[0])
		fprintf(f, "knobs:    changed by an administrator, left to them: %s\n",
			s->knobs_foreign);
	sampling_text(s, f);
	fprintf(f, "tiers:    %d from %s%s\n", d->topo.nr_tiers,
		tier_sources[d->topo.tier_source],
		d->topo.kernel_tiers_flat ?
			"; the kernel puts these nodes in one tier, tierd separates them" :
			"");
	fprintf(f, "  %-12s %-8s %11s %11s %12s %12s %11s %11s\n", "TIER",
		"NODES", "TOTAL", "FREE", "PROMOTE/s", "DEMOTE/s", "PROMOTED",
		"DEMOTED");
	for (int t = 0; t < d->topo.nr_tiers; t++) {
		char nodes[128], tot[32], fr[32], pr[32], dr[32], pt[32],
			dt[32];
		uint64_t total, free_b;

		tier_bytes(d, t, &total, &free_b);
		nodes_of(&d->topo.tiers[t], nodes, sizeof(nodes));
		fmt_bytes(tot, sizeof(tot), total);
		fmt_bytes(fr, sizeof(fr), free_b);
		fmt_bytes(pr, sizeof(pr), s->tier[t].promote_bytes_per_s);
		fmt_bytes(dr, sizeof(dr), s->tier[t].demote_bytes_per_s);
		fmt_bytes(pt, sizeof(pt), s->tier[t].promoted_bytes_total);
		fmt_bytes(dt, sizeof(dt), s->tier[t].demoted_bytes_total);
		fprintf(f, "  %-12s %-8s %11s %11s %12s %12s %11s %11s\n",
			d->topo.tiers[t].name, nodes, tot, fr, pr, dr, pt, dt);
	}
	if (d->topo_changes_total)
		fprintf(f, "topology: %llu change%s since start, the last %llus ago: %s\n",
			(unsigned long long)d->topo_changes_total,
			d->topo_changes_total == 1 ? "" : "s",
			(unsigned long long)((now_ns - d->topo_change_ns) / NSEC_PER_SEC),
			d->topo_change);
	fputs("migrate errors:", f);
	for (int e = 0; e < NR_ERRC; e++)
		fprintf(f, " %s %llu%s", errc_names[e],
			(unsigned long long)s->migrate_errors_total[e],
			e + 1 < NR_ERRC ? "," : "\n");
	if (s->busy_backoff_pages)
		fprintf(f, "          busy, backing off: %llu pages (retried when their time comes, later each time they are busy again)\n",
			(unsigned long long)s->busy_backoff_pages);
	status_decision(s, f);
	status_copy(d, f, false);
	fprintf(f, "cgroups:  %d with budgets (tierctl cgroups)\n",
		d->conf->nr_cgroups);
	status_gpu(d, f);
}

void status_render_nodes(const struct tierd *d, FILE *f, bool json)
{
	const struct topology *t = &d->topo;

	if (!json)
		fprintf(f,
			"%-5s %-12s %-6s %-5s %-4s %11s %11s %8s %8s %10s %10s  %s\n",
			"NODE", "TIER", "KTIER", "CPUS", "GPU", "TOTAL", "FREE",
			"RLAT_ns", "WLAT_ns", "RBW_MB/s", "WBW_MB/s",
			"DISTANCES");
	else
		fputs("{\"nodes\":[", f);
	for (int i = 0; i < t->nr_nodes; i++) {
		const struct topo_node *n = &t->nodes[i];
		const char *tier = n->tier >= 0 ? t->tiers[n->tier].name : "-";
		char tot[32], fr[32], dist[256] = "";

		for (int j = 0; j < t->nr_nodes; j++)
			snprintf(dist + strlen(dist),
				 sizeof(dist) - strlen(dist), "%s%u",
				 j ? (json ? "," : " ") : "",
				 t->distance[i][j]);
		if (json) {
			fprintf(f, "%s{\"id\":%d,\"tier\":", i ? "," : "",
				n->id);
			if (n->tier >= 0)
				json_str(f, tier);
			else
				fputs("null", f);
			fprintf(f,
				",\"kernel_tier\":%d,\"cpus\":%u,\"gpu\":%s,\"total_bytes\":%llu,"
				"\"free_bytes\":%llu,\"high_wmark_bytes\":%llu,\"read_latency_ns\":%u,"
				"\"write_latency_ns\":%u,\"read_bandwidth_mbps\":%u,"
				"\"write_bandwidth_mbps\":%u,\"distances\":[%s]}",
				n->kernel_tier, n->nr_cpus,
				n->gpu ? "true" : "false",
				(unsigned long long)n->total_bytes,
				(unsigned long long)n->free_bytes,
				(unsigned long long)n->high_wmark_bytes,
				n->read_latency_ns, n->write_latency_ns,
				n->read_bandwidth_mbps, n->write_bandwidth_mbps,
				dist);
			continue;
		}
		fmt_bytes(tot, sizeof(tot), n->total_bytes);
		fmt_bytes(fr, sizeof(fr), n->free_bytes);
		fprintf(f,
			"%-5d %-12s %-6d %-5u %-4s %11s %11s %8u %8u %10u %10u  %s\n",
			n->id, tier, n->kernel_tier, n->nr_cpus,
			n->gpu ? "yes" : "no", tot, fr, n->read_latency_ns,
			n->write_latency_ns, n->read_bandwidth_mbps,
			n->write_bandwidth_mbps, dist);
	}
	if (json)
		fprintf(f,
			"],\"tier_source\":\"%s\",\"kernel_tiers_flat\":%s}\n",
			tier_sources[t->tier_source],
			t->kernel_tiers_flat ? "true" : "false");
}

void status_render_cgroups(const struct tierd *d, FILE *f, bool json)
{
	const struct tierd_conf *c = d->conf;

	if (json)
		fputs("{\"cgroups\":[", f);
	else if (c->nr_cgroups == 0)
		fputs("No cgroup budgets configured (cgroups: in tierd.yaml).\n",
		      f);
	else
		fprintf(f, "%-40s %11s %11s %10s %11s %11s\n", "CGROUP", "FAST",
			"FAST_MAX", "MAX_MB/s", "PROMOTED", "DEMOTED");
	for (int i = 0; i < c->nr_cgroups; i++) {
		const struct conf_cgroup *cg = &c->cgroups[i];
		char fast[32], max[32], pr[32], dm[32];

		if (json) {
			fputs(i ? ",{\"path\":" : "{\"path\":", f);
			json_str(f, cg->path);
			fprintf(f,
				",\"fast_tier_bytes\":%llu,\"fast_tier_max_bytes\":%llu,"
				"\"migrate_max_mb_per_s\":%u,\"promoted_bytes\":%llu,\"demoted_bytes\":%llu}",
				(unsigned long long)d->stats.cgroup[i]
					.fast_tier_bytes,
				(unsigned long long)cg->fast_tier_max_bytes,
				cg->migrate_max_mb_per_s,
				(unsigned long long)d->stats.cgroup[i]
					.promoted_bytes_total,
				(unsigned long long)d->stats.cgroup[i]
					.demoted_bytes_total);
			continue;
		}
		fmt_bytes(fast, sizeof(fast),
			  d->stats.cgroup[i].fast_tier_bytes);
		if (cg->fast_tier_max_bytes)
			fmt_bytes(max, sizeof(max), cg->fast_tier_max_bytes);
		else
			strcpy(max, "-");
		fmt_bytes(pr, sizeof(pr),
			  d->stats.cgroup[i].promoted_bytes_total);
		fmt_bytes(dm, sizeof(dm),
			  d->stats.cgroup[i].demoted_bytes_total);
		fprintf(f, "%-40s %11s %11s %10u %11s %11s\n", cg->path, fast,
			max, cg->migrate_max_mb_per_s, pr, dm);
	}
	if (json)
		fputs("]}\n", f);
}
