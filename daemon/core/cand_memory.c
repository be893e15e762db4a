// SPDX-License-Identifier: GPL-2.0-only
/* What candidate selection keeps between ticks (candidates.h): the tracked
 * processes and the range memory, and what the memory tells of a range. */
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

bool cand_cgroup_marked(const struct cand_procs *p, const bool *marks, pid_t pid)
{
	const struct cand_proc *proc;

	if (!marks)
		return false;
	proc = cand_proc_find(p, pid);
	return proc && proc->cgroup >= 0 && marks[proc->cgroup];
}

_Static_assert(sizeof(struct cand_range) == 32, "the range memory is 32 bytes a slot");

_Static_assert(CAND_RANGE_SLOTS % CAND_RANGE_WAYS == 0, "whole sets");

/*
 * Zero @len bytes at @p a 4 KiB block at a time, writing only the blocks
 * that are not zero already: reading a page of fresh anonymous memory
 * maps the shared zero page, writing it makes it resident.  The manager's
 * memory comes from calloc(), and its 4 MiB of slots written whole at the
 * start would be resident where a handful of ranges are in use.
 */
static void zero_written(void *p, size_t len)
{
	unsigned char *b = p;

	for (size_t off = 0; off < len; off += 4096) {
		size_t n = len - off < 4096 ? len - off : 4096;
		size_t i = 0;

		while (i < n && !b[off + i])
			i++;
		if (i < n)
			memset(b + off, 0, n);
	}
}

void cand_ranges_init(struct cand_ranges *r, const struct page_geom *g)
{
	zero_written(r, sizeof(*r));
	r->geom = *g;
}

static uint32_t range_slot(const struct cand_ranges *r, pid_t pid, uint64_t base)
{
	uint64_t h = (base >> r->geom.range_shift) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)pid * 0xff51afd7ed558ccdull;

	return (uint32_t)(h >> 32);
}

/*
 * The first slot of the set of @pid's range at @base: the hash's top
 * bits.  Its low ones follow a process's consecutive ranges in steps that
 * hit a quarter of the sets: 98304 ranges of one mapping (192 GiB) would
 * lose 38777 of them from the 128 Ki slots.
 */
static uint32_t range_set(const struct cand_ranges *r, pid_t pid, uint64_t base)
{
	uint64_t sets = CAND_RANGE_SLOTS / CAND_RANGE_WAYS;

	return (uint32_t)((uint64_t)range_slot(r, pid, base) * sets >> 32) * CAND_RANGE_WAYS;
}

/* When tierd last did anything with @s: its latest time, 0 for none. */
static uint32_t last_use(const struct cand_range *s)
{
	uint32_t t = s->last_promote > s->last_demote ? s->last_promote : s->last_demote;

	t = s->fast_seen > t ? s->fast_seen : t;
	return s->low_seen > t ? s->low_seen : t;
}

struct cand_range *cand_range(struct cand_ranges *r, pid_t pid, uint64_t addr)
{
	uint64_t base = page_geom_range_base(&r->geom, addr);
	struct cand_range *set = &r->slot[range_set(r, pid, base)], *victim = set;

	for (uint32_t w = 0; w < CAND_RANGE_WAYS; w++) {
		if (set[w].pid == pid && set[w].base == base)
			return &set[w];
		if (!set[w].pid)
			victim = victim->pid ? &set[w] : victim;
		else if (victim->pid && last_use(&set[w]) < last_use(victim))
			victim = &set[w];
	}
	if (victim->pid)
		r->forgotten++;
	memset(victim, 0, sizeof(*victim));
	victim->pid = pid;
	victim->base = base;
	return victim;
}

const struct cand_range *cand_range_peek(const struct cand_ranges *r, pid_t pid,
					 uint64_t addr)
{
	uint64_t base = page_geom_range_base(&r->geom, addr);
	const struct cand_range *set = &r->slot[range_set(r, pid, base)];

	for (uint32_t w = 0; w < CAND_RANGE_WAYS; w++)
		if (set[w].pid == pid && set[w].base == base)
			return &set[w];
	return NULL;
}

static bool seen_recently(uint32_t seen, uint64_t now_ns)
{
	return seen && now_ns - cand_ns(seen) < CAND_FAST_RECHECK_NS;
}

bool cand_known_fast(const struct cand_ranges *r, const struct hot_entry_view *v,
		     uint64_t now_ns)
{
	const struct cand_range *rg = cand_range_peek(r, v->pid, v->addr);

	return rg && seen_recently(rg->fast_seen, now_ns);
}

/*
 * Nothing of the range to demote: it was seen wholly on the lowest tier
 * within CAND_FAST_RECHECK_NS.  A range promoted in part since then is still
 * taken as low until then, when the cold passes query it again; one tierd
 * promoted is held there by the policy's cool-down about as long.
 */
bool cand_known_low(const struct cand_ranges *r, const struct hot_entry_view *v,
		    uint64_t now_ns)
{
	const struct cand_range *rg = cand_range_peek(r, v->pid, v->addr);

	return rg && seen_recently(rg->low_seen, now_ns);
}

