// SPDX-License-Identifier: GPL-2.0-only
/*
 * SIGKILL a process while tierd is in the middle of moving pages: poll
 * /proc/TIERD/syscall until tierd sits in move_pages(2) for TARGET with a
 * node array (a move, not a node query) of at least MIN_COUNT pages (default
 * 1) for the Nth time seen, then SIGKILL VICTIM (tierd itself, or TARGET).
 * Killed there, TARGET's in-flight call still completes (the kernel holds its
 * mm).  A victim other than tierd takes a moment to exit: its threads must
 * be scheduled to see the signal, and until its leader has let go of the mm
 * tierd's next call for it succeeds.  So tierd is held with SIGSTOP (which
 * takes effect as the call returns) from before the kill until the victim is
 * a zombie, and then let go with SIGCONT: its next calls for TARGET, in the
 * same plan, always meet a process that is gone.  MIN_COUNT lets a caller
 * skip the short calls that end a plan (its last, partial batch), after which
 * no call for TARGET remains.
 *
 *   fault-killer TIERD_PID TARGET_PID VICTIM_PID N TIMEOUT_S [MIN_COUNT]
 *
 * Exit 0 and "killed PID in move_pages #N (count=C)"; 1 on timeout.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - t0->tv_sec + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Has @pid's leader exited: gone from /proc, a zombie or dead? */
static bool exited(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/* SIGKILL @victim with @tierd held until the victim has exited. */
static int kill_held(int tierd, int victim)
{
	struct timespec nap = { 0, 1000000 }, t0;

	if (victim == tierd)
		return kill(victim, SIGKILL);
	kill(tierd, SIGSTOP);
	kill(victim, SIGKILL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!exited(victim) && since(&t0) < 60)
		nanosleep(&nap, NULL);
	kill(tierd, SIGCONT);
	if (!exited(victim)) {
		fprintf(stderr, "fault-killer: %d not exited 60 s after SIGKILL\n", victim);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 100000 }, t0;
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
			if (kill_held(tierd, victim))
				return 1;
			printf("killed %d in move_pages #%d (count=%llu)\n", victim, seen, a[1]);
			return 0;
		}
		inside = moving;
		if (since(&t0) > timeout) {
			fprintf(stderr, "fault-killer: tierd seen in %d move_pages calls for %d in %.0f s\n",
				seen, target, timeout);
			return 1;
		}
		nanosleep(&nap, NULL);
	}
}
