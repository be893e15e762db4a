// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierd: options, then one sd-event loop that owns everything:
 *
 *   1. SIGTERM/SIGINT  -> leave the loop; STOPPING=1; restore kernel knobs
 *   2. SIGHUP          -> tierd_reload(): parse, validate, swap or keep
 *   3. timer           -> manager_tick() every interval_ms (WATCHDOG=1 there)
 *   4. peek descriptor -> manager_peek() while idle: the tick now if it says so
 *   5. control socket  -> ctl_server.c (tierctl)
 *
 * Start-up ends by locking tierd's memory (lock_memory()) and dropping
 * every capability but TIERD_CAPS (caps.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "ctl_server.h"
#include "daemon.h"
#include "fsutil.h"
#include "log.h"
#include "manager.h"
#include "notify.h"
#include "tierd-config.h"

#define USEC_PER_MSEC 1000ull
/* sd-event's default timer slack is 250 ms: too coarse for interval_ms. */
#define TICK_ACCURACY_USEC 1000ull

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tierd [OPTIONS]\n"
		"       tierd --check-config [FILE]\n\n"
		"Promote hot pages to fast memory tiers and demote cold ones.\n\n"
		"  -c, --config FILE       policy file (default " TIERD_CONFIG_PATH
		")\n"
		"  -n, --check-config      parse the policy file, print \"configuration OK\" or\n"
		"                          the errors, and exit\n"
		"      --runtime-dir DIR   control socket directory (default $TIERD_RUNTIME_DIR,\n"
		"                          $RUNTIME_DIRECTORY, then " TIERD_RUNTIME_DIR
		")\n"
		"      --no-knobs          never write a kernel knob (sysctl, sysfs)\n"
		"      --root DIR          read sysfs and procfs below DIR (testing)\n"
		"  -v, --verbose           log debug messages\n"
		"      --version           print the version and exit\n"
		"  -h, --help              this text\n");
}

static int check_config(const char *path)
{
	static struct tierd_conf conf;
	char *errors = NULL;
	int r = conf_load(path, &conf, &errors);

	if (r == -EINVAL) {
		fputs(errors, stderr);
		free(errors);
		return 1;
	}
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-r));
		return 1;
	}
	printf("configuration OK\n");
	return 0;
}

struct loop {
	struct tierd *d;
	struct manager *m;
	uint64_t interval_usec;
	sd_event_source *tick, *peek;
	int peek_fd;		/* what peek watches, -1 none */
	uint32_t peek_gen;
};

