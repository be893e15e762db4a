// SPDX-License-Identifier: GPL-2.0-only
/*
 * memcpy_bench: the user-space ceiling for move_pages between two nodes.
 *
 * A source buffer bound to --src and a destination bound to --dst (both
 * faulted in before timing), T pthreads each memcpy() one contiguous 1/T
 * slice; the time runs from the release of a barrier to the last join.
 * Throughput = bytes / time (GB/s).  The destination is checked byte for
 * byte after every repetition (outside the timed region) and cleared again
 * before the next one.  One JSON line per thread count on stdout:
 *
 *   {"type": "memcpy", "threads": 2, "bytes": 268435456, "gbps": [...]}
 */
#include "benchlib.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 256
#define MAX_REPS 1000
#define SEED 0x6d656d637079ULL /* "memcpy" */

struct worker {
	pthread_t tid;
	pthread_barrier_t *go;
	char *dst;
	const char *src;
	size_t bytes;
	int cpu;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	/* Best effort: an unpinned copy is still a copy. */
	sched_setaffinity(0, sizeof(set), &set);
	pthread_barrier_wait(w->go);
	memcpy(w->dst, w->src, w->bytes);
	return NULL;
}

static int copy_once(char *dst, const char *src, size_t bytes, int threads,
		     uint64_t *ret_ns)
{
	static struct worker w[MAX_THREADS];
	pthread_barrier_t go;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t slice = bytes / threads;
	uint64_t t0;
	int i, ret = 0;

	if (pthread_barrier_init(&go, NULL, threads + 1))
		return -ENOMEM;
	for (i = 0; i < threads; i++) {
		size_t off = (size_t)i * slice;

		w[i] = (struct worker){ .go = &go, .dst = dst + off, .src = src + off,
					.bytes = i == threads - 1 ? bytes - off : slice,
					.cpu = (int)(i % (ncpu > 0 ? ncpu : 1)) };
		ret = -pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (ret < 0) {
			/* Not reached in practice; the barrier would hang. */
			fprintf(stderr, "memcpy_bench: pthread_create: %s\n", strerror(-ret));
			exit(1);
		}
	}
	pthread_barrier_wait(&go);
	t0 = bench_now_ns();
	for (i = 0; i < threads; i++)
		pthread_join(w[i].tid, NULL);
	*ret_ns = bench_now_ns() - t0;
	pthread_barrier_destroy(&go);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mb", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 't' },
		{ "reps", required_argument, NULL, 'r' },
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ 0 }
	};
	static double gbps[MAX_REPS];
	long threads[32];
	size_t n_threads = 0, bytes = 256UL << 20, i, bad;
	int src = 0, dst = 1, reps = 5, c, r, ret;
	char *sbuf, *dbuf;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			bytes = strtoul(optarg, NULL, 10) << 20;
			break;
		case 't':
			if (bench_parse_list(optarg, threads, 32, &n_threads) < 0)
				n_threads = 0;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 's':
			src = atoi(optarg);
			break;
		case 'd':
			dst = atoi(optarg);
			break;
		default:
			n_threads = 0;
			optind = argc + 1;
		}
	}
	for (i = 0; i < n_threads; i++)
		if (threads[i] > MAX_THREADS)
			n_threads = 0;
	if (optind != argc || !n_threads || !bytes || reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "usage: memcpy_bench --threads LIST [--mb N] [--reps N] [--src NODE] [--dst NODE]\n");
		return 2;
	}

	ret = bench_alloc_on_node(bytes, src, false, SEED, (void **)&sbuf);
	if (ret == 0)
		ret = bench_alloc_on_node(bytes, dst, false, 0, (void **)&dbuf);
	if (ret < 0) {
		fprintf(stderr, "memcpy_bench: %zu MB on nodes %d and %d: %s\n",
			bytes >> 20, src, dst, strerror(-ret));
		return 1;
	}

	for (i = 0; i < n_threads; i++) {
		for (r = 0; r < reps; r++) {
			uint64_t ns = 0;

			memset(dbuf, 0, bytes);
			ret = copy_once(dbuf, sbuf, bytes, (int)threads[i], &ns);
			if (ret < 0) {
				fprintf(stderr, "memcpy_bench: %ld threads: %s\n",
					threads[i], strerror(-ret));
				return 1;
			}
			if (bench_check(dbuf, bytes, SEED, &bad) < 0) {
				fprintf(stderr, "memcpy_bench: %ld threads: wrong byte at offset %zu\n",
					threads[i], bad);
				return 1;
			}
			gbps[r] = (double)bytes / (double)ns;
		}
		printf("{\"type\": \"memcpy\", \"threads\": %ld, \"bytes\": %zu, \"gbps\": [",
		       threads[i], bytes);
		for (r = 0; r < reps; r++)
			printf("%s%.6f", r ? ", " : "", gbps[r]);
		printf("]}\n");
		fflush(stdout);
	}
	return 0;
}
