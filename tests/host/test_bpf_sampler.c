// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF sampler on this machine, attached to the software page-fault event
 * of a child process (no PMU needed): the pages the child faults in are
 * exactly the pages that come out hot, with exact counts, and only while the
 * child is a target; a peek sees the counts before the drain folds them.
 * Also the loader's error paths for missing and broken BTF.  Needs root
 * (BPF + perf); touches no global kernel knob.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hot_table.h"
#include "pmu.h"
#include "pmu_attr.h"
#include "sampler_bpf.h"
#include "test.h"
#include "thp.h"
#include "test_geom.h"

#define NPAGES 64
#define PG TEST_PAGE_SIZE

static int to_child[2], from_child[2];

/* Phase 3 touches two bytes in each of two 2 MiB ranges of a MADV_HUGEPAGE
 * region: one fault per range when the kernel gives THPs. */
static char *thp_region(void)
{
	char *p = mmap(NULL, 3 * TEST_HUGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)p + TEST_HUGE_SIZE - 1) & ~(uintptr_t)(TEST_HUGE_SIZE - 1));
	madvise(p, 2 * TEST_HUGE_SIZE, MADV_HUGEPAGE);
	return p;
}

/* Faults the child takes on page i of its region in phase @phase (1 or 2). */
static int faults_for(int phase, int i)
{
	if (phase == 1)
		return i % 5 == 0 ? 2 : 0;
	return i % 2 == 0 ? 1 + i % 3 : 0;	/* 1, 3, 2, 1, 3, 2 ... on even pages */
}

static void child(void)
{
	char *region = mmap(NULL, NPAGES * PG, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *huge = thp_region();
	char cmd;

	close(to_child[1]);
	close(from_child[0]);
	if (region == MAP_FAILED)
		_exit(2);
	/* One fault per page per touch: no THP, writes only (no zero-page COW). */
	madvise(region, NPAGES * PG, MADV_NOHUGEPAGE);
	if (write(from_child[1], &region, sizeof(region)) != sizeof(region) ||
	    write(from_child[1], &huge, sizeof(huge)) != sizeof(huge))
		_exit(3);
	while (read(to_child[0], &cmd, 1) == 1 && (cmd == 1 || cmd == 2 || cmd == 3)) {
		if (cmd == 3) {
			for (int r = 0; r < 2; r++) {
				huge[r * TEST_HUGE_SIZE] = 1;
				huge[r * TEST_HUGE_SIZE + 5 * PG] = 1;
			}
			if (write(from_child[1], &cmd, 1) != 1)
				_exit(4);
			continue;
		}
		for (int i = 0; i < NPAGES; i++)
			for (int k = 0; k < faults_for(cmd, i); k++) {
				madvise(region + i * PG, PG, MADV_DONTNEED);
				*(volatile char *)(region + i * PG) = (char)k;
			}
		madvise(region, NPAGES * PG, MADV_DONTNEED);
		if (write(from_child[1], &cmd, 1) != 1)
			_exit(4);
	}
	_exit(0);
}

static int run_phase(char phase)
{
	char ack;

	if (write(to_child[1], &phase, 1) != 1)
		return -1;
	return read(from_child[0], &ack, 1) == 1 && ack == phase ? 0 : -1;
}

/* AnonHugePages of the VMA of @pid that starts at @start, in KiB; -1 if none. */
static long anon_huge_kib(pid_t pid, uint64_t start)
{
	char path[64], line[512];
	bool in = false;
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo == start;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

static void test_missing_btf(void)
{
	struct sampler_bpf_params p;
	struct sampler *s;
	char why[SAMPLER_WHY_MAX] = "";

	sampler_bpf_params_default(&p, &test_geom);
	p.btf_path = "/nonexistent/tierd-test/vmlinux";
	p.fault_pid = getpid();
	CHECK_EQ_INT(sampler_bpf_new(&p, &s), 0);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), -ENOENT);
	CHECK_EQ_STR(why, "no kernel BTF at /nonexistent/tierd-test/vmlinux (No such file "
		     "or directory): the program needs it for CO-RE (CONFIG_DEBUG_INFO_BTF=y)");
	sampler_free(s);
}

