// SPDX-License-Identifier: GPL-2.0-only
/*
 * The traces of real programs (the .csv.gz files of sim/traces/, recorded by
 * sim/traces/record): each one reads, and every system under every sampler
 * runs a short stretch of it on the lab and the dram+cxl models with the
 * scenario's invariants: no page lost, no node over capacity, no tenant
 * over budget, the intervals and the footprint the trace itself implies,
 * and the same input giving byte-identical reports.  No figure is typed
 * in: what a check compares with comes from the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sampler.h"
#include "source.h"
#include "test.h"

#define INTERVAL_NS 1000000ull	/* the traces' own 1 ms interval */
#define MAX_INTERVALS 20ull	/* a short stretch of each */
#define RANGE_BYTES (2ull << 20)

static const char *machines[2];
static const char *const samplers[] = { "exact", "hw:100", "hint", "damon" };

/* One run's JSON and Markdown report, or NULL. */
static char *run_report(const struct sim_machine *m, const struct sim_trace *t,
			const char *name, const struct sim_system *sys,
			const char *smp_spec)
{
	struct sim_setup s = { .m = m, .range_bytes = RANGE_BYTES,
			       .interval_ns = INTERVAL_NS, .seed = 5 };
	struct sim_run run = { .s = &s, .sys = sys, .max_intervals = MAX_INTERVALS };
	uint64_t pages_per_range = RANGE_BYTES / m->base_page_bytes;
	uint64_t want_intervals, want_ranges = 0, max_page = 0;
	struct sim_sampler smp;
	struct sim_layout l;
	struct sim_result res;
	struct sim_row row;
	char err[SIM_ERR_LEN], *buf = NULL;
	size_t len;
	FILE *f;

	/* What the trace implies: its one tenant's highest page sizes it,
	 * its last record's interval ends it (trace_source.c's binning). */
	for (size_t i = 0; i < t->nr_recs; i++)
		if (t->recs[i].page > max_page)
			max_page = t->recs[i].page;
	want_ranges = max_page / pages_per_range + 1;
	want_intervals = t->recs[t->nr_recs - 1].time_us / (INTERVAL_NS / 1000) + 1;
	if (want_intervals > MAX_INTERVALS)
		want_intervals = MAX_INTERVALS;

	CHECK_EQ_INT(sim_trace_source(t, m->base_page_bytes, s.range_bytes,
				      s.interval_ns, 0, &run.src, &l), 0);
	CHECK_EQ_U64(l.nr_ranges, want_ranges);
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
		CHECK_EQ_U64(res.intervals, want_intervals);
		CHECK_EQ_U64(res.footprint_bytes, want_ranges * RANGE_BYTES);
		if (res.pages_lost || res.over_capacity || res.over_budget)
			fprintf(stderr, "%s %s %s %s broke an invariant\n", name,
				m->name, sys->name, smp_spec);
		row = (struct sim_row){ .trace = name, .machine = m->name,
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
	sim_trace_source_destroy(&run.src);
	sim_layout_free(&l);
	return buf;
}

static void check_trace(const char *path)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct sim_trace t = { 0 };
	char err[SIM_ERR_LEN], tenant[256];

	CHECK_EQ_INT(sim_trace_read(path, &t, err), 0);
	CHECK(t.nr_recs > 0);
	CHECK_EQ_INT(t.nr_tenants, 1);
	if (!t.nr_recs || t.nr_tenants != 1) {
		fprintf(stderr, "%s: %s\n", path, err);
		sim_trace_free(&t);
		return;
	}
	/* The tenant is named after the program, as the file is. */
	snprintf(tenant, sizeof(tenant), "/%.*s", (int)strcspn(name, "."), name);
	CHECK_EQ_STR(t.tenants[0], tenant);
	for (size_t k = 0; k < 2; k++) {
		struct sim_machine m;

		CHECK_EQ_INT(sim_machine_load(machines[k], &m, err), 0);
		for (int i = 0; sim_systems[i]; i++)
			for (size_t j = 0; j < sizeof(samplers) / sizeof(samplers[0]); j++) {
				char *a = run_report(&m, &t, name, sim_systems[i], samplers[j]);
				char *b = run_report(&m, &t, name, sim_systems[i], samplers[j]);

				CHECK(a && b && !strcmp(a, b));
				free(a);
				free(b);
			}
	}
	sim_trace_free(&t);
}

/* argv: the lab and dram+cxl machine files, then the traces. */
int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s LAB.yaml DRAM+CXL.yaml TRACE...\n", argv[0]);
		return 2;
	}
	machines[0] = argv[1];
	machines[1] = argv[2];
	for (int i = 3; i < argc; i++) {
		printf("# %s\n", argv[i]);
		check_trace(argv[i]);
	}
	printf("%s traces\n", test_failures ? "FAIL" : "ok  ");
	return TEST_EXIT();
}
