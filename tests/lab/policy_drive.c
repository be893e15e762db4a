// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lab driver for the decision and action path, without a hotness source:
 * the scenario knows which pages are hot, so heat is synthetic (a sampler
 * of its own, through struct manager_ops), and everything after it is
 * tierd's own tick, manager_tick(), with its config written by the
 * scenario: gather's node queries and cgroup usage, core/policy,
 * core/batch, sys/migrate with the real move_pages, core/account.  Where
 * pages end up is read back with a move_pages node query, never taken
 * from tierd's counters.
 *
 *   policy_drive promote      hot set on node 1 -> node 0; cold set stays;
 *                             a dry run first moves nothing
 *   policy_drive demote       node 0 filled past its low watermark -> the
 *                             coldest pages go to node 1 until it is above
 *                             again; the hot ones stay
 *   policy_drive cgroup-cap   two cgroups, one capped at 8 MiB of node 0
 *   policy_drive gpu          (vm --gpu) node 2 takes only the allowed
 *                             cgroup's pages, up to the rule's cap
 *   policy_drive copythreads  (vm --patched) the copy-thread controller
 *                             lowers vm.migrate_copy_threads under a CPU
 *                             stress and raises it when the stress ends;
 *                             skips (77) on a kernel without the knobs
 *
 * Runs as root inside the guest (tests/lab/vm); exits 0 on success, 1 on a
 * failed check, 77 when the guest lacks what the scenario needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "batch.h"
#include "cgroup.h"
#include "copythreads.h"
#include "daemon.h"
#include "hotness.h"
#include "knobs.h"
#include "load.h"
#include "manager.h"
#include "migrate.h"
#include "policy.h"
#include "sampler.h"

#define PG 4096ul
#define THP_BYTES (2ul << 20)
#define MiB (1ul << 20)
#define MAX_CAND (1 << 18)
#define MAX_REGIONS 8
#define MAX_TICKS 8
#define CGROOT "/sys/fs/cgroup"

static int failures;

#define EXPECT(cond, ...)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			failures++;                                           \
		}                                                             \
	} while (0)

/* A range of a process's memory with one synthetic heat, recorded at each
 * tick's drain; heat 0: never sampled, unless the scenario samples cold
 * regions (once, a minute in the past: old enough to demote). */
struct region {
	int pid;
	uint64_t addr;
	uint64_t bytes;
	bool thp;
	uint32_t heat;
};

/* What the scenario puts in tierd.yaml, and its regions. */
struct scenario {
	struct topology topo; /* from libnuma: which nodes have CPUs */
	unsigned int low_pct, high_pct; /* tier 0's watermarks */
	uint32_t hot_threshold;
	bool demote, sample_cold, dry_run;
	int gpu_node; /* -1 none */
	uint64_t gpu_max;
	char gpu_allow[64];
	struct region regions[MAX_REGIONS];
	int nr_regions;
	/* cgroups: paths under CGROOT, caps */
	int nr_cgroups;
	char cg_path[4][64];
	uint64_t cg_cap[4];
};

static struct policy_intent intents[MAX_CAND];
static void *qaddrs[MAX_CAND];
static int qstatus[MAX_CAND];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Nodes from libnuma: tier 0 = nodes with CPUs, tier 1 = the CPU-less. */
static void topo_from_libnuma(struct topology *t, int gpu_node)
{
	struct bitmask *cpus = numa_allocate_cpumask();

	memset(t, 0, sizeof(*t));
	t->nr_tiers = 2;
	strcpy(t->tiers[0].name, "dram");
	strcpy(t->tiers[1].name, "slow");
	t->tier_source = TOPO_TIER_CONFIG;
	for (int id = 0; id <= numa_max_node(); id++) {
		long long free_b, total = numa_node_size64(id, &free_b);
		struct topo_node *n;

		if (total <= 0)
			continue;
		n = &t->nodes[t->nr_nodes++];
		n->id = id;
		n->has_memory = true;
		numa_node_to_cpus(id, cpus);
		n->nr_cpus = numa_bitmask_weight(cpus);
		n->has_cpus = n->nr_cpus > 0;
		n->total_bytes = total;
		n->free_bytes = free_b;
		n->kernel_tier = -1;
		n->gpu = id == gpu_node;
		n->tier = n->has_cpus ? 0 : 1;
		t->tiers[n->tier].nodes[t->tiers[n->tier].nr_nodes++] = id;
	}
	for (int i = 0; i < t->nr_nodes; i++)
		for (int j = 0; j < t->nr_nodes; j++)
			t->distance[i][j] = numa_distance(t->nodes[i].id, t->nodes[j].id);
	numa_free_cpumask(cpus);
}

/* Anonymous memory of this process placed on @node, touched, policy reset. */
static void *alloc_on(int node, uint64_t bytes, bool thp)
{
	unsigned long mask = 1ul << node;
	uint64_t len = bytes + (thp ? THP_BYTES : 0);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (thp) {
		p = (char *)(((uintptr_t)p + THP_BYTES - 1) & ~(THP_BYTES - 1));
		madvise(p, bytes, MADV_HUGEPAGE);
	} else {
		madvise(p, bytes, MADV_NOHUGEPAGE);
	}
	if (mbind(p, bytes, MPOL_BIND, &mask, sizeof(mask) * 8, 0) < 0)
		return NULL;
	for (uint64_t o = 0; o < bytes; o += PG)
		p[o] = (char)(o / PG) | 1;
	mbind(p, bytes, MPOL_DEFAULT, NULL, 0, 0);
	return p;
}

