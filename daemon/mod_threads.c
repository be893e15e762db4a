// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipeline step 4, threads: the kernel knobs tierd owns while it runs.
 *
 *  - kernel.numa_balancing: with kernel.numa_balancing: takeover, turned
 *    off (mode 1 and 2 both move the pages tierd manages) and restored on
 *    exit; with coexist, left alone (sys/knobs knobs_coexist);
 *  - the patched kernel's vm.migrate_copy_{mt,threads,pull}: the
 *    copy-thread controller (core/copythreads) picks them each tick from
 *    the migrate step's measured throughput and the CPUs' load (sys/load).
 *
 * Nothing is written unless tierd_knobs_allowed(d); when it stops being
 * allowed (tierctl dry-run on), every knob goes back at once.  On a vanilla
 * kernel the controller says so once and does nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "copythreads.h"
#include "daemon.h"
#include "knobs.h"
#include "load.h"
#include "log.h"
#include "pipeline.h"

struct mod_threads {
	struct knobs ks;
	bool open;
	bool said_vanilla;
	int last_error;
	struct ct_params cp;
	struct ct_state cs;
	struct load_cpu_times *prev, *cur;
	bool have_prev;
	uint64_t src_mask[LOAD_MASK_WORDS], dst_mask[LOAD_MASK_WORDS],
		all_mask[LOAD_MASK_WORDS];
	unsigned int src_cpus, dst_cpus;
	uint64_t moved_bytes, move_ns; /* pipeline totals at the last step */
};

static const char *sysroot(const struct tierd *d)
{
	return strcmp(d->root, "/") ? d->root : "";
}

static void ct_from_conf(const struct tierd_conf *c, struct ct_params *cp)
{
	static const enum ct_mode modes[] = {
		[CONF_COPY_AUTO] = CT_AUTO,
		[CONF_COPY_FIXED] = CT_FIXED,
		[CONF_COPY_OFF] = CT_OFF,
	};

	ct_params_default(cp);
	cp->mode = modes[c->copy_threads.mode];
	cp->min_threads = c->copy_threads.min;
	cp->max_threads = c->copy_threads.max;
	cp->busy_cpu_pct = c->copy_threads.busy_cpu_pct;
}

/* CPUs of the slow tiers (source of promotions) and of the fast tier. */
static void cpu_masks(struct tierd *d, struct mod_threads *m)
{
	memset(m->src_mask, 0, sizeof(m->src_mask));
	memset(m->dst_mask, 0, sizeof(m->dst_mask));
	memset(m->all_mask, 0, sizeof(m->all_mask));
	m->src_cpus = m->dst_cpus = 0;
	for (int i = 0; i < d->topo.nr_nodes; i++) {
		uint64_t mask[LOAD_MASK_WORDS] = { 0 };
		int n = load_node_cpus(sysroot(d), d->topo.nodes[i].id, mask);

		if (n <= 0)
			continue;
		for (int w = 0; w < LOAD_MASK_WORDS; w++) {
			m->all_mask[w] |= mask[w];
			if (d->topo.nodes[i].tier == 0)
				m->dst_mask[w] |= mask[w];
			else
				m->src_mask[w] |= mask[w];
		}
		if (d->topo.nodes[i].tier == 0)
			m->dst_cpus += n;
		else
			m->src_cpus += n;
	}
}

