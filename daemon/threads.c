// SPDX-License-Identifier: GPL-2.0-only
/*
 * The copy-thread step: the kernel knobs tierd owns (sys/knobs.c) and the
 * copy-thread controller (core/copythreads.c).
 *
 * start: recover knobs a crashed run left behind; detect NUMA balancing and
 *        reclaim-time demotion and, with kernel.numa_balancing: takeover,
 *        turn NUMA balancing off (restored on exit); say once when the
 *        kernel lacks the copy knobs.
 * step:  PSI cpu pressure and the idle CPUs of the nodes that have CPUs in,
 *        migration throughput since the last tick (migrate_bytes_total and
 *        migrate_ns_total, which the account step adds to) in; the
 *        controller's thread count out to vm.migrate_copy_*; an
 *        administrator's change to one of them makes tierd leave them alone.
 * restore: every knob still holding tierd's value gets its original.
 * No knob is written under --no-knobs or in a dry run.
 * The kernel takes 1..nr_cpu_ids copy threads: read once at start from
 * cpu/possible, it bounds every decision (core/copythreads.h), and a
 * copy_threads.max above it is said at start and on a reload that changes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "copythreads.h"
#include "knobs.h"
#include "load.h"
#include "log.h"
#include "stages.h"

struct threads {
	struct knobs ks;
	struct ct_params params;
	struct ct_state ct;
	struct load_cpu_times times[2];
	int cur;		/* times[cur] is the latest snapshot */
	bool have_times;
	bool active;		/* the controller writes the knobs */
	bool said_off;
	unsigned int said_min, said_max;	/* the bounds said to be above it; 0 none */
	uint64_t cpu_mask[LOAD_MASK_WORDS];
	unsigned int nr_cpus;
	uint64_t last_bytes, last_ns;
	int last_error;
};

/* "" for the real root, so paths are "/proc/...", not "//proc/...". */
static const char *knob_root(const struct tierd *d)
{
	return strcmp(d->root, "/") == 0 ? "" : d->root;
}

static void ct_params_from_conf(const struct tierd_conf *c, unsigned int cpu_limit,
				struct ct_params *p)
{
	ct_params_default(p);
	p->mode = c->copy_threads.mode == CONF_COPY_FIXED ? CT_FIXED :
		  c->copy_threads.mode == CONF_COPY_OFF	  ? CT_OFF :
							    CT_AUTO;
	p->min_threads = c->copy_threads.min;
	p->max_threads = c->copy_threads.max;
	p->busy_cpu_pct = c->copy_threads.busy_cpu_pct;
	p->cpu_limit = cpu_limit;
}

/* The kernel's nr_cpu_ids, the most vm.migrate_copy_threads takes; 0 when
 * unknown (the kernel then refuses what is too many, and that is logged). */
static unsigned int cpu_limit_read(const struct tierd *d)
{
	unsigned int nr;
	long n;
	int r = load_possible_cpus(knob_root(d), &nr);

	if (r == 0)
		return nr;
	if (r != -ENOENT) {
		log_warn("Failed to read %s/sys/devices/system/cpu/possible: %s; copy threads are not bounded by the CPU count",
			 knob_root(d), strerror(-r));
		return 0;
	}
	n = sysconf(_SC_NPROCESSORS_CONF);
	if (n <= 0) {
		log_warn("No %s/sys/devices/system/cpu/possible and no CPU count from sysconf(): copy threads are not bounded by the CPU count",
			 knob_root(d));
		return 0;
	}
	log_notice("No %s/sys/devices/system/cpu/possible: copy threads are bounded by the %ld CPUs sysconf() counts",
		   knob_root(d), n);
	return (unsigned int)n;
}

/* Said when the controller runs with bounds above the CPU limit: at start,
 * and again on a reload only when the bounds change. */
static void say_cpu_limit(struct threads *t)
{
	const struct ct_params *p = &t->params;

	if (!t->active || !p->cpu_limit || p->max_threads <= p->cpu_limit) {
		t->said_min = t->said_max = 0;
		return;
	}
	if (p->min_threads == t->said_min && p->max_threads == t->said_max)
		return;
	t->said_min = p->min_threads;
	t->said_max = p->max_threads;
	if (p->min_threads > p->cpu_limit)
		log_notice("copy_threads.min %u and max %u are above this machine's %u CPUs: at most %u copy threads",
			   p->min_threads, p->max_threads, p->cpu_limit, ct_max_threads(p));
	else
		log_notice("copy_threads.max %u is above this machine's %u CPUs: at most %u copy threads",
			   p->max_threads, p->cpu_limit, ct_max_threads(p));
}