/* How many base pages of [addr, addr+bytes) of @pid are on each node. */
static int count_nodes(int pid, uint64_t addr, uint64_t bytes, long counts[TOPO_MAX_NODES])
{
	size_t n = bytes / PG;

	memset(counts, 0, sizeof(long) * TOPO_MAX_NODES);
	for (size_t i = 0; i < n; i++)
		qaddrs[i] = (void *)(uintptr_t)(addr + i * PG);
	if (numa_move_pages(pid, n, qaddrs, NULL, qstatus, 0) < 0)
		return -errno;
	for (size_t i = 0; i < n; i++)
		if (qstatus[i] >= 0 && qstatus[i] < TOPO_MAX_NODES)
			counts[qstatus[i]]++;
	return 0;
}

/* AnonHugePages of this process's mapping at @addr, in bytes. */
static uint64_t thp_bytes_at(uint64_t addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false;
	uint64_t kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = addr >= lo && addr < hi;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb * 1024;
}

/* ---- tierd's tick, with the scenario's heat ---- */

struct synth {
	struct sampler base;
	const struct scenario *s;
	bool started, cold_done;
	uint64_t samples;
};

static int synth_probe(struct sampler *x, char *why, size_t len)
{
	return 0;
}

static int synth_start(struct sampler *x, char *why, size_t len)
{
	((struct synth *)x)->started = true;
	return 0;
}

static int synth_set_targets(struct sampler *x, const pid_t *pids, size_t n)
{
	return 0;
}

/* Every region's heat into the table: one record per THP, or per page. */
static int synth_drain(struct sampler *x, struct hot_table *t, uint64_t now)
{
	struct synth *sy = (struct synth *)x;
	const struct scenario *s = sy->s;
	uint64_t old = now > 60000000000ull ? now - 60000000000ull : 0;

	for (int r = 0; r < s->nr_regions; r++) {
		const struct region *rg = &s->regions[r];
		uint64_t step = rg->thp ? THP_BYTES : PG;
		bool cold = !rg->heat;

		if (cold && (!s->sample_cold || sy->cold_done))
			continue;
		for (uint64_t o = 0; o < rg->bytes; o += step)
			hot_record(t, rg->pid, rg->addr + o, step, cold ? 1.0 : rg->heat,
				   cold ? old : now);
		sy->samples += rg->bytes / step;
	}
	sy->cold_done = true;
	return 0;
}

static void synth_stop(struct sampler *x)
{
	((struct synth *)x)->started = false;
}

static int synth_fd(struct sampler *x)
{
	return -1;
}

static void synth_describe(struct sampler *x, struct sampler_status *ret)
{
	struct synth *sy = (struct synth *)x;

	memset(ret, 0, sizeof(*ret));
	ret->name = "synthetic";
	ret->running = sy->started;
	ret->samples = sy->samples;
	snprintf(ret->why, sizeof(ret->why), "the scenario's heat");
	ret->cost_source = "none";
}

static void synth_free(struct sampler *x)
{
}

static const struct sampler_ops synth_ops = {
	.name = "synthetic",
	.probe = synth_probe,
	.start = synth_start,
	.set_targets = synth_set_targets,
	.drain = synth_drain,
	.stop = synth_stop,
	.fd = synth_fd,
	.describe = synth_describe,
	.free = synth_free,
};

/* tierd with its manager, the scenario's config and heat. */
struct drive {
	struct tierd d;
	struct manager m;
	struct synth sy;
	pid_t pids[MAX_REGIONS];
	char dir[64];
};

