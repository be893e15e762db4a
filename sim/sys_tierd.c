// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tierd systems: tierd's own pipeline (daemon/manager.c's
 * manager_tick()) driven on the simulated clock, every kernel-facing seam
 * a fake backed by the engine (sim/README.md, "The tierd system"):
 *
 * - the root directory: a temporary sysfs tree made from the machine model
 *   (nodes, distances, CPUs, MemTotal/MemFree, access0 latency and
 *   bandwidth, memory tiers, the THP size), MemFree rewritten from the
 *   placement before every tick; the base page is the model's too
 *   (struct tierd's geom_ops);
 * - the config: tiers from the machine model and the shipped
 *   configs/cxl-promotion.yaml's promotion, demotion and copy-thread
 *   settings, or the file given with --tierd-conf (sim_tierd_conf);
 * - the pids: one process per tenant (its maps: a mapping per run of its
 *   ranges), range r at address
 *   SIM_BASE + r * range_bytes of its tenant's process, in cgroup
 *   /sim/tN; a tenant with a budget is a cgroup of the config with that
 *   fast_tier_max_bytes (the first CONF_MAX_CGROUPS of them), and its
 *   memory.numa_stat is rewritten from the placement before every tick;
 * - the sampler: what the sampler model saw since the last drain (the
 *   counts of every interval added up, as the BPF count map adds them;
 *   DAMON's newest aggregation, as the DAMON source reads one), each range
 *   recorded into the hot table as one entry of range_bytes (tierd's range: 2 MiB on every
 *   machine model's pages, core/page_geom.h) weighted with what was seen (DAMON: the
 *   region's nr_accesses, as the DAMON source records a region; exact and
 *   hw: the accesses or samples); hw's period, where the run leaves it to
 *   tierd (sim_view.rate), set at each drain as the BPF source sets it;
 *   with DAMON, its regions of no access, by their age, into tierd's idle
 *   set at each drain, as the DAMON source's drain puts them
 *   (sim_view.idle_ms);
 * - THPs: where the machine's PMD THP is the range, each range is one
 *   (PAGEMAP_SCAN answered from the model, ts_thp_ops), as the engine
 *   bills it;
 * - the migrator: node queries answered from the placement; moves checked
 *   against capacity, the tenant's budget and the interval's copy time as
 *   the engine checks them, each page's status as move_pages(2) gives it
 *   (the node, -ENOMEM for no room or budget, -EBUSY for no copy time
 *   left), the clock advancing by the call's modelled cost; the MPOL_MF_PROMOTE
 *   probe answered as the kernel (patched or vanilla) would.
 *
 * Nothing of the policy is here: what moves is what manager_tick() asked.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "sys_tierd.h"
#include "system.h"

#include "daemon.h"
#include "damon_fit.h"
#include "hot_table.h"
#include "log.h"
#include "manager.h"
#include "migrate.h"
#include "page_geom_read.h"
#include "sample_period.h"
#include "sys/sampler.h"
#include "sys/sampler_bpf.h"
#include "sys/thp.h"

#define SIM_BASE 0x100000000000ull
#define SIM_PID0 1000
#define MAX_TICKS_PER_INTERVAL 64
/* tierd's clock is the engine's plus this: tierd takes a time of 0 for
 * "not known" (a table entry's last access, a range's last move), and a
 * monotonic clock on a server is never 0 once a daemon runs. */
#define TIERD_EPOCH_NS 1000000000ull

const char *sim_tierd_conf;

struct tsim {
	struct sampler base;	/* first: the sampler's state */
	const struct sim_setup *s;
	enum sim_kernel kernel;
	char dir[64];		/* config, runtime files */
	char root[96];		/* the sysfs tree */
	char conf[160];
	struct tierd d;
	struct manager mgr;
	bool started;
	pid_t *pids;
	/* The placement as the fake kernel sees it, synced from the view. */
	uint8_t *node;
	uint64_t used[SIM_MAX_NODES];
	uint64_t *tenant_fast;
	uint64_t *tenant_node;	/* [nr_tenants][nr_nodes] bytes */
	bool *tenant_cg;	/* [nr_tenants]: a cgroup of the config */
	int fast;
	/* The interval's moves, in call order. */
	struct sim_move *moves;
	uint32_t nr_moves, max_moves;
	uint64_t copy_ns;	/* spent this interval */
	uint64_t per_range_ns;
	uint64_t clock_ns;	/* the migrator's clock: tierd's (TIERD_EPOCH_NS) */
	uint64_t next_tick_ns;
	uint64_t ticks;		/* manager_tick() calls so far */
	/* The sampler model's view since the last drain, for the next. */
	uint32_t *view;		/* [nr_ranges] */
	/* With source_idle, the sampler model's idle_ms of the newest report:
	 * it changes with the view's (a report with no access anywhere aside). */
	const uint32_t *idle_view;
	struct idle_set *idle;	/* the manager's, where the source tells idle */
	bool fresh;
	/* The hardware sampler's rate where tierd sets it, and the sampled
	 * time whose cost rate->cost_ns holds. */
	struct sim_rate *rate;
	uint64_t rate_span_ns;
	struct sampler_status st;
};

/* ---- the root directory ---- */

static int put(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -EIO : 0;
}

static int put_meminfo(struct tsim *t, int i)
{
	const struct sim_node *n = &t->s->m->nodes[i];
	uint64_t total = n->capacity_bytes >> 10, used = t->used[i] >> 10;
	char rel[128], text[256];

	snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/meminfo", n->id);
	snprintf(text, sizeof(text),
		 "Node %d MemTotal:       %llu kB\nNode %d MemFree:        %llu kB\n"
		 "Node %d MemUsed:        %llu kB\n", n->id, (unsigned long long)total, n->id,
		 (unsigned long long)(total - used), n->id, (unsigned long long)used);
	return put(t->root, rel, text);
}

/* /sim/tN's memory.numa_stat, as memcg prints it: every node, anon only. */
static int put_numa_stat(struct tsim *t, uint32_t ten)
{
	const struct sim_machine *m = t->s->m;
	char rel[128], text[64 + SIM_MAX_NODES * 48];
	size_t len = 0;

	len += (size_t)snprintf(text + len, sizeof(text) - len, "anon");
	for (int i = 0; i < m->nr_nodes; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, " N%d=%llu", m->nodes[i].id,
					(unsigned long long)t->tenant_node[ten * m->nr_nodes + i]);
	len += (size_t)snprintf(text + len, sizeof(text) - len, "\nfile");
	for (int i = 0; i < m->nr_nodes; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, " N%d=0", m->nodes[i].id);
	snprintf(text + len, sizeof(text) - len, "\n");
	snprintf(rel, sizeof(rel), "sys/fs/cgroup/sim/t%u/memory.numa_stat", ten);
	return put(t->root, rel, text);
}

/* Each tenant's mappings: one per run of its ranges, read and written. */
static int put_maps(struct tsim *t, uint32_t ten)
{
	const struct sim_setup *s = t->s;
	size_t len = 0, cap = 4096;
	char *text = malloc(cap), rel[64];
	int r;

	if (!text)
		return -ENOMEM;
	text[0] = 0;
	for (uint32_t i = 0; i < s->nr_ranges; i++) {
		uint32_t j = i;

		if (s->range_tenant[i] != ten)
			continue;
		while (j + 1 < s->nr_ranges && s->range_tenant[j + 1] == ten)
			j++;
		if (cap - len < 128) {
			char *more = realloc(text, cap *= 2);

			if (!more) {
				free(text);
				return -ENOMEM;
			}
			text = more;
		}
		len += (size_t)snprintf(text + len, cap - len, "%llx-%llx rw-p 00000000 00:00 0\n",
					SIM_BASE + (unsigned long long)i * s->range_bytes,
					SIM_BASE + (unsigned long long)(j + 1) * s->range_bytes);
		i = j;
	}
	snprintf(rel, sizeof(rel), "proc/%d/maps", (int)t->pids[ten]);
	r = put(t->root, rel, text);
	free(text);
	return r;
}

/* Each tenant's process in /sim/tN, its statm saying its ranges resident,
 * its maps where they are; the cgroups of the config, with their
 * placement. */
static int make_cgroups(struct tsim *t)
{
	const struct sim_setup *s = t->s;
	uint64_t *pages = calloc(s->nr_tenants, sizeof(*pages));
	char rel[64], text[64];
	int r, n = 0;

	if (!pages)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nr_ranges; i++)
		pages[s->range_tenant[i]] += s->range_bytes / s->m->base_page_bytes;

	/* A cgroup2 mount, as tierd's config check looks for one. */
	r = put(t->root, "sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
	r = r ?: put(t->root, "proc/self/pagemap", "");
	for (uint32_t i = 0; i < s->nr_tenants && !r; i++) {
		snprintf(rel, sizeof(rel), "proc/%d/cgroup", (int)t->pids[i]);
		snprintf(text, sizeof(text), "0::/sim/t%u\n", i);
		r = put(t->root, rel, text);
		/* for the THP lookups to open (ts_thp_ops answers them) */
		snprintf(rel, sizeof(rel), "proc/%d/pagemap", (int)t->pids[i]);
		r = r ?: put(t->root, rel, "");
		r = r ?: put_maps(t, i);
		snprintf(rel, sizeof(rel), "proc/%d/statm", (int)t->pids[i]);
		snprintf(text, sizeof(text), "%llu %llu 0 0 0 0 0\n",
			 (unsigned long long)pages[i], (unsigned long long)pages[i]);
		r = r ?: put(t->root, rel, text);
		t->tenant_cg[i] = s->budget_bytes[i] && n < CONF_MAX_CGROUPS;
		n += t->tenant_cg[i];
		if (t->tenant_cg[i])
			r = r ?: put_numa_stat(t, i);
	}
	free(pages);
	return r;
}

/* The machine model's base page, as sysconf(_SC_PAGESIZE) would say it. */
static long ts_page_size(void *ctx)
{
	return (long)((const struct tsim *)ctx)->s->m->base_page_bytes;
}

static const struct page_geom_ops ts_geom_ops = {
	.page_size = ts_page_size,
};

/* The model's PMD THP size where it has THPs (none: a kernel without). */
static int put_thp(struct tsim *t)
{
	char text[32];

	if (!t->s->m->thp_bytes)
		return 0;
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)t->s->m->thp_bytes);
	return put(t->root, PAGE_GEOM_PMD_PATH, text);
}

