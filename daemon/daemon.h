/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's state: its config, the machine's topology, and the counters
 * status, tierctl and the metrics read.  The pipeline that fills them is
 * the manager's (manager.h); the event loop around both is loop.c.
 *
 * Kernel knobs: a stage may write a knob only when tierd_knobs_allowed(d)
 * (not --no-knobs, not dry run) and must put every knob back when the
 * manager stops, which it does on exit, including after SIGTERM.
 */
#ifndef TIERD_DAEMON_H
#define TIERD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "page_geom.h"
#include "policy.h"
#include "topology.h"

struct manager;
struct metrics;
struct page_geom_ops;
struct sd_event;

/* move_pages(2) per-page failures, as the migrator classes them. */
enum tierd_errno_class {
	ERRC_BUSY, /* -EBUSY, -EAGAIN: retried later */
	ERRC_NOMEM, /* -ENOMEM: target node full, promotion paused */
	ERRC_GONE, /* -ENOENT, -ESRCH, -EFAULT: page or process gone */
	ERRC_DENIED, /* -EACCES, -EPERM */
	ERRC_OTHER,
	NR_ERRC,
};

/* Counters the pipeline's stages fill; totals only grow. */
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
	/* Pages the kernel reported busy that wait for their retry time
	 * (core/account: busy back-off), as of the last tick. */
	uint64_t busy_backoff_pages;
	uint64_t move_pages_calls_total;
	/* Bytes that reached their target and the time the calls took: the
	 * account step adds, the copy-thread controller takes deltas. */
	uint64_t migrate_bytes_total;
	uint64_t migrate_ns_total;
	unsigned int copy_threads; /* 0 = not managed */
	unsigned int copy_threads_max; /* the most the controller may set; 0 = not managed */
	unsigned int copy_threads_cpus; /* the kernel's nr_cpu_ids, which bounds it; 0 unknown */
	int tick_nice; /* the nice value the last tick ran at */
	char sampler_source[16]; /* "none" until a sampler starts */
	char sampler_reason[160]; /* why that source */
	char sampler_not_taken[512]; /* "name: why" per source not taken, "; "-joined */
	double sampler_cpu_seconds_total; /* the source's (sampler_status) */
	double sampler_cost_pct; /* ... over its last drain interval */
	uint64_t sampler_period; /* events a sample, where the source has one */
	uint64_t heat_half_life_ns; /* the table's, as the period stretches it */
	char sampler_cost_source[16]; /* how it is known; "none" */
	uint64_t sampler_samples_total;
	/* The samples the hotness table took, and of them those on memory it
	 * held no heat for (hot_stats.samples, .fresh; core/discover.h). */
	uint64_t table_samples_total, table_fresh_samples_total;
	uint64_t sampler_peeks_total;	/* looks the source woke tierd for */
	uint64_t sampler_wakes_total;	/* ticks a peek brought forward */
	/* The processes the source watches of those the targets match, and
	 * the most it may (sample_watch.c); 0 bound: no source. */
	uint32_t watch_procs, watch_candidates, watch_bound;
	uint64_t watch_reads_total;	/* numa_maps reads for the choice */
	/* The last decision (decide.c): thresholds, what it planned, what
	 * it held back and why; candidate_pages is what it weighed. */
	struct policy_stats decision;
	uint64_t decision_candidate_pages;
	/* Knobs tierd had set that someone else changed since: theirs now,
	 * never written again; "name,name" (threads.c). */
	char knobs_foreign[128];
	/* Addresses passed to move_pages(2) calls, and of them the PMD THPs
	 * passed as one address (move.c); without THP lookups, 0 and a THP
	 * is a range's base pages (512 of 4 KiB). */
	uint64_t move_pages_addresses_total;
	uint64_t move_pages_thps_total;
	/* GPU placement (gather.c): the NVIDIA driver's memory mode ("none",
	 * "numa", "cdmm") and what told it; each rule's bytes on its node
	 * (core/gpu_usage.h: UINT64_MAX until read). */
	char gpu_mode[8];
	char gpu_mode_why[160];
	uint64_t gpu_rule_used[POLICY_MAX_RULES];
};