/* The scenario as tierd.yaml: tier 0 the nodes with CPUs, tier 1 the rest. */
static void write_conf(const struct scenario *s, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fprintf(f, "interval_ms: 1000\ntiers:\n");
	for (int t = 0; t < 2; t++) {
		fprintf(f, "  - name: %s\n    nodes: [", t ? "slow" : "dram");
		for (int i = 0, k = 0; i < s->topo.nr_nodes; i++)
			if (s->topo.nodes[i].has_cpus == !t)
				fprintf(f, "%s%d", k++ ? ", " : "", s->topo.nodes[i].id);
		fprintf(f, "]\n");
		if (!t)
			fprintf(f, "    low_watermark_pct: %u\n    high_watermark_pct: %u\n",
				s->low_pct, s->high_pct);
	}
	fprintf(f, "promotion: {hot_threshold: %u, max_rate_mb_per_s: 0}\n"
		   "demotion: {enabled: %s, cold_age_s: 1}\n"
		   "sampling: {half_life_ms: 3600000}\n"
		   "copy_threads: {mode: off}\ndry_run: %s\n",
		s->hot_threshold, s->demote ? "true" : "false", s->dry_run ? "true" : "false");
	if (s->nr_cgroups)
		fprintf(f, "cgroups:\n");
	for (int c = 0; c < s->nr_cgroups; c++)
		fprintf(f, "  - {path: %s, fast_tier_max_bytes: %llu}\n", s->cg_path[c],
			(unsigned long long)s->cg_cap[c]);
	if (s->gpu_node >= 0)
		fprintf(f, "gpu_nodes:\n  - {node: %d, max_bytes: %llu, allow: [%s]}\n",
			s->gpu_node, (unsigned long long)s->gpu_max, s->gpu_allow);
	fclose(f);
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

/* tierd_init() and manager_init() as main() runs them, with the scenario's
 * sampler and processes in manager_ops. */
static int drive_start(struct drive *dr, const struct scenario *s)
{
	struct manager_ops ops = { .sampler = &dr->sy.base, .pids = dr->pids };
	int r;

	memset(dr, 0, sizeof(*dr));
	snprintf(dr->dir, sizeof(dr->dir), "/tmp/policy_drive.XXXXXX");
	if (!mkdtemp(dr->dir))
		return -errno;
	snprintf(dr->d.config_path, sizeof(dr->d.config_path), "%s/tierd.yaml", dr->dir);
	snprintf(dr->d.runtime_dir, sizeof(dr->d.runtime_dir), "%s", dr->dir);
	write_conf(s, dr->d.config_path);
	dr->d.root = "/";
	dr->d.no_knobs = true;
	dr->sy = (struct synth){ .base.ops = &synth_ops, .s = s };
	for (int r2 = 0; r2 < s->nr_regions; r2++) {
		bool seen = false;

		for (size_t i = 0; i < ops.nr_pids; i++)
			seen |= dr->pids[i] == s->regions[r2].pid;
		if (!seen)
			dr->pids[ops.nr_pids++] = s->regions[r2].pid;
	}
	qsort(dr->pids, ops.nr_pids, sizeof(pid_t), cmp_pid);
	r = tierd_init(&dr->d);
	if (r == 0)
		r = manager_init(&dr->m, &dr->d, &ops);
	EXPECT(r == 0, "tierd_init, manager_init: %s", strerror(-r));
	return r;
}

static void drive_stop(struct drive *dr)
{
	char path[128];

	manager_fini(&dr->m);
	tierd_fini(&dr->d);
	snprintf(path, sizeof(path), "%s/tierd.yaml", dr->dir);
	unlink(path);
	rmdir(dr->dir);
}

/* One tick of tierd.  Returns the intents it decided. */
static size_t tick(struct drive *dr)
{
	const struct policy_stats *st = &dr->m.decided.stats;
	const struct mig_run_result *run = &dr->m.run;
	int r = manager_tick(&dr->m, now_ns());

	EXPECT(r == 0, "manager_tick: %s", strerror(-r));
	printf("tick: %zu candidates, T=%u C=%u, %zu intents (promote %lu B, demote %lu B), "
	       "%zu batches, %zu calls (%zu failed), moved %lu B in %lu us%s\n",
	       dr->m.gathered.nr_cand, st->hot_threshold, st->cold_threshold,
	       dr->m.decided.nr_intents, st->promote_bytes, st->demote_bytes,
	       dr->m.plan ? dr->m.plan->nr_batches : 0, run->calls, run->failed_calls,
	       run->moved_bytes, run->elapsed_ns / 1000, dr->d.dry_run ? " (dry run)" : "");
	return dr->m.decided.nr_intents;
}

static struct account *drive_account(struct drive *dr)
{
	return move_account(dr->m.move);
}

/* Ticks until nothing is decided; returns the ticks run. */
static int run_until_quiet(struct drive *dr)
{
	int t;

	for (t = 1; t <= MAX_TICKS; t++)
		if (tick(dr) == 0)
			break;
	return t;
}

/* The same pages back to node 1, then to node 0 again in one raw
 * move_pages call (one address per THP, as tierd passes them): the ratio of
 * tierd's throughput to that is what tests/lab/bench reports as
 * migrate_vs_raw.  Printed, not checked: TCG timing is too noisy here. */
static void raw_compare(struct scenario *s, uint64_t tierd_bytes, uint64_t tierd_ns)
{
	static int nodes[MAX_CAND];
	size_t n = 0;
	uint64_t t0, t1;

	for (int r = 0; r < s->nr_regions; r++) {
		struct region *rg = &s->regions[r];

		if (!rg->heat)
			continue;
		for (uint64_t o = 0; o < rg->bytes; o += rg->thp ? THP_BYTES : PG)
			qaddrs[n++] = (void *)(uintptr_t)(rg->addr + o);
	}
	for (size_t i = 0; i < n; i++)
		nodes[i] = 1;
	numa_move_pages(0, n, qaddrs, nodes, qstatus, MPOL_MF_MOVE);
	for (size_t i = 0; i < n; i++)
		nodes[i] = 0;
	t0 = now_ns();
	numa_move_pages(0, n, qaddrs, nodes, qstatus, MPOL_MF_MOVE);
	t1 = now_ns();
	printf("raw move_pages: %lu B in %lu us: %.1f MB/s; tierd/raw = %.2f\n", tierd_bytes,
	       (t1 - t0) / 1000, tierd_bytes * 1e3 / (t1 - t0),
	       tierd_ns ? (double)(t1 - t0) / tierd_ns : 0.0);
}

/* The scenario's defaults: no cgroups, no GPU rule, a fixed threshold. */
static void scenario_init(struct scenario *s, int gpu_node)
{
	memset(s, 0, sizeof(*s));
	topo_from_libnuma(&s->topo, gpu_node);
	s->gpu_node = -1;
	s->hot_threshold = 8;
}

static int scenario_promote(void)
{
	static struct drive dr;
	struct scenario s;
	uint64_t hot_b = 32 * MiB, thp_b = 16 * MiB, cold_b = 16 * MiB;
	char *hot, *thp, *cold;
	long c[TOPO_MAX_NODES];
	uint64_t expect_pages = (hot_b + thp_b) / PG;

	scenario_init(&s, -1);
	s.low_pct = 2;
	s.high_pct = 4;
	hot = alloc_on(1, hot_b, false);
	thp = alloc_on(1, thp_b, true);
	cold = alloc_on(1, cold_b, false);
	if (!hot || !thp || !cold) {
		fprintf(stderr, "cannot allocate on node 1: %s\n", strerror(errno));
		return 1;
	}
	EXPECT(thp_bytes_at((uintptr_t)thp) >= thp_b, "THPs did not form: %lu B",
	       thp_bytes_at((uintptr_t)thp));
	s.regions[0] = (struct region){ getpid(), (uintptr_t)hot, hot_b, false, 100 };
	s.regions[1] = (struct region){ getpid(), (uintptr_t)thp, thp_b, true, 100 };
	s.regions[2] = (struct region){ getpid(), (uintptr_t)cold, cold_b, false, 0 };
	s.nr_regions = 3;

	/* A dry run decides the same and moves nothing. */
	s.dry_run = true;
	if (drive_start(&dr, &s) < 0)
		return 1;
	tick(&dr);
	EXPECT(dr.m.run.would_pages == expect_pages, "dry run would move %lu pages, expected %lu",
	       dr.m.run.would_pages, expect_pages);
	EXPECT(drive_account(&dr)->would[POLICY_PROMOTE].bytes == hot_b + thp_b,
	       "dry run counted %lu B", drive_account(&dr)->would[POLICY_PROMOTE].bytes);
	count_nodes(getpid(), (uintptr_t)hot, hot_b, c);
	EXPECT(c[1] == (long)(hot_b / PG), "after the dry run %ld pages on node 1", c[1]);
	drive_stop(&dr);

	s.dry_run = false;
	if (drive_start(&dr, &s) < 0)
		return 1;
	run_until_quiet(&dr);
	count_nodes(getpid(), (uintptr_t)hot, hot_b, c);
	EXPECT(c[0] == (long)(hot_b / PG), "hot base pages on node 0: %ld of %lu", c[0], hot_b / PG);
	count_nodes(getpid(), (uintptr_t)thp, thp_b, c);
	EXPECT(c[0] == (long)(thp_b / PG), "hot THP pages on node 0: %ld of %lu (one address per THP)",
	       c[0], thp_b / PG);
	EXPECT(thp_bytes_at((uintptr_t)thp) >= thp_b, "THPs split by the move: %lu B huge",
	       thp_bytes_at((uintptr_t)thp));
	count_nodes(getpid(), (uintptr_t)cold, cold_b, c);
	EXPECT(c[1] == (long)(cold_b / PG), "cold pages still on node 1: %ld of %lu", c[1],
	       cold_b / PG);
	EXPECT(drive_account(&dr)->class_pages[ACCT_MOVED] == expect_pages,
	       "accounted %lu moved, expected %lu", drive_account(&dr)->class_pages[ACCT_MOVED],
	       expect_pages);
	EXPECT(drive_account(&dr)->node_in[0][POLICY_PROMOTE].bytes == hot_b + thp_b, "node 0 took %lu B",
	       drive_account(&dr)->node_in[0][POLICY_PROMOTE].bytes);
	/* Contents survived. */
	for (uint64_t o = 0; o < hot_b; o += PG)
		if (hot[o] != ((char)(o / PG) | 1)) {
			EXPECT(0, "byte at offset %lu changed", o);
			break;
		}
	printf("promote: %lu B in %lu us of move_pages: %.1f MB/s\n", drive_account(&dr)->moved_bytes,
	       drive_account(&dr)->move_ns / 1000,
	       drive_account(&dr)->move_ns ? drive_account(&dr)->moved_bytes * 1e3 / drive_account(&dr)->move_ns : 0.0);
	raw_compare(&s, drive_account(&dr)->moved_bytes, drive_account(&dr)->move_ns);
	drive_stop(&dr);
	return failures ? 1 : 0;
}

/* Node 0's meminfo lines that say where its memory is, for the log. */
static void print_node0_meminfo(const char *when)
{
	FILE *f = fopen("/sys/devices/system/node/node0/meminfo", "re");
	char line[256];

	if (!f)
		return;
	printf("node 0 %s:", when);
	while (fgets(line, sizeof(line), f)) {
		char key[64];
		unsigned long kb;

		if (sscanf(line, "Node 0 %63[^:]: %lu kB", key, &kb) == 2 &&
		    (!strcmp(key, "MemFree") || !strcmp(key, "AnonPages") ||
		     !strcmp(key, "FilePages") || !strcmp(key, "PageTables") ||
		     !strcmp(key, "Slab") || !strcmp(key, "KernelStack")))
			printf(" %s %lu MiB", key, kb >> 10);
	}
	printf("\n");
	fclose(f);
}

/*
 * The ticks of a drive until nothing is decided, their demotions summed:
 * a tick's candidates are bounded (the cold pass queries 64 MiB of base
 * pages a tick), so a large need takes a few.
 */
static uint64_t demote_until_quiet(struct drive *dr, uint64_t *ret_wmark)
{
	uint64_t bytes = 0;

	*ret_wmark = 0;
	for (int t = 1; t <= MAX_TICKS; t++) {
		size_t n = tick(dr);

		bytes += dr->m.decided.stats.demote_bytes;
		*ret_wmark += dr->m.decided.stats.intents[POLICY_R_WMARK];
		if (!n)
			break;
	}
	return bytes;
}

static int scenario_demote(void)
{
	static struct drive dr;
	struct scenario s;
	uint64_t cold_b = 384 * MiB, hot_b = 64 * MiB, low, high, free0, total, need, demoted;
	uint64_t wmark;
	char *cold, *hot;
	long c[TOPO_MAX_NODES];
	unsigned int low_pct;
	long long f;

	scenario_init(&s, -1);
	s.low_pct = 2;
	s.high_pct = 4;
	s.hot_threshold = 100;
	s.demote = true;
	s.sample_cold = true;
	cold = alloc_on(0, cold_b, false);
	hot = alloc_on(0, hot_b, false);
	if (!cold || !hot) {
		fprintf(stderr, "cannot allocate on node 0: %s\n", strerror(errno));
		return 1;
	}
	s.regions[0] = (struct region){ getpid(), (uintptr_t)cold, cold_b, false, 0 };
	s.regions[1] = (struct region){ getpid(), (uintptr_t)hot, hot_b, false, 200 };
	s.nr_regions = 2;
	/* A dry-run tick first, so tierd's arrays are touched before node 0's
	 * free memory is measured. */
	s.dry_run = true;
	if (drive_start(&dr, &s) < 0)
		return 1;
	tick(&dr);
	drive_stop(&dr);
	s.dry_run = false;
	total = s.topo.nodes[0].total_bytes;
	numa_node_size64(0, &f);
	free0 = f;
	/* Put node 0 64 MiB or more below its low watermark: low_pct is the
	 * first percentage whose low target is above free + 64 MiB. */
	low_pct = (unsigned int)((free0 + 64 * MiB) * 100 / total) + 1;
	/* High well above low: pages freed by migration first go to the
	 * per-CPU page lists, which MemFree does not count (up to ~90 MiB
	 * seen here), so the check below needs that much margin. */
	low = total * low_pct / 100;
	high = total * (low_pct + 8) / 100;
	need = high - free0;
	printf("node 0: %lu MiB, %lu MiB free; low %u%% = %lu MiB, high %u%% = %lu MiB\n",
	       total >> 20, free0 >> 20, low_pct, low >> 20, low_pct + 8, high >> 20);
	if (need > cold_b) {
		fprintf(stderr, "node 0 has too little memory for this scenario\n");
		return 77;
	}
	if (drive_start(&dr, &s) < 0)
		return 1;
	/* Past what tierd.yaml may say (50%): set on the running topology. */
	dr.d.topo.tiers[0].low_watermark_pct = low_pct;
	dr.d.topo.tiers[0].high_watermark_pct = low_pct + 8;
	print_node0_meminfo("before");
	demoted = demote_until_quiet(&dr, &wmark);
	print_node0_meminfo("after");
	EXPECT(wmark > 0, "no watermark demotion");
	EXPECT(demoted + 32 * MiB >= need && demoted <= need + 64 * MiB,
	       "demoted %lu B for a need of about %lu B", demoted, need);
	EXPECT(drive_account(&dr)->node_in[1][POLICY_DEMOTE].bytes == demoted, "node 1 took %lu B of %lu B",
	       drive_account(&dr)->node_in[1][POLICY_DEMOTE].bytes, demoted);
	sleep(2);
	print_node0_meminfo("2 s later");
	numa_node_size64(0, &f);
	EXPECT((uint64_t)f >= low, "node 0 free %lld MiB still below low %lu MiB", f >> 20, low >> 20);
	count_nodes(getpid(), (uintptr_t)hot, hot_b, c);
	EXPECT(c[0] == (long)(hot_b / PG), "hot pages on node 0: %ld of %lu", c[0], hot_b / PG);
	count_nodes(getpid(), (uintptr_t)cold, cold_b, c);
	EXPECT((uint64_t)c[1] * PG == drive_account(&dr)->node_in[1][POLICY_DEMOTE].bytes,
	       "cold pages on node 1: %ld, accounted %lu B", c[1],
	       drive_account(&dr)->node_in[1][POLICY_DEMOTE].bytes);
	printf("demote: %ld cold pages (%ld MiB) moved to node 1\n", c[1], c[1] * PG >> 20);
	drive_stop(&dr);
	return failures ? 1 : 0;
}

/* A child in cgroup @cg with @bytes on node 1; its address comes back on
 * the pipe; it lives until the parent closes @hold. */
static pid_t spawn_in_cgroup(const char *cg, uint64_t bytes, uint64_t *ret_addr, int *ret_hold)
{
	int up[2], down[2];
	pid_t pid;
	char path[256], buf[32];
	int fd;

	snprintf(path, sizeof(path), CGROOT "%s", cg);
	mkdir(path, 0755);
	if (pipe(up) < 0 || pipe(down) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		uint64_t addr;
		char *p;

		/* Only its own pipe ends: an earlier child's hold end kept
		 * open here would keep that child from seeing EOF. */
		for (int i = 3; i < 1024; i++)
			if (i != up[1] && i != down[0])
				close(i);
		snprintf(path, sizeof(path), CGROOT "%s/cgroup.procs", cg);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(2);
		close(fd);
		p = alloc_on(1, bytes, false);
		addr = (uintptr_t)p;
		if (!p || write(up[1], &addr, sizeof(addr)) != sizeof(addr))
			_exit(3);
		(void)!read(down[0], buf, 1);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], ret_addr, sizeof(*ret_addr)) != sizeof(*ret_addr)) {
		close(up[0]);
		return -1;
	}
	close(up[0]);
	*ret_hold = down[1];
	return pid;
}

