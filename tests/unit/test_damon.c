// SPDX-License-Identifier: GPL-2.0-only
/*
 * The DAMON source against a fixture admin directory.  The write hook plays
 * the kernel's part the way mm/damon/sysfs*.c does: directories appear when
 * an nr_* file is written, "on"/"off"/"commit" change state and pid, and
 * "update_schemes_tried_regions" fills each scheme's tried_regions from the
 * regions the test planted.  Every write is logged and the log compared.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hot_table.h"
#include "idle.h"
#include "sampler_damon.h"
#include "test.h"
#include "test_geom.h"

static char admin[] = "/tmp/tierd-damon-XXXXXX";
static char rundir[] = "/tmp/tierd-run-XXXXXX";
static char procroot[64];	/* admin/proc: the kdamond's /proc/PID/stat */
static char log_buf[16384];

/* Regions each scheme reports at the next update: start, end, nr_accesses. */
struct region {
	int scheme;
	uint64_t start, end, nr_accesses;
};
static const struct region *planted;
static size_t nplanted;

static void put(const char *rel, const char *text)
{
	char path[1024], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", admin, rel);
	for (slash = strchr(path + strlen(admin) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		CHECK(!"fixture write");
		return;
	}
	fputs(text, f);
	fclose(f);
}

static void get(const char *rel, char *buf, size_t len)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", admin, rel);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static void rm_rf(const char *dir)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* A kdamond slow to take a state change: "commit", "on" and "off" sleep
 * 300 ms in the kernel (damon_sysfs_handle_cmd()'s polls) when written from
 * the tick's thread, the one that runs main(). */
static bool slow_commit;
static pthread_t tick_thread;
static int slow_waits;

static void slow_state(const char *rel, const char *value)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	size_t len = strlen(rel);

	if (!slow_commit || len < 6 || strcmp(rel + len - 6, "/state") != 0 ||
	    !pthread_equal(pthread_self(), tick_thread))
		return;
	if (!strcmp(value, "commit") || !strcmp(value, "on") || !strcmp(value, "off")) {
		slow_waits++;
		nanosleep(&ts, NULL);
	}
}

static void kernel(const char *rel, const char *value, void *arg)
{
	char path[1024], base[512];
	unsigned long n = strtoul(value, NULL, 10);
	int k;
	const char *tail;

	strncat(log_buf, rel, sizeof(log_buf) - strlen(log_buf) - 1);
	strncat(log_buf, "=", sizeof(log_buf) - strlen(log_buf) - 1);
	strncat(log_buf, value, sizeof(log_buf) - strlen(log_buf) - 1);
	strncat(log_buf, "\n", sizeof(log_buf) - strlen(log_buf) - 1);
	slow_state(rel, value);

	if (!strcmp(rel, "kdamonds/nr_kdamonds")) {
		snprintf(path, sizeof(path), "%s/kdamonds/0", admin);
		rm_rf(path);
		for (unsigned long i = 0; i < n; i++) {
			snprintf(base, sizeof(base), "kdamonds/%lu/state", i);
			put(base, "off\n");
			snprintf(base, sizeof(base), "kdamonds/%lu/pid", i);
			put(base, "-1\n");
			snprintf(base, sizeof(base), "kdamonds/%lu/contexts/nr_contexts", i);
			put(base, "0\n");
		}
		return;
	}
	if (sscanf(rel, "kdamonds/%d/", &k) != 1)
		return;
	tail = strchr(rel + strlen("kdamonds/"), '/') + 1;
	if (!strcmp(tail, "state")) {
		snprintf(base, sizeof(base), "kdamonds/%d/pid", k);
		if (!strcmp(value, "on") || !strcmp(value, "commit")) {
			put(base, "4242\n");
			snprintf(base, sizeof(base), "kdamonds/%d/state", k);
			put(base, "on\n");
		} else if (!strcmp(value, "off")) {
			put(base, "-1\n");
		} else if (!strcmp(value, "update_schemes_tried_regions")) {
			snprintf(base, sizeof(base), "kdamonds/%d/state", k);
			put(base, "on\n");
			for (size_t i = 0; i < nplanted; i++) {
				const struct region *r = &planted[i];
				char v[32];

				snprintf(base, sizeof(base), "kdamonds/%d/contexts/0/schemes/%d/"
					 "tried_regions/%zu/", k, r->scheme, i);
				snprintf(path, sizeof(path), "%sstart", base);
				snprintf(v, sizeof(v), "%llu\n", (unsigned long long)r->start);
				put(path, v);
				snprintf(path, sizeof(path), "%send", base);
				snprintf(v, sizeof(v), "%llu\n", (unsigned long long)r->end);
				put(path, v);
				snprintf(path, sizeof(path), "%snr_accesses", base);
				snprintf(v, sizeof(v), "%llu\n", (unsigned long long)r->nr_accesses);
				put(path, v);
				snprintf(path, sizeof(path), "%sage", base);
				put(path, "3\n");
			}
		}
		return;
	}
	if (!strcmp(tail, "contexts/nr_contexts")) {
		static const char *const files[] = {
			"operations", "monitoring_attrs/intervals/sample_us",
			"monitoring_attrs/intervals/aggr_us", "monitoring_attrs/intervals/update_us",
			"monitoring_attrs/nr_regions/min", "monitoring_attrs/nr_regions/max",
			"targets/nr_targets", "schemes/nr_schemes",
		};
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(path, sizeof(path), "kdamonds/%d/contexts/0/%s", k, files[i]);
			put(path, "0\n");
		}
		return;
	}
	if (!strcmp(tail, "contexts/0/targets/nr_targets")) {
		for (unsigned long i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "kdamonds/%d/contexts/0/targets/%lu/pid_target",
				 k, i);
			put(path, "0\n");
		}
		return;
	}
	if (!strcmp(tail, "contexts/0/schemes/nr_schemes")) {
		static const char *const files[] = {
			"action", "access_pattern/sz/min", "access_pattern/sz/max",
			"access_pattern/nr_accesses/min", "access_pattern/nr_accesses/max",
			"access_pattern/age/min", "access_pattern/age/max", "filters/nr_filters",
			"tried_regions/total_bytes",
		};
		for (unsigned long i = 0; i < n; i++)
			for (size_t j = 0; j < sizeof(files) / sizeof(files[0]); j++) {
				snprintf(path, sizeof(path), "kdamonds/%d/contexts/0/schemes/%lu/%s",
					 k, i, files[j]);
				put(path, "0\n");
			}
		return;
	}
	if (strstr(tail, "/filters/nr_filters")) {
		static const char *const files[] = { "type", "matching", "damon_target_idx" };

		for (size_t j = 0; j < 3; j++) {
			snprintf(path, sizeof(path), "%.*s/0/%s",
				 (int)(strlen(rel) - strlen("/nr_filters")), rel, files[j]);
			put(path, "0\n");
		}
	}
}

/* The kernel's mutex_trylock(&damon_sysfs_lock) failing: the next busy_left
 * accesses of busy_rel (a write when busy_write) return -EBUSY. */
static const char *busy_rel;
static bool busy_write;
static int busy_left, busy_seen;

/* A kdamond slow to update tried_regions: the write that asks for it
 * sleeps in the kernel until the test lets it go (or 3 s pass). */
static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slow_cond = PTHREAD_COND_INITIALIZER;
static bool slow_held;
static int slow_reads;	/* of the state file, while held */

static void slow_hold(const char *rel, bool write)
{
	struct timespec until;

	if (strcmp(rel, "kdamonds/0/state") != 0)
		return;
	pthread_mutex_lock(&slow_lock);
	if (!write && slow_held)
		slow_reads++;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	while (write && slow_held &&
	       pthread_cond_timedwait(&slow_cond, &slow_lock, &until) == 0)
		;
	pthread_mutex_unlock(&slow_lock);
}

static void slow_set(bool held)
{
	pthread_mutex_lock(&slow_lock);
	slow_held = held;
	slow_reads = 0;
	pthread_cond_broadcast(&slow_cond);
	pthread_mutex_unlock(&slow_lock);
}

static int busy(const char *rel, bool write, void *arg)
{
	slow_hold(rel, write);
	if (!busy_rel || strcmp(rel, busy_rel) != 0 || write != busy_write || busy_left <= 0)
		return 0;
	busy_left--;
	busy_seen++;
	return -EBUSY;
}

static void set_busy(const char *rel, bool write, int n)
{
	busy_rel = rel;
	busy_write = write;
	busy_left = n;
	busy_seen = 0;
}

/*
 * A damon_feed that plays bpf/damon.bpf.c: `pass` is the aggregation in
 * progress, `done` the newest complete one with its regions.
 */
struct fake_feed {
	struct damon_feed base;
	int start_err;
	uint32_t max_regions;
	pid_t followed;
	uint64_t pass, done;
	const struct damon_feed_rec *regions;
	size_t nregions;
	int read_err;
	int ready_after;	/* reads that find nothing new before done = pass + 1 */
	int reads;
	bool started, freed;
	uint32_t nr_targets;	/* follow()'s */
	/* The program's side of a wake: the sketch, the bars, wakes queued. */
	uint64_t mem_bytes;	/* the source's mem_bytes (0: this machine's) */
	__u8 *known;		/* known_cells, from start to stop */
	uint32_t known_cells;
	bool armed;
	uint64_t min_bytes;
	uint32_t share, unit;
	int wakes, taken;
};

#define FF(f) ((struct fake_feed *)(f))

static int ff_start(struct damon_feed *f, uint32_t max_regions, uint32_t known_cells,
		    char *why, size_t len)
{
	struct fake_feed *ff = FF(f);

	ff->max_regions = max_regions;
	if (ff->start_err) {
		snprintf(why, len, "no kernel BTF");
		return ff->start_err;
	}
	ff->known = calloc(known_cells, sizeof(*ff->known));
	if (!ff->known)
		return -ENOMEM;
	ff->known_cells = known_cells;
	ff->started = true;
	return 0;
}