struct recorder;

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
	/* The policy as its file says it: conf is this fitted to the nodes
	 * the machine has now (nodes.c). */
	struct tierd_conf *conf_file;
	struct topology topo;
	/* The kernel's base page and PMD, and tierd's range, read at start:
	 * every page count, address and byte total of the stages is in these
	 * pages. */
	struct page_geom geom;
	/* Where the base page comes from (NULL: sysconf), for tests and
	 * tierd-sim; the PMD is ROOT's hpage_pmd_size. */
	const struct page_geom_ops *geom_ops;
	void *geom_ctx;
	gid_t control_gid; /* conf->control.group resolved; (gid_t)-1 none */

	struct manager *mgr; /* the pipeline, NULL until manager_init() */
	struct tierd_stats stats;
	struct tierd_stats prev_stats; /* at the previous tick, for rates */

	uint64_t start_realtime_ns;
	uint64_t start_ns, last_tick_ns, last_tick_duration_ns,
		last_textfile_ns;
	uint64_t ticks_total;
	int start_nice; /* the nice tierd started at: its ticks' */
	bool may_raise; /* it may go back up to start_nice after resting lower */
	int tick_nice_error; /* last errno of raising it for a tick, logged once */
	uint64_t reloads_ok_total, reloads_failed_total;
	bool ready; /* READY=1 sent */
	int topo_error; /* last topology refresh error, logged once */
	const char *record_path; /* --record FILE, NULL: none */
	struct recorder *record; /* open while tierd runs with --record */
	uint64_t topo_changes_total; /* memory that came or went, and so on */
	uint64_t topo_change_ns; /* the last change, CLOCK_MONOTONIC */
	char topo_change[192]; /* what it was, in words; "" none yet */
};

/*
 * The least memory that matters once idle: a peek wakes tierd for new heat
 * in no less (with the share of sample_peek.c's WAKE_SHARE), and a tick that
 * moves less does not put the sampling back at full pace (sample.c).
 */
#define TIERD_IDLE_MOVE_BYTES (8ull << 20)

static inline bool tierd_knobs_allowed(const struct tierd *d)
{
	return !d->no_knobs && !d->dry_run;
}

/* Load the config (defaults when the default path is missing), read the
 * topology, derive tiers.  Logs what went wrong.  manager_init() next. */
int tierd_init(struct tierd *d);

/* For a tick: back up to the nice tierd started at; between ticks: down to
 * the rest (daemon.c says why). */
void tierd_tick_priority(struct tierd *d);
void tierd_rest_priority(const struct tierd *d);

/* Each node's total and free memory again; an error is logged once.  A
 * node whose memory came or went, or that is gone: the topology is read
 * again (tierd_rescan_topology()). */
void tierd_refresh_topology(struct tierd *d);

/*
 * Read the topology again, and when its nodes differ (memory onlined or
 * offlined, a node added or removed: core/topo_change.h), fit the policy
 * file to the new nodes, derive the tiers, and hand both to the manager as
 * a reload does (nodes.c says how).  Logs what changed.  Returns 1 after a
 * change, 0 when there was none, or a negative errno (logged once; the
 * previous topology stays).
 */
int tierd_rescan_topology(struct tierd *d);

/* Parse, validate (the manager's stages too) and swap in the config file;
 * on any error keep running the old one.  Returns 0, or a negative errno
 * with @why holding the errors (FILE:LINE:COLUMN: KEY: reason lines). */
int tierd_reload(struct tierd *d, char *why, size_t why_size);

/* Frees the config (manager_fini() first). */
void tierd_fini(struct tierd *d);

/* Set or clear the runtime dry-run override. */
void tierd_set_dry_run(struct tierd *d, bool on);

/* The one-line STATUS= text. */
void tierd_status_line(const struct tierd *d, char *buf, size_t size);

/* Fill @m with every metric tierd has. */
void tierd_metrics(struct tierd *d, struct metrics *m);

#endif
