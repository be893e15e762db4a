/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stages manager_tick() calls, in its order (manager.c).  Each stage
 * keeps its own state behind an opaque pointer; what it reads from the
 * others and what it hands on are arguments, arrays the manager owns and
 * sized at start from the config.  A stage's start and reload read the
 * daemon's config and topology; its tick reads only what it is passed.
 *
 *   1 sample   sample.c   targets -> sampler -> hot table, tracked processes
 *   2 gather   gather.c   cgroup usage, candidates and the node each is on
 *                         (selection: core/candidates.c)
 *   3 decide   decide.c   candidates -> core/policy -> intents
 *   4 batch    decide.c   intents -> core/batch -> plan
 *   5 migrate  move.c     plan -> sys/migrate (move_pages(2)) -> per-batch results
 *   6 account  move.c     results -> core/account, stats, range memory
 *   - threads  threads.c  throughput and load -> copy threads (knobs)
 *   7 export   export.c   rates, textfile metrics, sd_notify
 */
#ifndef TIERD_STAGES_H
#define TIERD_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "account.h"
#include "batch.h"
#include "candidates.h"
#include "daemon.h"
#include "policy.h"

struct gpu_usage;
struct hot_table;
struct manager_ops;
struct mig_run_result;
struct metrics;

/* While a backlog lasts, sample on one tick in this many (manager.h). */
#define STAGE_BACKLOG_SAMPLE_EVERY 3

/* The move_pages time one tick may take: decide plans what the measured
 * throughput carries in it, migrate starts no batch after it. */
#define STAGE_MOVE_BUDGET_NS (2 * 1000000000ull)

/* ---- 1. sample ---- */

struct sample_stage;

struct sample_in {
	bool backlog; /* the last tick left a backlog */
	uint32_t idle_ticks;
	uint64_t moved_bytes_total; /* every tick's moves so far */
	uint64_t start_ns; /* tierd's start, for -v */
};

int sample_new(const struct tierd *d, const struct manager_ops *ops,
	       struct tierd_stats *st, struct sample_stage **ret);
void sample_free(struct sample_stage *s);
int sample_reload_check(const struct tierd_conf *cur, const struct tierd_conf *next,
			char *why, size_t why_size);
void sample_reload_apply(struct sample_stage *s, const struct tierd_conf *c,
			 struct cand_procs *procs);
/* Heat into the table; @procs follows the tracked processes. */
int sample_step(struct sample_stage *s, const struct tierd_conf *c, const struct sample_in *in,
		struct cand_procs *procs, struct tierd_stats *st, uint64_t now_ns);
/* The table, NULL while no source runs. */
struct hot_table *sample_table(struct sample_stage *s);
/* The memory the source last saw idle, NULL when it cannot tell. */
const struct idle_set *sample_idle(struct sample_stage *s);
/* The resident memory of the tracked processes at the last scan; 0 when not
 * known. */
uint64_t sample_footprint(const struct sample_stage *s);
/* The running source's crowded floor (struct sampler); 0 when none runs or
 * it names none. */
uint32_t sample_crowded_hot(const struct sample_stage *s);
/* The table's entries by heat at @now_ns into @hist[POLICY_HEAT_BINS]
 * (hot_heat_hist()) where the running source's floor follows them
 * (POLICY_CROWDED_BACKGROUND) and the footprint outgrows @topo's fast
 * tier: true; else false, @hist untouched. */
bool sample_table_hist(const struct sample_stage *s, const struct topology *topo,
		       uint64_t now_ns, struct hot_heat_bin *hist);
/* Where the running source's floor follows the table's heat and its
 * samples say a new hot set is being found (core/discover.h): since when,
 * in the table's time of a record (policy_input.news_since_ns); else 0. */
uint64_t sample_news_since(const struct sample_stage *s);
int sample_peek(struct sample_stage *s, uint64_t start_ns, uint64_t now_ns);
void sample_peek_arm(struct sample_stage *s, bool on, uint64_t until_ns);
int sample_peek_fd(struct sample_stage *s, uint32_t *gen);
/* After a tick: one that moved something (@idle false) lowers the wake's
 * bar again; a woken one that found nothing (@woken, @idle) raises it. */
void sample_peek_settle(struct sample_stage *s, bool woken, bool idle);
/* The running source peeks between idle ticks: it can, and where its
 * peeks are armed (the DAMON source's program) sampling.damon.idle_peek
 * says so. */
bool sample_peeks(const struct sample_stage *s, const struct tierd_conf *c);
/* Its peeks are not armed (the BPF sampler's): the loop times them. */
bool sample_peeks_timed(const struct sample_stage *s);
/* The source's sampler_fd(), -1 when none runs or it has none. */
int sample_fd(struct sample_stage *s);

/* ---- 2. gather ---- */

struct gather_stage;

struct gather_in {
	const struct tierd_conf *conf;
	const struct topology *topo;
	const struct hot_table *hot;
	struct cand_procs *procs; /* gather fills each one's GPU rule */
	struct cand_ranges *ranges;
	const struct idle_set *idle; /* sample_idle() */
	bool demote; /* keep a quarter of the candidates for the coldest */
	/* sample_footprint(): while the policy fills (policy_fills()), the
	 * fill pass runs. */
	uint64_t footprint_bytes;
	const uint64_t *fast_bytes; /* each cgroup's, gather_usage() */
	const uint64_t *cg_wait; /* each cgroup's, the last decide_out's */
	bool cut; /* the last tick's moves were cut short (manager.moves_cut) */
};

