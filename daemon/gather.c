// SPDX-License-Identifier: GPL-2.0-only
/*
 * Step 2, gather: the I/O half of a tick's decision.  Each configured
 * cgroup's fast-tier bytes (memory.numa_stat), the GPU placement rule of
 * each tracked process (its cgroup and comm, once per change of the
 * process list), what each rule's processes hold on its node (their
 * cgroups' memory.numa_stat, a few numa_maps a tick: core/gpu_usage.h),
 * and for core/candidates, which picks the candidates, where their pages
 * are: move_pages(2) node queries (nodes NULL) and whether a range entry
 * is a PMD THP (sys/thp).  While the tracked processes' memory all fits
 * the fast tier, their mappings (/proc/PID/maps) for the fill pass.
 *
 * The NVIDIA driver's memory mode is read at start (sys/gpu_mode): with
 * the GPU's memory driver-managed (CDMM) it is no NUMA node, and no
 * process falls under a GPU rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "fsutil.h"
#include "gpu_mode.h"
#include "gpu_usage.h"
#include "hot_table.h"
#include "log.h"
#include "manager.h"
#include "migrate.h"
#include "numa_maps.h"
#include "procmem.h"
#include "stages.h"
#include "thp.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
/* Mappings the fill pass holds (32 bytes each: 512 KiB): a hundred
 * database backends of a hundred mappings each fit. */
#define FILL_RANGES (16u << 10)
/* The mappings are read again this often while the memory fits: each
 * read lets the fill pass go through them once more (cand_idle.c), so
 * this paces its node queries of memory already on the fast tier.  After
 * a read whose pass staged nothing, twice as long, up to
 * FILL_REREAD_MAX_NS: a filled fast tier of 256 GiB is 2 Mi page queries
 * a pass, every 16 minutes instead of every minute; back to
 * FILL_REREAD_NS once a pass finds memory to fill (the kernel demoted
 * some, a process grew on the slow tier) or the process list changes. */
#define FILL_REREAD_NS (60 * 1000000000ull)
#define FILL_REREAD_MAX_NS (16 * FILL_REREAD_NS)

struct gather_stage {
	struct page_geom geom; /* the kernel's */
	struct cand_select *sel; /* core/candidates */
	struct cand_io io;
	struct policy_params pp; /* its GPU rules, for match_rules() */
	struct migrator query; /* node queries only */
	struct thp_lookup *thp; /* NULL: treat PMD entries as base pages */
	uint64_t procs_generation;
	int cg_error; /* last memory.numa_stat error, logged once */
	const char *root; /* "/" or a fixture tree (--root, tierd-sim) */
	char proc_root[CONF_PATH_MAX], cgroup_root[CONF_PATH_MAX]; /* below it */
	enum gpu_mode gpu_mode; /* the NVIDIA driver's, read at start */
	int gpu_read_error; /* last GPU usage read error, logged once */
	struct tierd_stats *st; /* gpu_mode, gpu_rule_used */
	struct gpu_usage usage; /* each GPU rule's bytes on its node */
	bool by_cgroup[CAND_MAX_PROCS]; /* for gpu_usage_sync() */
	/* The fill pass's mappings, when they were read (0: not since the
	 * memory last fitted), of which process list, the last error logged. */
	struct idle_set fill;
	struct idle_range *fill_mem;
	uint64_t fill_read_ns, fill_generation;
	uint64_t fill_every_ns; /* the next read's wait if its pass finds nothing */
	bool fill_found; /* a fill candidate staged since the last read: wait FILL_REREAD_NS */
	int fill_error;
};

static int io_query(void *ctx, pid_t pid, size_t count, void **addrs, int *status)
{
	struct gather_stage *m = ctx;

	return mig_query(&m->query, pid, count, addrs, status);
}

static int io_is_thp(void *ctx, pid_t pid, uint64_t addr)
{
	struct gather_stage *m = ctx;

	return thp_is_huge(m->thp, pid, addr);
}

/*
 * The THP lookup on the real /proc (none under a fixture root, unless the
 * caller's ops stand for the kernel).  Without one, a THP is moved as its
 * base pages' addresses: said once, here, and visible in
 * tierd_move_pages_thps_total staying 0.
 */