static int ff_follow(struct damon_feed *f, pid_t pid, uint32_t nr_targets,
		     uint64_t *ret_pass)
{
	FF(f)->followed = pid;
	FF(f)->nr_targets = nr_targets;
	*ret_pass = FF(f)->pass;
	return 0;
}

static int ff_read(struct damon_feed *f, uint64_t after, struct damon_feed_rec *buf,
		   size_t cap, uint64_t *ret_pass)
{
	struct fake_feed *ff = FF(f);
	size_t n = ff->nregions < cap ? ff->nregions : cap;

	ff->reads++;
	if (ff->read_err)
		return ff->read_err;
	if (ff->ready_after && !--ff->ready_after)
		ff->done = ff->pass + 1;
	if (!ff->done || ff->done <= after)
		return -EAGAIN;
	memcpy(buf, ff->regions, n * sizeof(*buf));
	*ret_pass = ff->done;
	return (int)n;
}

static void ff_counters(struct damon_feed *f, struct damon_feed_counters *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->overflow = 2;
}

static __u8 *ff_known(struct damon_feed *f, uint32_t *ret_cells)
{
	*ret_cells = FF(f)->started ? FF(f)->known_cells : 0;
	return FF(f)->started ? FF(f)->known : NULL;
}

static int ff_wake_take(struct damon_feed *f)
{
	int n = FF(f)->wakes;

	FF(f)->taken += n;
	FF(f)->wakes = 0;
	return n;
}

static int ff_arm(struct damon_feed *f, uint64_t min_bytes, uint32_t share, uint32_t unit)
{
	struct fake_feed *ff = FF(f);

	if (!ff->started)
		return -ENOTCONN;
	ff->wakes = 0;
	ff->armed = min_bytes > 0;
	ff->min_bytes = min_bytes;
	ff->share = share;
	ff->unit = unit;
	return 0;
}

static int ff_wake_fd(struct damon_feed *f)
{
	return FF(f)->started ? 42 : -1;
}

static void ff_stop(struct damon_feed *f)
{
	free(FF(f)->known);
	FF(f)->known = NULL;
	FF(f)->started = false;
}

static void ff_free(struct damon_feed *f)
{
	FF(f)->freed = true;	/* the test's own */
}

static const struct damon_feed_ops ff_ops = {
	.start = ff_start,
	.follow = ff_follow,
	.read = ff_read,
	.counters = ff_counters,
	.known = ff_known,
	.arm = ff_arm,
	.wake_fd = ff_wake_fd,
	.wake_take = ff_wake_take,
	.stop = ff_stop,
	.free = ff_free,
};

/* A DAMON source on the fixture tree; with @ff, regions come from it. */
static struct sampler *mk_feed(struct fake_feed *ff)
{
	struct sampler_damon_params p;
	struct sampler *s = NULL;

	sampler_damon_params_default(&p, &test_geom);
	p.admin_dir = admin;
	p.runtime_dir = rundir;
	p.procfs_root = procroot;
	p.on_write = kernel;
	p.before_io = busy;
	if (ff) {
		ff->base.ops = &ff_ops;
		p.feed = &ff->base;
		p.mem_bytes = ff->mem_bytes;
	}
	CHECK_EQ_INT(sampler_damon_new(&p, &s), 0);
	return s;
}

static struct sampler *mk(void)
{
	return mk_feed(NULL);
}

static void reset(void)
{
	char path[600];

	rm_rf(admin);
	mkdir(admin, 0755);
	put("kdamonds/nr_kdamonds", "0\n");
	snprintf(path, sizeof(path), "%s/%s", rundir, DAMON_OWNER_FILE);
	unlink(path);
	log_buf[0] = '\0';
	nplanted = 0;
	set_busy(NULL, false, 0);
}

/*
 * A drain as tierd's loop runs it.  A drain never waits for the kdamond:
 * one that finds no finished tried_regions update asks for one and comes
 * back without regions, and the source's fd turns readable once the update
 * is done; the loop then drains again.  Settled after, so that the fixture
 * kernel (played from the source's worker thread) is quiet when the test
 * looks at it.
 */
static int drain(struct sampler *s, struct hot_table *t, uint64_t now_ns)
{
	struct pollfd p = { .events = POLLIN };
	int r = sampler_drain(s, t, now_ns);

	sampler_damon_settle(s);
	p.fd = sampler_fd(s);
	if (r >= 0 && p.fd >= 0 && poll(&p, 1, 0) == 1) {
		r = sampler_drain(s, t, now_ns);
		sampler_damon_settle(s);
	}
	return r;
}

/* set_targets() and set_pace() as tierd's tick calls them, settled: the
 * state change the source's worker writes is done and taken in. */
static int set_targets(struct sampler *s, const pid_t *pids, size_t n)
{
	int r = sampler_set_targets(s, pids, n);

	sampler_damon_settle(s);
	return r;
}

static int set_pace(struct sampler *s, unsigned int pace)
{
	int r = sampler_set_pace(s, pace);

	sampler_damon_settle(s);
	return r;
}

static void owner(char *buf, size_t len)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", rundir, DAMON_OWNER_FILE);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
}

/*
 * The kdamond's pid is in the ownership record as soon as the worker has
 * turned it on, before a drain takes the change in: a tierd killed in
 * between leaves a record that the next start cleans up after.
 */
static void test_owner_before_drain(void)
{
	const pid_t pids[] = { 100, 200 };
	char why[SAMPLER_WHY_MAX] = "", want[64], buf[128] = "";
	struct sampler *s;

	reset();
	s = mk();
	CHECK_EQ_INT(sampler_probe(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(sampler_set_targets(s, pids, 2), 0);	/* no drain after */
	snprintf(want, sizeof(want), "%d 0 4242\n", (int)getpid());
	for (int i = 0; i < 200 && strcmp(buf, want); i++) {
		usleep(10000);
		owner(buf, sizeof(buf));
	}
	CHECK_EQ_STR(buf, want);
	sampler_stop(s);
	sampler_free(s);
}


#define SCHEME(k, i)                                                            \
	"kdamonds/0/contexts/0/schemes/" #i "/action=stat\n"                     \
	"kdamonds/0/contexts/0/schemes/" #i "/access_pattern/sz/min=0\n"         \
	"kdamonds/0/contexts/0/schemes/" #i "/access_pattern/sz/max=18446744073709551615\n" \
	"kdamonds/0/contexts/0/schemes/" #i "/access_pattern/nr_accesses/min=1\n" \
	"kdamonds/0/contexts/0/schemes/" #i "/access_pattern/nr_accesses/max=4294967295\n" \
	"kdamonds/0/contexts/0/schemes/" #i "/access_pattern/age/min=0\n"        \
	"kdamonds/0/contexts/0/schemes/" #i "/access_pattern/age/max=4294967295\n" \
	"kdamonds/0/contexts/0/schemes/" #i "/filters/nr_filters=1\n"            \
	"kdamonds/0/contexts/0/schemes/" #i "/filters/0/type=target\n"           \
	"kdamonds/0/contexts/0/schemes/" #i "/filters/0/damon_target_idx=" #i "\n" \
	"kdamonds/0/contexts/0/schemes/" #i "/filters/0/matching=N\n"

static const char start_seq[] =
	"kdamonds/nr_kdamonds=1\n"
	"kdamonds/0/contexts/nr_contexts=1\n"
	"kdamonds/0/contexts/0/operations=vaddr\n"
	"kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us=5000\n"
	"kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us=100000\n"
	"kdamonds/0/contexts/0/monitoring_attrs/intervals/update_us=1000000\n"
	"kdamonds/0/contexts/0/monitoring_attrs/nr_regions/min=10\n"
	"kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max=1000\n";

static const char targets_seq[] =
	"kdamonds/0/contexts/0/targets/nr_targets=2\n"
	"kdamonds/0/contexts/0/targets/0/pid_target=100\n"
	"kdamonds/0/contexts/0/targets/1/pid_target=200\n"
	"kdamonds/0/contexts/0/schemes/nr_schemes=2\n"
	SCHEME(0, 0) SCHEME(0, 1);

static void test_sequence_and_regions(void)
{
	static uint64_t mem[8192];
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 128, .geom = TEST_GEOM_INIT };
	static const struct region regions[] = {
		{ 0, 0x400000, 0x600000, 10 },		/* pid 100: one 2 MiB range */
		{ 0, 0x600000, 0x1000000, 0 },		/* idle: nothing recorded */
		{ 1, 0x7f0000000000, 0x7f0000400000, 5 },	/* pid 200: two ranges */
	};
	const pid_t pids[] = { 100, 200 };
	char want[8192], why[SAMPLER_WHY_MAX] = "", buf[128];
	struct sampler_status st;
	struct hot_table t;
	struct sampler *s;

	reset();
	s = mk();
	CHECK_EQ_INT(sampler_probe(s, why, sizeof(why)), 0);
	CHECK_EQ_STR(log_buf, "");	/* probing writes nothing */
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_STR(log_buf, start_seq);
	snprintf(want, sizeof(want), "%d 0 0\n", (int)getpid());
	owner(buf, sizeof(buf));
	CHECK_EQ_STR(buf, want);

	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	snprintf(want, sizeof(want), "%skdamonds/0/state=on\n", targets_seq);
	CHECK_EQ_STR(log_buf, want);
	snprintf(want, sizeof(want), "%d 0 4242\n", (int)getpid());
	owner(buf, sizeof(buf));
	CHECK_EQ_STR(buf, want);
	/* Same targets again: nothing to write. */
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	CHECK_EQ_STR(log_buf, "");

	planted = regions;
	nplanted = 3;
	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	CHECK_EQ_INT(drain(s, &t, 0), 3);
	/* One update for the drain that found none, the next one asked for
	 * by the drain that read it. */
	CHECK_EQ_STR(log_buf, "kdamonds/0/state=update_schemes_tried_regions\n"
		     "kdamonds/0/state=update_schemes_tried_regions\n");
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 10.0);
	CHECK(hot_heat(&t, 100, 0x800000, 0) == 0.0);
	CHECK(hot_heat(&t, 200, 0x7f0000000000, 0) == 5.0);
	CHECK(hot_heat(&t, 200, 0x7f0000200000, 0) == 5.0);
	CHECK(hot_heat(&t, 100, 0x7f0000000000, 0) == 0.0);	/* scheme 1 is pid 200's */
	sampler_describe(s, &st);
	CHECK(st.running);
	CHECK_EQ_U64(st.samples, 3);
	CHECK_EQ_STR(st.why, "kdamond 0 (pid 4242), vaddr, 2 target(s), 5000 us sampling, "
		     "100000 us aggregation, regions from tried_regions");

	/* Every target exited and the kdamond stopped: drain idles, set_targets
	 * turns it on again. */
	put("kdamonds/0/state", "off\n");
	log_buf[0] = '\0';
	CHECK_EQ_INT(drain(s, &t, 1), 0);
	CHECK_EQ_STR(log_buf, "");
	CHECK_EQ_INT(set_targets(s, pids, 1), 0);
	CHECK(strstr(log_buf, "kdamonds/0/contexts/0/targets/nr_targets=1\n") == log_buf);
	CHECK(strstr(log_buf, "kdamonds/0/state=on\n") != NULL);
	get("kdamonds/0/contexts/0/schemes/0/filters/0/matching", buf, sizeof(buf));
	CHECK_EQ_STR(buf, "N");
	/* A change while on is a commit. */
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	snprintf(want, sizeof(want), "%skdamonds/0/state=commit\n", targets_seq);
	CHECK_EQ_STR(log_buf, want);

	/* Idle pace: the sampling interval stretched ten times, the
	 * aggregation to five of those, committed; the same pace again writes
	 * nothing; pace 1 restores the configured ones. */
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 10), 0);
	CHECK_EQ_STR(log_buf,
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us=50000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us=250000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max=100\n"
		     "kdamonds/0/state=commit\n");
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 10), 0);
	CHECK_EQ_STR(log_buf, "");
	/* Its counts (0-5) are worth four of the configured pace's (0-20). */
	CHECK_EQ_INT(drain(s, &t, 0), 3);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 50.0);
	CHECK(hot_heat(&t, 200, 0x7f0000000000, 0) == 25.0);
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 1), 0);
	CHECK_EQ_STR(log_buf,
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us=5000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us=100000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max=1000\n"
		     "kdamonds/0/state=commit\n");
	/* Never fewer regions than the minimum. */
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 1000), 0);
	CHECK(strstr(log_buf, "nr_regions/max=10\n") != NULL);
	CHECK(strstr(log_buf, "aggr_us=25000000\n") != NULL);
	/* 10 ms / 100 ms: ten samples already, the aggregation is not
	 * stretched, and each count is worth two. */
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 2), 0);
	CHECK(strstr(log_buf, "intervals/aggr_us=100000\n") != NULL);
	CHECK_EQ_INT(drain(s, &t, 0), 3);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 70.0);
	CHECK_EQ_INT(set_pace(s, 1), 0);
	CHECK_EQ_INT(drain(s, &t, 0), 3);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 80.0);	/* the configured unit again */

	CHECK_EQ_INT(set_pace(s, 10), 0);

	log_buf[0] = '\0';
	sampler_stop(s);
	CHECK_EQ_STR(log_buf, "kdamonds/0/state=off\nkdamonds/nr_kdamonds=0\n");
	get("kdamonds/nr_kdamonds", buf, sizeof(buf));
	CHECK_EQ_STR(buf, "0");
	owner(buf, sizeof(buf));
	CHECK_EQ_STR(buf, "");
	/* Stopped at the idle pace and started again: the kdamond has the
	 * configured intervals, so the idle pace is written again. */
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 10), 0);
	CHECK(strstr(log_buf, "intervals/aggr_us=250000\n") != NULL);
	sampler_free(s);
}