int gather_new(const struct tierd *d, const struct manager_ops *ops, size_t max_cand,
	       struct tierd_stats *st, struct gather_stage **ret);
void gather_free(struct gather_stage *g);
void gather_reload_apply(struct gather_stage *g, const struct tierd_conf *c);
/* Each configured cgroup's fast-tier bytes (memory.numa_stat). */
void gather_usage(struct gather_stage *g, const struct tierd_conf *c,
		  const struct topology *topo, uint64_t *fast_bytes);
/* The candidates, and each GPU rule's usage (out->rule_used). */
void gather_step(struct gather_stage *g, const struct gather_in *in, uint64_t now_ns,
		 struct cand_out *out);
/* Each GPU rule's usage, which decide adds its planned promotions to. */
struct gpu_usage *gather_gpu_usage(struct gather_stage *g);

/* ---- 3. decide, 4. batch ---- */

struct decide_stage;

struct decide_in {
	const struct tierd_conf *conf;
	const struct topology *topo;
	const struct cand_out *cands;
	const uint64_t *fast_bytes; /* per configured cgroup */
	uint64_t blocked_nodes; /* account_blocked_mask() */
	uint64_t bytes_per_s; /* the last measured move_pages throughput */
	uint64_t footprint_bytes; /* sample_footprint() */
	uint32_t crowded_hot; /* sample_crowded_hot() */
	const struct hot_heat_bin *table_hist; /* sample_table_hist(), or NULL */
	uint64_t news_since_ns; /* sample_news_since() */
	struct gpu_usage *gpu_usage; /* the intents' GPU promotions go in; NULL */
};

struct decide_out {
	struct policy_intent *intents; /* the manager's */
	size_t max_intents;
	size_t nr_intents;
	bool cut; /* the tick's bytes or intents held some back: a backlog */
	/* Per configured cgroup, the hot bytes its fast-tier cap held back
	 * (policy_output.cg_wait_bytes): the next gather's cap walk. */
	uint64_t cg_wait[CONF_MAX_CGROUPS];
	struct policy_stats stats;
};

/* -EBUSY retries one tick takes from the account, after the intents. */
#define DECIDE_MAX_RETRIES 4096

/* A rate's bucket: one interval's worth of bytes, else a second's, and at
 * least a PMD THP where the kernel has them (@g). */
uint64_t decide_burst_bytes(uint32_t mb_per_s, uint32_t interval_ms, const struct page_geom *g);
/* Base pages a tick (twice a tick's worth of moves) and candidates. */
size_t decide_max_pages(const struct tierd_conf *c, const struct page_geom *g);
size_t decide_max_cand(const struct tierd_conf *c, const struct page_geom *g);
int decide_new(const struct tierd *d, size_t max_cand, struct decide_stage **ret);
void decide_free(struct decide_stage *s);
void decide_params(const struct tierd_conf *c, const struct page_geom *g,
		   struct policy_params *pp);
int decide_reload_check(const struct tierd_conf *next, const struct page_geom *g, char *why,
			size_t why_size);
void decide_reload_apply(struct decide_stage *s, const struct tierd *d, uint64_t now_ns);
bool decide_may_demote(struct decide_stage *s, const struct tierd_conf *c,
		       const struct topology *topo, const uint64_t *fast_bytes);
int decide_step(struct decide_stage *s, const struct decide_in *in, uint64_t now_ns,
		struct decide_out *out);
int decide_batch(struct decide_stage *s, const struct policy_intent *intents, size_t n,
		 const struct batch_plan **ret_plan);

/* ---- 5. migrate, 6. account ---- */

struct move_stage;

struct move_in {
	const struct topology *topo;
	const struct batch_plan *plan;
	const struct policy_intent *intents;
	bool dry_run;
};

int move_new(const struct tierd *d, const struct manager_ops *ops, struct move_stage **ret);
void move_free(struct move_stage *s);
bool move_has_promote(const struct move_stage *s);
/* The account, for decide's inputs (blocked nodes, retries, throughput). */
struct account *move_account(struct move_stage *s);
/* The plan's calls: each batch's outcome into @calls (nr_batches). */
int move_step(struct move_stage *s, const struct move_in *in, uint64_t now_ns,
	      struct acct_call *calls, struct mig_run_result *ret);

struct account_in {
	const struct tierd_conf *conf;
	const struct topology *topo;
	const struct batch_plan *plan;
	const struct policy_intent *intents;
	const struct acct_call *calls; /* move_step()'s */
	struct mig_run_result *run; /* move_step()'s; moved and would bytes added */
	bool dry_run;
};

/* The plan's outcome into core/account, @st (counters) and @ranges (move
 * times). */
void account_step(struct move_stage *s, const struct account_in *in, struct cand_ranges *ranges,
		  struct tierd_stats *st, uint64_t now_ns);

/* ---- copy threads ---- */

struct threads;

int threads_new(const struct tierd *d, struct tierd_stats *st, struct threads **ret);
void threads_reload_apply(struct threads *t, const struct tierd *d);
int threads_step(struct threads *t, const struct tierd *d, struct tierd_stats *st,
		 uint64_t now_ns);
void threads_restore_knobs(struct threads *t, const char *runtime_dir);
void threads_free(struct threads *t);

/* ---- 7. export ---- */

void export_step(struct tierd *d, uint64_t now_ns);

#endif
