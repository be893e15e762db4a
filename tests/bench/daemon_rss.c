// SPDX-License-Identifier: GPL-2.0-only
/*
 * Peak RSS of tierd's pipeline with a full hotness table, on the host and
 * without touching the kernel: the daemon's own manager and stages built
 * from the same library as tierd, tierd_init(), manager_init() and
 * manager_tick() as main() runs them, with a config whose
 * sampling.max_tracked_pages is 1048576, a sampler that floods the table
 * (fake, in place of BPF or DAMON), move_pages(2) answered by a fake that
 * says every page is on the slow node and every move succeeds, and
 * --no-knobs.  What it leaves out of the real daemon: the sd-event loop,
 * the control socket, libbpf's loaded skeleton and the kernel-side maps
 * (kernel memory, not RSS).  Not a test (it prints numbers); run it by hand:
 *
 *   build/tests/daemon_rss tests/fixtures [MAX_TRACKED_PAGES] [TICKS] [damon[:MEM_GIB]]
 *
 * Each tick records 262144 samples: half from a hot set of 128 Ki units,
 * half spread over 4 Mi units of 8 processes, so the table is full from the
 * fifth tick on and evicts from then on.  A unit is a 4 KiB page, as the
 * sampling-event source records them, or with `damon` a 2 MiB range, as
 * the DAMON source records its regions; then after every tick the known-heat
 * sketch the DAMON source writes for its BPF program (bpf/damon.h) is
 * filled from the table by the source's own damon_known_fill(), in a shared
 * mapping of the size the source gives a machine of MEM_GIB (default 1024,
 * where it reaches its largest, 2 MiB).  In tierd that mapping is the
 * program's array map, mapped the same way, so its pages count in tierd's
 * RSS as these do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "daemon.h"
#include "hot_table.h"
#include "manager.h"
#include "migrate.h"
#include "sampler.h"
#include "sys/sampler_damon.h"
#include "test_geom.h"

#define SEC 1000000000ull
#define NPIDS 8
#define UNITS_PER_PID (512u * 1024)	/* 4 Mi units in all */
#define HOT_UNITS (128u * 1024)
#define SAMPLES_PER_TICK 262144u
#define BASE 0x7f0000000000ull
#define DAMON_SAMPLES 20	/* samples an aggregation at tierd's DAMON defaults */

static const pid_t pids[NPIDS] = { 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008 };

/* ---- a sampler that floods the table ---- */

struct flood {
	struct sampler base;
	bool started;
	uint64_t rng;
	uint64_t unit;		/* TEST_PAGE_SIZE, or TEST_HUGE_SIZE with `damon` */
	double weight;
	struct sampler_status st;
};

static uint64_t flood_rand(struct flood *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static int flood_probe(struct sampler *s, char *why, size_t len)
{
	return 0;
}

static int flood_start(struct sampler *s, char *why, size_t len)
{
	((struct flood *)s)->started = true;
	return 0;
}

static int flood_set_targets(struct sampler *s, const pid_t *p, size_t n)
{
	return 0;
}

static int flood_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	struct flood *f = (struct flood *)s;
	int n = 0;

	for (uint32_t i = 0; i < SAMPLES_PER_TICK; i++) {
		uint64_t r = flood_rand(f);
		uint32_t u = i & 1 ? (uint32_t)(r >> 20) % HOT_UNITS
				   : (uint32_t)(r >> 20) % UNITS_PER_PID;
		int k = hot_record(t, pids[r % NPIDS], BASE + (uint64_t)u * f->unit, f->unit,
				   f->weight, now_ns);

		n += k > 0 ? k : 0;
	}
	f->st.samples += SAMPLES_PER_TICK;
	f->st.records += n;
	f->st.drains++;
	return n;
}

static void flood_stop(struct sampler *s)
{
	((struct flood *)s)->started = false;
}

static int flood_fd(struct sampler *s)
{
	return -1;
}

static void flood_describe(struct sampler *s, struct sampler_status *ret)
{
	struct flood *f = (struct flood *)s;

	*ret = f->st;
	ret->name = "flood";
	ret->running = f->started;
	snprintf(ret->why, sizeof(ret->why), "synthetic");
	ret->cost_source = "none";
}

static void flood_free(struct sampler *s)
{
}

static const struct sampler_ops flood_ops = {
	.name = "flood",
	.probe = flood_probe,
	.start = flood_start,
	.set_targets = flood_set_targets,
	.drain = flood_drain,
	.stop = flood_stop,
	.fd = flood_fd,
	.describe = flood_describe,
	.free = flood_free,
};

/* ---- move_pages(2): everything on node 1, every move lands ---- */

static uint64_t fake_clock_ns;

static int fake_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			   const int *nodes, int *status, int flags)
{
	if (count == 0 && !addrs)
		return 0;	/* the MPOL_MF_PROMOTE probe: "patched" */
	for (unsigned long i = 0; i < count; i++)
		status[i] = nodes ? nodes[i] : 1;
	fake_clock_ns += 1000;
	return 0;
}

static uint64_t fake_now_ns(void *ctx)
{
	return fake_clock_ns;
}

static const struct mig_ops fake_mig_ops = {
	.move_pages = fake_move_pages,
	.now_ns = fake_now_ns,
};

/* The DAMON source's sketch: a shared mapping, as its BPF array map is. */
struct sketch {
	__u8 *cells;
	uint32_t n;
	size_t len;
};

static int sketch_map(struct sketch *k, uint64_t mem_bytes)
{
	k->n = damon_known_cells_for(mem_bytes);
	k->len = (size_t)k->n * sizeof(__u8);
	k->cells = mmap(NULL, k->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return k->cells == MAP_FAILED ? -errno : 0;
}

static uint32_t sketch_used(const struct sketch *k)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < k->n; i++)
		n += k->cells[i] != 0;
	return n;
}

