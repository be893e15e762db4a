// SPDX-License-Identifier: GPL-2.0-only
/* sampler_pick() over fakes, the fake's contract, and PMU discovery on fixtures. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hot_table.h"
#include "pmu.h"
#include "sampler_fake.h"
#include "test.h"
#include "test_geom.h"

static const char *fixtures;

static void test_pick_falls_back_with_reasons(void)
{
	struct sampler_fake a, b, c;
	struct sampler *cands[] = { &a.base, &b.base, &c.base };
	char why[512];

	sampler_fake_init(&a, "a");
	sampler_fake_init(&b, "b");
	sampler_fake_init(&c, "c");
	a.probe_ret = -ENODEV;
	a.why = "no memory-sampling PMU";
	b.start_ret = -EBUSY;
	b.why = "3 kdamonds not ours";
	CHECK_EQ_INT(sampler_pick(cands, 3, why, sizeof(why)), 2);
	CHECK_EQ_STR(why, "fake: no memory-sampling PMU; fake: 3 kdamonds not ours; using fake");
	CHECK_EQ_INT(a.starts, 0);	/* a failed probe is not started */
	CHECK(!b.started);
	CHECK(c.started);

	/* None works; a reason left empty falls back to strerror. */
	c.probe_ret = -EPERM;
	c.why = NULL;
	c.started = false;
	CHECK_EQ_INT(sampler_pick(cands, 3, why, sizeof(why)), -ENODEV);
	CHECK_EQ_STR(why, "fake: no memory-sampling PMU; fake: 3 kdamonds not ours; "
		     "fake: Operation not permitted; no hotness source can run");
	/* A short buffer is cut, never overrun. */
	CHECK_EQ_INT(sampler_pick(cands, 3, why, 10), -ENODEV);
	CHECK_EQ_STR(why, "fake: no ");
}

static void test_fake_drains_into_table(void)
{
	static uint64_t mem[4096];
	struct hot_params hp = { .half_life_ns = 1000, .max_entries = 64, .geom = TEST_GEOM_INIT };
	struct sampler_fake f;
	struct sampler_status st;
	struct hot_table t;
	char why[64];

	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	sampler_fake_init(&f, "fake");
	CHECK_EQ_INT(sampler_drain(&f.base, &t, 0), -ENOTCONN);
	CHECK_EQ_INT(sampler_start(&f.base, why, sizeof(why)), 0);
	sampler_fake_push(&f, 10, 0x5000, 4096, 2.0);
	sampler_fake_push(&f, 10, 0x200000, 0x400000, 1.0);	/* two 2 MiB ranges */
	CHECK_EQ_INT(sampler_drain(&f.base, &t, 0), 3);
	CHECK_EQ_INT(sampler_drain(&f.base, &t, 0), 0);
	CHECK(hot_heat(&t, 10, 0x5000, 1000) == 1.0);
	sampler_describe(&f.base, &st);
	CHECK(st.running);
	CHECK_EQ_U64(st.records, 3);
	CHECK_EQ_U64(st.drains, 2);
	sampler_stop(&f.base);
	CHECK(f.stopped);
	sampler_free(NULL);
}

static void test_pmu_intel(void)
{
	struct pmu_event ev;
	char root[512], why[256] = "";

	snprintf(root, sizeof(root), "%s/pmu/intel", fixtures);
	CHECK_EQ_INT(pmu_find_mem_sampler(root, &ev, why, sizeof(why)), 0);
	CHECK_EQ_STR(ev.desc, "PEBS cpu/mem-loads,ldlat=128/");
	CHECK_EQ_INT(ev.type, 4);
	/*
	 * event=0xcd in config:0-7, umask=0x1 in config:8-15; sysfs's ldlat=3
	 * gives way to PMU_PEBS_LDLAT_CYCLES in config1:0-15, not OR'ed with it.
	 */
	CHECK_EQ_U64(ev.config, 0xcd | 0x1 << 8);
	CHECK_EQ_U64(ev.config1, PMU_PEBS_LDLAT_CYCLES);
	CHECK_EQ_INT(ev.precise_ip, 3);

	snprintf(root, sizeof(root), "%s/pmu/hybrid", fixtures);
	CHECK_EQ_INT(pmu_find_mem_sampler(root, &ev, why, sizeof(why)), 0);
	CHECK_EQ_STR(ev.desc, "PEBS cpu_core/mem-loads,ldlat=128/");
	CHECK_EQ_INT(ev.type, 8);
	CHECK_EQ_U64(ev.config, 0xd0 | 0x5 << 8);
	CHECK_EQ_U64(ev.config1, PMU_PEBS_LDLAT_CYCLES);
}

static void test_pmu_amd_none_bad(void)
{
	struct pmu_event ev;
	char root[256], why[1024] = "", want[1024];

	snprintf(root, sizeof(root), "%s/pmu/amd", fixtures);
	CHECK_EQ_INT(pmu_find_mem_sampler(root, &ev, why, sizeof(why)), 0);
	CHECK_EQ_STR(ev.desc, "AMD IBS op");
	CHECK_EQ_INT(ev.type, 11);
	CHECK_EQ_U64(ev.config, 0);	/* no l3missonly before Zen 4: every op */

	snprintf(root, sizeof(root), "%s/pmu/amd-zen4", fixtures);
	CHECK_EQ_INT(pmu_find_mem_sampler(root, &ev, why, sizeof(why)), 0);
	CHECK_EQ_STR(ev.desc, "AMD IBS op (l3missonly)");
	CHECK_EQ_U64(ev.config, 1ull << 16);	/* l3missonly: config:16 */

	snprintf(root, sizeof(root), "%s/pmu/none", fixtures);
	CHECK_EQ_INT(pmu_find_mem_sampler(root, &ev, why, sizeof(why)), -ENODEV);
	snprintf(want, sizeof(want), "no memory-sampling PMU: %s/bus/event_source/devices has "
		 "neither cpu/events/mem-loads (Intel PEBS) nor ibs_op (AMD IBS); a VM or an "
		 "older CPU", root);
	CHECK_EQ_STR(why, want);

	snprintf(root, sizeof(root), "%s/pmu/bad", fixtures);
	CHECK_EQ_INT(pmu_find_mem_sampler(root, &ev, why, sizeof(why)), -EINVAL);
	snprintf(want, sizeof(want), "cannot use %s/bus/event_source/devices/cpu/events/mem-loads "
		 "(\"event=0xcd,frob=1\"): Invalid argument", root);
	CHECK_EQ_STR(why, want);
}

static void test_pmu_parse_formats(void)
{
	struct pmu_event ev = { 0 };
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/pmu/intel/bus/event_source/devices/cpu", fixtures);
	/* A value wider than its field is refused. */
	CHECK_EQ_INT(pmu_parse_event(dir, "event=0x1ff", &ev), -EINVAL);
	CHECK_EQ_INT(pmu_parse_event(dir, "event=zz", &ev), -EINVAL);
	CHECK_EQ_INT(pmu_parse_event(dir, "../type=1", &ev), -EINVAL);
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ_INT(pmu_parse_event(dir, "umask=0xff,ldlat=0xffff", &ev), 0);
	CHECK_EQ_U64(ev.config, 0xff00);
	CHECK_EQ_U64(ev.config1, 0xffff);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 1;
	}
	fixtures = argv[1];
	RUN(test_pick_falls_back_with_reasons);
	RUN(test_fake_drains_into_table);
	RUN(test_pmu_intel);
	RUN(test_pmu_amd_none_bad);
	RUN(test_pmu_parse_formats);
	return TEST_EXIT();
}
