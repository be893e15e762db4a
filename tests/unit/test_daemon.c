// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon body without its event loop: the config and topology at start,
 * the manager's tick with a scripted sampler (its error logged once and
 * returned, the tick going on), rates from the counters, reloads that keep
 * the old policy on every kind of error (parse, machine, a stage), the
 * metrics exposition and the textfile, the idle interval and the priority
 * ticks run at.  Topology from a fixture tree.
 *
 *   test_daemon FIXTURES_DIR
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon.h"
#include "hot_table.h"
#include "manager.h"
#include "metrics.h"
#include "sampler_fake.h"
#include "status.h"
#include "test.h"

#define SEC 1000000000ull

static char calls[1024];
static char tmpdir[] = "/tmp/test_daemon.XXXXXX";
static char conf_path[256];
static const char *fixtures_dir;

static void called(const char *what)
{
	snprintf(calls + strlen(calls), sizeof(calls) - strlen(calls), "%s ",
		 what);
}

/*
 * The fake sampler, wrapped: its start and drain say they were called and
 * note the nice they ran at; a drain fails with drain_ret.
 */
static struct sampler_fake sf;
static struct sampler_ops wrapped;
static int drain_ret;
static int start_nice; /* the thread's nice while the sampler started */
static int drain_nice; /* and during the last drain, in a tick */

static int wrapped_start(struct sampler *s, char *why, size_t len)
{
	start_nice = getpriority(PRIO_PROCESS, 0);
	called("start");
	sf.started = true;
	return 0;
}

static int wrapped_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	drain_nice = getpriority(PRIO_PROCESS, 0);
	called("drain");
	return drain_ret;
}

static const struct manager_ops *wrapped_fake(void)
{
	static const pid_t none[1];
	static struct manager_ops ops;

	sampler_fake_init(&sf, "fake");
	wrapped = *sf.base.ops;
	wrapped.start = wrapped_start;
	wrapped.drain = wrapped_drain;
	sf.base.ops = &wrapped;
	/* No process tracked: no walk of this machine's /proc. */
	ops = (struct manager_ops){ .sampler = &sf.base, .pids = none };
	return &ops;
}

static void write_conf(const char *text)
{
	FILE *f = fopen(conf_path, "w");

	fputs(text, f);
	fclose(f);
}

static char *render(struct tierd *d)
{
	struct metrics *m = metrics_new();
	char *text = NULL;
	size_t len;

	tierd_metrics(d, m);
	/* Label values are escaped. */
	metrics_add(m, MET_COPY_THREADS, 3, "by", "b\"q\\", NULL);
	CHECK_EQ_INT(metrics_render(m, &text, &len), 0);
	CHECK_EQ_U64(strlen(text), len);
	metrics_free(m);
	return text;
}

static char *render_status(struct tierd *d, bool json)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	status_render(d, f, json, 20 * SEC);
	fclose(f);
	return text;
}