static int make_tree(struct tsim *t)
{
	const struct sim_machine *m = t->s->m;
	char rel[160], text[256];
	int r = 0, cpu = 0;

	for (int i = 0; i < m->nr_nodes && !r; i++) {
		const struct sim_node *n = &m->nodes[i];
		char dir[64];
		size_t len = 0;

		snprintf(dir, sizeof(dir), "sys/devices/system/node/node%d", n->id);
		for (int j = 0; j < m->nr_nodes; j++) {
			int dt = m->nodes[j].tier - n->tier;

			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%d", j ? " " : "",
						i == j ? 10 : 20 + 10 * (dt < 0 ? -dt : dt));
		}
		snprintf(text + len, sizeof(text) - len, "\n");
		snprintf(rel, sizeof(rel), "%s/distance", dir);
		r = put(t->root, rel, text);
		if (n->cpuless)
			snprintf(text, sizeof(text), "\n");
		else
			snprintf(text, sizeof(text), "%d-%d\n", cpu, cpu + 7);
		cpu += n->cpuless ? 0 : 8;
		snprintf(rel, sizeof(rel), "%s/cpulist", dir);
		r = r ?: put(t->root, rel, text);
		snprintf(text, sizeof(text), "%u\n", n->latency_ns);
		snprintf(rel, sizeof(rel), "%s/access0/initiators/read_latency", dir);
		r = r ?: put(t->root, rel, text);
		snprintf(rel, sizeof(rel), "%s/access0/initiators/write_latency", dir);
		r = r ?: put(t->root, rel, text);
		snprintf(text, sizeof(text), "%llu\n",
			 (unsigned long long)(n->bandwidth_gbps * 1000));
		snprintf(rel, sizeof(rel), "%s/access0/initiators/read_bandwidth", dir);
		r = r ?: put(t->root, rel, text);
		snprintf(rel, sizeof(rel), "%s/access0/initiators/write_bandwidth", dir);
		r = r ?: put(t->root, rel, text);
		r = r ?: put_meminfo(t, i);
	}
	/* One kernel memory tier, as the kernel puts CXL next to DRAM; the
	 * config names the tiers. */
	{
		size_t len = 0;

		for (int i = 0; i < m->nr_nodes; i++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%d",
						i ? "," : "", m->nodes[i].id);
		snprintf(text + len, sizeof(text) - len, "\n");
		r = r ?: put(t->root, "sys/devices/virtual/memory_tiering/memory_tier4/nodelist",
			     text);
	}
	return r;
}

