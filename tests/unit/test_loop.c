// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event loop (daemon/loop.c) around the manager with a fake sampler
 * whose fd() is an eventfd: the first tick comes at once; when the fd turns
 * readable (a drain came back without what the source waited for, and it
 * is there now) the next tick comes then, not an interval later; a
 * readiness no drain takes moves one tick, not every one after it.  And a
 * source that peeks without a descriptor (the BPF sampler) is asked every
 * interval_ms while the ticks back off, a peek that finds a hot set
 * bringing the tick.  Topology from a fixture tree.
 *
 *   test_loop FIXTURES_DIR
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "loop.h"
#include "manager.h"
#include "sampler_fake.h"
#include "test.h"

static char tmpdir[] = "/tmp/test_loop.XXXXXX";
static char conf_path[256];
static const char *fixtures_dir;

static struct sampler_fake sf;
static struct sampler_ops wrapped;
static int efd = -1;
static int drains;
static bool drain_takes = true; /* a drain clears the readiness */

static int wrapped_start(struct sampler *s, char *why, size_t len)
{
	sf.started = true;
	return 0;
}

static int wrapped_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	eventfd_t n;

	drains++;
	if (drain_takes)
		eventfd_read(efd, &n);
	return 0;
}

static int wrapped_fd(struct sampler *s)
{
	return efd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run the loop until @want drains or @max_s seconds; the seconds it took. */
static double run_until(struct tierd *d, int want, double max_s)
{
	double start = now_s();

	while (drains < want && now_s() - start < max_s)
		CHECK(sd_event_run(d->event, 100 * 1000) >= 0);
	return now_s() - start;
}

/* tierd with @conf_text on the fixture's topology, its loop armed. */
static void start_loop(struct loop *l, struct tierd *d, struct manager *mgr,
		       const struct manager_ops *ops, const char *conf_text)
{
	static char root[4096];
	FILE *f = fopen(conf_path, "w");

	CHECK(f);
	if (f) {
		fputs(conf_text, f);
		fclose(f);
	}
	snprintf(root, sizeof(root), "%s/topology/dram-cxl", fixtures_dir);
	d->root = root;
	snprintf(d->config_path, sizeof(d->config_path), "%s", conf_path);
	snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s", tmpdir);
	d->no_knobs = true;
	CHECK(loop_open(l, d, mgr) >= 0);
	CHECK_EQ_INT(tierd_init(d), 0);
	CHECK_EQ_INT(manager_init(mgr, d, ops), 0);
	CHECK(loop_arm(l) >= 0);
}

static void test_ready_fd(void)
{
	static const pid_t none[1];
	static struct manager mgr;
	static struct tierd d;
	struct manager_ops ops;
	struct loop l;

	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(efd >= 0);
	sampler_fake_init(&sf, "fake");
	wrapped = *sf.base.ops;
	wrapped.start = wrapped_start;
	wrapped.drain = wrapped_drain;
	wrapped.fd = wrapped_fd;
	sf.base.ops = &wrapped;
	/* No process tracked: no walk of this machine's /proc. */
	ops = (struct manager_ops){ .sampler = &sf.base, .pids = none };

	/* Ticks 30 s apart: any tick within the test is one the fd brought. */
	start_loop(&l, &d, &mgr, &ops, "interval_ms: 30000\nidle_interval_ms: 30000\n");

	/* The first tick at once. */
	run_until(&d, 1, 5);
	CHECK_EQ_INT(drains, 1);
	/* Nothing readable: no tick for a while. */
	run_until(&d, 2, 0.3);
	CHECK_EQ_INT(drains, 1);
	/* Readable: the next tick now. */
	eventfd_write(efd, 1);
	CHECK(run_until(&d, 2, 5) < 1);
	CHECK_EQ_INT(drains, 2);
	/* A readiness the drain leaves moves one tick, and no more. */
	drain_takes = false;
	eventfd_write(efd, 1);
	CHECK(run_until(&d, 3, 5) < 1);
	CHECK_EQ_INT(drains, 3);
	run_until(&d, 4, 0.3);
	CHECK_EQ_INT(drains, 3);

	manager_fini(&mgr);
	tierd_fini(&d);
	loop_close(&l);
	close(efd);
}

static const struct sampler_ops *fake_ops; /* the fake's own */

static int counting_drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	drains++;
	return fake_ops->drain(s, t, now_ns);
}

static void test_timed_peeks(void)
{
	static const pid_t none[1];
	static struct manager mgr;
	static struct tierd d;
	struct manager_ops ops;
	struct loop l;
	double took;

	drains = 0;
	memset(&mgr, 0, sizeof(mgr));
	memset(&d, 0, sizeof(d));
	sampler_fake_init(&sf, "fake");
	fake_ops = sf.base.ops;
	wrapped = *sf.base.ops;
	wrapped.start = wrapped_start;
	wrapped.drain = counting_drain;
	wrapped.peek_arm = NULL;	/* timed, not armed, peeks */
	wrapped.peek_fd = NULL;
	sf.base.ops = &wrapped;
	/* Heat of a process tierd does not track: nothing to move, idle. */
	CHECK_EQ_INT(sampler_fake_push(&sf, 4242, 0x200000, 4096, 1.0), 0);
	ops = (struct manager_ops){ .sampler = &sf.base, .pids = none };

	start_loop(&l, &d, &mgr, &ops, "interval_ms: 100\nidle_interval_ms: 30000\n");

	/* Idle ticks back off (0.1, 0.2, 0.4, 0.8, 1.6 s ...): in 1.5 s four
	 * or five ticks, and peeks every 0.1 s between them that find nothing. */
	run_until(&d, 100, 1.5);
	CHECK(drains <= 5);
	CHECK(sf.peeks >= 6);
	/* A hot set arriving: the next peek brings the tick, well before the
	 * backed-off one. */
	sf.peek_ret = 1;
	sf.peek = (struct sampler_peek){ .accessed_bytes = 64 << 20, .new_bytes = 64 << 20 };
	took = run_until(&d, drains + 1, 5);
	CHECK(took < 0.5);
	CHECK_EQ_U64(d.stats.sampler_wakes_total, 1);

	manager_fini(&mgr);
	tierd_fini(&d);
	loop_close(&l);
}

int main(int argc, char **argv)
{
	fixtures_dir = argc > 1 ? argv[1] : "tests/fixtures";
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(conf_path, sizeof(conf_path), "%s/tierd.yaml", tmpdir);
	RUN(test_ready_fd);
	RUN(test_timed_peeks);
	unlink(conf_path);
	rmdir(tmpdir);
	return TEST_EXIT();
}
