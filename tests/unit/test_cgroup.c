// SPDX-License-Identifier: GPL-2.0-only
/* cgroup v2 readers against tests/fixtures/cgroup (argv[1]). */
#include <errno.h>
#include <limits.h>

#include "cgroup.h"
#include "test.h"

static char proc[PATH_MAX], cgfs[PATH_MAX];

static void test_path_of_pid(void)
{
	char buf[256];

	CHECK_EQ_INT(cg_path_of_pid(proc, 100, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "/gpu.slice/train");
	/* Hybrid hierarchy: the 0:: line, not the v1 memory line. */
	CHECK_EQ_INT(cg_path_of_pid(proc, 101, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "/user.slice/user-1000.slice/session-3.scope");
	CHECK_EQ_INT(cg_path_of_pid(proc, 102, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "/gone.scope");
	CHECK_EQ_INT(cg_path_of_pid(proc, 103, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_INT(cg_path_of_pid(proc, 99999, buf, sizeof(buf)), -ESRCH);
	CHECK_EQ_INT(cg_path_of_pid(proc, 100, buf, 16), -ENAMETOOLONG);
	CHECK_EQ_INT(cg_path_of_pid(proc, 100, buf, 17), 0);
}

static void test_numa_stat(void)
{
	struct cg_numa_stat s;
	struct topology topo = { .nr_nodes = 3 };

	for (int i = 0; i < 3; i++) {
		topo.nodes[i].id = i;
		topo.nodes[i].tier = i == 0 ? 0 : 1;
	}
	topo.nodes[2].gpu = true;
	CHECK_EQ_INT(cg_read_numa_stat(cgfs, "/gpu.slice/train", &s), 0);
	CHECK_EQ_INT(s.nr_nodes, 3);
	CHECK_EQ_U64(s.anon[1], 4194304);
	CHECK_EQ_U64(s.file[2], 4096);
	CHECK_EQ_U64(cg_node_bytes(&s, 0), 1048576 + 8192);
	CHECK_EQ_U64(cg_node_bytes(&s, 7), 0);
	CHECK_EQ_U64(cg_fast_bytes(&s, &topo), 1048576 + 8192);
	CHECK_EQ_U64(cg_gpu_bytes(&s, &topo), 2097152 + 4096);
	/* The GPU node alone in tier 0, above DRAM (Grace Hopper): the fast
	 * tier is DRAM's. */
	topo.nodes[2].tier = 0;
	topo.nodes[0].tier = 1;
	topo.nodes[1].tier = 2;
	CHECK_EQ_U64(cg_fast_bytes(&s, &topo), 1048576 + 8192);
	CHECK_EQ_INT(cg_read_numa_stat(cgfs, "/nope", &s), -ENOENT);
	CHECK_EQ_INT(cg_read_numa_stat(cgfs, "/broken", &s), -EINVAL);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 1;
	}
	snprintf(proc, sizeof(proc), "%s/proc", argv[1]);
	snprintf(cgfs, sizeof(cgfs), "%s/sys/fs/cgroup", argv[1]);
	RUN(test_path_of_pid);
	RUN(test_numa_stat);
	return TEST_EXIT();
}