/* tiers from the machine, the rest as configs/cxl-promotion.yaml ships it
 * (its sampling targets left out: the sim names the processes). */
static int make_conf(struct tsim *t)
{
	const struct sim_machine *m = t->s->m;
	const char *given = sim_tierd_conf;
	int max_tier = 0;
	FILE *f;

	if (given && *given) {
		snprintf(t->conf, sizeof(t->conf), "%s", given);
		return 0;
	}
	snprintf(t->conf, sizeof(t->conf), "%s/tierd.yaml", t->dir);
	f = fopen(t->conf, "w");
	if (!f)
		return -errno;
	for (int i = 0; i < m->nr_nodes; i++)
		max_tier = m->nodes[i].tier > max_tier ? m->nodes[i].tier : max_tier;
	fprintf(f, "interval_ms: 500\ntiers:\n");
	for (int tier = 0; tier <= max_tier; tier++) {
		bool any = false;

		for (int i = 0; i < m->nr_nodes; i++) {
			if (m->nodes[i].tier != tier)
				continue;
			fprintf(f, any ? ", %d" : "  - name: t%d\n    nodes: [%d", tier,
				m->nodes[i].id);
			if (!any)
				any = true;
		}
		if (any)
			fprintf(f, "]\n%s", tier ? "" :
				"    low_watermark_pct: 3\n    high_watermark_pct: 6\n");
	}
	fprintf(f, "sampling:\n  source: auto\n  half_life_ms: 5000\n"
		   "promotion:\n  hot_threshold: 0\n  max_rate_mb_per_s: 16384\n"
		   "  batch_pages: 16384\n"
		   "demotion:\n  enabled: true\n  cold_age_s: 60\n"
		   "copy_threads:\n  mode: %s\n  min: 2\n  max: 8\n  busy_cpu_pct: 70\n",
		t->kernel == SIM_KERNEL_PATCHED ? "auto" : "off");
	for (uint32_t i = 0, any = 0; i < t->s->nr_tenants; i++) {
		if (!t->tenant_cg[i])
			continue;
		fprintf(f, "%s  - path: /sim/t%u\n    fast_tier_max_bytes: %llu\n",
			any++ ? "" : "cgroups:\n", i, (unsigned long long)t->s->budget_bytes[i]);
	}
	return fclose(f) ? -EIO : 0;
}

