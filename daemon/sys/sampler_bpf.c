// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loader of bpf/hotness.bpf.c: open the skeleton, set rodata and map sizes,
 * load, attach to one sampling event per online CPU (or to the page faults of
 * one process), then each tick drain the kernel's (tgid, page) counts into the
 * hotness table and adjust the sampling period to the CPU budget.
 *
 * The cost measurement: when kernel.bpf_stats_enabled is already 1 (an admin
 * turned it on), the program's run time comes from bpf_prog_info.run_time_ns
 * ("bpf_stats"; it excludes the PMU interrupt around the program).  tierd never
 * turns it on: it is a global knob and costs every BPF program on the machine.
 * Otherwise the cost is estimated as samples * SAMPLE_COST_EST_NS
 * ("estimate"), the usual PEBS/IBS interrupt-plus-program cost.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include "cpulist.h"
#include "fsutil.h"
#include "pmu_attr.h"
#include "sample_period.h"
#include "sampler_bpf.h"

#ifdef TIERD_HAVE_BPF_SKEL
#include "sampler_bpf_int.h"

#define MAX_CPUS 4096

static void (*log_fn)(int level, const char *msg);
/* The first warning since the last start(): the root cause, not its echoes. */
static char first_warning[SAMPLER_WHY_MAX];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	int prio = level == LIBBPF_WARN ? LOG_WARNING :
		   level == LIBBPF_INFO ? LOG_INFO : LOG_DEBUG;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	if (level == LIBBPF_WARN && msg[0] && !first_warning[0]) {
		size_t n = strnlen(msg, sizeof(first_warning) - 1);

		memcpy(first_warning, msg, n);
		first_warning[n] = '\0';
	}
	if (log_fn)
		log_fn(prio, msg);
	else if (level != LIBBPF_DEBUG)
		fprintf(stderr, "%s\n", msg);
	return 0;
}

void sampler_bpf_set_log(void (*fn)(int level, const char *msg))
{
	log_fn = fn;
	libbpf_set_print(libbpf_print);
}

/* Why libbpf failed: its first warning, else its error text. */
static void libbpf_why(char *why, size_t len, const char *what, int err)
{
	char buf[128];

	if (first_warning[0]) {
		snprintf(why, len, "%s: %s", what, first_warning);
		return;
	}
	libbpf_strerror(err, buf, sizeof(buf));
	snprintf(why, len, "%s: %s", what, buf);
}

/* CPUs from a "0-3,5,7-8" file into @cpus; returns how many. */
static int online_cpus(const char *sysfs_root, const char *path, int *cpus, int max)
{
	uint64_t bits[CPULIST_MAX_IDS / 64];
	int n = 0, r;

	r = cpulist_read(sysfs_root, path, bits, CPULIST_MAX_IDS, NULL);
	if (r < 0)
		return r;
	for (int c = 0; c < CPULIST_MAX_IDS && n < max; c++)
		if (bits[c / 64] & (1ull << (c % 64)))
			cpus[n++] = c;
	return n;
}

static int bpf_probe(struct sampler *s, char *why, size_t len)
{
	struct sampler_bpf *b = SB(s);
	struct perf_event_attr attr;
	int r;

	if (access(b->btf_path, R_OK) < 0) {
		r = -errno;

		snprintf(why, len, "no kernel BTF at %s (%s): the program needs it for CO-RE "
			 "(CONFIG_DEBUG_INFO_BTF=y)", b->btf_path, strerror(-r));
		return r;
	}
	if (b->p.fault_pid > 0) {
		snprintf(b->ev.desc, sizeof(b->ev.desc), "page faults of pid %d", b->p.fault_pid);
		return 0;
	}
	r = pmu_find_mem_sampler(b->sysfs_root, &b->ev, why, len);
	if (r < 0)
		return r;
	/* An event the kernel would refuse is a reason to fall back, said here. */
	return pmu_attr_build(&b->ev, pmu_attr_period(&b->ev, b->p.period_init), &attr, why, len);
}

static int open_event(struct sampler_bpf *b, int cpu, int precise_ip)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_ADDR,
		.disabled = 0,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	pid_t pid = -1;
	int fd;

	if (b->p.fault_pid > 0) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_PAGE_FAULTS;
		attr.sample_period = b->p.fault_adapt ? b->period : 1;
		attr.exclude_kernel = 0;	/* the fault is taken in the kernel */
		pid = b->p.fault_pid;
		cpu = -1;
	} else {
		struct pmu_event ev = b->ev;

		ev.precise_ip = precise_ip;
		if (pmu_attr_build(&ev, b->period, &attr, NULL, 0) < 0)
			return -EINVAL;	/* bpf_probe() said why */
	}
	fd = (int)syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void bpf_stop(struct sampler *s)
{
	struct sampler_bpf *b = SB(s);

	for (int i = 0; i < b->nfds; i++) {
		bpf_link__destroy(b->links[i]);
		close(b->fds[i]);
	}
	b->nfds = 0;
	free(b->links);
	free(b->fds);
	b->links = NULL;
	b->fds = NULL;
	hotness_bpf__destroy(b->skel);
	b->skel = NULL;
	free(b->keys);
	free(b->vals);
	free(b->percpu);
	b->keys = NULL;
	b->vals = NULL;
	b->percpu = NULL;
	b->ntargets = 0;
	if (b->thp_on)
		thp_close(&b->thp);
	b->thp_on = false;
	b->st.running = false;
}

