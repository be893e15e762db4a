// SPDX-License-Identifier: GPL-2.0-only
/* What candidate selection keeps between ticks (candidates.h): the tracked
 * processes and the range memory. */
#include <string.h>

#include "candidates.h"

const struct cand_proc *cand_proc_find(const struct cand_procs *p, pid_t pid)
{
	int lo = 0, hi = p->nr;

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

_Static_assert(sizeof(struct cand_range) == 32, "the range memory is 32 bytes a slot");

static uint32_t range_slot(pid_t pid, uint64_t base)
{
	uint64_t h = (base >> HOT_HUGE_SHIFT) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)pid * 0xff51afd7ed558ccdull;

	return (uint32_t)(h >> 40) & (CAND_RANGE_SLOTS - 1);
}

struct cand_range *cand_range(struct cand_ranges *r, pid_t pid, uint64_t addr)
{
	uint64_t base = addr & ~(HOT_HUGE_SIZE - 1);
	struct cand_range *s = &r->slot[range_slot(pid, base)];

	if (s->pid != pid || s->base != base) {
		memset(s, 0, sizeof(*s));
		s->pid = pid;
		s->base = base;
	}
	return s;
}

const struct cand_range *cand_range_peek(const struct cand_ranges *r, pid_t pid,
					 uint64_t addr)
{
	uint64_t base = addr & ~(HOT_HUGE_SIZE - 1);
	const struct cand_range *s = &r->slot[range_slot(pid, base)];

	return s->pid == pid && s->base == base ? s : NULL;
}
