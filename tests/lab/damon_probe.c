// SPDX-License-Identifier: GPL-2.0-only
/*
 * Drives the DAMON source on its own inside the lab guest, for the lab tests
 * (the daemon's main loop is another module):
 *
 *   damon_probe [--feed [--sketch-for GIB]] RUNDIR find-hot MAX_DRAINS PID HOT_START HOT_END [PID ...]
 *	monitor the PIDs and drain until DAMON has found each one's
 *	[HOT_START, HOT_END) (hex): every 2 MiB range of that pid at least
 *	half as hot as its hottest lies inside it or at its edges (precision),
 *	and they cover at least 3/4 of the ranges wholly inside it (recall).  With several
 *	pids this also checks that regions are attributed to the right one.
 *	Exit 0 and print how many drains and seconds it took, 1 if MAX_DRAINS
 *	were not enough
 *   damon_probe RUNDIR hold PID
 *	start monitoring PID and sleep (the test kill -9s it)
 *   damon_probe RUNDIR start-stop
 *	start (cleaning up what a crashed run left) and stop
 *
 * --feed: regions from the damon_aggregated tracepoint (bpf/damon.bpf.c), as
 * tierd takes them once it is idle: the probe switches to it the way tierd
 * does, with an idle pace (2) and back to full pace, before its first drain;
 * it fails (exit 2) if the feed does not start.  Without --feed, regions come
 * from the stat schemes' tried_regions.  A drain never waits for the
 * kdamond: on tried_regions the probe waits for the update a drain asked
 * for (sampler_damon_settle()) and drains again when the source's fd says
 * that a drain came back without regions, as tierd's loop does; with the
 * feed it sleeps FEED_DRAIN_US between drains.  Once
 * the hot regions are found, the feed's wake is checked against the kernel
 * (wake_check(): a wake only for what the probe's own look finds new, and
 * one for everything over an empty table; exit 1 otherwise).
 * --sketch-for GIB: size the program's known-heat sketch for a machine
 * with that much memory (damon.h; 1024 and up: the largest, 2 MiB).
 *
 * Prints the sampler's status line after start and before exit, and after
 * each drain what every scheme's tried_regions held (regions, total_bytes):
 * a target that DAMON reports nothing for, or only idle regions for, shows.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "hot_table.h"
#include "sampler_bpf.h"
#include "sampler_damon.h"
#include "page_geom_read.h"

#define TOPK 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void libbpf_log(int level, const char *msg)
{
	if (level <= LOG_WARNING)
		fprintf(stderr, "libbpf: %s\n", msg);
}

static void status(struct sampler *s, const char *when)
{
	struct sampler_status st;

	sampler_describe(s, &st);
	printf("damon_probe: %s: %s: %s (drains %llu, regions %llu, lost %llu)\n", when,
	       st.name, st.why, (unsigned long long)st.drains, (unsigned long long)st.samples,
	       (unsigned long long)st.lost);
	fflush(stdout);
}

#define MAX_PIDS 8
#define FEED_DRAIN_US 200000	/* two aggregation intervals */
#define WAKE_WAIT_MS 2000	/* twenty aggregations */
#define KNOWN_WAIT_MS 1000
#define WAKE_MIN_BYTES (1 << 20)	/* the bars the probe arms with */
#define WAKE_SHARE 8

static bool use_feed;
static struct page_geom geom; /* the guest kernel's */
#define SCHEMES "/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes"

/*
 * What the last drain left in scheme @i's tried_regions: the number of
 * regions and total_bytes, so that a failure shows which target came back
 * empty.
 */
static void print_tried(size_t i)
{
	char path[256], buf[32] = "?";
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), SCHEMES "/%zu/tried_regions", i);
	d = opendir(path);
	if (!d) {
		printf(" scheme %zu: %s;", i, strerror(errno));
		return;
	}
	while ((de = readdir(d)))
		n += de->d_name[0] >= '0' && de->d_name[0] <= '9';
	closedir(d);
	snprintf(path, sizeof(path), SCHEMES "/%zu/tried_regions/total_bytes", i);
	if (fs_read("/", path, buf, sizeof(buf), NULL) < 0)
		snprintf(buf, sizeof(buf), "?");
	buf[strcspn(buf, "\n")] = '\0';
	printf(" scheme %zu: %zu regions, %s bytes;", i, n, buf);
}

/* A drain as tierd's loop makes it: when it came back without regions (no
 * update was done yet), the source's fd turns readable once one is, and
 * the loop drains again.  Settled after, so that print_tried() sees the
 * update that was read, not one the kernel is rebuilding. */
static int drain(struct sampler *s, struct hot_table *t)
{
	struct pollfd p = { .fd = sampler_fd(s), .events = POLLIN };
	int r = sampler_drain(s, t, now_ns());

	sampler_damon_settle(s);
	if (r >= 0 && p.fd >= 0 && poll(&p, 1, 0) == 1) {
		r = sampler_drain(s, t, now_ns());
		sampler_damon_settle(s);
	}
	return r;
}