static int attach_all(struct sampler_bpf *b, char *why, size_t len)
{
	int cpus[MAX_CPUS], n, precise = b->ev.precise_ip;

	if (b->p.fault_pid > 0) {
		cpus[0] = -1;
		n = 1;
	} else {
		/* A hybrid part's PMU exists on its own CPUs only. */
		const char *path = b->ev.cpus_path[0] ? b->ev.cpus_path : "devices/system/cpu/online";

		n = online_cpus(b->sysfs_root, path, cpus, MAX_CPUS);
		if (n <= 0) {
			snprintf(why, len, "cannot read %s/%s: %s", b->sysfs_root, path,
				 strerror(n < 0 ? -n : EINVAL));
			return n < 0 ? n : -EINVAL;
		}
	}
	b->fds = calloc(n, sizeof(*b->fds));
	b->links = calloc(n, sizeof(*b->links));
	if (!b->fds || !b->links)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		int fd = open_event(b, cpus[i], precise);

		/* Step precise_ip down on the first CPU until the PMU takes it. */
		while (fd < 0 && i == 0 && precise > 1 && (fd == -EOPNOTSUPP || fd == -EINVAL))
			fd = open_event(b, cpus[i], --precise);
		if (fd < 0) {
			snprintf(why, len, "perf_event_open(%s, cpu %d): %s%s", b->ev.desc, cpus[i],
				 strerror(-fd), fd == -EACCES || fd == -EPERM ?
				 " (needs CAP_PERFMON or root)" : "");
			return fd;
		}
		b->fds[b->nfds] = fd;
		b->links[b->nfds] = bpf_program__attach_perf_event(b->skel->progs.hot_sample, fd);
		if (!b->links[b->nfds]) {
			int r = -errno;

			close(fd);
			snprintf(why, len, "attaching to %s on cpu %d: %s", b->ev.desc, cpus[i],
				 strerror(-r));
			return r;
		}
		b->nfds++;
	}
	b->ev.precise_ip = precise;
	b->ncpus = b->p.fault_pid > 0 ? 1 : (unsigned int)n;
	return 0;
}

/* Open, size and load the skeleton; libbpf's first warning explains a failure. */
static int load_skel(struct sampler_bpf *b, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	int r;

	if (b->p.btf_path)
		opts.btf_custom_path = b->p.btf_path;
	first_warning[0] = '\0';
	libbpf_set_print(libbpf_print);	/* stderr until the daemon routes it */
	b->skel = hotness_bpf__open_opts(&opts);
	if (!b->skel) {
		r = -errno;
		libbpf_why(why, len, "opening the BPF object", r);
		return r;
	}
	b->skel->rodata->page_shift = b->p.geom.shift;
	bpf_map__set_max_entries(b->skel->maps.hot_counts, b->p.max_pages);
	bpf_map__set_max_entries(b->skel->maps.hot_tgids, b->p.max_targets);
	r = hotness_bpf__load(b->skel);
	if (r == -EPERM || r == -EACCES)
		snprintf(why, len, "loading BPF: %s (needs CAP_BPF and CAP_PERFMON, or root)",
			 strerror(-r));
	else if (r < 0)
		libbpf_why(why, len, "loading BPF", r);
	return r < 0 ? r : 0;
}

