// SPDX-License-Identifier: GPL-2.0-only
/*
 * Steps 5 and 6, migrate and account: the plan through move_pages(2)
 * (sys/migrate: MPOL_MF_PROMOTE for promotions where the kernel has it),
 * then every page's status into core/account, and what landed where into
 * the daemon's counters, which status, tierctl and the metrics read.
 * Ranges that reached their target get their move time remembered for the
 * policy's cool-down and ping-pong checks, and pages the kernel refused to
 * move are remembered so that they are not proposed again every tick
 * (cand_denied_mark()).
 *
 * Dry run (config or tierctl): each batch is a node query; the account
 * counts what would have moved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "manager.h"
#include "migrate.h"
#include "stages.h"

#define MAX_RETRY_QUEUE 4096

/* At most one line a minute about refused pages. */
#define DENIED_LOG_NS (60 * 1000000000ull)

struct move_stage {
	struct page_geom geom; /* the kernel's */
	struct migrator mig;
	struct account *acct;
	uint64_t denied_logged_ns; /* when the last line about refused pages was */
	uint64_t denied_unlogged; /* pages refused since */
};

int move_new(const struct tierd *d, const struct manager_ops *ops, struct move_stage **ret)
{
	struct move_stage *m = calloc(1, sizeof(*m));
	struct acct_params ap;
	int r;

	*ret = NULL;
	if (!m)
		return -ENOMEM;
	m->geom = d->geom;
	acct_params_default(&ap, &d->geom);
	r = account_new(&ap, CONF_MAX_CGROUPS, MAX_RETRY_QUEUE, &m->acct);
	if (r < 0) {
		free(m);
		return r;
	}
	if (ops && ops->mig_ops)
		r = mig_init(&m->mig, ops->mig_ops, ops->mig_ctx, d->dry_run, d->geom.base);
	else
		r = mig_init(&m->mig, &mig_real_ops, (void *)d->root, d->dry_run, d->geom.base);
	if (r == -ENOMEM) {
		move_free(m);
		return r;
	}
	if (r < 0 && r != -EPERM)
		log_warn("Probing move_pages(2) for MPOL_MF_PROMOTE failed: %s",
			 strerror(-r));
	log_info("Promotions use %s",
		 m->mig.has_promote ?
			 "move_pages(2) with MPOL_MF_PROMOTE (the kernel's batch promotion path)" :
			 "plain move_pages(2): this kernel has no MPOL_MF_PROMOTE");
	if (m->mig.has_move_all)
		log_info("Shared pages move too (MPOL_MF_MOVE_ALL)");
	else
		log_warn("Pages that several processes map stay where they are: MPOL_MF_MOVE_ALL needs CAP_SYS_NICE");
	*ret = m;
	return 0;
}

void move_free(struct move_stage *m)
{
	if (!m)
		return;
	account_free(m->acct);
	mig_fini(&m->mig);
	free(m);
}

bool move_has_promote(const struct move_stage *m)
{
	return m->mig.has_promote;
}

struct account *move_account(struct move_stage *m)
{
	return m->acct;
}

/*
 * Remember when each range that reached its target moved.  A range
 * whose base pages (or THP) all reached a fast-tier node in this tick
 * (not a GPU node: placement rules count their bytes there every tick)
 * is known fast from now, as if gather had queried it: otherwise the next
 * tick's candidates would be these same ranges, queried only to be found
 * on the fast tier, and a hot set larger than one tick's candidates would
 * take an extra tick per tick of moves.  Likewise a range demoted whole
 * to a lowest-tier node is known low (the cold passes skip it rather than
 * query it next tick, see known_low() in gather.c), and one with a
 * page promoted is no longer.  A range with a page that did not move is
 * queried again.
 */
