// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where the pages of a shared memory segment are, as the processes that
 * map it see them (tests/lab/postgres-promote): the largest writable
 * shared mapping of the first PID (PostgreSQL's main segment, at the same
 * address in every backend, which the postmaster forks), and for each of
 * its pages that one of the PIDs has mapped, the node it is on, from
 * move_pages(2) node queries.  One line per such page: its index in the
 * segment and its node.
 *
 *   shm_nodes PID...
 *
 * Exit status: 0; 1 when no segment is found or a query fails.
 */
#include <errno.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096ul
#define CHUNK 4096ul /* pages a query */

/* The largest "rw?s" mapping of @pid: [*start, *end). */
static int find_segment(int pid, unsigned long *start, unsigned long *end)
{
	char path[64], line[512], perms[8];
	unsigned long s, e;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	*start = *end = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) != 3)
			continue;
		if (perms[1] == 'w' && perms[3] == 's' && e - s > *end - *start) {
			*start = s;
			*end = e;
		}
	}
	fclose(f);
	return *end ? 0 : -ENOENT;
}

int main(int argc, char **argv)
{
	static void *addrs[CHUNK];
	static int status[CHUNK];
	unsigned long start, end, npages;
	signed char *node;

	if (argc < 2) {
		fprintf(stderr, "usage: shm_nodes PID...\n");
		return 2;
	}
	if (find_segment(atoi(argv[1]), &start, &end) < 0) {
		fprintf(stderr, "shm_nodes: no shared writable mapping in pid %s\n", argv[1]);
		return 1;
	}
	npages = (end - start) / PAGE;
	node = malloc(npages);
	if (!node)
		return 1;
	memset(node, -1, npages);
	for (int a = 1; a < argc; a++) {
		int pid = atoi(argv[a]);

		for (unsigned long first = 0; first < npages; first += CHUNK) {
			unsigned long n = npages - first < CHUNK ? npages - first : CHUNK;

			for (unsigned long i = 0; i < n; i++)
				addrs[i] = (void *)(start + (first + i) * PAGE);
			if (move_pages(pid, n, addrs, NULL, status, 0) < 0) {
				fprintf(stderr, "shm_nodes: move_pages(%d): %s\n", pid, strerror(errno));
				return 1;
			}
			for (unsigned long i = 0; i < n; i++)
				if (status[i] >= 0 && node[first + i] < 0)
					node[first + i] = (signed char)status[i];
		}
	}
	for (unsigned long i = 0; i < npages; i++)
		if (node[i] >= 0)
			printf("%lu %d\n", i, node[i]);
	free(node);
	return 0;
}
