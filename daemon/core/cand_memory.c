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

_Static_assert(sizeof(struct cand_denied) == 88, "a denied range is 88 bytes");

#define PAGES_PER_RANGE (HOT_HUGE_SIZE / HOT_PAGE_SIZE)

static struct cand_denied *denied_slot(struct cand_ranges *r, pid_t pid, uint64_t base)
{
	return &r->denied[range_slot(pid, base) & (CAND_DENIED_SLOTS - 1)];
}

/* The slot of @pid's range at @base while its marks hold at @now_ns, else NULL. */
static struct cand_denied *denied_find(struct cand_ranges *r, pid_t pid, uint64_t base,
				       uint64_t now_ns)
{
	struct cand_denied *d = denied_slot(r, pid, base);

	if (!d->until || d->pid != pid || d->base != base || now_ns >= cand_ns(d->until))
		return NULL;
	return d;
}

void cand_denied_mark(struct cand_ranges *r, pid_t pid, uint64_t addr, uint32_t nr_pages,
		      int node, int err, uint64_t now_ns)
{
	uint64_t base = addr & ~(HOT_HUGE_SIZE - 1), delay;
	struct cand_denied *d = denied_slot(r, pid, base);
	uint32_t first = (uint32_t)((addr - base) / HOT_PAGE_SIZE), t;

	if (d->until && d->pid == pid && d->base == base && d->node == node) {
		/* Refused again after its retry: wait twice as long. */
		if (now_ns >= cand_ns(d->until)) {
			memset(d->pages, 0, sizeof(d->pages));
			if (d->tries < 5)
				d->tries++;
		}
	} else {
		memset(d, 0, sizeof(*d));
		d->pid = pid;
		d->base = base;
		d->node = (int16_t)node;
	}
	d->err = (uint8_t)(err < 0 ? -err : err);
	delay = CAND_DENIED_RETRY_NS << d->tries;
	if (delay > CAND_DENIED_RETRY_MAX_NS)
		delay = CAND_DENIED_RETRY_MAX_NS;
	/* cand_ns() rounds down: the retry comes no earlier than asked. */
	t = cand_time(now_ns + delay);
	d->until = t < UINT32_MAX ? t + 1 : t;
	for (uint32_t i = first; i < first + nr_pages && i < PAGES_PER_RANGE; i++)
		d->pages[i / 64] |= 1ull << (i % 64);
}

bool cand_denied_skip(struct cand_ranges *r, pid_t pid, uint64_t addr, int node,
		      uint64_t now_ns)
{
	uint64_t base = addr & ~(HOT_HUGE_SIZE - 1);
	struct cand_denied *d = denied_find(r, pid, base, now_ns);
	uint32_t i = (uint32_t)((addr - base) / HOT_PAGE_SIZE);
	uint64_t bit = 1ull << (i % 64);

	if (!d || !(d->pages[i / 64] & bit))
		return false;
	if (d->node == node)
		return true;
	d->pages[i / 64] &= ~bit; /* it moved: something changed */
	return false;
}

bool cand_denied_whole(struct cand_ranges *r, pid_t pid, uint64_t addr, int node,
		       uint64_t now_ns)
{
	struct cand_denied *d = denied_find(r, pid, addr & ~(HOT_HUGE_SIZE - 1), now_ns);

	if (!d)
		return false;
	if (d->node != node) {
		memset(d->pages, 0, sizeof(d->pages));
		return false;
	}
	for (size_t w = 0; w < PAGES_PER_RANGE / 64; w++)
		if (d->pages[w])
			return true;
	return false;
}
