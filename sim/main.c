// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierd-sim: run tiering systems over a trace or a generator on a machine
 * model, and convert traces.  See tierd-sim(1).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sampler.h"
#include "source.h"

#define MAX_SYSTEMS 16

struct opts {
	const char *machine, *trace, *gen, *systems, *json, *md, *png, *sampler;
	const char *placement;
	uint64_t seed, range_bytes, interval_ns, loop_ns;
	bool start_touch;
};

static void usage(FILE *f)
{
	fputs("Usage: tierd-sim run --machine M.yaml (--trace T | --gen SPEC) --system S[,S...]\n"
	      "                     [--sampler exact|hw[:N]|hint|damon] [--seed N]\n"
	      "                     [--interval SECONDS] [--range BYTES] [--json F] [--md F]\n"
	      "                     [--png F] [--tierd-conf TIERD.YAML] [--placement F]\n"
	      "                     [--loop SECONDS]   (a trace again and again)\n"
	      "                     [--start slow|touch]   (where the footprint starts)\n"
	      "       tierd-sim convert IN OUT     (OUT ending in .bin: binary, else text)\n"
	      "       tierd-sim --help\n"
	      "Systems:", f);
	for (int i = 0; sim_systems[i]; i++)
		fprintf(f, " %s", sim_systems[i]->name);
	fputs("\nEvery figure tierd-sim prints is a model, not a measurement.\n", f);
}

static int parse_u64_arg(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "machine", required_argument, NULL, 'm' },
		{ "trace", required_argument, NULL, 't' },
		{ "gen", required_argument, NULL, 'g' },
		{ "system", required_argument, NULL, 's' },
		{ "sampler", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'e' },
		{ "interval", required_argument, NULL, 'i' },
		{ "range", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "md", required_argument, NULL, 'd' },
		{ "png", required_argument, NULL, 'p' },
		{ "tierd-conf", required_argument, NULL, 'c' },
		{ "placement", required_argument, NULL, 'P' },
		{ "loop", required_argument, NULL, 'l' },
		{ "start", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double secs;
	char *end;
	int c;

	*o = (struct opts){ .seed = 1, .range_bytes = 2 << 20,
			    .interval_ns = 1000000000, .sampler = "exact" };
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'm': o->machine = optarg; break;
		case 't': o->trace = optarg; break;
		case 'g': o->gen = optarg; break;
		case 's': o->systems = optarg; break;
		case 'S': o->sampler = optarg; break;
		case 'j': o->json = optarg; break;
		case 'd': o->md = optarg; break;
		case 'p': o->png = optarg; break;
		case 'c': sim_tierd_conf = optarg; break;
		case 'P': o->placement = optarg; break;
		case 'T':
			if (strcmp(optarg, "slow") && strcmp(optarg, "touch"))
				goto bad;
			o->start_touch = !strcmp(optarg, "touch");
			break;
		case 'e':
			if (parse_u64_arg(optarg, &o->seed))
				goto bad;
			break;
		case 'r':
			if (parse_u64_arg(optarg, &o->range_bytes) ||
			    o->range_bytes < 4096 || o->range_bytes & (o->range_bytes - 1))
				goto bad;
			break;
		case 'i':
			secs = strtod(optarg, &end);
			if (end == optarg || *end || !(secs >= 1e-6 && secs <= 3600))
				goto bad;
			o->interval_ns = secs * 1e9;
			break;
		case 'l':
			secs = strtod(optarg, &end);
			if (end == optarg || *end || !(secs >= 1e-6 && secs <= 1e7))
				goto bad;
			o->loop_ns = secs * 1e9;
			break;
		case 'h': usage(stdout); exit(0);
		default: return -EINVAL;
		}
	}
	if (optind != argc || !o->machine || !o->systems || !o->trace == !o->gen) {
		fprintf(stderr, "tierd-sim run: --machine, --system and one of --trace or --gen are required\n");
		return -EINVAL;
	}
	if (o->loop_ns && !o->trace) {
		fprintf(stderr, "tierd-sim run: --loop replays a --trace; a generator runs its seconds=\n");
		return -EINVAL;
	}
	return 0;
bad:
	for (int i = 0; longs[i].name; i++)
		if (longs[i].val == c)
			fprintf(stderr, "tierd-sim run: --%s %s: bad value\n",
				longs[i].name, optarg);
	return -EINVAL;
}