static void reap(pid_t pid, int hold, const char *cg)
{
	char path[256];

	close(hold);
	waitpid(pid, NULL, 0);
	snprintf(path, sizeof(path), CGROOT "%s", cg);
	rmdir(path);
}

/*
 * The memcg per-node counters are flushed once enough updates are pending
 * (MEMCG_CHARGE_BATCH pages per online CPU), so a tick may see up to that
 * much less than is there: the cap holds within that tolerance.
 */
static long memcg_slack_pages(void)
{
	return 64 * sysconf(_SC_NPROCESSORS_ONLN);
}

static int scenario_cgroup_cap(void)
{
	static struct drive dr;
	struct scenario s;
	uint64_t each = 32 * MiB, a_addr, b_addr, cap_extra = 8 * MiB;
	int a_hold, b_hold;
	pid_t a, b;
	long c[TOPO_MAX_NODES];
	struct cg_numa_stat st;

	scenario_init(&s, -1);
	a = spawn_in_cgroup("/tierd-capped", each, &a_addr, &a_hold);
	b = spawn_in_cgroup("/tierd-free", each, &b_addr, &b_hold);
	if (a < 0 || b < 0) {
		fprintf(stderr, "cannot start the cgroup children\n");
		return 1;
	}
	s.nr_cgroups = 2;
	strcpy(s.cg_path[0], "/tierd-capped");
	strcpy(s.cg_path[1], "/tierd-free");
	EXPECT(cg_read_numa_stat(CGROOT, "/tierd-capped", &st) == 0, "numa_stat");
	/* What it holds on node 0 now, plus 8 MiB. */
	s.cg_cap[0] = cg_fast_bytes(&st, &s.topo) + cap_extra;
	s.cg_cap[1] = 0;
	s.regions[0] = (struct region){ a, a_addr, each, false, 100 };
	s.regions[1] = (struct region){ b, b_addr, each, false, 100 };
	s.nr_regions = 2;
	if (drive_start(&dr, &s) < 0)
		return 1;
	run_until_quiet(&dr);

	count_nodes(a, a_addr, each, c);
	printf("capped cgroup: %ld pages on node 0 (cap allows %lu more than it had)\n", c[0],
	       cap_extra / PG);
	EXPECT(c[0] >= (long)(cap_extra / PG) && c[0] <= (long)(cap_extra / PG) + memcg_slack_pages(),
	       "capped cgroup got %ld pages on node 0, cap %lu (+%ld memcg stat slack)", c[0],
	       cap_extra / PG, memcg_slack_pages());
	EXPECT(cg_read_numa_stat(CGROOT, "/tierd-capped", &st) == 0, "numa_stat");
	EXPECT(cg_fast_bytes(&st, &s.topo) <= s.cg_cap[0] + memcg_slack_pages() * PG,
	       "capped cgroup holds %lu B of node 0, cap %lu B", cg_fast_bytes(&st, &s.topo),
	       s.cg_cap[0]);
	count_nodes(b, b_addr, each, c);
	EXPECT(c[0] == (long)(each / PG), "uncapped cgroup: %ld of %lu pages on node 0", c[0],
	       each / PG);
	drive_stop(&dr);
	reap(a, a_hold, "/tierd-capped");
	reap(b, b_hold, "/tierd-free");
	return failures ? 1 : 0;
}

