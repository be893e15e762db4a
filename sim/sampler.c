// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exact, hardware and hint-fault sampler models (sampler.h).
 *
 * hw[:N|auto[:COST_NS]] keeps one access in N: a range with a accesses
 * yields a / N samples, rounded at random in proportion, each costing
 * COST_NS of CPU (default 1500 ns: a PMU interrupt and a BPF program per
 * sample, an assumption until the lab's BPF sampler is timed on real
 * hardware).  hw and hw:auto leave N to the system (struct sim_rate),
 * starting at HW_PERIOD_INIT: tierd sets it from the cost within its
 * sampling.cpu_budget_pct, as its BPF source sets its events' period.
 *
 * hint[:SCAN_MB[:PERIOD_MS]] follows task_numa_work() in
 * kernel/sched/fair.c (6.12): each scan period it makes the next
 * sysctl_numa_balancing_scan_size (256 MB) of the address space
 * inaccessible (change_prot_numa()), and the first access to a page there
 * raises a hinting fault (do_numa_page() in mm/memory.c).  Per interval the
 * window advances scan_size x interval / period; a range in it that is
 * accessed faults once (seen = 1).  A fault costs 1000 ns (assumption).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damon.h"
#include "sampler.h"
#include "source.h"

#define HW_SAMPLE_NS 1500
#define HW_PERIOD_INIT 10007	/* sampler_bpf_params_default()'s period_init */
#define HINT_FAULT_NS 1000
#define HINT_SCAN_MB 256	/* sysctl_numa_balancing_scan_size */
#define HINT_PERIOD_MS 1000	/* sysctl_numa_balancing_scan_period_min */

struct hw {
	struct sim_rate rate;
	uint64_t cost_ns, rng;
};

struct hint {
	double per_interval, pos;	/* ranges */
};

static void exact_sample(void *st, const uint32_t *acc, uint32_t n,
			 uint32_t *seen, uint64_t *cost_ns)
{
	memcpy(seen, acc, n * sizeof(*seen));
}

static void hw_sample(void *st, const uint32_t *acc, uint32_t n,
		      uint32_t *seen, uint64_t *cost_ns)
{
	struct hw *h = st;
	uint64_t samples = 0, p = h->rate.period ? h->rate.period : 1;

	for (uint32_t r = 0; r < n; r++) {
		uint32_t q = (uint32_t)(acc[r] / p), rem = (uint32_t)(acc[r] % p);

		seen[r] = q + (rem && sim_rand(&h->rng) % p < rem);
		samples += seen[r];
	}
	*cost_ns += samples * h->cost_ns;
	h->rate.cost_ns += samples * h->cost_ns;
}

static void hint_sample(void *st, const uint32_t *acc, uint32_t n,
			uint32_t *seen, uint64_t *cost_ns)
{
	struct hint *h = st;
	uint64_t lo = (uint64_t)h->pos, hi = (uint64_t)(h->pos + h->per_interval);
	uint64_t faults = 0;

	memset(seen, 0, n * sizeof(*seen));
	for (uint64_t k = lo; k < hi && k - lo < n; k++) {
		uint32_t r = k % n;

		seen[r] = acc[r] > 0;
		faults += seen[r];
	}
	h->pos = fmod(h->pos + h->per_interval, n);
	*cost_ns += faults * HINT_FAULT_NS;
}

static int parse_args(const char *args, uint64_t *v, int max)
{
	char *end;
	int k = 0;

	while (args && *args && k < max) {
		v[k++] = strtoull(args, &end, 10);
		if (end == args || (*end && *end != ':') || !v[k - 1])
			return -EINVAL;
		args = *end ? end + 1 : end;
	}
	return args && *args ? -EINVAL : 0;
}

/* hw's N|auto[:COST_NS] into @v: N 0 for auto (or none given). */
static int hw_args(const char *args, uint64_t *v)
{
	if (!args)
		return 0;
	if (!strncmp(args, "auto", 4) && (!args[4] || args[4] == ':'))
		return args[4] ? parse_args(args + 5, v + 1, 1) : 0;
	return parse_args(args, v, 2);
}

int sim_sampler_create(const char *spec, const struct sim_setup *s,
		       struct sim_sampler *out, char *err)
{
	const char *args = strchr(spec, ':');
	uint64_t v[2] = { 0, 0 };
	size_t len = args ? (size_t)(args - spec) : strlen(spec);

	memset(out, 0, sizeof(*out));
	if (args)
		args++;
	if (len == 5 && !strncmp(spec, "exact", 5) && !args) {
		*out = (struct sim_sampler){ .name = "exact", .sample = exact_sample };
		return 0;
	}
	if (len == 5 && !strncmp(spec, "damon", 5))
		return sim_damon_create(args, s, out, err);
	if (len == 2 && !strncmp(spec, "hw", 2) && !hw_args(args, v)) {
		struct hw *h = calloc(1, sizeof(*h));

		if (!h)
			return -ENOMEM;
		*h = (struct hw){ .rate.period = v[0] ? v[0] : HW_PERIOD_INIT,
				  .cost_ns = v[1] ? v[1] : HW_SAMPLE_NS,
				  .rng = s->seed ^ 0x68775f73616d706cull };
		*out = (struct sim_sampler){ .name = "hw", .state = h,
					     .rate = v[0] ? NULL : &h->rate,
					     .sample = hw_sample, .destroy = free };
		return 0;
	}
	if (len == 4 && !strncmp(spec, "hint", 4) && !parse_args(args, v, 2)) {
		struct hint *h = calloc(1, sizeof(*h));
		double scan = (v[0] ? v[0] : HINT_SCAN_MB) * 1048576.0;
		double period = (v[1] ? v[1] : HINT_PERIOD_MS) * 1e6;

		if (!h)
			return -ENOMEM;
		h->per_interval = scan / s->range_bytes * s->interval_ns / period;
		*out = (struct sim_sampler){ .name = "hint", .state = h,
					     .sample = hint_sample, .destroy = free };
		return 0;
	}
	snprintf(err, SIM_ERR_LEN,
		 "--sampler %.100s: expected exact, hw[:N|auto[:COST_NS]], hint[:SCAN_MB[:PERIOD_MS]] or damon[:...]",
		 spec);
	return -EINVAL;
}

void sim_sampler_destroy(struct sim_sampler *smp)
{
	if (smp->destroy && smp->state)
		smp->destroy(smp->state);
	memset(smp, 0, sizeof(*smp));
}
