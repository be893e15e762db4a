// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lab smoke test: move SIZE bytes of 4 KB pages and SIZE bytes of THPs from
 * node 0 to node 1 and back with move_pages(2), and check every byte and every
 * page's node after each move.
 *
 *   smoke_move [SIZE_MIB]       (default 64)
 *
 * Exit 0 when every page landed where asked and no byte changed.
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define THP_SIZE (2ul << 20)

static uint64_t pattern(size_t off, unsigned int seed)
{
	uint64_t x = off * 0x9e3779b97f4a7c15ull + seed;

	x ^= x >> 31;
	return x * 0xbf58476d1ce4e5b9ull;
}

static void fill(uint64_t *p, size_t bytes, unsigned int seed)
{
	for (size_t i = 0; i < bytes / 8; i++)
		p[i] = pattern(i, seed);
}

static size_t count_bad(const uint64_t *p, size_t bytes, unsigned int seed)
{
	size_t bad = 0;

	for (size_t i = 0; i < bytes / 8; i++)
		if (p[i] != pattern(i, seed))
			bad++;
	return bad;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Move every page of [buf, buf+bytes) (step = one address per folio) to @node;
 * then query every base page and count those that are not on @node.
 */
static int move_and_check(char *buf, size_t bytes, size_t step, int node, const char *what)
{
	size_t nr = bytes / step, nr_base = bytes / 4096, misplaced = 0, failed = 0;
	void **pages = calloc(nr_base, sizeof(*pages));
	int *nodes = calloc(nr, sizeof(*nodes));
	int *status = calloc(nr_base, sizeof(*status));
	double t0, dt;
	long rc;

	if (!pages || !nodes || !status) {
		fprintf(stderr, "out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < nr; i++) {
		pages[i] = buf + i * step;
		nodes[i] = node;
	}
	t0 = now_s();
	rc = move_pages(0, nr, pages, nodes, status, MPOL_MF_MOVE);
	dt = now_s() - t0;
	if (rc < 0) {
		fprintf(stderr, "%s: move_pages to node %d: %s\n", what, node, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < nr; i++)
		if (status[i] < 0)
			failed++;

	/* Where did every base page land? */
	for (size_t i = 0; i < nr_base; i++)
		pages[i] = buf + i * 4096;
	rc = move_pages(0, nr_base, pages, NULL, status, 0);
	if (rc < 0) {
		fprintf(stderr, "%s: move_pages query: %s\n", what, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < nr_base; i++)
		if (status[i] != node)
			misplaced++;
	printf("%s -> node %d: %zu folios in %.3f s (%.3f GB/s), %zu failed, %zu base pages elsewhere\n",
	       what, node, nr, dt, bytes / dt / 1e9, failed, misplaced);
	free(pages);
	free(nodes);
	free(status);
	return failed || misplaced ? -1 : 0;
}

static int run(size_t bytes, int thp)
{
	const char *what = thp ? "THP" : "4K";
	size_t step = thp ? THP_SIZE : 4096;
	unsigned int seed = thp ? 7 : 3;
	int ret = 0;
	char *buf;

	buf = aligned_alloc(THP_SIZE, bytes);
	if (!buf) {
		fprintf(stderr, "aligned_alloc %zu: %s\n", bytes, strerror(errno));
		return -1;
	}
	if (madvise(buf, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		fprintf(stderr, "madvise: %s\n", strerror(errno));
		return -1;
	}
	/* First touch on node 0. */
	numa_run_on_node(0);
	fill((uint64_t *)buf, bytes, seed);

	if (thp) {
		/* The THP path is only exercised if THPs were really allocated. */
		unsigned long anon_huge = 0;
		char line[256];
		FILE *f = fopen("/proc/self/smaps_rollup", "r");

		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "AnonHugePages: %lu kB", &anon_huge);
		if (f)
			fclose(f);
		printf("THP: %lu MiB of %zu MiB backed by huge pages\n", anon_huge / 1024, bytes >> 20);
		if (anon_huge * 1024 < bytes / 2) {
			fprintf(stderr, "THP: too few huge pages to test the THP path\n");
			ret = -1;
		}
	}

	for (int node = 1; node >= 0 && !ret; node--) {
		size_t bad;

		ret = move_and_check(buf, bytes, step, node, what);
		bad = count_bad((uint64_t *)buf, bytes, seed);
		if (bad) {
			fprintf(stderr, "%s: %zu wrong 8-byte words after moving to node %d\n", what, bad, node);
			ret = -1;
		}
	}
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	int ret = 0;

	if (numa_available() < 0 || numa_max_node() < 1) {
		fprintf(stderr, "smoke_move: needs at least two NUMA nodes\n");
		return 1;
	}
	ret |= run(mib << 20, 0);
	ret |= run(mib << 20, 1);
	printf("smoke_move: %s\n", ret ? "FAILED" : "all bytes intact, every page where asked");
	return ret ? 1 : 0;
}
