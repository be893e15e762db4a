/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the manager's end-to-end tests share (test_pipeline.c,
 * test_pipeline_cold.c): a page map standing for move_pages(2), the
 * DRAM+CXL topology fixture, tierd started with a scripted sampler and
 * the map through struct manager_ops.
 */
#ifndef TIERD_TEST_PIPE_ENV_H
#define TIERD_TEST_PIPE_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"
#include "manager.h"
#include "migrate.h"
#include "sampler_fake.h"

#define SEC 1000000000ull
#define PG 4096ull
#define MIB (1ull << 20)
#define PID 4242
#define BASE 0x40000000ull
#define NPAGES 1024 /* 4 MiB: the hot first half, the unsampled second */
#define ENTRY_PAGES 512 /* a 2 MiB range of base pages */
/* The large map: 96 ranges, more than the 64 of one tick's candidates
 * (MAX_CAND_ENTRIES, 32 Ki base pages), then 8 cold on the fast node, then
 * 16 colder still on the slow one. */
#define HOT_RANGES 96
#define COLD_RANGES 8
#define SLOW_RANGES 16
#define MAP_PAGES ((HOT_RANGES + COLD_RANGES + SLOW_RANGES) * ENTRY_PAGES)
#define COLD_FIRST (HOT_RANGES * ENTRY_PAGES) /* first page of the cold ranges */
#define SLOW_FIRST (COLD_FIRST + COLD_RANGES * ENTRY_PAGES)
#define CAND_PAGES (32 << 10) /* MAX_CAND_ENTRIES in decide.c */
#define RESERVE_PAGES (CAND_PAGES / 4) /* kept for the coldest */
#define VIEWS 4096 /* MAX_VIEWS in gather.c: entries looked at a tick */
#define COLD_QUERY_RANGES 32 /* COLD_QUERY_PAGES in gather.c, in ranges */
#define QUERY_PAGES 4096 /* QUERY_PAGES in gather.c: pages one node query covers */
#define QUERY_ENTRIES 1024 /* QUERY_ENTRIES in gather.c: entries it covers */
#define GONE_PID 4343 /* a target whose queries fail with -ESRCH */
/* A second mapping of up to FAR_MAX 2 MiB ranges, every page on far_node. */
#define FAR_BASE 0x100000000ull
#define FAR_MAX 8192
#define FIXTURE_FREE_KB 12000000 /* node 0's MemFree in dram-cxl */

extern const char *fixtures_dir;
/* The manager of the test's tierd; one at a time. */
extern struct manager mgr;
extern char tmpdir[];

/* The fake kernel: which node each page of PID's [BASE, BASE + npages
 * pages) is on; other addresses are not mapped. */
struct page_map {
	int node[MAP_PAGES];
	int npages; /* NPAGES, or up to MAP_PAGES */
	bool has_promote;
	int queries, moves, promote_moves;
	unsigned long last_query; /* pages in the last node query */
	unsigned long queried_pages; /* in all node queries */
	int gone_queries; /* node queries of another pid than PID */
	unsigned long moved_pages;
	uint64_t clock_ns;
	uint64_t move_ns; /* fake time one move call takes; 0: 1 ms */
	int busy; /* page index + 1 that moves leave in place with -EBUSY; 0: none; -1: all */
	int far_ranges, far_node; /* the far mapping: how many ranges, their node */
	uint64_t page_bytes; /* the kernel's base page: PG, or a test's */
	unsigned long unaligned; /* addresses moves were given off a page boundary */
	unsigned long far_moved; /* pages moves asked of it (left where they are) */
};

extern const char *const conf_promote, *const conf_big;

int count_on(const struct page_map *m, int from, int to, int node);
void setup(struct tierd *d, const char *conf_text, char *root, size_t root_len,
	   struct sampler_fake *sf, struct page_map *map, struct manager_ops *fk);
void setup_big(struct tierd *d, char *root, size_t root_len, struct sampler_fake *sf,
	       struct page_map *map, struct manager_ops *fk);
/* tierd_init() and manager_init() with the fakes, as main() runs them. */
int start(struct tierd *d, const struct manager_ops *fk);
void stop(struct tierd *d);
/* Node 0 of the tree at @root has @free_kb free from now on. */
void node0_free(const char *root, unsigned long free_kb);
/* A writable copy of the fixture, made by writable_root(). */
extern char tree[];
void writable_root(struct tierd *d, unsigned long free_kb);

/* argv: FIXTURES_DIR; makes tmpdir.  0, or the exit code for a misuse. */
int pipe_env_init(int argc, char **argv, const char *name);
void pipe_env_fini(void);

#endif
