// SPDX-License-Identifier: GPL-2.0-only
/*
 * Step 2, gather: the I/O half of a tick's decision.  Each configured
 * cgroup's fast-tier bytes (memory.numa_stat), the GPU placement rule of
 * each tracked process (its cgroup and comm, once per change of the
 * process list), and for core/candidates, which picks the candidates,
 * where their pages are: move_pages(2) node queries (nodes NULL) and
 * whether a 2 MiB entry is a PMD THP (sys/thp).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fsutil.h"
#include "hot_table.h"
#include "log.h"
#include "manager.h"
#include "migrate.h"
#include "stages.h"
#include "thp.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

struct gather_stage {
	struct cand_select *sel; /* core/candidates */
	struct cand_io io;
	struct policy_params pp; /* its GPU rules, for match_rules() */
	struct migrator query; /* node queries only */
	struct thp_lookup *thp; /* NULL: treat 2 MiB entries as base pages */
	uint64_t procs_generation;
	int cg_error; /* last memory.numa_stat error, logged once */
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

int gather_new(const struct tierd *d, const struct manager_ops *ops, size_t max_cand,
	       struct gather_stage **ret)
{
	struct gather_stage *m = calloc(1, sizeof(*m));
	int r;

	*ret = NULL;
	if (!m)
		return -ENOMEM;
	r = cand_select_new(max_cand, &m->sel);
	if (r < 0) {
		free(m);
		return r;
	}
	decide_params(d->conf, &m->pp);
	if (ops && ops->mig_ops)
		mig_init(&m->query, ops->mig_ops, ops->mig_ctx, true);
	else
		mig_init(&m->query, &mig_real_ops, (void *)d->root, true);
	m->thp = malloc(sizeof(*m->thp));
	if (m->thp && (strcmp(d->root, "/") || thp_open(m->thp, "/proc") < 0)) {
		free(m->thp);
		m->thp = NULL;
	}
	m->io = (struct cand_io){ .query = io_query, .is_thp = m->thp ? io_is_thp : NULL,
				  .ctx = m };
	m->procs_generation = (uint64_t)-1;
	*ret = m;
	return 0;
}

void gather_reload_apply(struct gather_stage *m, const struct tierd_conf *c)
{
	decide_params(c, &m->pp);
	m->procs_generation = (uint64_t)-1;
}

void gather_free(struct gather_stage *m)
{
	if (!m)
		return;
	if (m->thp)
		thp_close(m->thp);
	free(m->thp);
	cand_select_free(m->sel);
	free(m);
}

/* GPU rule of each tracked process, once per change of the process list. */
static void match_rules(struct gather_stage *m, struct cand_procs *p)
{
	for (int i = 0; i < p->nr; i++) {
		char cg[CONF_PATH_MAX] = "", comm[64] = "", path[64];

		p->procs[i].rule = -1;
		if (!m->pp.nr_rules)
			continue;
		cg_path_of_pid("/proc", p->procs[i].pid, cg, sizeof(cg));
		snprintf(path, sizeof(path), "proc/%d/comm", p->procs[i].pid);
		if (fs_read("/", path, comm, sizeof(comm), NULL) >= 0)
			comm[strcspn(comm, "\n")] = '\0';
		p->procs[i].rule = policy_rule_match(&m->pp, cg[0] ? cg : NULL,
						     comm[0] ? comm : NULL);
	}
	m->procs_generation = p->generation;
}

void gather_usage(struct gather_stage *m, const struct tierd_conf *c,
		  const struct topology *topo, uint64_t *fast_bytes)
{
	for (int i = 0; i < c->nr_cgroups; i++) {
		struct cg_numa_stat st;
		int r = cg_read_numa_stat(CGROUP_ROOT, c->cgroups[i].path, &st);

		if (r < 0 && r != m->cg_error)
			log_warn("Failed to read %s%s/memory.numa_stat: %s (its fast-tier cap is not enforced)",
				 CGROUP_ROOT, c->cgroups[i].path, strerror(-r));
		m->cg_error = r < 0 ? r : 0;
		fast_bytes[i] = r < 0 ? 0 : cg_fast_bytes(&st, topo);
	}
}

void gather_step(struct gather_stage *m, const struct gather_in *in, uint64_t now_ns,
		 struct cand_out *out)
{
	const struct tierd_conf *c = in->conf;
	uint64_t cg_burst[CONF_MAX_CGROUPS];
	struct cand_in ci = {
		.topo = in->topo, .hot = in->hot, .procs = in->procs, .ranges = in->ranges,
		.demote = in->demote, .cg_burst = cg_burst,
		.idle = in->idle, .idle_min_ns = m->pp.cold_age_ns,
	};

	if (c->promotion.max_rate_mb_per_s)
		ci.global_burst = decide_burst_bytes(c->promotion.max_rate_mb_per_s,
						     c->interval_ms);
	for (int i = 0; i < c->nr_cgroups; i++)
		cg_burst[i] = decide_burst_bytes(c->cgroups[i].migrate_max_mb_per_s,
						 c->interval_ms);
	if (m->procs_generation != in->procs->generation)
		match_rules(m, in->procs);
	if (m->thp)
		thp_reset(m->thp);
	cand_select_run(m->sel, &ci, &m->io, now_ns, out);
}
