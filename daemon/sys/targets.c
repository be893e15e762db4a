// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "procmem.h"
#include "targets.h"

int targets_init(struct targets *t, const struct targets_params *p)
{
	memset(t, 0, sizeof(*t));
	if (!p->nrules || !p->rules || !p->max_targets)
		return -EINVAL;
	t->p = *p;
	if (!t->p.proc_root)
		t->p.proc_root = "/proc";
	if (!t->p.cgroup_root)
		t->p.cgroup_root = "/sys/fs/cgroup";
	if (!t->p.page_size)
		return -EINVAL;
	if (!t->p.self)
		t->p.self = getpid();
	t->pids = calloc(p->max_targets, sizeof(*t->pids));
	t->rss = calloc(p->max_targets, sizeof(*t->rss));
	t->next = calloc(p->max_targets, sizeof(*t->next));
	if (!t->pids || !t->rss || !t->next) {
		targets_free(t);
		return -ENOMEM;
	}
	return 0;
}

void targets_free(struct targets *t)
{
	free(t->pids);
	free(t->rss);
	free(t->next);
	t->pids = NULL;
	t->rss = NULL;
	t->next = NULL;
	t->n = 0;
}

/* @root/PID/@name into @buf: fs_read()'s contract. */
static int read_small(const char *root, pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "%d/%s", (int)pid, name);
	return fs_read(root, path, buf, len, NULL);
}

/* What is read of a process, each part only once and only when a rule asks. */
struct proc_info {
	pid_t pid;
	bool have_comm, have_cgroup;
	char comm[64];
	char cgroup[512];
	uint64_t rss_bytes;
};

static bool cgroup_under(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;	/* "/a/" is "/a" */
	if (n == 1 && top[0] == '/')
		return true;
	return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int rule_matches(const struct targets *t, const struct targets_rule *r,
			struct proc_info *pi)
{
	if (r->min_rss_bytes && pi->rss_bytes < r->min_rss_bytes)
		return 0;
	if (r->comm) {
		if (!pi->have_comm) {
			if (read_small(t->p.proc_root, pi->pid, "comm", pi->comm, sizeof(pi->comm)))
				return -ESRCH;
			pi->comm[strcspn(pi->comm, "\n")] = '\0';
			pi->have_comm = true;
		}
		if (fnmatch(r->comm, pi->comm, 0) != 0)
			return 0;
	}
	if (r->cgroup) {
		if (!pi->have_cgroup) {
			char buf[4096], *line, *save = NULL;

			if (read_small(t->p.proc_root, pi->pid, "cgroup", buf, sizeof(buf)))
				return -ESRCH;
			pi->cgroup[0] = '\0';
			/* The v2 line is "0::/path"; v1 lines (hybrid setups) are ignored. */
			for (line = strtok_r(buf, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				if (!strncmp(line, "0::", 3)) {
					snprintf(pi->cgroup, sizeof(pi->cgroup), "%s", line + 3);
					break;
				}
			pi->have_cgroup = true;
		}
		if (!pi->cgroup[0] || !cgroup_under(pi->cgroup, r->cgroup))
			return 0;
	}
	return 1;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct targets_found *)a)->pid;
	pid_t y = ((const struct targets_found *)b)->pid;

	return (x > y) - (x < y);
}

/* @cgroup: the process's cgroup v2 path when the caller knows it, else
 * NULL.  Its resident memory in *@rss. */
static bool process_matches(const struct targets *t, pid_t pid, const char *cgroup,
			    uint64_t *rss)
{
	struct proc_info pi = { .pid = pid };

	if (cgroup) {
		snprintf(pi.cgroup, sizeof(pi.cgroup), "%s", cgroup);
		pi.have_cgroup = true;
	}
	/* Fails for a kernel thread too: no memory map. */
	if (proc_rss_bytes(t->p.proc_root, pid, t->p.page_size, &pi.rss_bytes) < 0)
		return false;
	*rss = pi.rss_bytes;
	for (size_t i = 0; i < t->p.nrules; i++) {
		int r = rule_matches(t, &t->p.rules[i], &pi);

		if (r < 0)
			return false;	/* exited while we looked */
		if (r > 0)
			return true;
	}
	return false;
}

static void take(struct targets *t, pid_t pid, uint64_t rss, size_t *n)
{
	if (*n == t->p.max_targets) {
		t->overflow++;
		return;
	}
	t->next[(*n)++] = (struct targets_found){ .pid = pid, .rss_bytes = rss };
	t->rss_next += rss;
}

static int scan_proc(struct targets *t, size_t *n)
{
	struct dirent *de;
	DIR *d = opendir(t->p.proc_root);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		uint64_t rss;

		if (end == de->d_name || *end || pid <= 0 || pid == t->p.self)
			continue;
		if (process_matches(t, (pid_t)pid, NULL, &rss))
			take(t, (pid_t)pid, rss, n);
	}
	closedir(d);
	return 0;
}

