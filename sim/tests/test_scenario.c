// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CI scenario: every system under every sampler on the lab machine,
 * over generated workloads with several tenants and budgets.  It checks
 * invariants, never figures: no page lost, no node over capacity, no
 * tenant over budget, and the same seed giving byte-identical reports.
 * And that the tierd systems, tierd's own pipeline on the engine, promote.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "sampler.h"
#include "source.h"
#include "system.h"
#include "test.h"

static const char *machine_path;
/* The last run's result, for the tests that look at one. */
static uint64_t last_migrated;
static int64_t last_t50_ns;
#define MAX_TENANTS 8
static uint64_t last_fast[MAX_TENANTS], last_budget[MAX_TENANTS];
static uint32_t last_nr_tenants;

static const char *const gens[] = {
	"tenants:footprint=2560M,tenants=3,hot=0.3,seconds=20",
	"shift:footprint=2G,hot=0.4,shift=5,seconds=20",
	"scan:footprint=2G,hot=0.2,seconds=20,scan_at=5,scan_s=5",
};
static const char *const samplers[] = { "exact", "hw:100", "hw", "hint", "damon" };

/* One run's JSON report, or NULL. */
static char *run_json(const struct sim_machine *m, const char *gen,
		      const struct sim_system *sys, const char *smp_spec)
{
	struct sim_setup s = { .m = m, .range_bytes = 2 << 20,
			       .interval_ns = 500000000, .seed = 9 };
	struct sim_run run = { .s = &s, .sys = sys, .max_intervals = 1000 };
	struct sim_sampler smp;
	struct sim_layout l;
	struct sim_result res;
	struct sim_row row;
	char err[SIM_ERR_LEN], *buf = NULL;
	size_t len;
	FILE *f;

	CHECK_EQ_INT(sim_gen_create(gen, s.range_bytes, s.interval_ns, s.seed,
				    &run.src, &l, err), 0);
	s.nr_ranges = l.nr_ranges;
	s.nr_tenants = l.nr_tenants;
	s.range_tenant = l.range_tenant;
	s.budget_bytes = l.budget_bytes;
	CHECK_EQ_INT(sim_sampler_create(smp_spec, &s, &smp, err), 0);
	run.sampler = &smp;
	if (sim_engine_run(&run, &res) == 0) {
		CHECK(!res.pages_lost);
		CHECK(!res.over_capacity);
		CHECK(!res.over_budget);
		CHECK(res.intervals == 40);
		if (res.pages_lost || res.over_capacity || res.over_budget)
			fprintf(stderr, "%s %s %s broke an invariant\n", gen,
				sys->name, smp_spec);
		last_migrated = res.bytes_migrated;
		last_t50_ns = res.t50_ns;
		last_nr_tenants = res.nr_tenants < MAX_TENANTS ? res.nr_tenants : MAX_TENANTS;
		for (uint32_t t = 0; t < last_nr_tenants; t++) {
			last_fast[t] = res.tenants[t].max_fast_bytes;
			last_budget[t] = res.tenants[t].budget_bytes;
		}
		row = (struct sim_row){ .trace = gen, .machine = m->name,
					.system = sys->name, .sampler = smp.name,
					.res = &res, .tenant_names = l.tenant_names };
		f = open_memstream(&buf, &len);
		sim_report_json(f, &row, 1);
		sim_report_md(f, &row, 1);
		fclose(f);
		sim_result_free(&res);
	} else {
		CHECK(!"engine run failed");
	}
	sim_sampler_destroy(&smp);
	sim_gen_destroy(&run.src);
	sim_layout_free(&l);
	return buf;
}

static void test_invariants_and_determinism(void)
{
	struct sim_machine m;
	char err[SIM_ERR_LEN];

	CHECK_EQ_INT(sim_machine_load(machine_path, &m, err), 0);
	for (size_t g = 0; g < sizeof(gens) / sizeof(gens[0]); g++)
		for (int i = 0; sim_systems[i]; i++)
			for (size_t k = 0; k < sizeof(samplers) / sizeof(samplers[0]); k++) {
				char *a = run_json(&m, gens[g], sim_systems[i], samplers[k]);
				char *b = run_json(&m, gens[g], sim_systems[i], samplers[k]);

				CHECK(a && b && !strcmp(a, b));
				free(a);
				free(b);
			}
}

static const char *const tierd_names[] = { "tierd-vanilla", "tierd-patched" };

/* Each tierd system on generator @gen with the exact sampler, then @check
 * of the run's result. */
