// SPDX-License-Identifier: GPL-2.0-only
/*
 * The choice of watched processes (watch.h has the model).  Both passes
 * keep a sorted list of the k best so far and insert into it: n * k
 * comparisons, with n at most a thousand processes and k the bound (64)
 * or the reads per scan (16), once per scan.
 */
#include "watch.h"

static uint64_t score(const struct watch_params *p, const struct watch_proc *w)
{
	return w->lower_bytes + (w->watched ? p->stay_bytes : 0);
}

/* @a goes before @b in the choice. */
static bool better(const struct watch_params *p, const struct watch_proc *a,
		   const struct watch_proc *b)
{
	uint64_t sa = score(p, a), sb = score(p, b);

	if (sa != sb)
		return sa > sb;
	if (a->rss_bytes != b->rss_bytes)
		return a->rss_bytes > b->rss_bytes;
	return a->pid < b->pid;
}

/* @a is read before @b: never read, the larger first; then the stalest. */
static bool sooner(const struct watch_proc *a, const struct watch_proc *b)
{
	if (!a->read_ns != !b->read_ns)
		return !a->read_ns;
	if (!a->read_ns)
		return a->rss_bytes != b->rss_bytes ? a->rss_bytes > b->rss_bytes :
						      a->pid < b->pid;
	return a->read_ns != b->read_ns ? a->read_ns < b->read_ns : a->pid < b->pid;
}

/* Insert index @i into the sorted @top of *@len (at most @k). */
static void top_insert(size_t *top, size_t *len, size_t k, size_t i, const void *ctx,
		       bool (*before)(const void *ctx, size_t a, size_t b))
{
	size_t at = *len;

	while (at > 0 && before(ctx, i, top[at - 1]))
		at--;
	if (at >= k)
		return;
	if (*len < k)
		(*len)++;
	for (size_t j = *len - 1; j > at; j--)
		top[j] = top[j - 1];
	top[at] = i;
}

struct choose_ctx {
	const struct watch_params *p;
	const struct watch_proc *procs;
};

static bool choose_before(const void *ctx, size_t a, size_t b)
{
	const struct choose_ctx *c = ctx;

	return better(c->p, &c->procs[a], &c->procs[b]);
}

static bool read_before(const void *ctx, size_t a, size_t b)
{
	const struct watch_proc *procs = ctx;

	return sooner(&procs[a], &procs[b]);
}

/* The bound best, best first, in @top; returns how many. */
static size_t best(const struct watch_params *p, const struct watch_proc *procs, size_t n,
		   size_t *top)
{
	struct choose_ctx c = { p, procs };
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		top_insert(top, &len, p->bound, i, &c, choose_before);
	return len;
}

size_t watch_reads(const struct watch_params *p, const struct watch_proc *procs, size_t n,
		   size_t *scratch, size_t *ret_idx)
{
	size_t len = 0, out = 0;
	uint64_t cut, bytes = 0;

	if (n <= p->bound || !p->bound || !p->max_reads)
		return 0;
	cut = score(p, &procs[scratch[best(p, procs, n, scratch) - 1]]);
	for (size_t i = 0; i < n; i++)
		if (procs[i].watched || procs[i].rss_bytes > cut)
			top_insert(scratch, &len, p->max_reads, i, procs, read_before);
	for (size_t i = 0; i < len; i++) {
		bytes += procs[scratch[i]].rss_bytes;
		if (out && bytes > p->max_read_bytes)
			break;
		ret_idx[out++] = scratch[i];
	}
	return out;
}

size_t watch_choose(const struct watch_params *p, struct watch_proc *procs, size_t n,
		    size_t *scratch)
{
	size_t len;

	if (n <= p->bound) {
		for (size_t i = 0; i < n; i++)
			procs[i].watched = true;
		return n;
	}
	len = best(p, procs, n, scratch);
	for (size_t i = 0; i < n; i++)
		procs[i].watched = false;
	for (size_t i = 0; i < len; i++)
		procs[scratch[i]].watched = true;
	return len;
}
