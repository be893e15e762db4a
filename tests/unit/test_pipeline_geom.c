// SPDX-License-Identifier: GPL-2.0-only
/*
 * The manager's tick end to end on kernels of three page geometries: x86-64
 * and most of arm64 (4 KiB base pages, 2 MiB PMD), arm64 with 16 KiB pages
 * (32 MiB PMD) and the GPU-coherent arm64 servers' 64 KiB pages (512 MiB
 * PMD).  The base page comes in through struct tierd's geom_ops (standing
 * for sysconf), the PMD from the fixture's hpage_pmd_size; tierd's range
 * is 2 MiB on all three.  The same scenario runs on each:
 *   - hotness keys: a sample off a page boundary counts for its base page,
 *     a region for the range it covers, a later sample inside that range
 *     folds into it;
 *   - the plan: every address page aligned, a range of base pages listed
 *     page by page, a PMD THP (the fake PAGEMAP_SCAN says so) passed as
 *     one address where it is the range, and listed page by page where
 *     it is larger;
 *   - accounting: bytes promoted per tier and node, and the move_pages
 *     bytes, are the pages that landed times the base page;
 *   - export: the metrics and tierctl status say the page sizes.
 *
 *   test_pipeline_geom FIXTURES_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_tree.h"
#include "metrics.h"
#include "page_geom_read.h"
#include "pipe_env.h"
#include "status.h"
#include "test.h"
#include "thp.h"

struct geom_case {
	const char *name;
	uint64_t base, pmd, range;
	const char *status; /* tierctl status's line */
};

static const struct geom_case cases[] = {
	{ "4 KiB", 4ull << 10, 2ull << 20, 2ull << 20,
	  "pages:    4.0 KiB base pages, 2.0 MiB PMD THPs, 2.0 MiB ranges\n" },
	{ "16 KiB", 16ull << 10, 32ull << 20, 2ull << 20,
	  "pages:    16.0 KiB base pages, 32.0 MiB PMD THPs, 2.0 MiB ranges\n" },
	{ "64 KiB", 64ull << 10, 512ull << 20, 2ull << 20,
	  "pages:    64.0 KiB base pages, 512.0 MiB PMD THPs, 2.0 MiB ranges\n" },
};

/* A fixed hot threshold: every sample below is hot, none is cold. */
static const char *const conf_geom =
	"interval_ms: 500\n"
	"tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
	"promotion: {max_rate_mb_per_s: 0, batch_pages: 2048, hot_threshold: 4}\n"
	"demotion: {enabled: false}\n"
	"copy_threads: {mode: off}\n";

static long case_page_size(void *ctx)
{
	return (long)((const struct geom_case *)ctx)->base;
}

static const struct page_geom_ops case_geom_ops = { .page_size = case_page_size };

/* The fake PAGEMAP_SCAN: [start, end) is PMD-mapped, PMD THPs. */
struct thp_fake {
	uint64_t start, end;
};

static int fake_scan(void *ctx, int fd, uint64_t start, uint64_t end, struct thp_region *vec,
		     size_t n)
{
	const struct thp_fake *f = ctx;

	if (start >= f->end || end <= f->start)
		return 0;
	vec[0] = (struct thp_region){ f->start, f->end, true };
	return 1;
}

static int fake_pfns_visible(void *ctx, const char *proc_root, unsigned int page_shift)
{
	return 0;
}

static const struct thp_ops fake_thp_ops = { .scan = fake_scan,
					     .pfns_visible = fake_pfns_visible };

/* tierd on a copy of the fixture with @c's THP size and base page, two
 * PMDs of PID mapped, every page on node 1. */
static void start_case(struct tierd *d, const struct geom_case *c, const char *conf,
		       struct sampler_fake *sf, struct page_map *map, struct manager_ops *fk,
		       struct thp_fake *thp)
{
	static char root[4096];
	char text[32];

