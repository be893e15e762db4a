/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Promotion and demotion decisions: candidates in, intents out.  The model,
 * a worked example and the failure modes are in the essay at the top of
 * policy.c.
 *
 * Life cycle: policy_new() once at start (it sizes the scratch arrays from
 * the most candidates a tick can carry), policy_run() every tick (no
 * allocation, no I/O, time passed in), policy_free() at exit.  On a config
 * reload build a new policy with the new params and free the old one; the
 * rate buckets live with the caller (struct policy_cgroup.rate,
 * policy_input.global_rate), so they survive a reload.
 *
 * How the daemon drives the policy, tick by tick, is daemon/manager.c's
 * manager_tick(): gather's candidates and cgroup usage in, then
 * policy_run(), account_take_retries(), batch_build(), the migrator and
 * the account step.  The lab's policy driver and the benchmarks run that
 * same tick.
 */
#ifndef TIERD_CORE_POLICY_H
#define TIERD_CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bucket.h"
#include "hot_table.h"
#include "page_geom.h"
#include "topology.h"

#define POLICY_MAX_RULES 16
#define POLICY_RULE_ALLOW 16	/* allow entries per rule */
#define POLICY_RULE_LEN 256	/* a cgroup path or a comm pattern, with its NUL */
#define POLICY_HEAT_BINS 33	/* bin 0: heat 0; bin b: [2^(b-1), 2^b) */
/* policy_params.crowded_hot_threshold's default, where the source names
 * none (policy_input.crowded_hot): with k samples a rate is known to about
 * 1/sqrt(k), half at 4 (HeMem takes 8 read samples). */
#define POLICY_CROWDED_HOT 4
/* policy_input.crowded_hot of a source whose heat counts sampled events
 * (one access in N): the floor is what the memory that cannot fit
 * reaches by chance too rarely to matter, from policy_input.table_hist
 * (policy_noise.c). */
#define POLICY_CROWDED_BACKGROUND UINT32_MAX
/* The share of the room that chance may fill (policy_noise.c). */
#define POLICY_NOISE_SHARE 0.005
/* The most of the table's heat the floor may hold back (policy_noise.c). */
#define POLICY_NOISE_HELD 0.1
#define POLICY_NOISE_MIN_FLOOR 2
#define POLICY_NOISE_MAX_FLOOR 64

/*
 * A GPU-coherent node and who may use it (the config's gpu_nodes entries).
 * A process matches when an allow entry starting with '/' is its cgroup or
 * an ancestor of it, or when another entry matches its comm as an
 * fnmatch(3) pattern.  Matching pages may be placed on @node while the
 * rule's processes hold less than @max_bytes there (0: no limit).  With
 * @demotion_target, colder pages of faster tiers may also be demoted to it.
 */
struct policy_gpu_rule {
	int node;
	uint64_t max_bytes;
	bool demotion_target;
	int nr_allow;
	char allow[POLICY_RULE_ALLOW][POLICY_RULE_LEN];
};

struct policy_params {
	uint32_t page_size;		/* bytes of a base page: the kernel's geom.base */
	/* 0 = adaptive (heat histogram against the fast tier's room);
	 * otherwise the fixed heat at or above which a page is hot. */
	uint32_t hot_threshold;
	uint32_t min_hot_threshold;	/* the adaptive threshold's floor, >= 1 */
	/* Its floor when the tracked processes' memory does not fit the
	 * fast tier's room (policy_input.footprint_bytes): heat of this many
	 * samples, so that a range a sampler hit once or twice by chance is
	 * no reason to copy it while hotter ones may need the room. */
	uint32_t crowded_hot_threshold;
	/* Hysteresis: a page is cold, and may be demoted, only at or below
	 * hot_threshold * cold_pct / 100.  Pages in between stay put. */
	uint32_t cold_pct;
	uint64_t cooldown_ns;		/* no move within this long of the last one */
	/* Promoted and demoted (either order) within pingpong_window_ns:
	 * a ping-pong; the page is held for pingpong_hold_ns after its
	 * last move. */
	uint64_t pingpong_window_ns;
	uint64_t pingpong_hold_ns;
	/* Watermark and room demotions (cap demotions happen regardless). */
	bool demote;
	/* Demote cold fast-tier pages to make room for hot pages that did
	 * not fit (the promotions follow on a later tick). */
	bool demote_for_room;
	/* Promote the fill pass's candidates (POLICY_F_FILL) while the
	 * footprint fits the fast tier. */
	bool fill;
	/* A cold page must also be unaccessed this long (0: heat alone). */
	uint64_t cold_age_ns;
	/* Promotion's hysteresis: a node takes promotions in a tick only if
	 * it starts the tick with at least this much room above its high
	 * target; it is then filled down to high.  Room demotions for a node
	 * below it make at least this much.  0: any room is used. */
	uint64_t min_room_bytes;
	int nr_rules;
	struct policy_gpu_rule rules[POLICY_MAX_RULES];
};