static void test_leaves_others_alone(void)
{
	char why[SAMPLER_WHY_MAX] = "", want[SAMPLER_WHY_MAX];
	struct sampler *s;

	reset();
	put("kdamonds/nr_kdamonds", "1\n");
	put("kdamonds/0/state", "on\n");
	put("kdamonds/0/pid", "77\n");
	s = mk();
	CHECK_EQ_INT(sampler_probe(s, why, sizeof(why)), -EBUSY);
	snprintf(want, sizeof(want), "1 kdamond(s) in %s/kdamonds that tierd did not create; "
		 "adding one would reset them, so tierd leaves DAMON alone", admin);
	CHECK_EQ_STR(why, want);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), -EBUSY);
	CHECK_EQ_STR(log_buf, "");
	sampler_free(s);	/* stopping what never started writes nothing */
	CHECK_EQ_STR(log_buf, "");

	/* No DAMON sysfs at all. */
	rm_rf(admin);
	s = mk();
	CHECK_EQ_INT(sampler_probe(s, why, sizeof(why)), -ENODEV);
	snprintf(want, sizeof(want), "no DAMON sysfs at %s (No such file or directory): "
		 "needs CONFIG_DAMON_SYSFS=y", admin);
	CHECK_EQ_STR(why, want);
	sampler_free(s);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * DAMON's sysfs files answer -EBUSY while another holder has damon_sysfs_lock
 * (a running kdamond takes it after every sampling interval): the source
 * tries again instead of failing the drain, and gives up only after
 * DAMON_BUSY_WAIT_US.
 */
/* One accessed region of each of two targets. */
static const struct region two_regions[] = {
	{ 0, 0x400000, 0x600000, 10 },
	{ 1, 0x7f0000000000, 0x7f0000200000, 5 },
};

static void test_retries_while_busy(void)
{
	static uint64_t mem[8192];
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 128, .geom = TEST_GEOM_INIT };
	const pid_t pids[] = { 100, 200 };
	char why[SAMPLER_WHY_MAX] = "";
	struct hot_table t;
	struct sampler *s;
	uint64_t t0;

	reset();
	s = mk();
	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	/* Busy while writing the targets (nr_targets is one of the trylock
	 * stores): set_targets() returns at once and a drain writes them. */
	set_busy("kdamonds/0/contexts/0/targets/nr_targets", true, 1);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	CHECK_EQ_INT(busy_seen, 1);
	CHECK(strstr(log_buf, "state=on") == NULL);
	CHECK_EQ_INT(sampler_drain(s, &t, 0), 0);
	sampler_damon_settle(s);
	CHECK(strstr(log_buf, "targets/nr_targets=2\n") != NULL);
	CHECK(strstr(log_buf, "kdamonds/0/state=on\n") != NULL);
	planted = two_regions;
	nplanted = 2;

	/* state_show() busy twice, then state_store() three times. */
	set_busy("kdamonds/0/state", false, 2);
	log_buf[0] = '\0';
	CHECK_EQ_INT(drain(s, &t, 0), 2);
	CHECK_EQ_INT(busy_seen, 2);
	set_busy("kdamonds/0/state", true, 3);
	CHECK_EQ_INT(drain(s, &t, 0), 2);
	CHECK_EQ_INT(busy_seen, 3);
	/* One write per update asked for reached the kernel. */
	CHECK_EQ_STR(log_buf, "kdamonds/0/state=update_schemes_tried_regions\n"
		     "kdamonds/0/state=update_schemes_tried_regions\n"
		     "kdamonds/0/state=update_schemes_tried_regions\n");
	CHECK(hot_heat(&t, 200, 0x7f0000000000, 0) == 10.0);

	/* Busy for good: the update fails with -EBUSY after the bounded wait
	 * (in the worker: the drain asking returns at once), and the drain
	 * after it says so. */
	set_busy("kdamonds/0/state", true, 1 << 30);
	log_buf[0] = '\0';
	t0 = mono_us();
	CHECK_EQ_INT(sampler_drain(s, &t, 0), 2);	/* the update asked before */
	CHECK(mono_us() - t0 < DAMON_BUSY_WAIT_US / 2);
	sampler_damon_settle(s);
	CHECK(mono_us() - t0 >= DAMON_BUSY_WAIT_US);
	CHECK_EQ_INT(drain(s, &t, 0), -EBUSY);
	CHECK(busy_seen > 2);
	CHECK_EQ_STR(log_buf, "");

	set_busy(NULL, false, 0);
	sampler_free(s);
}

/*
 * A drain does not wait for the kdamond: while the update it asked for is
 * not done, the tick goes on at once, touches no DAMON file (the kdamond
 * holds their lock for the update), and a change of pace waits for the
 * next drain; the source's fd says when the regions are there.
 */
static void test_drain_does_not_wait(void)
{
	static uint64_t mem[8192];
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 128, .geom = TEST_GEOM_INIT };
	const pid_t pids[] = { 100, 200 };
	char why[SAMPLER_WHY_MAX] = "";
	struct pollfd p = { .events = POLLIN };
	struct hot_table t;
	struct sampler *s;
	uint64_t t0;

	reset();
	s = mk();
	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	planted = two_regions;
	nplanted = 2;
	p.fd = sampler_fd(s);
	CHECK(p.fd >= 0);

	slow_set(true);
	log_buf[0] = '\0';
	t0 = mono_us();
	CHECK_EQ_INT(sampler_drain(s, &t, 0), 0);
	CHECK_EQ_INT(sampler_drain(s, &t, 0), 0);	/* still not done */
	CHECK_EQ_INT(sampler_set_pace(s, 10), 0);
	CHECK(mono_us() - t0 < 100000);
	CHECK_EQ_INT(poll(&p, 1, 0), 0);
	pthread_mutex_lock(&slow_lock);
	CHECK_EQ_INT(slow_reads, 1);	/* the first drain's look at the kdamond */
	pthread_mutex_unlock(&slow_lock);
	CHECK_EQ_STR(log_buf, "");
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 0.0);

	/* The kdamond is done: the fd turns readable, the next drain folds the
	 * regions (at the pace they were asked at) and then sets the pace; the
	 * worker commits it, and the drain after that asks for regions. */
	slow_set(false);
	CHECK_EQ_INT(poll(&p, 1, 3000), 1);
	CHECK_EQ_INT(sampler_drain(s, &t, 0), 2);
	CHECK_EQ_INT(poll(&p, 1, 0), 0);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 10.0);
	sampler_damon_settle(s);
	CHECK_EQ_STR(log_buf, "kdamonds/0/state=update_schemes_tried_regions\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us=50000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us=250000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max=100\n"
		     "kdamonds/0/state=commit\n");
	sampler_free(s);
}

