// SPDX-License-Identifier: GPL-2.0-only
/*
 * Steps 3 and 4, decide and batch: the gather step's candidates through
 * core/policy into intents, at most this tick's bytes (tick_bytes()),
 * then through core/batch into the plan the migrate step carries out.  The
 * rate buckets live here, so they survive a reload (policy.h).
 *
 * Time budget: a tick moves at most what the last measured move_pages
 * throughput carries in STAGE_MOVE_BUDGET_NS (at least one batch; before
 * the first measurement, everything the policy chose, and the migrate step
 * starts no batch once STAGE_MOVE_BUDGET_NS has passed), so a tick stays
 * short however slow the copies are -- on a 10 GB/s machine the configured
 * rate limits bind long before, in the TCG lab (~0.05-0.2 GB/s) it is
 * about 100 MiB -- and the control socket and the watchdog are never
 * starved.  The rest of the intents come back on later ticks (the heat is
 * still there).  The budget is seconds, not one interval: a tick's fixed
 * cost in the lab (DAMON drain, node queries) is about a second, and a
 * budget of one 500 ms interval triples the time to promote a 256 MiB hot
 * set there.
 *
 * Sizes are fixed at start from the config and the kernel's pages: base
 * pages per tick from the promotion rate and interval (twice a tick's
 * worth of moves, within [MIN_CAND, MAX_CAND] and at least two
 * ranges' pages), and candidates per tick at most MAX_CAND_ENTRIES.  The
 * bounds count pages, as the arrays do: with 64 KiB pages the same arrays
 * carry 16 times the bytes.
 * The arrays a tick fills take about 117 bytes per candidate (the
 * candidate, 56; its intent, 32; the policy's and the batcher's order and
 * the batch plan's address, node, status and intent, 29): for 4 KiB pages,
 * which are one candidate each, 128 Ki candidates would be 16 MiB, most of
 * tierd's RSS next to a table of a million pages (20 MiB).
 * MAX_CAND_ENTRIES = 32 Ki keeps them to 4 MiB; a tick then plans up to
 * 128 MiB of base pages (a THP is one candidate for 512 pages, so
 * THP-backed memory still gets the whole page budget), and a larger hot
 * set of base pages takes more ticks, which follow at once while they move
 * something (manager.h: backlog).  A range of base pages on one node
 * is one candidate and one intent, and its pages' entries of the plan only
 * (512 in 2 MiB of 4 KiB pages, 32 of 64 KiB ones).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "gpu_usage.h"
#include "log.h"
#include "stages.h"

#define NSEC_PER_SEC 1000000000ull
#define MIN_CAND (16u << 10) /* base pages a tick: 64 MiB of 4 KiB, 1 GiB of 64 KiB */
#define MAX_CAND (128u << 10) /* 512 MiB of 4 KiB, 8 GiB of 64 KiB */
#define MIN_CAND_RANGES 2 /* and at least two ranges' pages */
#define MAX_CAND_ENTRIES (32u << 10) /* candidates a tick: 4 MiB of arrays */

struct decide_stage {
	struct page_geom geom;
	struct policy_params pp;
	struct policy *policy;
	struct batcher *batcher;
	size_t max_pages; /* base pages a tick */
	size_t max_cand; /* candidates a tick */
	struct bucket global_rate;
	struct bucket cg_rate[CONF_MAX_CGROUPS];
	struct policy_cgroup cgs[CONF_MAX_CGROUPS];
};

size_t decide_max_pages(const struct tierd_conf *c, const struct page_geom *g)
{
	uint64_t bytes = (uint64_t)c->promotion.max_rate_mb_per_s << 20;
	uint64_t pages, min = MIN_CAND;

	/* A range of base pages is staged whole: room for two of them. */
	if (min < MIN_CAND_RANGES * page_geom_range_pages(g))
		min = MIN_CAND_RANGES * page_geom_range_pages(g);
	bytes = bytes * c->interval_ms / 1000;
	pages = 2 * (bytes >> g->shift);
	if (!c->promotion.max_rate_mb_per_s || pages > MAX_CAND)
		pages = MAX_CAND;
	return pages < min ? min : pages;
}

