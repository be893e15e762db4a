// SPDX-License-Identifier: GPL-2.0-only
/*
 * sys/migrate.c's real move_pages(2) for a process that has exited but is
 * not reaped: the kernel says EINVAL (no mm); tierd must see -ESRCH, so the
 * pages are counted as gone, not as an unexplained error; reaped, it is the
 * kernel's own -ESRCH.  Our own live page still moves.  Needs move_pages(2)
 * (CONFIG_NUMA): skipped without.  Its free-memory check reads the root
 * directory it is given (argv[1], a fixture tree), not this machine's.
 *
 *   test_migrate_exit TOPOLOGY_FIXTURE
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <numaif.h>
#include <unistd.h>

#include "migrate.h"
#include "test.h"

int main(int argc, char **argv)
{
	static char page[4096] __attribute__((aligned(4096)));
	void *addr = page;
	int node = 0, status = -1, r;
	uint64_t free_b = 0;
	siginfo_t si;
	pid_t child;

	/* The fixture's node 0: MemFree 12000000 kB. */
	CHECK(argc == 2);
	CHECK_EQ_INT(mig_real_ops.node_free(argv[1], 0, &free_b), 0);
	CHECK_EQ_U64(free_b, 12000000ull * 1024);
	page[0] = 1;
	/* Our own page, to node 0: works wherever move_pages(2) exists. */
	r = mig_real_ops.move_pages(NULL, getpid(), 1, &addr, &node, &status, MPOL_MF_MOVE);
	if (r == -ENOSYS) {
		fprintf(stderr, "SKIP: no move_pages(2) on this kernel\n");
		return 77;
	}
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(status, 0);

	child = fork();
	if (child == 0) {
		page[0] = 2;
		_exit(0);
	}
	CHECK(child > 0);
	/* Wait until it is a zombie, without reaping it. */
	CHECK_EQ_INT(waitid(P_PID, child, &si, WEXITED | WNOWAIT), 0);
	r = mig_real_ops.move_pages(NULL, child, 1, &addr, &node, &status, MPOL_MF_MOVE);
	CHECK_EQ_INT(r, -ESRCH);
	/* Reaped: the kernel's own ESRCH. */
	CHECK_EQ_INT(waitpid(child, NULL, 0), child);
	r = mig_real_ops.move_pages(NULL, child, 1, &addr, &node, &status, MPOL_MF_MOVE);
	CHECK_EQ_INT(r, -ESRCH);
	return TEST_EXIT();
}
