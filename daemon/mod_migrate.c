// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipeline step 3, migrate: the decide step's plan through move_pages(2)
 * (sys/migrate: MPOL_MF_PROMOTE for promotions where the kernel has it),
 * every page's status into core/account, and what landed where into
 * d->stats, which status, tierctl and the metrics read.  Ranges that
 * reached their target get their move time remembered for the policy's
 * cool-down and ping-pong checks.
 *
 * Dry run (config or tierctl): each batch is a node query; the account
 * counts what would have moved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "daemon.h"
#include "log.h"
#include "migrate.h"
#include "pipeline.h"

#define MAX_RETRY_QUEUE 4096

struct mod_migrate {
	struct migrator mig;
	struct account *acct;
	struct mig_run_result last;
	uint64_t calls_total, failed_calls_total;
};

static int mod_migrate_start(struct tierd *d, void **ret_priv)
{
	struct pipeline *p = pipe_get(d);
	struct acct_params ap;
	struct mod_migrate *m;
	int r;

	if (!p)
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*ret_priv = m;
	acct_params_default(&ap);
	r = account_new(&ap, CONF_MAX_CGROUPS, MAX_RETRY_QUEUE, &m->acct);
	if (r < 0)
		return r;
	p->acct = m->acct;
	if (p->fake && p->fake->mig_ops)
		r = mig_init(&m->mig, p->fake->mig_ops, p->fake->mig_ctx, d->dry_run);
	else
		r = mig_init(&m->mig, &mig_real_ops, NULL, d->dry_run);
	if (r < 0 && r != -EPERM)
		log_warn("Probing move_pages(2) for MPOL_MF_PROMOTE failed: %s",
			 strerror(-r));
	p->has_promote = m->mig.has_promote;
	log_info("Promotions use %s",
		 m->mig.has_promote ?
			 "move_pages(2) with MPOL_MF_PROMOTE (the kernel's batch promotion path)" :
			 "plain move_pages(2): this kernel has no MPOL_MF_PROMOTE");
	return 0;
}

/*
 * Remember when each range that reached its target moved.  A 2 MiB range
 * whose 512 base pages (or THP) all reached a fast-tier node in this tick
 * (not a GPU node: placement rules count their bytes there every tick)
 * is known fast from now, as if decide had queried it: otherwise the next
 * tick's candidates would be these same ranges, queried only to be found
 * on the fast tier, and a hot set larger than one tick's candidates would
 * take an extra tick per tick of moves.  Likewise a range demoted whole
 * to a lowest-tier node is known low (the cold passes skip it rather than
 * query it next tick, see known_low() in mod_decide.c), and one with a
 * page promoted is no longer.  A range with a page that did not move is
 * queried again as before.
 */
static void remember_moves(const struct tierd *d, struct pipeline *p,
			   const struct batch_plan *pl,
			   const struct policy_intent *intents, uint64_t now_ns)
{
	uint64_t run_base = 0;
	uint32_t run_pages = 0;
	pid_t run_pid = 0;
	int run_node = -1;

	for (size_t i = 0; i < pl->nr_entries; i++) {
		const struct policy_intent one = batch_entry_intent(pl, i, intents), *it = &one;
		uint64_t base = it->addr & ~(uint64_t)(HOT_HUGE_SIZE - 1);
		int idx = topo_node_index(&d->topo, it->to_node);
		struct pipe_range *rg;
		bool whole;

		if (pl->status[i] != it->to_node)
			continue;
		rg = pipe_range(p, it->pid, it->addr);
		if (it->pid != run_pid || base != run_base || it->to_node != run_node) {
			run_pid = it->pid;
			run_base = base;
			run_node = it->to_node;
			run_pages = 0;
		}
		run_pages += it->nr_pages;
		whole = run_pages == HOT_HUGE_SIZE / HOT_PAGE_SIZE;
		if (it->kind != POLICY_PROMOTE) {
			rg->last_demote = pipe_time(now_ns);
			rg->fast_seen = 0;
			if (whole && idx >= 0 && d->topo.nodes[idx].tier == d->topo.nr_tiers - 1)
				rg->low_seen = pipe_time(now_ns);
			continue;
		}
		rg->last_promote = pipe_time(now_ns);
		rg->low_seen = 0;
		if (whole && topo_node_fast(&d->topo, it->to_node))
			rg->fast_seen = pipe_time(now_ns);
	}
}