/* The CPUs of every node that has them: where copy workers can run. */
static void cpus_of_topology(const struct tierd *d, struct threads *t)
{
	uint64_t m[LOAD_MASK_WORDS];

	memset(t->cpu_mask, 0, sizeof(t->cpu_mask));
	t->nr_cpus = 0;
	for (int i = 0; i < d->topo.nr_nodes; i++) {
		int n = load_node_cpus(knob_root(d), d->topo.nodes[i].id, m);

		if (n <= 0)
			continue;
		for (int w = 0; w < LOAD_MASK_WORDS; w++)
			t->cpu_mask[w] |= m[w];
		t->nr_cpus += n;
	}
}

/*
 * An administrator's write to a knob tierd set makes it theirs: said once,
 * never written again, not restored at exit (sys/knobs.c), and listed in
 * the status.  NUMA balancing is checked on every tick, not only while the
 * copy-thread controller runs.
 */
static void check_foreign(struct threads *t, struct tierd_stats *st)
{
	char *buf = st->knobs_foreign;
	size_t size = sizeof(st->knobs_foreign);

	if (knobs_check(&t->ks, KNOB_NUMA_BALANCING) == 1) {
		long v = -1;

		knobs_get(&t->ks, KNOB_NUMA_BALANCING, &v);
		log_notice("kernel.numa_balancing was changed by someone else (now %ld): tierd leaves it alone and will not restore it",
			   v);
	}
	if (t->active)
		for (int k = KNOB_COPY_MT; k <= KNOB_COPY_PULL; k++)
			if (knobs_check(&t->ks, k) == 1)
				log_notice("%s was changed by someone else: tierd leaves the copy knobs alone",
					   knob_name(k));
	buf[0] = '\0';
	for (int k = 0; k < KNOB_NR; k++)
		if (t->ks.k[k].foreign)
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
				 buf[0] ? "," : "", knob_name(k));
}

static int apply_decision(struct threads *t, struct tierd_stats *st, const struct ct_decision *dec)
{
	int r;

	if (!dec->apply)
		return 0;
	r = knobs_apply_copy(&t->ks, dec->mt, dec->threads, dec->pull);
	if (r == -EBUSY) {
		t->active = false;
		st->copy_threads = st->copy_threads_max = 0;
		check_foreign(t, st);
		return 0;
	}
	if (r < 0)
		return r;
	st->copy_threads = dec->threads;
	st->copy_threads_max = ct_max_threads(&t->params);
	if (dec->changed)
		log_debug("Copy threads: %u (%s)", dec->threads, ct_why_name(dec->why));
	return 0;
}

/*
 * Threads from the start: the first tick's migration, which moves the most
 * after a start, runs before this step's first tick, and a controller that
 * waited for two CPU-time snapshots would leave that migration to the
 * kernel's default (no threads).  The snapshot taken here is the first one.
 */
static int threads_first(const struct tierd *d, struct threads *t, struct tierd_stats *st)
{
	struct ct_load l = { 0 };
	struct ct_decision dec;
	int r;

	r = load_read_cpu_times(knob_root(d), &t->times[t->cur]);
	if (r < 0)
		return r;
	t->have_times = true;
	l.dst_cpus = l.dst_idle = t->nr_cpus;
	ct_start(&t->ct, &t->params, &l, &dec);
	return apply_decision(t, st, &dec);
}

