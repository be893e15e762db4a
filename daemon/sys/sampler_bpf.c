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
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

/* Two headers are called hotness.h: the table (core) and the BPF types. */
#include "../core/hotness.h"
#include "fsutil.h"
#include "pmu.h"
#include "pmu_attr.h"
#include "sample_period.h"
#include "sampler_bpf.h"
#include "thp.h"

#ifdef TIERD_HAVE_BPF_SKEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/hotness.h"
#include "hotness.skel.h"

#define SAMPLE_COST_EST_NS 2000ull	/* PMI + program per sample, a typical figure */
#define DRAIN_BATCH 4096u
#define MAX_CPUS 4096

struct sampler_bpf {
	struct sampler base;
	struct sampler_bpf_params p;
	const char *btf_path, *sysfs_root, *procfs_root;
	struct hotness_bpf *skel;
	int *fds;
	struct bpf_link **links;
	int nfds;
	unsigned int ncpus;	/* CPUs sampled (for the status line) */
	struct pmu_event ev;
	bool use_bpf_stats;
	uint64_t period;
	pid_t *targets;		/* sorted, as in the tgid map */
	size_t ntargets;
	struct hot_bpf_key *keys;	/* drain buffers, DRAIN_BATCH each */
	__u64 *vals;
	__u64 *percpu;		/* libbpf_num_possible_cpus() values */
	int npossible;
	uint64_t last_ns, last_samples, last_run_ns, last_lost;
	bool thp_on;
	char thp_note[96];
	struct thp_lookup thp;
	struct sampler_status st;
};

#define SB(s) ((struct sampler_bpf *)(s))

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
	char buf[1024], *p, *end;
	int n = 0, r;

	r = fs_read(sysfs_root, path, buf, sizeof(buf), NULL);
	if (r < 0)
		return r;
	for (p = buf; *p && *p != '\n';) {
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return -EINVAL;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi && n < max; c++)
			cpus[n++] = (int)c;
		p = *end == ',' ? end + 1 : end;
	}
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