/* Defaults an operator would expect for pages of @g; the config overrides them. */
void policy_params_default(struct policy_params *p, const struct page_geom *g);

/*
 * One candidate: a base page or a THP of a process, as the hotness table and
 * a node query see it, or a range of base pages that a node query
 * found all on one node (POLICY_F_PAGES): the policy weighs it as a THP
 * but may move part of it (its first pages, up to a cap), the batcher lists
 * its pages.  The caller fills every field.
 */
struct policy_page {	/* 56 bytes, no holes: decide keeps 32 Ki of them */
	uint64_t addr;		/* page aligned; range aligned for a THP or a range */
	uint64_t last_access_ns;	/* 0 = unknown */
	uint64_t last_promote_ns;	/* 0 = never */
	uint64_t last_demote_ns;	/* 0 = never */
	int pid;
	uint32_t nr_pages;	/* 1, or a range's (512 of 4 KiB) for a THP or a range */
	int node;		/* node id the page is on (move_pages query) */
	uint32_t heat;		/* larger is hotter; 0 = not seen */
	int16_t cgroup;		/* index into policy_input.cgroups, -1 = none */
	uint16_t flags;		/* POLICY_F_* */
	int rule;		/* GPU placement rule index (policy_rule_match), -1 = none */
};

/*
 * The candidate is a range of nr_pages base pages from addr, not one folio:
 * move_pages(2) is given each of its pages (batch_entry_intent()).  Decide
 * makes one of a range of base pages whose pages its node query found
 * all on one node, instead of 512 candidates (32 of 64 KiB pages) (a table of the DAMON source's
 * ranges filled decide's 32 Ki candidates with 64 ranges a tick: 3 MiB of
 * candidates and intents, and the policy sorted 32 Ki entries for them).
 */
#define POLICY_F_PAGES 0x1
/*
 * A range the hotness source never named, of a process whose memory the
 * fast tier has room for (policy_footprint_fits()): candidate selection's
 * fill pass (cand_idle.c) finds it on a lower tier.  The best placement
 * then has every page on the fast tier, and a sampler that sees one
 * access in 10^5 names a lukewarm range once in hours: the policy
 * promotes such ranges at heat 0, after every hotter candidate, into the
 * room they leave, and never demotes for them (POLICY_R_FILL); their
 * batches come after the hot ones' (core/batch.c).
 */
#define POLICY_F_FILL 0x2

/* A cgroup's fast-tier use and budgets for this tick. */
struct policy_cgroup {
	uint64_t fast_bytes;	/* on the fast tier now (topo_fast_tier(), memory.numa_stat) */
	uint64_t fast_max_bytes;	/* 0 = no cap */
	struct bucket *rate;	/* bytes migrated per second; NULL = no cap */
};

struct policy_input {
	const struct topology *topo;
	const struct policy_page *pages;
	size_t nr_pages;
	struct policy_cgroup *cgroups;
	size_t nr_cgroups;
	/* Per rule: bytes its processes hold on its node now (core/gpu_usage);
	 * NULL = 0. */
	const uint64_t *rule_used_bytes;
	struct bucket *global_rate;	/* bytes per second, all moves; NULL = none */
	/* Bit i set: node index i takes no pages now (ENOMEM back-off,
	 * account_blocked_mask()). */
	uint64_t blocked_nodes;
	/* The tracked processes' resident memory (0: not known). */
	uint64_t footprint_bytes;
	/* The running source's floor for a crowded fast tier, in its units
	 * of heat (struct sampler's crowded_hot); 0: the params' own. */
	uint32_t crowded_hot;
	/* With POLICY_CROWDED_BACKGROUND: the hotness table's entries by
	 * heat, POLICY_HEAT_BINS bins (hot_heat_hist()); NULL: the params'
	 * floor. */
	const struct hot_heat_bin *table_hist;
	/* With POLICY_CROWDED_BACKGROUND: a new hot set is being found
	 * (core/discover.h) since this time (0: none is).  One sample, not
	 * POLICY_NOISE_MIN_FLOOR, is then the least the floor asks, of a
	 * page last recorded (last_access_ns) at this time or later: an
	 * older lone sample is what chance gave before. */
	uint64_t news_since_ns;
	uint64_t now_ns;
};