int sim_tierd_conf_read(struct tierd_conf *c, char *err)
{
	char *errors = NULL;

	if (!sim_tierd_conf || !*sim_tierd_conf) {
		conf_defaults(c);
		return 0;
	}
	if (conf_load(sim_tierd_conf, c, &errors) < 0) {
		snprintf(err, SIM_ERR_LEN, "%s", errors ? errors : sim_tierd_conf);
		free(errors);
		return -EINVAL;
	}
	free(errors);
	return 0;
}

uint64_t sim_tierd_period(const struct tierd_conf *c, const struct page_geom *g, uint64_t period,
			  uint64_t cost_ns, uint64_t interval_ns)
{
	struct sampler_bpf_params bp;
	struct sample_period_params sp;

	if (!interval_ns)
		return period;
	sampler_bpf_params_default(&bp, g);
	sp = (struct sample_period_params){ .budget_pct = c->sampling.cpu_budget_pct,
					    .min_period = bp.period_min,
					    .max_period = bp.period_max };
	return sample_period_next(&sp, period, cost_ns, interval_ns, 1);
}

int sim_tierd_damon_spec(char *buf, size_t len, const struct sim_setup *s, char *err)
{
	static struct tierd_conf c;
	const struct sim_machine *m = s->m;
	struct damon_attrs conf, fit;
	struct page_geom g;
	int r = sim_tierd_conf_read(&c, err);

	if (r)
		return r;
	conf = (struct damon_attrs){ .sample_us = c.sampling.damon_sample_us,
				     .aggr_us = c.sampling.damon_aggr_us,
				     .min_nr_regions = c.sampling.damon_min_regions,
				     .max_nr_regions = c.sampling.damon_max_regions };
	/* What tierd's DAMON source asks of the kernel for this footprint,
	 * in regions of tierd's range on the machine's pages. */
	if (page_geom_set(&g, m->base_page_bytes, m->thp_bytes) < 0) {
		snprintf(err, SIM_ERR_LEN, "no page geometry for %s", m->name);
		return -EINVAL;
	}
	damon_fit(&conf, (uint64_t)s->nr_ranges * s->range_bytes, s->nr_tenants, g.range,
		  (uint64_t)c.interval_ms * 1000, &fit);
	snprintf(buf, len, "damon:%llu:%llu:%u:%u", (unsigned long long)fit.sample_us,
		 (unsigned long long)fit.aggr_us, fit.min_nr_regions, fit.max_nr_regions);
	return 0;
}

/* ---- the sampler: the model's view into the hot table ---- */

static int ts_probe(struct sampler *s, char *why, size_t len)
{
	return 0;
}

static int ts_start(struct sampler *s, char *why, size_t len)
{
	((struct tsim *)s)->st.running = true;
	return 0;
}

static int ts_set_targets(struct sampler *s, const pid_t *p, size_t n)
{
	return 0;
}

/*
 * As the BPF source's adapt_period() (daemon/sys/sampler_bpf_drain.c) at
 * every drain that takes samples: the period from the cost since the last,
 * by core's sample_period_next() within the source's bounds and the
 * config's sampling.cpu_budget_pct.  The model's cost stands for the
 * program's measured run time.  The model samples an interval at once, so
 * the cost is judged over the intervals sampled since the last drain, not
 * over the time between the drains: a drain half a second after the last
 * (the idle pace's ticks fall on the half second) would take a whole
 * interval's cost as twice the budget and halve the rate.
 */
static void ts_adapt(struct tsim *t)
{
	uint64_t span = t->rate_span_ns;

	if (!t->rate)
		return;
	t->st.cost_pct = sample_cost_pct(t->rate->cost_ns, span, 1);
	t->st.cpu_seconds += (double)t->rate->cost_ns / 1e9;
	t->rate->period = sim_tierd_period(t->d.conf, &t->d.geom, t->rate->period,
					   t->rate->cost_ns, span);
	t->rate->cost_ns = 0;
	t->rate_span_ns = 0;
}

