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
#include "policy_lab.h"

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
 * The ticks of a drive until nothing is decided; returns the demotions
 * they planned.  A tick's candidates are bounded (the coldest pass queries
 * 64 MiB of base pages a tick) and so is its copy time, so a large need
 * takes a few ticks; once node 0 is above its low watermark again the
 * policy starts no new demotion.
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
	uint64_t planned, wmark;
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
	planned = demote_until_quiet(&dr, &wmark);
	demoted = drive_account(&dr)->node_in[1][POLICY_DEMOTE].bytes;
	print_node0_meminfo("after");
	EXPECT(wmark > 0, "no watermark demotion");
	/* At least what brings node 0 back above low, at most what reaches
	 * high, within the margins the per-CPU lists ask for (above). */
	EXPECT(demoted + 32 * MiB >= low - free0 && demoted <= need + 64 * MiB,
	       "demoted %lu B for a need of %lu B to low, %lu B to high", demoted, low - free0,
	       need);
	EXPECT(planned >= demoted, "node 1 took %lu B, more than the %lu B planned", demoted,
	       planned);
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

