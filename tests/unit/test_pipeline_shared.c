// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pages the kernel refuses to move, through the manager's tick against
 * fakes (pipe_env.h): a hot 2 MiB range on node 1 whose first 64 pages
 * several processes map.  Without CAP_SYS_NICE the "kernel" answers
 * -EACCES for those; they are counted as denied once, left out of the
 * next ticks' candidates while they stay on node 1, proposed again once
 * their retry time has passed, and forgotten once found on node 0.  With
 * it, every call carries MPOL_MF_MOVE_ALL and nothing is denied.
 *
 *   test_pipeline_shared FIXTURES_DIR
 */
#include <errno.h>
#include <numaif.h>
#include <string.h>

#include "candidates.h"
#include "pipe_env.h"
#include "test.h"

#define SHARED_PAGES 64

extern const struct mig_ops map_ops; /* pipe_env.c: the page map's move_pages */

static struct {
	bool cap_sys_nice; /* the MPOL_MF_MOVE_ALL probe is answered 0 */
	int move_all_calls; /* moves with MPOL_MF_MOVE_ALL */
	unsigned long asked_shared; /* shared pages moves were asked to move */
} kern;

static int shared_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			     const int *nodes, int *status, int flags)
{
	int r;

	if (count == 0 && !addrs && (flags & MPOL_MF_MOVE_ALL))
		return kern.cap_sys_nice ? 0 : -EPERM;
	r = map_ops.move_pages(ctx, pid, count, addrs, nodes, status, flags);
	if (r < 0 || !nodes)
		return r;
	kern.move_all_calls += !!(flags & MPOL_MF_MOVE_ALL);
	for (unsigned long i = 0; i < count; i++) {
		uint64_t pg = ((uint64_t)(uintptr_t)addrs[i] - BASE) / PG;
		struct page_map *m = ctx;

		if (pg >= SHARED_PAGES)
			continue;
		kern.asked_shared++;
		if (flags & MPOL_MF_MOVE_ALL)
			continue;
		/* Left where it was. */
		m->node[pg] = 1;
		status[i] = -EACCES;
	}
	return 0;
}

static const struct mig_ops shared_ops = {
	.move_pages = shared_move_pages,
	.now_ns = NULL, /* set from map_ops at run time */
};

static void start_shared(struct tierd *d, struct sampler_fake *sf, struct page_map *map,
			 bool cap_sys_nice)
{
	static struct mig_ops ops;
	static char root[4096];
	struct manager_ops fk;

	setup(d, conf_promote, root, sizeof(root), sf, map, &fk);
	ops = shared_ops;
	ops.now_ns = map_ops.now_ns;
	fk.mig_ops = &ops;
	memset(&kern, 0, sizeof(kern));
	kern.cap_sys_nice = cap_sys_nice;
	CHECK_EQ_INT(start(d, &fk), 0);
}

static void hot_tick(struct tierd *d, struct sampler_fake *sf, uint64_t now_ns)
{
	CHECK_EQ_INT(sampler_fake_push(sf, PID, BASE, 2 * MIB, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, now_ns), 0);
}

static void test_denied_not_proposed_again(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;

	start_shared(&d, &sf, &map, false);
	hot_tick(&d, &sf, 1 * SEC);
	CHECK_EQ_INT(kern.move_all_calls, 0);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 512 - SHARED_PAGES);
	CHECK_EQ_U64(kern.asked_shared, SHARED_PAGES);
	CHECK_EQ_U64(d.stats.migrate_errors_total[ERRC_DENIED], SHARED_PAGES);
	CHECK_EQ_U64(d.stats.node[0].promoted_bytes_total, (512 - SHARED_PAGES) * PG);

	/* Still hot, still on node 1, still refused: not proposed, not counted
	 * again, for a minute. */
	for (int t = 2; t <= 60; t += 2)
		hot_tick(&d, &sf, t * SEC);
	CHECK_EQ_U64(kern.asked_shared, SHARED_PAGES);
	CHECK_EQ_U64(d.stats.migrate_errors_total[ERRC_DENIED], SHARED_PAGES);
	CHECK_EQ_INT(map.moves, 1);

	/* Then proposed once more, refused, and left for two minutes. */
	hot_tick(&d, &sf, 62 * SEC);
	CHECK_EQ_U64(kern.asked_shared, 2 * SHARED_PAGES);
	CHECK_EQ_U64(d.stats.migrate_errors_total[ERRC_DENIED], 2 * SHARED_PAGES);
	hot_tick(&d, &sf, 181 * SEC);
	CHECK_EQ_U64(kern.asked_shared, 2 * SHARED_PAGES);

	/* Moved by someone else: something changed, the marks go. */
	CHECK(cand_denied_whole(mgr.ranges, PID, BASE, 1, 181 * SEC));
	for (int i = 0; i < SHARED_PAGES; i++)
		map.node[i] = 0;
	hot_tick(&d, &sf, 182 * SEC);
	CHECK(!cand_denied_whole(mgr.ranges, PID, BASE, 1, 182 * SEC));
	stop(&d);
}

static void test_shared_move_all(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;

	start_shared(&d, &sf, &map, true);
	hot_tick(&d, &sf, 1 * SEC);
	CHECK_EQ_INT(kern.move_all_calls, 1);
	CHECK_EQ_INT(count_on(&map, 0, 512, 0), 512);
	CHECK_EQ_U64(d.stats.migrate_errors_total[ERRC_DENIED], 0);
	CHECK_EQ_U64(d.stats.node[0].promoted_bytes_total, 2 * MIB);
	stop(&d);
}

int main(int argc, char **argv)
{
	int r = pipe_env_init(argc, argv, "test_pipeline_shared");

	if (r)
		return r;
	RUN(test_denied_not_proposed_again);
	RUN(test_shared_move_all);
	pipe_env_fini();
	return TEST_EXIT();
}
