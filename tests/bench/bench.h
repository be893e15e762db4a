/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the benchmarks in tests/bench/ measure with: this process's CPU time
 * and its memory counters.  Header only, so that a benchmark still builds
 * with a bare cc line against another version of the code it measures.
 */
#ifndef TIERD_BENCH_H
#define TIERD_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this process in ns: what the code costs, whatever else runs. */
static inline uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "VmHWM:   1234 kB" of /proc/self/status, in KiB; 0 when unreadable. */
static inline unsigned long bench_status_kib(const char *key)
{
	char line[256];
	unsigned long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			kib = strtoul(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return kib;
}

#endif /* TIERD_BENCH_H */
