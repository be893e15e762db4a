// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "numa_maps.h"
#include "procmem.h"

int proc_rss_bytes(const char *proc_root, pid_t pid, uint64_t page_size, uint64_t *ret)
{
	unsigned long long size, rss;
	char path[64], buf[128];
	int r;

	snprintf(path, sizeof(path), "%d/statm", (int)pid);
	r = fs_read(proc_root, path, buf, sizeof(buf), NULL);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	if (sscanf(buf, "%llu %llu", &size, &rss) != 2)
		return -EPROTO;
	if (!size)
		return -EINVAL;
	*ret = rss * page_size;
	return 0;
}

int proc_node_bytes(const char *proc_root, pid_t pid, uint64_t node_mask, uint64_t *ret)
{
	return numa_maps_nodes_bytes(proc_root, pid, node_mask, ret);
}

struct maps_ctx {
	pid_t pid;
	struct idle_set *s;
};

/* "7f2a40000000-7f2a48000000 rw-p 00000000 00:00 0    [heap]" */
static int maps_line(char *line, void *ctx)
{
	const struct maps_ctx *c = ctx;
	unsigned long long start, end;
	char perm[5];
	int name = 0, r;

	if (sscanf(line, "%llx-%llx %4s %*s %*s %*s %n", &start, &end, perm, &name) != 3 ||
	    !name || strlen(perm) != 4 || end <= start)
		return -EPROTO;
	if (perm[0] != 'r' || perm[2] == 'x' || !strncmp(line + name, "[vdso]", 6) ||
	    !strncmp(line + name, "[vvar", 5) || !strncmp(line + name, "[vsyscall]", 10))
		return 0;
	r = idle_add(c->s, c->pid, start, end, 0);
	return r == -EINVAL ? -EPROTO : r;
}

int proc_data_maps(const char *proc_root, pid_t pid, struct idle_set *s)
{
	struct maps_ctx c = { .pid = pid, .s = s };
	char rel[32];
	int r;

	snprintf(rel, sizeof(rel), "%d/maps", (int)pid);
	r = fs_each_line(proc_root, rel, maps_line, &c);
	return r == -ENOENT ? -ESRCH : r;
}