/*
 * The drained report's idle regions into the manager's idle set, as the
 * DAMON source's drain does (daemon/sys/damon/regions.c, idle_note()): a
 * run of a tenant's ranges idle equally long is one region, idle since
 * @now_ns less its age.  The set is replaced whole by each report.
 */
static void idle_report(struct tsim *t, uint64_t now_ns)
{
	const struct sim_setup *ss = t->s;

	if (!t->idle || !t->idle_view)
		return;
	idle_begin(t->idle);
	for (uint32_t r = 0, e; r < ss->nr_ranges; r = e) {
		uint64_t ms = t->idle_view[r], ns = ms * 1000000ull;

		for (e = r + 1; e < ss->nr_ranges && t->idle_view[e] == ms &&
				ss->range_tenant[e] == ss->range_tenant[r]; e++)
			;
		if (ms)
			idle_add(t->idle, t->pids[ss->range_tenant[r]],
				 SIM_BASE + (uint64_t)r * ss->range_bytes,
				 SIM_BASE + (uint64_t)e * ss->range_bytes,
				 ns < now_ns ? now_ns - ns : 1);
	}
}

static int ts_drain(struct sampler *s, struct hot_table *tab, uint64_t now_ns)
{
	struct tsim *t = (struct tsim *)s;
	const struct sim_setup *ss = t->s;
	int n = 0;

	if (!t->fresh)
		return 0;
	ts_adapt(t);
	t->fresh = false;
	for (uint32_t r = 0; r < ss->nr_ranges; r++) {
		int k;

		if (!t->view[r])
			continue;
		k = hot_record(tab, t->pids[ss->range_tenant[r]],
			       SIM_BASE + (uint64_t)r * ss->range_bytes, ss->range_bytes,
			       (double)t->view[r], now_ns);
		t->view[r] = 0;
		n += k > 0 ? k : 0;
		t->st.samples++;
	}
	t->st.records += (uint64_t)n;
	t->st.drains++;
	idle_report(t, now_ns);
	return n;
}

/*
 * A peek between idle ticks (manager_peek()), as the DAMON source makes one
 * when its program sees a fresh aggregation (daemon/sys/damon/wake.c) and
 * the BPF source every interval_ms: the ranges of the view not drained
 * yet, and of them those whose heat in the table is below half of what the
 * drain would add.  The exact and hint models do not peek.
 */
static int ts_peek(struct sampler *s, const struct hot_table *tab, uint64_t now_ns,
		   struct sampler_peek *ret)
{
	struct tsim *t = (struct tsim *)s;
	const struct sim_setup *ss = t->s;
	double scale;

	if (!ss->source_peeks)
		return -EOPNOTSUPP;
	if (!t->fresh)
		return 0;
	memset(ret, 0, sizeof(*ret));
	scale = hot_weight_scale(tab, now_ns);
	for (uint32_t r = 0; r < ss->nr_ranges; r++) {
		uint64_t addr = SIM_BASE + (uint64_t)r * ss->range_bytes;

		if (!t->view[r])
			continue;
		sampler_peek_add(ret, tab, t->pids[ss->range_tenant[r]], addr, ss->range_bytes,
				 (double)t->view[r], scale);
	}
	return 1;
}

/* Where the sampler model tells idle memory (DAMON's), the set the
 * drains replace. */
static int ts_idle_into(struct sampler *s, struct idle_set *set)
{
	struct tsim *t = (struct tsim *)s;

	if (!t->s->source_idle)
		return -EOPNOTSUPP;
	t->idle = set;
	return 0;
}

static void ts_stop(struct sampler *s)
{
	((struct tsim *)s)->st.running = false;
}

static int ts_fd(struct sampler *s)
{
	return -1;
}

static void ts_describe(struct sampler *s, struct sampler_status *ret)
{
	struct tsim *t = (struct tsim *)s;

	*ret = t->st;
	ret->period = t->rate ? t->rate->period : 0;
	ret->name = "sim";
	snprintf(ret->why, sizeof(ret->why), "the simulator's sampler model");
	ret->cost_source = "none";
}

static void ts_free(struct sampler *s)
{
}

static const struct sampler_ops ts_sampler_ops = {
	.name = "sim",
	.probe = ts_probe,
	.start = ts_start,
	.set_targets = ts_set_targets,
	.drain = ts_drain,
	.peek = ts_peek,
	.idle_into = ts_idle_into,
	.stop = ts_stop,
	.fd = ts_fd,
	.describe = ts_describe,
	.free = ts_free,
};

/* ---- the migrator: move_pages(2) on the placement ---- */

static int node_index(const struct sim_machine *m, int id)
{
	for (int i = 0; i < m->nr_nodes; i++)
		if (m->nodes[i].id == id)
			return i;
	return -1;
}

static bool fast_tier(const struct tsim *t, int i)
{
	return t->s->m->nodes[i].tier == t->s->m->nodes[t->fast].tier;
}

