// SPDX-License-Identifier: GPL-2.0-only
/*
 * The copy-thread step (daemon/threads.c) against a copy of
 * tests/fixtures/threads (argv[1]): load in, vm.migrate_copy_* out,
 * restored at exit, an administrator's change respected, nothing written
 * under --no-knobs, nothing done without the knobs, no more threads than
 * the fixture's CPU ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "stages.h"
#include "test.h"

#define SEC 1000000000ull

static char tree[PATH_MAX], src_root[PATH_MAX];

static int copy_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char dst[PATH_MAX * 2], buf[4096];
	int in, out;
	ssize_t n;

	snprintf(dst, sizeof(dst), "%s%s", tree, path + strlen(src_root));
	if (type == FTW_D)
		return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
	in = open(path, O_RDONLY);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s%s", tree, rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		fprintf(stderr, "cannot write %s\n", path);
	close(fd);
}

static const char *get(const char *rel)
{
	static char buf[256];
	char path[PATH_MAX * 2];
	int fd, n;

	snprintf(path, sizeof(path), "%s%s", tree, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "(missing)";
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

/* /proc/stat after another 1000 ticks per CPU at @busy_pct. */
static void advance_cpus(unsigned int busy_pct)
{
	static unsigned long busy = 100, idle = 900;
	char text[512] = "cpu  0 0 0 0 0 0 0 0 0 0\n";

	busy += 10 * busy_pct;
	idle += 1000 - 10 * busy_pct;
	for (int c = 0; c < 4; c++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "cpu%d %lu 0 0 %lu 0 0 0 0 0 0\n", c, busy, idle);
	put("/proc/stat", text);
}

static void psi(const char *avg10)
{
	char text[128];

	snprintf(text, sizeof(text), "some avg10=%s avg60=0.00 avg300=0.00 total=1\n", avg10);
	put("/proc/pressure/cpu", text);
}

static struct tierd_conf conf;

static void setup(struct tierd *d, const char *fixtures, const char *fixture)
{
	char tmpl[] = "/tmp/test_threads.XXXXXX";

	if (tree[0])
		nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(tree, sizeof(tree), "%s", mkdtemp(tmpl));
	snprintf(src_root, sizeof(src_root), "%s/%s", fixtures, fixture);
	nftw(src_root, copy_one, 16, FTW_PHYS);
	mkdir(strcat(strcpy((char[PATH_MAX]){ 0 }, tree), "/run"), 0755);
	memset(d, 0, sizeof(*d));
	d->root = tree;
	if ((size_t)snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%.200s/run", tree) >=
	    sizeof(d->runtime_dir))
		fprintf(stderr, "runtime dir too long\n");
	conf_defaults(&conf);
	d->conf = &conf;
	d->topo.nr_nodes = 2;
	d->topo.nodes[0].id = 0;
	d->topo.nodes[1].id = 1;
}

#define MT "/proc/sys/vm/migrate_copy_mt"
#define THREADS "/proc/sys/vm/migrate_copy_threads"
#define PULL "/proc/sys/vm/migrate_copy_pull"

static const char *fixtures;

static void test_controller_writes_knobs(void)
{
	struct tierd d;
	struct threads *t;

	setup(&d, fixtures, "threads");
	CHECK_EQ_INT(threads_new(&d, &d.stats, &t), 0);
	/* coexist by default: NUMA balancing left as found. */
	CHECK_EQ_STR(get("/proc/sys/kernel/numa_balancing"), "2\n");
	/* From the start, before the first migration: multi-threaded copy
	 * on at the kernel's 4 threads, pulled by node 0's CPUs (node 1 has
	 * none). */
	CHECK_EQ_STR(get(MT), "1");
	CHECK_EQ_STR(get(THREADS), "4\n");
	CHECK_EQ_STR(get(PULL), "1");
	CHECK_EQ_INT(d.stats.copy_threads, 4);
	/* Idle: held. */
	advance_cpus(10);
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 1 * SEC), 0);
	CHECK_EQ_STR(get(THREADS), "4\n");
	CHECK_EQ_INT(d.stats.copy_threads, 4);
	advance_cpus(10);
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 2 * SEC), 0);
	CHECK_EQ_STR(get(THREADS), "4\n");
	/* CPU pressure (PSI 90%), CPUs half busy: halved. */
	advance_cpus(50);
	psi("90.00");
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 3 * SEC), 0);
	CHECK_EQ_STR(get(THREADS), "2");
	CHECK_EQ_INT(d.stats.copy_threads, 2);
	/* No CPU below busy_cpu_pct (75): one thread. */
	advance_cpus(100);
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 3 * SEC + SEC / 2), 0);
	CHECK_EQ_STR(get(THREADS), "1");
	/* Load gone: back to 4. */
	advance_cpus(5);
	psi("0.20");
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 4 * SEC), 0);
	CHECK_EQ_STR(get(THREADS), "4");
	/* An administrator sets 6: tierd leaves the copy knobs alone. */
	put(THREADS, "6\n");
	advance_cpus(5);
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 5 * SEC), 0);
	CHECK_EQ_STR(get(THREADS), "6\n");
	CHECK_EQ_INT(d.stats.copy_threads, 0);
	CHECK_EQ_STR(d.stats.knobs_foreign, "vm.migrate_copy_threads");
	advance_cpus(100);
	psi("90.00");
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 6 * SEC), 0);
	CHECK_EQ_STR(get(THREADS), "6\n");
	/* Exit: tierd's values back to the originals; the admin's stays. */
	threads_restore_knobs(t, d.runtime_dir);
	CHECK_EQ_STR(get(MT), "0");
	CHECK_EQ_STR(get(PULL), "0");
	CHECK_EQ_STR(get(THREADS), "6\n");
	CHECK_EQ_STR(get("/run/knobs.state"), "(missing)");
	threads_free(t);
}

