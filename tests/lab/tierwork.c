// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lab's promotion workload: a footprint F of anonymous memory placed
 * on one node, several threads touching only a hot set H inside it
 * (uniformly, or Zipf-skewed over H's pages), optionally moving the hot set
 * to another part of F halfway.  It reports, every --report-ms, its
 * throughput and where its hot set is -- read with move_pages(2) node
 * queries on its own pages, never taken from tierd:
 *
 *   # tierwork pid P footprint 0xA-0xB hot 0xC-0xD pages N
 *   t_s ops_per_s hot_node0_pct hot_node1_pct hot_other_pct
 *   0.500 1234567 0.0 100.0 0.0
 *   ...
 *
 * The header line comes once the whole footprint is populated (on --node),
 * so a test can start tierd after it.  A line "# shift at T_S hot 0xE-0xF"
 * marks the move of the hot set.  SIGTERM or SIGINT, or --duration, ends it
 * with "# done ops N".
 *
 * --verify (the fault tests') makes every byte checkable: the footprint is
 * filled with a known pattern; thread T adds 1 to word T of the pages it
 * picks and counts, in private memory, how often it did so per page.  After
 * "# done" it compares every word of the footprint with pattern + count:
 *
 *   # verify ok bytes B increments I          (exit 0)
 *   # verify FAILED words W first 0xADDR ...  (exit 1)
 *
 * A lost write, a page copied while being written, a page swapped for
 * another: each shows up as a wrong word.
 *
 * --hold-every K makes every Kth page of the hot set (its first page, its
 * K+1st, ...) one that no kernel can migrate: it is spliced into a pipe
 * that nobody reads (vmsplice(2)), whose buffer holds a reference on the
 * page, and migration gives up on a page with more references than its
 * mappings explain (on the lab's vanilla kernel a plain move_pages(2) of
 * such a hot set moves every other page, none of these, and pgmigrate_fail
 * rises by one per held page).  The workload goes on touching the held pages
 * like the others.  Not with --thp (a reference holds the whole THP) nor
 * --shift-at.  The header line then ends with "hold every K held M" and each
 * progress line has three more columns, the movable pages' (the hot set less
 * the held ones) share on node 0 and the held pages' shares on node 0 and
 * on node 1 (a page that a migration is trying to move at that moment is on
 * neither: its query answers -ENOENT):
 *
 *   t_s ops_per_s hot_node0_pct hot_node1_pct hot_other_pct movable_node0_pct held_node0_pct held_node1_pct
 *
 *   tierwork [--footprint-mib F] [--hot-mib H] [--threads N] [--node NODE]
 *            [--dist uniform|zipf] [--zipf-s S] [--thp] [--duration S]
 *            [--shift-at S] [--report-ms MS] [--verify] [--hold-every K]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <numaif.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PG 4096ul
#define MiB (1ul << 20)
#define WORDS_PER_PAGE (PG / sizeof(uint64_t))
#define MAX_THREADS 64	/* < WORDS_PER_PAGE: --verify gives each its own word */

static volatile sig_atomic_t stop;
static char *base;
static size_t footprint, hot_bytes, hot_pages;
static _Atomic size_t hot_off; /* where the hot set starts in the footprint */
static double *zipf_cdf; /* NULL: uniform */
static bool verify_mode;
static size_t hold_every; /* --hold-every; 0: none held */

struct worker {
	pthread_t tid;
	int slot;
	uint64_t seed;
	uint32_t *count;	/* --verify: per footprint page, increments of word @slot */
	_Alignas(64) _Atomic uint64_t ops;
	char pad[56];
};

static struct worker workers[MAX_THREADS];

/* --verify: what word I of the footprint holds before any increment. */
static uint64_t pattern(size_t word)
{
	uint64_t z = word + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* The page index (0 .. hot_pages-1) of one access. */
static size_t pick(uint64_t *seed)
{
	double u;
	size_t lo = 0, hi = hot_pages - 1;

	if (!zipf_cdf)
		return xorshift(seed) % hot_pages;
	u = (double)(xorshift(seed) >> 11) / (double)(1ull << 53);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Spread the ranks over H, so the hottest pages are not all in its
	 * first megabytes: rank r -> page r * a mod n for an a coprime to n. */
	return (lo * 2654435761ull) % hot_pages;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	while (!stop) {
		for (int i = 0; i < 1024; i++) {
			size_t pgi = pick(&w->seed);
			volatile uint64_t *p = (volatile uint64_t *)(base + hot_off + pgi * PG +
								   (w->seed & 0xfc0));

			*p = *p + 1;
		}
		atomic_fetch_add_explicit(&w->ops, 1024, memory_order_relaxed);
	}
	return NULL;
}

/* --verify's worker: its own word of each page, every increment counted. */
static void *work_counted(void *arg)
{
	struct worker *w = arg;

	while (!stop) {
		for (int i = 0; i < 1024; i++) {
			size_t pg = hot_off / PG + pick(&w->seed);
			volatile uint64_t *p = (volatile uint64_t *)(base + pg * PG) + w->slot;

			*p = *p + 1;
			w->count[pg]++;
		}
		atomic_fetch_add_explicit(&w->ops, 1024, memory_order_relaxed);
	}
	return NULL;
}

static void on_signal(int sig)
{
	stop = 1;
}

/* Share of the hot set's pages per node: [0], [1], other (not present,
 * other nodes); with --hold-every, [3] the movable pages' share on node 0,
 * [4] and [5] the held pages' shares on node 0 and node 1. */
static void residency(void **addrs, int *status, double pct[6])
{
	size_t cnt[3] = { 0 }, movable0 = 0, held0 = 0, held1 = 0, held = 0;
	size_t off = hot_off;

	for (size_t i = 0; i < hot_pages; i++)
		addrs[i] = base + off + i * PG;
	if (syscall(SYS_move_pages, 0, hot_pages, addrs, NULL, status, 0) < 0) {
		for (int k = 0; k < 6; k++)
			pct[k] = -1;
		return;
	}
	for (size_t i = 0; i < hot_pages; i++) {
		cnt[status[i] == 0 ? 0 : status[i] == 1 ? 1 : 2]++;
		if (!hold_every)
			continue;
		if (i % hold_every) {
			movable0 += status[i] == 0;
		} else {
			held++;
			held0 += status[i] == 0;
			held1 += status[i] == 1;
		}
	}
	for (int k = 0; k < 3; k++)
		pct[k] = 100.0 * cnt[k] / hot_pages;
	pct[3] = held < hot_pages ? 100.0 * movable0 / (hot_pages - held) : 0;
	pct[4] = held ? 100.0 * held0 / held : 0;
	pct[5] = held ? 100.0 * held1 / held : 0;
}

/*
 * --hold-every: splice every hold_every-th page of the hot set into pipes
 * that stay open and unread, a reference per page held by a pipe buffer.
 * Pipes of 1 MiB (256 pages; F_SETPIPE_SZ, which root may raise past
 * fs.pipe-max-size), or of what the kernel grants.  Returns the pages held,
 * or -1 with the reason printed.
 */
static long hold_pages(void)
{
	struct iovec iov[256];
	size_t i = 0, held = 0;

	while (i < hot_pages) {
		int fd[2], cap;
		size_t n = 0;
		ssize_t r;

		if (pipe(fd) < 0) {
			perror("tierwork: pipe");
			return -1;
		}
		cap = fcntl(fd[1], F_SETPIPE_SZ, 1 << 20);
		if (cap < 0)
			cap = fcntl(fd[1], F_GETPIPE_SZ);
		cap = cap < 0 ? 1 : (int)(cap / PG);
		for (; i < hot_pages && n < (size_t)cap && n < 256; i += hold_every)
			iov[n++] = (struct iovec){ base + hot_off + i * PG, PG };
		r = vmsplice(fd[1], iov, n, SPLICE_F_NONBLOCK);
		if (r != (ssize_t)(n * PG)) {
			fprintf(stderr, "tierwork: vmsplice of %zu pages: %s\n", n,
				r < 0 ? strerror(errno) : "short");
			return -1;
		}
		held += n;
	}
	return (long)held;
}

/* --verify: every word against pattern + the increments; 0 when all match. */
static int verify(int nthreads)
{
	const uint64_t *word = (const uint64_t *)base;
	size_t words = footprint / sizeof(uint64_t), bad = 0, first = 0;
	uint64_t incs = 0;

	for (size_t i = 0; i < words; i++) {
		size_t pg = i / WORDS_PER_PAGE, slot = i % WORDS_PER_PAGE;
		uint64_t want = pattern(i);

		if (slot < (size_t)nthreads) {
			want += workers[slot].count[pg];
			incs += workers[slot].count[pg];
		}
		if (word[i] != want && !bad++)
			first = i;
	}
	if (bad) {
		printf("# verify FAILED words %zu first %p holds 0x%llx want 0x%llx\n", bad,
		       (void *)(word + first), (unsigned long long)word[first],
		       (unsigned long long)pattern(first));
		return 1;
	}
	printf("# verify ok bytes %zu increments %llu\n", footprint, (unsigned long long)incs);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: tierwork [--footprint-mib F] [--hot-mib H] [--threads N] "
			"[--node NODE] [--dist uniform|zipf] [--zipf-s S] [--thp] "
			"[--duration S] [--shift-at S] [--report-ms MS] [--verify] "
			"[--hold-every K]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "footprint-mib", 1, NULL, 'f' }, { "hot-mib", 1, NULL, 'h' },
		{ "threads", 1, NULL, 't' },	   { "node", 1, NULL, 'n' },
		{ "dist", 1, NULL, 'd' },	   { "zipf-s", 1, NULL, 's' },
		{ "thp", 0, NULL, 'T' },	   { "duration", 1, NULL, 'D' },
		{ "shift-at", 1, NULL, 'S' },	   { "report-ms", 1, NULL, 'r' },
		{ "verify", 0, NULL, 'V' },	   { "hold-every", 1, NULL, 'H' },
		{ 0 }
	};
	size_t f_mib = 1024, h_mib = 256;
	int nthreads = 4, node = 1, thp = 0, c;
	double zipf_s = 0.99, duration = 0, shift_at = 0;
	unsigned long report_ms = 500, mask;
	bool zipf = false, shifted = false;
	uint64_t t0, last_t, last_ops = 0, total;
	void **addrs;
	int *status;
	size_t map_len;
	long held = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': f_mib = strtoul(optarg, NULL, 0); break;
		case 'h': h_mib = strtoul(optarg, NULL, 0); break;
		case 't': nthreads = atoi(optarg); break;
		case 'n': node = atoi(optarg); break;
		case 'd':
			if (!strcmp(optarg, "zipf"))
				zipf = true;
			else if (strcmp(optarg, "uniform"))
				usage();
			break;
		case 's': zipf_s = atof(optarg); break;
		case 'T': thp = 1; break;
		case 'D': duration = atof(optarg); break;
		case 'S': shift_at = atof(optarg); break;
		case 'r': report_ms = strtoul(optarg, NULL, 0); break;
		case 'V': verify_mode = true; break;
		case 'H': hold_every = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!h_mib || h_mib > f_mib || nthreads < 1 || nthreads > MAX_THREADS || node < 0 ||
	    node > 63 || !report_ms || (shift_at > 0 && 2 * h_mib > f_mib) ||
	    (hold_every && (shift_at > 0 || thp)))
		usage();
	footprint = f_mib * MiB;
	hot_bytes = h_mib * MiB;
	hot_pages = hot_bytes / PG;

	/* 2 MiB aligned, so THPs can form when asked. */
	map_len = footprint + 2 * MiB;
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("tierwork: mmap");
		return 1;
	}
	base = (char *)(((uintptr_t)base + 2 * MiB - 1) & ~(2 * MiB - 1));
	madvise(base, footprint, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	mask = 1ul << node;
	if (mbind(base, footprint, MPOL_BIND, &mask, 64, 0) < 0) {
		fprintf(stderr, "tierwork: mbind to node %d: %s\n", node, strerror(errno));
		return 1;
	}
	if (verify_mode) {
		for (size_t i = 0; i < footprint / sizeof(uint64_t); i++)
			((uint64_t *)base)[i] = pattern(i);
	} else {
		for (size_t o = 0; o < footprint; o += PG)
			base[o] = 1;
	}
	/* Placed; from now on where pages go is the kernel's and tierd's call. */
	mbind(base, footprint, MPOL_DEFAULT, NULL, 0, 0);

	if (zipf) {
		double sum = 0;

		zipf_cdf = malloc(hot_pages * sizeof(*zipf_cdf));
		if (!zipf_cdf)
			return 1;
		for (size_t i = 0; i < hot_pages; i++) {
			sum += 1.0 / pow((double)(i + 1), zipf_s);
			zipf_cdf[i] = sum;
		}
		for (size_t i = 0; i < hot_pages; i++)
			zipf_cdf[i] /= sum;
	}
	addrs = malloc(hot_pages * sizeof(*addrs));
	status = malloc(hot_pages * sizeof(*status));
	if (!addrs || !status)
		return 1;
	for (int i = 0; verify_mode && i < nthreads; i++) {
		workers[i].slot = i;
		workers[i].count = calloc(footprint / PG, sizeof(uint32_t));
		if (!workers[i].count)
			return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	hot_off = 0;
	if (hold_every && (held = hold_pages()) < 0)
		return 1;
	printf("# tierwork pid %d footprint 0x%lx-0x%lx hot 0x%lx-0x%lx pages %zu threads %d %s%s%s",
	       (int)getpid(), (unsigned long)(uintptr_t)base,
	       (unsigned long)(uintptr_t)(base + footprint), (unsigned long)(uintptr_t)base,
	       (unsigned long)(uintptr_t)(base + hot_bytes), hot_pages, nthreads,
	       zipf ? "zipf" : "uniform", thp ? " thp" : "", verify_mode ? " verify" : "");
	if (hold_every)
		printf(" hold every %zu held %ld", hold_every, held);
	printf("\nt_s ops_per_s hot_node0_pct hot_node1_pct hot_other_pct%s\n",
	       hold_every ? " movable_node0_pct held_node0_pct held_node1_pct" : "");
	fflush(stdout);
	for (int i = 0; i < nthreads; i++) {
		workers[i].seed = 0x9e3779b97f4a7c15ull * (i + 1);
		pthread_create(&workers[i].tid, NULL, verify_mode ? work_counted : work,
			       &workers[i]);
	}
	t0 = last_t = now_ns();
	while (!stop) {
		uint64_t t, ops = 0;
		double pct[6], el;
		struct timespec ts = { report_ms / 1000, (report_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
		t = now_ns();
		for (int i = 0; i < nthreads; i++)
			ops += atomic_load_explicit(&workers[i].ops, memory_order_relaxed);
		el = (t - t0) / 1e9;
		residency(addrs, status, pct);
		printf("%.3f %.0f %.1f %.1f %.1f", el, (ops - last_ops) * 1e9 / (t - last_t),
		       pct[0], pct[1], pct[2]);
		if (hold_every)
			printf(" %.2f %.2f %.2f", pct[3], pct[4], pct[5]);
		putchar('\n');
		fflush(stdout);
		last_ops = ops;
		last_t = t;
		if (shift_at > 0 && !shifted && el >= shift_at) {
			/* The second half of the footprint, away from the old set. */
			hot_off = (footprint / 2) & ~(2 * MiB - 1);
			shifted = true;
			printf("# shift at %.3f hot 0x%lx-0x%lx\n", el,
			       (unsigned long)(uintptr_t)(base + hot_off),
			       (unsigned long)(uintptr_t)(base + hot_off + hot_bytes));
			fflush(stdout);
		}
		if (duration > 0 && el >= duration)
			stop = 1;
	}
	total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(workers[i].tid, NULL);
		total += workers[i].ops;
	}
	printf("# done ops %llu\n", (unsigned long long)total);
	return verify_mode ? verify(nthreads) : 0;
}