static int on_peek(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* Watch the descriptor manager_peek_fd() names now: none while peeks are off
 * (a reload may turn sampling.damon.idle_peek off), a new one when the
 * source started its feed again. */
static void peek_watch(struct loop *l)
{
	uint32_t gen = 0;
	int fd = manager_peek_fd(l->m, &gen), r;

	if (fd == l->peek_fd && (fd < 0 || gen == l->peek_gen))
		return;
	l->peek = sd_event_source_disable_unref(l->peek);
	l->peek_fd = fd;
	l->peek_gen = gen;
	if (fd < 0)
		return;
	r = sd_event_add_io(l->d->event, &l->peek, fd, EPOLLIN, on_peek, l);
	if (r < 0) {
		log_warn("Failed to watch the hotness source for new heat: %s; idle ticks come on time only",
			 strerror(-r));
		l->peek = NULL;
	}
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *l = userdata;
	struct tierd *d = l->d;
	struct timespec a, b;
	uint64_t now_usec, next;

	clock_gettime(CLOCK_MONOTONIC, &a);
	manager_tick(l->m, a.tv_sec * 1000000000ull + a.tv_nsec);
	clock_gettime(CLOCK_MONOTONIC, &b);
	d->last_tick_duration_ns =
		(b.tv_sec - a.tv_sec) * 1000000000ull + b.tv_nsec - a.tv_nsec;

	/* Fixed rate (slower while idle); after a stall, start again from
	 * now rather than catch up. */
	l->interval_usec = manager_interval_ms(l->m) * USEC_PER_MSEC;
	next = usec + l->interval_usec;
	sd_event_now(d->event, CLOCK_MONOTONIC, &now_usec);
	if (next <= now_usec)
		next = now_usec + l->interval_usec;
	sd_event_source_set_time(s, next);
	peek_watch(l);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* The source saw heat it did not know: a peek that finds it too while
 * tierd is idle moves the next tick to now.  manager_peek() takes the
 * readiness away whatever it decides. */
static int on_peek(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *l = userdata;
	struct tierd *d = l->d;
	uint64_t now_usec;

	sd_event_now(d->event, CLOCK_MONOTONIC, &now_usec);
	if (manager_peek(l->m, now_usec * 1000) > 0) {
		sd_event_source_set_time(l->tick, now_usec);
		sd_event_source_set_enabled(l->tick, SD_EVENT_ONESHOT);
	}
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si,
		     void *userdata)
{
	struct tierd *d = userdata;
	char why[4096];

	if (si->ssi_signo == SIGHUP) {
		log_info("SIGHUP: reloading %s", d->config_path);
		tierd_reload(d, why, sizeof(why)); /* logs its own errors */
		return 0;
	}
	log_info("%s: stopping", strsignal(si->ssi_signo));
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static const char *pick_runtime_dir(const char *opt)
{
	const char *env;

	if (opt)
		return opt;
	env = getenv("TIERD_RUNTIME_DIR");
	if (env && *env)
		return env;
	env = getenv("RUNTIME_DIRECTORY"); /* RuntimeDirectory= in the unit */
	if (env && *env && !strchr(env, ':'))
		return env;
	return TIERD_RUNTIME_DIR;
}

/*
 * Keep tierd's own pages in memory.  tierd acts when memory is short -- a
 * fast node at its watermark, the kernel reclaiming what it can there -- and
 * what it can is file pages: tierd's code and its libraries' among them.
 * Paged out, they come back by a major fault at each tick, from whatever
 * the root file system is, while the tick's work waits.  So the memory
 * tierd maps by the end of start-up is locked: its code and libraries, the
 * hotness table and the per-tick arrays (all sized at start), the stacks.
 * MCL_ONFAULT: a page is locked when first used, nothing is faulted in
 * that tierd never touches (the table is mapped whole and used sparsely,
 * libsystemd's text is mostly unused).  Not MCL_FUTURE: later mappings
 * would count against RLIMIT_MEMLOCK once CAP_IPC_LOCK is gone, and a
 * malloc() past it would fail.
 *
 * mlockall(MCL_CURRENT) needs CAP_IPC_LOCK (root by hand: it runs before
 * drop_capabilities()) or an RLIMIT_MEMLOCK above the size of every
 * mapping (the unit's LimitMEMLOCK=infinity; its capability bounding set
 * leaves CAP_IPC_LOCK out).  Without either, tierd says so once and runs
 * unlocked.  The kernel counts whole mappings in VmLck, not the pages
 * locked: those are in Mlocked of /proc/meminfo.
 */
static void lock_memory(void)
{
	if (mlockall(MCL_CURRENT | MCL_ONFAULT) < 0) {
		log_warn("Failed to lock tierd's memory: %s; under memory pressure its code may be paged out (the unit sets LimitMEMLOCK=infinity; by hand, run it as root or raise ulimit -l)",
			 strerror(errno));
		return;
	}
	log_info("Memory locked as it is used (mlockall MCL_CURRENT|MCL_ONFAULT)");
}

/*
 * After start-up: keep TIERD_CAPS, and say what is kept.  With
 * kernel.numa_balancing: takeover, also CAP_SYS_ADMIN: the kernel checks it on
 * every write of kernel.numa_balancing (kernel/sched/core.c), and tierd must be
 * able to put the original value back on exit.  The shipped unit does not grant
 * it; tierd.yaml(5) says how to.
 */
static int drop_capabilities(const struct tierd *d)
{
	uint64_t keep = TIERD_CAPS;
	struct caps_state cs;
	char buf[256];
	int r;

	if (d->conf->kernel.numa_balancing == CONF_NUMAB_TAKEOVER)
		keep |= CAPS_BIT(CAP_SYS_ADMIN);
	r = caps_restrict(keep, &cs);

	if (r < 0) {
		log_err("Failed to drop capabilities: %s", strerror(-r));
		return r;
	}
	caps_format(cs.effective, buf, sizeof(buf));
	log_info("Capabilities kept: %s", buf);
	if (cs.bounding & ~keep) {
		caps_format(cs.bounding & ~keep, buf, sizeof(buf));
		log_notice(
			"No CAP_SETPCAP to narrow the bounding set, which still has %s (harmless: tierd execs nothing and sets no_new_privs)",
			buf);
	}
	return 0;
}

/*
 * -v: seconds from this process's creation (fork) to now: exec, the dynamic
 * loader and option parsing, before d->start_ns.  From /proc/self/stat's
 * starttime (clock ticks since boot) against CLOCK_BOOTTIME; -1 if unread.
 */
static double since_fork_s(void)
{
	unsigned long long start;
	struct timespec ts;
	char buf[1024];
	const char *p;
	long hz = sysconf(_SC_CLK_TCK);

	if (fs_read_pid_stat("/proc", "self", buf, sizeof(buf), &p) < 0 || hz <= 0 ||
	    sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &start) != 1 ||
	    clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9 - (double)start / hz;
}

static int run(struct tierd *d)
{
	static struct manager mgr;
	struct ctl_server *ctl = NULL;
	struct loop l = { .d = d, .m = &mgr };
	sd_event_source *tick = NULL;
	uint64_t wd_usec = 0;
	struct timespec ts;
	sigset_t ss;
	int r;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	r = sd_event_default(&d->event);
	if (r < 0) {
		log_err("Failed to create the event loop: %s", strerror(-r));
		return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	d->start_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &ts);
	d->start_realtime_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (log_enabled(LOG_DEBUG))
		log_debug("tierd started %.2f s after its fork (exec, loader, options)",
			  since_fork_s());

	r = tierd_init(d);
	if (r < 0)
		goto out;
	r = manager_init(&mgr, d, NULL);
	if (r < 0)
		goto out;
	r = ctl_server_start(d, &ctl);
	if (r < 0) {
		log_err("Failed to listen on %s/control.sock: %s",
			d->runtime_dir,
			r == -EADDRINUSE ?
				"another tierd is running" :
			r == -EPERM ?
				"the directory must be owned by tierd's user and writable by no one else" :
			r == -ENOTDIR ? "not a directory (or a symbolic link)" :
					strerror(-r));
		goto out;
	}
	if (sd_watchdog_enabled(0, &wd_usec) > 0) {
		uint32_t ms = d->conf->interval_ms > d->conf->idle_interval_ms ?
				      d->conf->interval_ms :
				      d->conf->idle_interval_ms;

		if (ms * USEC_PER_MSEC * 2 > wd_usec)
			log_warn("interval_ms or idle_interval_ms %u is more than half of WatchdogSec: systemd may kill tierd",
				 ms);
	}
	r = sd_event_add_signal(d->event, NULL, SIGTERM, on_signal, d);
	if (r >= 0)
		r = sd_event_add_signal(d->event, NULL, SIGINT, on_signal, d);
	if (r >= 0)
		r = sd_event_add_signal(d->event, NULL, SIGHUP, on_signal, d);
	/* The first tick at once: READY=1 follows it. */
	if (r >= 0)
		r = sd_event_add_time_relative(d->event, &tick, CLOCK_MONOTONIC,
					       0, TICK_ACCURACY_USEC, on_tick,
					       &l);
	l.tick = tick;
	l.peek_fd = -1;	/* each tick's peek_watch() */
	if (r < 0) {
		log_err("Failed to set up the event loop: %s", strerror(-r));
		goto out;
	}
	lock_memory();
	r = drop_capabilities(d);
	if (r < 0)
		goto out;
	log_info(
		"tierd %s running: config %s, control socket %s/control.sock%s%s",
		TIERD_VERSION, d->config_path, d->runtime_dir,
		d->no_knobs ? ", kernel knobs off limits" : "",
		d->dry_run ? ", dry run" : "");
	r = sd_event_loop(d->event);
	if (r < 0)
		log_err("Event loop failed: %s", strerror(-r));
out:
	notify_stopping();
	manager_fini(&mgr); /* restores every knob a stage changed */
	tierd_fini(d);
	ctl_server_stop(ctl);
	sd_event_source_disable_unref(l.peek);
	sd_event_source_unref(tick);
	d->event = sd_event_unref(d->event);
	return r;
}

int main(int argc, char **argv)
{
	enum { OPT_RUNTIME = 256, OPT_NO_KNOBS, OPT_ROOT, OPT_VERSION };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'n' },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME },
		{ "no-knobs", no_argument, NULL, OPT_NO_KNOBS },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct tierd d;
	const char *config = NULL, *runtime = NULL;
	bool check = false;
	int c;

	log_init();
	d.root = "/";
	while ((c = getopt_long(argc, argv, "c:nvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'n':
			check = true;
			break;
		case OPT_RUNTIME:
			runtime = optarg;
			break;
		case OPT_NO_KNOBS:
			d.no_knobs = true;
			break;
		case OPT_ROOT:
			d.root = optarg;
			break;
		case 'v':
			log_set_max_level(LOG_DEBUG);
			break;
		case OPT_VERSION:
			printf("tierd %s\n", TIERD_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (check && optind + 1 == argc && !config)
		config = argv[optind++];
	if (optind != argc) {
		fprintf(stderr, "tierd: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (check)
		return check_config(config ? config : TIERD_CONFIG_PATH);

	d.config_is_default = !config;
	if (snprintf(d.config_path, sizeof(d.config_path), "%s",
		     config ? config : TIERD_CONFIG_PATH) >=
		    (int)sizeof(d.config_path) ||
	    snprintf(d.runtime_dir, sizeof(d.runtime_dir), "%s",
		     pick_runtime_dir(runtime)) >= (int)sizeof(d.runtime_dir)) {
		fprintf(stderr, "tierd: path too long\n");
		return 2;
	}
	return run(&d) < 0 ? 1 : 0;
}
