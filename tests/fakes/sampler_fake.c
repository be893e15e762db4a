// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hot_table.h"
#include "idle.h"
#include "sampler_fake.h"

#define FAKE(s) ((struct sampler_fake *)(s))

static int fake_probe(struct sampler *s, char *why, size_t len)
{
	struct sampler_fake *f = FAKE(s);

	f->probes++;
	if (f->probe_ret && f->why)
		snprintf(why, len, "%s", f->why);
	return f->probe_ret;
}

static int fake_start(struct sampler *s, char *why, size_t len)
{
	struct sampler_fake *f = FAKE(s);

	f->starts++;
	if (f->start_ret) {
		if (f->why)
			snprintf(why, len, "%s", f->why);
		return f->start_ret;
	}
	f->started = true;
	f->stopped = false;
	return 0;
}

static int fake_set_targets(struct sampler *s, const pid_t *pids, size_t n)
{
	struct sampler_fake *f = FAKE(s);

	if (n > SAMPLER_FAKE_MAX)
		return -E2BIG;
	memcpy(f->targets, pids, n * sizeof(*pids));
	f->ntargets = n;
	return 0;
}

static int fake_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	struct sampler_fake *f = FAKE(s);
	int n = 0;

	if (!f->started)
		return -ENOTCONN;
	for (size_t i = 0; i < f->nq; i++) {
		int r = hot_record(t, f->q[i].pid, f->q[i].addr, f->q[i].len, f->q[i].weight,
				   now_ns);

		if (r < 0)
			return r;
		n += r;
	}
	f->st.samples += f->nq;
	f->st.records += n;
	f->st.drains++;
	f->nq = 0;
	if (f->idle && f->niq) {
		idle_begin(f->idle);
		for (size_t i = 0; i < f->niq; i++)
			idle_add(f->idle, f->iq[i].pid, f->iq[i].start, f->iq[i].end,
				 f->iq[i].since_ns);
	}
	f->niq = 0;
	return n;
}

static int fake_idle_into(struct sampler *s, struct idle_set *set)
{
	FAKE(s)->idle = set;
	return 0;
}

static int fake_peek(struct sampler *s, const struct hot_table *t, uint64_t now_ns,
		     struct sampler_peek *ret)
{
	struct sampler_fake *f = FAKE(s);

	f->peeks++;
	if (f->peek_ret == 1)
		*ret = f->peek;
	return f->peek_ret;
}

static int fake_peek_arm(struct sampler *s, const struct hot_table *t, uint64_t at_ns,
			 uint64_t min_bytes, uint32_t share)
{
	struct sampler_fake *f = FAKE(s);

	f->arms++;
	f->armed = t != NULL;
	f->arm_at_ns = at_ns;
	f->arm_min_bytes = min_bytes;
	f->arm_share = share;
	return 0;
}

static int fake_peek_fd(struct sampler *s, uint32_t *gen)
{
	struct sampler_fake *f = FAKE(s);

	if (f->peek_fd < 0)
		return -EOPNOTSUPP;
	*gen = f->peek_gen;
	return f->peek_fd;
}

static int fake_set_pace(struct sampler *s, unsigned int slowdown)
{
	FAKE(s)->pace = slowdown;
	return 0;
}

static void fake_stop(struct sampler *s)
{
	struct sampler_fake *f = FAKE(s);

	if (f->started)
		f->stopped = true;
	f->started = false;
}

static int fake_fd(struct sampler *s)
{
	return -1;
}

static void fake_describe(struct sampler *s, struct sampler_status *ret)
{
	struct sampler_fake *f = FAKE(s);

	*ret = f->st;
	ret->name = f->name;
	ret->running = f->started;
	snprintf(ret->why, sizeof(ret->why), "%s", f->started ? "scripted" : "stopped");
	ret->cost_source = "none";
}

static void fake_free(struct sampler *s)
{
	fake_stop(s);
}

static const struct sampler_ops fake_ops = {
	.name = "fake",
	.probe = fake_probe,
	.start = fake_start,
	.set_targets = fake_set_targets,
	.drain = fake_drain,
	.peek = fake_peek,
	.peek_arm = fake_peek_arm,
	.peek_fd = fake_peek_fd,
	.idle_into = fake_idle_into,
	.set_pace = fake_set_pace,
	.stop = fake_stop,
	.fd = fake_fd,
	.describe = fake_describe,
	.free = fake_free,
};

void sampler_fake_init(struct sampler_fake *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->base.ops = &fake_ops;
	f->name = name;
	f->peek_fd = -1;
}

int sampler_fake_push(struct sampler_fake *f, pid_t pid, uint64_t addr, uint64_t len,
		      double weight)
{
	if (f->nq == SAMPLER_FAKE_MAX)
		return -ENOSPC;
	f->q[f->nq].pid = pid;
	f->q[f->nq].addr = addr;
	f->q[f->nq].len = len;
	f->q[f->nq].weight = weight;
	f->nq++;
	return 0;
}

int sampler_fake_idle(struct sampler_fake *f, pid_t pid, uint64_t start, uint64_t end,
		      uint64_t since_ns)
{
	if (f->niq == SAMPLER_FAKE_MAX)
		return -ENOSPC;
	f->iq[f->niq].pid = pid;
	f->iq[f->niq].start = start;
	f->iq[f->niq].end = end;
	f->iq[f->niq].since_ns = since_ns;
	f->niq++;
	return 0;
}
