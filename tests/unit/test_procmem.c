// SPDX-License-Identifier: GPL-2.0-only
/* A process's resident and per-node bytes against tests/fixtures/procmem (argv[1]). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "idle.h"
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

/* The mappings that hold data: not text, guards, [vvar], [vdso],
 * [vsyscall]; named files and anonymous memory alike. */
static void test_data_maps(void)
{
	struct idle_range mem[8];
	struct idle_set s;

	idle_init(&s, mem, 8);
	CHECK_EQ_INT(proc_data_maps(proc, 300, &s), 0);
	CHECK_EQ_INT(s.n, 5);
	CHECK_EQ_U64(s.r[0].start, 0x55d1c2e4c000ull); /* [heap] */
	CHECK_EQ_U64(s.r[0].end, 0x55d1c2e6d000ull);
	CHECK_EQ_U64(s.r[1].start, 0x7f2a40000000ull); /* anonymous, no name */
	CHECK_EQ_U64(s.r[1].end, 0x7f2a48000000ull);
	CHECK_EQ_U64(s.r[2].start, 0x7f2a50000000ull); /* shared, a file's */
	CHECK_EQ_U64(s.r[3].start, 0x7f2a5e7f0000ull); /* libc's read-only data */
	CHECK_EQ_U64(s.r[4].start, 0x7ffd1a3b4000ull); /* [stack] */
	CHECK_EQ_INT(s.r[4].pid, 300);
	/* Full: what fit stays. */
	idle_init(&s, mem, 2);
	CHECK_EQ_INT(proc_data_maps(proc, 300, &s), -ENOSPC);
	CHECK_EQ_INT(s.n, 2);
	/* No maps (a fixture without one, as a process gone). */
	idle_init(&s, mem, 8);
	CHECK_EQ_INT(proc_data_maps(proc, 99999, &s), -ESRCH);
	CHECK_EQ_INT(proc_data_maps(proc, 302, &s), -EPROTO);
	CHECK_EQ_INT(s.n, 1);
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
	RUN(test_data_maps);
	return TEST_EXIT();
}