/* Without privileges (uid nobody, no capabilities) the load fails cleanly. */
static void test_no_capability(void)
{
	pid_t pid = fork();
	int status = -1;

	if (pid == 0) {
		static struct thp_lookup thp;
		struct sampler_bpf_params p;
		struct sampler *s;
		char why[SAMPLER_WHY_MAX] = "";
		int r;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		prctl(PR_SET_DUMPABLE, 1);	/* so that /proc/self is ours again */
		/* The kernel hides PFNs from it; PAGEMAP_SCAN (Linux >= 6.7)
		 * still recognises THPs. */
		if (thp_pfns_visible("/proc", TEST_PAGE_SHIFT) != 0)
			_exit(5);
		r = thp_open(&thp, "/proc", &test_geom);
		if (r == 0 ? thp.method != THP_SCAN : r != -EPERM) {
			fprintf(stderr, "unprivileged THP lookups: %d, %s\n", r, thp.why);
			_exit(6);
		}
		thp_close(&thp);
		sampler_bpf_params_default(&p, &test_geom);
		p.fault_pid = getpid();
		if (sampler_bpf_new(&p, &s))
			_exit(4);
		r = sampler_start(s, why, sizeof(why));
		if (r != -EPERM || strcmp(why, "loading BPF: Operation not permitted "
				   "(needs CAP_BPF and CAP_PERFMON, or root)")) {
			fprintf(stderr, "unprivileged start: %d, %s\n", r, why);
			_exit(1);
		}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 0);
	CHECK_EQ_INT(thp_pfns_visible("/proc", TEST_PAGE_SHIFT), 1);	/* root sees them */
}

static void test_broken_btf(void)
{
	struct sampler_bpf_params p;
	struct sampler *s;
	char why[SAMPLER_WHY_MAX] = "", want[SAMPLER_WHY_MAX], path[] = "/tmp/tierd-btf-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, "not BTF at all\n", 15) == 15);
	close(fd);
	sampler_bpf_params_default(&p, &test_geom);
	p.btf_path = path;
	p.fault_pid = getpid();
	CHECK_EQ_INT(sampler_bpf_new(&p, &s), 0);
	CHECK(sampler_start(s, why, sizeof(why)) < 0);
	/* libbpf's first complaint comes through: the file is not ELF/BTF. */
	snprintf(want, sizeof(want), "loading BPF: libbpf: failed to get EHDR from %s", path);
	CHECK_EQ_STR(why, want);
	sampler_free(s);
	unlink(path);
}

/* The table keeps heat as a float: a count reads back within 2^-23 of itself. */
static bool is_count(double heat, int n)
{
	double d = heat > n ? heat - n : n - heat;

	return d <= n * 0x1p-22;
}

