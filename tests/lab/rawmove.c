// SPDX-License-Identifier: GPL-2.0-only
/*
 * The promotion benchmark's reference for migrate_vs_raw: move the pages of
 * another process's address range to a node with ONE move_pages(2) call (or
 * calls of CHUNK pages), as a program that knew exactly which pages to move
 * would, and time it.
 *
 *   rawmove PID START END NODE [promote|move [CHUNK]]
 *
 * START and END are hexadecimal addresses (END exclusive), page aligned.
 * "promote" adds MPOL_MF_PROMOTE (the patched kernel's promotion path), as
 * tierd uses it where the kernel has it; "move" is the plain call.  CHUNK
 * (default 0: one call) cuts the range into calls of CHUNK pages, as a
 * daemon with that batch size would, and the time is their sum
 * (tests/lab/call-size-sweep).  Prints one line:
 *
 *   rawmove pages N moved M seconds S bytes_per_s B
 *
 * where M counts pages whose status is NODE and were not on NODE before,
 * and B = M * page size / S.  Exit 0 on success, 1 when the call failed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_MF_MOVE (1 << 1)
#define MPOL_MF_PROMOTE (1 << 8)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long move_pages(pid_t pid, unsigned long n, void **addrs,
		       const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, n, addrs, nodes, status, flags);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long start, end, n, moved = 0;
	unsigned long chunk = 0;
	int flags = MPOL_MF_MOVE, node, *nodes, *before, *status;
	void **addrs;
	double t0, dt = 0;
	pid_t pid;

	if (argc < 5 || argc > 7 ||
	    (argc >= 6 && strcmp(argv[5], "promote") && strcmp(argv[5], "move"))) {
		fprintf(stderr, "usage: rawmove PID START END NODE [promote|move [CHUNK]]\n");
		return 2;
	}
	if (argc == 7)
		chunk = strtoul(argv[6], NULL, 0);
	pid = (pid_t)atoi(argv[1]);
	start = strtoul(argv[2], NULL, 16);
	end = strtoul(argv[3], NULL, 16);
	node = atoi(argv[4]);
	if (argc >= 6 && !strcmp(argv[5], "promote"))
		flags |= MPOL_MF_PROMOTE;
	if (end <= start || start % page || end % page) {
		fprintf(stderr, "rawmove: bad range %s-%s\n", argv[2], argv[3]);
		return 2;
	}
	n = (end - start) / page;
	addrs = calloc(n, sizeof(*addrs));
	nodes = calloc(n, sizeof(*nodes));
	before = calloc(n, sizeof(*before));
	status = calloc(n, sizeof(*status));
	if (!addrs || !nodes || !before || !status) {
		fprintf(stderr, "rawmove: out of memory\n");
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		addrs[i] = (void *)(start + i * page);
		nodes[i] = node;
	}
	/* Where each page is now: a page already on NODE costs the call
	 * nothing and is not counted as moved. */
	if (move_pages(pid, n, addrs, NULL, before, 0) < 0) {
		fprintf(stderr, "rawmove: node query of pid %d: %s\n", pid,
			strerror(errno));
		return 1;
	}
	if (!chunk || chunk > n)
		chunk = n;
	for (unsigned long o = 0; o < n; o += chunk) {
		unsigned long c = n - o < chunk ? n - o : chunk;

		t0 = now_s();
		if (move_pages(pid, c, addrs + o, nodes + o, status + o, flags) < 0) {
			fprintf(stderr, "rawmove: move_pages of pid %d: %s\n", pid,
				strerror(errno));
			return 1;
		}
		dt += now_s() - t0;
	}
	for (unsigned long i = 0; i < n; i++)
		if (status[i] == node && before[i] != node)
			moved++;
	printf("rawmove pages %lu moved %lu seconds %.6f bytes_per_s %.0f\n", n,
	       moved, dt, dt > 0 ? moved * (double)page / dt : 0.0);
	return 0;
}
