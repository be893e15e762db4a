// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cost of the hotness table: CPU time per million samples on each path, and
 * memory per million tracked pages.  Not a test (timings depend on the
 * machine); run it by hand:
 *
 *   build/tests/hotness_bench [MAX_ENTRIES]   (default 1048576)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hotness.h"

#define SEC 1000000000ull
#define MILLION 1000000u

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
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
	void *mem = aligned_alloc(64, (need + 63) & ~(size_t)63);

	if (!mem || hot_init(t, &p, mem, need, 0) < 0) {
		fprintf(stderr, "hotness_bench: cannot set up a table of %u entries\n", max);
		exit(1);
	}
	return mem;
}

/* Record MILLION samples from @addr_of and print ns per sample. */
static void run(const char *what, struct hot_table *t, uint64_t (*addr_of)(uint64_t i),
		uint64_t len, uint64_t *clock_ns)
{
	uint64_t t0 = now();
	struct hot_stats st;

	for (uint64_t i = 0; i < MILLION; i++) {
		/* 10 us of "sampled time" per sample: decay is exercised too. */
		*clock_ns += 10000;
		hot_record(t, 1 + (int)(i & 7), addr_of(i), len, 1.0, *clock_ns);
	}
	t0 = now() - t0;
	hot_get_stats(t, &st);
	printf("%-44s %8.1f ms per million samples (%5.1f ns each); entries %llu, evictions %llu\n",
	       what, t0 / 1e6, (double)t0 / MILLION, (unsigned long long)st.entries,
	       (unsigned long long)st.evictions);
}

static uint64_t hot_set;	/* pages in the hot set for addr_hot() */

static uint64_t addr_hot(uint64_t i)
{
	return (next_rand() % hot_set) * HOT_PAGE_SIZE;
}

static uint64_t addr_huge(uint64_t i)
{
	return (next_rand() % hot_set) * HOT_HUGE_SIZE;
}

static uint64_t addr_new(uint64_t i)
{
	return (i + (next_rand() & 0xffffff00000ull)) * HOT_PAGE_SIZE;
}

int main(int argc, char **argv)
{
	uint32_t max = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1u << 20;
	struct hot_entry_view *out = malloc(4096 * sizeof(*out));
	struct hot_table t;
	uint64_t clk = 0, t0;
	void *mem;

	printf("hotness table, max_entries %u (%zu bytes per entry, %.1f MiB per million "
	       "tracked pages)\n", max, hot_mem_size(max) / max,
	       (double)hot_mem_size(max) / max * MILLION / (1 << 20));

	mem = table(&t, max);
	run("insert: 1M new pages into an empty table", &t, addr_new, HOT_PAGE_SIZE, &clk);
	hot_set = 65536;
	run("update: hot set of 64Ki pages, table full", &t, addr_hot, HOT_PAGE_SIZE, &clk);
	run("evict: 1M new pages into a full table", &t, addr_new, HOT_PAGE_SIZE, &clk);
	free(mem);

	mem = table(&t, max);
	hot_set = max / 2;
	run("update: hot set of max/2 pages (cache-cold)", &t, addr_hot, HOT_PAGE_SIZE, &clk);
	run("the same again (table warm)", &t, addr_hot, HOT_PAGE_SIZE, &clk);
	hot_set = 1024;
	run("2 MiB folios: 1024 of them, absorbing pages", &t, addr_huge, HOT_HUGE_SIZE, &clk);
	hot_set = max / 2;
	run("4 KiB samples with 2 MiB entries present", &t, addr_hot, HOT_PAGE_SIZE, &clk);

	t0 = now();
	size_t n = hot_select_hottest(&t, 0, 0.0, clk, out, 4096);
	printf("%-44s %8.1f ms (%zu results over %u entries)\n", "select 4096 hottest",
	       (now() - t0) / 1e6, n, (unsigned)t.nused);
	t0 = now();
	n = hot_select_coldest(&t, 0, clk, out, 4096);
	printf("%-44s %8.1f ms\n", "select 4096 coldest", (now() - t0) / 1e6);
	t0 = now();
	n = hot_drop_pid(&t, 3);
	printf("%-44s %8.1f ms (%zu entries dropped)\n", "drop one pid", (now() - t0) / 1e6, n);
	free(mem);
	free(out);
	return 0;
}