static void test_takeover_no_knobs_and_crash(void)
{
	struct tierd d;
	struct threads *t;

	/* --no-knobs: nothing written, even with takeover. */
	setup(&d, fixtures, "threads");
	d.no_knobs = true;
	conf.kernel.numa_balancing = CONF_NUMAB_TAKEOVER;
	CHECK_EQ_INT(threads_new(&d, &d.stats, &t), 0);
	threads_step(t, &d, &d.stats, 1 * SEC);
	advance_cpus(10);
	threads_step(t, &d, &d.stats, 2 * SEC);
	CHECK_EQ_STR(get(MT), "0\n");
	CHECK_EQ_STR(get("/proc/sys/kernel/numa_balancing"), "2\n");
	threads_restore_knobs(t, d.runtime_dir);
	threads_free(t);

	/* takeover: NUMA balancing off; the run "crashes" (no restore);
	 * the next start puts it back from the state file. */
	d.no_knobs = false;
	CHECK_EQ_INT(threads_new(&d, &d.stats, &t), 0);
	CHECK_EQ_STR(get("/proc/sys/kernel/numa_balancing"), "0");
	threads_free(t);
	conf.kernel.numa_balancing = CONF_NUMAB_COEXIST;
	CHECK_EQ_INT(threads_new(&d, &d.stats, &t), 0);
	CHECK_EQ_STR(get("/proc/sys/kernel/numa_balancing"), "2");
	/* What the state file lists now is this run's copy knobs only. */
	CHECK(strstr(get("/run/knobs.state"), "numa_balancing") == NULL);
	CHECK(strstr(get("/run/knobs.state"), "vm.migrate_copy_mt 0 1") != NULL);
	threads_restore_knobs(t, d.runtime_dir);
	CHECK_EQ_STR(get(MT), "0");
	CHECK_EQ_STR(get("/run/knobs.state"), "(missing)");
	threads_free(t);
}

static void test_vanilla(void)
{
	struct tierd d;
	struct threads *t;

	setup(&d, fixtures, "threads");
	remove(strcat(strcpy((char[PATH_MAX * 2]){ 0 }, tree), MT));
	CHECK_EQ_INT(threads_new(&d, &d.stats, &t), 0);
	threads_step(t, &d, &d.stats, 1 * SEC);
	advance_cpus(10);
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 2 * SEC), 0);
	CHECK_EQ_INT(d.stats.copy_threads, 0);
	CHECK_EQ_STR(get(THREADS), "4\n");
	threads_free(t);
}

/* Vanilla kernel (controller off), takeover: an administrator turns NUMA
 * balancing back on; tierd notices on its next tick, lists it, never
 * writes it again, and leaves it at exit. */
static void test_admin_numa_balancing(void)
{
	struct tierd d;
	struct threads *t;

	setup(&d, fixtures, "threads");
	remove(strcat(strcpy((char[PATH_MAX * 2]){ 0 }, tree), MT));
	conf.kernel.numa_balancing = CONF_NUMAB_TAKEOVER;
	CHECK_EQ_INT(threads_new(&d, &d.stats, &t), 0);
	CHECK_EQ_STR(get("/proc/sys/kernel/numa_balancing"), "0");
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 1 * SEC), 0);
	CHECK_EQ_STR(d.stats.knobs_foreign, "");
	put("/proc/sys/kernel/numa_balancing", "1\n");
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 2 * SEC), 0);
	CHECK_EQ_STR(d.stats.knobs_foreign, "kernel.numa_balancing");
	CHECK_EQ_INT(threads_step(t, &d, &d.stats, 3 * SEC), 0);
	CHECK_EQ_STR(get("/proc/sys/kernel/numa_balancing"), "1\n");
	threads_restore_knobs(t, d.runtime_dir);
	CHECK_EQ_STR(get("/proc/sys/kernel/numa_balancing"), "1\n");
	CHECK_EQ_STR(get("/run/knobs.state"), "(missing)");
	threads_free(t);
	conf.kernel.numa_balancing = CONF_NUMAB_COEXIST;
}

