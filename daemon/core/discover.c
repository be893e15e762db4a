// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether a new hot set is being found (discover.h).
 */
#include "discover.h"

/* The least share measured in slot @cur and the ones before it within
 * DISCOVER_SLOTS; < 0: none. */
static double quietest(const struct discover *d, uint64_t cur)
{
	double q = -1.0;

	for (int i = 0; i < DISCOVER_SLOTS; i++) {
		if (!d->slot[i] || cur - d->slot[i] >= DISCOVER_SLOTS)
			continue;
		if (q < 0.0 || d->min[i] < q)
			q = d->min[i];
	}
	return q;
}

bool discover_step(struct discover *d, uint64_t samples, uint64_t fresh, uint64_t now_ns)
{
	uint64_t cur = now_ns / DISCOVER_SLOT_NS + 1;
	int i = (int)(cur % DISCOVER_SLOTS);
	double n, expect;
	bool news;

	if (!d->started || samples < d->samples || fresh < d->fresh) {
		d->samples = samples;
		d->fresh = fresh;
		d->at_ns = now_ns;
		d->started = true;
		return d->on;
	}
	if (samples - d->samples < DISCOVER_MIN_SAMPLES)
		return d->on;
	n = (double)(samples - d->samples);
	d->share = (double)(fresh - d->fresh) / n;
	d->quiet = quietest(d, cur);
	expect = d->quiet * n > DISCOVER_LEAST_FRESH ? d->quiet * n : DISCOVER_LEAST_FRESH;
	news = d->quiet >= 0.0 && d->share * n >= DISCOVER_RATIO * expect;
	if (news && !d->on)
		d->since_ns = d->at_ns;
	d->on = news;
	d->samples = samples;
	d->fresh = fresh;
	d->at_ns = now_ns;
	if (d->slot[i] != cur || d->share < d->min[i]) {
		d->slot[i] = cur;
		d->min[i] = (float)d->share;
	}
	return d->on;
}
