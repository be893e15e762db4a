/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fast-tier share of each interval's hot set over a run, for the
 * chart, in bounded memory whatever the run's length: at most
 * SIM_SERIES_MAX points, each the mean of @stride consecutive intervals.
 * When the points run out, neighbours merge in pairs and the stride
 * doubles, so a run of N intervals keeps between SIM_SERIES_MAX / 2 and
 * SIM_SERIES_MAX points once N passes SIM_SERIES_MAX.  An interval with
 * no accesses has no hot set and adds to no mean; a point made only of
 * such intervals has no share.
 */
#ifndef TIERD_SIM_SERIES_H
#define TIERD_SIM_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_SERIES_MAX 1024

struct sim_series {
	uint64_t interval_ns;
	uint64_t stride;		/* intervals a point */
	uint64_t intervals;		/* all added, the last point's partly */
	uint32_t nr;			/* points, the last one maybe partial */
	struct {
		double sum;		/* of the shares, 0 to 1 */
		uint32_t n;		/* intervals with a hot set */
	} pt[SIM_SERIES_MAX];
};

void sim_series_init(struct sim_series *s, uint64_t interval_ns);
/* The next interval's share (0 to 1), or a negative one: no hot set. */
void sim_series_add(struct sim_series *s, double share);
/*
 * Point @k: true with its mean share in *ret_share and in *ret_t_ns the
 * mean start of its intervals; false when it has no share.
 */
bool sim_series_point(const struct sim_series *s, uint32_t k, double *ret_share,
		      int64_t *ret_t_ns);

#endif
