// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where each 2 MiB range of tierwork's hot set is, over time: the
 * sim-validate benchmark's record of which pages a system moves and in
 * what order (tests/lab/bench.d/sim-validate).  It waits for tierwork's
 * header line in WORK_LOG, takes the hot set from it (and, with --shift,
 * the window the hot set moves to: the second half of the footprint, as
 * tierwork moves it), and every --period-ms queries the node of each of
 * those pages with one move_pages(2) call on tierwork's pid (nodes NULL:
 * a query, nothing moves).  It also reads the process's NUMA balancing
 * scan pass count (mm->numa_scan_seq in /proc/PID/sched).  Lines:
 *
 *   # hotmap pid P window W 0xA-0xB ranges R
 *   t_s scan_seq n0 n1 ... (pages on node 0 per 2 MiB range, windows in order)
 *
 * t_s counts from the moment the header line appeared, which is
 * tierwork's own clock within the poll (10 ms).  It ends when tierwork
 * exits or on SIGTERM.  A query costs one system call over the window's
 * pages; tierwork makes the same over its hot set every --report-ms.
 *
 *   hotmap WORK_LOG [--period-ms 200] [--shift]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG 4096ul
#define RANGE (2ul << 20)
#define RANGE_PAGES (RANGE / PG)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(unsigned long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* tierwork's header: pid, footprint and hot set; 0 once it is there. */
static int read_header(const char *path, int *pid, unsigned long fp[2], unsigned long hot[2])
{
	char line[512];
	FILE *f = fopen(path, "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "# tierwork pid %d footprint %lx-%lx hot %lx-%lx", pid, &fp[0],
			   &fp[1], &hot[0], &hot[1]) == 5) {
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

/* mm->numa_scan_seq of @pid; -1 when the kernel does not show it. */
static long scan_seq(int pid)
{
	char path[64], line[256];
	long seq = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "mm->numa_scan_seq");

		if (p && (p = strchr(p, ':'))) {
			seq = strtol(p + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return seq;
}

int main(int argc, char **argv)
{
	unsigned long period_ms = 200, fp[2], hot[2], win[2][2];
	unsigned long npages = 0, nranges;
	int pid, nwin = 1, *status;
	void **addrs;
	double t0;

	if (argc < 2)
		goto usage;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--period-ms") && i + 1 < argc)
			period_ms = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--shift"))
			nwin = 2;
		else
			goto usage;
	}
	if (!period_ms)
		goto usage;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (read_header(argv[1], &pid, fp, hot)) {
		if (stop)
			return 1;
		nap_ms(10);
	}
	t0 = now_s();
	win[0][0] = hot[0];
	win[0][1] = hot[1];
	/* tierwork's shift: the hot set's size at half the footprint. */
	win[1][0] = fp[0] + (((fp[1] - fp[0]) / 2) & ~(RANGE - 1));
	win[1][1] = win[1][0] + (hot[1] - hot[0]);
	for (int w = 0; w < nwin; w++)
		npages += (win[w][1] - win[w][0]) / PG;
	nranges = npages / RANGE_PAGES;
	addrs = malloc(npages * sizeof(*addrs));
	status = malloc(npages * sizeof(*status));
	if (!addrs || !status)
		return 1;
	for (int w = 0, k = 0; w < nwin; w++) {
		printf("# hotmap pid %d window %d 0x%lx-0x%lx ranges %lu\n", pid, w, win[w][0],
		       win[w][1], (win[w][1] - win[w][0]) / RANGE);
		for (unsigned long a = win[w][0]; a < win[w][1]; a += PG)
			addrs[k++] = (void *)a;
	}
	fflush(stdout);
	while (!stop) {
		double t = now_s() - t0;
		long seq = scan_seq(pid);

		if (syscall(SYS_move_pages, pid, npages, addrs, NULL, status, 0) < 0) {
			if (errno == ESRCH)
				break;
			fprintf(stderr, "hotmap: move_pages query of pid %d: %s\n", pid,
				strerror(errno));
			return 1;
		}
		printf("%.3f %ld", t, seq);
		for (unsigned long r = 0; r < nranges; r++) {
			unsigned int n0 = 0;

			for (unsigned long p = r * RANGE_PAGES; p < (r + 1) * RANGE_PAGES; p++)
				n0 += status[p] == 0;
			printf(" %u", n0);
		}
		putchar('\n');
		fflush(stdout);
		nap_ms(period_ms);
	}
	return 0;
usage:
	fprintf(stderr, "usage: hotmap WORK_LOG [--period-ms MS] [--shift]\n");
	return 2;
}