static void remember_moves(const struct topology *topo, struct cand_ranges *ranges,
			   const struct batch_plan *pl, const struct policy_intent *intents,
			   uint64_t now_ns)
{
	uint64_t run_base = 0;
	uint32_t run_pages = 0;
	pid_t run_pid = 0;
	int run_node = -1;

	for (size_t i = 0; i < pl->nr_entries; i++) {
		const struct policy_intent one = batch_entry_intent(pl, i, intents), *it = &one;
		uint64_t base = page_geom_range_base(&ranges->geom, it->addr);
		int idx = topo_node_index(topo, it->to_node);
		struct cand_range *rg;
		bool whole;

		/* A shared page moved through another process is where it
		 * was asked to go for this one as well. */
		if (pl->status[i] != it->to_node && pl->status[i] != ACCT_STATUS_SHARED)
			continue;
		rg = cand_range(ranges, it->pid, it->addr);
		if (it->pid != run_pid || base != run_base || it->to_node != run_node) {
			run_pid = it->pid;
			run_base = base;
			run_node = it->to_node;
			run_pages = 0;
		}
		run_pages += it->nr_pages;
		whole = run_pages == page_geom_range_pages(&ranges->geom);
		if (it->kind != POLICY_PROMOTE) {
			rg->last_demote = cand_time(now_ns);
			rg->fast_seen = 0;
			if (whole && idx >= 0 && topo->nodes[idx].tier == topo->nr_tiers - 1)
				rg->low_seen = cand_time(now_ns);
			continue;
		}
		rg->last_promote = cand_time(now_ns);
		rg->low_seen = 0;
		if (whole && topo_node_fast(topo, it->to_node))
			rg->fast_seen = cand_time(now_ns);
	}
}

/*
 * The addresses of the calls move_step() made (dry-run node queries too,
 * as tierd_move_pages_calls_total counts them), and of them the PMD THPs
 * passed as one address: a candidate of a range's pages that is one folio, not
 * a range listed page by page (POLICY_F_PAGES).
 */
static void count_addresses(struct tierd_stats *s, const struct page_geom *g,
			    const struct batch_plan *pl, const struct policy_intent *intents,
			    const struct acct_call *calls)
{
	for (size_t k = 0; k < pl->nr_batches; k++) {
		const struct batch *b = &pl->batches[k];

		if (calls[k].state == ACCT_CALL_SKIPPED)
			continue;
		s->move_pages_addresses_total += b->count;
		for (size_t e = b->first; e < b->first + b->count; e++) {
			const struct policy_intent *it = &intents[pl->intent[e]];

			if (!(it->flags & POLICY_F_PAGES) &&
			    it->nr_pages == page_geom_range_pages(g))
				s->move_pages_thps_total++;
		}
	}
}

/*
 * Remember the pages the kernel refused to move (ACCT_DENIED), from the
 * node they were on, so that candidate selection leaves them out until
 * something changes (candidates.h).  Returns how many base pages.
 */
static uint64_t remember_denials(struct cand_ranges *ranges, const struct batch_plan *pl,
				 const struct policy_intent *intents, const struct acct_call *calls,
				 uint64_t now_ns)
{
	uint64_t pages = 0;

	for (size_t k = 0; k < pl->nr_batches; k++) {
		const struct batch *b = &pl->batches[k];

		if (calls[k].state == ACCT_CALL_SKIPPED ||
		    (calls[k].state == ACCT_CALL_FAILED &&
		     acct_classify(calls[k].err, b->node) != ACCT_DENIED))
			continue;
		for (size_t e = b->first; e < b->first + b->count; e++) {
			const struct policy_intent it = batch_entry_intent(pl, e, intents);
			int err = calls[k].state == ACCT_CALL_FAILED ? calls[k].err : pl->status[e];

			if (acct_classify(err, it.to_node) != ACCT_DENIED)
				continue;
			cand_denied_mark(ranges, it.pid, it.addr, it.nr_pages, it.from_node, err,
					 now_ns);
			pages += it.nr_pages;
		}
	}
	return pages;
}

/* One line a minute at most: who was refused last, and how many pages. */
static void log_denials(struct move_stage *m, uint64_t pages, uint64_t now_ns)
{
	const struct account *a = m->acct;

	m->denied_unlogged += pages;
	if (!m->denied_unlogged ||
	    (m->denied_logged_ns && now_ns - m->denied_logged_ns < DENIED_LOG_NS))
		return;
	log_notice("The kernel refused to move %llu pages, the last of pid %d (%s); they are not proposed again until they move or their retry time passes",
		   (unsigned long long)m->denied_unlogged, a->denied_pid,
		   strerror(a->denied_errno));
	m->denied_logged_ns = now_ns;
	m->denied_unlogged = 0;
}

