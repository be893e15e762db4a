/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The copy-thread controller: how many kernel threads may copy a migration
 * batch (vm.migrate_copy_threads on a patched kernel), and whether they run
 * on the target node's CPUs (pull) or the source's (push).
 *
 * Auto mode climbs: it doubles the thread count while each doubling raises
 * the measured migration throughput by at least gain_pct, and steps back to
 * the last count that helped when one does not (the plateau).  It never
 * goes above the idle CPUs of the side that does the copying, never adds a
 * thread while the CPUs are under pressure (PSI cpu "some" avg10 above
 * psi_busy_pct) and halves the count each step while they are.  When the
 * pressure ends it returns at once to the count that was good before; from
 * a plateau it probes one doubling again every reprobe_ns.
 *
 * Push or pull: the side with CPUs when one node is CPU-less (a CXL
 * expander, GPU HBM), else the side with more idle CPUs.
 *
 * The kernel takes 1..nr_cpu_ids threads and refuses more (-EINVAL), so no
 * mode decides more than cpu_limit: fixed mode copies with the lesser of
 * max_threads and the limit, auto mode climbs no higher, and a min_threads
 * above the limit is the limit.
 *
 * Pure: load and throughput come in, a decision goes out; sys/knobs writes
 * it (knobs_apply_copy).
 */
#ifndef TIERD_CORE_COPYTHREADS_H
#define TIERD_CORE_COPYTHREADS_H

#include <stdbool.h>
#include <stdint.h>

#define CT_MAX_THREADS 1024

enum ct_mode {
	CT_AUTO,
	CT_FIXED,	/* always max_threads */
	CT_OFF,		/* leave the knobs alone */
};

struct ct_params {
	enum ct_mode mode;
	unsigned int min_threads;	/* >= 1 */
	unsigned int max_threads;	/* >= min_threads, <= CT_MAX_THREADS */
	/* Where auto mode starts, e.g. the knob's value at start-up (the
	 * kernel's default); 0 or out of [min, max]: min_threads. */
	unsigned int start_threads;
	unsigned int busy_cpu_pct;	/* a CPU busier than this is not idle (sys/load counts) */
	unsigned int psi_busy_pct;	/* PSI cpu some avg10 above this: busy */
	unsigned int gain_pct;		/* a doubling must add this much throughput */
	uint64_t min_sample_bytes;	/* a throughput measurement needs this many bytes */
	uint64_t reprobe_ns;		/* from a plateau, probe up again this often */
	/* The kernel's nr_cpu_ids (the possible CPUs' highest id + 1): no
	 * decision above it; 0 unknown, max_threads bounds alone. */
	unsigned int cpu_limit;
};

void ct_params_default(struct ct_params *p);

/* The most and the least threads @p lets any mode decide: max_threads and
 * min_threads, each at most cpu_limit when it is known. */
unsigned int ct_max_threads(const struct ct_params *p);
unsigned int ct_min_threads(const struct ct_params *p);

/* Load on the CPUs that could copy: filled by the daemon from
 * /proc/pressure/cpu and /proc/stat (sys/load). */
struct ct_load {
	unsigned int psi_some_avg10_x100;	/* hundredths of a percent */
	unsigned int src_cpus, src_idle;	/* source node(s); 0 CPUs when CPU-less */
	unsigned int dst_cpus, dst_idle;	/* target node(s) */
	unsigned int local_idle;		/* the daemon's node, when both are CPU-less */
};

/* Migration done since the previous step, all at the current thread count. */
struct ct_sample {
	uint64_t bytes;
	uint64_t ns;
};

enum ct_why {
	CT_W_HOLD,		/* nothing new */
	CT_W_START,		/* first decision */
	CT_W_FIXED,
	CT_W_OFF,
	CT_W_PROBE,		/* throughput rose: one doubling more */
	CT_W_PLATEAU,		/* it did not: back to the last count that helped */
	CT_W_REPROBE,		/* time to look above the plateau again */
	CT_W_BUSY,		/* CPU pressure: halved */
	CT_W_FEW_IDLE,		/* fewer idle CPUs than threads */
	CT_W_RECOVER,		/* pressure gone: back to the count that was good */
	CT_W_NR,
};

const char *ct_why_name(enum ct_why w);

struct ct_state {
	unsigned int threads;
	unsigned int prev;		/* the count the current probe came from; 0 none */
	unsigned int good;		/* the last count throughput justified */
	unsigned int ceiling;		/* plateau found: do not go above until reprobe */
	bool busy;
	bool started;
	uint64_t settled_ns;
	uint64_t acc_bytes, acc_ns;	/* measurement in progress at @threads */
	uint64_t bps[CT_MAX_THREADS + 1];	/* last measured throughput per count, 0 unknown */
};

struct ct_decision {
	bool apply;		/* false in off mode: leave the knobs */
	bool mt;		/* vm.migrate_copy_mt */
	unsigned int threads;	/* vm.migrate_copy_threads */
	int pull;		/* vm.migrate_copy_pull: 1 pull, 0 push, -1 leave */
	bool changed;		/* differs from the previous decision */
	enum ct_why why;
};

/* Returns 0, or -EINVAL for bad params (min 0, max < min, max too large);
 * cpu_limit below min_threads is not an error: the limit wins. */
int ct_init(struct ct_state *s, const struct ct_params *p);

/*
 * The decision before any load or throughput is known, for the start: the
 * starting count with the copy on, so the first migration (often the
 * largest) already copies with threads; the first ct_step() then corrects
 * the count from the load.  @load needs only the CPU counts.
 */
void ct_start(struct ct_state *s, const struct ct_params *p, const struct ct_load *load,
	      struct ct_decision *ret);

void ct_step(struct ct_state *s, const struct ct_params *p, const struct ct_load *load,
	     const struct ct_sample *sample, uint64_t now_ns, struct ct_decision *ret);

#endif
