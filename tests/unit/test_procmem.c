// SPDX-License-Identifier: GPL-2.0-only
/* A process's resident and per-node bytes against tests/fixtures/procmem (argv[1]). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "procmem.h"
#include "test.h"

static char proc[PATH_MAX];

static void test_rss(void)
{
	uint64_t b = 0;

	CHECK_EQ_INT(proc_rss_bytes(proc, 300, 4096, &b), 0);
	CHECK_EQ_U64(b, 16500ull * 4096);
	/* A kernel thread has no memory map. */
	CHECK_EQ_INT(proc_rss_bytes(proc, 301, 4096, &b), -EINVAL);
	CHECK_EQ_INT(proc_rss_bytes(proc, 99999, 4096, &b), -ESRCH);
}

static void test_node_bytes(void)
{
	uint64_t b = 0;

	/* Node 1: 15872 + 10 + 5 base pages, and 2 huge pages of 2 MiB. */
	CHECK_EQ_INT(proc_node_bytes(proc, 300, 1ull << 1, &b), 0);
	CHECK_EQ_U64(b, (15872ull + 10 + 5) * 4096 + 2ull * 2048 * 1024);
	/* Nodes 1 and 2: one more huge page. */
	CHECK_EQ_INT(proc_node_bytes(proc, 300, (1ull << 1) | (1ull << 2), &b), 0);
	CHECK_EQ_U64(b, (15872ull + 10 + 5) * 4096 + 3ull * 2048 * 1024);
	CHECK_EQ_INT(proc_node_bytes(proc, 300, 1ull << 0, &b), 0);
	CHECK_EQ_U64(b, (3ull + 33 + 512 + 150) * 4096);
	CHECK_EQ_INT(proc_node_bytes(proc, 300, 0, &b), 0);
	CHECK_EQ_U64(b, 0);
	CHECK_EQ_INT(proc_node_bytes(proc, 99999, 1ull << 1, &b), -ESRCH);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES\n", argv[0]);
		return 1;
	}
	snprintf(proc, sizeof(proc), "%s", argv[1]);
	RUN(test_rss);
	RUN(test_node_bytes);
	return TEST_EXIT();
}