static struct thp_lookup *open_thp(const struct tierd *d, const struct manager_ops *ops,
				   const char *proc_root)
{
	bool fake = ops && ops->thp_ops;
	struct thp_lookup *l;

	/* A kernel without PMD THPs has none to look up (the start-up line
	 * of the page sizes says so); where the PMD is larger than the range,
	 * a range is never one THP (page_geom_range_thp()). */
	if (!page_geom_range_thp(&d->geom) || (strcmp(d->root, "/") && !fake))
		return NULL;
	l = malloc(sizeof(*l));
	if (!l)
		return NULL;
	if ((fake ? thp_open_ops(l, proc_root, &d->geom, ops->thp_ops, ops->thp_ctx) :
		    thp_open(l, "/proc", &d->geom)) < 0) {
		log_notice("No THP lookups (%s): each THP is moved as %llu addresses", l->why,
			   (unsigned long long)page_geom_range_pages(&d->geom));
		free(l);
		return NULL;
	}
	log_info("THP lookups: %s; each PMD THP is moved as one address",
		 thp_method_name(l->method));
	return l;
}

/* Each rule's usage, not read yet until the first tick reads it. */
static void init_usage(struct gather_stage *m)
{
	gpu_usage_init(&m->usage, &m->pp);
	for (int r = 0; r < POLICY_MAX_RULES; r++)
		m->st->gpu_rule_used[r] = GPU_USAGE_UNKNOWN;
}

/* The driver's memory mode, at start: journal and status. */
static void read_gpu_mode(struct gather_stage *m, const struct tierd *d)
{
	struct gpu_mode_info gm;
	int r = gpu_mode_read(d->root, &gm);

	if (r < 0) {
		log_warn("Failed to read the NVIDIA driver's proc/driver/nvidia/params under %s: %s (its GPU memory mode is unknown)",
			 d->root, strerror(-r));
		snprintf(gm.why, sizeof(gm.why), "unreadable: %s", strerror(-r));
		gm.mode = GPU_MODE_NONE;
	} else if (gm.mode == GPU_MODE_CDMM) {
		log_notice("NVIDIA driver in CDMM mode (%s): the GPU's memory is driver-managed, not a NUMA node%s",
			   gm.why, d->conf->nr_gpu_nodes ? "; the gpu_nodes rules stay inert" : "");
	} else if (gm.mode == GPU_MODE_NUMA) {
		log_info("NVIDIA driver in NUMA mode (%s): the GPU's memory is a NUMA node", gm.why);
	}
	m->gpu_mode = gm.mode;
	snprintf(m->st->gpu_mode, sizeof(m->st->gpu_mode), "%s", gpu_mode_name(gm.mode));
	snprintf(m->st->gpu_mode_why, sizeof(m->st->gpu_mode_why), "%s", gm.why);
}

int gather_new(const struct tierd *d, const struct manager_ops *ops, size_t max_cand,
	       struct tierd_stats *st, struct gather_stage **ret)
{
	struct gather_stage *m = calloc(1, sizeof(*m));
	int r;

	*ret = NULL;
	if (!m)
		return -ENOMEM;
	m->root = d->root;
	r = fs_path(m->proc_root, sizeof(m->proc_root), d->root, "proc");
	r = r ?: fs_path(m->cgroup_root, sizeof(m->cgroup_root), d->root, CGROUP_ROOT);
	r = r ?: cand_select_new(max_cand, &d->geom, &m->sel);
	m->fill_mem = calloc(FILL_RANGES, sizeof(*m->fill_mem));
	if (!r && !m->fill_mem)
		r = -ENOMEM;
	if (r < 0) {
		cand_select_free(m->sel);
		free(m->fill_mem);
		free(m);
		return r;
	}
	idle_init(&m->fill, m->fill_mem, FILL_RANGES);
	m->geom = d->geom;
	decide_params(d->conf, &m->geom, &m->pp);
	m->st = st;
	init_usage(m);
	read_gpu_mode(m, d);
	if (ops && ops->mig_ops)
		mig_init(&m->query, ops->mig_ops, ops->mig_ctx, true, d->geom.base);
	else
		mig_init(&m->query, &mig_real_ops, (void *)d->root, true, d->geom.base);
	m->thp = open_thp(d, ops, m->proc_root);
	m->io = (struct cand_io){ .query = io_query, .is_thp = m->thp ? io_is_thp : NULL,
				  .ctx = m };
	m->procs_generation = (uint64_t)-1;
	*ret = m;
	return 0;
}

void gather_reload_apply(struct gather_stage *m, const struct tierd_conf *c)
{
	decide_params(c, &m->geom, &m->pp);
	init_usage(m);
	m->procs_generation = (uint64_t)-1;
}

struct gpu_usage *gather_gpu_usage(struct gather_stage *m)
{
	return &m->usage;
}

