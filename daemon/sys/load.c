// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "fsutil.h"
#include "load.h"

int load_read_psi_cpu(const char *root, unsigned int *ret_x100)
{
	unsigned int whole, frac;
	char buf[512];
	const char *line;
	int r = fs_read(root, "proc/pressure/cpu", buf, sizeof(buf), NULL);

	if (r < 0)
		return r == -EOPNOTSUPP ? -ENOENT : r;
	for (line = buf; line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (sscanf(line, "some avg10=%u.%2u", &whole, &frac) == 2) {
			*ret_x100 = whole * 100 + frac;
			return 0;
		}
	}
	return -EINVAL;
}

int load_read_cpu_times(const char *root, struct load_cpu_times *ret)
{
	char path[PATH_MAX], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/stat", root);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(ret, 0, sizeof(*ret));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[10] = { 0 };
		unsigned int cpu;
		int n;

		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
			continue;
		n = sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
		if (n < 5 || cpu >= LOAD_MAX_CPUS)
			continue;
		/* user nice system idle iowait irq softirq steal (guest is in user) */
		ret->total[cpu] = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		ret->busy[cpu] = ret->total[cpu] - v[3] - v[4];
		if ((int)cpu + 1 > ret->nr)
			ret->nr = (int)cpu + 1;
	}
	fclose(f);
	return ret->nr ? 0 : -EINVAL;
}

unsigned int load_idle_cpus(const struct load_cpu_times *a, const struct load_cpu_times *b,
			    const uint64_t mask[LOAD_MASK_WORDS], unsigned int busy_pct)
{
	unsigned int idle = 0;
	int nr = a->nr < b->nr ? a->nr : b->nr;

	for (int c = 0; c < nr; c++) {
		uint64_t dt, db;

		if (!(mask[c / 64] & (1ull << (c % 64))))
			continue;
		if (b->total[c] <= a->total[c])
			continue;
		dt = b->total[c] - a->total[c];
		db = b->busy[c] >= a->busy[c] ? b->busy[c] - a->busy[c] : 0;
		if (db * 100 <= dt * busy_pct)
			idle++;
	}
	return idle;
}

int load_node_cpus(const char *root, int node, uint64_t mask[LOAD_MASK_WORDS])
{
	uint64_t bits[CPULIST_MAX_IDS / 64];
	char path[64];
	int r, n = 0;

	memset(mask, 0, LOAD_MASK_WORDS * sizeof(uint64_t));
	snprintf(path, sizeof(path), "sys/devices/system/node/node%d/cpulist", node);
	r = cpulist_read(root, path, bits, CPULIST_MAX_IDS, NULL);
	if (r < 0)
		return r;
	/* CPUs beyond LOAD_MAX_CPUS are left out, as from the counts. */
	for (int w = 0; w < LOAD_MASK_WORDS; w++) {
		mask[w] = bits[w];
		n += __builtin_popcountll(bits[w]);
	}
	return n;
}

int load_possible_cpus(const char *root, unsigned int *ret_nr)
{
	uint64_t bits[CPULIST_MAX_IDS / 64];
	int r = cpulist_read(root, "sys/devices/system/cpu/possible", bits, CPULIST_MAX_IDS,
			     NULL);

	if (r < 0)
		return r;
	for (int w = CPULIST_MAX_IDS / 64 - 1; w >= 0; w--)
		if (bits[w]) {
			*ret_nr = (unsigned int)(w * 64 + 64 - __builtin_clzll(bits[w]));
			return 0;
		}
	return -EINVAL;
}
