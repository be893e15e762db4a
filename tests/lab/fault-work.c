// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fault tests' workload: tierwork's shape (a footprint F placed on one
 * node, threads writing inside a hot set H at its start, the hot set's
 * residency reported every --report-ms from move_pages node queries), with
 * every byte checkable.  The footprint is filled with a known pattern; each
 * thread adds 1 to its own 64-bit word (slot = thread number) of a random
 * hot page and counts, in private memory, how often it did so per page.  On
 * SIGTERM, SIGINT or --duration it stops, joins the threads and compares
 * every word of the footprint with pattern + count:
 *
 *   # fault-work pid P footprint 0xA-0xB hot 0xC-0xD pages N threads T
 *   t_s ops_per_s hot_node0_pct hot_node1_pct hot_other_pct
 *   0.500 1234567 0.0 100.0 0.0
 *   ...
 *   # verify ok bytes B increments I          (exit 0)
 *   # verify FAILED words W first 0xADDR ...  (exit 1)
 *
 * A lost write, a page copied while being written, a page swapped for
 * another: each shows up as a wrong word.
 *
 *   fault-work [--footprint-mib F] [--hot-mib H] [--threads N] [--node NODE]
 *              [--report-ms MS] [--duration S]
 */
#include <errno.h>
#include <getopt.h>
#include <numaif.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG 4096ul
#define MiB (1ul << 20)
#define WORDS_PER_PAGE (PG / sizeof(uint64_t))
#define MAX_THREADS 16

static volatile sig_atomic_t stop;
static uint64_t *base;
static size_t footprint, hot_pages;

struct worker {
	pthread_t tid;
	int slot;
	uint64_t seed;
	uint32_t *count;	/* per hot page: increments of word @slot */
	_Alignas(64) _Atomic uint64_t ops;
};

static struct worker workers[MAX_THREADS];

static uint64_t pattern(size_t word)
{
	uint64_t z = word + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	while (!stop) {
		for (int i = 0; i < 1024; i++) {
			size_t pg = xorshift(&w->seed) % hot_pages;
			volatile uint64_t *p = base + pg * WORDS_PER_PAGE + w->slot;

			*p = *p + 1;
			w->count[pg]++;
		}
		atomic_fetch_add_explicit(&w->ops, 1024, memory_order_relaxed);
	}
	return NULL;
}

static void on_signal(int sig)
{
	stop = 1;
}

static void residency(void **addrs, int *status, double pct[3])
{
	size_t cnt[3] = { 0 };

	for (size_t i = 0; i < hot_pages; i++)
		addrs[i] = (char *)base + i * PG;
	if (syscall(SYS_move_pages, 0, hot_pages, addrs, NULL, status, 0) < 0) {
		pct[0] = pct[1] = pct[2] = -1;
		return;
	}
	for (size_t i = 0; i < hot_pages; i++)
		cnt[status[i] == 0 ? 0 : status[i] == 1 ? 1 : 2]++;
	for (int k = 0; k < 3; k++)
		pct[k] = 100.0 * cnt[k] / hot_pages;
}

