// SPDX-License-Identifier: GPL-2.0-only
/*
 * Busy back-off.  A page the kernel holds (a pipe buffer's reference, an
 * O_DIRECT target, a page it could not isolate) stays hot, so candidate
 * selection proposes it every tick, and every call it is in fails it
 * again: a workload holding 1024 pages of a 16 Ki-page hot set would have
 * 1024 busy pages in the calls of every tick for as long as it holds
 * them, each a failed isolation in the kernel and an entry in a call.
 *
 * So a busy page is remembered, with the node it was busy on, and left
 * out of the candidates (account_hold_back()) until its retry time:
 * busy_delay_ns after the first -EBUSY, doubling each time it is busy
 * again when retried, up to busy_backoff_max_ns.  With the defaults (1 s,
 * 64 s) a page held for a minute is tried 6 times (0, 1, 3, 7, 15 and
 * 31 s after its first try), not on each of its 120 ticks of 500 ms; one
 * held for an hour, 62 times.  The retry queue (account.c) proposes it at
 * that time whether it is still hot or not; while it is hot, candidate
 * selection does too (the batcher keeps one of the two).  A busy page that
 * is proposed before its time anyway (one page of a range of base
 * pages, which is one candidate and not looked up) keeps its schedule.
 *
 * What ends a back-off at once: the page moved (to its target or
 * anywhere: any status >= 0), it is found on another node than the one it
 * was busy on, or it is gone (-ENOENT, -EFAULT, -ESRCH).  A page not busy
 * again within busy_backoff_max_ns of its retry time (it cooled and was
 * not proposed) starts over.
 *
 * The memory is a cache of busy_slots pages in sets of ACCT_BUSY_WAYS,
 * by (pid, address): a page that finds its set full takes the place of
 * the one due first, which is then proposed as any other page (and,
 * busy again, starts over at busy_delay_ns).  24 bytes a page, 96 KiB for
 * the default 4096; a look-up (one set) per accounted page and per
 * candidate of one page or one THP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "account_int.h"

#define MAX_SHIFT 20 /* tries beyond which the delay is the cap anyway */

_Static_assert(sizeof(struct acct_busy) == 24, "a busy page is 24 bytes");

int acct_busy_new(struct account *a)
{
	uint32_t slots = a->params.busy_slots;

	if (!slots)
		return 0;
	if (slots < ACCT_BUSY_WAYS || (slots & (slots - 1)))
		return -EINVAL;
	a->busy = calloc(slots, sizeof(*a->busy));
	if (!a->busy)
		return -ENOMEM;
	a->busy_sets = slots / ACCT_BUSY_WAYS;
	return 0;
}

/* The first way of the set of @pid's page at @addr. */
static struct acct_busy *busy_set(const struct account *a, int pid, uint64_t addr)
{
	uint64_t h = (addr / a->params.page_size) ^ ((uint64_t)(uint32_t)pid << 40);

	h *= 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio: the high bits mix all */
	return &a->busy[((h >> 32) & (a->busy_sets - 1)) * ACCT_BUSY_WAYS];
}

/* A slot whose page is not busy again within the cap of its retry time. */
static bool busy_stale(const struct account *a, const struct acct_busy *b, uint64_t now_ns)
{
	return !b->until_ns || now_ns >= b->until_ns + a->params.busy_backoff_max_ns;
}

static struct acct_busy *busy_find(const struct account *a, int pid, uint64_t addr,
				   uint64_t now_ns)
{
	struct acct_busy *set;

	if (!a->busy)
		return NULL;
	set = busy_set(a, pid, addr);
	for (int w = 0; w < ACCT_BUSY_WAYS; w++)
		if (set[w].addr == addr && set[w].pid == pid && !busy_stale(a, &set[w], now_ns))
			return &set[w];
	return NULL;
}

/* A slot for a page new to the memory: a free or stale one, else the one
 * due first. */
static struct acct_busy *busy_claim(struct account *a, int pid, uint64_t addr,
				    uint64_t now_ns)
{
	struct acct_busy *set = busy_set(a, pid, addr), *v = set;

	for (int w = 0; w < ACCT_BUSY_WAYS; w++) {
		if (busy_stale(a, &set[w], now_ns))
			return &set[w];
		if (set[w].until_ns < v->until_ns)
			v = &set[w];
	}
	return v;
}

static uint8_t order_of(uint32_t nr_pages)
{
	uint8_t o = 0;

	while (o < 31 && (1u << (o + 1)) <= nr_pages)
		o++;
	return o;
}

uint64_t acct_busy_mark(struct account *a, const struct policy_intent *it, uint64_t now_ns)
{
	struct acct_busy *b = busy_find(a, it->pid, it->addr, now_ns);
	uint64_t delay;

	if (!a->busy)
		return 0;
	if (b && b->node == it->from_node) {
		/* Proposed before its time with a range: no try of its own. */
		if (now_ns < b->until_ns)
			return b->until_ns;
		if (b->tries < MAX_SHIFT)
			b->tries++;
	} else {
		if (!b)
			b = busy_claim(a, it->pid, it->addr, now_ns);
		b->addr = it->addr;
		b->pid = it->pid;
		b->node = it->from_node;
		b->tries = 0;
		b->order = order_of(it->nr_pages);
	}
	delay = a->params.busy_delay_ns << b->tries;
	if (delay > a->params.busy_backoff_max_ns || delay >> b->tries != a->params.busy_delay_ns)
		delay = a->params.busy_backoff_max_ns;
	b->until_ns = now_ns + delay;
	return b->until_ns;
}

void acct_busy_forget(struct account *a, int pid, uint64_t addr, uint64_t now_ns)
{
	struct acct_busy *b = busy_find(a, pid, addr, now_ns);

	if (b)
		memset(b, 0, sizeof(*b));
}

size_t account_hold_back(struct account *a, struct policy_page *cand, size_t n,
			 uint64_t now_ns, uint64_t *ret_pages)
{
	size_t keep = 0;

	for (size_t i = 0; i < n; i++) {
		const struct policy_page *c = &cand[i];
		struct acct_busy *b = c->flags & POLICY_F_PAGES ?
					      NULL : busy_find(a, c->pid, c->addr, now_ns);

		if (b && b->node != c->node) {
			memset(b, 0, sizeof(*b)); /* it moved: something changed */
			b = NULL;
		}
		if (b && now_ns < b->until_ns) {
			if (ret_pages)
				*ret_pages += c->nr_pages;
			continue;
		}
		cand[keep++] = *c;
	}
	return keep;
}

uint64_t account_busy_pages(const struct account *a, uint64_t now_ns)
{
	uint64_t pages = 0;

	for (size_t i = 0; a->busy && i < a->busy_sets * ACCT_BUSY_WAYS; i++)
		if (a->busy[i].until_ns > now_ns)
			pages += 1ull << a->busy[i].order;
	return pages;
}