	setup(d, conf, root, sizeof(root), sf, map, fk);
	writable_root(d, FIXTURE_FREE_KB);
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)c->pmd);
	CHECK_EQ_INT(fs_tree_put(tree, PAGE_GEOM_PMD_PATH, text), 0);
	/* Pagemaps to open; what they say is the fake's. */
	CHECK_EQ_INT(fs_tree_put(tree, "proc/self/pagemap", ""), 0);
	snprintf(text, sizeof(text), "proc/%d/pagemap", PID);
	CHECK_EQ_INT(fs_tree_put(tree, text, ""), 0);
	d->geom_ops = &case_geom_ops;
	d->geom_ctx = (void *)c;
	map->page_bytes = c->base;
	map->npages = (int)(2 * (c->pmd / c->base));
	*thp = (struct thp_fake){ 0 };
	fk->thp_ops = &fake_thp_ops;
	fk->thp_ctx = thp;
	CHECK_EQ_INT(start(d, fk), 0);
	CHECK_EQ_U64(d->geom.base, c->base);
	CHECK_EQ_U64(d->geom.pmd, c->pmd);
	CHECK_EQ_U64(d->geom.range, c->range);
	CHECK(d->geom.thp);
}

static void stop_case(struct tierd *d)
{
	stop(d);
	fs_tree_remove(tree);
}

/* The metrics and the status text say the page sizes. */
static void check_export(struct tierd *d, const struct geom_case *c)
{
	struct metrics *m = metrics_new();
	char *text = NULL, want[64];
	size_t len;
	FILE *f;

	tierd_metrics(d, m);
	CHECK_EQ_INT(metrics_render(m, &text, &len), 0);
	snprintf(want, sizeof(want), "\ntierd_page_size_bytes %llu\n", (unsigned long long)c->base);
	CHECK(text && strstr(text, want));
	snprintf(want, sizeof(want), "\ntierd_pmd_size_bytes %llu\n", (unsigned long long)c->pmd);
	CHECK(text && strstr(text, want));
	snprintf(want, sizeof(want), "\ntierd_range_size_bytes %llu\n",
		 (unsigned long long)c->range);
	CHECK(text && strstr(text, want));
	free(text);
	metrics_free(m);
	text = NULL;
	f = open_memstream(&text, &len);
	status_render(d, f, false, 2 * SEC);
	fclose(f);
	CHECK(text && strstr(text, c->status));
	if (text && !strstr(text, c->status))
		fprintf(stderr, "%s: status says:\n%s", c->name, text);
	free(text);
}

/*
 * Base pages: two samples in range 0, one of them off a page boundary, and
 * range 1 accessed whole (a region).  The table keys them by base page and
 * by range; the two pages and the range's pages are promoted, each
 * page at its own page-aligned address; the bytes are the pages' at the
 * kernel's page size.
 */
static void test_base_pages(const struct geom_case *c)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	struct thp_fake thp;
	const uint64_t b = c->base, pmd = c->range, ppr = pmd / b, bytes = pmd + 2 * b;
	struct hot_table *t;

	start_case(&d, c, conf_geom, &sf, &map, &fk, &thp);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + 5, 1, 10.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + 7 * b + b / 2, b, 10.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + pmd, pmd, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);

	t = sample_table(mgr.sample);
	CHECK(t != NULL);
	if (t) {
		struct hot_entry_view v[4];
		size_t n = hot_select_hottest(t, PID, 0.0, 1 * SEC, v, 4);

		CHECK_EQ_INT(n, 3);
		CHECK_EQ_U64(v[0].addr, BASE + pmd);
		CHECK_EQ_U64(v[0].len, pmd);
		CHECK_EQ_U64(v[1].len, b);
		CHECK_EQ_U64(v[2].len, b);
		CHECK_EQ_U64(v[1].addr + v[2].addr, 2 * BASE + 7 * b);
		CHECK_EQ_U64(hot_entry_len(t, PID, BASE + b - 1), b);
		CHECK_EQ_U64(hot_entry_len(t, PID, BASE + b), 0);
		/* A later sample inside the range folds into it. */
		CHECK_EQ_INT(hot_record(t, PID, BASE + pmd + 3 * b, b, 1.0, 1 * SEC), 1);
		CHECK_EQ_U64(hot_entry_len(t, PID, BASE + pmd + 3 * b), pmd);
	}
	/* One call, or two where the range's pages are more than batch_pages
	 * (2048 base pages) with the two pages before it: an intent is never
	 * split. */
	CHECK_EQ_INT(map.moves, ppr + 2 <= 2048 ? 1 : 2);
	CHECK_EQ_U64(map.unaligned, 0);
	CHECK_EQ_INT(count_on(&map, 0, (int)ppr, 0), 2);
	CHECK_EQ_INT(map.node[0], 0);
	CHECK_EQ_INT(map.node[7], 0);
	CHECK_EQ_INT(count_on(&map, (int)ppr, (int)(2 * ppr), 0), (int)ppr);
	CHECK_EQ_U64(d.stats.move_pages_addresses_total, ppr + 2);
	CHECK_EQ_U64(d.stats.move_pages_thps_total, 0);
	CHECK_EQ_U64(d.stats.decision_candidate_pages, ppr + 2);
	CHECK_EQ_U64(d.stats.decision.promote_bytes, bytes);
	CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, bytes);
	CHECK_EQ_U64(d.stats.node[0].promoted_bytes_total, bytes);
	CHECK_EQ_U64(d.stats.migrate_bytes_total, bytes);
	CHECK_EQ_U64(mgr.moved_bytes_total, bytes);
	check_export(&d, c);
	stop_case(&d);
}