static void add_stats(struct tierd_stats *s, const struct tierd_conf *c,
		      const struct topology *topo, const struct account *a,
		      const struct account *before)
{
	static const int errc_of[ACCT_NR] = {
		[ACCT_MOVED] = -1, [ACCT_ELSEWHERE] = -1,
		[ACCT_BUSY] = ERRC_BUSY, [ACCT_GONE] = ERRC_GONE,
		[ACCT_NOMEM] = ERRC_NOMEM, [ACCT_DENIED] = ERRC_DENIED,
		[ACCT_OTHER] = ERRC_OTHER, [ACCT_SHARED] = -1,
	};
	for (int t = 0; t < TOPO_MAX_TIERS; t++) {
		s->tier[t].promoted_bytes_total +=
			a->tier_in[t][POLICY_PROMOTE].bytes -
			before->tier_in[t][POLICY_PROMOTE].bytes;
		s->tier[t].demoted_bytes_total +=
			a->tier_in[t][POLICY_DEMOTE].bytes -
			before->tier_in[t][POLICY_DEMOTE].bytes;
	}
	for (int i = 0; i < topo->nr_nodes; i++) {
		int id = topo->nodes[i].id;

		if (id < 0 || id >= TOPO_MAX_NODES)
			continue;
		s->node[i].promoted_bytes_total +=
			a->node_in[id][POLICY_PROMOTE].bytes -
			before->node_in[id][POLICY_PROMOTE].bytes;
		s->node[i].demoted_bytes_total +=
			a->node_in[id][POLICY_DEMOTE].bytes -
			before->node_in[id][POLICY_DEMOTE].bytes;
	}
	for (int i = 0; i < c->nr_cgroups; i++) {
		s->cgroup[i].promoted_bytes_total = a->cgroup_moved[2 * i + POLICY_PROMOTE].bytes;
		s->cgroup[i].demoted_bytes_total = a->cgroup_moved[2 * i + POLICY_DEMOTE].bytes;
	}
	for (int k = 0; k < ACCT_NR; k++)
		if (errc_of[k] >= 0)
			s->migrate_errors_total[errc_of[k]] +=
				a->class_pages[k] - before->class_pages[k];
}

int move_step(struct move_stage *m, const struct move_in *in, uint64_t now_ns,
	      struct acct_call *calls, struct mig_run_result *ret)
{
	const struct topology *topo = in->topo;

	m->mig.dry_run = in->dry_run;
	m->mig.budget_ns = STAGE_MOVE_BUDGET_NS;
	/* The floor the policy planned to (mig_run_plan() checks it again
	 * before each batch). */
	for (int i = 0; i < topo->nr_nodes; i++) {
		int id = topo->nodes[i].id;
		int64_t lo, hi;

		if (id < 0 || id >= TOPO_MAX_NODES)
			continue;
		policy_node_targets(topo, i, &lo, &hi);
		m->mig.floor_bytes[id] = hi > 0 ? (uint64_t)hi : 0;
	}
	return mig_run_plan(&m->mig, in->plan, account_nomem_nodes(m->acct, now_ns), calls, ret);
}

void account_step(struct move_stage *m, const struct account_in *in, struct cand_ranges *ranges,
		  struct tierd_stats *st, uint64_t now_ns)
{
	static struct account before; /* a snapshot of the totals, not the queue */
	struct mig_run_result *run = in->run;
	struct acct_result sum;

	before = *m->acct;
	account_plan(m->acct, in->topo, in->plan, in->intents, in->calls, now_ns, in->dry_run,
		     &sum);
	run->moved_bytes = sum.moved_bytes;
	run->would_pages = sum.would_pages;
	st->move_pages_calls_total += run->calls;
	count_addresses(st, &m->geom, in->plan, in->intents, in->calls);
	add_stats(st, in->conf, in->topo, m->acct, &before);
	if (in->dry_run)
		return;
	remember_moves(in->topo, ranges, in->plan, in->intents, now_ns);
	log_denials(m, remember_denials(ranges, in->plan, in->intents, in->calls, now_ns), now_ns);
	/* The copy-thread controller's throughput input (threads.c). */
	st->migrate_bytes_total += run->moved_bytes;
	st->migrate_ns_total += run->elapsed_ns;
}