/* Longest an op may take on a loaded machine: below the 300 ms wait of
 * slow_state(), which slow_waits counts when it happens. */
#define TICK_MAX_US 250000

/*
 * No sampler op called from a tick waits: a state change the kernel takes
 * slowly ("commit", "on", "off") is written by the source's worker, and a
 * file that answers -EBUSY is left for the next drain, not retried with
 * sleeps.  The change is there after a later drain.
 */
static void test_tick_never_waits(void)
{
	static uint64_t mem[8192];
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 128, .geom = TEST_GEOM_INIT };
	const pid_t pids[] = { 100, 200 };
	char why[SAMPLER_WHY_MAX] = "", buf[64];
	struct hot_table t;
	struct sampler *s;
	uint64_t t0;

	reset();
	s = mk();
	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	planted = two_regions;
	nplanted = 2;
	slow_commit = true;

	/* Targets: the kdamond turned on without the tick waiting for it. */
	t0 = mono_us();
	CHECK_EQ_INT(sampler_set_targets(s, pids, 2), 0);
	CHECK(mono_us() - t0 < TICK_MAX_US);
	t0 = mono_us();
	CHECK_EQ_INT(sampler_drain(s, &t, 0), 0);
	CHECK(mono_us() - t0 < TICK_MAX_US);
	sampler_damon_settle(s);
	get("kdamonds/0/state", buf, sizeof(buf));
	CHECK_EQ_STR(buf, "on");
	CHECK_EQ_INT(drain(s, &t, 0), 2);

	/* Pace: written, committed by the worker, in force after a drain. */
	log_buf[0] = '\0';
	t0 = mono_us();
	CHECK_EQ_INT(sampler_set_pace(s, 10), 0);
	CHECK(mono_us() - t0 < TICK_MAX_US);
	sampler_damon_settle(s);
	CHECK(strstr(log_buf, "intervals/sample_us=50000\nkdamonds/0/contexts/0/"
		     "monitoring_attrs/intervals/aggr_us=250000\n") != NULL);
	CHECK(strstr(log_buf, "kdamonds/0/state=commit\n") != NULL);

	/* Busy: set_pace returns at once, the next drain writes it. */
	drain(s, &t, 0);
	set_busy("kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us", true, 1 << 30);
	log_buf[0] = '\0';
	t0 = mono_us();
	CHECK_EQ_INT(sampler_set_pace(s, 1), 0);
	CHECK_EQ_INT(sampler_drain(s, &t, 0) >= 0, 1);
	CHECK(mono_us() - t0 < TICK_MAX_US);
	CHECK_EQ_INT(busy_seen, 2);	/* once by each op, not retried with sleeps */
	CHECK(strstr(log_buf, "sample_us=5000\n") == NULL);
	set_busy(NULL, false, 0);
	sampler_damon_settle(s);
	drain(s, &t, 0);
	sampler_damon_settle(s);
	CHECK(strstr(log_buf, "intervals/sample_us=5000\n") != NULL);
	CHECK(strstr(log_buf, "kdamonds/0/state=commit\n") != NULL);

	/* New targets, and none: neither waits for the kdamond. */
	log_buf[0] = '\0';
	t0 = mono_us();
	CHECK_EQ_INT(sampler_set_targets(s, pids, 1), 0);
	CHECK(mono_us() - t0 < TICK_MAX_US);
	drain(s, &t, 0);
	t0 = mono_us();
	CHECK_EQ_INT(sampler_set_targets(s, pids, 0), 0);
	CHECK(mono_us() - t0 < TICK_MAX_US);
	sampler_damon_settle(s);
	drain(s, &t, 0);
	CHECK(strstr(log_buf, "targets/nr_targets=1\n") != NULL);
	CHECK(strstr(log_buf, "kdamonds/0/state=off\n") != NULL);
	CHECK_EQ_INT(slow_waits, 0);
	slow_commit = false;
	sampler_free(s);
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static void write_owner(pid_t tierd, int idx, pid_t kdamond)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", rundir, DAMON_OWNER_FILE);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%d %d %d\n", tierd, idx, kdamond);
		fclose(f);
	}
}

static void test_cleans_up_after_crash(void)
{
	char why[SAMPLER_WHY_MAX] = "", want[8192];
	struct sampler_status st;
	struct sampler *s;
	pid_t dead = dead_pid();

	/* A kill -9'd tierd left kdamond 0 running with pid 4242. */
	reset();
	put("kdamonds/nr_kdamonds", "1\n");
	put("kdamonds/0/state", "on\n");
	put("kdamonds/0/pid", "4242\n");
	write_owner(dead, 0, 4242);
	s = mk();
	CHECK_EQ_INT(sampler_probe(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	snprintf(want, sizeof(want), "kdamonds/0/state=off\nkdamonds/nr_kdamonds=0\n%s",
		 start_seq);
	CHECK_EQ_STR(log_buf, want);
	sampler_describe(s, &st);
	snprintf(want, sizeof(want), "kdamond 0, vaddr, 5000 us sampling, 100000 us "
		 "aggregation, no targets yet; regions from tried_regions; removed kdamond 0 (pid 4242) left by tierd pid %d",
		 dead);
	CHECK_EQ_STR(st.why, want);
	sampler_free(s);

	/* The record is stale but kdamond 0 now runs someone else's thread. */
	reset();
	put("kdamonds/nr_kdamonds", "1\n");
	put("kdamonds/0/state", "on\n");
	put("kdamonds/0/pid", "5555\n");
	write_owner(dead, 0, 4242);
	s = mk();
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), -EBUSY);
	CHECK_EQ_STR(log_buf, "");
	sampler_free(s);

	/* A live tierd owns it: hands off. */
	reset();
	put("kdamonds/nr_kdamonds", "1\n");
	put("kdamonds/0/state", "on\n");
	put("kdamonds/0/pid", "4242\n");
	write_owner(getppid(), 0, 4242);
	s = mk();
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), -EBUSY);
	snprintf(want, sizeof(want), "kdamond 0 belongs to another running tierd (pid %d, "
		 "%s/%s)", getppid(), rundir, DAMON_OWNER_FILE);
	CHECK_EQ_STR(why, want);
	CHECK_EQ_STR(log_buf, "");
	sampler_free(s);
}

/*
 * With a feed: no schemes, no sysfs reads or blocking writes in a drain; the
 * newest complete aggregation is folded once, and only one that began after
 * the targets last changed (its target indices are the new ones).
 */
/* One aggregation of two targets (pids 100 and 200); test_feed takes the
 * first four, test_peek all. */
static const struct damon_feed_rec feed_regions[] = {
	{ 0x400000, 0x600000, 0, 10, 0, 0 },			/* pid 100 */
	{ 0x7f0000000000, 0x7f0000400000, 1, 5, 0, 0 },	/* pid 200: two ranges */
	{ 0x800000, 0xa00000, 5, 9, 0, 0 },			/* no such target */
	{ 0xa00000, 0xa00000, 0, 9, 0, 0 },			/* empty */
	{ 0xa00000, 0xc00000, 0, 0, 0, 0 },			/* not accessed */
};

