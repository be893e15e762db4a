// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cost of the hotness table: CPU time per million samples on each path, and
 * memory per million tracked pages, in CPU time (not wall time, so other
 * load on the machine does not count, though it still pollutes the caches).
 * Not a test (timings depend on the machine); run it by hand:
 *
 *   build/tests/hotness_bench [MAX_ENTRIES]   (default 1048576)
 *
 * The table's memory is 2 MiB aligned and MADV_HUGEPAGE (BENCH_NO_THP=1 in
 * the environment: not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "hotness.h"

#define SEC 1000000000ull
#define MILLION 1000000u

/* CPU time of this process: what the table costs, whatever else runs. */
static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

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
	struct hot_params p = { .half_life_ns = 10 * SEC, .max_entries = max };
	size_t need = hot_mem_size(max);
	void *mem = aligned_alloc(HOT_HUGE_SIZE, (need + HOT_HUGE_SIZE - 1) & ~(HOT_HUGE_SIZE - 1));

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
	uint64_t t0 = now();
	struct hot_stats st;

	for (uint64_t i = 0; i < MILLION; i++) {
		if (i % DRAIN == 0)
			*clock_ns += SEC / 10;	/* a tick */
		hot_record(t, 1, addr_of(i), len, 1.0 + (i & 3), *clock_ns);
	}
	t0 = now() - t0;
	hot_get_stats(t, &st);
	printf("%-46s %7.1f ms per million samples (%6.1f ns each); entries %llu\n",
	       what, t0 / 1e6, (double)t0 / MILLION, (unsigned long long)st.entries);
}

static uint64_t hot_set;	/* pages in the hot set for addr_hot() */
static uint64_t fresh;		/* next never-seen page for addr_new() */

static uint64_t addr_hot(uint64_t i)
{
	return (next_rand() % hot_set) * HOT_PAGE_SIZE;
}

static uint64_t addr_seq(uint64_t i)
{
	return (i % hot_set) * HOT_PAGE_SIZE;
}

static uint64_t addr_new(uint64_t i)
{
	return (1ull << 30) + fresh++ * HOT_PAGE_SIZE;
}

int main(int argc, char **argv)
{
	uint32_t max = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1u << 20;
	struct hot_entry_view *out = malloc(4096 * sizeof(*out));
	struct hot_table t;
	uint64_t clk = 0, t0;
	size_t n;
	void *mem;

	printf("hotness table, max_entries %u: %zu bytes per entry, %.1f MiB per million "
	       "tracked pages\n", max, hot_mem_size(max) / max,
	       (double)hot_mem_size(max) / max * MILLION / (1 << 20));

	mem = table(&t, max);
	hot_set = 65536;
	run("prefill the 64 Ki-page hot set (inserts)", &t, addr_seq, HOT_PAGE_SIZE, &clk);
	run("update: 64 Ki-page hot set", &t, addr_hot, HOT_PAGE_SIZE, &clk);
	free(mem);

	mem = table(&t, max);
	hot_set = max;
	run("insert: 1M new pages, empty table", &t, addr_seq, HOT_PAGE_SIZE, &clk);
	run("update: hot set = the whole (full) table", &t, addr_hot, HOT_PAGE_SIZE, &clk);
	run("evict: 1M new pages into the full table", &t, addr_new, HOT_PAGE_SIZE, &clk);

	t0 = now();
	n = hot_select_hottest(&t, 0, 0.0, clk, out, 4096);
	printf("%-46s %7.1f ms (%zu of %u entries)\n", "select the 4096 hottest", (now() - t0) / 1e6,
	       n, (unsigned)t.nused);
	t0 = now();
	n = hot_select_coldest(&t, 0, clk, out, 4096);
	printf("%-46s %7.1f ms\n", "select the 4096 coldest", (now() - t0) / 1e6);
	t0 = now();
	n = hot_drop_pid(&t, 1);
	printf("%-46s %7.1f ms (%zu entries)\n", "drop a pid", (now() - t0) / 1e6, n);
	free(mem);

	mem = table(&t, max);
	hot_set = 1024;
	for (uint64_t r = 0; r < hot_set; r++)
		hot_record(&t, 1, r * HOT_HUGE_SIZE, HOT_HUGE_SIZE, 1.0, clk);
	hot_set = 1024 * 512;
	run("fold: 4 KiB samples into 1024 2 MiB entries", &t, addr_hot, HOT_PAGE_SIZE, &clk);
	free(mem);
	free(out);
	return 0;
}
