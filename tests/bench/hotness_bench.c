// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cost of the hotness table: CPU time per million samples on each path,
 * memory per million tracked pages and this process's peak RSS with a full
 * table, and how much of a Zipf-skewed hot set the bounded table keeps.
 * Times are CPU time (not wall time, so other load on the machine does not
 * count, though it still pollutes the caches).  Not a test (timings depend
 * on the machine); run it by hand:
 *
 *   build/tests/hotness_bench [MAX_ENTRIES]   (default 1048576)
 *
 * The table's memory is 2 MiB aligned and MADV_HUGEPAGE (BENCH_NO_THP=1 in
 * the environment: not).  It uses only the public API (hot_table.h), so
 * the same file builds against another implementation of that API for
 * comparison:
 *
 *   cc -O2 -I/tmp/other tests/bench/hotness_bench.c /tmp/other/hotness.c \
 *     -lm -o /tmp/other/hotness_bench && /tmp/other/hotness_bench
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "hot_table.h"
#include "test_geom.h"

#define SEC 1000000000ull
#define MILLION 1000000u

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *table(struct hot_table *t, uint32_t max)
{
	struct hot_params p = { .half_life_ns = 10 * SEC, .max_entries = max, .geom = TEST_GEOM_INIT };
	size_t need = hot_mem_size(max);
	void *mem = aligned_alloc(TEST_HUGE_SIZE, (need + TEST_HUGE_SIZE - 1) & ~(TEST_HUGE_SIZE - 1));

	/* What the daemon should do too: THP-backed, the random probes of a big
	 * table miss the TLB far less often. */
	if (mem && getenv("BENCH_NO_THP") == NULL)
		madvise(mem, need, MADV_HUGEPAGE);
	if (!mem || hot_init(t, &p, mem, need, 0) < 0) {
		fprintf(stderr, "hotness_bench: cannot set up a table of %u entries\n", max);
		exit(1);
	}
	return mem;
}

/*
 * Record MILLION samples of pid 1 at the addresses @addr_of gives, in drains
 * of DRAIN samples that share one now_ns (as the samplers do), and print the
 * CPU time per sample.
 */
#define DRAIN 4096

static void run(const char *what, struct hot_table *t, uint64_t (*addr_of)(uint64_t i),
		uint64_t len, uint64_t *clock_ns)
{
	uint64_t t0 = bench_cpu_ns();
	struct hot_stats st;

	for (uint64_t i = 0; i < MILLION; i++) {
		if (i % DRAIN == 0)
			*clock_ns += SEC / 10;	/* a tick */
		hot_record(t, 1, addr_of(i), len, 1.0 + (i & 3), *clock_ns);
	}
	t0 = bench_cpu_ns() - t0;
	hot_get_stats(t, &st);
	printf("%-46s %7.1f ms per million samples (%6.1f ns each); entries %llu\n",
	       what, t0 / 1e6, (double)t0 / MILLION, (unsigned long long)st.entries);
}

static uint64_t hot_set;	/* pages in the hot set for addr_hot() */
static uint64_t fresh;		/* next never-seen page for addr_new() */

static uint64_t addr_hot(uint64_t i)
{
	return (next_rand() % hot_set) * TEST_PAGE_SIZE;
}

static uint64_t addr_seq(uint64_t i)
{
	return (i % hot_set) * TEST_PAGE_SIZE;
}