static void test_feed(void)
{
	static uint64_t mem[8192];
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 128, .geom = TEST_GEOM_INIT };
	const struct damon_feed_rec *regions = feed_regions;
	const pid_t pids[] = { 100, 200 };
	struct fake_feed ff = { .pass = 7 };
	char why[SAMPLER_WHY_MAX] = "", want[4096];
	struct sampler_status st;
	struct hot_table t;
	struct sampler *s;

	/* Until the first idle pace, sysfs: the feed's load waits for then. */
	reset();
	s = mk_feed(&ff);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_STR(why, "regions from tried_regions until tierd is idle, then from the "
		     "damon_aggregated tracepoint");
	CHECK_EQ_STR(log_buf, start_seq);
	CHECK(!ff.started);
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	snprintf(want, sizeof(want), "%skdamonds/0/state=on\n", targets_seq);
	CHECK_EQ_STR(log_buf, want);
	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	log_buf[0] = '\0';
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_STR(log_buf, "kdamonds/0/state=update_schemes_tried_regions\n"
		     "kdamonds/0/state=update_schemes_tried_regions\n");
	sampler_describe(s, &st);
	CHECK_EQ_INT(st.generation, 0);

	/* The first idle pace: the feed starts, the schemes go in the same
	 * commit, the kdamond is followed, the status says so. */
	log_buf[0] = '\0';
	CHECK_EQ_INT(sampler_set_pace(s, 10), 0);
	/* Said with the new generation at once, before a drain takes the
	 * commit in: the daemon logs the status once a generation. */
	sampler_describe(s, &st);
	CHECK_EQ_INT(st.generation, 1);
	CHECK(strstr(st.why, ", regions from the damon_aggregated tracepoint") != NULL);
	sampler_damon_settle(s);
	CHECK_EQ_STR(log_buf,
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us=50000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us=250000\n"
		     "kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max=100\n"
		     "kdamonds/0/contexts/0/schemes/nr_schemes=0\n"
		     "kdamonds/0/state=commit\n");
	CHECK(ff.started);
	CHECK_EQ_INT(ff.max_regions, 1000 + 10 * 64);
	/* The sketch sized for this machine's memory. */
	CHECK_EQ_INT(ff.known_cells,
		     damon_known_cells_for((uint64_t)sysconf(_SC_PHYS_PAGES) *
					   (uint64_t)sysconf(_SC_PAGESIZE)));
	CHECK_EQ_INT(ff.followed, 4242);
	sampler_describe(s, &st);
	CHECK_EQ_INT(st.generation, 1);
	CHECK_EQ_STR(st.why, "kdamond 0 (pid 4242), vaddr, 2 target(s), 5000 us sampling, "
		     "100000 us aggregation, regions from the damon_aggregated tracepoint");

	ff.regions = regions;
	ff.nregions = 4;
	/* The aggregation in progress at the switch (7) is not taken, and at
	 * the idle pace a drain does not wait for the next one. */
	ff.done = 7;
	ff.ready_after = 3;
	log_buf[0] = '\0';
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_INT(ff.reads, 1);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 0.0);
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_INT(drain(s, &t, 0), 3);	/* the fake's third read has 8 */
	CHECK_EQ_STR(log_buf, "");	/* no update_schemes_tried_regions */
	/* Counts at the idle pace, four times the configured pace's unit. */
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 40.0);
	CHECK(hot_heat(&t, 200, 0x7f0000000000, 0) == 20.0);
	CHECK(hot_heat(&t, 200, 0x7f0000200000, 0) == 20.0);
	CHECK(hot_heat(&t, 100, 0x800000, 0) == 0.0);
	/* Folded once: the same aggregation again adds nothing, at once. */
	ff.reads = 0;
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_INT(ff.reads, 1);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 40.0);
	sampler_describe(s, &st);
	CHECK_EQ_U64(st.samples, 4);
	CHECK_EQ_U64(st.lost, 2);

	/* Back to full pace: a commit, the feed stays, no schemes come back. */
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 1), 0);
	CHECK(strstr(log_buf, "schemes") == NULL);
	sampler_describe(s, &st);
	CHECK_EQ_INT(st.generation, 1);

	/* New targets at full pace while aggregation 12 runs: 12 is skipped,
	 * and no drain waits for 13: each reads the feed once, and the first
	 * after 13 ended folds it. */
	ff.pass = 12;
	ff.done = 12;
	ff.ready_after = 3;
	ff.reads = 0;
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, pids, 1), 0);
	CHECK_EQ_STR(log_buf, "kdamonds/0/contexts/0/targets/nr_targets=1\n"
		     "kdamonds/0/contexts/0/targets/0/pid_target=100\n"
		     "kdamonds/0/contexts/0/schemes/nr_schemes=0\n"
		     "kdamonds/0/state=commit\n");
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_INT(ff.reads, 2);
	CHECK_EQ_INT(drain(s, &t, 0), 1);	/* target 1 is gone */
	CHECK_EQ_INT(ff.reads, 3);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 50.0);	/* full pace: as counted */
	CHECK(hot_heat(&t, 200, 0x7f0000000000, 0) == 20.0);
	ff.pass = 20;
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	ff.reads = 0;
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_INT(ff.reads, 1);
	ff.reads = 0;
	CHECK_EQ_INT(drain(s, &t, 0), 0);
	CHECK_EQ_INT(ff.reads, 1);
	ff.done = 21;
	ff.read_err = -EBUSY;
	CHECK_EQ_INT(drain(s, &t, 0), -EBUSY);
	ff.read_err = 0;

	/* No targets: the kdamond is off and the feed follows nothing. */
	CHECK_EQ_INT(set_targets(s, pids, 0), 0);
	CHECK_EQ_INT(ff.followed, 0);
	log_buf[0] = '\0';
	sampler_stop(s);
	CHECK(!ff.started);
	CHECK_EQ_STR(log_buf, "kdamonds/nr_kdamonds=0\n");
	sampler_free(s);
	CHECK(ff.freed);

	/* A feed that cannot start: the schemes stay, and the status says why. */
	reset();
	ff = (struct fake_feed){ .start_err = -ENOENT };
	s = mk_feed(&ff);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 10), 0);
	CHECK(strstr(log_buf, "schemes") == NULL);
	sampler_describe(s, &st);
	CHECK_EQ_INT(st.generation, 1);
	CHECK(strstr(st.why, "regions from tried_regions (no tracepoint feed: no kernel BTF)"));
	log_buf[0] = '\0';
	CHECK_EQ_INT(drain(s, &t, 1), 0);
	CHECK_EQ_STR(log_buf, "kdamonds/0/state=update_schemes_tried_regions\n"
		     "kdamonds/0/state=update_schemes_tried_regions\n");
	sampler_free(s);
	CHECK(ff.freed);
}

/* A DAMON source over @ff, started, watching pids 100 and 200 (targets 0
 * and 1), and an empty table over @mem; still on sysfs (no idle pace yet). */
static struct sampler *mk_watching(struct fake_feed *ff, struct hot_table *t, void *mem,
				   size_t mem_len, uint32_t max_entries)
{
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = max_entries, .geom = TEST_GEOM_INIT };
	const pid_t pids[] = { 100, 200 };
	char why[SAMPLER_WHY_MAX] = "";
	struct sampler *s;

	reset();
	s = mk_feed(ff);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_INT(set_targets(s, pids, 2), 0);
	CHECK_EQ_INT(hot_init(t, &hp, mem, mem_len, 0), 0);
	return s;
}

/*
 * Idle regions: a drain from the feed replaces the idle set with the
 * regions at nr_accesses 0 and an age, each idle since age aggregations
 * of the pace it counts at (250 ms at the idle pace); accessed regions
 * go to the table only, and the set stays as it is while no new
 * aggregation comes.  New targets empty it.  Sysfs regions say nothing
 * of idle memory, and a source without a feed cannot tell.
 */
static void test_feed_idle(void)
{
	static uint64_t mem[8192];
	static struct idle_range room[4];
	static const struct damon_feed_rec regions[] = {
		{ 0x400000, 0x600000, 0, 10, 3, 0 },		/* pid 100, accessed */
		{ 0x600000, 0x40600000, 0, 0, 400, 0 },		/* pid 100, idle 100 s */
		{ 0x40600000, 0x40800000, 0, 0, 0, 0 },		/* just went idle */
		{ 0x800000, 0xa00000, 5, 0, 9, 0 },		/* no such target */
		{ 0x7f0000000000, 0x7f0000400000, 1, 0, 8, 0 },	/* pid 200, 2 s */
	};
	const uint64_t now = 1000000000000ull;
	const pid_t one[] = { 100 };
	struct fake_feed ff = { .pass = 7 };
	struct idle_set set;
	struct hot_table t;
	struct sampler *s;

	idle_init(&set, room, 4);
	s = mk_watching(&ff, &t, mem, sizeof(mem), 1024);
	CHECK_EQ_INT(sampler_idle_into(s, &set), 0);
	ff.regions = regions;
	ff.nregions = 5;
	ff.done = 8;
	CHECK_EQ_INT(drain(s, &t, now), 0);	/* on sysfs */
	CHECK_EQ_INT(set.n, 0);
	CHECK_EQ_INT(set_pace(s, 10), 0);
	ff.done = 9;
	CHECK_EQ_INT(drain(s, &t, now), 1);
	CHECK(hot_heat(&t, 100, 0x400000, now) > 0.0);
	CHECK_EQ_INT(set.n, 2);
	CHECK_EQ_INT(set.r[0].pid, 100);
	CHECK_EQ_U64(set.r[0].start, 0x600000);
	CHECK_EQ_U64(set.r[0].end, 0x40600000);
	CHECK_EQ_U64(set.r[0].since_ns, now - 400 * 250000000ull);
	CHECK_EQ_INT(set.r[1].pid, 200);
	CHECK_EQ_U64(set.r[1].since_ns, now - 8 * 250000000ull);
	CHECK_EQ_U64(set.bytes, (1ull << 30) + (4 << 20));
	CHECK(hot_heat(&t, 100, 0x600000, now) == 0.0);	/* idle: no heat */
	/* No new aggregation: the set stays. */
	CHECK_EQ_INT(drain(s, &t, now + 1), 0);
	CHECK_EQ_INT(set.n, 2);
	/* New targets: the old ones' idle regions go. */
	ff.pass = 12;
	CHECK_EQ_INT(set_targets(s, one, 1), 0);
	CHECK_EQ_INT(set.n, 0);
	CHECK_EQ_INT(sampler_idle_into(s, NULL), 0);
	sampler_free(s);

	/* Without a feed: -EOPNOTSUPP. */
	s = mk_watching(NULL, &t, mem, sizeof(mem), 1024);
	CHECK_EQ_INT(sampler_idle_into(s, &set), -EOPNOTSUPP);
	sampler_free(s);
}

/* @n drains, each @gap_ns after the last (from *@at), each finding
 * @passes new aggregations. */
static void drains(struct sampler *s, struct hot_table *t, struct fake_feed *ff, uint64_t *at,
		   int n, uint64_t passes, uint64_t gap_ns)
{
	for (int i = 0; i < n; i++) {
		ff->done += passes;
		*at += gap_ns;
		CHECK_EQ_INT(drain(s, t, *at), 0);
	}
}

/*
 * An idle region's age counts aggregations, and an aggregation counts
 * sampling intervals, each its sleep plus the kdamond's checks: on a busy
 * machine it takes longer than its interval.  The drains time the
 * aggregations, and an age of N is N of them as they ran; never less than
 * the nominal interval (drains that come early read faster).  A change of
 * kdamond (new targets) or pace starts the measure over, from the nominal
 * interval; within a pace it follows the load over about a minute.
 */
