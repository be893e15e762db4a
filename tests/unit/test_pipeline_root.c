// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pipeline's readers of per-process files read ROOT/proc, the tree the
 * daemon was given (tierd --root, tierd-sim's fake kernel), never the
 * host's /proc: the sample stage's cgroup lookups, its footprint, and the
 * watch that picks which targets a bounded source (DAMON) follows.
 *
 *   test_pipeline_root FIXTURES_DIR
 */
#include <stdio.h>
#include <string.h>

#include "pipe_env.h"
#include "sample_int.h"
#include "test.h"

static void test_watch_reads_root(void)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	char root[4096], want[4200];

	setup(&d, conf_promote, root, sizeof(root), &sf, &map, &fk);
	CHECK_EQ_INT(start(&d, &fk), 0);
	snprintf(want, sizeof(want), "%s/proc", root);
	CHECK(mgr.sample && mgr.sample->watch_ok);
	if (mgr.sample && mgr.sample->watch_ok) {
		CHECK_EQ_STR(mgr.sample->proc_root, want);
		CHECK_EQ_STR(mgr.sample->watch.proc_root, want);
	}
	stop(&d);
}

int main(int argc, char **argv)
{
	int r = pipe_env_init(argc, argv, "test_pipeline_root");

	if (r)
		return r;
	RUN(test_watch_reads_root);
	pipe_env_fini();
	return TEST_EXIT();
}