/* The range @pid's @addr is in, or -1. */
static int64_t range_of(const struct tsim *t, int pid, uint64_t addr)
{
	const struct sim_setup *s = t->s;
	uint64_t r;

	if (addr < SIM_BASE)
		return -1;
	r = (addr - SIM_BASE) / s->range_bytes;
	if (r >= s->nr_ranges || t->pids[s->range_tenant[r]] != pid)
		return -1;
	return (int64_t)r;
}

/* Move range @r to node index @to as the engine would: 0, -ENOMEM (no room,
 * over budget) or -EBUSY (no copy time left this interval). */
static int move_range(struct tsim *t, uint32_t r, int to, bool first)
{
	const struct sim_setup *s = t->s;
	uint16_t ten = s->range_tenant[r];
	int from = t->node[r];
	uint64_t cost = t->per_range_ns + (first ? s->m->mig[t->kernel].call_ns : 0);

	if (t->used[to] + s->range_bytes > s->m->nodes[to].capacity_bytes)
		return -ENOMEM;
	if (fast_tier(t, to) && !fast_tier(t, from) && s->budget_bytes[ten] &&
	    t->tenant_fast[ten] + s->range_bytes > s->budget_bytes[ten])
		return -ENOMEM;
	if (t->copy_ns + cost > s->interval_ns || t->nr_moves >= t->max_moves)
		return -EBUSY;
	t->copy_ns += cost;
	t->clock_ns += cost;
	t->used[from] -= s->range_bytes;
	t->used[to] += s->range_bytes;
	if (fast_tier(t, from))
		t->tenant_fast[ten] -= s->range_bytes;
	if (fast_tier(t, to))
		t->tenant_fast[ten] += s->range_bytes;
	t->tenant_node[ten * s->m->nr_nodes + from] -= s->range_bytes;
	t->tenant_node[ten * s->m->nr_nodes + to] += s->range_bytes;
	t->node[r] = (uint8_t)to;
	t->moves[t->nr_moves++] = (struct sim_move){ .range = r, .node = (uint8_t)to };
	return 0;
}

static int ts_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			 const int *nodes, int *status, int flags)
{
	struct tsim *t = ctx;
	const struct sim_machine *m = t->s->m;
	int64_t last = -1;
	int last_status = 0, left = 0;
	bool first = true;

	if (count == 0 && !addrs)
		return (flags & MPOL_MF_PROMOTE) && t->kernel != SIM_KERNEL_PATCHED ? -EINVAL : 0;
	for (unsigned long i = 0; i < count; i++) {
		int64_t r = range_of(t, pid, (uint64_t)(uintptr_t)addrs[i]);
		int to;

		if (r < 0) {
			status[i] = -ENOENT;
			continue;
		}
		if (!nodes) {
			status[i] = m->nodes[t->node[r]].id;
			continue;
		}
		if (r != last) {
			to = node_index(m, nodes[i]);
			if (to < 0)
				last_status = -EINVAL;
			else if (t->node[r] == to)
				last_status = nodes[i];
			else {
				last_status = move_range(t, (uint32_t)r, to, first);
				if (last_status == 0) {
					first = false;
					last_status = nodes[i];
				}
			}
			last = r;
		}
		status[i] = last_status;
		left += last_status < 0;
	}
	t->clock_ns += nodes ? 0 : 1000;	/* a query: a syscall */
	return left;
}

static uint64_t ts_now_ns(void *ctx)
{
	return ((struct tsim *)ctx)->clock_ns;
}

static int ts_node_free(void *ctx, int node, uint64_t *ret_bytes)
{
	struct tsim *t = ctx;
	int i = node_index(t->s->m, node);

	if (i < 0)
		return -ENOENT;
	*ret_bytes = t->s->m->nodes[i].capacity_bytes - t->used[i];
	return 0;
}

/*
 * PAGEMAP_SCAN as the model's memory would answer it: where the machine's
 * PMD THP is the range, the engine bills each range as one folio, and
 * tierd is told so, as a server's THP-backed memory tells it (the range
 * then takes one of a tick's candidate slots, not 512).  A THP larger
 * than the range (grace-hopper's 512 MiB) is not modelled: the ranges are
 * base pages, and no THP is reported.
 */
static int ts_thp_scan(void *ctx, int fd, uint64_t start, uint64_t end, struct thp_region *vec,
		       size_t n)
{
	const struct sim_setup *s = ((const struct tsim *)ctx)->s;
	uint64_t r;

	if (s->m->thp_bytes != s->range_bytes || start < SIM_BASE || !n)
		return 0;
	r = (start - SIM_BASE) / s->range_bytes;
	if (r >= s->nr_ranges)
		return 0;
	vec[0] = (struct thp_region){ SIM_BASE + r * s->range_bytes,
				      SIM_BASE + (r + 1) * s->range_bytes, true };
	return 1;
}

static int ts_pfns_visible(void *ctx, const char *proc_root, unsigned int page_shift)
{
	return 0;
}

