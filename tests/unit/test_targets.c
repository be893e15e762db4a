// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "targets.h"
#include "test.h"

static char root[] = "/tmp/tierd-proc-XXXXXX";

static void put(int pid, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", root, pid, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A process: comm, cgroup v2 path, statm pages (size, resident). */
static void proc(int pid, const char *comm, const char *cgroup, unsigned long size,
		 unsigned long rss)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s\n", comm);
	put(pid, "comm", buf);
	snprintf(buf, sizeof(buf), "0::%s\n", cgroup);
	put(pid, "cgroup", buf);
	snprintf(buf, sizeof(buf), "%lu %lu 0 0 0 0 0\n", size, rss);
	put(pid, "statm", buf);
}

static void rm_proc(int pid)
{
	const char *names[] = { "comm", "cgroup", "statm" };
	char path[512];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%d/%s", root, pid, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	rmdir(path);
}

#define MB (1024ull * 1024)

static const struct targets_rule rules[] = {
	{ .cgroup = "/workload/" },
	{ .comm = "redis-*", .min_rss_bytes = 100 * MB },
	{ .min_rss_bytes = 1024 * MB },
	{ .comm = "kthread*" },
};

static void test_scan_and_diff(void)
{
	struct targets_params p = {
		.proc_root = root, .rules = rules, .nrules = 4, .max_targets = 8,
		.page_size = 4096, .self = 555,
	};
	pid_t added[8], removed[8];
	struct targets_diff d = { .added = added, .removed = removed };
	struct targets t;
	char path[512];

	CHECK(mkdtemp(root) != NULL);
	proc(1, "systemd", "/init.scope", 5000, 512);
	proc(2, "kthreadd", "/", 0, 0);			/* kernel thread */
	proc(100, "redis-server", "/workload/redis", 100000, 51200);	/* 200 MiB */
	proc(101, "postgres", "/workload", 1000, 10);
	proc(102, "bash", "/workloads", 400000, 300000);	/* 1.14 GiB */
	proc(103, "redis-cli", "/user.slice", 1000, 100);	/* too small */
	proc(555, "tierd", "/workload", 1000, 100);		/* ourselves */
	proc(99, "gone", "/workload", 1000, 100);
	rm_proc(99);					/* exited: empty dir gone */
	snprintf(path, sizeof(path), "%s/self", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/98", root);
	mkdir(path, 0755);				/* exited mid-read: no files */

	CHECK_EQ_INT(targets_init(&t, &p), 0);
	CHECK_EQ_INT(targets_scan(&t, &d), 3);
	CHECK_EQ_INT(t.pids[0], 100);
	CHECK_EQ_INT(t.pids[1], 101);
	CHECK_EQ_INT(t.pids[2], 102);
	CHECK_EQ_U64(d.nadded, 3);
	CHECK_EQ_U64(d.nremoved, 0);
	/* Their resident memory, the policy's footprint: 200 MiB, 40 KiB,
	 * 300000 pages. */
	CHECK_EQ_U64(t.rss_bytes, (51200ull + 10 + 300000) * 4096);

	/* postgres exits, a new process starts in the cgroup, redis-cli grows. */
	rm_proc(101);
	proc(104, "worker", "/workload/x/y", 1000, 10);
	proc(103, "redis-cli", "/user.slice", 100000, 25600);	/* 100 MiB */
	CHECK_EQ_INT(targets_scan(&t, &d), 4);
	CHECK_EQ_U64(d.nadded, 2);
	CHECK_EQ_INT(added[0], 103);
	CHECK_EQ_INT(added[1], 104);
	CHECK_EQ_U64(d.nremoved, 1);
	CHECK_EQ_INT(removed[0], 101);

	/* Nothing changed: empty diff. */
	CHECK_EQ_INT(targets_scan(&t, &d), 4);
	CHECK_EQ_U64(d.nadded + d.nremoved, 0);
	CHECK_EQ_U64(t.rss_bytes, (51200ull + 300000 + 25600 + 10) * 4096);
	/* Each one's beside its pid, for the watch (found in /proc's order,
	 * sorted by pid). */
	CHECK_EQ_INT(t.pids[0], 100);
	CHECK_EQ_U64(t.rss[0], 51200ull * 4096);
	CHECK_EQ_INT(t.pids[1], 102);
	CHECK_EQ_U64(t.rss[1], 300000ull * 4096);
	CHECK_EQ_INT(t.pids[2], 103);
	CHECK_EQ_U64(t.rss[2], 25600ull * 4096);
	CHECK_EQ_INT(t.pids[3], 104);
	CHECK_EQ_U64(t.rss[3], 10ull * 4096);
	targets_free(&t);

	/* Bounded: the rest is counted, not tracked, nor its memory. */
	p.max_targets = 3;
	CHECK_EQ_INT(targets_init(&t, &p), 0);
	CHECK_EQ_INT(targets_scan(&t, NULL), 3);
	CHECK_EQ_U64(t.overflow, 1);
	{
		uint64_t pages = 0;

		for (size_t i = 0; i < t.n; i++)
			pages += t.pids[i] == 100 ? 51200 : t.pids[i] == 102 ? 300000 :
				 t.pids[i] == 103 ? 25600 : t.pids[i] == 104 ? 10 : 0;
		CHECK_EQ_U64(t.rss_bytes, pages * 4096);
	}
	targets_free(&t);
}

static char cgroot[] = "/tmp/tierd-cgroup-XXXXXX";

/* A cgroup under cgroot (made with its parents) listing @procs. */
static void cgroup(const char *cg, const char *procs)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "mkdir -p '%s%s'", cgroot, cg);
	CHECK_EQ_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s%s/cgroup.procs", cgroot, cg);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(procs, f);
		fclose(f);
	}
}