static void each_tierd(const char *gen, void (*check)(const char *name))
{
	struct sim_machine m;
	char err[SIM_ERR_LEN];

	CHECK_EQ_INT(sim_machine_load(machine_path, &m, err), 0);
	for (size_t i = 0; i < sizeof(tierd_names) / sizeof(tierd_names[0]); i++) {
		const struct sim_system *sys = sim_system_find(tierd_names[i]);

		CHECK(sys != NULL);
		if (!sys)
			continue;
		free(run_json(&m, gen, sys, "exact"));
		check(tierd_names[i]);
	}
}

static void check_promoted(const char *name)
{
	CHECK(last_migrated > 0);
	CHECK(last_t50_ns >= 0);
}

/* tierd's tick, fed the exact accesses, brings half the hot set to the
 * fast tier (the invariants above hold for any system, one that never
 * moves included). */
static void test_tierd_promotes(void)
{
	each_tierd(gens[1], check_promoted);
}

static void check_budgets(const char *name)
{
	CHECK(last_nr_tenants == 3);
	for (uint32_t t = 0; t < last_nr_tenants; t++) {
		CHECK(last_budget[t] > 0);
		CHECK(last_fast[t] > 0);
		if (!last_fast[t])
			fprintf(stderr, "%s: tenant %u got no fast-tier memory\n", name, t);
	}
}

/* The tenants' budgets reach tierd as its cgroups' fast_tier_max_bytes:
 * one tenant at its budget does not stop the others' promotions (a move
 * over a budget that tierd did not know of would come back as -ENOMEM, a
 * full node to tierd). */
static void test_tierd_budgets(void)
{
	each_tierd(gens[0], check_budgets);
}

/* tierd-patched on the lab machine, one tenant, every range on the slow
 * node, shown one interval after another. */
struct rig {
	const struct sim_system *sys;
	struct sim_machine m;
	struct sim_setup s;
	uint16_t *tenant;
	uint8_t *node;
	uint32_t *seen;		/* the next interval's view, set by the test */
	uint32_t *idle_ms;	/* with source_idle: its idle memory, likewise */
	struct sim_move *moves;
	uint64_t fast, used[SIM_MAX_NODES], budget;
	struct sim_rate *rate;	/* the sampler's, where tierd sets it */
	void *st;
};

static bool rig_setup(struct rig *g, uint32_t nr, uint64_t interval_ns, bool peeks,
		      bool newest)
{
	char err[SIM_ERR_LEN];

	memset(g, 0, sizeof(*g));
	g->sys = sim_system_find("tierd-patched");
	g->tenant = calloc(nr, sizeof(*g->tenant));
	g->node = malloc(nr);
	g->seen = calloc(nr, sizeof(*g->seen));
	g->idle_ms = calloc(nr, sizeof(*g->idle_ms));
	g->moves = calloc(nr, sizeof(*g->moves));
	CHECK_EQ_INT(sim_machine_load(machine_path, &g->m, err), 0);
	CHECK(g->sys && g->tenant && g->node && g->seen && g->idle_ms && g->moves);
	if (!g->sys || !g->tenant || !g->node || !g->seen || !g->idle_ms || !g->moves)
		return false;
	g->s = (struct sim_setup){ .m = &g->m, .range_bytes = 2 << 20,
				   .interval_ns = interval_ns, .nr_ranges = nr,
				   .nr_tenants = 1, .range_tenant = g->tenant,
				   .budget_bytes = &g->budget, .seed = 9,
				   .source_peeks = peeks, .view_newest = newest };
	memset(g->node, 1, nr); /* the lab's slow node, index 1 */
	g->used[1] = (uint64_t)nr * g->s.range_bytes;
	return true;
}

/* rig_setup() and the system's start: tierd-patched on the placement. */
static bool rig_start(struct rig *g, uint32_t nr, uint64_t interval_ns, bool peeks,
		      bool newest)
{
	if (!rig_setup(g, nr, interval_ns, peeks, newest))
		return false;
	CHECK_EQ_INT(g->sys->init(&g->st, &g->s), 0);
	return g->st != NULL;
}

/* Interval @k with g->seen; its moves applied, in g->moves. */
static uint32_t rig_interval(struct rig *g, uint32_t k)
{
	struct sim_view v = { .interval = k, .now_ns = (k + 1) * g->s.interval_ns,
			      .s = &g->s, .node = g->node, .used_bytes = g->used,
			      .tenant_fast_bytes = &g->fast, .seen = g->seen,
			      .idle_ms = g->s.source_idle ? g->idle_ms : NULL, .rate = g->rate };
	uint32_t n = 0;

	CHECK_EQ_INT(g->sys->decide(g->st, &v, g->moves, g->s.nr_ranges, &n), 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = g->moves[i].range;

		g->used[g->node[r]] -= g->s.range_bytes;
		g->used[g->moves[i].node] += g->s.range_bytes;
		g->fast += g->moves[i].node == 0 ? g->s.range_bytes : 0;
		g->fast -= g->node[r] == 0 ? g->s.range_bytes : 0;
		g->node[r] = g->moves[i].node;
	}
	return n;
}

