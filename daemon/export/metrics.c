// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "metrics.h"

struct family {
	const char *name;
	const char *type;
	const char *help;
};

static const struct family families[NR_METRICS] = {
	[MET_BUILD_INFO] = { "tierd_build_info", "gauge",
			     "tierd's version, always 1" },
	[MET_START_TIME] = { "tierd_start_time_seconds", "gauge",
			     "When tierd started, seconds since the epoch" },
	[MET_TICKS] = { "tierd_ticks_total", "counter", "Pipeline ticks run" },
	[MET_TICK_DURATION] = { "tierd_tick_duration_seconds", "gauge",
				"How long the last tick took" },
	[MET_RELOADS] = { "tierd_config_reloads_total", "counter",
			  "Configuration reloads by result (ok, error)" },
	[MET_DRY_RUN] = { "tierd_dry_run", "gauge",
			  "1 when tierd decides but moves nothing" },
	[MET_KERNEL_TIERS_FLAT] = { "tierd_kernel_tiers_flat", "gauge",
				    "1 when the kernel puts nodes in one tier that HMAT or the config separate" },
	[MET_TIER_TOTAL] = { "tierd_tier_memory_bytes", "gauge",
			     "Memory of a tier" },
	[MET_TIER_FREE] = { "tierd_tier_free_bytes", "gauge",
			    "Free memory of a tier" },
	[MET_TIER_PROMOTED] = { "tierd_tier_promoted_bytes_total", "counter",
				"Bytes promoted into a tier" },
	[MET_TIER_DEMOTED] = { "tierd_tier_demoted_bytes_total", "counter",
			       "Bytes demoted into a tier" },
	[MET_NODE_TOTAL] = { "tierd_node_memory_bytes", "gauge",
			     "Memory of a NUMA node" },
	[MET_NODE_FREE] = { "tierd_node_free_bytes", "gauge",
			    "Free memory of a NUMA node" },
	[MET_NODE_PROMOTED] = { "tierd_node_promoted_bytes_total", "counter",
				"Bytes promoted into a node" },
	[MET_NODE_DEMOTED] = { "tierd_node_demoted_bytes_total", "counter",
			       "Bytes demoted into a node" },
	[MET_MIGRATE_ERRORS] = { "tierd_migrate_errors_total", "counter",
				 "Pages move_pages(2) did not move, by errno class (busy, nomem, gone, denied, other)" },
	[MET_BUSY_BACKOFF] = { "tierd_busy_backoff_pages", "gauge",
			       "Pages move_pages(2) found busy that wait for their retry time, which doubles while they stay busy" },
	[MET_MOVE_PAGES_CALLS] = { "tierd_move_pages_calls_total", "counter",
				   "move_pages(2) calls made" },
	[MET_CGROUP_FAST_BYTES] = { "tierd_cgroup_fast_tier_bytes", "gauge",
				    "Bytes a cgroup holds in the fastest tier" },
	[MET_CGROUP_FAST_LIMIT] = { "tierd_cgroup_fast_tier_limit_bytes",
				    "gauge",
				    "A cgroup's fast-tier budget (fast_tier_max_bytes), 0 = none" },
	[MET_CGROUP_PROMOTED] = { "tierd_cgroup_promoted_bytes_total",
				  "counter", "Bytes promoted for a cgroup" },
	[MET_CGROUP_DEMOTED] = { "tierd_cgroup_demoted_bytes_total", "counter",
				 "Bytes demoted for a cgroup" },
	[MET_COPY_THREADS] = { "tierd_copy_threads", "gauge",
			       "Kernel copy threads tierd allows now, 0 = not managed" },
	[MET_SAMPLER_INFO] = { "tierd_sampler_info", "gauge",
			       "The hotness source in use, always 1" },
	[MET_SAMPLER_CPU] = { "tierd_sampler_cpu_seconds_total", "counter",
			      "CPU time the hotness source spent sampling: its BPF programs' run time, or its kdamond's" },
	[MET_SAMPLER_SAMPLES] = { "tierd_sampler_samples_total", "counter",
				  "Access samples taken" },
	[MET_TABLE_SAMPLES] = { "tierd_table_samples_total", "counter",
				"Samples the hotness table took (a record's weight)" },
	[MET_TABLE_FRESH] = { "tierd_table_fresh_samples_total", "counter",
			      "Of those, samples on memory the table held no heat for: their "
			      "share rises when a new hot set appears" },
	[MET_SAMPLER_PEEKS] = { "tierd_sampler_peeks_total", "counter",
				"Looks at what the source saw while idle: its newest aggregation, when it saw heat the table had not (DAMON); its counts, every interval (BPF)" },
	[MET_SAMPLER_WAKES] = { "tierd_sampler_wakes_total", "counter",
				"Idle ticks brought forward: the source saw heat the table had not" },
	[MET_MIGRATE_BYTES] = { "tierd_migrated_bytes_total", "counter",
				"Bytes move_pages(2) put on their target node" },
	[MET_MIGRATE_SECONDS] = { "tierd_move_pages_seconds_total", "counter",
				  "Time spent in move_pages(2) calls that move pages" },
	[MET_STEP_SECONDS] = { "tierd_step_seconds_total", "counter",
			       "Wall-clock time of each pipeline step's ticks" },
	[MET_STEP_CPU_SECONDS] = { "tierd_step_cpu_seconds_total", "counter",
				   "CPU time (user + system) of each pipeline step's ticks" },
	[MET_DECISION_HOT_THRESHOLD] = { "tierd_decision_hot_threshold", "gauge",
					 "Heat a page needed to be promoted in the last decision" },
	[MET_DECISION_CROWDED_FLOOR] = { "tierd_decision_crowded_floor", "gauge",
					 "Heat the last decision required at least, the tracked memory "
					 "not fitting the fast tier; 0 when it fit" },
	[MET_DECISION_NEW_HOT_SET] = { "tierd_decision_new_hot_set", "gauge",
				       "1 when the last decision took one sample for memory sampled "
				       "since a new hot set appeared, 0 else" },
	[MET_DECISION_HELD] = { "tierd_decision_held_candidates", "gauge",
				"Candidates the last decision held back, by reason" },
	[MET_DECISION_UNMET] = { "tierd_decision_unmet_bytes", "gauge",
				 "Hot bytes the last decision found no room for on a faster tier" },
	[MET_DECISION_FILL] = { "tierd_decision_fill_bytes", "gauge",
				"Bytes the last decision promoted that the sampler never named, "
				"the tracked memory fitting the fast tier (promotion.fill)" },
	[MET_MOVE_PAGES_ADDRESSES] = { "tierd_move_pages_addresses_total", "counter",
				       "Addresses passed to move_pages(2) calls: one per base page, one per PMD THP" },
	[MET_MOVE_PAGES_THPS] = { "tierd_move_pages_thps_total", "counter",
				  "Of those addresses, PMD THPs passed as one address each" },
	[MET_PAGE_SIZE] = { "tierd_page_size_bytes", "gauge",
			    "The kernel's base page: what page counts count" },
	[MET_PMD_SIZE] = { "tierd_pmd_size_bytes", "gauge",
			   "Bytes one PMD maps: a PMD THP" },
	[MET_RANGE_SIZE] = { "tierd_range_size_bytes", "gauge",
			     "Bytes of tierd's range: a hotness range, a whole-range move" },
};