static int knobs_take(struct tierd *d, struct mod_threads *m)
{
	struct knob_coexist_status cs;
	unsigned int recovered = 0;
	long v;
	int r;

	/* knobs.state, the crash-recovery record, lives there. */
	if (mkdir(d->runtime_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	r = knobs_open(&m->ks, &knob_file_ops, NULL, sysroot(d), d->runtime_dir,
		       &recovered);
	if (r < 0) {
		log_err("Failed to recover the kernel knobs a previous tierd changed (%s/knobs.state): %s",
			d->runtime_dir, strerror(-r));
		return r;
	}
	m->open = true;
	if (recovered)
		log_notice("Restored %u kernel knob(s) a previous tierd left changed",
			   recovered);
	r = knobs_coexist(&m->ks,
			  d->conf->kernel.numa_balancing == CONF_NUMAB_TAKEOVER ?
				  KNOB_TAKEOVER :
				  KNOB_COEXIST,
			  &cs);
	if (r < 0)
		log_warn("Failed to turn NUMA balancing off: %s", strerror(-r));
	else if (cs.why)
		log_info("Kernel placement: %s", cs.why);
	m->cp.start_threads = 0;
	if (knobs_get(&m->ks, KNOB_COPY_THREADS, &v) == 0 && v > 0)
		m->cp.start_threads = (unsigned int)v;
	return ct_init(&m->cs, &m->cp);
}

static void knobs_give_back(struct tierd *d, struct mod_threads *m)
{
	int r;

	if (!m->open)
		return;
	r = knobs_restore(&m->ks);
	if (r < 0)
		log_warn("Failed to restore a kernel knob: %s", strerror(-r));
	else if (r > 0)
		log_info("Restored %d kernel knob(s)", r);
	m->open = false;
	d->stats.copy_threads = 0;
}

static int mod_threads_start(struct tierd *d, void **ret_priv)
{
	struct mod_threads *m;

	if (!pipe_get(d))
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*ret_priv = m;
	m->prev = calloc(1, sizeof(*m->prev));
	m->cur = calloc(1, sizeof(*m->cur));
	if (!m->prev || !m->cur)
		return -ENOMEM;
	ct_from_conf(d->conf, &m->cp);
	cpu_masks(d, m);
	if (!tierd_knobs_allowed(d)) {
		log_info("Kernel knobs left alone (%s)",
			 d->no_knobs ? "--no-knobs" : "dry run");
		return 0;
	}
	return knobs_take(d, m);
}

static void load_now(struct tierd *d, struct mod_threads *m, struct ct_load *ld)
{
	struct load_cpu_times *t;

	memset(ld, 0, sizeof(*ld));
	if (load_read_psi_cpu(sysroot(d), &ld->psi_some_avg10_x100) < 0)
		ld->psi_some_avg10_x100 = 0;
	ld->src_cpus = m->src_cpus;
	ld->dst_cpus = m->dst_cpus;
	if (load_read_cpu_times(sysroot(d), m->cur) < 0)
		return;
	if (m->have_prev) {
		unsigned int pct = d->conf->copy_threads.busy_cpu_pct;

		ld->src_idle = load_idle_cpus(m->prev, m->cur, m->src_mask, pct);
		ld->dst_idle = load_idle_cpus(m->prev, m->cur, m->dst_mask, pct);
		ld->local_idle = load_idle_cpus(m->prev, m->cur, m->all_mask, pct);
	} else {
		ld->src_idle = m->src_cpus;
		ld->dst_idle = m->dst_cpus;
		ld->local_idle = m->src_cpus + m->dst_cpus;
	}
	t = m->prev;
	m->prev = m->cur;
	m->cur = t;
	m->have_prev = true;
}

static int mod_threads_tick(struct tierd *d, void *priv, uint64_t now_ns)
{
	struct mod_threads *m = priv;
	struct pipeline *p = d->pipe;
	struct ct_sample sample;
	struct ct_decision dec;
	struct ct_load ld;
	int r;

	if (!tierd_knobs_allowed(d)) {
		knobs_give_back(d, m);
		return 0;
	}
	if (!m->open) {
		r = knobs_take(d, m);
		if (r < 0)
			return r;
	}
	if (m->cp.mode == CT_OFF)
		return 0;
	if (!knobs_have_copy(&m->ks)) {
		if (!m->said_vanilla)
			log_notice("Copy threads not managed: this kernel has no vm.migrate_copy_* knobs (the patch series is not applied)");
		m->said_vanilla = true;
		return 0;
	}
	sample.bytes = p->moved_bytes_total - m->moved_bytes;
	sample.ns = p->move_ns_total - m->move_ns;
	m->moved_bytes = p->moved_bytes_total;
	m->move_ns = p->move_ns_total;
	load_now(d, m, &ld);
	ct_step(&m->cs, &m->cp, &ld, &sample, now_ns, &dec);
	if (!dec.apply)
		return 0;
	r = knobs_apply_copy(&m->ks, dec.mt, dec.threads, dec.pull);
	if (r == -EBUSY) {
		if (m->last_error != r)
			log_notice("A copy-thread knob was changed by someone else: tierd leaves it to them");
		m->last_error = r;
		return 0;
	}
	m->last_error = r < 0 ? r : 0;
	if (r < 0)
		return r;
	if (dec.changed)
		log_info("Copy threads: %u%s (%s)", dec.mt ? dec.threads : 1,
			 dec.pull < 0 ? "" : dec.pull ? ", pull" : ", push",
			 ct_why_name(dec.why));
	d->stats.copy_threads = dec.mt ? dec.threads : 1;
	return 0;
}

static void mod_threads_reload_apply(struct tierd *d, void *priv)
{
	struct mod_threads *m = priv;
	unsigned int start = m->cp.start_threads;

	ct_from_conf(d->conf, &m->cp);
	m->cp.start_threads = start;
	cpu_masks(d, m);
	if (ct_init(&m->cs, &m->cp) < 0)
		log_warn("copy_threads: min/max out of range; the controller keeps its state");
}

static void mod_threads_restore(struct tierd *d, void *priv)
{
	if (priv)
		knobs_give_back(d, priv);
}

static void mod_threads_stop(struct tierd *d, void *priv)
{
	struct mod_threads *m = priv;

	if (!m)
		return;
	free(m->prev);
	free(m->cur);
	free(m);
}

const struct tierd_module threads_module = {
	.name = "threads",
	.start = mod_threads_start,
	.reload_apply = mod_threads_reload_apply,
	.tick = mod_threads_tick,
	.restore_knobs = mod_threads_restore,
	.stop = mod_threads_stop,
};
