// SPDX-License-Identifier: GPL-2.0-only
/* The chart's series: its points, their merging, and the gaps (series.h). */
#include <stdlib.h>

#include "series.h"
#include "test.h"

#define SEC 1000000000ll

static struct sim_series *series(void)
{
	struct sim_series *s = malloc(sizeof(*s));

	CHECK(s != NULL);
	sim_series_init(s, SEC);
	return s;
}

/* Up to SIM_SERIES_MAX intervals, a point each, at its interval's start. */
static void test_one_point_an_interval(void)
{
	struct sim_series *s = series();
	double share;
	int64_t t;

	for (int i = 0; i < 10; i++)
		sim_series_add(s, i / 10.0);
	CHECK_EQ_INT(s->nr, 10);
	CHECK(sim_series_point(s, 3, &share, &t));
	CHECK(share == 0.3 && t == 3 * SEC);
	CHECK(!sim_series_point(s, 10, &share, &t));
	free(s);
}

/*
 * One interval past SIM_SERIES_MAX: pairs merge, 512 full points of two
 * intervals and a partial one of the 1025th.  Point 1 is the mean of
 * intervals 2 and 3 (shares 2 and 3 thousandths), at 2.5 s.
 */
static void test_merge(void)
{
	struct sim_series *s = series();
	double share;
	int64_t t;

	for (int i = 0; i <= SIM_SERIES_MAX; i++)
		sim_series_add(s, i / 1000.0);
	CHECK_EQ_INT(s->nr, SIM_SERIES_MAX / 2 + 1);
	CHECK_EQ_U64(s->stride, 2);
	CHECK(sim_series_point(s, 1, &share, &t));
	CHECK(share > 0.0025 - 1e-12 && share < 0.0025 + 1e-12);
	CHECK_EQ_U64(t, 2 * SEC + SEC / 2);
	CHECK(sim_series_point(s, SIM_SERIES_MAX / 2, &share, &t));
	CHECK(share == SIM_SERIES_MAX / 1000.0);
	CHECK_EQ_U64(t, (int64_t)SIM_SERIES_MAX * SEC);
	/* A long run stays within SIM_SERIES_MAX points. */
	for (int i = 0; i < 100000; i++)
		sim_series_add(s, 1);
	CHECK(s->nr <= SIM_SERIES_MAX && s->nr > SIM_SERIES_MAX / 2);
	CHECK_EQ_U64(s->intervals, SIM_SERIES_MAX + 1 + 100000);
	free(s);
}

/* An interval without accesses counts in no mean; alone it is a gap. */
static void test_gaps(void)
{
	struct sim_series *s = series();
	double share;
	int64_t t;

	sim_series_add(s, 0.5);
	sim_series_add(s, -1);
	CHECK(sim_series_point(s, 0, &share, &t) && share == 0.5);
	CHECK(!sim_series_point(s, 1, &share, &t));
	/* Merged with a share, the gap leaves the mean alone. */
	for (int i = 2; i < SIM_SERIES_MAX + 1; i++)
		sim_series_add(s, 1);
	CHECK(sim_series_point(s, 0, &share, &t) && share == 0.5);
	CHECK_EQ_U64(t, SEC / 2);
	free(s);
}

int main(void)
{
	RUN(test_one_point_an_interval);
	RUN(test_merge);
	RUN(test_gaps);
	return TEST_EXIT();
}
