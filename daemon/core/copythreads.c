// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "copythreads.h"

#define NSEC_PER_SEC 1000000000ull

static const char *const why_names[CT_W_NR] = {
	[CT_W_HOLD] = "hold",
	[CT_W_START] = "start",
	[CT_W_FIXED] = "fixed",
	[CT_W_OFF] = "off",
	[CT_W_PROBE] = "probe",
	[CT_W_PLATEAU] = "plateau",
	[CT_W_REPROBE] = "reprobe",
	[CT_W_BUSY] = "busy",
	[CT_W_FEW_IDLE] = "few-idle",
	[CT_W_RECOVER] = "recover",
};

const char *ct_why_name(enum ct_why w)
{
	return (unsigned int)w < CT_W_NR ? why_names[w] : "?";
}

void ct_params_default(struct ct_params *p)
{
	p->mode = CT_AUTO;
	p->min_threads = 1;
	p->max_threads = 8;
	p->start_threads = 0;
	p->busy_cpu_pct = 75;
	p->psi_busy_pct = 20;
	p->gain_pct = 10;
	p->min_sample_bytes = 64ull << 20;
	p->reprobe_ns = 60 * NSEC_PER_SEC;
	p->cpu_limit = 0;
}

unsigned int ct_max_threads(const struct ct_params *p)
{
	return p->cpu_limit && p->cpu_limit < p->max_threads ? p->cpu_limit : p->max_threads;
}

unsigned int ct_min_threads(const struct ct_params *p)
{
	unsigned int hi = ct_max_threads(p);

	return p->min_threads < hi ? p->min_threads : hi;
}

static unsigned int clamp(unsigned int v, unsigned int lo, unsigned int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

int ct_init(struct ct_state *s, const struct ct_params *p)
{
	unsigned int lo = ct_min_threads(p), hi = ct_max_threads(p);

	if (p->min_threads == 0 || p->max_threads < p->min_threads ||
	    p->max_threads > CT_MAX_THREADS)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->threads = lo;
	if (p->start_threads >= lo && p->start_threads <= hi)
		s->threads = p->start_threads;
	s->good = s->threads;
	return 0;
}

/* Pull (1) when only the target has CPUs or it has more idle ones; push
 * (0) when only the source has, or it has more; -1 when neither has CPUs. */
static int choose_pull(const struct ct_load *l, unsigned int *ret_idle)
{
	if (!l->src_cpus && !l->dst_cpus) {
		*ret_idle = l->local_idle;
		return -1;
	}
	if (!l->src_cpus || (l->dst_cpus && l->dst_idle > l->src_idle)) {
		*ret_idle = l->dst_idle;
		return 1;
	}
	*ret_idle = l->src_idle;
	return 0;
}

/* Fixed mode, at start and on every step: max_threads within the CPU
 * limit, whatever the load. */
static void ct_fixed(struct ct_state *s, const struct ct_params *p, struct ct_decision *ret)
{
	unsigned int n = ct_max_threads(p);

	ret->threads = n;
	ret->changed = !s->started || s->threads != n;
	ret->why = ret->changed ? CT_W_FIXED : CT_W_HOLD;
	s->threads = n;
	s->started = true;
}

void ct_start(struct ct_state *s, const struct ct_params *p, const struct ct_load *load,
	      struct ct_decision *ret)
{
	unsigned int idle;

	memset(ret, 0, sizeof(*ret));
	ret->pull = choose_pull(load, &idle);
	ret->why = CT_W_OFF;
	if (p->mode == CT_OFF)
		return;
	ret->apply = true;
	ret->mt = true;
	if (p->mode == CT_FIXED) {
		ct_fixed(s, p, ret);
		return;
	}
	ret->threads = s->threads;
	ret->changed = true;
	ret->why = CT_W_START;
	s->started = true;
}

void ct_step(struct ct_state *s, const struct ct_params *p, const struct ct_load *load,
	     const struct ct_sample *sample, uint64_t now_ns, struct ct_decision *ret)
{
	unsigned int idle, cap, lo = ct_min_threads(p), before = s->threads;
	bool fresh = false, busy;
	int pull = choose_pull(load, &idle);

	memset(ret, 0, sizeof(*ret));
	ret->pull = pull;
	if (p->mode == CT_OFF) {
		ret->why = CT_W_OFF;
		return;
	}
	ret->apply = true;
	ret->mt = true;
	if (p->mode == CT_FIXED) {
		ct_fixed(s, p, ret);
		return;
	}

	cap = clamp(idle, lo, ct_max_threads(p));
	busy = load->psi_some_avg10_x100 > p->psi_busy_pct * 100u || idle == 0;

	/* Throughput at the current count, once enough has moved. */
	if (sample && sample->ns) {
		s->acc_bytes += sample->bytes;
		s->acc_ns += sample->ns;
	}
	if (s->acc_bytes >= p->min_sample_bytes && s->acc_ns) {
		s->bps[s->threads] = (uint64_t)((unsigned __int128)s->acc_bytes * NSEC_PER_SEC /
						s->acc_ns);
		s->acc_bytes = s->acc_ns = 0;
		fresh = true;
	}

	ret->why = s->started ? CT_W_HOLD : CT_W_START;
	if (busy) {
		s->busy = true;
		s->prev = 0;	/* a plateau found before stays: load passes */
		if (s->threads > lo) {
			s->threads = clamp(s->threads / 2, lo, cap);
			ret->why = CT_W_BUSY;
		}
	} else if (s->busy) {
		s->busy = false;
		s->threads = clamp(s->good, lo, cap);
		s->prev = 0;
		ret->why = CT_W_RECOVER;
	} else if (s->threads > cap) {
		s->threads = cap;
		s->prev = 0;
		ret->why = CT_W_FEW_IDLE;
	} else if (fresh) {
		if (s->prev && s->bps[s->threads] * 100 <
				       s->bps[s->prev] * (100 + (uint64_t)p->gain_pct)) {
			/* The doubling did not pay: back, and stay there. */
			s->ceiling = s->prev;
			s->threads = s->prev;
			s->good = s->prev;
			s->prev = 0;
			s->settled_ns = now_ns;
			ret->why = CT_W_PLATEAU;
		} else {
			s->good = s->threads;
			if (s->threads < cap && !s->ceiling) {
				s->prev = s->threads;
				s->threads = clamp(s->threads * 2, lo, cap);
				ret->why = CT_W_PROBE;
			}
		}
	} else if (s->ceiling && s->threads < cap && now_ns - s->settled_ns >= p->reprobe_ns) {
		s->ceiling = 0;
		s->prev = s->threads;
		s->threads = clamp(s->threads * 2, lo, cap);
		ret->why = CT_W_REPROBE;
	}
	if (s->threads != before) {
		/* A new count starts a new measurement. */
		s->acc_bytes = s->acc_ns = 0;
	}
	ret->threads = s->threads;
	ret->changed = !s->started || s->threads != before;
	s->started = true;
}
