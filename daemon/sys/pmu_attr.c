// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each rule below is one that Linux 6.12 applies when perf_event_open()
 * meets our event; the comment names the function that applies it.  A rule
 * the kernel would enforce with an error is refused here first, with the
 * reason, so that the source falls back to DAMON with a sentence an operator
 * can act on instead of "Invalid argument".  A rule the kernel would
 * "honour" by silently doing something else (clamping a period, buffering
 * samples past the BPF program) is refused or avoided here too.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pmu_attr.h"

/* arch/x86/include/asm/perf_event.h */
#define IBS_OP_MAX_CNT 0xffffull
#define IBS_OP_CUR_CNT (0xfff80ull << 32)
#define IBS_OP_CUR_CNT_RAND (0x7full << 32)
#define IBS_OP_MAX_CNT_EXT_MASK (0x7full << 20)
#define IBS_OP_CUR_CNT_EXT_MASK (0x7full << 52)
#define IBS_OP_CNT_MASK (IBS_OP_MAX_CNT | IBS_OP_CUR_CNT | IBS_OP_CUR_CNT_RAND | \
			 IBS_OP_MAX_CNT_EXT_MASK | IBS_OP_CUR_CNT_EXT_MASK)
/* MSR_PEBS_LD_LAT_THRESHOLD's valid_mask (INTEL_UEVENT_PEBS_LDLAT_EXTRA_REG) */
#define PEBS_LDLAT_MASK 0xffffull

static int refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

uint64_t pmu_attr_period(const struct pmu_event *ev, uint64_t want)
{
	if (ev->kind == PMU_IBS_OP) {
		want &= ~0xfull;
		if (want < PMU_IBS_MIN_PERIOD)
			return PMU_IBS_MIN_PERIOD;
		return want > PMU_IBS_OP_MAX_PERIOD ? PMU_IBS_OP_MAX_PERIOD : want;
	}
	return want < PMU_PEBS_MIN_PERIOD ? PMU_PEBS_MIN_PERIOD : want;
}

static int pebs_attr(const struct pmu_event *ev, uint64_t period, struct perf_event_attr *a,
		     char *why, size_t len)
{
	/*
	 * x86_pmu_hw_config(): precise_ip above x86_pmu_max_precise() is
	 * -EOPNOTSUPP; that maximum is caps/max_precise, 0 where PEBS is off.
	 */
	if (ev->max_precise >= 0 && ev->precise_ip > ev->max_precise)
		return refuse(why, len, "%s: precise_ip %d is above caps/max_precise %d "
			      "(x86_pmu_hw_config)", ev->desc, ev->precise_ip, ev->max_precise);
	/*
	 * The load-latency event gives a data address only in a PEBS record
	 * (setup_pebs_fixed_sample_data(), setup_pebs_adaptive_sample_data());
	 * without precise_ip it counts as a plain event and every sample's
	 * address is 0.
	 */
	if (ev->precise_ip < 1)
		return refuse(why, len, "%s: precise_ip %d: no PEBS, so no data addresses "
			      "(setup_pebs_fixed_sample_data)", ev->desc, ev->precise_ip);
	/*
	 * x86_pmu_hw_config(): x86_pmu.limit_period() raising the period is
	 * -EINVAL; glc_limit_period() wants 128 at precise_ip 3,
	 * hsw_limit_period() 32 or 128.
	 */
	if (period < PMU_PEBS_MIN_PERIOD)
		return refuse(why, len, "%s: sample period %llu is below %llu "
			      "(x86_pmu_hw_config: limit_period)", ev->desc,
			      (unsigned long long)period, PMU_PEBS_MIN_PERIOD);
	/* x86_pmu_extra_regs(): config1 beyond the extra register's valid_mask. */
	if (ev->config1 & ~PEBS_LDLAT_MASK)
		return refuse(why, len, "%s: ldlat 0x%llx is wider than 16 bits "
			      "(x86_pmu_extra_regs)", ev->desc, (unsigned long long)ev->config1);
	a->precise_ip = ev->precise_ip;
	/*
	 * Only user loads: CPU-wide events need perf_allow_cpu() (CAP_PERFMON
	 * at perf_event_paranoid > 0), and counting kernel loads would also
	 * need perf_allow_kernel() in perf_event_open() for addresses tierd
	 * cannot move.
	 */
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	/*
	 * intel_pmu_hw_config(): a fixed period without wakeup_events makes
	 * the event "large PEBS", and __intel_pmu_pebs_event() then hands all
	 * but the last record of each drain to perf_event_output(), past the
	 * BPF program.  wakeup_events = 1 keeps one PMI per sample.
	 */
	a->wakeup_events = 1;
	a->watermark = 0;
	/*
	 * intel_pmu_hw_config(): where the PMU has mem-loads-aux (Sapphire
	 * Rapids, hybrid cores), mem-loads with PERF_SAMPLE_DATA_SRC is
	 * -ENODATA unless that event leads its group.  The address alone
	 * (PERF_SAMPLE_ADDR, set by the caller) has no such rule.
	 */
	return 0;
}

