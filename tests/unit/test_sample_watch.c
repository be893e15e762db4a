// SPDX-License-Identifier: GPL-2.0-only
/* The watch's choice against the processes of tests/fixtures/procmem (argv[1]). */
#include <stdio.h>

#include "sample_watch.h"
#include "test.h"
#include "topology.h"

static struct topology topo = { .nr_nodes = 2 };
static const char *proc;

static void test_most_on_lower_tiers_watched(void)
{
	const pid_t pids[] = { 300, 302, 303, 304 };
	/* Resident, as the scan read their statm. */
	const uint64_t rss[] = { 16500 * 4096, 300 * 4096, 50 * 4096, 200 * 4096 };
	struct sample_watch w;
	pid_t got[4];

	CHECK_EQ_INT(sample_watch_init(&w, 2, 8), 0);
	w.proc_root = proc;
	/* On node 1: 300 62 MiB, 304 600 KiB, 302 400 KiB (of 1.2 MiB
	 * resident, more than 304), 303 none. */
	CHECK_EQ_INT(sample_watch_step(&w, &topo, pids, rss, 4, got, 1000), 2);
	CHECK_EQ_INT(got[0], 300);
	CHECK_EQ_INT(got[1], 304);
	CHECK_EQ_U64(w.reads_total, 4);
	/* Within the bound: all, and nothing read. */
	CHECK_EQ_INT(sample_watch_step(&w, &topo, pids + 1, rss + 1, 2, got, 2000), 2);
	CHECK_EQ_INT(got[0], 302);
	CHECK_EQ_INT(got[1], 303);
	CHECK_EQ_U64(w.reads_total, 4);
	sample_watch_free(&w);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES\n", argv[0]);
		return 1;
	}
	topo.nodes[0] = (struct topo_node){ .id = 0, .tier = 0 };
	topo.nodes[1] = (struct topo_node){ .id = 1, .tier = 1 };
	proc = argv[1];
	RUN(test_most_on_lower_tiers_watched);
	return TEST_EXIT();
}