struct want {
	pid_t pid;
	uint64_t lo, hi;
};

/*
 * Whether the table shows @w's hot region; prints what it sees.  A range
 * that straddles or touches the region's edge may be warm because a DAMON
 * region spans the edge: only ranges farther than 2 MiB away count against.
 */
static bool found(struct hot_table *t, const struct want *w, struct hot_entry_view *v)
{
	/* Whole PMD ranges inside the region. */
	uint64_t whole = ((w->hi & ~(geom.range - 1)) -
			  ((w->lo + geom.range - 1) & ~(geom.range - 1))) / geom.range;
	size_t n = hot_select_hottest(t, w->pid, 0.0, now_ns(), v, TOPK);
	size_t in = 0, edge = 0, far = 0;

	for (size_t k = 0; k < n && v[k].heat >= v[0].heat / 2; k++) {
		uint64_t a = v[k].addr, e = v[k].addr + v[k].len;

		if (a >= w->lo && e <= w->hi) {
			in++;
		} else if (e + geom.range >= w->lo && a <= w->hi + geom.range) {
			edge++;
		} else {
			if (far++ < 3)
				printf("  pid %d: hot range %#llx-%#llx outside\n", w->pid,
				       (unsigned long long)a, (unsigned long long)e);
		}
	}
	printf("  pid %d: at >= half its top heat, %zu of %llu ranges inside the hot "
	       "region, %zu at its edges, %zu elsewhere\n", w->pid, in,
	       (unsigned long long)whole, edge, far);
	return n && far == 0 && 4 * in >= 3 * whole;
}

/*
 * Arm the program's wake over @t at @t0 and wait up to @wait_ms: 1 when it
 * woke the probe, with the probe's own look at that aggregation (the table
 * at @t0, as the sketch has it) in *@pk; 0 when it did not; -errno.
 */
static int wake_wait(struct sampler *s, const struct hot_table *t, uint64_t t0, int wait_ms,
		     struct sampler_peek *pk)
{
	struct pollfd pfd = { .events = POLLIN };
	uint32_t gen;
	int r;

