/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sample stage's state (sample.c), shared with sample_peek.c (the
 * source between idle ticks) and sample_pace.c (how it samples).
 */
#ifndef TIERD_SAMPLE_INT_H
#define TIERD_SAMPLE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "discover.h"
#include "hot_table.h"
#include "idle.h"
#include "sample_watch.h"
#include "sampler.h"
#include "targets.h"

struct sample_stage {
	struct page_geom geom; /* the kernel's: the table's pages, statm's unit */
	struct sampler *cands[2];
	size_t nr_cands;
	struct sampler *s; /* the one running, NULL when none */
	struct hot_table hot;
	void *hot_mem; /* mmap()ed, hot_mem_len bytes */
	size_t hot_mem_len;
	struct idle_set idle; /* what the source saw idle, when it can tell */
	struct idle_range *idle_mem; /* mmap()ed, idle_cap ranges */
	size_t idle_len;
	bool idle_on;
	struct targets targets;
	bool targets_ok;
	struct targets_rule rules[2 * CONF_MAX_PATTERNS + 1];
	struct conf_strlist cgroups, comms; /* the rules' strings */
	pid_t *pids; /* sorted, what the sampler was given */
	size_t nr_pids;
	uint64_t last_scan_ns;
	int scan_source; /* what the last scan logged: 0 none, 1 /proc, 2 cgroups */
	int last_error;
	unsigned int backlog_ticks; /* ticks in a row with a backlog */
	uint32_t generation; /* the source's, when it was last logged */
	unsigned int pace; /* what the sampler was last set to (1: full) */
	uint64_t moved_at_pace; /* sample_in.moved_bytes_total then */
	struct sample_watch watch; /* which targets the source watches */
	bool watch_ok;
	bool watch_over; /* more targets than the source watches: logged */
	pid_t *watched; /* [CAND_MAX_PROCS], the watch's choice */
	const struct topology *topo; /* the tiers the watch weighs memory by */
	const pid_t *fake_pids; /* manager_ops.pids: tracked instead of a scan */
	size_t nr_fake_pids;
	uint64_t *fake_rss; /* [CAND_MAX_PROCS]: their resident memory at the last scan */
	uint64_t footprint; /* the targets' resident memory at the last scan */
	uint64_t wake_bar; /* new heat a peek's wake needs, past a false alarm; 0 none */
	uint64_t woke_new; /* the new heat of the last wake */
	struct discover news; /* a new hot set in the table's samples */
	char proc_root[CONF_PATH_MAX]; /* ROOT/proc: a process's cgroup */
};

struct sample_in;

/* sample_pace.c: the source's pace for this tick (idle_interval_ms). */
int sample_set_pace(struct sample_stage *m, const struct tierd_conf *c,
		    const struct sample_in *in, uint64_t now_ns);
/* sample_pace.c: the table's half-life for a source sampling one event in
 * @period (0: none), from sampling.half_life_ms (core/sample_period.h). */
void sample_fit_half_life(struct sample_stage *m, const struct tierd_conf *c, uint64_t period,
			  uint64_t now_ns);
/* sample_pace.c: the table's samples since the last drain into m->news,
 * where the source's floor follows the table's heat; logs its changes. */
void sample_watch_news(struct sample_stage *m, uint64_t now_ns);

#endif