/* tierd's config, in @dir: a table of @max entries, the copy threads off. */
static int setup(struct tierd *d, const char *root, const char *path, const char *dir,
		 unsigned long max)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "interval_ms: 1000\n"
		   "tiers:\n  - {name: dram, nodes: [0]}\n  - {name: cxl, nodes: [1]}\n"
		   "sampling: {half_life_ms: 10000, max_tracked_pages: %lu}\n"
		   "copy_threads: {mode: off}\n", max);
	fclose(f);
	d->root = root;
	snprintf(d->config_path, sizeof(d->config_path), "%s", path);
	snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s", dir);
	d->no_knobs = true;
	return 0;
}

/* @ticks ticks of the manager, RSS and CPU after each. */
static void run_ticks(struct manager *mgr, const struct sketch *sk, int ticks)
{
	struct hot_stats st = { 0 };
	uint64_t c0, c_steady = 0;
	int r;

	for (int k = 1; k <= ticks; k++) {
		c0 = bench_cpu_ns();
		r = manager_tick(mgr, (uint64_t)k * SEC);
		if (r < 0)
			fprintf(stderr, "daemon_rss: tick %d: %s\n", k, strerror(-r));
		if (sk->cells)
			damon_known_fill(sk->cells, sk->n, damon_known_unit(DAMON_SAMPLES),
					 sample_table(mgr->sample), (uint64_t)(k + 1) * SEC, pids,
					 NPIDS, 1.0);
		if (k > ticks / 2)
			c_steady += bench_cpu_ns() - c0;
		hot_get_stats(sample_table(mgr->sample), &st);
		printf("tick %2d: %7llu entries, %8llu evictions, RSS %.1f MiB, peak %.1f MiB, "
		       "%.0f ms CPU\n", k, (unsigned long long)st.entries,
		       (unsigned long long)st.evictions, bench_status_kib("VmRSS") / 1024.0,
		       bench_status_kib("VmHWM") / 1024.0, (bench_cpu_ns() - c0) / 1e6);
	}
	printf("table %.1f MiB of it; %.0f ms CPU per tick in the second half (of which "
	       "recording %u synthetic samples is most)\n", st.mem_bytes / 1048576.0,
	       c_steady / 1e6 / (ticks - ticks / 2), SAMPLES_PER_TICK);
}

int main(int argc, char **argv)
{
	static char tmpdir[] = "/tmp/daemon_rss.XXXXXX";
	static struct tierd d;
	static struct manager mgr;
	static struct flood fl = {
		.base.ops = &flood_ops,
		.rng = 0x9e3779b97f4a7c15ull,
		.unit = TEST_PAGE_SIZE,
		.weight = 1.0,
	};
	unsigned long max = argc > 2 ? strtoul(argv[2], NULL, 0) : 1048576;
	int ticks = argc > 3 ? atoi(argv[3]) : 20;
	const char *source = argc > 4 ? argv[4] : "flood";
	struct sketch sk = { 0 };
	struct manager_ops fk = {
		.sampler = &fl.base,
		.pids = pids,
		.nr_pids = NPIDS,
		.mig_ops = &fake_mig_ops,
	};
	char root[4096], path[256];
	int r;

	if (argc < 2 || ticks < 2 ||
	    (strcmp(source, "flood") && strcmp(source, "damon") && strncmp(source, "damon:", 6))) {
		fprintf(stderr, "usage: daemon_rss FIXTURES_DIR [MAX_TRACKED_PAGES] [TICKS >= 2] "
				"[damon[:MEM_GIB]]\n");
		return 2;
	}
	if (!strncmp(source, "damon", 5)) {
		unsigned long gib = source[5] == ':' ? strtoul(source + 6, NULL, 0) : 1024;

		fl.unit = TEST_HUGE_SIZE;
		fl.weight = DAMON_SAMPLES / 4;	/* a region seen in a quarter of them */
		r = sketch_map(&sk, (uint64_t)gib << 30);
		if (r < 0) {
			fprintf(stderr, "daemon_rss: mapping the sketch: %s\n", strerror(-r));
			return 1;
		}
		printf("DAMON source: 2 MiB ranges, and the sketch for %lu GiB of memory: "
		       "%u cells, %.1f MiB\n", gib, sk.n, sk.len / 1048576.0);
	}
	if (!mkdtemp(tmpdir)) {
		perror("daemon_rss: mkdtemp");
		return 1;
	}
	snprintf(root, sizeof(root), "%s/topology/dram-cxl", argv[1]);
	snprintf(path, sizeof(path), "%s/tierd.yaml", tmpdir);
	if (setup(&d, root, path, tmpdir, max) < 0) {
		perror("daemon_rss: config");
		return 1;
	}
	printf("peak RSS before tierd_init: %.1f MiB\n", bench_status_kib("VmHWM") / 1024.0);
	r = tierd_init(&d);
	if (r == 0)
		r = manager_init(&mgr, &d, &fk);
	if (r < 0) {
		fprintf(stderr, "daemon_rss: tierd_init: %s\n", strerror(-r));
		return 1;
	}
	printf("peak RSS after tierd_init (max_tracked_pages %lu): %.1f MiB\n", max,
	       bench_status_kib("VmHWM") / 1024.0);
	run_ticks(&mgr, &sk, ticks);
	if (sk.cells)
		printf("sketch %.1f MiB of it, %u of its %u cells written by the last fill\n",
		       sk.len / 1048576.0, sketch_used(&sk), sk.n);
	manager_fini(&mgr);
	tierd_fini(&d);
	if (sk.cells)
		munmap(sk.cells, sk.len);
	unlink(path);
	rmdir(tmpdir);
	return 0;
}