/* What the daemon logs from @fn (it logs to stderr), into @buf. */
static void logged(void (*fn)(void *), void *arg, char *buf, size_t size)
{
	char path[] = "/tmp/test_threads_log.XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	fflush(stderr);
	dup2(fd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	buf[n < 0 ? 0 : n] = '\0';
	close(fd);
	unlink(path);
}

struct run {
	struct tierd *d;
	struct threads *t;
	int r;
};

static void run_new(void *arg)
{
	struct run *x = arg;

	x->r = threads_new(x->d, &x->d->stats, &x->t);
}

static void run_reload(void *arg)
{
	struct run *x = arg;

	threads_reload_apply(x->t, x->d);
}

/* A reload, then a tick at @now_ns; what the reload logged. */
static const char *reload_step(struct run *x, uint64_t now_ns)
{
	static char log[1024];

	logged(run_reload, x, log, sizeof(log));
	advance_cpus(10);
	CHECK_EQ_INT(threads_step(x->t, x->d, &x->d->stats, now_ns), 0);
	return log;
}

/*
 * A 2-CPU machine (cpu/possible "0-1": nr_cpu_ids 2) with the GPU config's
 * fixed 16: the kernel takes 2 at most, so 2 it is, said once at start,
 * and again on a reload only when the bounds change.
 */
static void test_cpu_limit(void)
{
	struct tierd d;
	struct run x = { .d = &d };
	char log[1024];

	setup(&d, fixtures, "threads");
	put("/sys/devices/system/cpu/possible", "0-1\n");
	conf.copy_threads.mode = CONF_COPY_FIXED;
	conf.copy_threads.min = 4;
	conf.copy_threads.max = 16;
	logged(run_new, &x, log, sizeof(log));
	CHECK_EQ_INT(x.r, 0);
	CHECK(strstr(log, "copy_threads.min 4 and max 16 are above this machine's 2 CPUs: at most 2 copy threads\n"));
	CHECK_EQ_STR(get(MT), "1");
	CHECK_EQ_STR(get(THREADS), "2");
	CHECK_EQ_INT(d.stats.copy_threads, 2);
	CHECK_EQ_INT(d.stats.copy_threads_max, 2);
	CHECK_EQ_INT(d.stats.copy_threads_cpus, 2);
	/* The same bounds again: nothing said. */
	CHECK_EQ_STR(reload_step(&x, 1 * SEC), "");
	CHECK_EQ_STR(get(THREADS), "2");
	conf.copy_threads.min = 1;
	CHECK_EQ_STR(reload_step(&x, 2 * SEC),
		     "copy_threads.max 16 is above this machine's 2 CPUs: at most 2 copy threads\n");
	CHECK_EQ_STR(get(THREADS), "2");
	/* Within the limit: silent, and 1 is written. */
	conf.copy_threads.max = 1;
	CHECK_EQ_STR(reload_step(&x, 3 * SEC), "");
	CHECK_EQ_STR(get(THREADS), "1");
	CHECK_EQ_INT(d.stats.copy_threads_max, 1);
	threads_restore_knobs(x.t, d.runtime_dir);
	CHECK_EQ_STR(get(THREADS), "4");
	threads_free(x.t);

	/* No cpu/possible: the CPUs sysconf() counts, and that is said. */
	setup(&d, fixtures, "threads");
	remove(strcat(strcpy((char[PATH_MAX * 2]){ 0 }, tree), "/sys/devices/system/cpu/possible"));
	logged(run_new, &x, log, sizeof(log));
	CHECK_EQ_INT(x.r, 0);
	CHECK(strstr(log, "/sys/devices/system/cpu/possible: copy threads are bounded by the "));
	CHECK_EQ_INT(d.stats.copy_threads_cpus, sysconf(_SC_NPROCESSORS_CONF));
	threads_restore_knobs(x.t, d.runtime_dir);
	threads_free(x.t);
	conf_defaults(&conf);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 1;
	}
	fixtures = argv[1];
	RUN(test_controller_writes_knobs);
	RUN(test_takeover_no_knobs_and_crash);
	RUN(test_vanilla);
	RUN(test_admin_numa_balancing);
	RUN(test_cpu_limit);
	nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return TEST_EXIT();
}
