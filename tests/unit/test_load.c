// SPDX-License-Identifier: GPL-2.0-only
/* sys/load readers against tests/fixtures/load (argv[1]). */
#include <errno.h>
#include <limits.h>

#include "load.h"
#include "test.h"

static char a[PATH_MAX], b[PATH_MAX];
static struct load_cpu_times ta, tb;

static void test_psi(void)
{
	unsigned int x;

	CHECK_EQ_INT(load_read_psi_cpu(a, &x), 0);
	CHECK_EQ_INT(x, 325);
	CHECK_EQ_INT(load_read_psi_cpu(b, &x), 0);
	CHECK_EQ_INT(x, 8750);
	CHECK_EQ_INT(load_read_psi_cpu("/nonexistent", &x), -ENOENT);
}

static void test_idle_cpus(void)
{
	uint64_t all[LOAD_MASK_WORDS] = { 0xf }, node0[LOAD_MASK_WORDS];

	CHECK_EQ_INT(load_read_cpu_times(a, &ta), 0);
	CHECK_EQ_INT(load_read_cpu_times(b, &tb), 0);
	CHECK_EQ_INT(ta.nr, 4);
	CHECK_EQ_U64(ta.total[0], 23600);
	CHECK_EQ_U64(ta.busy[0], 1500);
	/* cpu0 90%, cpu1 10%, cpu2 75%, cpu3 no ticks. */
	CHECK_EQ_INT(load_idle_cpus(&ta, &tb, all, 75), 2);
	CHECK_EQ_INT(load_idle_cpus(&ta, &tb, all, 74), 1);
	CHECK_EQ_INT(load_idle_cpus(&ta, &tb, all, 90), 3);
	CHECK_EQ_INT(load_node_cpus(a, 0, node0), 3);
	CHECK_EQ_U64(node0[0], 0xb);
	CHECK_EQ_INT(load_idle_cpus(&ta, &tb, node0, 75), 1);
}

static void test_node_cpus(void)
{
	uint64_t m[LOAD_MASK_WORDS];

	CHECK_EQ_INT(load_node_cpus(a, 1, m), 0);
	CHECK_EQ_U64(m[0], 0);
	CHECK_EQ_INT(load_node_cpus(a, 2, m), 3);
	CHECK_EQ_U64(m[0], 0x64);
	CHECK_EQ_INT(load_node_cpus(a, 9, m), -ENOENT);
}

/* nr_cpu_ids is the highest possible id + 1, holes and all. */
static void test_possible_cpus(void)
{
	unsigned int nr = 0;

	CHECK_EQ_INT(load_possible_cpus(a, &nr), 0);
	CHECK_EQ_INT(nr, 76);
	CHECK_EQ_INT(load_possible_cpus(b, &nr), -ENOENT);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 1;
	}
	snprintf(a, sizeof(a), "%s/a", argv[1]);
	snprintf(b, sizeof(b), "%s/b", argv[1]);
	RUN(test_psi);
	RUN(test_idle_cpus);
	RUN(test_node_cpus);
	RUN(test_possible_cpus);
	return TEST_EXIT();
}