/* Every word against pattern + the increments; 0 when all match. */
static int verify(int nthreads)
{
	size_t words = footprint / sizeof(uint64_t), bad = 0, first = 0;
	uint64_t incs = 0;

	for (size_t i = 0; i < words; i++) {
		size_t pg = i / WORDS_PER_PAGE, slot = i % WORDS_PER_PAGE;
		uint64_t want = pattern(i);

		if (pg < hot_pages && slot < (size_t)nthreads) {
			want += workers[slot].count[pg];
			incs += workers[slot].count[pg];
		}
		if (base[i] != want && !bad++)
			first = i;
	}
	if (bad) {
		printf("# verify FAILED words %zu first %p holds 0x%llx want 0x%llx\n", bad,
		       (void *)(base + first), (unsigned long long)base[first],
		       (unsigned long long)pattern(first));
		return 1;
	}
	printf("# verify ok bytes %zu increments %llu\n", footprint, (unsigned long long)incs);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: fault-work [--footprint-mib F] [--hot-mib H] [--threads N] "
			"[--node NODE] [--report-ms MS] [--duration S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "footprint-mib", 1, NULL, 'f' }, { "hot-mib", 1, NULL, 'h' },
		{ "threads", 1, NULL, 't' },	   { "node", 1, NULL, 'n' },
		{ "report-ms", 1, NULL, 'r' },	   { "duration", 1, NULL, 'D' },
		{ 0 }
	};
	size_t f_mib = 384, h_mib = 192;
	int nthreads = 2, node = 1, c;
	unsigned long report_ms = 500, mask;
	double duration = 0;
	uint64_t t0, last_t, last_ops = 0;
	void **addrs;
	int *status;
	char *map;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': f_mib = strtoul(optarg, NULL, 0); break;
		case 'h': h_mib = strtoul(optarg, NULL, 0); break;
		case 't': nthreads = atoi(optarg); break;
		case 'n': node = atoi(optarg); break;
		case 'r': report_ms = strtoul(optarg, NULL, 0); break;
		case 'D': duration = atof(optarg); break;
		default: usage();
		}
	}
	if (!h_mib || h_mib > f_mib || nthreads < 1 || nthreads > MAX_THREADS || node < 0 ||
	    node > 63 || !report_ms)
		usage();
	footprint = f_mib * MiB;
	hot_pages = h_mib * MiB / PG;

	map = mmap(NULL, footprint + 2 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (map == MAP_FAILED) {
		perror("fault-work: mmap");
		return 1;
	}
	base = (uint64_t *)(((uintptr_t)map + 2 * MiB - 1) & ~(2 * MiB - 1));
	/* Base pages only: a THP split or collapse is not what is tested. */
	madvise(base, footprint, MADV_NOHUGEPAGE);
	mask = 1ul << node;
	if (mbind(base, footprint, MPOL_BIND, &mask, 64, 0) < 0) {
		fprintf(stderr, "fault-work: mbind to node %d: %s\n", node, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < footprint / sizeof(uint64_t); i++)
		base[i] = pattern(i);
	mbind(base, footprint, MPOL_DEFAULT, NULL, 0, 0);

	addrs = malloc(hot_pages * sizeof(*addrs));
	status = malloc(hot_pages * sizeof(*status));
	if (!addrs || !status)
		return 1;
	for (int i = 0; i < nthreads; i++) {
		workers[i].slot = i;
		workers[i].seed = 0x9e3779b97f4a7c15ull * (i + 1);
		workers[i].count = calloc(hot_pages, sizeof(uint32_t));
		if (!workers[i].count)
			return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("# fault-work pid %d footprint %p-%p hot %p-%p pages %zu threads %d\n",
	       (int)getpid(), (void *)base, (void *)((char *)base + footprint), (void *)base,
	       (void *)((char *)base + hot_pages * PG), hot_pages, nthreads);
	printf("t_s ops_per_s hot_node0_pct hot_node1_pct hot_other_pct\n");
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&workers[i].tid, NULL, work, &workers[i]);
	t0 = last_t = now_ns();
	while (!stop) {
		struct timespec ts = { report_ms / 1000, (report_ms % 1000) * 1000000 };
		uint64_t t, ops = 0;
		double pct[3], el;

		nanosleep(&ts, NULL);
		t = now_ns();
		for (int i = 0; i < nthreads; i++)
			ops += atomic_load_explicit(&workers[i].ops, memory_order_relaxed);
		el = (t - t0) / 1e9;
		residency(addrs, status, pct);
		printf("%.3f %.0f %.1f %.1f %.1f\n", el, (ops - last_ops) * 1e9 / (t - last_t),
		       pct[0], pct[1], pct[2]);
		fflush(stdout);
		last_ops = ops;
		last_t = t;
		if (duration > 0 && el >= duration)
			stop = 1;
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(workers[i].tid, NULL);
	return verify(nthreads);
}