static int scenario_gpu(void)
{
	static struct drive dr;
	struct scenario s;
	uint64_t each = 32 * MiB, g_addr, o_addr, cap = 16 * MiB;
	int g_hold, o_hold;
	pid_t g, o;
	long c[TOPO_MAX_NODES];

	if (numa_max_node() < 2 || numa_node_size64(2, NULL) <= 0) {
		fprintf(stderr, "no node 2: run under tests/lab/vm --gpu\n");
		return 77;
	}
	scenario_init(&s, 2);
	g = spawn_in_cgroup("/tierd-gpu", each, &g_addr, &g_hold);
	o = spawn_in_cgroup("/tierd-other", each, &o_addr, &o_hold);
	if (g < 0 || o < 0) {
		fprintf(stderr, "cannot start the cgroup children\n");
		return 1;
	}
	s.gpu_node = 2;
	s.gpu_max = cap;
	strcpy(s.gpu_allow, "/tierd-gpu");
	s.nr_cgroups = 2;
	strcpy(s.cg_path[0], "/tierd-gpu");
	strcpy(s.cg_path[1], "/tierd-other");
	s.regions[0] = (struct region){ g, g_addr, each, false, 100 };
	s.regions[1] = (struct region){ o, o_addr, each, false, 100 };
	s.nr_regions = 2;
	if (drive_start(&dr, &s) < 0)
		return 1;
	run_until_quiet(&dr);

	count_nodes(g, g_addr, each, c);
	printf("allowed cgroup: node 0 %ld, node 1 %ld, node 2 %ld pages\n", c[0], c[1], c[2]);
	EXPECT(c[2] == (long)(cap / PG), "allowed cgroup has %ld pages on node 2, cap %lu", c[2],
	       cap / PG);
	EXPECT(c[0] == (long)((each - cap) / PG), "the rest of it on node 0: %ld", c[0]);
	count_nodes(o, o_addr, each, c);
	printf("other cgroup: node 0 %ld, node 1 %ld, node 2 %ld pages\n", c[0], c[1], c[2]);
	EXPECT(c[2] == 0, "other cgroup has %ld pages on the GPU node", c[2]);
	EXPECT(c[0] == (long)(each / PG), "other cgroup on node 0: %ld", c[0]);
	drive_stop(&dr);
	reap(g, g_hold, "/tierd-gpu");
	reap(o, o_hold, "/tierd-other");
	return failures ? 1 : 0;
}