static void add_stats(struct tierd *d, const struct account *a,
		      const struct account *before)
{
	static const int errc_of[ACCT_NR] = {
		[ACCT_MOVED] = -1, [ACCT_ELSEWHERE] = -1,
		[ACCT_BUSY] = ERRC_BUSY, [ACCT_GONE] = ERRC_GONE,
		[ACCT_NOMEM] = ERRC_NOMEM, [ACCT_DENIED] = ERRC_DENIED,
		[ACCT_OTHER] = ERRC_OTHER,
	};
	struct tierd_stats *s = &d->stats;

	for (int t = 0; t < TOPO_MAX_TIERS; t++) {
		s->tier[t].promoted_bytes_total +=
			a->tier_in[t][POLICY_PROMOTE].bytes -
			before->tier_in[t][POLICY_PROMOTE].bytes;
		s->tier[t].demoted_bytes_total +=
			a->tier_in[t][POLICY_DEMOTE].bytes -
			before->tier_in[t][POLICY_DEMOTE].bytes;
	}
	for (int i = 0; i < d->topo.nr_nodes; i++) {
		int id = d->topo.nodes[i].id;

		if (id < 0 || id >= TOPO_MAX_NODES)
			continue;
		s->node[i].promoted_bytes_total +=
			a->node_in[id][POLICY_PROMOTE].bytes -
			before->node_in[id][POLICY_PROMOTE].bytes;
		s->node[i].demoted_bytes_total +=
			a->node_in[id][POLICY_DEMOTE].bytes -
			before->node_in[id][POLICY_DEMOTE].bytes;
	}
	for (int c = 0; c < d->conf->nr_cgroups; c++) {
		s->cgroup[c].promoted_bytes_total = a->cgroup_moved[2 * c + POLICY_PROMOTE].bytes;
		s->cgroup[c].demoted_bytes_total = a->cgroup_moved[2 * c + POLICY_DEMOTE].bytes;
	}
	for (int k = 0; k < ACCT_NR; k++)
		if (errc_of[k] >= 0)
			s->migrate_errors_total[errc_of[k]] +=
				a->class_pages[k] - before->class_pages[k];
}

/*
 * The policy held candidates back for a rate limit this tick: the next tick
 * at once would find the bucket nearly empty, move the little it refilled,
 * and gather and sort all over again, tick after tick.
 */
static bool rate_held(const struct pipeline *p)
{
	return p->policy_stats.held[POLICY_H_GLOBAL_RATE] ||
	       p->policy_stats.held[POLICY_H_CGROUP_RATE];
}

static int mod_migrate_tick(struct tierd *d, void *priv, uint64_t now_ns)
{
	struct mod_migrate *m = priv;
	struct pipeline *p = d->pipe;
	static struct account before; /* a snapshot of the totals, not the queue */
	struct mig_run_result run;
	int r;

	if (!p->plan || !p->plan->nr_batches)
		return 0;
	m->mig.dry_run = d->dry_run;
	m->mig.budget_ns = PIPE_MOVE_BUDGET_NS;
	/* The floor the policy planned to (mig_run_plan() checks it again
	 * before each batch). */
	for (int i = 0; i < d->topo.nr_nodes; i++) {
		int id = d->topo.nodes[i].id;
		int64_t lo, hi;

		if (id < 0 || id >= TOPO_MAX_NODES)
			continue;
		policy_node_targets(&d->topo, i, &lo, &hi);
		m->mig.floor_bytes[id] = hi > 0 ? (uint64_t)hi : 0;
	}
	before = *m->acct;
	r = mig_run_plan(&m->mig, m->acct, &d->topo, p->plan, p->intents, now_ns, &run);
	if (r < 0)
		return r;
	m->last = run;
	if (run.skipped_batches || (p->cand_capped && run.moved_bytes && !rate_held(p)))
		p->backlog = true;
	/* -v only: what a tick moved, to see where the time goes. */
	log_debug("migrate at %.3f s: %zu calls, %.1f MiB moved in %.3f s of move_pages (calls of %.3f-%.3f s, %.3f s from the first's start to the last's end), %zu batches left for later, %zu for want of room",
		  (double)(now_ns - d->start_ns) / 1e9, run.calls, run.moved_bytes / 1048576.0,
		  run.elapsed_ns / 1e9, run.min_call_ns / 1e9, run.max_call_ns / 1e9,
		  run.span_ns / 1e9, run.skipped_batches, run.room_skipped_batches);
	m->calls_total += run.calls;
	m->failed_calls_total += run.failed_calls;
	d->stats.move_pages_calls_total += run.calls;
	add_stats(d, m->acct, &before);
	if (!d->dry_run) {
		remember_moves(d, p, p->plan, p->intents, now_ns);
		p->moved_bytes_total += run.moved_bytes;
		p->move_ns_total += run.elapsed_ns;
		/* The copy-thread controller's throughput input (threads.c). */
		d->stats.migrate_bytes_total += run.moved_bytes;
		d->stats.migrate_ns_total += run.elapsed_ns;
	}
	return run.first_error && run.failed_calls == run.calls ? run.first_error : 0;
}

static void mod_migrate_stop(struct tierd *d, void *priv)
{
	struct mod_migrate *m = priv;

	if (!m)
		return;
	if (d->pipe)
		d->pipe->acct = NULL;
	account_free(m->acct);
	free(m);
}

const struct tierd_module migrate_module = {
	.name = "migrate",
	.start = mod_migrate_start,
	.tick = mod_migrate_tick,
	.stop = mod_migrate_stop,
};