#define CGROUP_DEPTH_MAX 32

/*
 * The processes of the cgroup at @path (under cgroup_root; @path is its v2
 * path, "/a/b") and of every cgroup below it.  A cgroup that goes away
 * while we look is skipped, like a process that exits.
 */
static void scan_cgroup(struct targets *t, char *path, size_t size, int depth, size_t *n)
{
	size_t len = strlen(path);
	char file[4096];
	struct dirent *de;
	uint64_t rss;
	FILE *f;
	DIR *d;
	int pid;

	snprintf(file, sizeof(file), "%s%s/cgroup.procs", t->p.cgroup_root, path);
	f = fopen(file, "re");
	if (!f)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 0 && pid != t->p.self &&
		    process_matches(t, pid, path[0] ? path : "/", &rss))
			take(t, pid, rss, n);
	fclose(f);
	if (depth >= CGROUP_DEPTH_MAX)
		return;
	snprintf(file, sizeof(file), "%s%s", t->p.cgroup_root, path);
	d = opendir(file);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    len + 1 + strlen(de->d_name) >= size)
			continue;
		snprintf(path + len, size - len, "/%s", de->d_name);
		scan_cgroup(t, path, size, depth + 1, n);
		path[len] = '\0';
	}
	closedir(d);
}

/* Every rule names a cgroup and cgroup_root is a cgroup v2 mount. */
static bool cgroups_only(const struct targets *t)
{
	char file[4096];

	for (size_t i = 0; i < t->p.nrules; i++)
		if (!t->p.rules[i].cgroup)
			return false;
	snprintf(file, sizeof(file), "%s/cgroup.controllers", t->p.cgroup_root);
	return access(file, F_OK) == 0;
}

static void scan_cgroups(struct targets *t, size_t *n)
{
	for (size_t i = 0; i < t->p.nrules; i++) {
		const char *cg = t->p.rules[i].cgroup;
		char path[2048];
		size_t len;
		bool inner = false;

		/* A rule whose cgroup lies within another's is walked with it:
		 * a process is in one cgroup, and found once. */
		for (size_t j = 0; j < t->p.nrules && !inner; j++)
			inner = j != i && cgroup_under(cg, t->p.rules[j].cgroup) &&
				(!cgroup_under(t->p.rules[j].cgroup, cg) || j < i);
		if (inner)
			continue;
		snprintf(path, sizeof(path), "%s", cg);
		len = strlen(path);
		while (len > 0 && path[len - 1] == '/')
			path[--len] = '\0';	/* "/a/" is "/a", "/" is "" */
		scan_cgroup(t, path, sizeof(path), 0, n);
	}
}

int targets_scan(struct targets *t, struct targets_diff *diff)
{
	const struct targets_found *next = t->next;
	size_t n = 0, i = 0, j = 0;

	t->overflow = 0;
	t->rss_next = 0;
	t->from_cgroups = cgroups_only(t);
	if (t->from_cgroups) {
		scan_cgroups(t, &n);
	} else {
		int r = scan_proc(t, &n);

		if (r < 0)
			return r;
	}
	qsort(t->next, n, sizeof(*t->next), pid_cmp);

	if (diff) {
		diff->nadded = diff->nremoved = 0;
		while (i < t->n || j < n) {
			if (j == n || (i < t->n && t->pids[i] < next[j].pid))
				diff->removed[diff->nremoved++] = t->pids[i++];
			else if (i == t->n || next[j].pid < t->pids[i])
				diff->added[diff->nadded++] = next[j++].pid;
			else
				i++, j++;
		}
	}
	for (i = 0; i < n; i++) {
		t->pids[i] = next[i].pid;
		t->rss[i] = next[i].rss_bytes;
	}
	t->n = n;
	t->rss_bytes = t->rss_next;
	return (int)n;
}
