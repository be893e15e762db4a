// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "pipeline.h"

struct pipeline *pipe_get(struct tierd *d)
{
	if (!d->pipe)
		d->pipe = calloc(1, sizeof(*d->pipe));
	return d->pipe;
}

const struct pipe_proc *pipe_proc(const struct pipeline *p, pid_t pid)
{
	int lo = 0, hi = p->nr_procs;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (p->procs[mid].pid == pid)
			return &p->procs[mid];
		if (p->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

_Static_assert(sizeof(struct pipe_range) == 32, "the range memory is 32 bytes a slot");

static uint32_t range_slot(pid_t pid, uint64_t base)
{
	uint64_t h = (base >> HOT_HUGE_SHIFT) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)pid * 0xff51afd7ed558ccdull;

	return (uint32_t)(h >> 40) & (PIPE_RANGE_SLOTS - 1);
}

struct pipe_range *pipe_range(struct pipeline *p, pid_t pid, uint64_t addr)
{
	uint64_t base = addr & ~(HOT_HUGE_SIZE - 1);
	struct pipe_range *r = &p->ranges[range_slot(pid, base)];

	if (r->pid != pid || r->base != base) {
		memset(r, 0, sizeof(*r));
		r->pid = pid;
		r->base = base;
	}
	return r;
}

const struct pipe_range *pipe_range_peek(const struct pipeline *p, pid_t pid,
					 uint64_t addr)
{
	uint64_t base = addr & ~(HOT_HUGE_SIZE - 1);
	const struct pipe_range *r = &p->ranges[range_slot(pid, base)];

	return r->pid == pid && r->base == base ? r : NULL;
}
