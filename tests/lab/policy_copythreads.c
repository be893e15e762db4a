// SPDX-License-Identifier: GPL-2.0-only
/*
 * policy_drive copythreads: the copy-thread controller under a CPU
 * stress, driven by its own move rounds through tierd's batcher, migrator
 * and account (it tests the controller, not the tick).
 */
#include "policy_lab.h"
#include "page_geom_read.h"

static struct acct_call calls[MAX_CAND];

/* The migrator, then the account, as the manager's steps 5 and 6 do. */
static void run_plan(struct migrator *m, struct account *a, const struct topology *topo,
		     const struct batch_plan *plan, uint64_t now, struct mig_run_result *run)
{
	struct acct_result sum;

	mig_run_plan(m, plan, account_nomem_nodes(a, now), calls, run);
	account_plan(a, topo, plan, intents, calls, now, m->dry_run, &sum);
	run->moved_bytes = sum.moved_bytes;
}

/* One controller round: move the whole buffer to @to through tierd's
 * batcher and migrator, measure the load meanwhile, step the controller and
 * write its decision.  Returns the decision's thread count. */
struct ct_round {
	struct knobs *ks;
	struct ct_params *p;
	struct ct_state *s;
	struct batcher *b;
	struct migrator *m;
	struct account *a;
	struct topology *topo;
	char *buf;
	uint64_t bytes;
	uint64_t node0_mask[LOAD_MASK_WORDS];
	unsigned int node0_cpus;
	double t0;
};

static struct load_cpu_times lt_a, lt_b;

static unsigned int ct_round(struct ct_round *r, int to, const char *phase)
{
	const struct batch_plan *plan;
	struct mig_run_result run;
	struct ct_decision d;
	struct ct_load l = { 0 };
	struct ct_sample sm;
	size_t n = r->bytes / PG;
	long v = -1;
	int e;

	for (size_t i = 0; i < n; i++) {
		memset(&intents[i], 0, sizeof(intents[i]));
		intents[i].pid = getpid();
		intents[i].addr = (uintptr_t)r->buf + i * PG;
		intents[i].nr_pages = 1;
		intents[i].from_node = to ? 0 : 1;
		intents[i].to_node = to;
		intents[i].cgroup = -1;
		intents[i].kind = to == 0 ? POLICY_PROMOTE : POLICY_DEMOTE;
	}
	load_read_cpu_times("", &lt_a);
	batch_build(r->b, intents, n, &plan);
	run_plan(r->m, r->a, r->topo, plan, now_ns(), &run);
	load_read_cpu_times("", &lt_b);
	if (load_read_psi_cpu("", &l.psi_some_avg10_x100) < 0)
		l.psi_some_avg10_x100 = 0;
	/* Node 0 has the CPUs; node 1 is CPU-less, so it is the only side. */
	if (to == 0) {
		l.dst_cpus = r->node0_cpus;
		l.dst_idle = load_idle_cpus(&lt_a, &lt_b, r->node0_mask, r->p->busy_cpu_pct);
	} else {
		l.src_cpus = r->node0_cpus;
		l.src_idle = load_idle_cpus(&lt_a, &lt_b, r->node0_mask, r->p->busy_cpu_pct);
	}
	EXPECT(run.failed_calls == 0 && run.moved_bytes == r->bytes,
	       "round to node %d moved %lu of %lu B (%zu calls failed)", to, run.moved_bytes,
	       r->bytes, run.failed_calls);
	sm.bytes = run.moved_bytes;
	sm.ns = run.elapsed_ns;
	ct_step(r->s, r->p, &l, &sm, now_ns(), &d);
	e = knobs_apply_copy(r->ks, d.mt, d.threads, d.pull);
	EXPECT(e == 0, "knobs_apply_copy: %s", strerror(-e));
	knobs_get(r->ks, KNOB_COPY_THREADS, &v);
	EXPECT(v == (long)d.threads, "vm.migrate_copy_threads is %ld, decided %u", v, d.threads);
	printf("%6.1f s %-7s to node %d: %5.1f MB/s, psi %u.%02u%%, idle %u/%u -> %u threads (%s)\n",
	       now_ns() / 1e9 - r->t0, phase, to,
	       run.elapsed_ns ? run.moved_bytes * 1e3 / run.elapsed_ns : 0.0,
	       l.psi_some_avg10_x100 / 100, l.psi_some_avg10_x100 % 100,
	       to == 0 ? l.dst_idle : l.src_idle, r->node0_cpus, d.threads, ct_why_name(d.why));
	return d.threads;
}

/*
 * Stress: every vCPU spinning.  Threads must fall to the minimum and never
 * rise meanwhile.  Returns the lowest count the rounds reached from @t.
 */