struct metrics {
	char *buf[NR_METRICS];
	size_t len[NR_METRICS];
	FILE *f[NR_METRICS];
	bool failed;
};

struct metrics *metrics_new(void)
{
	return calloc(1, sizeof(struct metrics));
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < NR_METRICS; i++) {
		if (m->f[i])
			fclose(m->f[i]);
		free(m->buf[i]);
	}
	free(m);
}

const char *metrics_name(enum metric_id id)
{
	return families[id].name;
}

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

void metrics_add(struct metrics *m, enum metric_id id, double value, ...)
{
	const char *name, *sep = "{";
	va_list ap;
	FILE *f;

	if (!m->f[id]) {
		m->f[id] = open_memstream(&m->buf[id], &m->len[id]);
		if (!m->f[id]) {
			m->failed = true;
			return;
		}
	}
	f = m->f[id];
	fputs(families[id].name, f);
	va_start(ap, value);
	while ((name = va_arg(ap, const char *))) {
		fprintf(f, "%s%s=\"", sep, name);
		put_escaped(f, va_arg(ap, const char *));
		fputc('"', f);
		sep = ",";
	}
	va_end(ap);
	if (*sep == ',')
		fputc('}', f);
	if (value == floor(value) && fabs(value) < 1e15)
		fprintf(f, " %.0f\n", value);
	else if (fabs(value) >= 1e6)
		fprintf(f, " %.3f\n",
			value); /* timestamps: keep the milliseconds */
	else
		fprintf(f, " %.9g\n", value);
}

int metrics_render(struct metrics *m, char **ret_text, size_t *ret_len)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	if (m->failed)
		return -ENOMEM;
	out = open_memstream(&text, &len);
	if (!out)
		return -ENOMEM;
	for (int i = 0; i < NR_METRICS; i++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", families[i].name,
			families[i].help, families[i].name, families[i].type);
		if (m->f[i]) {
			if (fflush(m->f[i]))
				m->failed = true;
			fwrite(m->buf[i], 1, m->len[i], out);
		}
	}
	if (fclose(out) || m->failed) {
		free(text);
		return -ENOMEM;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}