void gather_free(struct gather_stage *m)
{
	if (!m)
		return;
	if (m->thp)
		thp_close(m->thp);
	free(m->thp);
	cand_select_free(m->sel);
	mig_fini(&m->query);
	free(m->fill_mem);
	free(m);
}

/*
 * The fill pass's mappings: read when the memory comes to fit, when the
 * process list changes, and every fill_every_ns while it fits; NULL
 * while it does not.  A process gone meanwhile is left out, and so is one
 * whose maps cannot be read (the first such error logged, until the
 * reads succeed again); a full set keeps the mappings read before.
 */
static const struct idle_set *fill_maps(struct gather_stage *m, const struct cand_procs *procs,
					bool fits, uint64_t now_ns)
{
	int err = 0;

	if (!fits) {
		m->fill_read_ns = 0;
		return NULL;
	}
	if (m->fill_read_ns && m->fill_generation == procs->generation) {
		uint64_t wait = m->fill_found ? FILL_REREAD_NS : m->fill_every_ns;

		if (now_ns - m->fill_read_ns < wait)
			return &m->fill;
		m->fill_every_ns = wait < FILL_REREAD_MAX_NS / 2 ? 2 * wait : FILL_REREAD_MAX_NS;
	} else {
		m->fill_every_ns = 2 * FILL_REREAD_NS;
	}
	m->fill_found = false;
	idle_begin(&m->fill);
	for (int i = 0; i < procs->nr && err != -ENOSPC; i++) {
		int r = proc_data_maps(m->proc_root, procs->procs[i].pid, &m->fill);

		if (r >= 0 || r == -ESRCH || err)
			continue;
		err = r;
		if (err != m->fill_error)
			log_warn("Failed to read %s/%d/maps: %s (%s)", m->proc_root,
				 (int)procs->procs[i].pid, strerror(-err),
				 err == -ENOSPC ? "the fill pass holds the mappings read before" :
						  "its memory the sampler did not name is not promoted");
	}
	m->fill_error = err;
	m->fill_read_ns = now_ns ? now_ns : 1;
	m->fill_generation = procs->generation;
	return &m->fill;
}

/* GPU rule of each tracked process, once per change of the process list;
 * none in CDMM mode, where no GPU node holds pages. */
static void match_rules(struct gather_stage *m, struct cand_procs *p)
{
	for (int i = 0; i < p->nr; i++) {
		char cg[CONF_PATH_MAX] = "", comm[64] = "", path[64];

		p->procs[i].rule = -1;
		m->by_cgroup[i] = false;
		if (!m->pp.nr_rules || m->gpu_mode == GPU_MODE_CDMM)
			continue;
		cg_path_of_pid(m->proc_root, p->procs[i].pid, cg, sizeof(cg));
		snprintf(path, sizeof(path), "proc/%d/comm", p->procs[i].pid);
		if (fs_read(m->root, path, comm, sizeof(comm), NULL) >= 0)
			comm[strcspn(comm, "\n")] = '\0';
		p->procs[i].rule = policy_rule_match(&m->pp, cg[0] ? cg : NULL,
						     comm[0] ? comm : NULL);
		m->by_cgroup[i] = p->procs[i].rule >= 0 &&
				  policy_rule_in_cgroups(&m->pp, p->procs[i].rule, cg);
	}
	gpu_usage_sync(&m->usage, p, m->by_cgroup);
	m->procs_generation = p->generation;
}

static void gpu_read_failed(struct gather_stage *m, const char *what, int r)
{
	if (r != m->gpu_read_error)
		log_warn("Failed to read %s: %s (its GPU rule holds its pages where they are until it is read)",
			 what, strerror(-r));
	m->gpu_read_error = r;
}

/*
 * What each GPU rule's processes hold on its node (core/gpu_usage.h): the
 * cgroups it names, every tick, and the numa_maps of a few of its other
 * processes.  A cgroup that does not exist holds nothing.
 */