static struct acct_call calls[MAX_CAND];

/* The migrator, then the account, as the manager's steps 5 and 6 do. */
static void run_plan(struct migrator *m, struct account *a, const struct topology *topo,
		     const struct batch_plan *plan, uint64_t now, struct mig_run_result *run)
{
	struct acct_result sum;

	mig_run_plan(m, plan, account_nomem_nodes(a, now), calls, run);
	account_plan(a, topo, plan, intents, calls, now, m->dry_run, &sum);
	run->moved_bytes = sum.moved_bytes;
}

/* One controller round: move the whole buffer to @to through tierd's
 * batcher and migrator, measure the load meanwhile, step the controller and
 * write its decision.  Returns the decision's thread count. */
struct ct_round {
	struct knobs *ks;
	struct ct_params *p;
	struct ct_state *s;
	struct batcher *b;
	struct migrator *m;
	struct account *a;
	struct topology *topo;
	char *buf;
	uint64_t bytes;
	uint64_t node0_mask[LOAD_MASK_WORDS];
	unsigned int node0_cpus;
	double t0;
};

static struct load_cpu_times lt_a, lt_b;

static unsigned int ct_round(struct ct_round *r, int to, const char *phase)
{
	const struct batch_plan *plan;
	struct mig_run_result run;
	struct ct_decision d;
	struct ct_load l = { 0 };
	struct ct_sample sm;
	size_t n = r->bytes / PG;
	long v = -1;
	int e;

	for (size_t i = 0; i < n; i++) {
		memset(&intents[i], 0, sizeof(intents[i]));
		intents[i].pid = getpid();
		intents[i].addr = (uintptr_t)r->buf + i * PG;
		intents[i].nr_pages = 1;
		intents[i].from_node = to ? 0 : 1;
		intents[i].to_node = to;
		intents[i].cgroup = -1;
		intents[i].kind = to == 0 ? POLICY_PROMOTE : POLICY_DEMOTE;
	}
	load_read_cpu_times("", &lt_a);
	batch_build(r->b, intents, n, &plan);
	run_plan(r->m, r->a, r->topo, plan, now_ns(), &run);
	load_read_cpu_times("", &lt_b);
	if (load_read_psi_cpu("", &l.psi_some_avg10_x100) < 0)
		l.psi_some_avg10_x100 = 0;
	/* Node 0 has the CPUs; node 1 is CPU-less, so it is the only side. */
	if (to == 0) {
		l.dst_cpus = r->node0_cpus;
		l.dst_idle = load_idle_cpus(&lt_a, &lt_b, r->node0_mask, r->p->busy_cpu_pct);
	} else {
		l.src_cpus = r->node0_cpus;
		l.src_idle = load_idle_cpus(&lt_a, &lt_b, r->node0_mask, r->p->busy_cpu_pct);
	}
	EXPECT(run.failed_calls == 0 && run.moved_bytes == r->bytes,
	       "round to node %d moved %lu of %lu B (%zu calls failed)", to, run.moved_bytes,
	       r->bytes, run.failed_calls);
	sm.bytes = run.moved_bytes;
	sm.ns = run.elapsed_ns;
	ct_step(r->s, r->p, &l, &sm, now_ns(), &d);
	e = knobs_apply_copy(r->ks, d.mt, d.threads, d.pull);
	EXPECT(e == 0, "knobs_apply_copy: %s", strerror(-e));
	knobs_get(r->ks, KNOB_COPY_THREADS, &v);
	EXPECT(v == (long)d.threads, "vm.migrate_copy_threads is %ld, decided %u", v, d.threads);
	printf("%6.1f s %-7s to node %d: %5.1f MB/s, psi %u.%02u%%, idle %u/%u -> %u threads (%s)\n",
	       now_ns() / 1e9 - r->t0, phase, to,
	       run.elapsed_ns ? run.moved_bytes * 1e3 / run.elapsed_ns : 0.0,
	       l.psi_some_avg10_x100 / 100, l.psi_some_avg10_x100 % 100,
	       to == 0 ? l.dst_idle : l.src_idle, r->node0_cpus, d.threads, ct_why_name(d.why));
	return d.threads;
}