size_t decide_max_cand(const struct tierd_conf *c, const struct page_geom *g)
{
	size_t pages = decide_max_pages(c, g);

	return pages < MAX_CAND_ENTRIES ? pages : MAX_CAND_ENTRIES;
}

uint64_t decide_burst_bytes(uint32_t mb_per_s, uint32_t interval_ms, const struct page_geom *g)
{
	uint64_t rate = (uint64_t)mb_per_s << 20;
	uint64_t burst = rate * interval_ms / 1000;

	if (!burst)
		burst = rate;
	/* A THP moves whole: a bucket smaller than one would hold it back
	 * for good (a 2 MiB THP at 2 MB/s and 500 ms ticks); a bucket of one
	 * lets it go once the rate has paid for it. */
	if (rate && page_geom_range_thp(g) && burst < g->range)
		burst = g->range;
	return burst;
}

/* tierd.yaml -> policy params: promotion, demotion, gpu_nodes. */
void decide_params(const struct tierd_conf *c, const struct page_geom *geom,
		   struct policy_params *pp)
{
	policy_params_default(pp, geom);
	pp->hot_threshold = c->promotion.hot_threshold;
	pp->fill = c->promotion.fill;
	pp->demote = c->demotion.enabled;
	pp->demote_for_room = c->demotion.enabled;
	pp->cold_age_ns = (uint64_t)c->demotion.cold_age_s * NSEC_PER_SEC;
	/* A full node opens again when one batch fits: one full-sized call,
	 * not a page-sized one every tick as reclaim frees memory. */
	pp->min_room_bytes = (uint64_t)c->promotion.batch_pages << geom->shift;
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

static void rates_from_conf(struct decide_stage *m, const struct tierd_conf *c, uint64_t now_ns)
{
	uint64_t rate = (uint64_t)c->promotion.max_rate_mb_per_s << 20;

	bucket_init(&m->global_rate, rate,
		    decide_burst_bytes(c->promotion.max_rate_mb_per_s, c->interval_ms, &m->geom),
		    now_ns);
	for (int i = 0; i < c->nr_cgroups; i++) {
		rate = (uint64_t)c->cgroups[i].migrate_max_mb_per_s << 20;
		bucket_init(&m->cg_rate[i], rate,
			    decide_burst_bytes(c->cgroups[i].migrate_max_mb_per_s, c->interval_ms,
					       &m->geom),
			    now_ns);
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

static int batcher_from_conf(const struct tierd *d, const struct decide_stage *m,
			     struct batcher **ret)
{
	const struct tierd_conf *c = d->conf;
	struct batch_params bp;
	uint32_t kb = kernel_batch_pages(d->root);

	batch_params_default(&bp, kb, &m->geom);
	bp.batch_pages = c->promotion.batch_pages > kb ? c->promotion.batch_pages : kb;
	bp.tick_max_pages = m->max_pages;
	return batch_new(&bp, m->max_cand + DECIDE_MAX_RETRIES, ret);
}

int decide_new(const struct tierd *d, size_t max_cand, struct decide_stage **ret)
{
	struct decide_stage *m = calloc(1, sizeof(*m));
	int r;

	*ret = NULL;
	if (!m)
		return -ENOMEM;
	m->geom = d->geom;
	m->max_pages = decide_max_pages(d->conf, &d->geom);
	m->max_cand = max_cand;
	decide_params(d->conf, &d->geom, &m->pp);
	r = policy_new(&m->pp, m->max_cand, CONF_MAX_CGROUPS, &m->policy);
	if (r == 0)
		r = batcher_from_conf(d, m, &m->batcher);
	if (r < 0) {
		decide_free(m);
		return r;
	}
	rates_from_conf(m, d->conf, 0);
	*ret = m;
	return 0;
}

void decide_free(struct decide_stage *m)
{
	if (!m)
		return;
	policy_free(m->policy);
	batch_free(m->batcher);
	free(m);
}

int decide_reload_check(const struct tierd_conf *next, const struct page_geom *g, char *why,
			size_t why_size)
{
	struct policy_params pp;
	struct policy *test;
	int r;

	decide_params(next, g, &pp);
	r = policy_new(&pp, 1, 1, &test);
	if (r < 0) {
		snprintf(why, why_size, "the policy does not accept this config: %s",
			 strerror(-r));
		return r;
	}
	policy_free(test);
	return 0;
}

void decide_reload_apply(struct decide_stage *m, const struct tierd *d, uint64_t now_ns)
{
	struct policy_params pp;
	struct policy *pol;
	struct batcher *b;

	/* Arrays stay as sized at start; the new policy and batcher must
	 * fit them, else the old ones stay (a reload's apply may not fail). */
	decide_params(d->conf, &m->geom, &pp);
	if (policy_new(&pp, m->max_cand, CONF_MAX_CGROUPS, &pol) == 0) {
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
	rates_from_conf(m, d->conf, now_ns);
}

static void fill_cgroups(struct decide_stage *m, const struct tierd_conf *c,
			 const uint64_t *fast_bytes)
{
	for (int i = 0; i < c->nr_cgroups; i++)
		m->cgs[i].fast_bytes = fast_bytes[i];
}

bool decide_may_demote(struct decide_stage *m, const struct tierd_conf *c,
		       const struct topology *topo, const uint64_t *fast_bytes)
{
	struct policy_input in = { .topo = topo, .cgroups = m->cgs, .nr_cgroups = c->nr_cgroups };

	fill_cgroups(m, c, fast_bytes);
	return policy_may_demote(&m->pp, &in, (uint64_t)m->max_pages << m->geom.shift);
}

/*
 * The bytes this tick may plan: the batcher's pages a tick, and the time
 * budget at the measured throughput (at least one call's batch_pages).
 * The policy stops there (policy_output.max_bytes), before it charges the
 * rate buckets: a plan cut after the policy would leave them charged for
 * intents that do not move, and with THP-backed memory (a THP one
 * candidate) a tick's intents can come to a whole bucket, 2 GiB at
 * 4 GiB/s and 500 ms, of which the batcher takes 512 MiB.
 */
static uint64_t tick_bytes(const struct decide_stage *m, const struct tierd_conf *c,
			   uint64_t bps)
{
	uint64_t most = (uint64_t)m->max_pages << m->geom.shift;
	uint64_t budget = (uint64_t)c->promotion.batch_pages << m->geom.shift;

	/* Nothing measured yet: the migrate step stops starting batches
	 * when the budget's time has passed. */
	if (!bps)
		return most;
	if (bps * (STAGE_MOVE_BUDGET_NS / NSEC_PER_SEC) > budget)
		budget = bps * (STAGE_MOVE_BUDGET_NS / NSEC_PER_SEC);
	return budget < most ? budget : most;
}

int decide_step(struct decide_stage *m, const struct decide_in *in, uint64_t now_ns,
		struct decide_out *out)
{
	const struct tierd_conf *c = in->conf;
	struct policy_output po = { .intents = out->intents, .max_intents = m->max_cand,
				    .max_bytes = tick_bytes(m, in->conf, in->bytes_per_s),
				    .cg_wait_bytes = out->cg_wait };
	struct policy_input pi = {
		.topo = in->topo,
		.now_ns = now_ns,
		.pages = in->cands->cand,
		.nr_pages = in->cands->nr_cand,
		.cgroups = m->cgs,
		.nr_cgroups = c->nr_cgroups,
		.rule_used_bytes = in->cands->rule_used,
		.global_rate = c->promotion.max_rate_mb_per_s ? &m->global_rate : NULL,
		.blocked_nodes = in->blocked_nodes,
		.footprint_bytes = in->footprint_bytes,
		.crowded_hot = in->crowded_hot,
		.table_hist = in->table_hist,
		.news_since_ns = in->news_since_ns,
	};
	int r;

	fill_cgroups(m, c, in->fast_bytes);
	r = policy_run(m->policy, &pi, &po);
	if (r < 0)
		return r;
	out->nr_intents = po.nr_intents;
	out->cut = po.stats.held[POLICY_H_OUTPUT_FULL] > 0;
	/* What it promotes onto a GPU rule's node counts against the rule
	 * until its next read, whether the move lands or not. */
	if (in->gpu_usage)
		gpu_usage_planned(in->gpu_usage, out->intents, out->nr_intents);
	out->stats = po.stats;
	return 0;
}

int decide_batch(struct decide_stage *m, const struct policy_intent *intents, size_t n,
		 const struct batch_plan **ret_plan)
{
	return batch_build(m->batcher, intents, n, ret_plan);
}