static void rig_stop(struct rig *g)
{
	if (g->st)
		g->sys->destroy(g->st);
	free(g->tenant);
	free(g->node);
	free(g->seen);
	free(g->idle_ms);
	free(g->moves);
}

/*
 * The interval in which tierd-patched first moves a range of a hot set
 * that replaces another at interval @at, on the lab machine: 1 GiB on the
 * slow node, 64 ranges seen hot until @at, 64 others after.  Once the first
 * set is placed tierd's ticks back off (idle_interval_ms); with @peeks its
 * source looks at each fresh view between them, as the DAMON source does.
 * 0: never.
 */
static uint32_t first_move_of_second_set(bool peeks, uint32_t at)
{
	enum { NR = 512, HOT = 64, LAST = 40 };
	struct rig g;
	uint32_t found = 0;

	if (!rig_start(&g, NR, 1000000000, peeks, false)) {
		rig_stop(&g);
		return 0;
	}
	for (uint32_t k = 1; k <= LAST && !found; k++) {
		uint32_t n;

		for (uint32_t r = 0; r < NR; r++)
			g.seen[r] = (k < at ? r < HOT : r >= HOT && r < 2 * HOT) ? 50 : 0;
		n = rig_interval(&g, k - 1);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t r = g.moves[i].range;

			if (k >= at && r >= HOT && r < 2 * HOT && g.moves[i].node == 0)
				found = k;
		}
	}
	rig_stop(&g);
	return found;
}

/* A source that peeks wakes idle tierd in the interval the new hot set
 * shows in; one that does not waits for the next idle tick. */
static void test_tierd_peek_wakes(void)
{
	const uint32_t at = 20;
	uint32_t with = first_move_of_second_set(true, at);
	uint32_t without = first_move_of_second_set(false, at);

	CHECK_EQ_INT(with, at);
	CHECK(without > at);
}

/* A tierd config for the next rigs, in @path ("...XXXXXX"): the lab's
 * two tiers and @body. */
static bool conf_start(char *path, const char *body)
{
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK(f != NULL);
	if (!f)
		return false;
	fprintf(f, "tiers:\n  - name: dram\n    nodes: [0]\n  - name: slow\n    nodes: [1]\n%s",
		body);
	fclose(f);
	sim_tierd_conf = path;
	return true;
}

static void conf_stop(char *path)
{
	sim_tierd_conf = NULL;
	unlink(path);
}

/*
 * Ticks every 500 ms over 100 ms intervals, no peeks: set A (ranges 0-1)
 * is seen in intervals 1-3, set B (2-3) in interval 4 only, neither in
 * the interval of a tick.  Which sets the tick at 500 ms (interval 5)
 * moves: bit 0 A, bit 1 B.  Two sets of two: the lab's copies of four
 * ranges fit one interval, and without the fill pass (the 64 ranges fit
 * the fast tier) only what was seen moves.
 */
static unsigned int sets_moved(bool newest)
{
	enum { NR = 64, SET = 2 };
	char conf[] = "/tmp/tierd-sim-test.XXXXXX";
	struct rig g;
	unsigned int moved = 0;

	if (!conf_start(conf, "interval_ms: 500\nsampling:\n  half_life_ms: 5000\n"
			      "promotion:\n  max_rate_mb_per_s: 16384\n  fill: false\n"))
		return 0;
	if (!rig_start(&g, NR, 100000000, false, newest)) {
		rig_stop(&g);
		conf_stop(conf);
		return 0;
	}
	for (uint32_t k = 0; k < 10; k++) {
		uint32_t n;

		for (uint32_t r = 0; r < NR; r++)
			g.seen[r] = (k >= 1 && k <= 3 && r < SET) ||
				    (k == 4 && r >= SET && r < 2 * SET) ? 50 : 0;
		n = rig_interval(&g, k);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t r = g.moves[i].range;

			CHECK(k == 5);
			if (g.moves[i].node == 0 && r < 2 * SET)
				moved |= r < SET ? 1 : 2;
		}
	}
	rig_stop(&g);
	conf_stop(conf);
	return moved;
}

/* A tick drains what the sampler saw since the last drain: counts add up
 * over the intervals between ticks; DAMON's newest aggregation replaces
 * the one before it. */
static void test_tierd_drains_between_ticks(void)
{
	CHECK_EQ_INT(sets_moved(false), 3);
	CHECK_EQ_INT(sets_moved(true), 2);
}

