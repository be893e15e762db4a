// SPDX-License-Identifier: GPL-2.0-only
/*
 * pmu_attr_build() against the rules of Linux 6.12, one test per rule, each
 * naming the kernel function that applies it; then the source order
 * (PEBS/IBS, else DAMON) on fixture PMUs through the real BPF source's probe.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pmu.h"
#include "pmu_attr.h"
#include "sampler_bpf.h"
#include "sampler_fake.h"
#include "test.h"
#include "test_geom.h"

static const char *fixtures;

/* The event that pmu_find_mem_sampler() finds in fixtures/pmu/@name. */
static struct pmu_event found(const char *name)
{
	struct pmu_event ev;
	char root[512], why[512] = "";

	snprintf(root, sizeof(root), "%s/pmu/%s", fixtures, name);
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ_INT(pmu_find_mem_sampler(root, &ev, why, sizeof(why)), 0);
	return ev;
}

/* perf_event_open(): sample_period bit 63 is -EINVAL; 0 is no sampling event. */
static void test_open_period_is_a_period(void)
{
	struct pmu_event ev = found("intel");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&ev, 0, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "PEBS cpu/mem-loads,ldlat=128/: sample period 0 is not a period "
		     "(perf_event_open)");
	CHECK_EQ_INT(pmu_attr_build(&ev, 1ull << 63, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), 0);
	CHECK_EQ_U64(a.size, sizeof(a));	/* perf_copy_attr() */
}

/* perf_ibs_init() and intel_pmu_hw_config(): a fixed period, never freq. */
static void test_fixed_period_not_freq(void)
{
	struct pmu_event pebs = found("intel"), ibs = found("amd");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&pebs, 10007, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.freq, 0);
	CHECK_EQ_U64(a.sample_period, 10007);
	CHECK_EQ_INT(pmu_attr_build(&ibs, 10000, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.freq, 0);
	CHECK_EQ_U64(a.sample_period, 10000);
}

/*
 * intel_pmu_hw_config(): mem-loads with PERF_SAMPLE_DATA_SRC is -ENODATA on
 * a PMU with mem-loads-aux unless that event leads a group; the address
 * alone is not.
 */
static void test_pebs_aux_no_data_src(void)
{
	struct pmu_event ev = found("hybrid");
	struct perf_event_attr a;
	char why[256];

	CHECK(ev.mem_loads_aux);
	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), 0);
	CHECK_EQ_U64(a.sample_type, PERF_SAMPLE_ADDR);
	CHECK_EQ_U64(a.type, 8);
	CHECK_EQ_U64(a.config1, PMU_PEBS_LDLAT_CYCLES);	/* ldlat */
}

/* x86_pmu_hw_config(): precise_ip above x86_pmu_max_precise() is -EOPNOTSUPP. */
static void test_pebs_precise_at_most_max(void)
{
	struct pmu_event ev = found("intel");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(ev.max_precise, 3);
	CHECK_EQ_INT(ev.precise_ip, 3);
	ev.max_precise = 2;
	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "PEBS cpu/mem-loads,ldlat=128/: precise_ip 3 is above caps/max_precise 2 "
		     "(x86_pmu_hw_config)");
	ev.precise_ip = 2;
	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.precise_ip, 2);
}

/* setup_pebs_fixed_sample_data(): the data address comes only in a PEBS record. */
static void test_pebs_needs_precise(void)
{
	struct pmu_event ev = found("vm-nopebs");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(ev.max_precise, 0);
	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "PEBS cpu/mem-loads,ldlat=128/: precise_ip 0: no PEBS, so no data "
		     "addresses (setup_pebs_fixed_sample_data)");
}

/* x86_pmu_hw_config(): limit_period() raising the period is -EINVAL. */
static void test_pebs_min_period(void)
{
	struct pmu_event ev = found("intel");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&ev, 127, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "PEBS cpu/mem-loads,ldlat=128/: sample period 127 is below 128 "
		     "(x86_pmu_hw_config: limit_period)");
	CHECK_EQ_INT(pmu_attr_build(&ev, 128, &a, why, sizeof(why)), 0);
}

