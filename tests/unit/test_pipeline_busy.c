// SPDX-License-Identifier: GPL-2.0-only
/*
 * A page the kernel keeps answering -EBUSY for, through the manager's tick
 * against fakes (pipe_env.h): a hot 2 MiB range on node 1 of which page 5
 * is held.  Hot and on node 1, it is a candidate every tick; it is tried
 * at growing intervals while it stays busy (1, 2, 4, 8, 16 s, then 32),
 * and counted busy only when tried.  Once it is no longer held, its next
 * try moves it, and its back-off is gone: put back on node 1 and held
 * again, it is tried at the next tick, and its back-off starts over.
 *
 *   test_pipeline_busy FIXTURES_DIR
 */
#include <string.h>

#include "pipe_env.h"
#include "test.h"

#define HELD 5

static void hot_tick(uint64_t t_s, struct sampler_fake *sf)
{
	CHECK_EQ_INT(sampler_fake_push(sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, t_s * SEC), 0);
}

/* Ticks every second from @from_s to @to_s: a bit per second at which the
 * held page was tried (counted busy once more), from @from_s. */
static uint64_t tries(struct tierd *d, struct sampler_fake *sf, uint64_t from_s, uint64_t to_s)
{
	uint64_t mask = 0;

	for (uint64_t t = from_s; t <= to_s; t++) {
		uint64_t busy = d->stats.migrate_errors_total[ERRC_BUSY];

		hot_tick(t, sf);
		if (d->stats.migrate_errors_total[ERRC_BUSY] != busy) {
			CHECK_EQ_U64(d->stats.migrate_errors_total[ERRC_BUSY], busy + 1);
			mask |= 1ull << (t - from_s);
		}
	}
	return mask;
}

static void test_busy_backs_off(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096];
	int moves;

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	map.busy = HELD + 1;
	CHECK_EQ_INT(start(&d, &fk), 0);

	/* Tried at 1, 2, 4, 8, 16 and 32 s, each time busy again. */
	CHECK_EQ_U64(tries(&d, &sf, 1, 40),
		     1ull << 0 | 1ull << 1 | 1ull << 3 | 1ull << 7 | 1ull << 15 | 1ull << 31);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 511);
	CHECK_EQ_INT(map.node[HELD], 1);
	CHECK_EQ_U64(d.stats.busy_backoff_pages, 1);
	/* Between tries, no call at all: the tick plans nothing. */
	moves = map.moves;
	hot_tick(41, &sf);
	CHECK_EQ_INT(map.moves, moves);

	/* Released: its next try, 32 s after the last (at 64 s), moves it. */
	map.busy = 0;
	CHECK_EQ_U64(tries(&d, &sf, 42, 63), 0);
	CHECK_EQ_INT(map.node[HELD], 1);
	hot_tick(64, &sf);
	CHECK_EQ_INT(map.node[HELD], 0);
	CHECK_EQ_U64(d.stats.busy_backoff_pages, 0);

	/* Back on node 1 and held again: tried at once, then after 1 s, 2 s. */
	map.node[HELD] = 1;
	map.busy = HELD + 1;
	CHECK_EQ_U64(tries(&d, &sf, 65, 70), 1ull << 0 | 1ull << 1 | 1ull << 3);
	stop(&d);
}

int main(int argc, char **argv)
{
	int r = pipe_env_init(argc, argv, "test_pipeline_busy");

	if (r)
		return r;
	RUN(test_busy_backs_off);
	pipe_env_fini();
	return TEST_EXIT();
}
