// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpulist.h"
#include "fsutil.h"
#include "pmu.h"

/* Spread @value over the bit ranges of @fmt ("config1:0-15" or "config:0-7,32-35"),
 * replacing what the field held: a later term overrides an earlier one, as
 * in perf's event syntax. */
static int put_bits(struct pmu_event *ev, const char *fmt, uint64_t value)
{
	const char *colon = strchr(fmt, ':');
	uint64_t *word, bits;

	if (!colon)
		return -EINVAL;
	if (!strncmp(fmt, "config:", 7))
		word = &ev->config;
	else if (!strncmp(fmt, "config1:", 8))
		word = &ev->config1;
	else if (!strncmp(fmt, "config2:", 8))
		word = &ev->config2;
	else
		return -EINVAL;
	if (cpulist_parse(colon + 1, &bits, 64, NULL) < 0)
		return -EINVAL;
	*word &= ~bits;
	for (unsigned int b = 0; b < 64; b++) {
		if (!(bits & (1ull << b)))
			continue;
		*word |= (value & 1) << b;
		value >>= 1;
	}
	return value ? -EINVAL : 0;	/* value wider than its field */
}

int pmu_parse_event(const char *pmu_dir, const char *terms, struct pmu_event *ev)
{
	char copy[256], path[512], fmt[128];
	char *save = NULL, *term;

	if (snprintf(copy, sizeof(copy), "%s", terms) >= (int)sizeof(copy))
		return -EINVAL;
	for (term = strtok_r(copy, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(term, '='), *end;
		uint64_t value = 1;
		int r;

		if (eq) {
			*eq = '\0';
			value = strtoull(eq + 1, &end, 0);
			if (end == eq + 1 || *end)
				return -EINVAL;
		}
		if (!*term || strchr(term, '/') || strchr(term, '.'))
			return -EINVAL;
		snprintf(path, sizeof(path), "format/%s", term);
		r = fs_read_line(pmu_dir, path, fmt, sizeof(fmt));
		if (r == -ENOENT)
			return -EINVAL;
		if (r < 0)
			return r;
		r = put_bits(ev, fmt, value);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A decimal number from @pmu_dir/@name ("type", "caps/max_precise"). */
static int read_uint(const char *pmu_dir, const char *name, unsigned long max,
		     unsigned long *ret)
{
	char buf[32], *end;
	unsigned long v;
	int r;

	r = fs_read_line(pmu_dir, name, buf, sizeof(buf));
	if (r < 0)
		return r;
	v = strtoul(buf, &end, 10);
	if (end == buf || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int read_type(const char *pmu_dir, uint32_t *ret)
{
	unsigned long v;
	int r = read_uint(pmu_dir, "type", UINT32_MAX, &v);

	if (r == 0)
		*ret = (uint32_t)v;
	return r;
}

static bool pmu_has(const char *pmu_dir, const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", pmu_dir, name);
	return access(path, F_OK) == 0;
}

/*
 * What the PEBS event's attributes depend on, beyond its terms: how precise
 * the PMU can be (x86_pmu_max_precise() in caps/max_precise; 0 where PEBS is
 * off, as in most VMs), whether its load-latency event needs the auxiliary
 * event as group leader to report data sources, and on hybrid parts which
 * CPUs the PMU exists on.
 */
static void pebs_caps(const char *pmu_dir, const char *name, struct pmu_event *ev)
{
	unsigned long v;

	ev->kind = PMU_PEBS_LDLAT;
	ev->max_precise = read_uint(pmu_dir, "caps/max_precise", 3, &v) == 0 ? (int)v : -1;
	ev->precise_ip = ev->max_precise >= 0 ? ev->max_precise : 3;
	ev->mem_loads_aux = pmu_has(pmu_dir, "events/mem-loads-aux");
	if (pmu_has(pmu_dir, "cpus"))
		snprintf(ev->cpus_path, sizeof(ev->cpus_path), "bus/event_source/devices/%s/cpus",
			 name);
}

/*
 * The optional ibs_op config bits this kernel and CPU offer (a format file
 * each, visible only with the capability): perf_ibs_init() refuses the rest.
 * Where the CPU has it (Zen 4 on), l3missonly is set: the PMU then reports
 * only the tagged ops that missed L3, the ones the memory served, as the
 * PEBS event's latency threshold does (PMU_PEBS_LDLAT_CYCLES).  Older parts
 * sample every op, cache hits too.
 */
static void ibs_caps(const char *pmu_dir, struct pmu_event *ev)
{
	static const char *const optional[] = { "cnt_ctl", "l3missonly" };

	ev->kind = PMU_IBS_OP;
	for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++) {
		struct pmu_event bit = { 0 };

		if (pmu_parse_event(pmu_dir, optional[i], &bit) < 0)
			continue;
		ev->config_mask |= bit.config;
		if (!strcmp(optional[i], "l3missonly")) {
			ev->config |= bit.config;
			snprintf(ev->desc, sizeof(ev->desc), "AMD IBS op (l3missonly)");
		}
	}
}

int pmu_find_mem_sampler(const char *sysfs_root, struct pmu_event *ret, char *why,
			 size_t why_len)
{
	static const char *const intel[] = { "cpu", "cpu_core" };
	char dir[512], path[600], terms[256], event[32];
	int r;

	for (size_t i = 0; i < sizeof(intel) / sizeof(intel[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/bus/event_source/devices/%s", sysfs_root, intel[i]);
		snprintf(path, sizeof(path), "%s/events/mem-loads", dir);
		r = fs_read_line(dir, "events/mem-loads", terms, sizeof(terms));
		if (r == -ENOENT)
			continue;
		memset(ret, 0, sizeof(*ret));
		if (r == 0)
			r = read_type(dir, &ret->type);
		if (r == 0)
			r = pmu_parse_event(dir, terms, ret);
		/* sysfs's ldlat=3 takes nearly every load: PMU_PEBS_LDLAT_CYCLES replaces it. */
		snprintf(event, sizeof(event), "ldlat=%d", PMU_PEBS_LDLAT_CYCLES);
		if (r == 0)
			r = pmu_parse_event(dir, event, ret);
		if (r < 0) {
			snprintf(why, why_len, "cannot use %s (\"%s\"): %s", path, terms,
				 strerror(-r));
			return r;
		}
		snprintf(ret->desc, sizeof(ret->desc), "PEBS %s/mem-loads,ldlat=%d/", intel[i],
			 PMU_PEBS_LDLAT_CYCLES);
		pebs_caps(dir, intel[i], ret);
		return 0;
	}

	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices/ibs_op", sysfs_root);
	memset(ret, 0, sizeof(*ret));
	r = read_type(dir, &ret->type);
	if (r == 0) {
		snprintf(ret->desc, sizeof(ret->desc), "AMD IBS op");
		ibs_caps(dir, ret);
		return 0;
	}
	if (r != -ENOENT) {
		snprintf(why, why_len, "cannot read %s/type: %s", dir, strerror(-r));
		return r;
	}
	snprintf(why, why_len,
		 "no memory-sampling PMU: %s/bus/event_source/devices has neither "
		 "cpu/events/mem-loads (Intel PEBS) nor ibs_op (AMD IBS); a VM or an older CPU",
		 sysfs_root);
	return -ENODEV;
}
