// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipeline step 2, decide: from the hotness table to this tick's
 * move_pages plan.
 *
 *  1. per configured cgroup, its fast-tier bytes (memory.numa_stat);
 *  2. candidates: the hottest entries of the table (promotion) and, when
 *     the policy may demote this tick (policy_may_demote(): a node short
 *     of free memory, a cgroup over its cap), up to a quarter of them from
 *     the coldest (demotion; see gather()).  A 2 MiB entry is one
 *     candidate when it is a PMD THP (sys/thp), else its 512 base pages
 *     are queried, and are one candidate when they are all on one node
 *     (flush_staged()); at most max_pages base pages and max_cand slots
 *     (a page queried, a THP) a tick, so the node query below and the
 *     memory are bounded.  A range seen wholly
 *     on the fast tier, or moved there wholly by the last tick
 *     (mod_migrate.c), is not queried again for promotion for
 *     FAST_RECHECK_NS: the budget goes to the ranges that may still need
 *     moving;
 *  3. where each candidate is: move_pages node queries, one call for a
 *     run of entries of one process, up to QUERY_ENTRIES entries and
 *     QUERY_PAGES pages (see stage_entry());
 *  4. core/policy -> intents, cut to this tick's time budget (below), plus
 *     the -EBUSY retries that are due (core/account) -> core/batch -> the
 *     plan the migrate step carries out.
 *
 * Time budget: a tick moves at most what the last measured move_pages
 * throughput carries in MOVE_BUDGET_NS (at least one batch; before the
 * first measurement, everything the policy chose, and the migrate step
 * starts no batch once MOVE_BUDGET_NS has passed -- the first tick used to
 * move a single batch, 8 MiB of a 256 MiB hot set), so a tick stays short however slow the copies are -- on a 10 GB/s machine the
 * configured rate limits long before, in the TCG lab (~0.05-0.2 GB/s) it
 * is about 100 MiB -- and the control socket and the watchdog are never
 * starved.  The rest of the intents come back on later ticks (the heat is
 * still there).  Measured in the lab: a budget of one 500 ms interval
 * tripled the time to promote a 256 MiB hot set (59 s against 19 s),
 * because a tick's fixed cost there (DAMON drain, node queries) is about a
 * second.
 *
 * Sizes are fixed at start from the config: base pages per tick from the
 * promotion rate and interval (twice a tick's worth of moves, within
 * [MIN_CAND, MAX_CAND]), and candidates per tick at most MAX_CAND_ENTRIES.
 * The arrays a tick fills take about 117 bytes per candidate (the
 * candidate, 56; its intent, 32; the policy's and the batcher's order and
 * the batch plan's address, node, status and intent, 29): for 4 KiB pages,
 * which are one candidate each, 128 Ki candidates were 16 MiB at the
 * peak, most of tierd's RSS next to a table of a million pages (20 MiB).
 * MAX_CAND_ENTRIES = 32 Ki keeps them to 4 MiB; a tick then plans up to
 * 128 MiB of base pages (a THP is one candidate for 512 pages, so
 * THP-backed memory still gets the whole page budget), and a larger hot
 * set of base pages takes more ticks, which follow at once while they
 * move something (pipeline.h: cand_capped, backlog).  A 2 MiB range of
 * base pages on one node is one candidate and one intent, and 512
 * entries of the plan only: with the DAMON source's ranges (the
 * sampling-event source's 4 KiB entries are one page each anyway) a
 * tick's candidates and intents went from 3 MiB to a few KiB, and a
 * table full of ranges from 31.9 to 28.8 MiB (daemon_rss, 1 TiB
 * sketch).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "batch.h"
#include "cgroup.h"
#include "daemon.h"
#include "fsutil.h"
#include "log.h"
#include "migrate.h"
#include "pipeline.h"
#include "policy.h"
#include "thp.h"

#define NSEC_PER_SEC 1000000000ull
#define PAGE_SZ 4096u
#define PAGES_PER_HUGE (HOT_HUGE_SIZE / PAGE_SZ)
#define MIN_CAND (16u << 10) /* base pages a tick: 64 MiB */
#define MAX_CAND (128u << 10) /* 512 MiB */
#define MAX_CAND_ENTRIES (32u << 10) /* candidates a tick: 4 MiB of arrays */
#define MAX_VIEWS 4096 /* table entries looked at a tick */
#define COLD_QUERY_PAGES (16u << 10) /* base pages the coldest pass queries a tick */
#define QUERY_ENTRIES 1024 /* entries one node query may cover */
#define QUERY_PAGES 4096 /* base pages it may cover (a 2 MiB entry of base pages is 512) */
#define COLD_WINDOWS 2 /* MAX_VIEWS selections the coldest pass makes a tick */
#define MAX_RETRIES 4096
#define FAST_RECHECK_NS (10 * NSEC_PER_SEC)
#define RECHECK_PAGES 16 /* of a known-fast range's 512, see still_fast() */
#define CGROUP_ROOT "/sys/fs/cgroup"
#define MOVE_BUDGET_NS PIPE_MOVE_BUDGET_NS

/* An entry of the table chosen as candidates, waiting for its node query. */
struct staged {
	struct hot_entry_view v;
	uint32_t first, count; /* its pages in addrs[] */
	uint32_t nr_pages; /* base pages per queried page: 512 for a THP, else 1 */
	bool cold; /* staged by a cold pass */
};

struct mod_decide {
	struct policy_params pp;
	struct policy *policy;
	struct batcher *batcher;
	struct migrator query; /* node queries only */
	struct thp_lookup *thp; /* NULL: treat 2 MiB entries as base pages */
	size_t max_pages; /* base pages a tick */
	size_t max_cand; /* candidates (array entries) a tick */
	bool cand_full; /* stage_entry() refused an entry for max_cand this tick */
	size_t n; /* candidates in cand[] this tick, queried */
	/* Their slots: one per page the query found, one per THP.  A range
	 * of base pages on one node is one candidate but 512 slots, so a
	 * tick queries and plans the pages it did when each page was a
	 * candidate (max_cand), and cand[] holds up to max_cand candidates. */
	size_t slots;
	size_t cold_queried; /* base pages the coldest pass staged this tick */
	struct staged *staged; /* entries whose query is pending, QUERY_ENTRIES */
	size_t nr_staged, staged_pages; /* their number, and their pages in addrs[] */
	struct hot_cursor cold_cursor; /* where the coldest pass goes on from */
	struct hot_entry_view *views;
	uint64_t cold_taken[MAX_VIEWS / 64]; /* views the cold reserve added */
	struct policy_page *cand;
	struct policy_intent *intents;
	void **addrs; /* the staged entries' pages, QUERY_PAGES */
	int *status;
	struct bucket global_rate;
	struct bucket cg_rate[CONF_MAX_CGROUPS];
	struct policy_cgroup cgs[CONF_MAX_CGROUPS];
	uint64_t rule_used[POLICY_MAX_RULES];
	uint64_t procs_generation;
	int cg_error; /* last memory.numa_stat error, logged once */
};

static size_t cand_budget(const struct tierd_conf *c)
{
	uint64_t bytes = (uint64_t)c->promotion.max_rate_mb_per_s << 20;
	uint64_t pages;

	bytes = bytes * c->interval_ms / 1000;
	pages = 2 * bytes / PAGE_SZ;
	if (!c->promotion.max_rate_mb_per_s || pages > MAX_CAND)
		pages = MAX_CAND;
	return pages < MIN_CAND ? MIN_CAND : pages;
}

/* tierd.yaml -> policy params: promotion, demotion, gpu_nodes. */
static void params_from_conf(const struct tierd_conf *c, struct policy_params *pp)
{
	policy_params_default(pp);
	pp->page_size = PAGE_SZ;
	pp->hot_threshold = c->promotion.hot_threshold;
	pp->demote = c->demotion.enabled;
	pp->demote_for_room = c->demotion.enabled;
	pp->cold_age_ns = (uint64_t)c->demotion.cold_age_s * NSEC_PER_SEC;
	/* A full node opens again when one batch fits: one full-sized call,
	 * not a page-sized one every tick as reclaim frees memory. */
	pp->min_room_bytes = (uint64_t)c->promotion.batch_pages * PAGE_SZ;
	pp->nr_rules = 0;
	for (int g = 0; g < c->nr_gpu_nodes && g < POLICY_MAX_RULES; g++) {
		struct policy_gpu_rule *r = &pp->rules[pp->nr_rules++];

		r->node = c->gpu_nodes[g].node;
		r->max_bytes = c->gpu_nodes[g].max_bytes;
		r->demotion_target = c->gpu_nodes[g].demotion_target;
		r->nr_allow = c->gpu_nodes[g].allow.n;
		for (int a = 0; a < r->nr_allow && a < POLICY_RULE_ALLOW; a++)
			snprintf(r->allow[a], POLICY_RULE_LEN, "%s",
				 c->gpu_nodes[g].allow.s[a]);
	}
}

static void rates_from_conf(struct mod_decide *m, const struct tierd_conf *c,
			    uint64_t now_ns)
{
	uint64_t rate = (uint64_t)c->promotion.max_rate_mb_per_s << 20;
	uint64_t burst = rate * c->interval_ms / 1000;

	bucket_init(&m->global_rate, rate, burst ? burst : rate, now_ns);
	for (int i = 0; i < c->nr_cgroups; i++) {
		rate = (uint64_t)c->cgroups[i].migrate_max_mb_per_s << 20;
		burst = rate * c->interval_ms / 1000;
		bucket_init(&m->cg_rate[i], rate, burst ? burst : rate, now_ns);
		m->cgs[i].fast_max_bytes = c->cgroups[i].fast_tier_max_bytes;
		m->cgs[i].rate = rate ? &m->cg_rate[i] : NULL;
	}
}

/* The patched kernel's batch bound (vm.migrate_batch_pages), 0 if none. */
static uint32_t kernel_batch_pages(const char *root)
{
	uint64_t v;

	if (fs_read_u64(root, "proc/sys/vm/migrate_batch_pages", &v) < 0)
		return 0;
	return v < (1u << 24) ? (uint32_t)v : 0;
}

static int batcher_from_conf(struct tierd *d, struct mod_decide *m,
			     struct batcher **ret)
{
	const struct tierd_conf *c = d->conf;
	struct batch_params bp;
	uint32_t kb = kernel_batch_pages(d->root);

	batch_params_default(&bp, kb);
	bp.batch_pages = c->promotion.batch_pages > kb ? c->promotion.batch_pages : kb;
	bp.page_size = PAGE_SZ;
	bp.tick_max_pages = m->max_pages;
	return batch_new(&bp, m->max_cand + MAX_RETRIES, ret);
}

static int mod_decide_start(struct tierd *d, void **ret_priv)
{
	struct mod_decide *m;
	int r;

	if (!pipe_get(d))
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*ret_priv = m;
	m->max_pages = cand_budget(d->conf);
	m->max_cand = m->max_pages < MAX_CAND_ENTRIES ? m->max_pages : MAX_CAND_ENTRIES;
	m->views = calloc(MAX_VIEWS, sizeof(*m->views));
	m->cand = calloc(m->max_cand, sizeof(*m->cand));
	m->intents = calloc(m->max_cand + MAX_RETRIES, sizeof(*m->intents));
	m->staged = calloc(QUERY_ENTRIES, sizeof(*m->staged));
	m->addrs = calloc(QUERY_PAGES, sizeof(*m->addrs));
	m->status = calloc(QUERY_PAGES, sizeof(*m->status));
	if (!m->views || !m->cand || !m->intents || !m->staged || !m->addrs || !m->status)
		return -ENOMEM;
	params_from_conf(d->conf, &m->pp);
	r = policy_new(&m->pp, m->max_cand, CONF_MAX_CGROUPS, &m->policy);
	if (r < 0)
		return r;
	r = batcher_from_conf(d, m, &m->batcher);
	if (r < 0)
		return r;
	rates_from_conf(m, d->conf, 0);
	if (d->pipe->fake && d->pipe->fake->mig_ops)
		mig_init(&m->query, d->pipe->fake->mig_ops, d->pipe->fake->mig_ctx, true);
	else
		mig_init(&m->query, &mig_real_ops, NULL, true);
	m->thp = malloc(sizeof(*m->thp));
	if (m->thp && (strcmp(d->root, "/") || thp_open(m->thp, "/proc") < 0)) {
		free(m->thp);
		m->thp = NULL;
	}
	m->procs_generation = (uint64_t)-1;
	return 0;
}

/* GPU rule of each tracked process, once per change of the process list. */
static void match_rules(struct mod_decide *m, struct pipeline *p)
{
	for (int i = 0; i < p->nr_procs; i++) {
		char cg[CONF_PATH_MAX] = "", comm[64] = "", path[64];

		p->procs[i].rule = -1;
		if (!m->pp.nr_rules)
			continue;
		cg_path_of_pid("/proc", p->procs[i].pid, cg, sizeof(cg));
		snprintf(path, sizeof(path), "proc/%d/comm", p->procs[i].pid);
		if (fs_read("/", path, comm, sizeof(comm), NULL) >= 0)
			comm[strcspn(comm, "\n")] = '\0';
		p->procs[i].rule = policy_rule_match(&m->pp, cg[0] ? cg : NULL,
						     comm[0] ? comm : NULL);
	}
	m->procs_generation = p->targets_generation;
}

/*
 * The staged entries' nodes into status[]: one move_pages node query for
 * each run of staged entries of one process (in the common case of one
 * workload, one call for up to QUERY_ENTRIES entries or QUERY_PAGES
 * pages; a query per entry was up to 32 Ki calls a tick for the BPF
 * source's 4 KiB entries).
 */
static void query_staged(struct mod_decide *m)
{
	size_t run = 0;

	for (size_t k = 1; k <= m->nr_staged; k++) {
		const struct staged *r = &m->staged[run], *last = &m->staged[k - 1];
		size_t count;

		if (k < m->nr_staged && m->staged[k].v.pid == r->v.pid)
			continue;
		/* staged[run, k): their pages follow each other in addrs[].  A
		 * call that fails (the process gone) leaves them unmapped. */
		count = last->first + last->count - r->first;
		if (mig_query(&m->query, r->v.pid, count, m->addrs + r->first,
			      m->status + r->first) < 0)
			for (size_t i = r->first; i < r->first + count; i++)
				m->status[i] = -ESRCH;
		run = k;
	}
}

/*
 * Can a 2 MiB candidate ever pass the rate limits of @proc?  Not when a
 * bucket holds less (a rate below 4 MiB/s at 500 ms ticks): its pages stay
 * candidates of their own then, as they fit a tick's refill.
 */
static bool range_fits_rates(const struct tierd *d, const struct mod_decide *m,
			     const struct pipe_proc *proc)
{
	const struct bucket *cg = proc->cgroup >= 0 ? m->cgs[proc->cgroup].rate : NULL;

	if (d->conf->promotion.max_rate_mb_per_s && m->global_rate.burst < HOT_HUGE_SIZE)
		return false;
	return !cg || cg->burst >= HOT_HUGE_SIZE;
}

/*
 * The staged entries' candidates, in the order they were staged, appended
 * to cand[] with their nodes (query_staged()).  Pages not mapped are left
 * out.  A range of base pages found all on one node is one candidate
 * (POLICY_F_PAGES) instead of 512, where the rates let 2 MiB through.
 * For the cold passes, an entry found wholly on the lowest tier adds
 * nothing: there is no tier to demote it to, and it would take the
 * reserve's slots from the cold pages that can go down (its range is
 * remembered as low, see known_low()).
 */
static void flush_staged(struct tierd *d, struct mod_decide *m, struct pipeline *p,
			 uint64_t now_ns)
{
	query_staged(m);
	for (size_t k = 0; k < m->nr_staged; k++) {
		const struct staged *s = &m->staged[k];
		const struct hot_entry_view *v = &s->v;
		const struct pipe_proc *proc = pipe_proc(p, v->pid);
		const struct pipe_range *rg = pipe_range_peek(p, v->pid, v->addr);
		uint64_t gpu_bytes = 0; /* on GPU nodes, for the placement rule */
		bool all_fast = true, all_low = true, one_node = true, whole;
		size_t added = 0, mapped = 0; /* candidates, pages found */
		int node = -1;
		uint32_t heat;

		heat = v->heat >= 4e9 ? 4000000000u : (uint32_t)(v->heat + 0.5);
		if (v->heat > 0 && !heat)
			heat = 1;
		for (size_t i = s->first; i < s->first + s->count; i++) {
			int idx = topo_node_index(&d->topo, m->status[i]);

			if (m->status[i] < 0 || idx < 0)
				continue; /* not populated, or not a memory node */
			if (d->topo.nodes[idx].tier != 0)
				all_fast = false;
			if (d->topo.nodes[idx].tier != d->topo.nr_tiers - 1)
				all_low = false;
			if (d->topo.nodes[idx].gpu)
				gpu_bytes += (uint64_t)s->nr_pages * PAGE_SZ;
			if (mapped++ && m->status[i] != node)
				one_node = false;
			node = m->status[i];
		}
		/* A range of base pages all on one node: one candidate. */
		whole = s->count == PAGES_PER_HUGE && mapped == s->count && one_node &&
			range_fits_rates(d, m, proc);
		for (size_t i = s->first; i < s->first + s->count; i++) {
			if (m->status[i] < 0 || topo_node_index(&d->topo, m->status[i]) < 0)
				continue;
			m->cand[m->n + added++] = (struct policy_page){
				.pid = v->pid,
				.addr = (uint64_t)(uintptr_t)m->addrs[i],
				.nr_pages = whole ? PAGES_PER_HUGE : s->nr_pages,
				.node = m->status[i],
				.heat = heat,
				.last_access_ns = v->last_ns,
				.cgroup = (int16_t)proc->cgroup,
				.flags = whole ? POLICY_F_PAGES : 0,
				.rule = proc->rule,
				.last_promote_ns = rg ? pipe_ns(rg->last_promote) : 0,
				.last_demote_ns = rg ? pipe_ns(rg->last_demote) : 0,
			};
			if (whole)
				break;
		}
		/* What the query saw, for the passes that skip ranges known fast
		 * or low; a range already remembered loses a mark it no longer
		 * earns.  Marks are per 2 MiB range: a 4 KiB entry says nothing
		 * of the rest. */
		if (mapped && v->len == HOT_HUGE_SIZE && (all_fast || all_low || rg)) {
			struct pipe_range *r = pipe_range(p, v->pid, v->addr);

			r->fast_seen = all_fast ? pipe_time(now_ns) : 0;
			r->low_seen = all_low ? pipe_time(now_ns) : 0;
		}
		if (s->cold && mapped && all_low)
			continue;
		if (proc->rule >= 0)
			m->rule_used[proc->rule] += gpu_bytes;
		m->n += added;
		m->slots += mapped;
	}
	m->nr_staged = 0;
	m->staged_pages = 0;
}

/*
 * Stage the pages of entry @v for the node query, as candidates once
 * flush_staged() has their nodes; the staged entries go first when the
 * query's arrays are full, or when the staged pages might not all fit
 * in cand[] (pages found unmapped, and cold entries found on the lowest
 * tier, give their slots back).  False, and cand_full set, when the entry
 * does not fit even then.
 */
static bool stage_entry(struct tierd *d, struct mod_decide *m, struct pipeline *p,
			const struct hot_entry_view *v, bool cold, uint64_t now_ns)
{
	uint32_t nr_pages = 1, count = 1;
	struct staged *s;

	if (!pipe_proc(p, v->pid))
		return true;
	if (v->len == HOT_HUGE_SIZE) {
		if (m->thp && thp_is_huge(m->thp, v->pid, v->addr) == 1)
			nr_pages = PAGES_PER_HUGE;
		else
			count = PAGES_PER_HUGE;
	}
	if (m->nr_staged == QUERY_ENTRIES || m->staged_pages + count > QUERY_PAGES ||
	    m->slots + m->staged_pages + count > m->max_cand)
		flush_staged(d, m, p, now_ns);
	if (m->slots + count > m->max_cand) {
		m->cand_full = true; /* gather() stops at the first refusal */
		return false;
	}
	s = &m->staged[m->nr_staged++];
	*s = (struct staged){ .v = *v, .first = m->staged_pages, .count = count,
			      .nr_pages = nr_pages, .cold = cold };
	for (uint32_t i = 0; i < count; i++)
		m->addrs[s->first + i] = (void *)(uintptr_t)(v->addr + i * PAGE_SZ);
	m->staged_pages += count;
	if (cold)
		m->cold_queried += count;
	return true;
}

/*
 * Are @limit candidate slots taken?  Staged pages count as taken until
 * their query, which may give some back: then they are queried first.
 */
static bool slots_taken(struct tierd *d, struct mod_decide *m, struct pipeline *p,
			size_t limit, uint64_t now_ns)
{
	if (m->slots + m->staged_pages < limit)
		return false;
	flush_staged(d, m, p, now_ns);
	return m->slots >= limit;
}

static bool seen_recently(uint32_t seen, uint64_t now_ns)
{
	return seen && now_ns - pipe_ns(seen) < FAST_RECHECK_NS;
}

static bool known_fast(const struct pipeline *p, const struct hot_entry_view *v,
		       uint64_t now_ns)
{
	const struct pipe_range *rg = pipe_range_peek(p, v->pid, v->addr);

	return rg && seen_recently(rg->fast_seen, now_ns);
}

/*
 * Nothing of the range to demote: it was seen wholly on the lowest tier
 * within FAST_RECHECK_NS.  A range promoted in part since then is still
 * taken as low until then, when the cold passes query it again; one tierd
 * promoted is held there by the policy's cool-down about as long.
 */
static bool known_low(const struct pipeline *p, const struct hot_entry_view *v,
		      uint64_t now_ns)
{
	const struct pipe_range *rg = pipe_range_peek(p, v->pid, v->addr);

	return rg && seen_recently(rg->low_seen, now_ns);
}

/*
 * A range known fast whose FAST_RECHECK_NS ran out: RECHECK_PAGES of its 512
 * base pages, evenly spaced, from an offset that moves on with every
 * recheck period (so every page is looked at within PAGES_PER_HUGE /
 * RECHECK_PAGES periods), instead of all of them.  True, and known fast
 * again, when every one is still on a fast-tier node; else the caller
 * queries the range whole.  At steady state in the lab this recheck was
 * tierd's largest cost: a query of every page of the hot set, and the
 * policy sorting them all, every 10 s, for nothing (perf: tierd at 2.2% of
 * a vCPU, node queries and the policy's sort about 45% of it).  With the
 * sample, the decide step's steady-state CPU went from 1.60-1.65% to 0.17%
 * of a vCPU (one boot, the two binaries alternated).  Not for THPs (one
 * query page anyway), processes with a placement rule (their GPU bytes are
 * counted from the queries), or ranges never seen fast.
 */
static bool still_fast(struct tierd *d, struct mod_decide *m, struct pipeline *p,
		       const struct hot_entry_view *v, uint64_t now_ns)
{
	const struct pipe_proc *proc = pipe_proc(p, v->pid);
	const struct pipe_range *rg = pipe_range_peek(p, v->pid, v->addr);
	uint64_t off = now_ns / FAST_RECHECK_NS % (PAGES_PER_HUGE / RECHECK_PAGES);
	void *addrs[RECHECK_PAGES];
	int status[RECHECK_PAGES];

	if (!rg || !rg->fast_seen || !proc || proc->rule >= 0 || v->len != HOT_HUGE_SIZE ||
	    (m->thp && thp_is_huge(m->thp, v->pid, v->addr) == 1))
		return false;
	for (size_t i = 0; i < RECHECK_PAGES; i++)
		addrs[i] = (void *)(uintptr_t)(v->addr +
			(off + i * (PAGES_PER_HUGE / RECHECK_PAGES)) * PAGE_SZ);
	if (mig_query(&m->query, v->pid, RECHECK_PAGES, addrs, status) < 0)
		return false;
	for (size_t i = 0; i < RECHECK_PAGES; i++)
		if (!topo_node_fast(&d->topo, status[i]))
			return false;
	pipe_range(p, v->pid, v->addr)->fast_seen = pipe_time(now_ns);
	return true;
}

/*
 * This tick's candidates into m->cand, hottest entries first; returns how
 * many.  When the policy may demote (@demote: policy_may_demote()), a
 * quarter of max_cand is kept for the coldest entries, as demotion takes
 * only pages that are candidates: with a hot set of more than max_cand
 * pages the hottest alone fill the cap, and the cold pages the policy
 * would demote were never looked at (300 entries of 2 MiB base pages:
 * the cap was full after 64).  Otherwise promotion gets the whole cap:
 * a reserve kept always cut each tick of a hot set of base pages to
 * 24 Ki pages (tierd -v in the lab).
 *
 * With fewer than MAX_VIEWS entries the views are the whole table, the
 * coldest at their tail: the reserve is taken from there first, then the
 * hottest from the head, leaving out what the reserve took.  With
 * MAX_VIEWS, the table may hold more: the hottest up to the reserve, then
 * a coldest pass (cold_walk()) over the entries colder than the last one
 * the head looked at (not the last view: with a table a little larger
 * than MAX_VIEWS, the cold entries were in the views, past where the head
 * stopped, and none was colder than the last view).  The cold passes do
 * not skip ranges known fast, they are what demotion wants, but skip
 * those known to be on the lowest tier: the coldest entries are often
 * ranges already there (demoted by an earlier tick, or placed there), and
 * would take the whole reserve every tick.  The tail's entries are every
 * entry of the table, the hot set too, so what it finds on the lowest
 * tier stays a candidate (the head skips what the tail took: one query a
 * range a tick).  The coldest pass is below everything the head looked
 * at, so an entry it finds on the lowest tier takes no slot
 * (flush_staged()), and its queries are bounded by COLD_QUERY_PAGES a
 * tick: 16 Ki base pages, what the reserve's slots queried before.  Until
 * the node queries were batched (stage_entry()) it also made at most 256
 * of them a tick, one per entry: for 4 KiB entries, 256 pages.
 */
static void cold_walk(struct tierd *d, struct mod_decide *m, struct pipeline *p,
		      double floor_heat, uint64_t now_ns);

static size_t gather(struct tierd *d, struct mod_decide *m, struct pipeline *p,
		     bool demote, uint64_t now_ns)
{
	size_t nv, reserve, i;
	bool tail;

	memset(m->rule_used, 0, sizeof(m->rule_used));
	m->cand_full = false;
	m->n = 0;
	m->slots = 0;
	m->cold_queried = 0;
	nv = hot_select_hottest(p->hot, 0, 0.0, now_ns, m->views, MAX_VIEWS);
	reserve = demote ? m->max_cand / 4 : 0;
	tail = reserve && nv < MAX_VIEWS;
	if (tail) {
		memset(m->cold_taken, 0, sizeof(m->cold_taken));
		for (size_t k = nv; k-- > 0 && !slots_taken(d, m, p, reserve, now_ns);) {
			if (known_low(p, &m->views[k], now_ns))
				continue;
			stage_entry(d, m, p, &m->views[k], false, now_ns);
			m->cold_taken[k / 64] |= 1ull << (k % 64);
		}
		reserve = 0;
	}
	for (i = 0; i < nv && !slots_taken(d, m, p, m->max_cand - reserve, now_ns) &&
		    !m->cand_full; i++) {
		if ((tail && (m->cold_taken[i / 64] & 1ull << (i % 64))) ||
		    known_fast(p, &m->views[i], now_ns) ||
		    still_fast(d, m, p, &m->views[i], now_ns))
			continue;
		stage_entry(d, m, p, &m->views[i], false, now_ns);
	}
	/* Stopped by the cap with entries left: the last one may have been
	 * refused (a range of 512 base pages with fewer slots left). */
	p->cand_capped = m->cand_full || i < nv;
	if (reserve)
		cold_walk(d, m, p, m->views[i - 1].heat, now_ns);
	flush_staged(d, m, p, now_ns);
	return m->n;
}

/*
 * The coldest pass over a table larger than MAX_VIEWS: the entries colder
 * than @floor_heat, coldest first, MAX_VIEWS at a time (at most
 * COLD_WINDOWS selections), from where the last tick's pass stopped
 * (m->cold_cursor) until the cap is full or the tick's COLD_QUERY_PAGES
 * are staged; once it reaches @floor_heat or the end of the table, the
 * next pass starts again from the coldest.  Without the cursor a table
 * whose MAX_VIEWS coldest entries all sat on the lowest tier (more than
 * 8 GiB of 2 MiB ranges) hid every colder-than-hot page behind them on
 * the fast tier: each tick looked at the same coldest entries only.  A
 * selection walks the whole table (12-19 ms for a million entries, see
 * the README), so a tick makes at most COLD_WINDOWS of them: one more than
 * before, and only while the policy may demote.
 */
static void cold_walk(struct tierd *d, struct mod_decide *m, struct pipeline *p,
		      double floor_heat, uint64_t now_ns)
{
	for (int w = 0; w < COLD_WINDOWS; w++) {
		size_t nv = hot_select_coldest_after(p->hot, 0, now_ns, &m->cold_cursor,
						     m->views, MAX_VIEWS);
		bool stopped = false;
		size_t i;

		for (i = 0; i < nv && m->views[i].heat < floor_heat; i++) {
			if (known_low(p, &m->views[i], now_ns))
				continue;
			stopped = m->cold_queried >= COLD_QUERY_PAGES ||
				  !stage_entry(d, m, p, &m->views[i], true, now_ns);
			if (stopped)	/* the tick's pages, or views[i] did not fit */
				break;
		}
		if (stopped) {	/* views[i] first next time */
			if (i > 0)
				hot_cursor_after(p->hot, &m->views[i - 1], &m->cold_cursor);
			return;
		}
		if (i < nv || nv < MAX_VIEWS) {	/* the floor or the end */
			memset(&m->cold_cursor, 0, sizeof(m->cold_cursor));
			return;
		}
		hot_cursor_after(p->hot, &m->views[nv - 1], &m->cold_cursor);
	}
}

static void cgroup_usage(struct tierd *d, struct mod_decide *m)
{
	for (int i = 0; i < d->conf->nr_cgroups; i++) {
		struct cg_numa_stat st;
		int r = cg_read_numa_stat(CGROUP_ROOT, d->conf->cgroups[i].path, &st);

		if (r < 0 && r != m->cg_error)
			log_warn("Failed to read %s%s/memory.numa_stat: %s (its fast-tier cap is not enforced)",
				 CGROUP_ROOT, d->conf->cgroups[i].path, strerror(-r));
		m->cg_error = r < 0 ? r : 0;
		m->cgs[i].fast_bytes = r < 0 ? 0 : cg_fast_bytes(&st, &d->topo);
		d->stats.cgroup[i].fast_tier_bytes = m->cgs[i].fast_bytes;
	}
}

/* How many of the first @n intents fit this tick's time budget. */
static size_t time_budget(struct tierd *d, struct mod_decide *m,
			  const struct pipeline *p, size_t n)
{
	uint64_t budget = (uint64_t)d->conf->promotion.batch_pages * PAGE_SZ;
	uint64_t bps = p->acct ? p->acct->last_bytes_per_s : 0;
	uint64_t sum = 0;
	size_t i;

	/* Nothing measured yet: plan it all, the migrate step stops starting
	 * batches when the budget's time has passed. */
	if (!bps)
		return n;
	if (bps * (MOVE_BUDGET_NS / NSEC_PER_SEC) > budget)
		budget = bps * (MOVE_BUDGET_NS / NSEC_PER_SEC);
	for (i = 0; i < n; i++) {
		sum += (uint64_t)m->intents[i].nr_pages * PAGE_SZ;
		if (sum > budget && i > 0)
			break;
	}
	return i;
}

static int mod_decide_tick(struct tierd *d, void *priv, uint64_t now_ns)
{
	struct mod_decide *m = priv;
	struct pipeline *p = d->pipe;
	struct policy_output out = { .intents = m->intents, .max_intents = m->max_cand };
	struct policy_input in = { .topo = &d->topo, .now_ns = now_ns };
	size_t n, n_wanted;
	int r;

	p->plan = NULL;
	p->backlog = false;
	p->cand_capped = false;
	if (!p->hot || d->topo.nr_tiers < 2)
		return 0;
	if (m->procs_generation != p->targets_generation)
		match_rules(m, p);
	if (m->thp)
		thp_reset(m->thp);
	cgroup_usage(d, m);
	in.cgroups = m->cgs;
	in.nr_cgroups = d->conf->nr_cgroups;
	n = gather(d, m, p, policy_may_demote(&m->pp, &in, (uint64_t)m->max_pages * PAGE_SZ),
		   now_ns);
	p->candidates_pages = m->slots;
	in.pages = m->cand;
	in.nr_pages = n;
	in.rule_used_bytes = m->rule_used;
	in.global_rate = d->conf->promotion.max_rate_mb_per_s ? &m->global_rate : NULL;
	in.blocked_nodes = p->acct ? account_blocked_mask(p->acct, &d->topo, now_ns) : 0;
	r = policy_run(m->policy, &in, &out);
	if (r < 0)
		return r;
	n_wanted = out.nr_intents;
	out.nr_intents = time_budget(d, m, p, out.nr_intents);
	p->backlog = out.nr_intents < n_wanted;
	if (p->acct)
		out.nr_intents += account_take_retries(p->acct, now_ns,
						       m->intents + out.nr_intents,
						       MAX_RETRIES);
	p->policy_stats = out.stats;
	d->stats.decision = out.stats;
	d->stats.decision_candidate_pages = m->slots;
	if (!out.nr_intents)
		return 0;
	r = batch_build(m->batcher, m->intents, out.nr_intents, &p->plan);
	if (r < 0) {
		p->plan = NULL;
		return r;
	}
	/* -v only: what a tick decided, to see where the time goes. */
	log_debug("decide at %.3f s: %zu candidates (%zu pages queried or THPs), hot threshold %u, %zu intents, %llu pages in %zu batches",
		  (double)(now_ns - d->start_ns) / NSEC_PER_SEC, n, m->slots,
		  out.stats.hot_threshold, out.nr_intents, (unsigned long long)p->plan->pages,
		  p->plan->nr_batches);
	p->intents = m->intents;
	return 0;
}

static int mod_decide_reload_check(struct tierd *d, void *priv,
				   const struct tierd_conf *next, char *why,
				   size_t why_size)
{
	struct policy_params pp;
	struct policy *test;
	int r;

	params_from_conf(next, &pp);
	r = policy_new(&pp, 1, 1, &test);
	if (r < 0) {
		snprintf(why, why_size, "the policy does not accept this config: %s",
			 strerror(-r));
		return r;
	}
	policy_free(test);
	return 0;
}

static void mod_decide_reload_apply(struct tierd *d, void *priv)
{
	struct mod_decide *m = priv;
	struct policy_params pp;
	struct policy *pol;
	struct batcher *b;
	size_t max_cand = m->max_cand;

	/* Arrays stay as sized at start; the new policy and batcher must
	 * fit them, else the old ones stay (reload_apply may not fail). */
	params_from_conf(d->conf, &pp);
	if (policy_new(&pp, max_cand, CONF_MAX_CGROUPS, &pol) == 0) {
		policy_free(m->policy);
		m->policy = pol;
		m->pp = pp;
	} else {
		log_warn("Out of memory: the previous promotion policy stays");
	}
	if (batcher_from_conf(d, m, &b) == 0) {
		batch_free(m->batcher);
		m->batcher = b;
	}
	rates_from_conf(m, d->conf, d->last_tick_ns);
	m->procs_generation = (uint64_t)-1;
}

static void mod_decide_stop(struct tierd *d, void *priv)
{
	struct mod_decide *m = priv;

	if (!m)
		return;
	if (d->pipe)
		d->pipe->plan = NULL;
	policy_free(m->policy);
	batch_free(m->batcher);
	if (m->thp)
		thp_close(m->thp);
	free(m->thp);
	free(m->views);
	free(m->cand);
	free(m->intents);
	free(m->staged);
	free(m->addrs);
	free(m->status);
	free(m);
}

const struct tierd_module decide_module = {
	.name = "decide",
	.start = mod_decide_start,
	.reload_check = mod_decide_reload_check,
	.reload_apply = mod_decide_reload_apply,
	.tick = mod_decide_tick,
	.stop = mod_decide_stop,
};
