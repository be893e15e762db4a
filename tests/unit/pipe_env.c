// SPDX-License-Identifier: GPL-2.0-only
/* The manager's end-to-end tests' fakes and set-up (pipe_env.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_tree.h"
#include "pipe_env.h"
#include "test.h"

const char *fixtures_dir;
struct manager mgr;
char tmpdir[] = "/tmp/test_pipeline.XXXXXX";

static int map_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			  const int *nodes, int *status, int flags)
{
	struct page_map *m = ctx;

	if (count == 0 && !addrs)
		return (flags & MPOL_MF_PROMOTE) && !m->has_promote ? -EINVAL : 0;
	if (pid != PID) {
		m->gone_queries += !nodes;
		return -ESRCH;
	}
	if (nodes) {
		m->moves++;
		m->promote_moves += !!(flags & MPOL_MF_PROMOTE);
	} else {
		m->queries++;
		m->last_query = count;
		m->queried_pages += count;
	}
	for (unsigned long i = 0; i < count; i++) {
		uint64_t a = (uint64_t)(uintptr_t)addrs[i];
		size_t pg = (a - BASE) / m->page_bytes;

		if (a >= FAR_BASE && a < FAR_BASE + (uint64_t)m->far_ranges * 2 * MIB) {
			m->far_moved += !!nodes;
			status[i] = m->far_node;
			continue;
		}
		if (a < BASE || pg >= (size_t)m->npages) {
			status[i] = -ENOENT;
			continue;
		}
		if (nodes && (m->busy == (int)pg + 1 || m->busy < 0)) {
			status[i] = -EBUSY;
			continue;
		}
		if (nodes) {
			m->unaligned += a % m->page_bytes != 0;
			m->node[pg] = nodes[i];
			m->moved_pages++;
		}
		status[i] = m->node[pg];
	}
	m->clock_ns += nodes && m->move_ns ? m->move_ns : 1000000;
	return 0;
}

static uint64_t map_now_ns(void *ctx)
{
	return ((struct page_map *)ctx)->clock_ns;
}

const struct mig_ops map_ops = {
	.move_pages = map_move_pages,
	.now_ns = map_now_ns,
};

int count_on(const struct page_map *m, int from, int to, int node)
{
	int n = 0;

	for (int i = from; i < to; i++)
		n += m->node[i] == node;
	return n;
}

void setup(struct tierd *d, const char *conf_text, char *root, size_t root_len,
		  struct sampler_fake *sf, struct page_map *map, struct manager_ops *fk)
{
	static const pid_t pids[] = { PID };
	char path[200];
	FILE *f;

	memset(d, 0, sizeof(*d));
	snprintf(root, root_len, "%s/topology/dram-cxl", fixtures_dir);
	d->root = root;
	snprintf(path, sizeof(path), "%s/tierd.yaml", tmpdir);
	f = fopen(path, "w");
	fputs(conf_text, f);
	fclose(f);
	snprintf(d->config_path, sizeof(d->config_path), "%s", path);
	snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s", tmpdir);
	d->no_knobs = true;

	memset(map, 0, sizeof(*map));
	map->npages = NPAGES;
	map->page_bytes = PG;
	for (int i = 0; i < MAP_PAGES; i++)
		map->node[i] = 1;
	map->has_promote = true;
	sampler_fake_init(sf, "fake");
	*fk = (struct manager_ops){
		.sampler = &sf->base,
		.pids = pids,
		.nr_pids = 1,
		.mig_ops = &map_ops,
		.mig_ctx = map,
	};
}

int start(struct tierd *d, const struct manager_ops *fk)
{
	int r = tierd_init(d);

	return r < 0 ? r : manager_init(&mgr, d, fk);
}

void stop(struct tierd *d)
{
	manager_fini(&mgr);
	tierd_fini(d);
}

const char *const conf_promote =
	"interval_ms: 500\n"
	"tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
	"promotion: {max_rate_mb_per_s: 0, batch_pages: 2048}\n"
	"demotion: {enabled: false}\n"
	"copy_threads: {mode: off}\n";

/*
 * The large map: HOT_RANGES ranges on node 1, COLD_RANGES on node 0,
 * SLOW_RANGES on node 1; demotion on, a fixed hot threshold of 8 (cold at
 * 4 and below).
 */
const char *const conf_big =
	"interval_ms: 500\n"
	"tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
	"promotion: {max_rate_mb_per_s: 0, batch_pages: 2048, hot_threshold: 8}\n"
	"demotion: {enabled: true, cold_age_s: 1}\n"
	"copy_threads: {mode: off}\n";

void setup_big(struct tierd *d, char *root, size_t root_len, struct sampler_fake *sf,
		      struct page_map *map, struct manager_ops *fk)
{
	setup(d, conf_big, root, root_len, sf, map, fk);
	map->npages = MAP_PAGES;
	for (int i = COLD_FIRST; i < SLOW_FIRST; i++)
		map->node[i] = 0;
}

void node0_free(const char *root, unsigned long free_kb)
{
	char meminfo[256];

	snprintf(meminfo, sizeof(meminfo),
		 "Node 0 MemTotal:       16777216 kB\nNode 0 MemFree:        %lu kB\n", free_kb);
	CHECK_EQ_INT(fs_tree_put(root, "sys/devices/system/node/node0/meminfo", meminfo), 0);
}

char tree[sizeof("/tmp/test_pipeline_root.XXXXXX")];

/* d->root: a copy of the fixture (d->root) where node 0 has @free_kb free;
 * fs_tree_remove(tree) after tierd_fini(). */
void writable_root(struct tierd *d, unsigned long free_kb)
{
	snprintf(tree, sizeof(tree), "/tmp/test_pipeline_root.XXXXXX");
	CHECK_EQ_INT(fs_tree_copy(d->root, tree), 0);
	node0_free(tree, free_kb);
	d->root = tree;
}

int pipe_env_init(int argc, char **argv, const char *name)
{
	if (argc != 2 || !mkdtemp(tmpdir)) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", name);
		return 2;
	}
	fixtures_dir = argv[1];
	return 0;
}

void pipe_env_fini(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/tierd.yaml", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}