/*
 * Every rule names a cgroup: the processes come from the cgroup.procs files
 * of those cgroups and their descendants, not from /proc (202 says /db in
 * /proc but no cgroup lists it); a rule within another's cgroup finds its
 * processes once; min_rss still applies.  Without a cgroup v2 mount there,
 * the /proc walk again.
 */
static void test_scan_cgroups(void)
{
	static const struct targets_rule cg_rules[] = {
		{ .cgroup = "/db/", .min_rss_bytes = 100 * MB },
		{ .cgroup = "/db/child" },
	};
	struct targets_params p = {
		.proc_root = root, .cgroup_root = cgroot, .rules = cg_rules, .nrules = 2,
		.max_targets = 8, .page_size = 4096, .self = 555,
	};
	struct targets t;
	char path[512];

	CHECK(mkdtemp(cgroot) != NULL);
	proc(200, "a", "/db", 100000, 76800);		/* 300 MiB */
	proc(201, "b", "/db/child", 1000, 10);		/* small, but rule 2 */
	proc(202, "c", "/db", 100000, 76800);		/* in no cgroup.procs */
	proc(203, "d", "/db", 1000, 10);		/* too small for rule 1 */
	proc(204, "e", "/other", 100000, 76800);
	cgroup("", "1\n");
	cgroup("/db", "200\n203\n555\n205\n");	/* 555: tierd; 205: exited */
	cgroup("/db/child", "201\n");
	cgroup("/db/child/empty", "");
	cgroup("/other", "204\n");
	snprintf(path, sizeof(path), "%s/cgroup.controllers", cgroot);
	fclose(fopen(path, "w"));

	CHECK_EQ_INT(targets_init(&t, &p), 0);
	CHECK_EQ_INT(targets_scan(&t, NULL), 2);
	CHECK(t.from_cgroups);
	CHECK_EQ_INT(t.pids[0], 200);
	CHECK_EQ_INT(t.pids[1], 201);
	targets_free(&t);
	/* A rule cgroup that does not exist (yet): nothing, no error. */
	p.rules = &(const struct targets_rule){ .cgroup = "/missing" };
	p.nrules = 1;
	CHECK_EQ_INT(targets_init(&t, &p), 0);
	CHECK_EQ_INT(targets_scan(&t, NULL), 0);
	CHECK(t.from_cgroups);
	targets_free(&t);
	/* No cgroup v2 mount there: the /proc walk, which finds 202 too. */
	unlink(path);
	p.rules = cg_rules;
	p.nrules = 2;
	CHECK_EQ_INT(targets_init(&t, &p), 0);
	CHECK_EQ_INT(targets_scan(&t, NULL), 3);
	CHECK(!t.from_cgroups);
	CHECK_EQ_INT(t.pids[2], 202);
	targets_free(&t);
	snprintf(path, sizeof(path), "rm -rf '%s'", cgroot);
	CHECK_EQ_INT(system(path), 0);
}

static void test_bad_params(void)
{
	struct targets_params p = { .proc_root = "/nonexistent/proc", .rules = rules,
				    .nrules = 1, .max_targets = 4, .page_size = 4096 };
	struct targets t;

	CHECK_EQ_INT(targets_init(&t, &p), 0);
	CHECK_EQ_INT(targets_scan(&t, NULL), -ENOENT);
	targets_free(&t);
	p.nrules = 0;
	CHECK_EQ_INT(targets_init(&t, &p), -EINVAL);
}

int main(void)
{
	RUN(test_scan_and_diff);
	RUN(test_scan_cgroups);
	RUN(test_bad_params);
	if (!test_failures) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			return 1;
	}
	return TEST_EXIT();
}