/* Everything one run needs, built afresh per system: sources are consumed. */
struct job {
	struct sim_trace trace;
	struct sim_source src;
	struct sim_layout l;
	struct sim_sampler sampler;
};

/* A trace's page numbers count its base pages: replayed on a machine model
 * of another base page, every page would stand for the wrong bytes. */
static int trace_fits(const char *path, const struct sim_trace *t, const struct sim_machine *m,
		      char *err)
{
	if (!t->page_bytes || t->page_bytes == m->base_page_bytes)
		return 0;
	snprintf(err, SIM_ERR_LEN,
		 "%s: recorded with %llu KiB base pages, but machine %s has %llu KiB ones: "
		 "replay it on a machine model with the same base page (base_page_kib: %llu)",
		 path, (unsigned long long)t->page_bytes >> 10, m->name,
		 (unsigned long long)m->base_page_bytes >> 10,
		 (unsigned long long)t->page_bytes >> 10);
	return -EINVAL;
}

static int job_source(const struct opts *o, const struct sim_machine *m,
		      struct job *j, char *err)
{
	if (o->gen)
		return sim_gen_create(o->gen, o->range_bytes, o->interval_ns,
				      o->seed, &j->src, &j->l, err);
	return sim_trace_source(&j->trace, m->base_page_bytes, o->range_bytes,
				o->interval_ns, o->loop_ns, &j->src, &j->l);
}

static void job_source_free(const struct opts *o, struct job *j)
{
	if (o->gen)
		sim_gen_destroy(&j->src);
	else
		sim_trace_source_destroy(&j->src);
	sim_layout_free(&j->l);
	sim_sampler_destroy(&j->sampler);
}

static int run_one(const struct opts *o, const struct sim_machine *m,
		   const struct sim_system *sys, struct job *j, FILE *placement,
		   struct sim_result *res, char *err)
{
	struct sim_setup s = { .m = m, .range_bytes = o->range_bytes,
			       .interval_ns = o->interval_ns, .seed = o->seed };
	struct sim_run run = { .s = &s, .sys = sys, .max_intervals = UINT64_MAX,
			       .start_touch = o->start_touch, .placement = placement };
	char spec[96];
	int r;

	snprintf(spec, sizeof(spec), "%s", o->sampler);
	r = job_source(o, m, j, err);
	if (r)
		return r;
	s.nr_ranges = j->l.nr_ranges;
	s.nr_tenants = j->l.nr_tenants;
	s.range_tenant = j->l.range_tenant;
	s.budget_bytes = j->l.budget_bytes;
	/* tierd's own kdamond: DAMON as tierd's config sets it (and for
	 * oracle-seen, which sees what tierd's source sees). */
	if (!strcmp(o->sampler, "damon") && sys->tierd_source) {
		r = sim_tierd_damon_spec(spec, sizeof(spec), &s, err);
		if (r)
			return r;
	}
	/* tierd's DAMON and hardware sampling sources peek between idle
	 * ticks. */
	s.source_peeks = !strncmp(sys->name, "tierd", 5) &&
			 (!strcmp(o->sampler, "damon") || !strncmp(o->sampler, "hw", 2));
	s.view_newest = !strcmp(o->sampler, "damon");
	r = sim_sampler_create(spec, &s, &j->sampler, err);
	if (r)
		return r;
	s.source_idle = j->sampler.idle_ms && sys->tierd_source;
	run.src = j->src;
	run.sampler = &j->sampler;
	r = sim_engine_run(&run, res);
	if (r == -ENOSPC)
		snprintf(err, SIM_ERR_LEN, "the footprint does not fit %s", m->name);
	return r;
}

enum report_kind { REPORT_JSON, REPORT_MD, REPORT_PNG };

static int write_report(const char *path, enum report_kind kind,
			const struct sim_row *rows, size_t n)
{
	FILE *f;
	int r = 0;

	if (!path)
		return 0;
	f = fopen(path, "we");
	if (!f) {
		r = -errno;
		fprintf(stderr, "Failed to open %s: %s\n", path, strerror(-r));
		return r;
	}
	if (kind == REPORT_JSON)
		sim_report_json(f, rows, n);
	else if (kind == REPORT_MD)
		sim_report_md(f, rows, n);
	else
		r = sim_report_png(f, rows, n);
	if (fclose(f) && !r)
		r = -EIO;
	if (r)
		fprintf(stderr, "Failed to write %s: %s\n", path, strerror(-r));
	return r;
}