	memset(pk, 0, sizeof(*pk));
	pfd.fd = sampler_peek_fd(s, &gen);
	r = pfd.fd < 0 ? pfd.fd : sampler_peek_arm(s, t, t0, WAKE_MIN_BYTES, WAKE_SHARE);
	if (r < 0)
		return r;
	r = poll(&pfd, 1, wait_ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	r = sampler_peek(s, t, t0, pk);
	printf("damon_probe: woken %.0f ms after arming; the probe's look: %d, %llu of %llu "
	       "accessed bytes new\n", (double)(now_ns() - t0) / 1e6, r,
	       (unsigned long long)pk->new_bytes, (unsigned long long)pk->accessed_bytes);
	return r < 0 ? r : 1;
}

/* Whether the probe's look finds what a wake needs: the program's bars. */
static bool look_agrees(const struct sampler_peek *pk)
{
	return pk->new_bytes >= WAKE_MIN_BYTES && pk->new_bytes * WAKE_SHARE >= pk->accessed_bytes;
}

/*
 * The program's wake, in the kernel, after the hot regions were found in
 * @t: armed over @t, a wake may come (a region's edges move), but only for
 * an aggregation the probe's own look finds as new; armed over an empty
 * table, the next aggregation with accessed regions is all new heat and
 * must wake the probe.  0 when both held, 1 otherwise.
 */
static int wake_check(struct sampler *s, struct hot_table *t)
{
	struct hot_params hp = { .half_life_ns = 2000000000ull, .max_entries = 16, .geom = geom };
	static uint64_t mem[4096];
	struct sampler_peek pk;
	struct hot_table empty;
	int r;

	/* A few more aggregations into the table: known heat is then several
	 * aggregations' worth, as at tierd's idle ticks. */
	for (int i = 0; i < 3; i++) {
		usleep(FEED_DRAIN_US);
		if (sampler_drain(s, t, now_ns()) < 0)
			return 2;
	}
	r = wake_wait(s, t, now_ns(), KNOWN_WAIT_MS, &pk);
	if (r < 0)
		goto fail;
	if (r == 0)
		printf("damon_probe: armed over the table: no wake in %d ms\n", KNOWN_WAIT_MS);
	else if (!look_agrees(&pk)) {
		printf("damon_probe: the program woke the probe for an aggregation its own "
		       "look finds no new heat in\n");
		return 1;
	}
	if (hot_mem_size(hp.max_entries) > sizeof(mem) ||
	    hot_init(&empty, &hp, mem, sizeof(mem), now_ns()) < 0)
		return 2;
	r = wake_wait(s, &empty, now_ns(), WAKE_WAIT_MS, &pk);
	if (r < 0)
		goto fail;
	if (r == 0) {
		printf("damon_probe: no wake within %d ms of arming over an empty table\n",
		       WAKE_WAIT_MS);
		return 1;
	}
	return look_agrees(&pk) ? 0 : 1;
fail:
	fprintf(stderr, "damon_probe: the wake: %s\n", strerror(-r));
	return 2;
}

static int find_hot(struct sampler *s, const struct want *w, size_t nw, int max)
{
	static struct hot_entry_view v[TOPK];
	struct hot_params hp = { .half_life_ns = 2000000000ull, .max_entries = 16384, .geom = geom };
	struct hot_table t;
	size_t need = hot_mem_size(hp.max_entries);
	void *mem = aligned_alloc(8, need);
	uint64_t t0 = now_ns();
	pid_t pids[MAX_PIDS];
	int r;

	if (!mem || hot_init(&t, &hp, mem, need, t0) < 0)
		return 2;
	for (size_t i = 0; i < nw; i++)
		pids[i] = w[i].pid;
	/* set_targets() wants them sorted. */
	for (size_t i = 1; i < nw; i++)
		for (size_t j = i; j > 0 && pids[j - 1] > pids[j]; j--) {
			pid_t x = pids[j];

			pids[j] = pids[j - 1];
			pids[j - 1] = x;
		}
	/* Settled after each change: a tick hands the kdamond's state change
	 * to the source's worker and a later drain takes it in. */
	r = sampler_set_targets(s, pids, nw);
	sampler_damon_settle(s);
	if (r < 0) {
		fprintf(stderr, "damon_probe: set_targets: %s\n", strerror(-r));
		return 2;
	}
	if (use_feed) {
		struct sampler_status st;

		r = sampler_set_pace(s, 2);
		sampler_damon_settle(s);
		if (r == 0)
			r = sampler_set_pace(s, 1);
		sampler_damon_settle(s);
		sampler_describe(s, &st);
		if (r < 0 || !strstr(st.why, ", regions from the damon_aggregated tracepoint")) {
			fprintf(stderr, "damon_probe: the tracepoint feed did not start: %s%s%s\n",
				st.why, r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
			return 2;
		}
	}
	status(s, "monitoring");
	for (int i = 1; i <= max; i++) {
		bool all = true;

		r = drain(s, &t);
		if (r < 0) {
			fprintf(stderr, "damon_probe: drain: %s\n", strerror(-r));
			return 2;
		}
		printf("damon_probe: drain %d: %d records;", i, r);
		for (size_t k = 0; k < nw && !use_feed; k++)
			print_tried(k);
		printf("\n");
		for (size_t k = 0; k < nw; k++)
			all &= found(&t, &w[k], v);
		if (all) {
			printf("damon_probe: found the hot region%s after %d drains, %.1f s\n",
			       nw > 1 ? "s" : "", i, (double)(now_ns() - t0) / 1e9);
			r = use_feed ? wake_check(s, &t) : 0;
			free(mem);
			return r;
		}
		if (use_feed)
			usleep(FEED_DRAIN_US);
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

	if (page_geom_read("/", NULL, NULL, &geom) < 0) {
		fprintf(stderr, "cannot read the kernel's page sizes\n");
		return 1;
	}
	sampler_damon_params_default(&p, &geom);
	if (argc > 1 && !strcmp(argv[1], "--feed")) {
		use_feed = true;
		argc--;
		argv++;
	}
	if (use_feed && argc > 2 && !strcmp(argv[1], "--sketch-for")) {
		p.mem_bytes = strtoull(argv[2], NULL, 10) << 30;
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: see the top of tests/lab/damon_probe.c\n");
		return 2;
	}
	p.runtime_dir = argv[1];
	sampler_bpf_set_log(libbpf_log);
	if (use_feed) {
		r = damon_feed_bpf_new(NULL, &p.feed);
		if (r < 0) {
			fprintf(stderr, "damon_probe: no feed: %s\n", strerror(-r));
			return 2;
		}
	}
	r = sampler_damon_new(&p, &s);
	if (r == 0)
		r = sampler_start(s, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "damon_probe: start: %s (%s)\n", why, strerror(-r));
		return 2;
	}
	status(s, "started");
	if (!strcmp(argv[2], "find-hot") && argc >= 7 && (argc - 4) % 3 == 0 &&
	    (size_t)(argc - 4) / 3 <= MAX_PIDS) {
		struct want w[MAX_PIDS];
		size_t nw = (size_t)(argc - 4) / 3;

		for (size_t i = 0; i < nw; i++) {
			w[i].pid = atoi(argv[4 + 3 * i]);
			w[i].lo = strtoull(argv[5 + 3 * i], NULL, 16);
			w[i].hi = strtoull(argv[6 + 3 * i], NULL, 16);
		}
		rc = find_hot(s, w, nw, atoi(argv[3]));
	} else if (!strcmp(argv[2], "hold") && argc == 4) {
		pid_t pid = atoi(argv[3]);

		r = sampler_set_targets(s, &pid, 1);
		sampler_damon_settle(s);	/* on, and its pid in the record */
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