int threads_new(const struct tierd *d, struct tierd_stats *st, struct threads **ret)
{
	struct threads *t = calloc(1, sizeof(*t));
	struct knob_coexist_status cs;
	unsigned int recovered = 0;
	long v;
	int r;

	*ret = NULL;
	if (!t)
		return -ENOMEM;
	r = knobs_open(&t->ks, &knob_file_ops, NULL, knob_root(d), d->runtime_dir);
	if (r < 0) {
		free(t);
		return r;
	}
	t->ks.dry_run = !tierd_knobs_allowed(d);
	if (!t->ks.dry_run) {
		r = knobs_recover(&t->ks, &recovered);
		if (r < 0)
			log_warn("Failed to restore kernel knobs from %s/knobs.state: %s",
				 d->runtime_dir, strerror(-r));
		else if (recovered)
			log_notice("Restored %u kernel knob(s) a previous run left changed",
				   recovered);
	}

	r = knobs_coexist(&t->ks, d->conf->kernel.numa_balancing == CONF_NUMAB_TAKEOVER ?
					  KNOB_TAKEOVER : KNOB_COEXIST, &cs);
	if (r < 0)
		log_warn("Failed to turn NUMA balancing off: %s", strerror(-r));
	log_info("Kernel placement: %s; reclaim-time demotion %s", cs.why,
		 cs.demotion_enabled < 0 ? "absent" : cs.demotion_enabled ? "on" : "off");

	st->copy_threads_cpus = cpu_limit_read(d);
	ct_params_from_conf(d->conf, st->copy_threads_cpus, &t->params);
	if (knobs_get(&t->ks, KNOB_COPY_THREADS, &v) == 0 && v > 0)
		t->params.start_threads = (unsigned int)v;
	r = ct_init(&t->ct, &t->params);
	if (r < 0) {
		free(t);
		return r;
	}
	cpus_of_topology(d, t);
	t->active = knobs_have_copy(&t->ks) && t->params.mode != CT_OFF;
	if (!knobs_have_copy(&t->ks))
		log_notice("This kernel has no vm.migrate_copy_* knobs: copy-thread controller off");
	say_cpu_limit(t);
	t->last_bytes = st->migrate_bytes_total;
	t->last_ns = st->migrate_ns_total;
	if (t->active) {
		r = threads_first(d, t, st);
		if (r < 0)
			log_warn("Failed to set the copy threads at start: %s (the first tick tries again)",
				 strerror(-r));
	}
	*ret = t;
	return 0;
}

int threads_step(struct threads *t, const struct tierd *d, struct tierd_stats *st,
		 uint64_t now_ns)
{
	struct load_cpu_times *prev, *cur;
	struct ct_load l = { 0 };
	struct ct_sample sm;
	struct ct_decision dec;
	int r;

	check_foreign(t, st);
	if (!t->active) {
		st->copy_threads = st->copy_threads_max = 0;
		return 0;
	}
	t->cur ^= 1;
	cur = &t->times[t->cur];
	prev = &t->times[t->cur ^ 1];
	r = load_read_cpu_times(knob_root(d), cur);
	if (r < 0)
		return r;
	if (!t->have_times) {
		t->have_times = true;
		return 0;
	}
	if (load_read_psi_cpu(knob_root(d), &l.psi_some_avg10_x100) < 0)
		l.psi_some_avg10_x100 = 0;
	/* Promotions come from CPU-less nodes to nodes with CPUs: those CPUs
	 * pull.  Where no node has CPUs listed, the controller stays low. */
	l.dst_cpus = t->nr_cpus;
	l.dst_idle = load_idle_cpus(prev, cur, t->cpu_mask, t->params.busy_cpu_pct);
	sm.bytes = st->migrate_bytes_total - t->last_bytes;
	sm.ns = st->migrate_ns_total - t->last_ns;
	t->last_bytes = st->migrate_bytes_total;
	t->last_ns = st->migrate_ns_total;
	ct_step(&t->ct, &t->params, &l, &sm, now_ns, &dec);
	return apply_decision(t, st, &dec);
}

void threads_reload_apply(struct threads *t, const struct tierd *d)
{
	struct ct_params p;

	ct_params_from_conf(d->conf, t->params.cpu_limit, &p);
	p.start_threads = t->ct.threads;
	if (ct_init(&t->ct, &p) == 0)
		t->params = p;
	t->ks.dry_run = !tierd_knobs_allowed(d);
	t->active = knobs_have_copy(&t->ks) && t->params.mode != CT_OFF;
	say_cpu_limit(t);
	cpus_of_topology(d, t);
}

void threads_restore_knobs(struct threads *t, const char *runtime_dir)
{
	int r;

	if (!t)
		return;
	r = knobs_restore(&t->ks);

	if (r < 0)
		log_warn("Failed to restore kernel knobs: %s (left in %s/knobs.state for the next start)",
			 strerror(-r), runtime_dir);
	else if (r > 0)
		log_info("Restored %d kernel knob(s)", r);
}

void threads_free(struct threads *t)
{
	free(t);
}