/* The drain buffers and the target list, sized from the params. */
static int alloc_buffers(struct sampler_bpf *b, char *why, size_t len)
{
	b->targets = b->targets ? b->targets : calloc(b->p.max_targets, sizeof(pid_t));
	b->keys = calloc(DRAIN_BATCH, sizeof(*b->keys));
	b->vals = calloc(DRAIN_BATCH, sizeof(*b->vals));
	b->npossible = libbpf_num_possible_cpus();
	if (b->npossible <= 0)
		return -ENOMEM;
	b->percpu = calloc(b->npossible, sizeof(*b->percpu));
	if (!b->targets || !b->keys || !b->vals || !b->percpu) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* THP folding when asked for and possible; b->thp_note says why not. */
static void thp_setup(struct sampler_bpf *b)
{
	b->thp_note[0] = '\0';
	if (!b->p.fold_thp)
		return;
	b->thp_on = thp_open(&b->thp, b->procfs_root, &b->p.geom) == 0;
	if (!b->thp_on)
		snprintf(b->thp_note, sizeof(b->thp_note), "; no THP folding: %.140s",
			 b->thp.why);
}

/* The status line: which event, on how many CPUs, and THP folding. */
static void status_line(struct sampler_bpf *b)
{
	if (b->p.fault_pid > 0 && !b->p.fault_adapt)
		snprintf(b->st.why, sizeof(b->st.why), "%s (period 1)%s", b->ev.desc,
			 b->thp_note);
	else if (b->p.fault_pid > 0)
		snprintf(b->st.why, sizeof(b->st.why), "%s (adaptive period)%s", b->ev.desc,
			 b->thp_note);
	else
		snprintf(b->st.why, sizeof(b->st.why), "%s precise_ip=%d on %u CPUs%s",
			 b->ev.desc, b->ev.precise_ip, b->ncpus, b->thp_note);
}

static int bpf_start(struct sampler *s, char *why, size_t len)
{
	struct sampler_bpf *b = SB(s);
	char buf[8];
	int r;

	if (b->skel)
		return -EALREADY;
	r = bpf_probe(s, why, len);
	if (r < 0)
		return r;
	r = load_skel(b, why, len);
	if (r == 0)
		r = alloc_buffers(b, why, len);
	if (r == 0) {
		b->period = b->p.fault_pid > 0 ? b->p.period_init :
			    pmu_attr_period(&b->ev, b->p.period_init);
		r = attach_all(b, why, len);
	}
	if (r < 0) {
		bpf_stop(s);
		return r;
	}
	/* Read only: tierd never turns bpf_stats on (see the top of this file). */
	b->use_bpf_stats = fs_read(b->procfs_root, "sys/kernel/bpf_stats_enabled", buf,
				   sizeof(buf), NULL) == 0 && buf[0] == '1';
	thp_setup(b);
	b->last_ns = 0;
	b->last_samples = b->last_run_ns = b->last_lost = 0;
	b->st.running = true;
	b->st.cost_source = b->use_bpf_stats ? "bpf_stats" : "estimate";
	status_line(b);
	return 0;
}

static int bpf_fd(struct sampler *s)
{
	return -1;
}

static void bpf_describe(struct sampler *s, struct sampler_status *ret)
{
	struct sampler_bpf *b = SB(s);

	*ret = b->st;
	ret->name = "bpf";
	ret->period = b->p.fault_pid > 0 && !b->p.fault_adapt ? 1 : b->period;
	if (!ret->cost_source)
		ret->cost_source = "none";
}

static void bpf_free(struct sampler *s)
{
	struct sampler_bpf *b = SB(s);

	bpf_stop(s);
	free(b->targets);
	free(b);
}

static const struct sampler_ops bpf_ops = {
	.name = "bpf",
	.probe = bpf_probe,
	.start = bpf_start,
	.set_targets = sampler_bpf_set_targets,
	.drain = sampler_bpf_drain,
	.peek = sampler_bpf_peek,
	.stop = bpf_stop,
	.fd = bpf_fd,
	.describe = bpf_describe,
	.free = bpf_free,
};

int sampler_bpf_new(const struct sampler_bpf_params *p, struct sampler **ret)
{
	struct sampler_bpf *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->base.ops = &bpf_ops;
	b->base.crowded_hot = POLICY_CROWDED_BACKGROUND;
	b->p = *p;
	b->btf_path = p->btf_path ? p->btf_path : "/sys/kernel/btf/vmlinux";
	b->sysfs_root = p->sysfs_root ? p->sysfs_root : "/sys";
	b->procfs_root = p->procfs_root ? p->procfs_root : "/proc";
	if (!b->p.max_pages || !b->p.max_targets || !b->p.period_min ||
	    b->p.period_min > b->p.period_max) {
		free(b);
		return -EINVAL;
	}
	snprintf(b->st.why, sizeof(b->st.why), "not started");
	*ret = &b->base;
	return 0;
}

#else /* !TIERD_HAVE_BPF_SKEL */

void sampler_bpf_set_log(void (*fn)(int level, const char *msg))
{
}

int sampler_bpf_new(const struct sampler_bpf_params *p, struct sampler **ret)
{
	return -EOPNOTSUPP;	/* built with -Dbpf=disabled */
}

#endif

void sampler_bpf_params_default(struct sampler_bpf_params *p, const struct page_geom *g)
{
	memset(p, 0, sizeof(*p));
	p->geom = *g;
	p->max_pages = 65536;
	p->max_targets = 1024;
	p->cpu_budget_pct = 1.0;
	/* Primes, so the samples do not beat with loop strides. */
	p->period_init = SAMPLE_PERIOD_INIT;
	p->period_min = 1009;
	p->period_max = 1000003;
	p->fold_thp = true;
}