static int scenario_copythreads(void)
{
	struct knobs ks;
	struct ct_params p;
	struct ct_state s;
	struct batch_params bp;
	struct acct_params ap;
	struct migrator m;
	struct topology topo;
	struct ct_round r;
	long orig_threads = -1, orig_mt = -1, kbatch = 0, v;
	unsigned int idle_threads, t, lowest, nproc = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t stress[64];
	int nstress = 0, to = 0, e;

	mkdir("/run/tierd-lab", 0755);
	e = knobs_open(&ks, &knob_file_ops, NULL, "", "/run/tierd-lab");
	EXPECT(e == 0, "knobs_open: %s", strerror(-e));
	if (!knobs_have_copy(&ks)) {
		printf("vm.migrate_copy_mt/threads/pull absent: this kernel lacks the copy series "
		       "(run with tests/lab/vm --patched on a tree with kernel-patches/)\n");
		return 77;
	}
	knobs_get(&ks, KNOB_COPY_THREADS, &orig_threads);
	knobs_get(&ks, KNOB_COPY_MT, &orig_mt);
	knobs_get(&ks, KNOB_BATCH_PAGES, &kbatch);
	topo_from_libnuma(&topo, -1);
	ct_params_default(&p);
	p.max_threads = nproc < 8 ? nproc : 8;
	/* Start where the kernel's default is, as tierd does. */
	p.start_threads = orig_threads > 0 ? (unsigned int)orig_threads : 0;
	p.min_sample_bytes = 16 * MiB;
	if (ct_init(&s, &p) < 0 || p.max_threads < 2) {
		fprintf(stderr, "needs 2 or more vCPUs\n");
		return 77;
	}
	batch_params_default(&bp, kbatch > 0 ? kbatch : 0);
	acct_params_default(&ap);
	memset(&r, 0, sizeof(r));
	if (batch_new(&bp, MAX_CAND, &r.b) < 0 || account_new(&ap, 0, 0, &r.a) < 0 ||
	    mig_init(&m, &mig_real_ops, NULL, false) < 0)
		return 1;
	r.ks = &ks;
	r.p = &p;
	r.s = &s;
	r.m = &m;
	r.topo = &topo;
	r.bytes = 32 * MiB;
	r.buf = alloc_on(1, r.bytes, false);
	/* The stress children must not share these pages: move_pages
	 * (without MPOL_MF_MOVE_ALL) refuses pages mapped by two processes. */
	madvise(r.buf, r.bytes, MADV_DONTFORK);
	r.node0_cpus = load_node_cpus("", 0, r.node0_mask);
	r.t0 = now_ns() / 1e9;
	printf("promote flag %s, kernel batch %ld pages, tierd batch %u pages, %u..%u threads\n",
	       m.has_promote ? "yes" : "no", kbatch, bp.batch_pages, p.min_threads, p.max_threads);

	/* Idle: from the kernel's default, climbing while throughput rises. */
	for (int i = 0; i < 10; i++, to ^= 1)
		t = ct_round(&r, to, "idle");
	idle_threads = s.good;
	EXPECT(idle_threads > p.min_threads,
	       "at %u threads while idle: nothing to lower under stress", idle_threads);

	/* Stress: every vCPU spinning.  Threads must fall to the minimum and
	 * never rise meanwhile. */
	for (unsigned int i = 0; i < nproc && nstress < 64; i++) {
		pid_t pid = fork();

		if (pid == 0)
			for (volatile unsigned long x = 0;; x++)
				;
		stress[nstress++] = pid;
	}
	lowest = t;
	for (int i = 0; i < 20 && (i < 4 || lowest > p.min_threads); i++, to ^= 1) {
		unsigned int nt = ct_round(&r, to, "stress");

		EXPECT(nt <= lowest, "threads rose from %u to %u under stress", lowest, nt);
		lowest = nt < lowest ? nt : lowest;
	}
	EXPECT(lowest == p.min_threads, "under stress the controller stayed at %u threads", lowest);
	for (int i = 0; i < nstress; i++) {
		kill(stress[i], SIGKILL);
		waitpid(stress[i], NULL, 0);
	}

	/* Stress over: PSI avg10 decays over ~10 s; then back up. */
	t = lowest;
	for (int i = 0; i < 60 && t < idle_threads; i++, to ^= 1)
		t = ct_round(&r, to, "after");
	EXPECT(t >= idle_threads, "after the stress the controller is at %u threads, was %u", t,
	       idle_threads);

	e = knobs_restore(&ks);
	EXPECT(e >= 0, "knobs_restore: %s", strerror(-e));
	knobs_get(&ks, KNOB_COPY_THREADS, &v);
	EXPECT(v == orig_threads, "vm.migrate_copy_threads %ld after restore, was %ld", v,
	       orig_threads);
	knobs_get(&ks, KNOB_COPY_MT, &v);
	EXPECT(v == orig_mt, "vm.migrate_copy_mt %ld after restore, was %ld", v, orig_mt);
	batch_free(r.b);
	account_free(r.a);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: policy_drive promote|demote|cgroup-cap|gpu|copythreads\n");
		return 2;
	}
	if (numa_available() < 0 || numa_max_node() < 1) {
		fprintf(stderr, "needs two NUMA nodes: run under tests/lab/vm\n");
		return 77;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "promote") == 0)
		return scenario_promote();
	if (strcmp(argv[1], "demote") == 0)
		return scenario_demote();
	if (strcmp(argv[1], "cgroup-cap") == 0)
		return scenario_cgroup_cap();
	if (strcmp(argv[1], "gpu") == 0)
		return scenario_gpu();
	if (strcmp(argv[1], "copythreads") == 0)
		return scenario_copythreads();
	fprintf(stderr, "policy_drive: unknown scenario '%s'\n", argv[1]);
	return 2;
}
