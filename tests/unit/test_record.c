// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierd --record: what the hot table is told becomes a trace that
 * tierd-sim reads back (sim_trace_read(), the replay's reader): tenants
 * from the process's cgroup, pages dense per process in 2 MiB ranges, a
 * region split as the hot table folds it, time that never goes back, and
 * the size bound.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hot_table.h"
#include "machine.h"
#include "record.h"
#include "test.h"
#include "trace.h"
#include "test_geom.h"

#define MS 1000000ull
#define START (5000 * MS)

static char root[] = "/tmp/test_record.XXXXXX";
static char path[4200];

static void put(const char *rel, const char *text)
{
	char p[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	char p[4200];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(p, sizeof(p), "%s/proc", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/100", root);
	mkdir(p, 0755);
	/* A hybrid hierarchy: the v2 line is not the first. */
	put("proc/100/cgroup", "1:name=systemd:/db\n0::/db/main\n");
	snprintf(path, sizeof(path), "%s/heat.trace", root);
}

static const struct sim_rec none;

static const struct sim_rec *rec(const struct sim_trace *t, size_t i)
{
	return i < t->nr_recs ? &t->recs[i] : &none;
}

/* Through the hot table, as the sample stage wires it. */
static void test_round_trip(void)
{
	struct hot_params hp = { .half_life_ns = 1000 * MS, .max_entries = 1024, .geom = TEST_GEOM_INIT };
	struct sim_trace t = { 0 };
	char err[SIM_ERR_LEN];
	struct hot_table ht;
	struct recorder r;
	void *mem = calloc(1, hot_mem_size(hp.max_entries));

	CHECK(mem && hot_init(&ht, &hp, mem, hot_mem_size(hp.max_entries), START) == 0);
	CHECK_EQ_INT(record_open(&r, path, root, &test_geom, 0, START), 0);
	hot_set_observer(&ht, record_observe, &r);

	/* A sample: range 0 of pid 100, its second page, weight rounded up. */
	CHECK(hot_record(&ht, 100, 0x7f0000001000ull, 4096, 2.3, START + 5 * MS) == 1);
	/* A 4 MiB region: two new ranges, each its full weight. */
	CHECK(hot_record(&ht, 100, 0x10000000ull, 4 << 20, 4.0, START + 6 * MS) == 2);
	/* Range 0 again keeps its number; time going back stays where it was. */
	CHECK(hot_record(&ht, 100, 0x7f0000002000ull, 4096, 1.0, START + 1 * MS) == 1);
	/* A region across a range boundary: half of each range's weight. */
	CHECK(hot_record(&ht, 100, 0x10100000ull, 2 << 20, 2.0, START + 7 * MS) == 2);
	/* A process without a readable cgroup; zero weight records nothing. */
	CHECK(hot_record(&ht, 200, 0x5000ull, 4096, 1.0, START + 8 * MS) == 1);
	CHECK(hot_record(&ht, 200, 0x6000ull, 4096, 0.0, START + 9 * MS) == 0);
	CHECK_EQ_U64(r.lines, 7);
	CHECK_EQ_INT(record_close(&r), 0);

	CHECK_EQ_INT(sim_trace_read(path, &t, err), 0);
	CHECK_EQ_INT(t.nr_tenants, 2);
	CHECK_EQ_INT(t.nr_recs, 7);
	if (t.nr_tenants == 2) {
		CHECK_EQ_STR(t.tenants[rec(&t, 0)->tenant], "/db/main/pid100");
		CHECK_EQ_STR(t.tenants[rec(&t, 6)->tenant], "/pid200");
	}
	CHECK_EQ_U64(rec(&t, 0)->time_us, 5000);
	CHECK_EQ_U64(rec(&t, 0)->page, 1);
	CHECK_EQ_U64(rec(&t, 0)->accesses, 3);
	CHECK_EQ_U64(rec(&t, 1)->page, 512);
	CHECK_EQ_U64(rec(&t, 1)->accesses, 4);
	CHECK_EQ_U64(rec(&t, 2)->page, 1024);
	CHECK_EQ_U64(rec(&t, 2)->time_us, 6000);
	CHECK_EQ_U64(rec(&t, 3)->page, 2);
	CHECK_EQ_U64(rec(&t, 3)->time_us, 6000);
	CHECK_EQ_U64(rec(&t, 4)->page, 512 + 256);
	CHECK_EQ_U64(rec(&t, 4)->accesses, 1);
	CHECK_EQ_U64(rec(&t, 5)->page, 1024);
	CHECK_EQ_U64(rec(&t, 6)->page, 5);
	CHECK_EQ_U64(rec(&t, 6)->time_us, 8000);
	sim_trace_free(&t);
	free(mem);
}

/* The size bound: nothing past it, and the file still reads. */
static void test_bound(void)
{
	struct sim_trace t = { 0 };
	char err[SIM_ERR_LEN];
	struct recorder r;
	int i;

	CHECK_EQ_INT(record_open(&r, path, root, &test_geom, 400, START), 0);
	for (i = 0; i < 100; i++)
		record_observe(&r, 100, (uint64_t)i << 21, 4096, 1.0, START + (uint64_t)i * MS);
	CHECK(r.full);
	CHECK(r.bytes < 400 + 64);
	CHECK(r.lines > 0 && r.lines < 100);
	CHECK_EQ_INT(record_close(&r), 0);
	CHECK_EQ_INT(sim_trace_read(path, &t, err), 0);
	CHECK_EQ_U64(t.nr_recs, r.lines);
	sim_trace_free(&t);
}

/* Many ranges: the index grows and keeps every number. */
static void test_many_ranges(void)
{
	struct sim_trace t = { 0 };
	char err[SIM_ERR_LEN];
	struct recorder r;
	size_t i, bad = 0;

	CHECK_EQ_INT(record_open(&r, path, root, &test_geom, 0, START), 0);
	for (i = 0; i < 20000; i++)
		record_observe(&r, 100, 0x200000000000ull + ((uint64_t)i << 21), 4096, 1.0, START);
	for (i = 0; i < 20000; i++)
		record_observe(&r, 100, 0x200000000000ull + ((uint64_t)i << 21), 4096, 1.0, START);
	CHECK_EQ_U64(r.nused, 20000);
	CHECK_EQ_INT(record_close(&r), 0);
	CHECK_EQ_INT(sim_trace_read(path, &t, err), 0);
	CHECK_EQ_U64(t.nr_recs, 40000);
	for (i = 0; i < t.nr_recs && i < 40000; i++)
		bad += t.recs[i].page != (uint64_t)(i % 20000) * 512;
	CHECK_EQ_U64(bad, 0);
	sim_trace_free(&t);
}

/*
 * 64 KiB pages: page numbers count 64 KiB pages, 32 to a 2 MiB range (the
 * PMD is 512 MiB), and the header says so for tierd-sim.
 */
static void test_64k_pages(void)
{
	static const struct page_geom g = PAGE_GEOM_INIT(64 << 10, 512 << 20);
	struct sim_trace t = { 0 };
	char err[SIM_ERR_LEN];
	struct recorder r;

	CHECK_EQ_INT(record_open(&r, path, root, &g, 0, START), 0);
	/* A sample in the third 64 KiB page of range 0. */
	record_observe(&r, 100, 0x7f0000020000ull + 5, 64 << 10, 1.0, START);
	/* A 3 MiB region from 1 MiB into a range: half of it, then the whole
	 * next: ranges are 2 MiB (32 pages), not the 512 MiB PMD. */
	record_observe(&r, 100, 0x40000000ull + (1 << 20), 3 << 20, 2.0, START + MS);
	CHECK_EQ_INT(record_close(&r), 0);
	CHECK_EQ_INT(sim_trace_read(path, &t, err), 0);
	CHECK_EQ_U64(t.page_bytes, 64 << 10);
	CHECK_EQ_INT(t.nr_recs, 3);
	CHECK_EQ_U64(rec(&t, 0)->page, 2);
	CHECK_EQ_U64(rec(&t, 1)->page, 32 + 16);
	CHECK_EQ_U64(rec(&t, 1)->accesses, 1);
	CHECK_EQ_U64(rec(&t, 2)->page, 2 * 32);
	CHECK_EQ_U64(rec(&t, 2)->accesses, 2);
	sim_trace_free(&t);
}

static void test_open_fails(void)
{
	struct recorder r;

	CHECK_EQ_INT(record_open(&r, "/nonexistent/dir/heat.trace", root, &test_geom, 0, START), -ENOENT);
}

int main(void)
{
	char cmd[4300];

	setup();
	RUN(test_round_trip);
	RUN(test_bound);
	RUN(test_many_ranges);
	RUN(test_64k_pages);
	RUN(test_open_fails);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return TEST_EXIT();
}
