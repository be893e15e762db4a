// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon's config and topology: load at start, reload, the priority a
 * tick runs at.  The pipeline itself is the manager's (manager.c).
 */
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "conf_machine.h"
#include "daemon.h"
#include "fsutil.h"
#include "log.h"
#include "manager.h"
#include "nodes.h"
#include "notify.h"
#include "page_geom_read.h"
#include "status.h"
#include "topo_read.h"

#define NSEC_PER_SEC 1000000000ull

static void log_lines(int level, const char *text)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		int len = nl ? (int)(nl - text) : (int)strlen(text);

		log_msg(level, "%.*s", len, text);
		text += len + (nl ? 1 : 0);
	}
}

static void recompute_dry_run(struct tierd *d)
{
	if (!d->dry_run_override)
		d->dry_run = d->conf->dry_run;
}

/* conf_load_trusted()'s errors, in words. */
static const char *load_error(int r)
{
	return r == -EPERM ?
		       "must be owned by tierd's user and writable by no one else" :
		       strerror(-r);
}

/*
 * Ticks at a higher priority than tierd's rest between them.  A tick is
 * bounded work the workloads wait on: the pages it moves are theirs.  At a
 * low priority it gets a fair share at best next to busy workload threads,
 * and its copy crawls: in the lab (three workload threads on two vCPUs) a
 * 256 MiB hot set reaches DRAM 11.5 s after tierd starts at nice 0, and
 * 5.8 s after it at nice -10.  So is tierd's start: exec, the policy and
 * the stages' start (the kdamond, the BPF feed) come before the first
 * tick, and at nice 5 next to that workload they take about 0.3 s longer
 * (time to 90% of the hot set promoted: median 2.22 s started at -5,
 * 2.54 s at 5).
 *
 * So the nice tierd is started at (the unit's Nice=-5) is its ticks', and
 * between ticks, where it sleeps or answers tierctl, it rests
 * tick_nice_boost levels lower (5).  Going back up needs CAP_SYS_NICE (the
 * unit keeps it) or RLIMIT_NICE; without either tierd stays where it was
 * started.  It never runs above the priority it was given.  The nice value
 * is a thread's attribute on Linux, and setpriority(PRIO_PROCESS, 0, ...)
 * sets the calling thread's.
 */
static bool may_raise_to(int nice)
{
	struct caps_state cs;
	struct rlimit rl;

	if (caps_get(&cs) == 0 && (cs.effective & CAPS_BIT(CAP_SYS_NICE)))
		return true;
	return getrlimit(RLIMIT_NICE, &rl) == 0 &&
	       (rl.rlim_cur == RLIM_INFINITY || 20 - nice <= (long long)rl.rlim_cur);
}

/* The nice between ticks: tick_nice_boost below the start, 19 at most. */
static int rest_nice(const struct tierd *d)
{
	int rest = d->start_nice + (int)d->conf->tick_nice_boost; /* boost <= 39 */

	if (!d->may_raise)
		return d->start_nice;
	return rest > 19 ? 19 : rest;
}

void tierd_rest_priority(const struct tierd *d)
{
	int rest = rest_nice(d);

	if (rest != d->start_nice)
		setpriority(PRIO_PROCESS, 0, rest);
}

void tierd_tick_priority(struct tierd *d)
{
	int rest = rest_nice(d);

	d->stats.tick_nice = rest;
	if (rest == d->start_nice ||
	    setpriority(PRIO_PROCESS, 0, d->start_nice) == 0) {
		d->stats.tick_nice = d->start_nice;
		return;
	}
	if (errno != d->tick_nice_error)
		log_warn("Ticks run at nice %d, not %d (tick_nice_boost): %s",
			 rest, d->start_nice, strerror(errno));
	d->tick_nice_error = errno;
}

/* The kernel's page sizes, said once: they size every page tierd moves. */
static int read_geom(struct tierd *d)
{
	char base[16], pmd[16], range[16];
	int r = page_geom_read(d->root, d->geom_ops, d->geom_ctx, &d->geom);

	if (r < 0) {
		log_err("Failed to read the kernel's page sizes (sysconf, %s under %s): %s",
			PAGE_GEOM_PMD_PATH, d->root, strerror(-r));
		return r;
	}
	log_info("Pages: %s base pages, %s PMD%s, %s ranges",
		 fmt_bytes(base, sizeof(base), d->geom.base),
		 fmt_bytes(pmd, sizeof(pmd), d->geom.pmd),
		 d->geom.thp ? " THPs" : " (no THP support: base pages only)",
		 fmt_bytes(range, sizeof(range), d->geom.range));
	return 0;
}

