// SPDX-License-Identifier: GPL-2.0-only
#include "bucket.h"
#include "test.h"

#define SEC 1000000000ull

static void test_unlimited(void)
{
	struct bucket b;

	bucket_init(&b, 0, 0, 0);
	CHECK(bucket_take(&b, 1ull << 40, 0));
	CHECK_EQ_U64(bucket_take_upto(&b, 12345, 5), 12345);
}

static void test_refill_and_burst(void)
{
	struct bucket b;

	bucket_init(&b, 1000, 500, 0);
	CHECK(bucket_take(&b, 500, 0));
	CHECK(!bucket_take(&b, 1, 0));
	/* 0.25 s at 1000/s gives 250. */
	CHECK_EQ_U64(bucket_avail(&b, SEC / 4), 250);
	/* Never more than the burst, however long it waited. */
	CHECK_EQ_U64(bucket_avail(&b, 100 * SEC), 500);
	CHECK_EQ_U64(bucket_take_upto(&b, 800, 100 * SEC), 500);
	CHECK_EQ_U64(bucket_avail(&b, 100 * SEC), 0);
}

static void test_slow_rate_accumulates(void)
{
	struct bucket b;

	/* 1 token/s polled every 100 ms must still give one token a second. */
	bucket_init(&b, 1, 10, 0);
	bucket_take_upto(&b, 10, 0);
	for (uint64_t t = 0; t <= 10 * SEC; t += SEC / 10)
		bucket_avail(&b, t);
	CHECK_EQ_U64(bucket_avail(&b, 10 * SEC), 10);
}

static void test_time_going_backwards(void)
{
	struct bucket b;

	bucket_init(&b, 1000, 1000, 5 * SEC);
	bucket_take_upto(&b, 1000, 5 * SEC);
	CHECK_EQ_U64(bucket_avail(&b, 4 * SEC), 0);
	CHECK_EQ_U64(bucket_avail(&b, 6 * SEC), 1000);
}

int main(void)
{
	RUN(test_unlimited);
	RUN(test_refill_and_burst);
	RUN(test_slow_rate_accumulates);
	RUN(test_time_going_backwards);
	return TEST_EXIT();
}
