/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A scripted sampler for tests: probe and start results are set by the test,
 * samples are queued with sampler_fake_push() and come out of drain() in
 * order, and so do idle ranges (sampler_fake_idle()), into the set given
 * to idle_into().  It records the targets it was given.
 */
#ifndef TIERD_FAKE_SAMPLER_H
#define TIERD_FAKE_SAMPLER_H

#include "sampler.h"

#define SAMPLER_FAKE_MAX 64

struct sampler_fake {
	struct sampler base;
	const char *name;
	int probe_ret;		/* what probe() returns */
	int start_ret;		/* what start() returns */
	const char *why;	/* the reason given when either fails */
	bool started, stopped;
	int probes, starts;
	pid_t targets[SAMPLER_FAKE_MAX];
	size_t ntargets;
	struct {
		pid_t pid;
		uint64_t addr, len;
		double weight;
	} q[SAMPLER_FAKE_MAX];
	size_t nq;
	struct idle_set *idle;	/* idle_into()'s */
	struct {
		pid_t pid;
		uint64_t start, end, since_ns;
	} iq[SAMPLER_FAKE_MAX];
	size_t niq;		/* a drain with any replaces the idle set */
	int peek_ret;		/* what peek() returns; with 1 it fills in peek */
	struct sampler_peek peek;
	int peeks;
	/* peek_arm(): calls, whether the last one armed, with what */
	int arms;
	bool armed;
	uint64_t arm_at_ns, arm_min_bytes;
	uint32_t arm_share;
	unsigned int pace;	/* set_pace()'s last slowdown (0: never called) */
	int peek_fd;		/* what peek_fd() returns (-1 at init: -EOPNOTSUPP) */
	uint32_t peek_gen;
	struct sampler_status st;
};

/* A fake named @name ("fake-bpf", ...) that probes and starts fine. */
void sampler_fake_init(struct sampler_fake *f, const char *name);
/* Queue one sample; -ENOSPC when the queue is full. */
int sampler_fake_push(struct sampler_fake *f, pid_t pid, uint64_t addr, uint64_t len,
		      double weight);
/* Queue one idle range for the next drain's report; -ENOSPC when full. */
int sampler_fake_idle(struct sampler_fake *f, pid_t pid, uint64_t start, uint64_t end,
		      uint64_t since_ns);

#endif