static void read_gpu_usage(struct gather_stage *m, uint64_t now_ns)
{
	pid_t due[GPU_USAGE_READS_PER_TICK];
	size_t n;

	if (m->gpu_mode == GPU_MODE_CDMM)
		return; /* the rules are inert */
	for (int r = 0; r < m->pp.nr_rules; r++) {
		const struct policy_gpu_rule *rule = &m->pp.rules[r];
		uint64_t sum = 0;
		bool ok = true;

		if (!m->usage.has_cgroups[r])
			continue;
		for (int a = 0; a < rule->nr_allow; a++) {
			struct cg_numa_stat st;
			int e;

			if (!policy_rule_cgroup_top(&m->pp, r, a))
				continue;
			e = cg_read_numa_stat(m->cgroup_root, rule->allow[a], &st);
			if (e == 0)
				sum += cg_node_bytes(&st, rule->node);
			else if (e != -ENOENT) {
				char what[CONF_PATH_MAX + 64];

				snprintf(what, sizeof(what), "%s%s/memory.numa_stat", m->cgroup_root,
					 rule->allow[a]);
				gpu_read_failed(m, what, e);
				ok = false;
			}
		}
		gpu_usage_read_cgroups(&m->usage, r, ok, sum);
	}
	n = gpu_usage_due(&m->usage, now_ns, due, GPU_USAGE_READS_PER_TICK);
	for (size_t i = 0; i < n; i++) {
		int node = gpu_usage_node_of(&m->usage, due[i]);
		uint64_t bytes = 0, t0;
		char what[64];
		int e;

		if (node < 0)
			continue;
		t0 = m->query.ops->now_ns(m->query.ctx);
		e = numa_maps_node_bytes(m->proc_root, due[i], node, &bytes);
		if (e < 0 && e != -ESRCH) {
			snprintf(what, sizeof(what), "/proc/%d/numa_maps", (int)due[i]);
			gpu_read_failed(m, what, e);
			continue;
		}
		gpu_usage_read_proc(&m->usage, due[i], bytes, now_ns,
				    m->query.ops->now_ns(m->query.ctx) - t0);
	}
}

void gather_usage(struct gather_stage *m, const struct tierd_conf *c,
		  const struct topology *topo, uint64_t *fast_bytes)
{
	for (int i = 0; i < c->nr_cgroups; i++) {
		struct cg_numa_stat st;
		int r = cg_read_numa_stat(m->cgroup_root, c->cgroups[i].path, &st);

		if (r < 0 && r != m->cg_error)
			log_warn("Failed to read %s%s/memory.numa_stat: %s (its fast-tier cap is not enforced)",
				 m->cgroup_root, c->cgroups[i].path, strerror(-r));
		m->cg_error = r < 0 ? r : 0;
		fast_bytes[i] = r < 0 ? 0 : cg_fast_bytes(&st, topo);
	}
}

void gather_step(struct gather_stage *m, const struct gather_in *in, uint64_t now_ns,
		 struct cand_out *out)
{
	const struct tierd_conf *c = in->conf;
	uint64_t cg_burst[CONF_MAX_CGROUPS];
	bool cg_full[CONF_MAX_CGROUPS], any_full = false;
	bool cg_capped[CONF_MAX_CGROUPS], any_capped = false;
	struct cand_in ci = {
		.topo = in->topo, .hot = in->hot, .procs = in->procs, .ranges = in->ranges,
		.demote = in->demote, .cg_burst = cg_burst, .cg_wait = in->cg_wait,
		.idle = in->idle, .idle_min_ns = m->pp.cold_age_ns,
		.resume_staged = in->cut,
	};

	if (c->promotion.max_rate_mb_per_s)
		ci.global_burst = decide_burst_bytes(c->promotion.max_rate_mb_per_s,
						     c->interval_ms, &m->geom);
	for (int i = 0; i < c->nr_cgroups; i++) {
		uint64_t max = c->cgroups[i].fast_tier_max_bytes;

		cg_burst[i] = decide_burst_bytes(c->cgroups[i].migrate_max_mb_per_s,
						 c->interval_ms, &m->geom);
		cg_full[i] = max && in->fast_bytes && in->fast_bytes[i] >= max;
		any_full |= cg_full[i];
		cg_capped[i] = max;
		any_capped |= cg_capped[i];
	}
	/* None full (capped): the selection looks no process up for it. */
	ci.cg_full = any_full ? cg_full : NULL;
	ci.cg_capped = any_capped ? cg_capped : NULL;
	if (m->procs_generation != in->procs->generation)
		match_rules(m, in->procs);
	read_gpu_usage(m, now_ns);
	if (m->thp)
		thp_reset(m->thp);
	ci.fill = fill_maps(m, in->procs, policy_fills(&m->pp, in->topo, in->footprint_bytes),
			    now_ns);
	cand_select_run(m->sel, &ci, &m->io, now_ns, out);
	for (size_t i = 0; ci.fill && !m->fill_found && i < out->nr_cand; i++)
		m->fill_found = out->cand[i].flags & POLICY_F_FILL;
	gpu_usage_totals(&m->usage, out->rule_used);
	memcpy(m->st->gpu_rule_used, out->rule_used, sizeof(m->st->gpu_rule_used));
}
