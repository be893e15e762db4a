// SPDX-License-Identifier: GPL-2.0-only
/* policy_drive's shared parts (policy_lab.h). */
#include "policy_lab.h"

int failures;
struct policy_intent intents[MAX_CAND];
void *qaddrs[MAX_CAND];
int qstatus[MAX_CAND];

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Nodes from libnuma: tier 0 = nodes with CPUs, tier 1 = the CPU-less. */
void topo_from_libnuma(struct topology *t, int gpu_node)
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
void *alloc_on(int node, uint64_t bytes, bool thp)
{
	unsigned long mask = 1ul << node;
	uint64_t len = bytes + THP_BYTES;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* 2 MiB aligned either way: heat comes in 2 MiB ranges (synth_drain()) */
	p = (char *)(((uintptr_t)p + THP_BYTES - 1) & ~(THP_BYTES - 1));
	madvise(p, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	if (mbind(p, bytes, MPOL_BIND, &mask, sizeof(mask) * 8, 0) < 0)
		return NULL;
	for (uint64_t o = 0; o < bytes; o += PG)
		p[o] = (char)(o / PG) | 1;
	mbind(p, bytes, MPOL_DEFAULT, NULL, 0, 0);
	return p;
}

/* How many base pages of [addr, addr+bytes) of @pid are on each node. */
int count_nodes(int pid, uint64_t addr, uint64_t bytes, long counts[TOPO_MAX_NODES])
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
uint64_t thp_bytes_at(uint64_t addr)
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

/*
 * Every region's heat into the table, one record per 2 MiB range where the
 * region is aligned to them (as the DAMON source reports its regions;
 * gather queries a range of base pages page by page), else per page.
 */
static int synth_drain(struct sampler *x, struct hot_table *t, uint64_t now)
{
	struct synth *sy = (struct synth *)x;
	const struct scenario *s = sy->s;
	uint64_t old = now > 60000000000ull ? now - 60000000000ull : 0;

	for (int r = 0; r < s->nr_regions; r++) {
		const struct region *rg = &s->regions[r];
		uint64_t step = (rg->addr | rg->bytes) % THP_BYTES ? PG : THP_BYTES;
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
int drive_start(struct drive *dr, const struct scenario *s)
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

void drive_stop(struct drive *dr)
{
	char path[128];

	manager_fini(&dr->m);
	tierd_fini(&dr->d);
	snprintf(path, sizeof(path), "%s/tierd.yaml", dr->dir);
	unlink(path);
	rmdir(dr->dir);
}

/* One tick of tierd.  Returns the intents it decided. */
size_t tick(struct drive *dr)
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

struct account *drive_account(struct drive *dr)
{
	return move_account(dr->m.move);
}

/* Ticks until nothing is decided; returns the ticks run. */
int run_until_quiet(struct drive *dr)
{
	int t;

	for (t = 1; t <= MAX_TICKS; t++)
		if (tick(dr) == 0)
			break;
	return t;
}
