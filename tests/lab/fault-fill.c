// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fill a NUMA node with locked memory until only LEAVE_MIB of it is free,
 * and stays so for a second (reclaim that the fill set off gives memory
 * back), then hold it until SIGTERM: the "fast tier is full" fault.  The
 * pages are bound to NODE and mlock'd, so reclaim can neither swap nor
 * demote them.
 *
 *   fault-fill NODE LEAVE_MIB
 *
 * Prints "# filled M MiB on node N, its free memory now F MiB" once done.
 */
#include <errno.h>
#include <numaif.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MiB (1ul << 20)
#define CHUNK (8 * MiB)
#define SETTLE_READS 10		/* reads of the free memory, */
#define SETTLE_US 100000	/* this far apart: a second */
#define FILL_ROUNDS 20

static long node_free_mib(int node)
{
	char path[96], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemFree: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

/*
 * Chunk by chunk, re-reading the free memory: reclaim of the page cache
 * gives some back on the way.  Returns the MiB taken, or -1.
 */
static long fill_to(int node, long leave)
{
	unsigned long mask = 1ul << node;
	long fr, filled = 0, page = sysconf(_SC_PAGESIZE);

	while ((fr = node_free_mib(node)) >= 0 && fr > leave) {
		size_t len = (size_t)(fr - leave) * MiB;
		void *p;

		if (len > CHUNK)
			len = CHUNK;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("fault-fill: mmap");
			return -1;
		}
		if (mbind(p, len, MPOL_BIND, &mask, 64, 0) < 0 || mlock(p, len) < 0) {
			fprintf(stderr, "fault-fill: mbind/mlock: %s\n", strerror(errno));
			return -1;
		}
		/* mlock() has faulted every page in (writable: a page of
		 * its own, not the zero page); a store per page makes sure.
		 * A memset() of it all, in rep stosb that crawls under TCG,
		 * made the fill a third slower (lab: 646 MiB in 7.4 s with
		 * it, 5.5 s without). */
		for (size_t off = 0; off < len; off += (size_t)page)
			((volatile char *)p)[off] = 0x5a;
		filled += (long)(len / MiB);
	}
	return filled;
}

/* Whether @node's free memory stays at or under @leave MiB for a second. */
static bool stays_full(int node, long leave)
{
	for (int i = 0; i < SETTLE_READS; i++) {
		long fr = node_free_mib(node);

		if (fr < 0 || fr > leave)
			return false;
		usleep(SETTLE_US);
	}
	return true;
}

int main(int argc, char **argv)
{
	long leave, filled = 0, got;
	sigset_t set;
	int node, sig, round = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: fault-fill NODE LEAVE_MIB\n");
		return 2;
	}
	node = atoi(argv[1]);
	leave = atol(argv[2]);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* A fill that dips under a zone's low watermark wakes kswapd, which
	 * reclaims past the high one (the page cache): memory comes back after
	 * the last chunk, above LEAVE_MIB.  So fill again until it stays. */
	do {
		got = fill_to(node, leave);
		if (got < 0)
			return 1;
		filled += got;
	} while (++round < FILL_ROUNDS && !stays_full(node, leave));
	printf("# filled %ld MiB on node %d, its free memory now %ld MiB\n", filled, node,
	       node_free_mib(node));
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