static void test_page_faults_of_child(void)
{
	static uint64_t mem[1 << 16];
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 4096, .geom = TEST_GEOM_INIT };
	struct sampler_bpf_params p;
	struct sampler_status st;
	struct sampler_peek pk, pk2;
	struct hot_entry_view v[NPAGES + 1];
	struct hot_table t;
	struct sampler *s;
	char why[SAMPLER_WHY_MAX] = "", stats_on[4] = "0";
	char *region, *huge;
	pid_t pid;
	int r, expect_n = 0, fd;

	CHECK_EQ_INT(pipe(to_child), 0);
	CHECK_EQ_INT(pipe(from_child), 0);
	pid = fork();
	if (pid == 0)
		child();
	close(to_child[0]);
	close(from_child[1]);
	CHECK(read(from_child[0], &region, sizeof(region)) == sizeof(region));
	CHECK(read(from_child[0], &huge, sizeof(huge)) == sizeof(huge));
	CHECK(huge != NULL);

	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	sampler_bpf_params_default(&p, &test_geom);
	p.fault_pid = pid;
	CHECK_EQ_INT(sampler_bpf_new(&p, &s), 0);
	r = sampler_start(s, why, sizeof(why));
	if (r < 0)
		fprintf(stderr, "start: %s\n", why);
	CHECK_EQ_INT(r, 0);
	if (r < 0)
		goto out;

	/* Phase 1: the child is not a target yet, nothing may be counted. */
	CHECK_EQ_INT(sampler_set_targets(s, NULL, 0), 0);
	CHECK_EQ_INT(run_phase(1), 0);
	CHECK_EQ_INT(sampler_drain(s, &t, 1000), 0);

	/* Phase 2: a target. */
	CHECK_EQ_INT(sampler_set_targets(s, &pid, 1), 0);
	CHECK_EQ_INT(run_phase(2), 0);
	/* A peek reads what the drain will fold, all of it new to the table,
	 * and leaves it there. */
	for (int i = 0; i < NPAGES; i++)
		expect_n += faults_for(2, i) > 0;
	CHECK_EQ_INT(sampler_peek(s, &t, 2000, &pk), 1);
	CHECK(pk.accessed_bytes >= (uint64_t)expect_n * PG);
	CHECK_EQ_U64(pk.new_bytes, pk.accessed_bytes);
	CHECK_EQ_INT(sampler_peek(s, &t, 2000, &pk2), 1);
	CHECK_EQ_U64(pk2.accessed_bytes, pk.accessed_bytes);
	expect_n = 0;
	CHECK(sampler_drain(s, &t, 2000) > 0);
	/* Drained: nothing left to peek at. */
	CHECK_EQ_INT(sampler_peek(s, &t, 2000, &pk), 0);
	for (int i = 0; i < NPAGES; i++) {
		double want = faults_for(2, i);

		if (!is_count(hot_heat(&t, pid, (uint64_t)(uintptr_t)region + i * PG, 2000), want)) {
			fprintf(stderr, "page %d: heat %g, expected %g\n", i,
				hot_heat(&t, pid, (uint64_t)(uintptr_t)region + i * PG, 2000), want);
			CHECK(!"page heat");
		}
		expect_n += want > 0;
	}
	/* Exactly those pages, hottest first, come out of the region. */
	{
		size_t n = hot_select_hottest(&t, pid, 0.5, 2000, v, NPAGES + 1);
		int in_region = 0;

		for (size_t i = 0; i < n; i++) {
			uint64_t a = v[i].addr - (uint64_t)(uintptr_t)region;

			if (v[i].addr < (uint64_t)(uintptr_t)region || a >= NPAGES * PG)
				continue;
			in_region++;
			CHECK(is_count(v[i].heat, faults_for(2, (int)(a / PG))));
		}
		CHECK(expect_n > 0);
		CHECK_EQ_INT(in_region, expect_n);
	}
	/* A second drain finds nothing new: the kernel map was emptied. */
	CHECK_EQ_INT(sampler_drain(s, &t, 3000), 0);

	/* Phase 3: THPs come out as one 2 MiB entry each. */
	CHECK_EQ_INT(run_phase(3), 0);
	r = sampler_drain(s, &t, 4000);
	if (anon_huge_kib(pid, (uint64_t)(uintptr_t)huge) == 2 * (long)(TEST_HUGE_SIZE >> 10)) {
		for (int k = 0; k < 2; k++) {
			uint64_t a = (uint64_t)(uintptr_t)huge + k * TEST_HUGE_SIZE;

			CHECK_EQ_U64(hot_entry_len(&t, pid, a + 5 * PG), TEST_HUGE_SIZE);
			CHECK(is_count(hot_heat(&t, pid, a, 4000), 1));	/* one fault per THP */
		}
		if (TEST_ASAN) /* the child also faults in shadow memory pages */
			CHECK(r >= 2);
		else
			CHECK_EQ_INT(r, 2);
	} else {
		printf("note: the kernel gave no THPs to the MADV_HUGEPAGE region; "
		       "THP folding not checked\n");
		CHECK(r > 0);
	}

	sampler_describe(s, &st);
	CHECK(st.running);
	CHECK_EQ_STR(st.name, "bpf");
	snprintf(why, sizeof(why), "page faults of pid %d (period 1)", pid);
	/* (root reads /proc/kpageflags, so THP folding is on: no note.) */
	CHECK_EQ_STR(st.why, why);
	CHECK_EQ_U64(st.period, 1);
	fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY);
	if (fd >= 0) {
		CHECK(read(fd, stats_on, 1) == 1);
		close(fd);
	}
	CHECK_EQ_STR(st.cost_source, stats_on[0] == '1' ? "bpf_stats" : "estimate");
	sampler_stop(s);
	sampler_describe(s, &st);
	CHECK(!st.running);
	CHECK_EQ_INT(sampler_drain(s, &t, 5000), -ENOTCONN);
out:
	sampler_free(s);
	close(to_child[1]);
	waitpid(pid, &r, 0);
	CHECK(WIFEXITED(r) && WEXITSTATUS(r) == 0);
}

/*
 * The budget loop end to end on the fault event: over budget, the period
 * grows through PERF_EVENT_IOC_PERIOD and the same faults give fewer samples;
 * then, far under budget, it halves.
 */