static void test_lifecycle(void)
{
	const char *fixtures = fixtures_dir;
	static struct manager mgr;
	static struct tierd d;
	char root[4096], why[4096], want[1024], *text, prom[512];

	snprintf(root, sizeof(root), "%s/topology/dram-cxl", fixtures);
	d.root = root;
	snprintf(d.config_path, sizeof(d.config_path), "%s", conf_path);
	snprintf(d.runtime_dir, sizeof(d.runtime_dir), "%s", tmpdir);
	d.no_knobs = true;
	snprintf(want, sizeof(want),
		 "interval_ms: 500\ncgroups:\n  - path: /a\n  - path: /b\n"
		 "metrics: {textfile_dir: %s}\n",
		 tmpdir);
	write_conf(want);

	CHECK_EQ_INT(tierd_init(&d), 0);
	CHECK_EQ_STR(d.stats.sampler_source, "none");
	CHECK_EQ_INT(manager_init(&mgr, &d, wrapped_fake()), 0);
	CHECK_EQ_STR(calls, "start ");
	CHECK_EQ_INT(d.topo.nr_tiers, 2);
	CHECK(d.topo.kernel_tiers_flat);
	CHECK(!tierd_knobs_allowed(&d));
	CHECK_EQ_STR(d.stats.sampler_source, "fake");

	/* A step's error is the tick's, and the tick goes on.  1 MiB into
	 * tier 0 before each, as the account step would add. */
	calls[0] = '\0';
	drain_ret = -EIO;
	d.stats.tier[0].promoted_bytes_total += 1 << 20;
	d.stats.node[0].promoted_bytes_total += 1 << 20;
	CHECK_EQ_INT(manager_tick(&mgr, 10 * SEC), -EIO);
	d.stats.tier[0].promoted_bytes_total += 1 << 20;
	d.stats.node[0].promoted_bytes_total += 1 << 20;
	CHECK_EQ_INT(manager_tick(&mgr, 12 * SEC), -EIO);
	CHECK_EQ_STR(calls, "drain drain ");
	drain_ret = 0;
	CHECK_EQ_U64(d.ticks_total, 2);
	/* 1 MiB in the 2 s between the ticks. */
	CHECK(d.stats.tier[0].promote_bytes_per_s == 524288.0);
	d.stats.cgroup[1].promoted_bytes_total = 4096;

	/* The textfile was written on the first tick, not again before 15 s. */
	snprintf(prom, sizeof(prom), "%s/tierd.prom", tmpdir);
	text = NULL;
	{
		FILE *f = fopen(prom, "r");
		char buf[65536];
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		CHECK(f);
		buf[n] = '\0';
		CHECK(strstr(buf, "\ntierd_ticks_total 1\n"));
		if (f)
			fclose(f);
	}

	/* What the last decision held back, as the decide step leaves it. */
	d.stats.decision.hot_threshold = 4;
	d.stats.decision.cold_threshold = 2;
	d.stats.decision.held[POLICY_H_REFILL] = 300;
	d.stats.decision.held[POLICY_H_COOLDOWN] = 7;
	d.stats.decision.unmet_bytes = 300 * 4096;
	d.stats.decision_candidate_pages = 1324;
	/* The copy threads as threads.c leaves them on a 2-CPU machine. */
	d.stats.copy_threads = 2;
	d.stats.copy_threads_max = 2;
	d.stats.copy_threads_cpus = 2;
	text = render_status(&d, false);
	CHECK(strstr(text, "\ndecision: 1324 candidate pages, hot at heat >= 4, cold <= 2; planned 0 B up, 0 B down\n"
			   "held:     cooldown 7, refill 300; 1.2 MiB hot found no room\n"));
	CHECK(strstr(text, "\ncopy threads: 2 (mode auto, at most 2 of this machine's 2 CPUs)\n"));
	free(text);
	text = render_status(&d, true);
	CHECK(strstr(text, "\"decision\":{\"hot_threshold\":4,\"cold_threshold\":2,\"crowded_floor\":0,"
			   "\"discovering\":false,\"thin\":false,\"candidate_pages\":1324,"
			   "\"promote_bytes\":0,\"fill_bytes\":0,\"demote_bytes\":0,\"unmet_bytes\":1228800,"
			   "\"held\":{\"cooldown\":7,"));
	CHECK(strstr(text, "\"refill\":300}}"));
	CHECK(strstr(text, "\"copy_threads\":2,\"copy_threads_mode\":\"auto\",\"copy_threads_max\":2,"
			   "\"copy_threads_cpus\":2,"));
	free(text);
	/* A crowded fast tier's floor shows beside the threshold. */
	d.stats.decision.crowded_floor = 3;
	text = render_status(&d, false);
	CHECK(strstr(text, "hot at heat >= 4 (crowded: at least 3), cold <= 2;"));
	free(text);
	text = render_status(&d, true);
	CHECK(strstr(text, "\"cold_threshold\":2,\"crowded_floor\":3,"));
	free(text);
	/* One sample, while a new hot set is being found. */
	d.stats.decision.crowded_floor = 1;
	d.stats.decision.discovering = true;
	text = render_status(&d, false);
	CHECK(strstr(text, "hot at heat >= 4 (crowded: at least 1, a new hot set), cold <= 2;"));
	free(text);
	text = render_status(&d, true);
	CHECK(strstr(text, "\"crowded_floor\":1,\"discovering\":true,"));
	free(text);
	d.stats.table_samples_total = 1000;
	d.stats.table_fresh_samples_total = 16;
	text = render(&d);
	CHECK(strstr(text, "tierd_decision_new_hot_set 1\n"));
	CHECK(strstr(text, "tierd_table_samples_total 1000\n"));
	CHECK(strstr(text, "tierd_table_fresh_samples_total 16\n"));
	free(text);
	d.stats.decision.discovering = false;
	/* One sample, where the hot set itself draws few. */
	d.stats.decision.thin = true;
	text = render_status(&d, false);
	CHECK(strstr(text, "hot at heat >= 4 (crowded: at least 1, the hot set sampled thinly),"));
	free(text);
	text = render_status(&d, true);
	CHECK(strstr(text, "\"crowded_floor\":1,\"discovering\":false,\"thin\":true,"));
	free(text);
	d.stats.decision.thin = false;
	d.stats.decision.crowded_floor = 0;
	/* Fill promotions show as a part of what goes up. */
	d.stats.decision.promote_bytes = 6 * 1024 * 1024;
	d.stats.decision.fill_bytes = 4 * 1024 * 1024;
	text = render_status(&d, false);
	CHECK(strstr(text, "; planned 6.0 MiB up (4.0 MiB of it fill), 0 B down\n"));
	free(text);
	text = render_status(&d, true);
	CHECK(strstr(text, "\"promote_bytes\":6291456,\"fill_bytes\":4194304,"));
	free(text);
	text = render(&d);
	CHECK(strstr(text, "tierd_decision_fill_bytes 4194304\n"));
	free(text);
	d.stats.decision.promote_bytes = d.stats.decision.fill_bytes = 0;
	/* The table's half-life, stretched for a sparse sampling period. */
	d.stats.heat_half_life_ns = 40000000000ull;
	d.stats.sampler_period = 93742;
	text = render_status(&d, false);
	CHECK(strstr(text, "\n          heat halves every 40.0 s (stretched for the sampling period)\n"));
	free(text);
	text = render_status(&d, true);
	CHECK(strstr(text, "\"period\":93742,\"half_life_s\":40.0"));
	free(text);
	d.stats.sampler_period = 0;
	d.stats.heat_half_life_ns = 10000000000ull;
	text = render_status(&d, false);
	CHECK(strstr(text, "\n          heat halves every 10.0 s\n"));
	free(text);
	d.stats.copy_threads = d.stats.copy_threads_max = 0;
	text = render_status(&d, false);
	CHECK(strstr(text, "\ncopy threads: 0 (mode auto)\n"));
	free(text);

	text = render(&d);
	CHECK(strstr(text, "tierd_decision_held_candidates{reason=\"refill\"} 300\n"));
	CHECK(strstr(text, "tierd_decision_held_candidates{reason=\"no-room\"} 0\n"));
	CHECK(strstr(text, "tierd_decision_unmet_bytes 1228800\n"));
	CHECK(strstr(text, "tierd_decision_hot_threshold 4\n"));
	CHECK(strstr(text, "tierd_decision_crowded_floor 0\n"));
	CHECK(strstr(text, "tierd_decision_new_hot_set 0\n"));
	CHECK(strstr(text,
		     "# TYPE tierd_tier_promoted_bytes_total counter\n"
		     "tierd_tier_promoted_bytes_total{tier=\"tier0\"} 2097152\n"
		     "tierd_tier_promoted_bytes_total{tier=\"tier1\"} 0\n"));
	CHECK(strstr(
		text,
		"tierd_node_memory_bytes{node=\"1\",tier=\"tier1\"} 68719476736\n"));
	CHECK(strstr(text,
		     "tierd_cgroup_promoted_bytes_total{cgroup=\"/b\"} 4096\n"));
	CHECK(strstr(text, "tierd_migrate_errors_total{class=\"nomem\"} 0\n"));
	CHECK(strstr(text, "tierd_copy_threads{by=\"b\\\"q\\\\\"} 3\n"));
	CHECK(strstr(text, "tierd_kernel_tiers_flat 1\n"));
	CHECK(strstr(text, "tierd_ticks_total 2\n"));
	/* Every family is announced, even without samples. */
	for (int i = 0; i < NR_METRICS; i++) {
		char help[128];

		snprintf(help, sizeof(help), "# HELP %s ", metrics_name(i));
		CHECK(strstr(text, help));
	}
	free(text);

	/* Reload refused by the parser: the old policy stays. */
	calls[0] = '\0';
	write_conf("interval_ms: 5\n");
	CHECK_EQ_INT(tierd_reload(&d, why, sizeof(why)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:1:14: interval_ms: 5 is out of range 10..60000\n",
		 conf_path);
	CHECK_EQ_STR(why, want);
	CHECK_EQ_INT(d.conf->interval_ms, 500);
	CHECK_EQ_STR(calls, "");

	/* Refused by the machine: no node 7. */
	write_conf("tiers:\n  - name: x\n    nodes: [0, 7]\n");
	CHECK_EQ_INT(tierd_reload(&d, why, sizeof(why)), -ENODEV);
	snprintf(
		want, sizeof(want),
		"%s:3:16: tiers: node 7 is not a memory node of this machine\n",
		conf_path);
	CHECK_EQ_STR(why, want);
	CHECK_EQ_INT(d.topo.nr_tiers, 2);

	/* Refused by a stage: the sampling source is chosen at start. */
	write_conf("sampling: {source: bpf}\npromotion: {batch_pages: 1024}\n");
	CHECK_EQ_INT(tierd_reload(&d, why, sizeof(why)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: sample: sampling.source, max_tracked_pages, half_life_ms and damon take effect on restart\n",
		 conf_path);
	CHECK_EQ_STR(why, want);
	CHECK_EQ_INT(d.conf->promotion.batch_pages, 4096);
	CHECK_EQ_U64(d.reloads_failed_total, 3);

	/* Accepted: swapped, cgroup counters follow their path. */
	calls[0] = '\0';
	tierd_set_dry_run(&d, true);
	CHECK(d.dry_run);
	write_conf("interval_ms: 250\ntiers:\n  - {name: all, nodes: [0, 1]}\n"
		   "cgroups:\n  - path: /b\n");
	CHECK_EQ_INT(tierd_reload(&d, why, sizeof(why)), 0);
	CHECK_EQ_INT(d.conf->interval_ms, 250);
	CHECK_EQ_INT(d.topo.nr_tiers, 1);
	CHECK_EQ_STR(d.topo.tiers[0].name, "all");
	CHECK_EQ_U64(d.stats.cgroup[0].promoted_bytes_total, 4096);
	CHECK(!d.dry_run); /* a reload goes back to the file's dry_run */
	CHECK_EQ_U64(d.reloads_ok_total, 1);

	/* The stages take the new config: one tier now, nothing to decide. */
	CHECK_EQ_INT(manager_tick(&mgr, 13 * SEC), 0);
	CHECK_EQ_STR(calls, "drain ");
	CHECK_EQ_INT(manager_interval_ms(&mgr), 250);

	manager_fini(&mgr);
	CHECK(!d.mgr);
	tierd_fini(&d);
	CHECK(!d.conf);
	unlink(prom);
}

static void test_missing_default(void)
{
	const char *fixtures = fixtures_dir;
	static struct tierd d;
	char root[4096];

	snprintf(root, sizeof(root), "%s/topology/single", fixtures);
	d.root = root;
	snprintf(d.config_path, sizeof(d.config_path), "%s/none.yaml", tmpdir);
	/* Named on the command line: a missing file is an error. */
	CHECK_EQ_INT(tierd_init(&d), -ENOENT);
	tierd_fini(&d);
	/* The default path: missing means defaults. */
	memset(&d, 0, sizeof(d));
	d.root = root;
	d.config_is_default = true;
	snprintf(d.config_path, sizeof(d.config_path), "%s/none.yaml", tmpdir);
	CHECK_EQ_INT(tierd_init(&d), 0);
	CHECK_EQ_INT(d.conf->interval_ms, 1000);
	CHECK_EQ_INT(d.topo.nr_tiers, 1);
	tierd_fini(&d);
}

/* Start with nodes the machine lacks: left out (tier 'gone' entirely, the
 * GPU rule too), the rest runs.  A reload of the same file is refused. */
static void test_missing_node_at_start(void)
{
	static struct tierd d;
	char root[4096], why[4096], want[1024];

	snprintf(root, sizeof(root), "%s/topology/dram-cxl", fixtures_dir);
	d.root = root;
	snprintf(d.config_path, sizeof(d.config_path), "%s", conf_path);
	d.no_knobs = true;
	write_conf("tiers:\n  - name: fast\n    nodes: [0]\n  - name: slow\n    nodes: [7, 1]\n"
		   "  - name: gone\n    nodes: [9]\ngpu_nodes:\n  - node: 5\n");
	CHECK_EQ_INT(tierd_init(&d), 0);
	CHECK_EQ_INT(d.topo.nr_tiers, 2);
	CHECK_EQ_INT(d.conf->nr_tiers, 2);
	CHECK_EQ_STR(d.topo.tiers[1].name, "slow");
	CHECK_EQ_INT(d.topo.tiers[1].nr_nodes, 1);
	CHECK_EQ_INT(d.topo.tiers[1].nodes[0], 1);
	CHECK_EQ_INT(d.conf->tiers[1].node_marks[0].line, 5);
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 0);
	CHECK_EQ_INT(tierd_reload(&d, why, sizeof(why)), -ENODEV);
	snprintf(want, sizeof(want),
		 "%s:5:13: tiers: node 7 is not a memory node of this machine\n"
		 "%s:7:13: tiers: node 9 is not a memory node of this machine\n"
		 "%s:9:5: gpu_nodes: node 5 is not a memory node of this machine\n",
		 conf_path, conf_path, conf_path);
	CHECK_EQ_STR(why, want);
	CHECK_EQ_INT(d.topo.nr_tiers, 2);
	tierd_fini(&d);
}

/* tierd started from configs/gpu-coherent.yaml on topology fixture @tree. */
static void start_gpu_coherent(struct tierd *d, struct manager *mgr, const char *tree,
			       char *root, size_t size)
{
	snprintf(root, size, "%s/topology/%s", fixtures_dir, tree);
	d->root = root;
	snprintf(d->config_path, sizeof(d->config_path), "%s/../../configs/gpu-coherent.yaml",
		 fixtures_dir);
	d->no_knobs = true;
	CHECK_EQ_INT(tierd_init(d), 0);
	CHECK_EQ_INT(manager_init(mgr, d, wrapped_fake()), 0);
}

/*
 * configs/gpu-coherent.yaml on a Grace Hopper machine: with the driver in
 * NUMA mode the HBM (node 1) is the top tier, DRAM the fast tier, and
 * status shows the page size, the mode and the rule against its cap (not
 * read before the first tick).  In CDMM mode the HBM is no node: tierd
 * starts, leaves the tier and the rule out, and status says why.
 */
static void test_grace_hopper(void)
{
	static struct manager mgr;
	static struct tierd d;
	char root[4096], page[128], why[4096], *text;

	start_gpu_coherent(&d, &mgr, "grace-hopper", root, sizeof(root));
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 1);
	CHECK_EQ_INT(topo_fast_tier(&d.topo), 1);
	CHECK_EQ_STR(d.stats.gpu_mode, "numa");
	text = render_status(&d, false);
	snprintf(page, sizeof(page),
		 "\npages:    %.1f KiB base pages, 2.0 MiB PMD (no THP support), 2.0 MiB ranges\n",
		 sysconf(_SC_PAGESIZE) / 1024.0);
	CHECK(strstr(text, page));
	CHECK(strstr(text, "\ngpu:      numa (CoherentGPUMemoryMode \"numa\")\n"
			   "  rule for node 1: not read yet used of 64.0 GiB\n"));
	free(text);
	text = render_status(&d, true);
	CHECK(strstr(text, "\"gpu\":{\"mode\":\"numa\",\"why\":\"CoherentGPUMemoryMode \\\"numa\\\"\","
			   "\"rules\":[{\"node\":1,\"used_bytes\":null,\"max_bytes\":68719476736,"
			   "\"inert\":false}]}}\n"));
	free(text);
	manager_fini(&mgr);
	tierd_fini(&d);

	memset(&d, 0, sizeof(d));
	start_gpu_coherent(&d, &mgr, "grace-hopper-cdmm", root, sizeof(root));
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 0);
	CHECK_EQ_STR(d.stats.gpu_mode, "cdmm");
	text = render_status(&d, false);
	CHECK(strstr(text, "\ngpu:      cdmm (CoherentGPUMemoryMode \"driver\"): the GPU's memory is "
			   "no NUMA node, gpu_nodes rules are inert\n"));
	free(text);
	/* A reload of the same file is taken, the rule inert again. */
	CHECK_EQ_INT(tierd_reload(&d, why, sizeof(why)), 0);
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 0);
	manager_fini(&mgr);
	tierd_fini(&d);
}

