/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reports: JSON ({"rows": [...]}), a Markdown table and a PNG chart, all
 * labelled as a model, all byte-identical for the same input and seed (no
 * clock, no addresses, fixed number formats).
 */
#ifndef TIERD_SIM_REPORT_H
#define TIERD_SIM_REPORT_H

#include <stdio.h>

#include "engine.h"

struct sim_row {
	const char *trace;
	const char *machine;
	const char *system;
	const char *sampler;
	const char *unit;	/* the system's own (sim_system.unit), or NULL */
	const struct sim_result *res;
	char *const *tenant_names;	/* [res->nr_tenants] */
};

/* Run time over all-DRAM: (latency x accesses + stalls) / DRAM's. */
double sim_row_runtime_over_dram(const struct sim_result *res);

void sim_report_json(FILE *f, const struct sim_row *rows, size_t n);
void sim_report_md(FILE *f, const struct sim_row *rows, size_t n);
/*
 * The hot set's fast-tier share over time, a line per row (chart.c).
 * 0, -ENOMEM, or -EIO when a write fails.
 */
int sim_report_png(FILE *f, const struct sim_row *rows, size_t n);

#endif
