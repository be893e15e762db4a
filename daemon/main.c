// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierd: options, --check-config, then run(): the config and the manager
 * (daemon.c, manager.c), the control socket (ctl_server.c, tierctl), and
 * the sd-event loop that owns them all (loop.c).
 *
 * Start-up ends by locking tierd's memory (lock_memory()) and dropping
 * every capability but TIERD_CAPS (caps.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "conf_machine.h"
#include "ctl_server.h"
#include "daemon.h"
#include "fsutil.h"
#include "log.h"
#include "loop.h"
#include "manager.h"
#include "notify.h"
#include "page_geom_read.h"
#include "record.h"
#include "topo_read.h"
#include "tierd-config.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tierd [OPTIONS]\n"
		"       tierd --check-config [--offline] [FILE]\n\n"
		"Promote hot pages to fast memory tiers and demote cold ones.\n\n"
		"  -c, --config FILE       policy file (default " TIERD_CONFIG_PATH
		")\n"
		"  -n, --check-config      check the policy file against this machine, print\n"
		"                          \"configuration OK\" or the errors, and exit\n"
		"      --offline           with --check-config: check the file alone\n"
		"      --runtime-dir DIR   control socket directory (default $TIERD_RUNTIME_DIR,\n"
		"                          $RUNTIME_DIRECTORY, then " TIERD_RUNTIME_DIR
		")\n"
		"      --no-knobs          never write a kernel knob (sysctl, sysfs)\n"
		"      --root DIR          read sysfs and procfs below DIR (testing)\n"
		"      --record FILE       write what the sampler sees to FILE, a trace\n"
		"                          tierd-sim replays (at most 4 GiB)\n"
		"  -v, --verbose           log debug messages\n"
		"      --version           print the version and exit\n"
		"  -h, --help              this text\n");
}

/*
 * --check-config: the file, then the file against this machine (nodes,
 * control.group, cgroups: conf_check_machine(), as a load or reload does),
 * under @root; --offline: the file alone.  Warnings do not fail the check.
 */