/* Idle ticks: a tick that plans nothing, or at most 1% of the pages found
 * hot, while the table holds heat doubles the interval, up to
 * idle_interval_ms; a bigger plan or an empty table goes back to
 * interval_ms. */

/* The nice between ticks: tick_nice_boost (default 10) below the one tierd
 * started at where this process may go back up (root), else that one. */
static int rest_nice(int start)
{
	if (geteuid() != 0)
		return start;
	return start + 10 > 19 ? 19 : start + 10;
}

static void test_idle_interval(void)
{
	/* After each tick of "eiisiimie": 'e' empty table, 'i' nothing
	 * planned, 's' 10 of 1000 hot pages planned (idle), 'm' 11 of 1000
	 * (a move). */
	static const char script[] = "eiisiimie";
	static const uint32_t want[] = { 500, 1000, 2000, 3000, 3000, 3000, 500,
					 1000, 500 };
	static struct manager mgr;
	static struct tierd d;
	struct hot_table hot = { 0 };
	struct batch_plan plan = { 0 };
	char root[4096];
	FILE *f = fopen(conf_path, "w");
	int start;

	CHECK(f != NULL);
	fputs("interval_ms: 500\nidle_interval_ms: 3000\n", f);
	fclose(f);
	snprintf(root, sizeof(root), "%s/topology/single", fixtures_dir);
	d.root = root;
	d.no_knobs = true;
	snprintf(d.config_path, sizeof(d.config_path), "%s", conf_path);
	snprintf(d.runtime_dir, sizeof(d.runtime_dir), "%s", tmpdir);
	errno = 0;
	start = getpriority(PRIO_PROCESS, 0);
	CHECK_EQ_INT(errno, 0);
	CHECK_EQ_INT(tierd_init(&d), 0);
	CHECK_EQ_INT(manager_init(&mgr, &d, wrapped_fake()), 0);
	CHECK_EQ_INT(manager_interval_ms(&mgr), 500);
	/* The stages start at the nice tierd started at, its ticks' (the
	 * first tick waits on them), and it rests lower after. */
	CHECK_EQ_INT(start_nice, start);
	CHECK_EQ_INT(getpriority(PRIO_PROCESS, 0), rest_nice(start));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char c = script[i];

		hot.nused = c == 'e' ? 0 : 100;
		plan.nr_batches = c == 'm' || c == 's';
		plan.pages = c == 'm' ? 11 : c == 's' ? 10 : 0;
		mgr.idle_ticks = manager_tick_idle(&hot, &plan, 1000) ? mgr.idle_ticks + 1 : 0;
		CHECK_EQ_INT(manager_interval_ms(&mgr), want[i]);
	}
	/* A tick of the manager: an empty table is not idle. */
	CHECK_EQ_INT(manager_tick(&mgr, 10 * SEC), 0);
	CHECK_EQ_INT(mgr.idle_ticks, 0);
	/* Ticks run back at the start's nice, and the thread rests
	 * tick_nice_boost (default 10) levels lower after each. */
	CHECK_EQ_INT(drain_nice, start);
	CHECK_EQ_INT(d.stats.tick_nice, start);
	CHECK_EQ_INT(getpriority(PRIO_PROCESS, 0), rest_nice(start));
	/* Put back, for what runs after in this process. */
	setpriority(PRIO_PROCESS, 0, start);
	/* At or below interval_ms: fixed. */
	d.conf->idle_interval_ms = 200;
	mgr.idle_ticks = 5;
	CHECK_EQ_INT(manager_interval_ms(&mgr), 500);
	manager_fini(&mgr);
	tierd_fini(&d);
}

int main(int argc, char **argv)
{
	const char *fixtures = argc > 1 ? argv[1] : "tests/fixtures";

	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(conf_path, sizeof(conf_path), "%s/tierd.yaml", tmpdir);
	fixtures_dir = fixtures;
	RUN(test_lifecycle);
	RUN(test_missing_default);
	RUN(test_missing_node_at_start);
	RUN(test_grace_hopper);
	RUN(test_idle_interval);
	unlink(conf_path);
	rmdir(tmpdir);
	return TEST_EXIT();
}
