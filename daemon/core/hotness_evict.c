// SPDX-License-Identifier: GPL-2.0-only
/*
 * Eviction from a full hotness table: the coldest of a sample, kept in a
 * pool of candidates (hotness.c's essay says why and how close it gets).
 */
#include <string.h>

#include "hotness_int.h"

static uint32_t hot_rand_below(struct hot_table *t, uint32_t n)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return (uint32_t)(((t->rng >> 32) * n) >> 32);
}

/* Restore the pool's ascending order after pool[i] changed. */
static void pool_fix(struct hot_table *t, uint32_t i)
{
	struct hot_cand c = t->pool[i];

	while (i > 0 && t->pool[i - 1].v > c.v) {
		t->pool[i] = t->pool[i - 1];
		i--;
	}
	while (i + 1 < t->npool && t->pool[i + 1].v < c.v) {
		t->pool[i] = t->pool[i + 1];
		i++;
	}
	t->pool[i] = c;
}

void hot_pool_del(struct hot_table *t, uint32_t i)
{
	memmove(&t->pool[i], &t->pool[i + 1], (t->npool - i - 1) * sizeof(t->pool[0]));
	t->npool--;
}

/* Offer the entry at @pos: the pool keeps the HOT_EVICT_POOL coldest seen. */
static void pool_offer(struct hot_table *t, uint32_t pos)
{
	struct hot_cand c = { .key = t->slots[pos].key, .v = t->slots[pos].v, .pos = pos };
	uint32_t i;

	if (t->npool == HOT_EVICT_POOL && c.v >= t->pool[HOT_EVICT_POOL - 1].v)
		return;	/* the common case once the pool is full */
	for (i = 0; i < t->npool; i++)
		if (t->pool[i].key == c.key)
			break;
	if (i == t->npool && t->npool < HOT_EVICT_POOL)
		t->npool++;
	else if (i == t->npool)
		i--;	/* replaces the warmest */
	t->pool[i] = c;
	pool_fix(t, i);
}

/*
 * Offer the used slots of @lines random groups of EVICT_GROUP slots: one
 * cache miss brings a 64-byte line of four slots, and the entries in it are
 * unrelated (placed by hash), so a group is as good a sample as four misses.
 * Returns how many were offered.
 */
static uint32_t pool_sample(struct hot_table *t, uint32_t lines)
{
	uint32_t ngroups = (t->nslots + EVICT_GROUP - 1) / EVICT_GROUP, got = 0;

	for (uint32_t l = 0; l < lines; l++) {
		uint32_t pos = hot_rand_below(t, ngroups) * EVICT_GROUP;

		for (uint32_t k = 0; k < EVICT_GROUP && pos < t->nslots; k++, pos++) {
			if (t->slots[pos].key) {
				pool_offer(t, pos);
				got++;
			}
		}
	}
	return got;
}

/*
 * The slot to evict from the full table.  A candidate's stored v is a lower
 * bound of its entry's v (values only grow, and rebases scale both alike), so
 * the first candidate whose entry still holds exactly its v is the coldest
 * the pool knows of.
 */uint32_t hot_victim(struct hot_table *t)
{
	uint32_t best = PID_NONE;

	if (t->nslots <= EVICT_SCAN_ALL) {
		for (uint32_t i = 0; i < t->nslots; i++)
			if (t->slots[i].key && (best == PID_NONE || t->slots[i].v < t->slots[best].v))
				best = i;
		return best;
	}
	pool_sample(t, EVICT_LINES);
	for (;;) {
		struct hot_cand *c = &t->pool[0];

		if (!t->npool) {
			pool_sample(t, 1);
			continue;
		}
		if (t->slots[c->pos].key != c->key && !hot_probe(t, c->key, &c->pos)) {
			hot_pool_del(t, 0);	/* gone: forgotten, folded or moved away */
			continue;
		}
		if (t->slots[c->pos].v != c->v) {
			c->v = t->slots[c->pos].v;	/* sampled again since */
			pool_fix(t, 0);
			continue;
		}
		best = c->pos;
		hot_pool_del(t, 0);
		return best;
	}
}