/*
 * A PMD THP: where it is the range (4 KiB pages), range 1 is one folio
 * (PAGEMAP_SCAN says so), promoted as one address, its first byte, counted
 * as a THP and as the whole PMD's bytes.  Where it is larger (a 32 or
 * 512 MiB PMD), the hot range inside it is not one address, which would
 * move the whole PMD for a range's heat: its pages are listed each.
 */
static void test_thp(const struct geom_case *c)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	struct thp_fake thp;
	const uint64_t pmd = c->pmd, range = c->range, ppr = range / c->base;
	const bool one = range == pmd;

	start_case(&d, c, conf_geom, &sf, &map, &fk, &thp);
	thp = one ? (struct thp_fake){ BASE + range, BASE + 2 * range } :
		    (struct thp_fake){ BASE, BASE + pmd };
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + range, range, 20.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_INT(map.moves, 1);
	CHECK_EQ_U64(map.moved_pages, one ? 1 : ppr);
	CHECK_EQ_INT(map.node[ppr], 0);
	CHECK_EQ_INT(count_on(&map, 0, (int)(2 * ppr), 0), one ? 1 : (int)ppr);
	CHECK_EQ_U64(d.stats.move_pages_addresses_total, one ? 1 : ppr);
	CHECK_EQ_U64(d.stats.move_pages_thps_total, one ? 1 : 0);
	CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, range);
	CHECK_EQ_U64(d.stats.migrate_bytes_total, range);
	stop_case(&d);
}

/*
 * A promotion rate whose interval's worth is less than a THP (1 MB/s,
 * 500 ms ticks: 512 KiB): the THP still moves, once the bucket holds it
 * (full at start), and the next one waits for the rate to pay for it.
 * Only where the THP is the range: a larger one is not moved as one.
 */
static void test_thp_rate(const struct geom_case *c)
{
	static struct tierd d;
	static struct sampler_fake sf;
	static struct page_map map;
	struct manager_ops fk;
	struct thp_fake thp;
	const uint64_t pmd = c->pmd;

	start_case(&d, c,
		   "interval_ms: 500\n"
		   "tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
		   "promotion: {max_rate_mb_per_s: 1, batch_pages: 2048, hot_threshold: 4}\n"
		   "demotion: {enabled: false}\n"
		   "copy_threads: {mode: off}\n", &sf, &map, &fk, &thp);
	thp = (struct thp_fake){ BASE, BASE + 2 * pmd };
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE + pmd, pmd, 20.0), 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, pmd, 10.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 1 * SEC), 0);
	CHECK_EQ_U64(d.stats.move_pages_thps_total, 1);
	CHECK_EQ_U64(d.stats.tier[0].promoted_bytes_total, pmd);
	CHECK(d.stats.decision.held[POLICY_H_GLOBAL_RATE] > 0);
	CHECK_EQ_INT(sampler_fake_push(&sf, PID, BASE, pmd, 10.0), 0);
	CHECK_EQ_INT(manager_tick(&mgr, 2 * SEC), 0);
	CHECK_EQ_U64(d.stats.move_pages_thps_total, 1);
	stop_case(&d);
}

int main(int argc, char **argv)
{
	int r = pipe_env_init(argc, argv, "test_pipeline_geom");

	if (r)
		return r;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int before = test_failures;

		test_base_pages(&cases[i]);
		test_thp(&cases[i]);
		if (cases[i].range == cases[i].pmd)
			test_thp_rate(&cases[i]);
		printf("%s %s pages\n", test_failures == before ? "ok  " : "FAIL", cases[i].name);
	}
	pipe_env_fini();
	return TEST_EXIT();
}
