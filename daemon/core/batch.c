// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

struct batcher {
	struct batch_params params;
	size_t max;
	uint32_t *order;	/* accepted intent indices, then sorted */
	struct batch_plan plan;
	const struct policy_intent *cur;	/* for the comparator */
};

void batch_params_default(struct batch_params *p, uint32_t kernel_batch_pages,
			  const struct page_geom *g)
{
	memset(p, 0, sizeof(*p));
	p->batch_pages = kernel_batch_pages > BATCH_MIN_DEFAULT_PAGES ? kernel_batch_pages :
									BATCH_MIN_DEFAULT_PAGES;
	p->page_size = (uint32_t)g->base;
}

int batch_new(const struct batch_params *params, size_t max_intents, struct batcher **ret)
{
	struct batcher *b;
	size_t n = max_intents ? max_intents : 1;

	if (!params->batch_pages || !params->page_size)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->params = *params;
	b->max = max_intents;
	b->order = calloc(n, sizeof(*b->order));
	b->plan.batches = calloc(n, sizeof(*b->plan.batches));
	b->plan.addrs = calloc(n, sizeof(*b->plan.addrs));
	b->plan.nodes = calloc(n, sizeof(*b->plan.nodes));
	b->plan.status = calloc(n, sizeof(*b->plan.status));
	b->plan.intent = calloc(n, sizeof(*b->plan.intent));
	if (!b->order || !b->plan.batches || !b->plan.addrs || !b->plan.nodes ||
	    !b->plan.status || !b->plan.intent) {
		batch_free(b);
		return -ENOMEM;
	}
	*ret = b;
	return 0;
}

void batch_free(struct batcher *b)
{
	if (!b)
		return;
	free(b->order);
	free(b->plan.batches);
	free(b->plan.addrs);
	free(b->plan.nodes);
	free(b->plan.status);
	free(b->plan.intent);
	free(b);
}

/*
 * Demotions first, then the promotions of heat, then the fill's (a tick
 * its time budget or -EBUSY cuts short leaves the fill, not the hot set,
 * for later: where copies are slow, a fill sorted among them by address
 * holds the hot set back as long as the fill takes); each by pid, target
 * node and address.
 */
static int cmp_entry(const void *a, const void *b, void *arg)
{
	const struct policy_intent *in = arg;
	const struct policy_intent *x = &in[*(const uint32_t *)a];
	const struct policy_intent *y = &in[*(const uint32_t *)b];

	if (x->kind != y->kind)
		return x->kind == POLICY_DEMOTE ? -1 : 1;
	if ((x->reason == POLICY_R_FILL) != (y->reason == POLICY_R_FILL))
		return x->reason == POLICY_R_FILL ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->to_node != y->to_node)
		return x->to_node < y->to_node ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* The THP before a base page at the same address, so it covers it. */
	if (x->nr_pages != y->nr_pages)
		return x->nr_pages > y->nr_pages ? -1 : 1;
	return 0;
}

/* The addresses @it takes in the plan: one per page of a range of base
 * pages, else one (a base page, or a THP's head). */
static size_t addrs_of(const struct policy_intent *it)
{
	return it->flags & POLICY_F_PAGES ? it->nr_pages : 1;
}

static bool same_group(const struct policy_intent *x, const struct policy_intent *y)
{
	return x->kind == y->kind && x->pid == y->pid && x->to_node == y->to_node &&
	       (x->reason == POLICY_R_FILL) == (y->reason == POLICY_R_FILL);
}

int batch_build(struct batcher *b, const struct policy_intent *intents, size_t n,
		const struct batch_plan **ret_plan)
{
	const struct batch_params *bp = &b->params;
	struct batch_plan *pl = &b->plan;
	uint64_t pages = 0, bytes = 0, cover_end = 0;
	size_t nr = 0, entries = 0;
	const struct policy_intent *prev = NULL;
	struct batch *cur = NULL;

	if (n > b->max)
		return -EINVAL;
	pl->nr_batches = pl->nr_entries = 0;
	pl->pages = pl->bytes = pl->deferred = pl->duplicates = 0;

	/* 1. The tick budget, in priority order. */
	for (size_t i = 0; i < n; i++) {
		uint64_t np = intents[i].nr_pages, nb = np * bp->page_size;
		size_t na = addrs_of(&intents[i]);

		if ((bp->tick_max_pages && pages + np > bp->tick_max_pages) ||
		    (bp->tick_max_bytes && bytes + nb > bp->tick_max_bytes) ||
		    entries + na > b->max) {
			pl->deferred++;
			continue;
		}
		pages += np;
		bytes += nb;
		entries += na;
		b->order[nr++] = (uint32_t)i;
	}

	/* 2. Group and sort; 3. cut, dropping pages already covered. */
	qsort_r(b->order, nr, sizeof(*b->order), cmp_entry, (void *)intents);
	pages = bytes = 0;
	for (size_t k = 0; k < nr; k++) {
		const struct policy_intent *it = &intents[b->order[k]];
		uint64_t np = it->nr_pages;
		size_t na = addrs_of(it);

		if (prev && same_group(prev, it) && it->addr < cover_end) {
			pl->duplicates++;
			continue;
		}
		if (!cur || !same_group(prev, it) || cur->nr_pages + np > bp->batch_pages) {
			cur = &pl->batches[pl->nr_batches++];
			cur->pid = it->pid;
			cur->node = it->to_node;
			cur->promote = it->kind == POLICY_PROMOTE;
			cur->first = pl->nr_entries;
			cur->count = 0;
			cur->nr_pages = 0;
		}
		for (size_t a = 0; a < na; a++) {
			size_t e = pl->nr_entries++;

			pl->addrs[e] = (void *)(uintptr_t)(it->addr + a * bp->page_size);
			pl->nodes[e] = it->to_node;
			pl->status[e] = 0;
			pl->intent[e] = b->order[k];
		}
		cur->count += na;
		cur->nr_pages += np;
		pages += np;
		bytes += np * bp->page_size;
		if (!prev || !same_group(prev, it) || it->addr + np * bp->page_size > cover_end)
			cover_end = it->addr + np * bp->page_size;
		prev = it;
	}
	pl->pages = pages;
	pl->bytes = bytes;
	*ret_plan = pl;
	return 0;
}