enum policy_kind {
	POLICY_PROMOTE,
	POLICY_DEMOTE,
};

enum policy_reason {
	POLICY_R_HOT,		/* hot on a lower tier */
	POLICY_R_GPU,		/* hot, and a placement rule names its process */
	POLICY_R_CAP,		/* its cgroup is over its fast-tier cap */
	POLICY_R_WMARK,		/* its node is below its low watermark */
	POLICY_R_ROOM,		/* cold, making room for hotter pages */
	POLICY_R_FILL,		/* never seen, and all the memory fits (POLICY_F_FILL) */
	/* its cgroup's fast-tier cap held back pages of its own clearly
	 * hotter (cold_pct, and three deviations of chance): they take its
	 * place on a later tick */
	POLICY_R_EXCHANGE,
	POLICY_R_NR,
};

struct policy_intent {	/* 32 bytes: decide keeps 36 Ki of them */
	uint64_t addr;
	int pid;
	uint32_t nr_pages;	/* the candidate's, or the first of a range's pages
				 * that a cap left room for (policy.c) */
	uint32_t page;		/* index into policy_input.pages */
	int16_t from_node;	/* node ids: below MAX_NUMNODES, at most 1024 */
	int16_t to_node;
	int16_t cgroup;		/* below CONF_MAX_CGROUPS (128), -1 = none */
	uint8_t kind;		/* enum policy_kind */
	uint8_t reason;		/* enum policy_reason */
	uint8_t tries;		/* earlier -EBUSY attempts (core/account retries) */
	uint8_t flags;		/* the candidate's POLICY_F_* */
};

/* Why candidates that qualified were not moved this tick (pages each). */
enum policy_hold {
	POLICY_H_COOLDOWN,
	POLICY_H_PINGPONG,
	POLICY_H_NO_ROOM,	/* no target node with room */
	POLICY_H_CGROUP_CAP,
	POLICY_H_GPU_CAP,
	POLICY_H_CGROUP_RATE,
	POLICY_H_GLOBAL_RATE,
	POLICY_H_OUTPUT_FULL,
	/* The target has room for the page but was filled to its high target
	 * and opens again only when min_room_bytes fit (promotion's
	 * hysteresis). */
	POLICY_H_REFILL,
	POLICY_H_NR,
};

struct policy_stats {
	uint32_t hot_threshold;
	uint32_t cold_threshold;
	/* The floor the adaptive threshold kept while the tracked memory did
	 * not fit the fast tier (the source's crowded_hot, or the one
	 * POLICY_CROWDED_BACKGROUND gave); 0: it fit, or the threshold is
	 * fixed. */
	uint32_t crowded_floor;
	bool discovering;	/* policy_input.news_since_ns lowered it */
	bool thin;		/* the hot memory's own heat lowered it (policy_noise.c) */
	uint64_t intents[POLICY_R_NR];		/* count per reason */
	uint64_t promote_bytes;
	uint64_t fill_bytes;	/* of promote_bytes, POLICY_R_FILL's */
	uint64_t demote_bytes;
	uint64_t held[POLICY_H_NR];		/* candidates per hold reason */
	/* Hot bytes that found no room, per target-tier node index; what
	 * demote_for_room made room for. */
	uint64_t unmet_bytes;
};

struct policy_output {
	struct policy_intent *intents;	/* caller's array */
	size_t max_intents;
	size_t nr_intents;
	/* The tick's moves at most (0: no bound), the first intent past it
	 * if it must: what does not fit is held (POLICY_H_OUTPUT_FULL)
	 * before the rate buckets are charged for it. */
	uint64_t max_bytes;
	uint64_t bytes;			/* the intents' */
	/* Per cgroup (the caller's array of nr_cgroups; NULL: not wanted),
	 * the bytes of hot candidates its fast-tier cap held back: where
	 * candidate selection looks for what they may take the place of
	 * (cand_in.cg_wait). */
	uint64_t *cg_wait_bytes;
	struct policy_stats stats;
};