static uint64_t addr_new(uint64_t i)
{
	return (1ull << 30) + fresh++ * TEST_PAGE_SIZE;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Retention: a 64 Ki-entry table fed a Zipf(@s) stream over @span times as
 * many pages (2048 samples per 100 ms tick for 60 s, half-life 10 s), the
 * page ranks shuffled halfway through when @move (the hot set moves).  The
 * exact decayed heat of every page is kept beside it; printed: the share of
 * the truly hottest N/16, N/4 and N/2 pages that the table holds at the end.
 */
static void retention(uint32_t span, double s, int move)
{
	const uint32_t n = 65536, f = span * n, ticks = 600;
	struct hot_params p = { .half_life_ns = 10 * SEC, .max_entries = n, .geom = TEST_GEOM_INIT };
	size_t need = hot_mem_size(n);
	void *mem = aligned_alloc(64, (need + 63) & ~(size_t)63);
	double *cdf = malloc(f * sizeof(double)), *truth = calloc(f, sizeof(double));
	double *sorted = malloc(f * sizeof(double)), sum = 0.0;
	uint32_t *perm = malloc(f * sizeof(uint32_t));
	const uint32_t ks[] = { n / 16, n / 4, n / 2 };
	struct hot_table t;
	uint64_t clk = 0;

	rng = 0x9e3779b97f4a7c15ull;	/* the same stream whatever ran before */
	if (!mem || !cdf || !truth || !sorted || !perm || hot_init(&t, &p, mem, need, 0) < 0) {
		fprintf(stderr, "hotness_bench: out of memory\n");
		exit(1);
	}
	for (uint32_t i = 0; i < f; i++) {
		sum += pow(i + 1, -s);
		cdf[i] = sum;
		perm[i] = i;
	}
	for (uint32_t k = 0; k < ticks; k++) {
		/* Heat scaled to time 0, as the table stores it: 60 s is 6
		 * half-lives, far from overflowing a double. */
		double w = exp2((double)k / 100.0);

		clk += SEC / 10;
		if (k == 0 || (move && k == ticks / 2))
			for (uint32_t i = f - 1; i > 0; i--) {
				uint32_t j = next_rand() % (i + 1), x = perm[i];

				perm[i] = perm[j];
				perm[j] = x;
			}
		for (int q = 0; q < 2048; q++) {
			double u = (double)(next_rand() >> 11) * 0x1p-53 * sum;
			uint32_t lo = 0, hi = f - 1, pg;

			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;

				if (cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			pg = perm[lo];
			truth[pg] += w;
			hot_record(&t, 1, (uint64_t)pg * TEST_PAGE_SIZE, TEST_PAGE_SIZE, 1.0, clk);
		}
	}
	memcpy(sorted, truth, f * sizeof(double));
	qsort(sorted, f, sizeof(double), cmp_desc);
	printf("retention, Zipf %.1f over %2ux the table%s:", s, span,
	       move ? ", hot set moved at 30 s" : "                       ");
	for (int q = 0; q < 3; q++) {
		double thr = sorted[ks[q] - 1];
		uint32_t in = 0, tot = 0;

		for (uint32_t i = 0; i < f; i++) {
			if (truth[i] < thr || truth[i] == 0.0)
				continue;
			tot++;
			if (hot_heat(&t, 1, (uint64_t)i * TEST_PAGE_SIZE, clk) > 0.0)
				in++;
		}
		printf(" top %u %.2f%%", ks[q], 100.0 * in / tot);
	}
	printf("\n");
	free(mem);
	free(cdf);
	free(truth);
	free(sorted);
	free(perm);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Eviction quality, as tests/unit/test_hotness.c measures it but larger and
 * over @seeds seeds: a table of @n entries with heats 1..n in random order,
 * then n/16 newcomers far hotter than all, each evicting one; the victim's
 * rank among the entries present (0 = the coldest, which an exact heap
 * always takes).
 */
static void eviction_quality(uint32_t n, int seeds)
{
	const uint32_t m = n / 16;
	struct hot_params p = { .half_life_ns = 10 * SEC, .max_entries = n, .geom = TEST_GEOM_INIT };
	size_t need = hot_mem_size(n);
	void *mem = aligned_alloc(64, (need + 63) & ~(size_t)63);
	uint32_t *heat_at = malloc(n * sizeof(uint32_t));
	uint32_t *page_of = malloc((n + 1) * sizeof(uint32_t));
	uint32_t *ranks = malloc(m * sizeof(uint32_t));
	unsigned char *present = malloc(n + 1);
	double mean_lo = 100, mean_hi = 0, p99_lo = 100, p99_hi = 0, worst = 0;
	struct hot_table t;

	if (!mem || !heat_at || !page_of || !ranks || !present) {
		fprintf(stderr, "hotness_bench: out of memory\n");
		exit(1);
	}
	for (int seed = 1; seed <= seeds; seed++) {
		uint64_t sum = 0;
		uint32_t lo = 1;
		double mean, p99;

		rng = 0x9e3779b97f4a7c15ull * (uint64_t)seed;
		hot_init(&t, &p, mem, need, 0);
		for (uint32_t i = 0; i < n; i++)
			heat_at[i] = i + 1;
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = next_rand() % (i + 1), x = heat_at[i];

			heat_at[i] = heat_at[j];
			heat_at[j] = x;
		}
		for (uint32_t i = 0; i < n; i++) {
			hot_record(&t, 1, (uint64_t)i * TEST_PAGE_SIZE, TEST_PAGE_SIZE, heat_at[i], 0);
			page_of[heat_at[i]] = i;
			present[heat_at[i]] = 1;
		}
		for (uint32_t e = 0; e < m; e++) {
			uint32_t rank = 0, h;

			hot_record(&t, 2, (uint64_t)e * TEST_PAGE_SIZE, TEST_PAGE_SIZE, 1e12, 0);
			for (h = lo; h <= n; h++) {
				if (!present[h])
					continue;
				if (hot_heat(&t, 1, (uint64_t)page_of[h] * TEST_PAGE_SIZE, 0) == 0.0)
					break;
				rank++;
			}
			if (h > n) {
				fprintf(stderr, "hotness_bench: a newcomer was evicted\n");
				exit(1);
			}
			present[h] = 0;
			while (lo <= n && !present[lo])
				lo++;
			ranks[e] = rank;
			sum += rank;
		}
		qsort(ranks, m, sizeof(uint32_t), cmp_u32);
		mean = 100.0 * sum / m / n;
		p99 = 100.0 * ranks[m * 99 / 100] / n;
		mean_lo = mean < mean_lo ? mean : mean_lo;
		mean_hi = mean > mean_hi ? mean : mean_hi;
		p99_lo = p99 < p99_lo ? p99 : p99_lo;
		p99_hi = p99 > p99_hi ? p99 : p99_hi;
		if (100.0 * ranks[m - 1] / n > worst)
			worst = 100.0 * ranks[m - 1] / n;
	}
	printf("eviction of %u from %u entries, %d seeds: victim rank mean %.2f-%.2f%%, "
	       "99th percentile %.2f-%.2f%%, worst %.2f%% (exact: 0)\n", m, n, seeds, mean_lo,
	       mean_hi, p99_lo, p99_hi, worst);
	free(mem);
	free(heat_at);
	free(page_of);
	free(ranks);
	free(present);
}

int main(int argc, char **argv)
{
	uint32_t max = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1u << 20;
	struct hot_entry_view *out = malloc(4096 * sizeof(*out));
	struct hot_table t;
	struct hot_stats st;
	uint64_t clk = 0, t0;
	size_t n;
	void *mem;

	printf("hotness table, max_entries %u: %zu bytes, %.2f bytes per entry, %.1f MiB per "
	       "million tracked pages\n", max, hot_mem_size(max), (double)hot_mem_size(max) / max,
	       (double)hot_mem_size(max) / max * MILLION / (1 << 20));
	printf("peak RSS before any table: %.1f MiB\n", bench_status_kib("VmHWM") / 1024.0);

	mem = table(&t, max);
	hot_set = 65536;
	run("prefill the 64 Ki-page hot set (inserts)", &t, addr_seq, TEST_PAGE_SIZE, &clk);
	run("update: 64 Ki-page hot set", &t, addr_hot, TEST_PAGE_SIZE, &clk);
	free(mem);

	mem = table(&t, max);
	hot_set = max;
	run("insert: 1M new pages, empty table", &t, addr_seq, TEST_PAGE_SIZE, &clk);
	run("update: hot set = the whole (full) table", &t, addr_hot, TEST_PAGE_SIZE, &clk);
	run("evict: 1M new pages into the full table", &t, addr_new, TEST_PAGE_SIZE, &clk);
	printf("peak RSS with the table full (%u entries): %.1f MiB, now %.1f MiB\n",
	       (unsigned)t.nused, bench_status_kib("VmHWM") / 1024.0,
	       bench_status_kib("VmRSS") / 1024.0);
	t0 = bench_cpu_ns();
	hot_record(&t, 1, 0, TEST_PAGE_SIZE, 1.0, clk + 64 * 10 * SEC);	/* 64 half-lives */
	printf("%-46s %7.1f ms (%llu rebases so far)\n", "a record that rebases the full table",
	       (bench_cpu_ns() - t0) / 1e6, (unsigned long long)(hot_get_stats(&t, &st), st.rebases));
	clk += 64 * 10 * SEC;

	t0 = bench_cpu_ns();
	n = hot_select_hottest(&t, 0, 0.0, clk, out, 4096);
	printf("%-46s %7.1f ms (%zu of %u entries)\n", "select the 4096 hottest",
	       (bench_cpu_ns() - t0) / 1e6, n, (unsigned)t.nused);
	t0 = bench_cpu_ns();
	n = hot_select_coldest(&t, 0, clk, out, 4096);
	printf("%-46s %7.1f ms\n", "select the 4096 coldest", (bench_cpu_ns() - t0) / 1e6);
	t0 = bench_cpu_ns();
	n = hot_drop_pid(&t, 1);
	printf("%-46s %7.1f ms (%zu entries)\n", "drop a pid", (bench_cpu_ns() - t0) / 1e6, n);
	free(mem);

	mem = table(&t, max);
	hot_set = 1024;
	for (uint64_t r = 0; r < hot_set; r++)
		hot_record(&t, 1, r * TEST_HUGE_SIZE, TEST_HUGE_SIZE, 1.0, clk);
	hot_set = 1024 * 512;
	run("fold: 4 KiB samples into 1024 2 MiB entries", &t, addr_hot, TEST_PAGE_SIZE, &clk);
	/* What a DAMON-fed table holds: a few 2 MiB ranges, a mostly empty table
	 * that the selectors walk on every tick. */
	t0 = bench_cpu_ns();
	for (int i = 0; i < 100; i++)
		n = hot_select_hottest(&t, 0, 0.0, clk, out, 4096);
	printf("%-46s %7.3f ms (%zu entries)\n", "select the hottest, sparse table",
	       (bench_cpu_ns() - t0) / 1e6 / 100, n);
	free(mem);
	free(out);
	eviction_quality(65536, 10);
	retention(4, 0.8, 0);
	retention(16, 0.8, 0);
	retention(16, 0.6, 1);
	return 0;
}