/* x86_pmu_extra_regs(): config1 outside MSR_PEBS_LD_LAT_THRESHOLD's valid_mask. */
static void test_pebs_ldlat_mask(void)
{
	struct pmu_event ev = found("intel");
	struct perf_event_attr a;
	char why[256];

	ev.config1 = 0x10000;
	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "PEBS cpu/mem-loads,ldlat=128/: ldlat 0x10000 is wider than 16 bits "
		     "(x86_pmu_extra_regs)");
	ev.config1 = 0xffff;
	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), 0);
}

/*
 * intel_pmu_hw_config() makes a fixed-period event without wakeup_events
 * "large PEBS", and __intel_pmu_pebs_event() then gives the BPF program
 * only the last record of each drain.
 */
static void test_pebs_not_large(void)
{
	struct pmu_event ev = found("intel");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.wakeup_events, 1);
	CHECK_EQ_INT(a.watermark, 0);
}

/* perf_event_open(): kernel samples need perf_allow_kernel(); PEBS leaves them out. */
static void test_pebs_user_only(void)
{
	struct pmu_event ev = found("intel");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.exclude_kernel, 1);
	CHECK_EQ_INT(a.exclude_hv, 1);
	CHECK_EQ_INT(a.exclude_user, 0);
}

/* perf_try_init_event(): PERF_PMU_CAP_NO_EXCLUDE makes any exclude_* flag -EINVAL. */
static void test_ibs_no_exclude(void)
{
	struct pmu_event ev = found("amd");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&ev, 10000, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.exclude_user | a.exclude_kernel | a.exclude_hv | a.exclude_idle |
		     a.exclude_host | a.exclude_guest, 0);
}