static int ibs_attr(const struct pmu_event *ev, uint64_t period, struct perf_event_attr *a,
		    char *why, size_t len)
{
	uint64_t allowed = ev->config_mask | IBS_OP_MAX_CNT;

	/* perf_ibs_init(): config bits outside perf_ibs->config_mask. */
	if (ev->config & ~allowed)
		return refuse(why, len, "%s: config 0x%llx has bits this ibs_op does not take "
			      "(perf_ibs_init: config_mask)", ev->desc,
			      (unsigned long long)ev->config);
	/* perf_ibs_init(): with a sample_period, a raw max_cnt in config is -EINVAL. */
	if (ev->config & IBS_OP_CNT_MASK)
		return refuse(why, len, "%s: config 0x%llx sets a count as well as the sample "
			      "period (perf_ibs_init: cnt_mask)", ev->desc,
			      (unsigned long long)ev->config);
	/* perf_ibs_init(): without freq, a period with its low 4 bits set is -EINVAL. */
	if (period & 0xf)
		return refuse(why, len, "%s: sample period %llu has its low 4 bits set "
			      "(perf_ibs_init)", ev->desc, (unsigned long long)period);
	/*
	 * perf_ibs_set_period() clamps to max_period (IBS_OP_MAX_CNT << 4
	 * without the OpCntExt capability, which sysfs does not show) without
	 * telling: the cost model would be off by the ratio.
	 */
	if (period > PMU_IBS_OP_MAX_PERIOD)
		return refuse(why, len, "%s: sample period %llu is above %llu "
			      "(perf_ibs_set_period: max_period)", ev->desc,
			      (unsigned long long)period, PMU_IBS_OP_MAX_PERIOD);
	/*
	 * perf_try_init_event(): ibs_op has PERF_PMU_CAP_NO_EXCLUDE, so any of
	 * exclude_{user,kernel,hv,idle,host,guest} is -EINVAL.  Kernel samples
	 * come too (perf_allow_kernel(): CAP_PERFMON); the BPF program drops
	 * their kernel addresses.
	 */
	a->exclude_kernel = 0;
	a->exclude_hv = 0;
	/*
	 * perf_ibs_init() does not look at precise_ip (forward_event_to_ibs()
	 * is for cpu events rerouted to IBS); IBS samples have no skid anyway.
	 */
	a->precise_ip = 0;
	return 0;
}

int pmu_attr_build(const struct pmu_event *ev, uint64_t period, struct perf_event_attr *ret,
		   char *why, size_t why_len)
{
	struct perf_event_attr a;
	int r;

	/*
	 * perf_event_open(): without freq, bit 63 of sample_period is -EINVAL;
	 * x86_pmu_hw_config() and perf_ibs_init() need a sampling event, and
	 * a period of 0 makes none.
	 */
	if (!period || period & (1ull << 63))
		return refuse(why, why_len, "%s: sample period %llu is not a period "
			      "(perf_event_open)", ev->desc, (unsigned long long)period);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);	/* perf_copy_attr(): at least PERF_ATTR_SIZE_VER0 */
	a.type = ev->type;
	a.config = ev->config;
	a.config1 = ev->config1;
	a.config2 = ev->config2;
	/*
	 * A fixed period, never freq: the loader sets the period to the CPU
	 * budget itself, perf_ibs_init() checks the low bits only without
	 * freq, and intel_pmu_hw_config() auto-reloads only without freq.
	 */
	a.freq = 0;
	a.sample_period = period;
	/*
	 * The data address only.  perf_copy_attr() takes any defined bit;
	 * PERF_SAMPLE_BRANCH_STACK would be -EOPNOTSUPP in perf_ibs_init()
	 * (has_branch_stack) and PERF_SAMPLE_DATA_SRC -ENODATA in
	 * intel_pmu_hw_config() on parts with mem-loads-aux.
	 */
	a.sample_type = PERF_SAMPLE_ADDR;
	switch (ev->kind) {
	case PMU_PEBS_LDLAT:
		r = pebs_attr(ev, period, &a, why, why_len);
		break;
	case PMU_IBS_OP:
		r = ibs_attr(ev, period, &a, why, why_len);
		break;
	default:
		r = refuse(why, why_len, "%s: unknown PMU kind %d", ev->desc, (int)ev->kind);
	}
	if (r < 0)
		return r;
	*ret = a;
	return 0;
}