static int bpf_start(struct sampler *s, char *why, size_t len)
{
	struct sampler_bpf *b = SB(s);
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	char buf[8];
	int r;

	if (b->skel)
		return -EALREADY;
	r = bpf_probe(s, why, len);
	if (r < 0)
		return r;
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
	b->skel->rodata->page_shift = HOT_PAGE_SHIFT;
	bpf_map__set_max_entries(b->skel->maps.hot_counts, b->p.max_pages);
	bpf_map__set_max_entries(b->skel->maps.hot_tgids, b->p.max_targets);
	r = hotness_bpf__load(b->skel);
	if (r < 0) {
		if (r == -EPERM || r == -EACCES)
			snprintf(why, len, "loading BPF: %s (needs CAP_BPF and CAP_PERFMON, or root)",
				 strerror(-r));
		else
			libbpf_why(why, len, "loading BPF", r);
		goto fail;
	}
	r = -ENOMEM;
	b->targets = b->targets ? b->targets : calloc(b->p.max_targets, sizeof(pid_t));
	b->keys = calloc(DRAIN_BATCH, sizeof(*b->keys));
	b->vals = calloc(DRAIN_BATCH, sizeof(*b->vals));
	b->npossible = libbpf_num_possible_cpus();
	if (b->npossible <= 0)
		goto fail;
	b->percpu = calloc(b->npossible, sizeof(*b->percpu));
	if (!b->targets || !b->keys || !b->vals || !b->percpu) {
		snprintf(why, len, "out of memory");
		goto fail;
	}
	b->period = b->p.fault_pid > 0 ? b->p.period_init :
		    pmu_attr_period(&b->ev, b->p.period_init);
	r = attach_all(b, why, len);
	if (r < 0)
		goto fail;

	/* Read only: tierd never turns bpf_stats on (see the top of this file). */
	b->use_bpf_stats = fs_read(b->procfs_root, "sys/kernel/bpf_stats_enabled", buf,
				   sizeof(buf), NULL) == 0 && buf[0] == '1';
	b->thp_note[0] = '\0';
	if (b->p.fold_thp) {
		r = thp_pfns_visible(b->procfs_root);
		if (r > 0) {
			r = thp_open(&b->thp, b->procfs_root);
			b->thp_on = r == 0;
			if (r < 0)
				snprintf(b->thp_note, sizeof(b->thp_note),
					 "; no THP folding: %s/kpageflags: %s", b->procfs_root,
					 strerror(-r));
		} else if (r == 0) {
			snprintf(b->thp_note, sizeof(b->thp_note),
				 "; no THP folding: pagemap hides PFNs (needs CAP_SYS_ADMIN)");
		} else {
			snprintf(b->thp_note, sizeof(b->thp_note),
				 "; no THP folding: %s/self/pagemap: %s", b->procfs_root,
				 strerror(-r));
		}
	}
	b->last_ns = 0;
	b->last_samples = b->last_run_ns = b->last_lost = 0;
	b->st.running = true;
	b->st.cost_source = b->use_bpf_stats ? "bpf_stats" : "estimate";
	if (b->p.fault_pid > 0 && !b->p.fault_adapt)
		snprintf(b->st.why, sizeof(b->st.why), "%s (period 1)%s", b->ev.desc,
			 b->thp_note);
	else if (b->p.fault_pid > 0)
		snprintf(b->st.why, sizeof(b->st.why), "%s (adaptive period)%s", b->ev.desc,
			 b->thp_note);
	else
		snprintf(b->st.why, sizeof(b->st.why), "%s precise_ip=%d on %u CPUs%s",
			 b->ev.desc, b->ev.precise_ip, b->ncpus, b->thp_note);
	return 0;
fail:
	bpf_stop(s);
	return r;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int bpf_set_targets(struct sampler *s, const pid_t *pids, size_t n)
{
	struct sampler_bpf *b = SB(s);
	int fd, r = 0;
	__u8 one = 1;

	if (!b->skel)
		return -ENOTCONN;
	if (n > b->p.max_targets)
		return -E2BIG;
	fd = bpf_map__fd(b->skel->maps.hot_tgids);
	/* Both lists are sorted: one merge pass finds who left and who came. */
	for (size_t i = 0; i < b->ntargets; i++)
		if (!n || !bsearch(&b->targets[i], pids, n, sizeof(*pids), pid_cmp)) {
			__u32 k = b->targets[i];

			bpf_map_delete_elem(fd, &k);
		}
	for (size_t i = 0; i < n; i++) {
		__u32 k = pids[i];

		if (b->ntargets &&
		    bsearch(&pids[i], b->targets, b->ntargets, sizeof(*pids), pid_cmp))
			continue;
		if (bpf_map_update_elem(fd, &k, &one, BPF_ANY) < 0 && r == 0)
			r = -errno;
	}
	if (n) /* pids may be NULL when there are none (UBSan) */
		memcpy(b->targets, pids, n * sizeof(*pids));
	b->ntargets = n;
	return r;
}

static int read_stats(struct sampler_bpf *b, uint64_t *ret)
{
	int fd = bpf_map__fd(b->skel->maps.hot_stats);

	for (__u32 i = 0; i < HOT_BPF_NR_STATS; i++) {
		if (bpf_map_lookup_elem(fd, &i, b->percpu) < 0)
			return -errno;
		ret[i] = 0;
		for (int c = 0; c < b->npossible; c++)
			ret[i] += b->percpu[c];
	}
	return 0;
}

static void adapt_period(struct sampler_bpf *b, uint64_t samples, uint64_t now_ns)
{
	struct sample_period_params sp = {
		.budget_pct = b->p.cpu_budget_pct,
		.min_period = b->p.period_min,
		.max_period = b->p.period_max,
	};
	uint64_t interval = b->last_ns && now_ns > b->last_ns ? now_ns - b->last_ns : 0;
	uint64_t cost = samples * SAMPLE_COST_EST_NS, next;

	if (b->use_bpf_stats) {
		struct bpf_prog_info info = {};
		__u32 ilen = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(b->skel->progs.hot_sample), &info,
					   &ilen) == 0) {
			cost = info.run_time_ns - b->last_run_ns;
			b->last_run_ns = info.run_time_ns;
		}
	}
	/* The budget is a share of one CPU, summed over all the CPUs sampled. */
	b->st.cost_pct = sample_cost_pct(cost, interval, 1);
	b->st.cpu_seconds += (double)cost / 1e9;
	if ((b->p.fault_pid > 0 && !b->p.fault_adapt) || !interval)
		return;	/* the test event samples every fault by design */
	next = sample_period_next(&sp, b->period, cost, interval, 1);
	if (b->p.fault_pid <= 0)
		next = pmu_attr_period(&b->ev, next);
	if (next == b->period)
		return;
	for (int i = 0; i < b->nfds; i++)
		if (ioctl(b->fds[i], PERF_EVENT_IOC_PERIOD, &next) < 0 && i == 0)
			return;	/* keep the period the events have */
	b->period = next;
}