/* perf_ibs_init(): without freq, a period with its low 4 bits set is -EINVAL. */
static void test_ibs_low_bits(void)
{
	struct pmu_event ev = found("amd");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&ev, 10007, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "AMD IBS op: sample period 10007 has its low 4 bits set (perf_ibs_init)");
	CHECK_EQ_INT(pmu_attr_build(&ev, 15, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_INT(pmu_attr_build(&ev, 16, &a, why, sizeof(why)), 0);	/* the least */
}

/* perf_ibs_set_period(): a period above max_period is clamped without a word. */
static void test_ibs_max_period(void)
{
	struct pmu_event ev = found("amd");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_INT(pmu_attr_build(&ev, 0xffff0, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(pmu_attr_build(&ev, 0x100000, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "AMD IBS op: sample period 1048576 is above 1048560 "
		     "(perf_ibs_set_period: max_period)");
}

/* perf_ibs_init(): config bits outside config_mask (cnt_ctl, l3missonly by capability). */
static void test_ibs_config_mask(void)
{
	struct pmu_event amd = found("amd"), zen4 = found("amd-zen4");
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_U64(amd.config_mask, 1ull << 19);		/* cnt_ctl */
	CHECK_EQ_U64(zen4.config_mask, 1ull << 19 | 1ull << 16);	/* + l3missonly */
	CHECK_EQ_U64(zen4.config, 1ull << 16);		/* set where it exists */
	amd.config = 1ull << 16;
	CHECK_EQ_INT(pmu_attr_build(&amd, 10000, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "AMD IBS op: config 0x10000 has bits this ibs_op does not take "
		     "(perf_ibs_init: config_mask)");
	CHECK_EQ_INT(pmu_attr_build(&zen4, 10000, &a, why, sizeof(why)), 0);
	CHECK_EQ_U64(a.config, 1ull << 16);
	amd.config = 1ull << 19;
	CHECK_EQ_INT(pmu_attr_build(&amd, 10000, &a, why, sizeof(why)), 0);
}

/* perf_ibs_init(): a raw max_cnt in config as well as a sample_period is -EINVAL. */
static void test_ibs_cnt_mask(void)
{
	struct pmu_event ev = found("amd");
	struct perf_event_attr a;
	char why[256];

	ev.config = 0x100;
	CHECK_EQ_INT(pmu_attr_build(&ev, 10000, &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ_STR(why, "AMD IBS op: config 0x100 sets a count as well as the sample period "
		     "(perf_ibs_init: cnt_mask)");
}

/*
 * perf_ibs_init() ignores precise_ip and refuses a branch stack
 * (has_branch_stack: -EOPNOTSUPP); the attr asks for neither.
 */
static void test_ibs_no_precise_no_branches(void)
{
	struct pmu_event ev = found("amd");
	struct perf_event_attr a;
	char why[256];

	ev.precise_ip = 2;
	CHECK_EQ_INT(pmu_attr_build(&ev, 10000, &a, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.precise_ip, 0);
	CHECK_EQ_U64(a.sample_type, PERF_SAMPLE_ADDR);
	CHECK_EQ_U64(a.type, 11);
}

/* pmu_attr_period(): the nearest period each kind takes, which the builder accepts. */
static void test_period_rounding(void)
{
	struct pmu_event pebs = found("intel"), ibs = found("amd");
	static const uint64_t want[] = { 1, 100, 1009, 10007, 1000003, 5000000 };
	struct perf_event_attr a;
	char why[256];

	CHECK_EQ_U64(pmu_attr_period(&ibs, 10007), 10000);
	CHECK_EQ_U64(pmu_attr_period(&ibs, 5), 16);
	CHECK_EQ_U64(pmu_attr_period(&ibs, 5000000), 0xffff0);
	CHECK_EQ_U64(pmu_attr_period(&pebs, 100), 128);
	CHECK_EQ_U64(pmu_attr_period(&pebs, 10007), 10007);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK_EQ_INT(pmu_attr_build(&ibs, pmu_attr_period(&ibs, want[i]), &a, why,
					    sizeof(why)), 0);
		CHECK_EQ_INT(pmu_attr_build(&pebs, pmu_attr_period(&pebs, want[i]), &a, why,
					    sizeof(why)), 0);
	}
}

/* On a hybrid part the PMU exists on its own CPUs: x86_pmu_event_init() is
 * -ENOENT elsewhere, so the loader opens only those in cpus. */
static void test_hybrid_cpus(void)
{
	struct pmu_event core = found("hybrid"), cpu = found("intel");

	CHECK_EQ_STR(core.cpus_path, "bus/event_source/devices/cpu_core/cpus");
	CHECK_EQ_STR(cpu.cpus_path, "");
	CHECK(!cpu.mem_loads_aux);
}

/*
 * The order of sources: the BPF source on a PMU the builder accepts, else
 * the next candidate (DAMON in tierd), with the reason per source skipped.
 * The BPF source is real; its probe reads the fixture tree.
 */
static int bpf_on(const char *name, struct sampler **ret)
{
	struct sampler_bpf_params p;
	static char root[512], btf[512];

	sampler_bpf_params_default(&p, &test_geom);
	snprintf(root, sizeof(root), "%s/pmu/%s", fixtures, name);
	snprintf(btf, sizeof(btf), "%s/pmu/btf-vmlinux", fixtures);
	p.sysfs_root = root;
	p.btf_path = btf;
	return sampler_bpf_new(&p, ret);
}

static void test_fallback_order(void)
{
	static const char *const takes[] = { "intel", "hybrid", "amd", "amd-zen4" };
	struct sampler_fake damon;
	struct sampler *cands[2];
	char why[1024], skipped[1024], want[1024], root[512];

	if (bpf_on("none", &cands[0]) == -EOPNOTSUPP) {
		printf("# skip: built without BPF\n");
		return;
	}
	cands[1] = &damon.base;

	/* No memory-sampling PMU: DAMON runs, and status says why not BPF. */
	sampler_fake_init(&damon, "damon");
	CHECK_EQ_INT(sampler_pick_skipped(cands, 2, why, sizeof(why), skipped, sizeof(skipped)), 1);
	snprintf(root, sizeof(root), "%s/pmu/none", fixtures);
	snprintf(want, sizeof(want), "bpf: no memory-sampling PMU: %s/bus/event_source/devices "
		 "has neither cpu/events/mem-loads (Intel PEBS) nor ibs_op (AMD IBS); a VM or "
		 "an older CPU", root);
	CHECK_EQ_STR(skipped, want);
	CHECK(damon.started);
	sampler_free(cands[0]);

	/* A PMU whose event the kernel would refuse (a VM without PEBS). */
	CHECK_EQ_INT(bpf_on("vm-nopebs", &cands[0]), 0);
	sampler_fake_init(&damon, "damon");
	CHECK_EQ_INT(sampler_pick_skipped(cands, 2, why, sizeof(why), skipped, sizeof(skipped)), 1);
	CHECK_EQ_STR(skipped, "bpf: PEBS cpu/mem-loads,ldlat=128/: precise_ip 0: no PEBS, so no data "
		     "addresses (setup_pebs_fixed_sample_data)");
	sampler_free(cands[0]);

	/* Each PMU the builder takes is the BPF source's to run. */
	for (size_t i = 0; i < sizeof(takes) / sizeof(takes[0]); i++) {
		CHECK_EQ_INT(bpf_on(takes[i], &cands[0]), 0);
		why[0] = '\0';
		CHECK_EQ_INT(sampler_probe(cands[0], why, sizeof(why)), 0);
		CHECK_EQ_STR(why, "");
		sampler_free(cands[0]);
	}

	/* The first candidate taken: nothing skipped. */
	sampler_fake_init(&damon, "damon");
	cands[0] = &damon.base;
	CHECK_EQ_INT(sampler_pick_skipped(cands, 1, why, sizeof(why), skipped, sizeof(skipped)), 0);
	CHECK_EQ_STR(skipped, "");
}

/* One "name: why" per source not taken, "; "-joined, without the one taken. */
static void test_skipped_per_source(void)
{
	struct sampler_fake a, b, c;
	struct sampler *cands[] = { &a.base, &b.base, &c.base };
	char why[512], skipped[512];

	sampler_fake_init(&a, "a");
	sampler_fake_init(&b, "b");
	sampler_fake_init(&c, "c");
	a.probe_ret = -ENODEV;
	a.why = "no PMU";
	b.start_ret = -EBUSY;
	CHECK_EQ_INT(sampler_pick_skipped(cands, 3, why, sizeof(why), skipped, sizeof(skipped)), 2);
	CHECK_EQ_STR(skipped, "fake: no PMU; fake: Device or resource busy");
	CHECK_EQ_STR(why, "fake: no PMU; fake: Device or resource busy; using fake");
	/* A short buffer is cut, never overrun. */
	CHECK_EQ_INT(sampler_pick_skipped(cands, 3, why, sizeof(why), skipped, 8), 2);
	CHECK_EQ_STR(skipped, "fake: n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 1;
	}
	fixtures = argv[1];
	RUN(test_open_period_is_a_period);
	RUN(test_fixed_period_not_freq);
	RUN(test_pebs_aux_no_data_src);
	RUN(test_pebs_precise_at_most_max);
	RUN(test_pebs_needs_precise);
	RUN(test_pebs_min_period);
	RUN(test_pebs_ldlat_mask);
	RUN(test_pebs_not_large);
	RUN(test_pebs_user_only);
	RUN(test_ibs_no_exclude);
	RUN(test_ibs_low_bits);
	RUN(test_ibs_max_period);
	RUN(test_ibs_config_mask);
	RUN(test_ibs_cnt_mask);
	RUN(test_ibs_no_precise_no_branches);
	RUN(test_period_rounding);
	RUN(test_hybrid_cpus);
	RUN(test_fallback_order);
	RUN(test_skipped_per_source);
	return TEST_EXIT();
}
