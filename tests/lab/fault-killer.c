// SPDX-License-Identifier: GPL-2.0-only
/*
 * SIGKILL a process while tierd is in the middle of moving pages: poll
 * /proc/TIERD/syscall until tierd sits in move_pages(2) for TARGET with a
 * node array (a move, not a node query) of at least MIN_COUNT pages (default
 * 1) for the Nth time seen, then SIGKILL VICTIM (tierd itself, or TARGET).
 * Killed there, TARGET's in-flight call still completes (the kernel holds its
 * mm); tierd's next calls for it, in the same plan, meet a process that is
 * gone.  MIN_COUNT lets a caller skip the short calls that end a plan (its
 * last, partial batch), after which no call for TARGET remains.
 *
 *   fault-killer TIERD_PID TARGET_PID VICTIM_PID N TIMEOUT_S [MIN_COUNT]
 *
 * Exit 0 and "killed PID in move_pages #N (count=C)"; 1 on timeout.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 100000 }, t0, t;
	int tierd, target, victim, want, seen = 0;
	unsigned long long min_count = 1;
	bool inside = false;
	char path[64];
	double timeout;

	if (argc != 6 && argc != 7) {
		fprintf(stderr,
			"usage: fault-killer TIERD_PID TARGET_PID VICTIM_PID N TIMEOUT_S [MIN_COUNT]\n");
		return 2;
	}
	tierd = atoi(argv[1]);
	target = atoi(argv[2]);
	victim = atoi(argv[3]);
	want = atoi(argv[4]);
	timeout = atof(argv[5]);
	if (argc == 7)
		min_count = strtoull(argv[6], NULL, 0);
	snprintf(path, sizeof(path), "/proc/%d/syscall", tierd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		unsigned long long a[6];
		bool moving;
		long nr;
		FILE *f = fopen(path, "re");

		if (!f) {
			perror(path);
			return 1;
		}
		moving = fscanf(f, "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2],
				&a[3], &a[4], &a[5]) == 7 &&
			 nr == SYS_move_pages && (int)a[0] == target && a[3] && a[1] >= min_count;
		fclose(f);
		if (moving && !inside && ++seen >= want) {
			kill(victim, SIGKILL);
			printf("killed %d in move_pages #%d (count=%llu)\n", victim, seen, a[1]);
			return 0;
		}
		inside = moving;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 > timeout) {
			fprintf(stderr, "fault-killer: tierd seen in %d move_pages calls for %d in %.0f s\n",
				seen, target, timeout);
			return 1;
		}
		nanosleep(&nap, NULL);
	}
}
