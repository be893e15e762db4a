// SPDX-License-Identifier: GPL-2.0-only
/*
 * The real hotness sources of step 1 (sample.c), set up in the order
 * sampling.source tries them: BPF on hardware sampling, then DAMON.  Each
 * one ruled out is named, with why, in status's not_taken.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon.h"
#include "log.h"
#include "sample_sources.h"
#include "sampler.h"
#include "sampler_bpf.h"
#include "sampler_damon.h"

/* libbpf's own messages mostly start with "libbpf: " already. */
static void bpf_log(int level, const char *msg)
{
	log_msg(level, "libbpf: %s", strncmp(msg, "libbpf: ", 8) ? msg : msg + 8);
}

/* @item onto @list, "; "-joined. */
void sample_list_add(char *list, size_t len, const char *item)
{
	size_t used = strnlen(list, len);

	if (*item && used + 1 < len)
		snprintf(list + used, len - used, "%s%s", used ? "; " : "", item);
}

/*
 * The real sources sampling.source allows, in the order tried: BPF on
 * hardware sampling, DAMON.  Those it rules out, and the BPF source where
 * tierd is built without it, go into status's not_taken.
 */
int sample_sources_new(const struct tierd *d, struct tierd_stats *st,
		       struct sampler **cands, size_t *nr_cands)
{
	const struct tierd_conf *c = d->conf;
	char *nt = st->sampler_not_taken;
	int r;

	/* The DAMON source keeps its ownership record there. */
	if (mkdir(d->runtime_dir, 0755) < 0 && errno != EEXIST)
		log_warn("Failed to create %s: %s", d->runtime_dir, strerror(errno));
	/* libbpf's messages, for both sources' BPF programs. */
	sampler_bpf_set_log(bpf_log);
	nt[0] = '\0';
	if (c->sampling.source != CONF_SOURCE_DAMON) {
		struct sampler_bpf_params bp;

		sampler_bpf_params_default(&bp, &d->geom);
		bp.cpu_budget_pct = c->sampling.cpu_budget_pct;
		if (sampler_bpf_new(&bp, &cands[*nr_cands]) == 0)
			(*nr_cands)++;
		else
			sample_list_add(nt, sizeof(st->sampler_not_taken),
				 "bpf: tierd is built without BPF");
	} else {
		sample_list_add(nt, sizeof(st->sampler_not_taken), "bpf: sampling.source is damon");
	}
	if (c->sampling.source != CONF_SOURCE_BPF) {
		struct sampler_damon_params dp;

		sampler_damon_params_default(&dp, &d->geom);
		dp.runtime_dir = d->runtime_dir;
		dp.sample_us = c->sampling.damon_sample_us;
		dp.aggr_us = c->sampling.damon_aggr_us;
		dp.min_nr_regions = c->sampling.damon_min_regions;
		dp.max_nr_regions = c->sampling.damon_max_regions;
		/* Regions as fine as the ranges the policy moves (core/damon_fit.c). */
		dp.region_bytes = d->geom.range;
		dp.drain_us = (uint64_t)c->interval_ms * 1000;
		if (dp.update_us < dp.aggr_us)
			dp.update_us = dp.aggr_us;
		dp.max_targets = DAMON_MAX_TARGETS;
		/* Regions from the damon_aggregated tracepoint where BPF runs
		 * (sys/damon/feed.c says why); the source falls back to sysfs. */
		if (damon_feed_bpf_new(NULL, &dp.feed) < 0)
			dp.feed = NULL;
		r = sampler_damon_new(&dp, &cands[*nr_cands]);
		if (r < 0)
			return r;
		(*nr_cands)++;
	} else {
		sample_list_add(nt, sizeof(st->sampler_not_taken), "damon: sampling.source is bpf");
	}
	return 0;
}

