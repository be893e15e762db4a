// SPDX-License-Identifier: GPL-2.0-only
#include "bucket.h"

#define NSEC_PER_SEC 1000000000ull

void bucket_init(struct bucket *b, uint64_t rate_per_s, uint64_t burst, uint64_t now_ns)
{
	b->rate_per_s = rate_per_s;
	b->burst = burst;
	b->tokens = burst;
	b->last_ns = now_ns;
}

static void bucket_refill(struct bucket *b, uint64_t now_ns)
{
	uint64_t dt_ns, add;

	if (now_ns <= b->last_ns)
		return;
	dt_ns = now_ns - b->last_ns;
	/* Split to avoid overflow: rate up to ~1.8e10/s times dt up to ~1e9 ns. */
	add = (dt_ns / NSEC_PER_SEC) * b->rate_per_s +
	      (dt_ns % NSEC_PER_SEC) * b->rate_per_s / NSEC_PER_SEC;
	if (add == 0)
		return;	/* keep last_ns so that slow rates still accumulate */
	b->tokens = add >= b->burst - b->tokens ? b->burst : b->tokens + add;
	b->last_ns = now_ns;
}

uint64_t bucket_avail(struct bucket *b, uint64_t now_ns)
{
	if (b->rate_per_s == 0)
		return UINT64_MAX;
	bucket_refill(b, now_ns);
	return b->tokens;
}

bool bucket_take(struct bucket *b, uint64_t n, uint64_t now_ns)
{
	if (bucket_avail(b, now_ns) < n)
		return false;
	if (b->rate_per_s)
		b->tokens -= n;
	return true;
}

uint64_t bucket_take_upto(struct bucket *b, uint64_t n, uint64_t now_ns)
{
	uint64_t avail = bucket_avail(b, now_ns);

	if (n > avail)
		n = avail;
	if (b->rate_per_s)
		b->tokens -= n;
	return n;
}
