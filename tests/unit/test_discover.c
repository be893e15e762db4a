// SPDX-License-Identifier: GPL-2.0-only
#include "discover.h"
#include "test.h"

#define SEC 1000000000ull

/* Feed @d a second of @n samples, @share of them fresh, onto the
 * counters at @samples and @fresh, at @now_ns; its answer. */
static bool second(struct discover *d, uint64_t *samples, uint64_t *fresh, uint64_t n,
		   double share, uint64_t now_ns)
{
	*samples += n;
	*fresh += (uint64_t)((double)n * share + 0.5);
	return discover_step(d, *samples, *fresh, now_ns);
}

/* A settled set's share, then a jump: news while it stays several times
 * the last minute's least, and no more once the new set holds heat. */
static void test_jump(void)
{
	struct discover d = { 0 };
	uint64_t s = 0, f = 0, t = 0;

	CHECK(!discover_step(&d, s, f, t));
	/* No history: a high share is not news yet. */
	for (t = SEC; t < 5 * SEC; t += SEC)
		CHECK(!second(&d, &s, &f, 1000, 0.9, t));
	for (; t < 30 * SEC; t += SEC)
		CHECK(!second(&d, &s, &f, 1000, 0.1, t));
	CHECK(second(&d, &s, &f, 1000, 0.5, t));
	CHECK(d.share == 0.5 && d.quiet > 0.099 && d.quiet < 0.101);
	t += SEC;
	/* Too few samples since: the answer stands. */
	CHECK(second(&d, &s, &f, DISCOVER_MIN_SAMPLES - 1, 0.0, t));
	t += SEC;
	CHECK(!second(&d, &s, &f, 1000, 0.2, t));
	/* A minute after the quiet seconds they are forgotten: a share of
	 * 0.5 against the 0.2 since is not three times its least. */
	for (t += SEC; t < 100 * SEC; t += SEC)
		second(&d, &s, &f, 1000, 0.2, t);
	CHECK(!second(&d, &s, &f, 1000, 0.5, t));
	CHECK(second(&d, &s, &f, 1000, 0.7, t + SEC));
	/* Nothing measured for a minute and more: no history again. */
	t += 2 * SEC;
	for (int i = 0; i < 40; i++, t += SEC)
		second(&d, &s, &f, 1000, 0.1, t);
	CHECK(!second(&d, &s, &f, 1000, 0.9, t + 61 * SEC));
}

/* Memory warm all over keeps the share high: never news.  A settled set
 * that draws no fresh sample at all: a few are not news either. */
static void test_steady(void)
{
	struct discover d = { 0 };
	uint64_t s = 0, f = 0, t;

	for (t = 0; t < 120 * SEC; t += SEC)
		CHECK(!second(&d, &s, &f, 1000, 0.8 - 0.003 * (double)(t / SEC), t));
	d = (struct discover){ 0 };
	s = f = 0;
	for (t = 0; t < 30 * SEC; t += SEC)
		CHECK(!second(&d, &s, &f, 1000, 0.0, t));
	CHECK(!second(&d, &s, &f, 1000, 0.02, t));
	CHECK(second(&d, &s, &f, 1000, 0.03, t + SEC));
}

/* Counters that went back (a new table) start the count again. */
static void test_restart(void)
{
	struct discover d = { 0 };
	uint64_t s = 0, f = 0, t;

	for (t = 0; t < 30 * SEC; t += SEC)
		second(&d, &s, &f, 1000, 0.1, t);
	CHECK(second(&d, &s, &f, 1000, 0.9, t));
	/* 10 of 500 since the restart, not 490 of 0 - 31000. */
	CHECK(discover_step(&d, 0, 0, t + SEC));
	CHECK(!discover_step(&d, 500, 10, t + 2 * SEC));
	CHECK(d.share == 0.02);
}

int main(void)
{
	RUN(test_jump);
	RUN(test_steady);
	RUN(test_restart);
	return TEST_EXIT();
}
