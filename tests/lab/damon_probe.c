// SPDX-License-Identifier: GPL-2.0-only
/*
 * Drives the DAMON source on its own inside the lab guest, for the lab tests
 * (the daemon's main loop is another module):
 *
 *   damon_probe RUNDIR find-hot PID HOT_START HOT_END MAX_DRAINS
 *	monitor PID and drain until DAMON has found [HOT_START, HOT_END) (hex):
 *	every 2 MiB range at least half as hot as the hottest lies inside it
 *	(precision), and they cover at least 3/4 of the ranges wholly inside
 *	it (recall).  Exit 0 and print how many drains and seconds it took, 1
 *	if MAX_DRAINS were not enough
 *   damon_probe RUNDIR hold PID
 *	start monitoring PID and sleep (the test kill -9s it)
 *   damon_probe RUNDIR start-stop
 *	start (cleaning up what a crashed run left) and stop
 *
 * Prints the sampler's status line after start and before exit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hotness.h"
#include "sampler_damon.h"

#define TOPK 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void status(struct sampler *s, const char *when)
{
	struct sampler_status st;

	sampler_describe(s, &st);
	printf("damon_probe: %s: %s: %s (drains %llu, regions %llu)\n", when, st.name,
	       st.why, (unsigned long long)st.drains, (unsigned long long)st.samples);
	fflush(stdout);
}

static int find_hot(struct sampler *s, pid_t pid, uint64_t lo, uint64_t hi, int max)
{
	static struct hot_entry_view v[TOPK];
	struct hot_params hp = { .half_life_ns = 2000000000ull, .max_entries = 16384 };
	struct hot_table t;
	size_t need = hot_mem_size(hp.max_entries);
	void *mem = aligned_alloc(8, need);
	uint64_t t0 = now_ns();
	int r;

	if (!mem || hot_init(&t, &hp, mem, need, t0) < 0)
		return 2;
	r = sampler_set_targets(s, &pid, 1);
	if (r < 0) {
		fprintf(stderr, "damon_probe: set_targets: %s\n", strerror(-r));
		return 2;
	}
	status(s, "monitoring");
	for (int i = 1; i <= max; i++) {
		size_t n, inside = 0, outside = 0;
		/* Whole 2 MiB ranges inside the region. */
		uint64_t whole = ((hi & ~(HOT_HUGE_SIZE - 1)) -
				  ((lo + HOT_HUGE_SIZE - 1) & ~(HOT_HUGE_SIZE - 1))) / HOT_HUGE_SIZE;

		r = sampler_drain(s, &t, now_ns());
		if (r < 0) {
			fprintf(stderr, "damon_probe: drain: %s\n", strerror(-r));
			return 2;
		}
		n = hot_select_hottest(&t, pid, 0.0, now_ns(), v, TOPK);
		for (size_t k = 0; k < n && v[k].heat >= v[0].heat / 2; k++) {
			if (v[k].addr >= lo && v[k].addr + v[k].len <= hi)
				inside++;
			else
				outside++;
		}
		printf("damon_probe: drain %d: %d records; at >= half the top heat: %zu of %llu "
		       "ranges inside the hot region, %zu outside\n", i, r, inside,
		       (unsigned long long)whole, outside);
		if (n && outside == 0 && 4 * inside >= 3 * whole) {
			printf("damon_probe: found the hot region after %d drains, %.1f s\n", i,
			       (double)(now_ns() - t0) / 1e9);
			free(mem);
			return 0;
		}
	}
	free(mem);
	return 1;
}

int main(int argc, char **argv)
{
	struct sampler_damon_params p;
	char why[SAMPLER_WHY_MAX] = "";
	struct sampler *s;
	int r, rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: see the top of tests/lab/damon_probe.c\n");
		return 2;
	}
	sampler_damon_params_default(&p);
	p.runtime_dir = argv[1];
	r = sampler_damon_new(&p, &s);
	if (r == 0)
		r = sampler_start(s, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "damon_probe: start: %s (%s)\n", why, strerror(-r));
		return 2;
	}
	status(s, "started");
	if (!strcmp(argv[2], "find-hot") && argc == 7) {
		rc = find_hot(s, atoi(argv[3]), strtoull(argv[4], NULL, 16),
			      strtoull(argv[5], NULL, 16), atoi(argv[6]));
	} else if (!strcmp(argv[2], "hold") && argc == 4) {
		pid_t pid = atoi(argv[3]);

		r = sampler_set_targets(s, &pid, 1);
		status(s, r < 0 ? "set_targets failed" : "holding");
		for (;;)
			pause();
	} else if (strcmp(argv[2], "start-stop") != 0) {
		fprintf(stderr, "damon_probe: unknown mode '%s'\n", argv[2]);
		rc = 2;
	}
	status(s, "stopping");
	sampler_free(s);
	return rc;
}