static const struct thp_ops ts_thp_ops = { .scan = ts_thp_scan,
					   .pfns_visible = ts_pfns_visible };

static const struct mig_ops ts_mig_ops = {
	.move_pages = ts_move_pages,
	.now_ns = ts_now_ns,
	.node_free = ts_node_free,
};

/* ---- the system ---- */

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static void tierd_destroy(void *state)
{
	struct tsim *t = state;

	if (!t)
		return;
	if (t->started) {
		manager_fini(&t->mgr);
		tierd_fini(&t->d);
	}
	/* the tree, the config and whatever tierd kept in its runtime
	 * directory */
	if (t->dir[0] && nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		fprintf(stderr, "tierd-sim: could not remove %s\n", t->dir);
	free(t->moves);
	free(t->view);
	free(t->tenant_fast);
	free(t->tenant_node);
	free(t->tenant_cg);
	free(t->node);
	free(t->pids);
	free(t);
}

static int tierd_init_kernel(void **ret, const struct sim_setup *s, enum sim_kernel kernel)
{
	struct tsim *t = calloc(1, sizeof(*t));
	const struct sim_machine *m = s->m;
	struct manager_ops ops;
	uint64_t folio = m->thp_bytes && m->thp_bytes <= s->range_bytes ? m->thp_bytes :
									    m->base_page_bytes;
	int r;

	if (!t)
		return -ENOMEM;
	t->base.ops = &ts_sampler_ops;
	/* As the source it stands for: DAMON's, or the BPF event sampler's. */
	t->base.crowded_hot = s->view_newest ? 0 : POLICY_CROWDED_BACKGROUND;
	t->s = s;
	t->kernel = kernel;
	t->fast = sim_machine_fast_node(m);
	t->per_range_ns = (s->range_bytes / folio) * m->mig[kernel].folio_ns +
			  (uint64_t)((double)s->range_bytes / m->mig[kernel].copy_gbps);
	t->max_moves = s->nr_ranges;
	t->pids = calloc(s->nr_tenants, sizeof(*t->pids));
	t->node = calloc(s->nr_ranges, 1);
	t->tenant_fast = calloc(s->nr_tenants, sizeof(*t->tenant_fast));
	t->tenant_node = calloc((size_t)s->nr_tenants * m->nr_nodes, sizeof(*t->tenant_node));
	t->tenant_cg = calloc(s->nr_tenants, sizeof(*t->tenant_cg));
	t->moves = calloc(s->nr_ranges, sizeof(*t->moves));
	t->view = calloc(s->nr_ranges, sizeof(*t->view));
	if (!t->pids || !t->node || !t->tenant_fast || !t->tenant_node || !t->tenant_cg ||
	    !t->moves || !t->view) {
		tierd_destroy(t);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->nr_tenants; i++)
		t->pids[i] = SIM_PID0 + (pid_t)i;
	snprintf(t->dir, sizeof(t->dir), "/tmp/tierd-sim.XXXXXX");
	if (!mkdtemp(t->dir)) {
		r = -errno;
		t->dir[0] = '\0';
		tierd_destroy(t);
		return r;
	}
	snprintf(t->root, sizeof(t->root), "%s/root", t->dir);
	/* The tree's MemFree is rewritten from the placement (where the
	 * engine started the footprint, then its moves) before each tick. */
	r = mkdir(t->root, 0755) < 0 ? -errno : 0;
	r = r ?: make_tree(t);
	r = r ?: put_thp(t);
	r = r ?: make_cgroups(t);
	r = r ?: make_conf(t);
	if (r < 0) {
		tierd_destroy(t);
		return r;
	}
	t->d.root = t->root;
	snprintf(t->d.config_path, sizeof(t->d.config_path), "%s", t->conf);
	snprintf(t->d.runtime_dir, sizeof(t->d.runtime_dir), "%s", t->dir);
	t->d.no_knobs = true;
	t->d.geom_ops = &ts_geom_ops;
	t->d.geom_ctx = t;
	ops = (struct manager_ops){
		.sampler = &t->base,
		.pids = t->pids,
		.nr_pids = s->nr_tenants,
		.mig_ops = &ts_mig_ops,
		.mig_ctx = t,
		.thp_ops = &ts_thp_ops,
		.thp_ctx = t,
	};
	/* tierd's start-up lines once per run are noise in a report: its
	 * warnings and errors only. */
	log_set_max_level(getenv("SIMDBG") ? LOG_DEBUG : LOG_WARNING);
	r = tierd_init(&t->d);
	if (r == 0) {
		t->started = true;
		r = manager_init(&t->mgr, &t->d, &ops);
	}
	if (r < 0) {
		tierd_destroy(t);
		return r;
	}
	*ret = t;
	return 0;
}

static int vanilla_init(void **ret, const struct sim_setup *s)
{
	return tierd_init_kernel(ret, s, SIM_KERNEL_VANILLA);
}

static int patched_init(void **ret, const struct sim_setup *s)
{
	return tierd_init_kernel(ret, s, SIM_KERNEL_PATCHED);
}

/*
 * The interval's view into what the next drain takes: counts add up
 * (saturating), a DAMON aggregation replaces the one before it; an interval
 * in which no aggregation ended shows nothing and leaves it.
 */
static void view_add(struct tsim *t, const uint32_t *seen, const uint32_t *idle_ms)
{
	const struct sim_setup *s = t->s;
	uint32_t r;

	if (!seen)
		return;
	for (r = 0; r < s->nr_ranges && !seen[r]; r++)
		;
	if (r == s->nr_ranges)
		return;
	if (s->source_idle)
		t->idle_view = idle_ms;
	if (s->view_newest) {
		memcpy(t->view, seen, s->nr_ranges * sizeof(*t->view));
	} else {
		for (; r < s->nr_ranges; r++)
			t->view[r] = seen[r] > UINT32_MAX - t->view[r] ? UINT32_MAX :
				     t->view[r] + seen[r];
	}
	t->fresh = true;
}

/*
 * The ticks that fall in the interval ending at v->now_ns, each at its own
 * now_ns: the config's interval, stretched by the idle pace, or at once
 * (after the previous tick's copy time) while a backlog lasts.  The
 * sampler model's view is drained by the interval's first tick.
 */
static int tierd_decide(void *state, const struct sim_view *v, struct sim_move *moves,
			uint32_t max, uint32_t *ret_n)
{
	struct tsim *t = state;
	const struct sim_setup *s = t->s;
	uint64_t start = v->now_ns - s->interval_ns;
	int ticks = 0;

	memcpy(t->node, v->node, s->nr_ranges);
	memcpy(t->used, v->used_bytes, (size_t)s->m->nr_nodes * sizeof(*t->used));
	memcpy(t->tenant_fast, v->tenant_fast_bytes, s->nr_tenants * sizeof(*t->tenant_fast));
	memset(t->tenant_node, 0, (size_t)s->nr_tenants * s->m->nr_nodes * sizeof(*t->tenant_node));
	for (uint32_t r = 0; r < s->nr_ranges; r++)
		t->tenant_node[s->range_tenant[r] * s->m->nr_nodes + t->node[r]] += s->range_bytes;
	view_add(t, v->seen, v->idle_ms);
	t->rate = v->rate;
	t->rate_span_ns += s->interval_ns;
	t->nr_moves = 0;
	t->copy_ns = 0;
	t->max_moves = max;
	if (t->next_tick_ns < start)
		t->next_tick_ns = start;
	/* Idle, the next tick past this interval's start: the source's peek
	 * at the fresh view may wake tierd now, as the loop does (once an
	 * interval: the view is the interval's). */
	if (t->next_tick_ns > start && manager_peek(&t->mgr, start + TIERD_EPOCH_NS) == 1)
		t->next_tick_ns = start;
	while (t->next_tick_ns < v->now_ns && ticks++ < MAX_TICKS_PER_INTERVAL) {
		uint64_t now = t->next_tick_ns, tnow = now + TIERD_EPOCH_NS, gap;
		int r;

		t->clock_ns = tnow;
		for (int i = 0; i < s->m->nr_nodes; i++) {
			r = put_meminfo(t, i);
			if (r < 0)
				return r;
		}
		for (uint32_t ten = 0; ten < s->nr_tenants; ten++) {
			r = t->tenant_cg[ten] ? put_numa_stat(t, ten) : 0;
			if (r < 0)
				return r;
		}
		manager_tick(&t->mgr, tnow);
		t->ticks++;
		gap = (uint64_t)manager_interval_ms(&t->mgr) * 1000000ull;
		/* A backlog's next tick starts when this one's copies end. */
		if (t->clock_ns - tnow > gap)
			gap = t->clock_ns - tnow;
		t->next_tick_ns = now + (gap ? gap : 1000000);
	}
	memcpy(moves, t->moves, t->nr_moves * sizeof(*moves));
	*ret_n = t->nr_moves;
	return 0;
}

static uint64_t tierd_ticks(void *state)
{
	return ((struct tsim *)state)->ticks;
}

const struct sim_system sim_sys_tierd_vanilla = {
	.name = "tierd-vanilla", .kernel = SIM_KERNEL_VANILLA, .tierd_source = true,
	.init = vanilla_init,
	.decide = tierd_decide, .destroy = tierd_destroy,
	.unit = "ticks", .units = tierd_ticks,
};

const struct sim_system sim_sys_tierd_patched = {
	.name = "tierd-patched", .kernel = SIM_KERNEL_PATCHED, .tierd_source = true,
	.init = patched_init,
	.decide = tierd_decide, .destroy = tierd_destroy,
	.unit = "ticks", .units = tierd_ticks,
};
