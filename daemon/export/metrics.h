/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Prometheus text exposition (format 0.0.4) of tierd's state.
 *
 * The families are registered once, here, for every part of the pipeline:
 * a family whose owner is not running yet is exported with its HELP and
 * TYPE lines and no samples.  Each export builds a fresh set of samples:
 * metrics_new(), metrics_add() per sample, metrics_render(), metrics_free().
 * Names follow Prometheus practice: tierd_ prefix, base units (bytes,
 * seconds), counters end in _total.
 */
#ifndef TIERD_METRICS_H
#define TIERD_METRICS_H

#include <stddef.h>

enum metric_id {
	MET_BUILD_INFO,
	MET_START_TIME,
	MET_TICKS,
	MET_TICK_DURATION,
	MET_RELOADS,
	MET_DRY_RUN,
	MET_KERNEL_TIERS_FLAT,
	MET_TIER_TOTAL,
	MET_TIER_FREE,
	MET_TIER_PROMOTED,
	MET_TIER_DEMOTED,
	MET_NODE_TOTAL,
	MET_NODE_FREE,
	MET_NODE_PROMOTED,
	MET_NODE_DEMOTED,
	MET_MIGRATE_ERRORS,
	MET_BUSY_BACKOFF,
	MET_MOVE_PAGES_CALLS,
	MET_CGROUP_FAST_BYTES,
	MET_CGROUP_FAST_LIMIT,
	MET_CGROUP_PROMOTED,
	MET_CGROUP_DEMOTED,
	MET_COPY_THREADS,
	MET_SAMPLER_INFO,
	MET_SAMPLER_CPU,
	MET_SAMPLER_SAMPLES,
	MET_TABLE_SAMPLES,
	MET_TABLE_FRESH,
	MET_SAMPLER_PEEKS,
	MET_SAMPLER_WAKES,
	MET_MIGRATE_BYTES,
	MET_MIGRATE_SECONDS,
	MET_STEP_SECONDS,
	MET_STEP_CPU_SECONDS,
	MET_DECISION_HOT_THRESHOLD,
	MET_DECISION_CROWDED_FLOOR,
	MET_DECISION_NEW_HOT_SET,
	MET_DECISION_HELD,
	MET_DECISION_UNMET,
	MET_DECISION_FILL,
	MET_MOVE_PAGES_ADDRESSES,
	MET_MOVE_PAGES_THPS,
	MET_PAGE_SIZE,
	MET_PMD_SIZE,
	MET_RANGE_SIZE,
	NR_METRICS,
};

struct metrics;

struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* One sample of family @id; labels are name/value string pairs ending with
 * NULL.  Values are escaped here.  Errors are remembered and reported by
 * metrics_render(). */
void metrics_add(struct metrics *m, enum metric_id id, double value, ...)
	__attribute__((sentinel));

/* The exposition text (malloc'd) and its length; -ENOMEM. */
int metrics_render(struct metrics *m, char **ret_text, size_t *ret_len);

/* Family name of @id, for tests. */
const char *metrics_name(enum metric_id id);

#endif
