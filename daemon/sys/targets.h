/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which processes are sampled: those matching any of the configured rules,
 * re-evaluated from /proc on every scan so that processes that appear are
 * picked up and those that exit are dropped.  A rule matches a process when
 * every criterion it sets matches:
 *   cgroup     the process's cgroup v2 path is this path or below it
 *   comm       /proc/PID/comm matches this fnmatch(3) pattern
 *   min_rss    resident set size >= this many bytes
 * Kernel threads (no memory map) and the daemon itself never match.
 *
 * tierd.yaml's sampling.targets maps onto rules as: one rule per entry of
 * cgroups and one per entry of comms, each with min_rss_bytes; both lists
 * empty: a single rule with only min_rss_bytes (every large process).
 *
 * Where the processes come from: when every rule names a cgroup and the
 * cgroup v2 hierarchy is mounted at cgroup_root, from the cgroup.procs
 * files of those cgroups' subtrees; otherwise from a walk of all of /proc.
 * The walk reads every process's statm (and cgroup, for a cgroup rule),
 * three system calls each, every scan: on a server with thousands of
 * processes that is tierd's largest cost at rest, for the few processes a
 * cgroup rule can match.
 */
#ifndef TIERD_SYS_TARGETS_H
#define TIERD_SYS_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct targets_rule {
	const char *cgroup;	/* "/workload" (cgroup v2 path), NULL: any */
	const char *comm;	/* "redis-*", NULL: any */
	uint64_t min_rss_bytes;	/* 0: any */
};

struct targets_params {
	const char *proc_root;	/* NULL: "/proc"; a fixture tree in tests */
	const char *cgroup_root; /* NULL: "/sys/fs/cgroup" (the v2 mount) */
	const struct targets_rule *rules;
	size_t nrules;
	size_t max_targets;	/* the most processes tracked; the rest are counted */
	uint64_t page_size;	/* bytes per statm page: the kernel's base page */
	pid_t self;		/* never tracked (the daemon); 0: getpid() */
};

/* A process a scan found, and its resident memory then. */
struct targets_found {
	pid_t pid;
	uint64_t rss_bytes;
};

struct targets {
	struct targets_params p;
	pid_t *pids;		/* sorted, [max_targets] */
	uint64_t *rss;		/* pids[i]'s resident bytes at the last scan */
	size_t n;
	size_t overflow;	/* matching processes left out at the last scan */
	uint64_t rss_bytes;	/* the targets' resident memory at the last scan */
	uint64_t rss_next;	/* the scan's sum so far */
	bool from_cgroups;	/* the last scan read cgroup.procs, not /proc */
	struct targets_found *next; /* the scan's list, [max_targets] */
};

/* The changes one scan found; arrays of max_targets each, owned by the caller. */
struct targets_diff {
	pid_t *added;
	size_t nadded;
	pid_t *removed;
	size_t nremoved;
};

/* 0, -EINVAL (no rules, max_targets 0), -ENOMEM.  Copies @p, not the rules. */
int targets_init(struct targets *t, const struct targets_params *p);
void targets_free(struct targets *t);

/*
 * Find the processes (above), rebuild the sorted target list, and report
 * what changed since the previous scan in @diff (may be NULL).  Processes
 * that vanish while being read are skipped, and so are rule cgroups that do
 * not exist (yet).  Returns the number of targets, or -errno when the /proc
 * directory itself cannot be read.
 */
int targets_scan(struct targets *t, struct targets_diff *diff);

#endif