/*
 * tierd sets the hardware sampler's period from its cost, within its
 * config's sampling.cpu_budget_pct, as its BPF source sets its events':
 * 1e9 accesses a second at 1500 ns a sample cost 15 % of a CPU at the
 * start period; some drains later the share lies between a quarter of
 * the budget and the budget (core/sample_period.h), and stays: with
 * ticks every 300 ms the drains fall off the intervals' seconds, some
 * less than a second apart, and the cost is judged over the intervals
 * each drain takes, not the time between the drains (which would read
 * more than the share, over the budget).
 */
static void test_tierd_sets_sampling_rate(void)
{
	enum { NR = 64 };
	const double budget_pct = 1.5, per_s = 1e9, sample_ns = 1500;
	struct sim_rate rate = { .period = 10007 };
	char conf[] = "/tmp/tierd-sim-test.XXXXXX", body[96];
	double share = 100.0;
	uint64_t settled = 0;
	struct rig g;

	snprintf(body, sizeof(body), "interval_ms: 300\nsampling:\n  cpu_budget_pct: %g\n",
		 budget_pct);
	if (!conf_start(conf, body))
		return;
	if (rig_start(&g, NR, 1000000000, false, false)) {
		g.rate = &rate;
		for (uint32_t k = 0; k < 20; k++) {
			/* The interval's cost, added up until tierd drains. */
			share = 100.0 * per_s / (double)rate.period * sample_ns / 1e9;
			rate.cost_ns += (uint64_t)(share / 100.0 * 1e9);
			for (uint32_t r = 0; r < NR; r++)
				g.seen[r] = r < 4 ? 5 : 0;
			rig_interval(&g, k);
			if (k == 3)
				settled = rate.period;
			CHECK(k < 3 || rate.period == settled);
		}
	}
	rig_stop(&g);
	conf_stop(conf);
	CHECK(share <= budget_pct);
	CHECK(share >= budget_pct / 4);
}

/*
 * Memory nobody touches, on the fast tier, as DAMON reports it: the lab
 * machine's fast node full to its low watermark with ranges never
 * accessed (idle since the start), a hot set of 64 ranges on the slow
 * node.  tierd (configs/cxl-promotion.yaml's settings: cold_age_s 60)
 * demotes none of it before 60 s, then enough of it for the hot set,
 * which it promotes; never a hot range down.  Returns the interval by
 * which the hot set was all on the fast node, 0: never.  @idle: the
 * source reports idle memory; without, tierd has nothing to demote.
 */
static uint32_t idle_makes_room(bool idle)
{
	enum { NR = 1024, FAST = 508, HOT = 64, LAST = 90 };
	uint32_t done = 0;
	struct rig g;

	if (!rig_setup(&g, NR, 1000000000, true, true))
		goto out;
	g.s.source_idle = idle;
	for (uint32_t r = 0; r < FAST; r++)
		g.node[r] = 0;
	g.used[0] = (uint64_t)FAST * g.s.range_bytes;
	g.used[1] -= g.used[0];
	g.fast = g.used[0];
	CHECK_EQ_INT(g.sys->init(&g.st, &g.s), 0);
	for (uint32_t k = 0; k < LAST && g.st; k++) {
		uint32_t n, hot_fast = 0;

		for (uint32_t r = 0; r < NR; r++) {
			bool hot = r >= FAST && r < FAST + HOT;

			g.seen[r] = hot ? 50 : 0;
			g.idle_ms[r] = hot ? 0 : (k + 1) * 1000;
		}
		n = rig_interval(&g, k);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t r = g.moves[i].range;

			CHECK(g.moves[i].node == 0 || k >= 59);
			CHECK(g.moves[i].node == 0 || r < FAST || r >= FAST + HOT);
		}
		for (uint32_t r = FAST; r < FAST + HOT; r++)
			hot_fast += g.node[r] == 0;
		if (hot_fast == HOT && !done)
			done = k + 1;
	}
out:
	rig_stop(&g);
	return done;
}

static void test_tierd_demotes_idle(void)
{
	uint32_t with = idle_makes_room(true);

	CHECK(with > 60);
	CHECK(with < 90);
	CHECK_EQ_INT(idle_makes_room(false), 0);
}

int main(int argc, char **argv)
{
	machine_path = argc > 1 ? argv[1] : "sim/machines/lab.yaml";
	RUN(test_invariants_and_determinism);
	RUN(test_tierd_promotes);
	RUN(test_tierd_budgets);
	RUN(test_tierd_peek_wakes);
	RUN(test_tierd_drains_between_ticks);
	RUN(test_tierd_sets_sampling_rate);
	RUN(test_tierd_demotes_idle);
	return TEST_EXIT();
}