static void test_adaptive_period(void)
{
	static uint64_t mem[1 << 16];
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 4096, .geom = TEST_GEOM_INIT };
	struct sampler_bpf_params p;
	struct sampler_status st;
	struct hot_table t;
	struct sampler *s;
	char why[SAMPLER_WHY_MAX] = "", *region, *huge;
	int r, dense, sparse;
	pid_t pid;

	CHECK_EQ_INT(pipe(to_child), 0);
	CHECK_EQ_INT(pipe(from_child), 0);
	pid = fork();
	if (pid == 0)
		child();
	close(to_child[0]);
	close(from_child[1]);
	CHECK(read(from_child[0], &region, sizeof(region)) == sizeof(region));
	CHECK(read(from_child[0], &huge, sizeof(huge)) == sizeof(huge));
	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);

	sampler_bpf_params_default(&p, &test_geom);
	p.fault_pid = pid;
	p.fault_adapt = true;
	p.period_init = 4;
	p.period_min = 2;
	p.period_max = 1000;
	p.cpu_budget_pct = 1e-9;	/* any sample is over it */
	CHECK_EQ_INT(sampler_bpf_new(&p, &s), 0);
	r = sampler_start(s, why, sizeof(why));
	CHECK_EQ_INT(r, 0);
	if (r < 0)
		goto out;
	CHECK_EQ_INT(sampler_set_targets(s, &pid, 1), 0);
	CHECK_EQ_INT(sampler_drain(s, &t, 1000000000ull), 0);	/* the baseline */

	CHECK_EQ_INT(run_phase(2), 0);
	dense = sampler_drain(s, &t, 2000000000ull);
	sampler_describe(s, &st);
	CHECK_EQ_U64(st.period, p.period_max);
	CHECK(st.cost_pct > p.cpu_budget_pct);

	CHECK_EQ_INT(run_phase(2), 0);
	sparse = sampler_drain(s, &t, 3000000000ull);
	/* ~64 faults: every 4th sampled, then at most one at period 1000. */
	CHECK(dense >= 10);
	CHECK(sparse <= 1);
	fprintf(stderr, "adaptive period: %d pages sampled at period %llu, %d at %llu\n", dense,
		(unsigned long long)p.period_init, sparse, (unsigned long long)st.period);
	/* (Almost) nothing sampled: far under budget, so it halves each drain. */
	sampler_describe(s, &st);
	CHECK_EQ_U64(st.period, sparse ? p.period_max : p.period_max / 2);
	CHECK_EQ_INT(sampler_drain(s, &t, 4000000000ull), 0);
	sampler_describe(s, &st);
	CHECK_EQ_U64(st.period, sparse ? p.period_max / 2 : p.period_max / 4);
out:
	sampler_free(s);
	close(to_child[1]);
	waitpid(pid, &r, 0);
	CHECK(WIFEXITED(r) && WEXITSTATUS(r) == 0);
}

/*
 * The real probe on this machine: with a PEBS or IBS PMU the sampler starts on
 * it; without (VMs, this project's CI and lab) it says exactly why not.
 */
/*
 * On this machine's PMU: where pmu_attr takes the event, the source starts at
 * the period the event takes; where it refuses it (a VM's PMU without PEBS),
 * the start fails with the builder's reason; with no PMU, with -ENODEV.
 */
static void test_pmu_probe_here(void)
{
	struct sampler_bpf_params p;
	struct sampler_status st;
	struct perf_event_attr attr;
	struct pmu_event ev;
	struct sampler *s;
	char why[SAMPLER_WHY_MAX] = "", refused[SAMPLER_WHY_MAX] = "";
	bool have = pmu_find_mem_sampler("/sys", &ev, refused, sizeof(refused)) == 0;
	int r;

	sampler_bpf_params_default(&p, &test_geom);
	if (have && pmu_attr_build(&ev, pmu_attr_period(&ev, p.period_init), &attr, refused,
				   sizeof(refused)) < 0) {
		CHECK_EQ_INT(sampler_bpf_new(&p, &s), 0);
		printf("note: memory-sampling PMU present, its event refused: %s\n", refused);
		CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), -EINVAL);
		CHECK_EQ_STR(why, refused);
		sampler_free(s);
		return;
	}
	CHECK_EQ_INT(sampler_bpf_new(&p, &s), 0);
	r = sampler_start(s, why, sizeof(why));
	if (have) {
		printf("note: memory-sampling PMU present: %s\n", r ? why : "started");
		CHECK_EQ_INT(r, 0);
		sampler_describe(s, &st);
		CHECK(st.running);
		CHECK(st.period == pmu_attr_period(&ev, p.period_init));
	} else {
		CHECK_EQ_INT(r, -ENODEV);
		CHECK_EQ_STR(why, "no memory-sampling PMU: /sys/bus/event_source/devices has "
			     "neither cpu/events/mem-loads (Intel PEBS) nor ibs_op (AMD IBS); "
			     "a VM or an older CPU");
	}
	sampler_free(s);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root to load BPF and open perf events\n");
		return 77;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("SKIP: this kernel has no BTF (/sys/kernel/btf/vmlinux)\n");
		return 77;
	}
	if (sysconf(_SC_PAGESIZE) != (long)TEST_PAGE_SIZE) {
		printf("SKIP: written for 4 KiB pages and 2 MiB THPs, the kernel's pages are %ld bytes\n",
		       sysconf(_SC_PAGESIZE));
		return 77;
	}
	{
		struct sampler_bpf_params p;
		struct sampler *s;

		sampler_bpf_params_default(&p, &test_geom);
		if (sampler_bpf_new(&p, &s) == -EOPNOTSUPP) {
			printf("SKIP: built with -Dbpf=disabled\n");
			return 77;
		}
		sampler_free(s);
	}
	RUN(test_missing_btf);
	RUN(test_broken_btf);
	RUN(test_no_capability);
	RUN(test_page_faults_of_child);
	RUN(test_adaptive_period);
	RUN(test_pmu_probe_here);
	return TEST_EXIT();
}