/* One drained count into the table, as a 2 MiB entry when the page is part
 * of a PMD THP.  A page already covered by a 2 MiB entry folds without a
 * probe; a failed probe (the process exited) records the 4 KiB page. */
static int record(struct sampler_bpf *b, struct hot_table *t, pid_t pid, uint64_t addr,
		  uint64_t count, uint64_t now_ns)
{
	uint64_t len = HOT_PAGE_SIZE;
	int n;

	if (b->thp_on && hot_entry_len(t, pid, addr) != HOT_HUGE_SIZE &&
	    thp_is_huge(&b->thp, pid, addr) == 1) {
		addr &= ~(HOT_HUGE_SIZE - 1);
		len = HOT_HUGE_SIZE;
	}
	n = hot_record(t, pid, addr, len, (double)count, now_ns);
	return n > 0 ? n : 0;
}

static int bpf_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	struct sampler_bpf *b = SB(s);
	uint64_t stats[HOT_BPF_NR_STATS];
	__u32 in_batch = 0, out_batch = 0;
	bool first = true;
	int fd, records = 0;

	if (!b->skel)
		return -ENOTCONN;
	if (b->thp_on)
		thp_reset(&b->thp);
	fd = bpf_map__fd(b->skel->maps.hot_counts);
	for (;;) {
		__u32 count = DRAIN_BATCH;
		int r = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in_batch, &out_batch,
							b->keys, b->vals, &count, NULL);
		int err = r < 0 ? errno : 0;

		for (__u32 i = 0; i < count; i++)
			records += record(b, t, (pid_t)b->keys[i].tgid,
					  b->keys[i].page << HOT_PAGE_SHIFT, b->vals[i], now_ns);
		if (r < 0 && err == ENOENT)
			break;	/* the whole map was walked */
		if (r < 0)
			return -err;
		first = false;
		in_batch = out_batch;
	}
	if (read_stats(b, stats) == 0) {
		uint64_t samples = stats[HOT_BPF_SAMPLES] - b->last_samples;

		b->last_samples = stats[HOT_BPF_SAMPLES];
		b->st.samples = stats[HOT_BPF_COUNTED];
		b->st.lost = stats[HOT_BPF_UPDATE_FAILED];
		adapt_period(b, samples, now_ns);
	}
	b->last_ns = now_ns;
	b->st.records += records;
	b->st.drains++;
	return records;
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
	.set_targets = bpf_set_targets,
	.drain = bpf_drain,
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

void sampler_bpf_params_default(struct sampler_bpf_params *p)
{
	memset(p, 0, sizeof(*p));
	p->max_pages = 65536;
	p->max_targets = 1024;
	p->cpu_budget_pct = 1.0;
	/* Primes, so the samples do not beat with loop strides. */
	p->period_init = 10007;
	p->period_min = 1009;
	p->period_max = 1000003;
	p->fold_thp = true;
}