static void test_feed_idle_clock(void)
{
	static uint64_t mem[8192];
	static struct idle_range room[4];
	static const struct damon_feed_rec regions[] = {
		{ 0x600000, 0x40600000, 0, 0, 400, 0 },	/* pid 100, age 400 */
	};
	const uint64_t now = 1000000000000ull, s1 = 1000000000ull;
	const pid_t one[] = { 100 };
	struct fake_feed ff = { .pass = 7, .regions = regions, .nregions = 1 };
	struct idle_set set;
	struct hot_table t;
	struct sampler *s;
	uint64_t at = now, idle_ns;

	idle_init(&set, room, 4);
	s = mk_watching(&ff, &t, mem, sizeof(mem), 1024);
	CHECK_EQ_INT(sampler_idle_into(s, &set), 0);
	CHECK_EQ_INT(set_pace(s, 10), 0);	/* the feed: 250 ms aggregations */
	ff.done = 9;
	CHECK_EQ_INT(drain(s, &t, at), 0);
	CHECK_EQ_U64(set.r[0].since_ns, at - 400 * 250000000ull);	/* nothing timed yet */
	/* Four aggregations (1 s) every 2 s, for 3 minutes: each takes 500 ms. */
	drains(s, &t, &ff, &at, 90, 4, 2 * s1);
	CHECK_EQ_U64(set.r[0].since_ns, at - 400 * 500000000ull);
	/* New targets: the minute the kdamond was off is not an aggregation's;
	 * the measure starts over. */
	ff.pass = ff.done;
	CHECK_EQ_INT(set_targets(s, one, 1), 0);
	drains(s, &t, &ff, &at, 1, 4, 60 * s1);
	CHECK_EQ_U64(set.r[0].since_ns, at - 400 * 250000000ull);
	drains(s, &t, &ff, &at, 1, 4, 2 * s1);
	CHECK_EQ_U64(set.r[0].since_ns, at - 400 * 500000000ull);
	/* Another pace (20: 500 ms aggregations) starts over too. */
	CHECK_EQ_INT(set_pace(s, 20), 0);
	drains(s, &t, &ff, &at, 1, 1, 30 * s1);
	CHECK_EQ_U64(set.r[0].since_ns, at - 400 * 500000000ull);
	/* One aggregation every 2 s there, for a minute: four times. */
	drains(s, &t, &ff, &at, 30, 1, 2 * s1);
	CHECK_EQ_U64(set.r[0].since_ns, at - 400 * 2000000000ull);
	/* The load gone: the measure follows it within minutes, and drains
	 * that read aggregations shorter than their interval (four of 500 ms
	 * a second) leave the nominal one. */
	drains(s, &t, &ff, &at, 240, 4, s1);
	CHECK_EQ_U64(set.r[0].since_ns, at - 400 * 500000000ull);
	drains(s, &t, &ff, &at, 240, 4, 2 * s1);
	idle_ns = at - set.r[0].since_ns;
	CHECK(idle_ns >= 400 * 500000000ull && idle_ns < 400 * 505000000ull);
	CHECK_EQ_INT(sampler_idle_into(s, NULL), 0);
	sampler_free(s);
}

/* A peek: only with the feed, each aggregation once, without folding it;
 * "new" is where the table's heat is below half the region's weight. */
static void test_peek(void)
{
	static uint64_t mem[8192];
	const struct damon_feed_rec *regions = feed_regions;
	/* 1 GiB from 0x400000: 512 ranges, looked at one in 64 (the first is
	 * 0x400000, hot in the table after the drain) */
	static const struct damon_feed_rec large[] = {
		{ 0x400000, 0x40400000, 0, 4, 0, 0 },
	};
	/* pid 100's range at 1.5 times its count: a jump, not new heat */
	static const struct damon_feed_rec jump[] = {
		{ 0x400000, 0x600000, 0, 15, 0, 0 },
	};
	struct fake_feed ff = { .pass = 7 };
	struct sampler_peek pk;
	struct hot_table t;
	struct sampler *s;

	s = mk_watching(&ff, &t, mem, sizeof(mem), 1024);
	/* On sysfs a look costs a drain: not offered. */
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), -EOPNOTSUPP);
	CHECK_EQ_INT(set_pace(s, 10), 0);
	ff.regions = regions;
	ff.nregions = 5;
	ff.done = 7;	/* in progress at the switch: neither peeked nor folded */
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 0);
	ff.done = 8;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 1);
	CHECK_EQ_U64(pk.accessed_bytes, 6 << 20);
	CHECK_EQ_U64(pk.new_bytes, 6 << 20);
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 0);	/* looked at already */
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 0.0);	/* not folded */
	/* The drain still folds it (at the idle pace's unit, 4 each). */
	CHECK_EQ_INT(drain(s, &t, 0), 3);
	CHECK(hot_heat(&t, 100, 0x500000, 0) == 40.0);
	/* The same heat again is not new to the table ... */
	ff.done = 9;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 1);
	CHECK_EQ_U64(pk.accessed_bytes, 6 << 20);
	CHECK_EQ_U64(pk.new_bytes, 0);
	/* ... nor is a count half as high again ... */
	ff.regions = jump;
	ff.nregions = 1;
	ff.done = 10;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 1);
	CHECK_EQ_U64(pk.accessed_bytes, 2 << 20);
	CHECK_EQ_U64(pk.new_bytes, 0);
	/* ... until the table's heat has decayed below half an aggregation's. */
	ff.regions = regions;
	ff.nregions = 5;
	ff.done = 11;
	CHECK_EQ_INT(sampler_peek(s, &t, 1500000000ull, &pk), 1);
	CHECK_EQ_U64(pk.new_bytes, 6 << 20);
	/* A large region is looked at in 8 of its ranges, each standing for 64. */
	ff.regions = large;
	ff.nregions = 1;
	ff.done = 12;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 1);
	CHECK_EQ_U64(pk.accessed_bytes, 1ull << 30);
	CHECK_EQ_U64(pk.new_bytes, (1ull << 30) - (128 << 20));
	/* A failed read is the caller's to see. */
	ff.done = 13;
	ff.read_err = -EBUSY;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), -EBUSY);
	sampler_free(s);
}

/* The sketch: a range reads what was put for it, a collision can only make
 * it read hotter (min of two cells, each the max of what landed there). */
static void test_known(void)
{
	static __u8 known[DAMON_KNOWN_CELLS_MIN];
	const uint32_t m = DAMON_KNOWN_CELLS_MIN - 1;
	const uint64_t a = 0x400000;
	uint64_t b = a, h;

	CHECK_EQ_INT(damon_known_get(known, m, 0, a), 0);
	damon_known_put(known, m, 0, a, 160);
	CHECK_EQ_INT(damon_known_get(known, m, 0, a), 160);
	CHECK_EQ_INT(damon_known_get(known, m, 0, a + 0x1fffff), 160);	/* same range */
	CHECK_EQ_INT(damon_known_get(known, m, 1, a), 0);		/* other target */
	damon_known_put(known, m, 0, a, 100);				/* the most stays */
	CHECK_EQ_INT(damon_known_get(known, m, 0, a), 160);
	/* A hotter range whose first cell is a's: a still reads its own. */
	h = damon_known_hash(0, a);
	do
		b += DAMON_RANGE_SIZE;
	while (damon_known_cell(damon_known_hash(0, b), 0, m) != damon_known_cell(h, 0, m) ||
	       damon_known_cell(damon_known_hash(0, b), 1, m) == damon_known_cell(h, 1, m));
	damon_known_put(known, m, 0, b, 200);
	CHECK_EQ_INT(damon_known_get(known, m, 0, a), 160);
	CHECK_EQ_INT(damon_known_get(known, m, 0, b), 200);
	damon_known_put(known, m, 0, b + DAMON_RANGE_SIZE, 1u << 20);	/* saturates */
	CHECK_EQ_INT(damon_known_get(known, m, 0, b + DAMON_RANGE_SIZE), DAMON_KNOWN_MAX);
}

/*
 * The unit: the finest with which one aggregation of @n samples adds at
 * most twice a full cell, so a cell saturated at DAMON_KNOWN_MAX answers
 * damon_known_look()'s question (is the known heat below half of what a
 * region adds?) as an unbounded one would, for every known heat and every
 * count up to @n; the finest unit beyond 510 samples no longer can.
 */
static void test_known_unit(void)
{
	static const uint32_t samples[] = { 1, 5, 20, 31, 32, 63, 64, 100, 255, 256, 510 };

	CHECK_EQ_INT(damon_known_unit(0), DAMON_KNOWN_UNIT);
	CHECK_EQ_INT(damon_known_unit(5), 16);	/* the idle pace at the defaults */
	CHECK_EQ_INT(damon_known_unit(31), 16);
	CHECK_EQ_INT(damon_known_unit(32), 8);
	CHECK_EQ_INT(damon_known_unit(64), 4);
	CHECK_EQ_INT(damon_known_unit(510), 1);
	CHECK_EQ_INT(damon_known_unit(100000), 1);
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		uint32_t n = samples[i], u = damon_known_unit(n), wrong = 0;

		for (uint32_t known = 0; known < 4 * n * u + 600; known++) {
			uint32_t cell = known < DAMON_KNOWN_MAX ? known : DAMON_KNOWN_MAX;

			for (uint32_t nr = 0; nr <= n; nr++)
				wrong += (2 * cell < nr * u) != (2 * known < nr * u);
		}
		CHECK_EQ_INT(wrong, 0);
	}
}

/* Ranges of @nr_fresh never put that read as known in a sketch of @cells
 * holding @nr_known others (all of target 0, from 0x7f0000000000 on). */
static uint32_t known_collisions(uint32_t cells, uint32_t nr_known, uint32_t nr_fresh)
{
	__u8 *known = calloc(cells, sizeof(*known));
	const uint64_t base = 0x7f0000000000ull;
	uint32_t hit = 0;

	CHECK(known != NULL);
	if (!known)
		return UINT32_MAX;
	for (uint32_t i = 0; i < nr_known; i++)
		damon_known_put(known, cells - 1, 0, base + (uint64_t)i * DAMON_RANGE_SIZE, 16);
	for (uint32_t i = 0; i < nr_fresh; i++)
		hit += damon_known_get(known, cells - 1, 0,
				       base + (uint64_t)(nr_known + i) * DAMON_RANGE_SIZE) != 0;
	free(known);
	return hit;
}

/* The sketch's size: four cells per 2 MiB range of memory, a power of two
 * within the bounds; and what that buys at the figures damon.h gives. */
