// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "fsutil.h"
#include "pmu.h"

/* Spread @value over the bit ranges of @fmt ("config1:0-15" or "config:0-7,32-35"). */
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

static int read_type(const char *pmu_dir, uint32_t *ret)
{
	char buf[32], *end;
	unsigned long v;
	int r;

	r = fs_read_line(pmu_dir, "type", buf, sizeof(buf));
	if (r < 0)
		return r;
	v = strtoul(buf, &end, 10);
	if (end == buf || *end || v > UINT32_MAX)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

int pmu_find_mem_sampler(const char *sysfs_root, struct pmu_event *ret, char *why,
			 size_t why_len)
{
	static const char *const intel[] = { "cpu", "cpu_core" };
	char dir[512], path[600], terms[256];
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
		if (r < 0) {
			snprintf(why, why_len, "cannot use %s (\"%s\"): %s", path, terms,
				 strerror(-r));
			return r;
		}
		snprintf(ret->desc, sizeof(ret->desc), "PEBS %s/mem-loads/", intel[i]);
		ret->precise_ip = 3;
		return 0;
	}

	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices/ibs_op", sysfs_root);
	memset(ret, 0, sizeof(*ret));
	r = read_type(dir, &ret->type);
	if (r == 0) {
		snprintf(ret->desc, sizeof(ret->desc), "AMD IBS op");
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