struct policy;

/*
 * Allocate a policy for at most @max_pages candidates and @max_cgroups
 * cgroups per tick.  Copies @params.  Returns 0 and *ret, -EINVAL for bad
 * params (min_hot_threshold 0, cold_pct > 100, page_size 0, nr_rules or a
 * rule's nr_allow out of range, a rule node < 0 or above INT16_MAX,
 * @max_cgroups above INT16_MAX: intents keep both in 16 bits), -ENOMEM.
 */
int policy_new(const struct policy_params *params, size_t max_pages, size_t max_cgroups,
	       struct policy **ret);
void policy_free(struct policy *p);

/*
 * Decide one tick.  Intents are written in the order of the tick's steps
 * (policy.c): cap and watermark demotions, promotions, exchange
 * demotions, fill promotions, room demotions; hottest promotions first,
 * coldest demotions first (the batcher carries every demotion out before
 * the promotions).  Rate buckets are charged for every intent written.
 * Returns 0, or -EINVAL when in->nr_pages exceeds the policy's size (or
 * in->nr_cgroups), a candidate's cgroup or rule index is out of range, or the
 * topology has more than 64 nodes.
 */
int policy_run(struct policy *p, const struct policy_input *in, struct policy_output *out);

/*
 * Whether policy_run() may demote this tick, from what it is given besides
 * the candidates (in->topo, in->cgroups; in->pages is not read): a cgroup
 * over its fast-tier cap; with params->demote, a node with a tier below it
 * under its low target (watermark demotions) or, with demote_for_room too,
 * a non-GPU one with less than @promote_bytes of room above its high target
 * (hot pages may not fit: room demotions).  @promote_bytes is the most one
 * tick promotes.  Demotion takes only pages that are candidates: the caller
 * keeps room among them for cold pages when this is true.
 */
/*
 * Node index @i's free-memory targets: demotion starts below *@ret_low, and
 * moves into the node leave *@ret_high free.
 */
void policy_node_targets(const struct topology *topo, int i, int64_t *ret_low,
			 int64_t *ret_high);

/*
 * Does a footprint of @footprint_bytes (the tracked processes' resident
 * memory; 0: not known, and no) fit the fast tier's room: its non-GPU
 * nodes' memory above their high targets?  Then the adaptive threshold
 * takes any heat.
 */
bool policy_footprint_fits(const struct topology *topo, uint64_t footprint_bytes);

/*
 * Does the policy fill (POLICY_F_FILL) with @params now: fill on, the
 * threshold adaptive (a fixed one is the operator's word on what heat
 * moves), and the footprint fitting?  The fill pass runs only then.
 */
bool policy_fills(const struct policy_params *params, const struct topology *topo,
		  uint64_t footprint_bytes);

bool policy_may_demote(const struct policy_params *params, const struct policy_input *in,
		       uint64_t promote_bytes);

/*
 * The first rule that matches a process in cgroup @cgroup_path (as in
 * /proc/PID/cgroup, e.g. "/gpu.slice/train") with comm @comm; -1 if none.
 * Either may be NULL.  Call it once per process, not per page.
 */
int policy_rule_match(const struct policy_params *params, const char *cgroup_path,
		      const char *comm);

/* Is a process in cgroup @cgroup_path in (or below) a cgroup that rule
 * @rule names?  Such a process is counted by the read of those cgroups. */
bool policy_rule_in_cgroups(const struct policy_params *params, int rule,
			    const char *cgroup_path);

/* Is allow entry @a of rule @rule a cgroup that no other entry of the rule
 * contains: one whose memory.numa_stat the rule's usage adds up? */
bool policy_rule_cgroup_top(const struct policy_params *params, int rule, int a);

/* The adaptive hot threshold for a heat histogram (bytes per bin): the
 * lowest bin floor whose cumulative bytes (hottest first) fit @room_bytes,
 * never below @floor.  Exposed for tests and status. */
uint32_t policy_threshold_from_hist(const uint64_t hist[POLICY_HEAT_BINS], uint64_t room_bytes,
				    uint32_t floor);

const char *policy_reason_name(enum policy_reason r);
const char *policy_hold_name(enum policy_hold h);

#endif