static int write_reports(const struct opts *o, struct sim_row *rows, size_t n)
{
	int r;

	if (!o->json && !o->md)
		sim_report_md(stdout, rows, n);
	r = write_report(o->json, REPORT_JSON, rows, n);
	if (!r)
		r = write_report(o->md, REPORT_MD, rows, n);
	if (!r)
		r = write_report(o->png, REPORT_PNG, rows, n);
	return r;
}

static int cmd_run(int argc, char **argv)
{
	struct sim_result res[MAX_SYSTEMS];
	struct sim_row rows[MAX_SYSTEMS];
	char err[SIM_ERR_LEN] = "", names[256], *save = NULL, *name, *tname, label[600];
	struct sim_machine m;
	struct job j[MAX_SYSTEMS];
	struct opts o;
	FILE *placement = NULL;
	size_t n = 0;
	int r;

	memset(j, 0, sizeof(j));
	r = parse_opts(argc, argv, &o);
	if (r)
		return 2;
	r = sim_machine_load(o.machine, &m, err);
	if (!r && o.trace)
		r = sim_trace_read(o.trace, &j[0].trace, err);
	if (!r && o.trace)
		r = trace_fits(o.trace, &j[0].trace, &m, err);
	if (r) {
		fprintf(stderr, "%s\n", err);
		sim_trace_free(&j[0].trace);
		return 1;
	}
	if (o.placement) {
		placement = fopen(o.placement, "we");
		if (!placement) {
			fprintf(stderr, "Failed to open %s: %m\n", o.placement);
			sim_trace_free(&j[0].trace);
			return 1;
		}
	}
	tname = o.gen ? (char *)o.gen : basename((char *)o.trace);
	/* A run from first touch is another workload: its rows say so. */
	if (o.start_touch) {
		snprintf(label, sizeof(label), "%s start=touch", tname);
		tname = label;
	}
	snprintf(names, sizeof(names), "%s", o.systems);
	for (name = strtok_r(names, ",", &save); name && !r;
	     name = strtok_r(NULL, ",", &save)) {
		const struct sim_system *sys = sim_system_find(name);

		if (!sys || n == MAX_SYSTEMS) {
			fprintf(stderr, "tierd-sim run: --system %s: %s\n", name,
				sys ? "too many systems" : "unknown system");
			r = -EINVAL;
			break;
		}
		j[n].trace = j[0].trace;
		r = run_one(&o, &m, sys, &j[n], placement, &res[n], err);
		if (r) {
			fprintf(stderr, "tierd-sim run: %s: %s\n", name,
				err[0] ? err : strerror(-r));
			job_source_free(&o, &j[n]);
			break;
		}
		rows[n] = (struct sim_row){ .trace = tname, .machine = m.name,
					    .system = sys->name, .unit = sys->unit,
					    .sampler = sys->own_sampler ? "own" :
						       j[n].sampler.name,
					    .res = &res[n],
					    .tenant_names = j[n].l.tenant_names };
		n++;
	}
	if (placement && fclose(placement) && !r) {
		fprintf(stderr, "Failed to write %s: %m\n", o.placement);
		r = -EIO;
	}
	if (!r)
		r = write_reports(&o, rows, n);
	for (size_t i = 0; i < n; i++) {
		sim_result_free(&res[i]);
		job_source_free(&o, &j[i]);
	}
	sim_trace_free(&j[0].trace);
	return r ? 1 : 0;
}

static int cmd_convert(int argc, char **argv)
{
	struct sim_trace t = { 0 };
	char err[SIM_ERR_LEN];
	size_t len;
	int r;

	if (argc != 3) {
		usage(stderr);
		return 2;
	}
	r = sim_trace_read(argv[1], &t, err);
	if (r) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	len = strlen(argv[2]);
	if (len > 4 && !strcmp(argv[2] + len - 4, ".bin"))
		r = sim_trace_write_bin(argv[2], &t);
	else
		r = sim_trace_write_text(argv[2], &t);
	if (r)
		fprintf(stderr, "Failed to write %s: %s\n", argv[2], strerror(-r));
	sim_trace_free(&t);
	return r ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "convert"))
		return cmd_convert(argc - 1, argv + 1);
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