static unsigned int stress_rounds(struct ct_round *r, unsigned int t, int *to,
				  unsigned int nproc)
{
	unsigned int lowest = t;
	pid_t stress[64];
	int nstress = 0;

	for (unsigned int i = 0; i < nproc && nstress < 64; i++) {
		pid_t pid = fork();

		if (pid == 0)
			for (volatile unsigned long x = 0;; x++)
				;
		stress[nstress++] = pid;
	}
	for (int i = 0; i < 20 && (i < 4 || lowest > r->p->min_threads); i++, *to ^= 1) {
		unsigned int nt = ct_round(r, *to, "stress");

		EXPECT(nt <= lowest, "threads rose from %u to %u under stress", lowest, nt);
		lowest = nt < lowest ? nt : lowest;
	}
	EXPECT(lowest == r->p->min_threads, "under stress the controller stayed at %u threads",
	       lowest);
	for (int i = 0; i < nstress; i++) {
		kill(stress[i], SIGKILL);
		waitpid(stress[i], NULL, 0);
	}
	return lowest;
}

int scenario_copythreads(void)
{
	struct knobs ks;
	struct ct_params p;
	struct ct_state s;
	struct batch_params bp;
	struct page_geom geom;
	struct acct_params ap;
	struct migrator m;
	struct topology topo;
	struct ct_round r;
	long orig_threads = -1, orig_mt = -1, kbatch = 0, v;
	unsigned int idle_threads, t, lowest, nproc = sysconf(_SC_NPROCESSORS_ONLN);
	int to = 0, e;

	mkdir("/run/tierd-lab", 0755);
	e = knobs_open(&ks, &knob_file_ops, NULL, "", "/run/tierd-lab");
	EXPECT(e == 0, "knobs_open: %s", strerror(-e));
	if (!knobs_have_copy(&ks)) {
		printf("vm.migrate_copy_mt/threads/pull absent: this kernel lacks the copy series "
		       "(run with tests/lab/vm --patched on a tree with kernel-patches/)\n");
		return 77;
	}
	knobs_get(&ks, KNOB_COPY_THREADS, &orig_threads);
	knobs_get(&ks, KNOB_COPY_MT, &orig_mt);
	knobs_get(&ks, KNOB_BATCH_PAGES, &kbatch);
	topo_from_libnuma(&topo, -1);
	ct_params_default(&p);
	p.max_threads = nproc < 8 ? nproc : 8;
	/* Start where the kernel's default is, as tierd does. */
	p.start_threads = orig_threads > 0 ? (unsigned int)orig_threads : 0;
	p.min_sample_bytes = 16 * MiB;
	if (ct_init(&s, &p) < 0 || p.max_threads < 2) {
		fprintf(stderr, "needs 2 or more vCPUs\n");
		return 77;
	}
	if (page_geom_read("/", NULL, NULL, &geom) < 0)
		return 1;
	batch_params_default(&bp, kbatch > 0 ? kbatch : 0, &geom);
	acct_params_default(&ap, &geom);
	memset(&r, 0, sizeof(r));
	if (batch_new(&bp, MAX_CAND, &r.b) < 0 || account_new(&ap, 0, 0, &r.a) < 0 ||
	    mig_init(&m, &mig_real_ops, NULL, false, geom.base) < 0)
		return 1;
	r.ks = &ks;
	r.p = &p;
	r.s = &s;
	r.m = &m;
	r.topo = &topo;
	r.bytes = 32 * MiB;
	r.buf = alloc_on(1, r.bytes, false);
	/* The stress children must not share these pages: move_pages
	 * (without MPOL_MF_MOVE_ALL) refuses pages mapped by two processes. */
	madvise(r.buf, r.bytes, MADV_DONTFORK);
	r.node0_cpus = load_node_cpus("", 0, r.node0_mask);
	r.t0 = now_ns() / 1e9;
	printf("promote flag %s, kernel batch %ld pages, tierd batch %u pages, %u..%u threads\n",
	       m.has_promote ? "yes" : "no", kbatch, bp.batch_pages, p.min_threads, p.max_threads);

	/* Idle: from the kernel's default, climbing while throughput rises. */
	for (int i = 0; i < 10; i++, to ^= 1)
		t = ct_round(&r, to, "idle");
	idle_threads = s.good;
	EXPECT(idle_threads > p.min_threads,
	       "at %u threads while idle: nothing to lower under stress", idle_threads);

	lowest = stress_rounds(&r, t, &to, nproc);

	/* Stress over: PSI avg10 decays over ~10 s; then back up. */
	t = lowest;
	for (int i = 0; i < 60 && t < idle_threads; i++, to ^= 1)
		t = ct_round(&r, to, "after");
	EXPECT(t >= idle_threads, "after the stress the controller is at %u threads, was %u", t,
	       idle_threads);

	e = knobs_restore(&ks);
	EXPECT(e >= 0, "knobs_restore: %s", strerror(-e));
	knobs_get(&ks, KNOB_COPY_THREADS, &v);
	EXPECT(v == orig_threads, "vm.migrate_copy_threads %ld after restore, was %ld", v,
	       orig_threads);
	knobs_get(&ks, KNOB_COPY_MT, &v);
	EXPECT(v == orig_mt, "vm.migrate_copy_mt %ld after restore, was %ld", v, orig_mt);
	batch_free(r.b);
	account_free(r.a);
	return failures ? 1 : 0;
}