static void test_known_size(void)
{
	const uint64_t gib = 1ull << 30;

	CHECK_EQ_INT(damon_known_cells_for(0), DAMON_KNOWN_CELLS_MIN);
	CHECK_EQ_INT(damon_known_cells_for(6 * gib), DAMON_KNOWN_CELLS_MIN);	/* the lab */
	CHECK_EQ_INT(damon_known_cells_for(16 * gib), DAMON_KNOWN_CELLS_MIN);
	CHECK_EQ_INT(damon_known_cells_for(16 * gib + DAMON_RANGE_SIZE), 1u << 16);
	CHECK_EQ_INT(damon_known_cells_for(64 * gib), 1u << 17);
	CHECK_EQ_INT(damon_known_cells_for(512 * gib), 1u << 20);
	CHECK_EQ_INT(damon_known_cells_for(1024 * gib), DAMON_KNOWN_CELLS_MAX);
	CHECK_EQ_INT(damon_known_cells_for(8192 * gib), DAMON_KNOWN_CELLS_MAX);
	/* 1 TiB sized (2^21 cells): a quarter of it hot (131072 ranges), a
	 * new range reads known about 1.4% of the time, all of it hot 15%;
	 * the fixed 2^15 cells of before, with the same quarter hot: nearly always. */
	CHECK(known_collisions(1u << 21, 131072, 16384) < 16384 * 3 / 100);
	CHECK(known_collisions(1u << 21, 524288, 16384) < 16384 * 20 / 100);
	CHECK(known_collisions(1u << 21, 524288, 16384) > 16384 * 10 / 100);
	CHECK(known_collisions(DAMON_KNOWN_CELLS_MIN, 131072, 16384) > 16384 * 95 / 100);
	/* At the lab's 2^15 cells (32 KiB), an 8 GiB hot set (4096 ranges): a few %. */
	CHECK(known_collisions(DAMON_KNOWN_CELLS_MIN, 4096, 16384) < 16384 * 8 / 100);
}

/*
 * Waking: each idle tick writes the table into the program's sketch (heat
 * at the next tick, 2 MiB ranges of known targets only) and arms it; the
 * program's look at an aggregation against the sketch comes to what
 * tierd's own look against the table does; a peek takes the wake.
 */
static void look_known(const struct fake_feed *ff, const struct damon_feed_rec *g, size_t n,
		       struct sampler_peek *ret)
{
	__u64 accessed = 0, fresh = 0;

	for (size_t i = 0; i < n; i++)
		if (g[i].target < 2 && g[i].end > g[i].start && g[i].nr_accesses)
			damon_known_look(ff->known, ff->known_cells - 1, ff->unit,
					 g[i].target, g[i].start, g[i].end, g[i].nr_accesses,
					 &accessed, &fresh);
	ret->accessed_bytes = accessed;
	ret->new_bytes = fresh;
}

/*
 * With 64 KiB pages a table entry is a 2 MiB range, not the 512 MiB PMD,
 * and the sketch's 2 MiB ranges are the table's: a 32 MiB region gives
 * 16 entries, each of which fills its cell, the ones past it none.
 */
static void test_known_fill_64k(void)
{
	static uint64_t mem[8192];
	static __u8 known[DAMON_KNOWN_CELLS_MIN];
	const uint32_t m = DAMON_KNOWN_CELLS_MIN - 1;
	struct hot_params hp = { .half_life_ns = 1000000000ull, .max_entries = 64,
				 .geom = PAGE_GEOM_INIT(64 << 10, 512 << 20) };
	const uint64_t a = 1ull << 30;
	const pid_t pids[] = { 100 };
	struct hot_table t;

	CHECK_EQ_INT(hot_init(&t, &hp, mem, sizeof(mem), 0), 0);
	CHECK_EQ_INT(hot_record(&t, 100, a, 32 << 20, 4.0, 0), 16);
	damon_known_fill(known, DAMON_KNOWN_CELLS_MIN, 16, &t, 0, pids, 1, 1.0);
	CHECK_EQ_INT(damon_known_get(known, m, 0, a), 64);
	CHECK_EQ_INT(damon_known_get(known, m, 0, a + 15 * DAMON_RANGE_SIZE), 64);
	CHECK_EQ_INT(damon_known_get(known, m, 0, a + (32 << 20)), 0);
}

static void test_peek_arm(void)
{
	static uint64_t mem[8192];
	/* sized for 64 GiB: 2^17 cells */
	static struct fake_feed ff = { .pass = 7, .mem_bytes = 64ull << 30 };
	static const struct damon_feed_rec large[] = {
		{ 0x400000, 0x40400000, 0, 4, 0, 0 },
	};
	const uint32_t m = (1u << 17) - 1;
	const pid_t pids[] = { 100, 200 };
	struct sampler_peek pk, bpf;
	struct sampler_status st;
	struct hot_table t;
	struct sampler *s;
	uint32_t gen = 0;

	s = mk_watching(&ff, &t, mem, sizeof(mem), 1024);
	/* On sysfs: nothing to arm, nothing to watch. */
	CHECK_EQ_INT(sampler_peek_arm(s, &t, 0, 8 << 20, 8), -EOPNOTSUPP);
	CHECK_EQ_INT(sampler_peek_fd(s, &gen), -EOPNOTSUPP);
	CHECK_EQ_INT(set_pace(s, 10), 0);
	CHECK_EQ_INT(ff.nr_targets, 2);
	sampler_describe(s, &st);
	CHECK_EQ_INT(sampler_peek_fd(s, &gen), 42);
	CHECK_EQ_INT(gen, st.generation);
	CHECK_EQ_INT(ff.known_cells, m + 1);

	/* The table after one aggregation, and a range too cold to note. */
	ff.regions = feed_regions;
	ff.nregions = 5;
	ff.done = 8;
	CHECK_EQ_INT(drain(s, &t, 0), 3);
	CHECK(hot_record(&t, 100, 0x2000000, TEST_HUGE_SIZE, 0.05, 0) > 0);
	CHECK(hot_record(&t, 300, 0x4000000, TEST_HUGE_SIZE, 5.0, 0) > 0);	/* untracked */
	ff.known[damon_known_cell(damon_known_hash(0, 0x6000000), 0, m)] = 99;	/* stale */
	ff.wakes = 1;
	CHECK_EQ_INT(sampler_peek_arm(s, &t, 0, 8 << 20, 8), 0);
	CHECK(ff.armed);
	CHECK_EQ_U64(ff.min_bytes, 8 << 20);
	CHECK_EQ_INT(ff.share, 8);
	CHECK_EQ_INT(ff.wakes, 0);	/* dropped */
	CHECK_EQ_INT(ff.unit, 16);	/* 5 samples an aggregation at the idle pace */
	CHECK_EQ_INT(damon_known_get(ff.known, m, 0, 0x400000), 160);
	CHECK_EQ_INT(damon_known_get(ff.known, m, 1, 0x7f0000000000), 80);
	CHECK_EQ_INT(damon_known_get(ff.known, m, 1, 0x7f0000200000), 80);
	CHECK_EQ_INT(damon_known_get(ff.known, m, 0, 0x2000000), 0);
	CHECK_EQ_INT(damon_known_get(ff.known, m, 2, 0x4000000), 0);
	CHECK_EQ_INT(ff.known[damon_known_cell(damon_known_hash(0, 0x6000000), 0, m)], 0);
	/* The same aggregation again: nothing fresh, to the program as to tierd. */
	look_known(&ff, feed_regions, 5, &bpf);
	ff.done = 9;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 1);
	CHECK_EQ_U64(bpf.accessed_bytes, pk.accessed_bytes);
	CHECK_EQ_U64(bpf.new_bytes, 0);
	CHECK_EQ_U64(pk.new_bytes, 0);
	/* Armed for a later tick: heat decayed to then, all of it fresh. */
	CHECK_EQ_INT(sampler_peek_arm(s, &t, 1500000000ull, 8 << 20, 8), 0);
	CHECK_EQ_INT(damon_known_get(ff.known, m, 0, 0x400000), 56);	/* 40 * 2^-1.5 * 16 / 4 */
	look_known(&ff, feed_regions, 5, &bpf);
	ff.done = 10;
	CHECK_EQ_INT(sampler_peek(s, &t, 1500000000ull, &pk), 1);
	CHECK_EQ_U64(bpf.new_bytes, 6 << 20);
	CHECK_EQ_U64(pk.new_bytes, 6 << 20);
	/* A large region: the same 8 ranges looked at, each standing for 64. */
	CHECK_EQ_INT(sampler_peek_arm(s, &t, 0, 8 << 20, 8), 0);
	look_known(&ff, large, 1, &bpf);
	ff.regions = large;
	ff.nregions = 1;
	ff.done = 11;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 1);
	CHECK_EQ_U64(bpf.accessed_bytes, 1ull << 30);
	CHECK_EQ_U64(bpf.new_bytes, pk.new_bytes);
	CHECK_EQ_U64(bpf.new_bytes, (1ull << 30) - (128 << 20));
	/* A peek takes the wake; a disarm drops one. */
	ff.wakes = 1;
	ff.done = 12;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), 1);
	CHECK_EQ_INT(ff.wakes, 0);
	CHECK_EQ_INT(ff.taken, 1);
	ff.wakes = 1;
	CHECK_EQ_INT(sampler_peek_arm(s, NULL, 0, 0, 0), 0);
	CHECK(!ff.armed);
	CHECK_EQ_INT(ff.wakes, 0);
	/* No targets: the feed follows nothing, with no targets; a wake that
	 * came is still taken (the loop would see it again and again). */
	CHECK_EQ_INT(set_targets(s, pids, 0), 0);
	CHECK_EQ_INT(ff.nr_targets, 0);
	ff.wakes = 1;
	CHECK_EQ_INT(sampler_peek(s, &t, 0, &pk), -EOPNOTSUPP);
	CHECK_EQ_INT(ff.wakes, 0);
	sampler_free(s);
}

/* What sampling costs is the kdamond's CPU time (utime + stime in
 * /proc/PID/stat), over each drain interval and in all. */
static void put_stat(const char *comm, unsigned long long utime, unsigned long long stime)
{
	char text[256];

	snprintf(text, sizeof(text), "4242 (%s) S 2 0 0 0 -1 2129984 0 0 0 0 %llu %llu 0 0 20 0 1 0 "
		 "1000 0 0\n", comm, utime, stime);
	put("proc/4242/stat", text);
}

