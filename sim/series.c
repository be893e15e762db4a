// SPDX-License-Identifier: GPL-2.0-only
/* The hot set's fast-tier share over a run, downsampled (series.h). */
#include <string.h>

#include "series.h"

void sim_series_init(struct sim_series *s, uint64_t interval_ns)
{
	memset(s, 0, sizeof(*s));
	s->interval_ns = interval_ns;
	s->stride = 1;
}

/* Halve the points: point k becomes points 2k and 2k + 1. */
static void merge_pairs(struct sim_series *s)
{
	for (uint32_t k = 0; k < s->nr / 2; k++) {
		s->pt[k].sum = s->pt[2 * k].sum + s->pt[2 * k + 1].sum;
		s->pt[k].n = s->pt[2 * k].n + s->pt[2 * k + 1].n;
	}
	s->nr /= 2;
	s->stride *= 2;
	memset(&s->pt[s->nr], 0, (SIM_SERIES_MAX - s->nr) * sizeof(s->pt[0]));
}

void sim_series_add(struct sim_series *s, double share)
{
	uint32_t k = s->intervals / s->stride;

	if (k == SIM_SERIES_MAX) {
		merge_pairs(s);
		k = s->intervals / s->stride;
	}
	if (share >= 0) {
		s->pt[k].sum += share;
		s->pt[k].n++;
	}
	s->intervals++;
	s->nr = k + 1;
}

bool sim_series_point(const struct sim_series *s, uint32_t k, double *ret_share,
		      int64_t *ret_t_ns)
{
	uint64_t first = (uint64_t)k * s->stride, n = s->stride;

	if (k >= s->nr || !s->pt[k].n)
		return false;
	if (first + n > s->intervals)
		n = s->intervals - first;
	*ret_share = s->pt[k].sum / s->pt[k].n;
	/* The mean of first, ..., first + n - 1, times the interval. */
	*ret_t_ns = (int64_t)((first + (n - 1) / 2.0) * s->interval_ns);
	return true;
}