static int check_config(const char *path, const char *root, bool offline)
{
	static struct tierd_conf conf;
	static struct topology topo;
	char *errors = NULL, *warnings = NULL;
	struct page_geom geom;
	gid_t gid;
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
	if (offline) {
		printf("configuration OK (offline: not checked against this machine)\n");
		return 0;
	}
	r = page_geom_read(root, NULL, NULL, &geom);
	if (r < 0) {
		fprintf(stderr, "Failed to read the kernel's page sizes under %s: %s\n", root,
			strerror(-r));
		return 1;
	}
	r = topo_read(root, geom.base, &topo);
	if (r < 0) {
		fprintf(stderr,
			"Failed to read the NUMA topology under %s: %s (--offline checks the file alone)\n",
			root, strerror(-r));
		return 1;
	}
	r = conf_check_machine(&conf, &topo, root, &gid, &errors, &warnings);
	if (warnings)
		fputs(warnings, stderr);
	if (errors)
		fputs(errors, stderr);
	free(warnings);
	free(errors);
	if (r == -ENOMEM)
		fprintf(stderr, "%s: %s\n", path, strerror(-r));
	if (r < 0)
		return 1;
	printf("configuration OK\n");
	return 0;
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

/* --record: the file opens before the capabilities go, as the control
 * socket does; the sample stage hands the recorder to its hot table. */
static int record_start(struct tierd *d, struct recorder *rec)
{
	int r;

	if (!d->record_path)
		return 0;
	r = record_open(rec, d->record_path, d->root, &d->geom, 0, d->start_ns);
	if (r < 0) {
		log_err("Failed to create %s for --record: %s", d->record_path, strerror(-r));
		return r;
	}
	d->record = rec;
	log_info("Recording what the sampler sees to %s", d->record_path);
	return 0;
}

static void record_stop(struct tierd *d)
{
	int r;

	if (!d->record)
		return;
	r = record_close(d->record);
	if (r < 0)
		log_err("Failed to write %s: %s", d->record_path, strerror(-r));
	else
		log_info("Recorded %" PRIu64 " records to %s", d->record->lines, d->record_path);
	d->record = NULL;
}

static int run(struct tierd *d)
{
	static struct manager mgr;
	static struct recorder rec;
	struct ctl_server *ctl = NULL;
	struct loop l;
	struct timespec ts;
	int r;

	r = loop_open(&l, d, &mgr);
	if (r < 0)
		return r;
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
	r = record_start(d, &rec);
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
	r = loop_arm(&l);
	if (r < 0)
		goto out;
	lock_memory();
	r = drop_capabilities(d);
	if (r < 0)
		goto out;
	log_info(
		"tierd %s running: config %s, control socket %s/control.sock%s%s",
		TIERD_VERSION, d->config_path, d->runtime_dir,
		d->no_knobs ? ", kernel knobs off limits" : "",
		d->dry_run ? ", dry run" : "");
	r = loop_run(&l);
out:
	notify_stopping();
	manager_fini(&mgr); /* restores every knob a stage changed */
	record_stop(d);
	tierd_fini(d);
	ctl_server_stop(ctl);
	loop_close(&l);
	return r;
}

struct options {
	const char *config, *runtime;
	bool check, offline;
};

/* The command line into @o and @d; false when tierd is to exit at once
 * with *@ret_status (--help, --version, a bad option). */
static bool parse_options(int argc, char **argv, struct tierd *d,
			  struct options *o, int *ret_status)
{
	enum { OPT_RUNTIME = 256, OPT_NO_KNOBS, OPT_ROOT, OPT_VERSION, OPT_OFFLINE, OPT_RECORD };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'n' },
		{ "offline", no_argument, NULL, OPT_OFFLINE },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME },
		{ "no-knobs", no_argument, NULL, OPT_NO_KNOBS },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*ret_status = 0;
	while ((c = getopt_long(argc, argv, "c:nvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'n':
			o->check = true;
			break;
		case OPT_OFFLINE:
			o->offline = true;
			break;
		case OPT_RUNTIME:
			o->runtime = optarg;
			break;
		case OPT_NO_KNOBS:
			d->no_knobs = true;
			break;
		case OPT_ROOT:
			d->root = optarg;
			break;
		case OPT_RECORD:
			d->record_path = optarg;
			break;
		case 'v':
			log_set_max_level(LOG_DEBUG);
			break;
		case OPT_VERSION:
			printf("tierd %s\n", TIERD_VERSION);
			return false;
		case 'h':
			usage(stdout);
			return false;
		default:
			usage(stderr);
			*ret_status = 2;
			return false;
		}
	}
	if (o->check && optind + 1 == argc && !o->config)
		o->config = argv[optind++];
	if (optind != argc) {
		fprintf(stderr, "tierd: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		*ret_status = 2;
		return false;
	}
	if (o->offline && !o->check) {
		fprintf(stderr, "tierd: --offline goes with --check-config\n");
		usage(stderr);
		*ret_status = 2;
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	static struct tierd d;
	struct options o = { 0 };
	int status;

	log_init();
	d.root = "/";
	if (!parse_options(argc, argv, &d, &o, &status))
		return status;
	if (o.check)
		return check_config(o.config ? o.config : TIERD_CONFIG_PATH,
				    d.root, o.offline);

	d.config_is_default = !o.config;
	if (snprintf(d.config_path, sizeof(d.config_path), "%s",
		     o.config ? o.config : TIERD_CONFIG_PATH) >=
		    (int)sizeof(d.config_path) ||
	    snprintf(d.runtime_dir, sizeof(d.runtime_dir), "%s",
		     pick_runtime_dir(o.runtime)) >= (int)sizeof(d.runtime_dir)) {
		fprintf(stderr, "tierd: path too long\n");
		return 2;
	}
	return run(&d) < 0 ? 1 : 0;
}