static void test_cost(void)
{
	static uint64_t mem[8192];
	static struct fake_feed ff = { .pass = 7 };
	unsigned long long tck = (unsigned long long)sysconf(_SC_CLK_TCK);
	const pid_t one = 100;
	struct sampler_status st;
	struct hot_table t;
	struct sampler *s;

	s = mk_watching(&ff, &t, mem, sizeof(mem), 128);
	CHECK_EQ_INT(set_pace(s, 10), 0);	/* the feed: drains read no sysfs */
	/* No stat file yet, then the first reading: a baseline, no cost. */
	CHECK_EQ_INT(drain(s, &t, 1000000000ull), 0);
	put_stat("kdamond.0", 10, 20);
	CHECK_EQ_INT(drain(s, &t, 2000000000ull), 0);
	sampler_describe(s, &st);
	CHECK_EQ_STR(st.cost_source, "none");
	CHECK(st.cpu_seconds == 0.0);
	/* Two CPU seconds over four: 50%. */
	put_stat("kdamond.0", 10 + tck, 20 + tck);
	CHECK_EQ_INT(drain(s, &t, 6000000000ull), 0);
	sampler_describe(s, &st);
	CHECK_EQ_STR(st.cost_source, "kdamond");
	CHECK(st.cpu_seconds > 1.999 && st.cpu_seconds < 2.001);
	CHECK(st.cost_pct > 49.99 && st.cost_pct < 50.01);
	/* A comm with a ") " in it is read past; a quarter second over one. */
	put_stat("k) S 1 2", 10 + tck + tck / 4, 20 + tck);
	CHECK_EQ_INT(drain(s, &t, 7000000000ull), 0);
	sampler_describe(s, &st);
	CHECK(st.cpu_seconds > 2.249 && st.cpu_seconds < 2.251);
	CHECK(st.cost_pct > 24.99 && st.cost_pct < 25.01);
	/* A count that went back (not the same thread) is a new baseline; an
	 * unreadable file changes nothing. */
	put_stat("kdamond.0", 1, 1);
	CHECK_EQ_INT(drain(s, &t, 8000000000ull), 0);
	put("proc/4242/stat", "garbage\n");
	CHECK_EQ_INT(drain(s, &t, 9000000000ull), 0);
	put_stat("kdamond.0", 1 + tck, 1);
	CHECK_EQ_INT(drain(s, &t, 10000000000ull), 0);
	sampler_describe(s, &st);
	CHECK(st.cpu_seconds > 3.249 && st.cpu_seconds < 3.251);
	CHECK(st.cost_pct > 49.99 && st.cost_pct < 50.01);	/* one second over two */
	/* Turned off for want of targets: its time since the last drain is
	 * read first; the kdamond turned on again starts a new baseline. */
	put_stat("kdamond.0", 1 + 2 * tck, 1);
	CHECK_EQ_INT(set_targets(s, NULL, 0), 0);
	sampler_describe(s, &st);
	CHECK(st.cpu_seconds > 4.249 && st.cpu_seconds < 4.251);
	CHECK_EQ_INT(set_targets(s, &one, 1), 0);
	put_stat("kdamond.0", 5 * tck, 1);
	CHECK_EQ_INT(drain(s, &t, 11000000000ull), 0);
	sampler_describe(s, &st);
	CHECK(st.cpu_seconds > 4.249 && st.cpu_seconds < 4.251);
	put_stat("kdamond.0", 6 * tck, 1);
	CHECK_EQ_INT(drain(s, &t, 12000000000ull), 0);
	sampler_describe(s, &st);
	CHECK(st.cpu_seconds > 5.249 && st.cpu_seconds < 5.251);
	sampler_free(s);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* @pid's /proc/PID/statm with @bytes resident, in base pages of @page bytes. */
static void put_statm(pid_t pid, uint64_t bytes, uint64_t page)
{
	char rel[64], text[128];
	uint64_t pages = bytes / page;

	snprintf(rel, sizeof(rel), "proc/%d/statm", (int)pid);
	snprintf(text, sizeof(text), "%llu %llu 0 0 0 0 0\n", (unsigned long long)pages * 2,
		 (unsigned long long)pages);
	put(rel, text);
}

/* What a fit writes first: the regions' minimum, the two intervals, the
 * regions' maximum.  Returns what @log holds after them. */
static const char *expect_attrs(const char *log, uint32_t min, uint64_t sample_us,
				uint64_t aggr_us, uint32_t max)
{
	char want[512];
	size_t n = (size_t)snprintf(want, sizeof(want),
		"kdamonds/0/contexts/0/monitoring_attrs/nr_regions/min=%u\n"
		"kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us=%llu\n"
		"kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us=%llu\n"
		"kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max=%u\n",
		min, (unsigned long long)sample_us, (unsigned long long)aggr_us, max);

	if (strncmp(log, want, n)) {
		fprintf(stderr, "attributes written:\n%s\nexpected first:\n%s", log, want);
		CHECK(!"the fitted attributes");
		return log;
	}
	return log + n;
}

/* A DAMON source on a fresh fixture tree in geometry @g, its regions
 * fitted at the range and its aggregations to a drain every @drain_us,
 * started. */
static struct sampler *mk_fit(const struct page_geom *g, uint64_t drain_us)
{
	char why[SAMPLER_WHY_MAX] = "";
	struct sampler_damon_params p;
	struct sampler *s = NULL;

	reset();
	sampler_damon_params_default(&p, g);
	p.admin_dir = admin;
	p.runtime_dir = rundir;
	p.procfs_root = procroot;
	p.on_write = kernel;
	p.region_bytes = g->range;
	p.drain_us = drain_us;
	CHECK_EQ_INT(sampler_damon_new(&p, &s), 0);
	CHECK_EQ_INT(sampler_start(s, why, sizeof(why)), 0);
	CHECK_EQ_STR(log_buf, start_seq);
	log_buf[0] = '\0';
	return s;
}

/*
 * With region_bytes, the regions and intervals follow the targets' memory
 * (core/damon_fit.h), written with the targets: 4 GiB of one target is
 * 2048 ranges of 2 MiB, over the default 1000 regions, so 2048 regions
 * sampled 2.048 times as seldom; a second target of 4 GiB doubles them,
 * each target starting with half.  The same targets write nothing, and
 * a footprint within the configured regions writes the configured ones.
 * With a drain every 500 ms the aggregation spans it (100 samples), and
 * the idle pace's stays five of its samples, as without.
 * With 64 KiB pages statm counts 64 KiB pages and a range is still
 * 2 MiB: 4 GiB is the same 2048 ranges (read as 4 KiB pages it would be
 * 256 MiB, 128 ranges, within the configured regions).
 */
static void test_fit_to_targets(void)
{
	static const struct page_geom g64k = PAGE_GEOM_INIT(64ull << 10, 512ull << 20);
	const pid_t one[] = { 100 }, two[] = { 100, 200 };
	struct sampler *s;

	s = mk_fit(&test_geom, 0);
	put_statm(100, 4ull << 30, test_geom.base);
	put_statm(200, 4ull << 30, test_geom.base);
	CHECK_EQ_INT(set_targets(s, one, 1), 0);
	CHECK_EQ_STR(expect_attrs(log_buf, 2048, 10240, 204800, 2048),
		     "kdamonds/0/contexts/0/targets/nr_targets=1\n"
		     "kdamonds/0/contexts/0/targets/0/pid_target=100\n"
		     "kdamonds/0/contexts/0/schemes/nr_schemes=1\n"
		     SCHEME(0, 0) "kdamonds/0/state=on\n");

	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, one, 1), 0);
	CHECK_EQ_STR(log_buf, "");

	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, two, 2), 0);
	CHECK(starts_with(expect_attrs(log_buf, 2048, 20480, 409600, 4096),
			  "kdamonds/0/contexts/0/targets/nr_targets=2\n"));

	put_statm(100, 1ull << 30, test_geom.base);
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_targets(s, one, 1), 0);
	CHECK(starts_with(expect_attrs(log_buf, 10, 5000, 100000, 1000),
			  "kdamonds/0/contexts/0/targets/nr_targets=1\n"));
	sampler_stop(s);
	sampler_free(s);

	s = mk_fit(&test_geom, 500000);
	put_statm(100, 1ull << 30, test_geom.base);
	CHECK_EQ_INT(set_targets(s, one, 1), 0);
	CHECK(starts_with(expect_attrs(log_buf, 10, 5000, 500000, 1000),
			  "kdamonds/0/contexts/0/targets/nr_targets=1\n"));
	log_buf[0] = '\0';
	CHECK_EQ_INT(set_pace(s, 10), 0);
	CHECK(strstr(log_buf, "intervals/aggr_us=250000\n") != NULL);
	sampler_stop(s);
	sampler_free(s);

	s = mk_fit(&g64k, 0);
	put_statm(100, 4ull << 30, g64k.base);
	CHECK_EQ_INT(set_targets(s, one, 1), 0);
	CHECK(starts_with(expect_attrs(log_buf, 2048, 10240, 204800, 2048),
			  "kdamonds/0/contexts/0/targets/nr_targets=1\n"));
	sampler_stop(s);
	sampler_free(s);
}

int main(void)
{
	tick_thread = pthread_self();
	CHECK(mkdtemp(admin) != NULL);
	CHECK(mkdtemp(rundir) != NULL);
	snprintf(procroot, sizeof(procroot), "%s/proc", admin);
	RUN(test_sequence_and_regions);
	RUN(test_leaves_others_alone);
	RUN(test_cleans_up_after_crash);
	RUN(test_retries_while_busy);
	RUN(test_drain_does_not_wait);
	RUN(test_tick_never_waits);
	RUN(test_feed);
	RUN(test_feed_idle);
	RUN(test_feed_idle_clock);
	RUN(test_peek);
	RUN(test_known);
	RUN(test_known_unit);
	RUN(test_known_size);
	RUN(test_known_fill_64k);
	RUN(test_peek_arm);
	RUN(test_cost);
	RUN(test_owner_before_drain);
	RUN(test_fit_to_targets);
	if (!test_failures) {
		rm_rf(admin);
		rm_rf(rundir);
	}
	return TEST_EXIT();
}