int cand_sample_query(const struct cand_io *io, const struct page_geom *g, pid_t pid,
		      uint64_t base, uint64_t off, int status[CAND_SAMPLE_PAGES])
{
	uint64_t stride = page_geom_range_pages(g) / CAND_SAMPLE_PAGES;
	void *addrs[CAND_SAMPLE_PAGES];

	off %= stride;
	for (size_t i = 0; i < CAND_SAMPLE_PAGES; i++)
		addrs[i] = (void *)(uintptr_t)(base + ((off + i * stride) << g->shift));
	return io->query(io->ctx, pid, CAND_SAMPLE_PAGES, addrs, status);
}

/*
 * A range known fast whose CAND_FAST_RECHECK_NS ran out, or one the memory
 * does not know once it has forgotten ranges: CAND_SAMPLE_PAGES of its
 * base pages (512 in a range of 4 KiB pages), evenly spaced, from an offset that moves
 * on with every recheck period (so every page is looked at within pages /
 * CAND_SAMPLE_PAGES periods), instead of all of them.  True, and known fast
 * again, when every one is still on a fast-tier node; else the caller
 * queries the range whole.  A whole query of every page of a settled hot
 * set, and the policy sorting them all, every 10 s, would be tierd's
 * largest steady cost for nothing: with the sample, the decide path's
 * steady-state CPU in the lab is 0.17% of a vCPU, against 1.6% for whole
 * queries.  A hot set larger than the memory (more than CAND_RANGE_SLOTS
 * ranges: 256 GiB of 2 MiB ranges) has it forget ranges it saw fast, and
 * the hottest of them, queried whole, would take every tick's candidate
 * slots from the ranges still to promote: a range the memory does not
 * know is sampled too once it has forgotten one.  Not for THPs (one query
 * page anyway), processes with a placement rule (a range of theirs on the
 * fast tier may still go to the rule's GPU node: queried whole, it is a
 * candidate once a period), or ranges the memory knows were not fast.
 */
bool cand_still_fast(struct cand_ranges *r, const struct cand_procs *procs,
		     const struct cand_io *io, const struct topology *topo,
		     const struct hot_entry_view *v, uint64_t now_ns)
{
	const struct cand_proc *proc = cand_proc_find(procs, v->pid);
	const struct cand_range *rg = cand_range_peek(r, v->pid, v->addr);
	int status[CAND_SAMPLE_PAGES];

	if ((rg ? !rg->fast_seen : !r->forgotten) || !proc || proc->rule >= 0 ||
	    v->len != r->geom.range ||
	    (io->is_thp && io->is_thp(io->ctx, v->pid, v->addr) == 1))
		return false;
	if (cand_sample_query(io, &r->geom, v->pid, v->addr, now_ns / CAND_FAST_RECHECK_NS,
			      status) < 0)
		return false;
	for (size_t i = 0; i < CAND_SAMPLE_PAGES; i++) {
		int idx = topo_node_index(topo, status[i]);

		if (idx < 0 || !cand_settled_node(topo, idx, topo_fast_tier(topo)))
			return false;
	}
	cand_range(r, v->pid, v->addr)->fast_seen = cand_time(now_ns);
	return true;
}

_Static_assert(sizeof(struct cand_denied) == 88, "a denied range is 88 bytes");

/* The mark of the page at @addr, in its range at @base. */
static uint32_t denied_bit(const struct cand_ranges *r, uint64_t base, uint64_t addr)
{
	uint64_t page = (addr - base) >> r->geom.shift;

	return (uint32_t)(page * CAND_DENIED_BITS >> (r->geom.range_shift - r->geom.shift));
}

static struct cand_denied *denied_slot(struct cand_ranges *r, pid_t pid, uint64_t base)
{
	return &r->denied[range_slot(r, pid, base) & (CAND_DENIED_SLOTS - 1)];
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
	uint64_t base = page_geom_range_base(&r->geom, addr), delay;
	struct cand_denied *d = denied_slot(r, pid, base);
	uint64_t end = addr + ((uint64_t)(nr_pages ? nr_pages - 1 : 0) << r->geom.shift);
	uint32_t first = denied_bit(r, base, addr), last, t;

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
	last = end - base < r->geom.range ? denied_bit(r, base, end) : CAND_DENIED_BITS - 1;
	for (uint32_t i = first; nr_pages && i <= last; i++)
		d->pages[i / 64] |= 1ull << (i % 64);
}

bool cand_denied_skip(struct cand_ranges *r, pid_t pid, uint64_t addr, int node,
		      uint64_t now_ns)
{
	uint64_t base = page_geom_range_base(&r->geom, addr);
	struct cand_denied *d = denied_find(r, pid, base, now_ns);
	uint32_t i = denied_bit(r, base, addr);
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
	struct cand_denied *d = denied_find(r, pid, page_geom_range_base(&r->geom, addr), now_ns);

	if (!d)
		return false;
	if (d->node != node) {
		memset(d->pages, 0, sizeof(d->pages));
		return false;
	}
	for (size_t w = 0; w < CAND_DENIED_BITS / 64; w++)
		if (d->pages[w])
			return true;
	return false;
}
