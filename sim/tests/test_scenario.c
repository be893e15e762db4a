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

#include "report.h"
#include "sampler.h"
#include "source.h"
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
static const char *const samplers[] = { "exact", "hw:100", "hint", "damon" };

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
	static uint16_t tenant[NR];
	static uint8_t node[NR];
	static uint32_t seen[NR];
	static struct sim_move moves[NR];
	const struct sim_system *sys = sim_system_find("tierd-patched");
	struct sim_machine m;
	char err[SIM_ERR_LEN];
	uint64_t fast = 0, used[SIM_MAX_NODES] = { 0 }, budget = 0;
	struct sim_setup s;
	uint32_t found = 0;
	void *st = NULL;

	CHECK_EQ_INT(sim_machine_load(machine_path, &m, err), 0);
	CHECK(sys != NULL);
	if (!sys)
		return 0;
	s = (struct sim_setup){ .m = &m, .range_bytes = 2 << 20, .interval_ns = 1000000000,
				.nr_ranges = NR, .nr_tenants = 1, .range_tenant = tenant,
				.budget_bytes = &budget, .seed = 9, .source_peeks = peeks };
	memset(node, 1, sizeof(node)); /* the lab's slow node, index 1 */
	used[1] = (uint64_t)NR * s.range_bytes;
	CHECK_EQ_INT(sys->init(&st, &s), 0);
	for (uint32_t k = 1; st && k <= LAST && !found; k++) {
		struct sim_view v = { .interval = k, .now_ns = k * s.interval_ns, .s = &s,
				      .node = node, .used_bytes = used,
				      .tenant_fast_bytes = &fast, .seen = seen };
		uint32_t n = 0;

		for (uint32_t r = 0; r < NR; r++)
			seen[r] = (k < at ? r < HOT : r >= HOT && r < 2 * HOT) ? 50 : 0;
		CHECK_EQ_INT(sys->decide(st, &v, moves, NR, &n), 0);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t r = moves[i].range;

			used[node[r]] -= s.range_bytes;
			used[moves[i].node] += s.range_bytes;
			fast += moves[i].node == 0 ? s.range_bytes : 0;
			fast -= node[r] == 0 ? s.range_bytes : 0;
			node[r] = moves[i].node;
			if (k >= at && r >= HOT && r < 2 * HOT && moves[i].node == 0)
				found = k;
		}
	}
	if (st)
		sys->destroy(st);
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

int main(int argc, char **argv)
{
	machine_path = argc > 1 ? argv[1] : "sim/machines/lab.yaml";
	RUN(test_invariants_and_determinism);
	RUN(test_tierd_promotes);
	RUN(test_tierd_budgets);
	RUN(test_tierd_peek_wakes);
	return TEST_EXIT();
}
