// SPDX-License-Identifier: GPL-2.0-only
/* JSON and Markdown reports (report.h). */
#include <stdio.h>

#include "json.h"	/* daemon/export: names come from trace files */
#include "report.h"

#define REPORT_LABEL "model: tierd-sim estimates on a machine model, not measurements"

double sim_row_runtime_over_dram(const struct sim_result *res)
{
	if (res->dram_ns <= 0)
		return 1.0;
	return (res->access_ns + (double)res->stall_ns) / res->dram_ns;
}

static void json_secs(FILE *f, int64_t ns)
{
	if (ns < 0)
		fputs("null", f);
	else
		fprintf(f, "%.3f", ns / 1e9);
}

static void json_count(FILE *f, int64_t n)
{
	if (n < 0)
		fputs("null", f);
	else
		fprintf(f, "%lld", (long long)n);
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s)
		json_str(f, s);
	else
		fputs("null", f);
}

static void json_tenants(FILE *f, const struct sim_row *row)
{
	const struct sim_result *res = row->res;

	fputs("\"tenants\": [", f);
	for (uint32_t t = 0; t < res->nr_tenants; t++) {
		fputs(t ? ", {\"name\": " : "{\"name\": ", f);
		json_str(f, row->tenant_names[t]);
		fprintf(f, ", \"budget_bytes\": %llu, \"max_fast_bytes\": %llu}",
			(unsigned long long)res->tenants[t].budget_bytes,
			(unsigned long long)res->tenants[t].max_fast_bytes);
	}
	fputc(']', f);
}

void sim_report_json(FILE *f, const struct sim_row *rows, size_t n)
{
	fputs("{\"label\": \"" REPORT_LABEL "\",\n \"rows\": [", f);
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *res = rows[i].res;

		fputs(i ? ",\n  {" : "\n  {", f);
		fputs("\"trace\": ", f);
		json_str(f, rows[i].trace);
		fputs(", \"machine\": ", f);
		json_str(f, rows[i].machine);
		fputs(", \"system\": ", f);
		json_str(f, rows[i].system);
		fputs(", \"sampler\": ", f);
		json_str(f, rows[i].sampler);
		fprintf(f, ", \"footprint_bytes\": %llu, \"time_to_50pct_s\": ",
			(unsigned long long)res->footprint_bytes);
		json_secs(f, res->t50_ns);
		fputs(", \"time_to_90pct_s\": ", f);
		json_secs(f, res->t90_ns);
		fputs(", \"unit\": ", f);
		json_str_or_null(f, rows[i].unit);
		fputs(", \"units_to_50pct\": ", f);
		json_count(f, res->u50);
		fputs(", \"units_to_90pct\": ", f);
		json_count(f, res->u90);
		fprintf(f, ", \"est_runtime_over_dram\": %.6f, \"bytes_migrated\": %llu, "
			   "\"bytes_pingpong\": %llu, \"stall_s\": %.6f, "
			   "\"sampler_cpu_s\": %.6f, \"moves_refused\": %llu, "
			   "\"intervals\": %llu, ",
			sim_row_runtime_over_dram(res),
			(unsigned long long)res->bytes_migrated,
			(unsigned long long)res->bytes_pingpong, res->stall_ns / 1e9,
			res->sampler_ns / 1e9, (unsigned long long)res->moves_refused,
			(unsigned long long)res->intervals);
		json_tenants(f, &rows[i]);
		fputc('}', f);
	}
	fputs("\n ]}\n", f);
}

static void md_secs(FILE *f, int64_t ns)
{
	if (ns < 0)
		fputs(" never |", f);
	else
		fprintf(f, " %.1f |", ns / 1e9);
}

void sim_report_md(FILE *f, const struct sim_row *rows, size_t n)
{
	fputs("Model (tierd-sim): estimates on a machine model, not measurements.\n\n"
	      "| trace | machine | system | sampler | footprint GiB | to 50 % s | "
	      "to 90 % s | to 90 %, own units | run time / all-DRAM | migrated GiB | "
	      "ping-pong GiB |\n"
	      "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *res = rows[i].res;

		fprintf(f, "| %s | %s | %s | %s | %.1f |", rows[i].trace,
			rows[i].machine, rows[i].system, rows[i].sampler,
			res->footprint_bytes / 1073741824.0);
		md_secs(f, res->t50_ns);
		md_secs(f, res->t90_ns);
		if (!rows[i].unit)
			fputs(" |", f);
		else if (res->u90 < 0)
			fputs(" never |", f);
		else
			fprintf(f, " %lld %s |", (long long)res->u90, rows[i].unit);
		fprintf(f, " %.3f | %.2f | %.2f |\n",
			sim_row_runtime_over_dram(res),
			res->bytes_migrated / 1073741824.0,
			res->bytes_pingpong / 1073741824.0);
	}
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *res = rows[i].res;

		for (uint32_t t = 0; t < res->nr_tenants; t++)
			if (res->tenants[t].budget_bytes)
				fprintf(f, "%s%s: tenant %s held at most %.2f GiB of a %.2f GiB budget\n",
					t ? "" : "\n", rows[i].system,
					rows[i].tenant_names[t],
					res->tenants[t].max_fast_bytes / 1073741824.0,
					res->tenants[t].budget_bytes / 1073741824.0);
	}
}
