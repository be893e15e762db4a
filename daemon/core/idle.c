// SPDX-License-Identifier: GPL-2.0-only
/* Idle memory ranges (idle.h): a bounded, sorted set, replaced per report. */
#include <errno.h>
#include <string.h>

#include "idle.h"

_Static_assert(sizeof(struct idle_range) == 32, "an idle range is 32 bytes");

void idle_init(struct idle_set *s, struct idle_range *mem, uint32_t cap)
{
	memset(s, 0, sizeof(*s));
	s->r = mem;
	s->cap = mem ? cap : 0;
}

void idle_begin(struct idle_set *s)
{
	s->n = 0;
	s->bytes = 0;
	s->dropped = 0;
	s->reports++;
}

static bool before(pid_t pid, uint64_t start, const struct idle_range *r)
{
	return pid < r->pid || (pid == r->pid && start < r->start);
}

int idle_add(struct idle_set *s, pid_t pid, uint64_t start, uint64_t end, uint64_t since_ns)
{
	uint32_t i = s->n;

	if (pid <= 0 || end <= start)
		return -EINVAL;
	/* In order, the common case, costs one compare; else the place from
	 * the end (a report out of order costs O(n) per range). */
	while (i > 0 && before(pid, start, &s->r[i - 1]))
		i--;
	if ((i > 0 && s->r[i - 1].pid == pid && s->r[i - 1].end > start) ||
	    (i < s->n && s->r[i].pid == pid && s->r[i].start < end))
		return -EINVAL;
	/* Appended right after the same pid's last range: one range, idle
	 * since the later of the two.  A region tierd fits to a range
	 * (core/damon_fit.c) starts wherever DAMON split, not on a 2 MiB
	 * boundary, so whole ranges are only in runs of idle regions. */
	if (i == s->n && i > 0 && s->r[i - 1].pid == pid && s->r[i - 1].end == start) {
		struct idle_range *last = &s->r[i - 1];

		last->end = end;
		if (since_ns > last->since_ns)
			last->since_ns = since_ns;
		s->bytes += end - start;
		return 0;
	}
	if (s->n == s->cap) {
		s->dropped++;
		return -ENOSPC;
	}
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
	s->r[i] = (struct idle_range){ .start = start, .end = end, .since_ns = since_ns,
				       .pid = pid };
	s->n++;
	s->bytes += end - start;
	return 0;
}

uint32_t idle_find(const struct idle_set *s, pid_t pid, uint64_t addr)
{
	uint32_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct idle_range *r = &s->r[mid];

		if (r->pid < pid || (r->pid == pid && r->end <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