int tierd_init(struct tierd *d)
{
	char *errors = NULL, *warnings = NULL;
	int r;

	d->conf = malloc(sizeof(*d->conf));
	if (!d->conf)
		return -ENOMEM;
	r = conf_load_trusted(d->config_path, geteuid(), d->conf, &errors);
	if (r == -ENOENT && d->config_is_default) {
		log_notice("No %s: running with the default policy",
			   d->config_path);
		conf_defaults(d->conf);
	} else if (r == -EINVAL) {
		log_lines(LOG_ERR, errors);
		free(errors);
		return r;
	} else if (r < 0) {
		log_err("Failed to read %s: %s", d->config_path, load_error(r));
		return r;
	}
	r = read_geom(d);
	if (r < 0)
		return r;
	r = topo_read(d->root, d->geom.base, &d->topo);
	if (r < 0) {
		log_err("Failed to read the NUMA topology under %s: %s",
			d->root, strerror(-r));
		return r;
	}
	d->conf_file = malloc(sizeof(*d->conf_file));
	if (!d->conf_file)
		return -ENOMEM;
	*d->conf_file = *d->conf;
	tierd_drop_missing_nodes(d->conf, &d->topo);
	r = conf_check_machine(d->conf, &d->topo, d->root, &d->control_gid,
			       &errors, &warnings);
	if (warnings)
		log_lines(LOG_WARNING, warnings);
	if (errors)
		log_lines(LOG_ERR, errors);
	free(warnings);
	free(errors);
	if (r < 0) {
		if (r == -ENOMEM)
			log_err("Failed to check %s against this machine: %s",
				d->config_path, strerror(-r));
		return r;
	}
	recompute_dry_run(d);
	errno = 0;
	d->start_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		d->start_nice = 0;
	d->may_raise = may_raise_to(d->start_nice);
	d->stats.tick_nice = d->start_nice;
	snprintf(d->stats.sampler_source, sizeof(d->stats.sampler_source),
		 "none");
	snprintf(d->stats.sampler_reason, sizeof(d->stats.sampler_reason),
		 "no hotness source started");
	tierd_log_topology(d);
	return 0;
}

/* Carry cgroup counters over to the new list, matched by path. */
static void remap_cgroups(struct tierd *d, const struct tierd_conf *next)
{
	static struct tierd_stats old;

	old = d->stats;
	memset(d->stats.cgroup, 0, sizeof(d->stats.cgroup));
	for (int n = 0; n < next->nr_cgroups; n++)
		for (int o = 0; o < d->conf->nr_cgroups; o++)
			if (!strcmp(next->cgroups[n].path,
				    d->conf->cgroups[o].path))
				d->stats.cgroup[n] = old.cgroup[o];
}

int tierd_reload(struct tierd *d, char *why, size_t why_size)
{
	struct tierd_conf *next;
	struct topology topo;
	char *errors = NULL, *warnings = NULL, status[256];
	gid_t gid;
	int r;

	why[0] = '\0';
	notify_reloading();
	next = malloc(sizeof(*next));
	if (!next) {
		r = -ENOMEM;
		snprintf(why, why_size, "out of memory\n");
		goto refuse;
	}
	r = conf_load_trusted(d->config_path, geteuid(), next, &errors);
	if (r == -ENOENT && d->config_is_default) {
		conf_defaults(next);
		r = 0;
	}
	if (r < 0) {
		if (errors)
			snprintf(why, why_size, "%s", errors);
		else
			snprintf(why, why_size, "%s: %s\n", d->config_path,
				 load_error(r));
		free(errors);
		goto refuse;
	}
	topo = d->topo;
	/* The GPU's memory kept by its driver (CDMM) is no node: the rules
	 * and tiers that name it stay inert, as at start, not refused. */
	if (!strcmp(d->stats.gpu_mode, "cdmm"))
		tierd_drop_missing_nodes(next, &topo);
	r = conf_check_machine(next, &topo, d->root, &gid, &errors, &warnings);
	if (warnings)
		log_lines(LOG_WARNING, warnings);
	free(warnings);
	if (r < 0) {
		snprintf(why, why_size, "%s", errors ? errors : "out of memory\n");
		free(errors);
		goto refuse;
	}
	if (d->mgr) {
		r = manager_reload_check(d->mgr, next, why, why_size);
		if (r < 0)
			goto refuse;
	}
	remap_cgroups(d, next);
	free(d->conf);
	d->conf = next;
	if (d->conf_file)
		*d->conf_file = *next;
	d->topo = topo;
	d->control_gid = gid;
	d->dry_run_override = false;
	recompute_dry_run(d);
	if (d->mgr)
		manager_reload_apply(d->mgr);
	d->reloads_ok_total++;
	log_info("Reloaded %s", d->config_path);
	tierd_log_topology(d);
	tierd_status_line(d, status, sizeof(status));
	notify_ready(status);
	return 0;
refuse:
	free(next);
	d->reloads_failed_total++;
	log_err("Reload refused, the previous policy stays:");
	log_lines(LOG_ERR, why);
	tierd_status_line(d, status, sizeof(status));
	notify_ready(status);
	return r;
}

void tierd_set_dry_run(struct tierd *d, bool on)
{
	d->dry_run_override = true;
	d->dry_run = on;
	log_notice("Dry run %s by tierctl", on ? "on" : "off");
}

void tierd_fini(struct tierd *d)
{
	free(d->conf);
	free(d->conf_file);
	d->conf = NULL;
	d->conf_file = NULL;
}

void tierd_status_line(const struct tierd *d, char *buf, size_t size)
{
	double up = 0, down = 0;
	char a[32], b[32];

	for (int t = 0; t < d->topo.nr_tiers; t++) {
		up += d->stats.tier[t].promote_bytes_per_s;
		down += d->stats.tier[t].demote_bytes_per_s;
	}
	fmt_bytes(a, sizeof(a), up);
	fmt_bytes(b, sizeof(b), down);
	snprintf(
		buf, size,
		"%d tier%s%s, promoting %s/s, demoting %s/s, copy threads %u%s",
		d->topo.nr_tiers, d->topo.nr_tiers == 1 ? "" : "s",
		d->topo.kernel_tiers_flat ? " (kernel tiers flat)" : "", a, b,
		d->stats.copy_threads, d->dry_run ? ", dry run" : "");
}
