// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "numa_maps.h"

/*
 * One line: "7f0000000000 default anon=512 dirty=512 N0=12 N1=500
 * kernelpagesize_kB=4".  Its pages on the nodes of @mask, in bytes, added
 * to *@sum.  The page size is the mapping's (64 with 64 KiB base pages,
 * 2048 for 2 MiB hugetlb pages): the kernel prints it on every line with
 * pages, and a line with pages and none is an error.
 */
static int parse_line(char *line, uint64_t mask, uint64_t *sum)
{
	unsigned long long pages = 0, page_kb = 0;
	bool any = false;
	char *save = NULL;

	for (char *tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *end;

		if (tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9') {
			long id = strtol(tok + 1, &end, 10);

			if (*end != '=')
				return -EINVAL;
			any = true;
			if (id < 64 && (mask & (1ull << id))) {
				pages += strtoull(end + 1, &end, 10);
				if (*end)
					return -EINVAL;
			}
		} else if (strncmp(tok, "kernelpagesize_kB=", 18) == 0) {
			page_kb = strtoull(tok + 18, &end, 10);
			if (*end || !page_kb)
				return -EINVAL;
		}
	}
	if (any && !page_kb)
		return -EINVAL;
	*sum += pages * page_kb * 1024;
	return 0;
}

int numa_maps_node_bytes(const char *proc_root, pid_t pid, int node, uint64_t *ret)
{
	if (node < 0 || node >= 64)
		return -EINVAL;
	return numa_maps_nodes_bytes(proc_root, pid, 1ull << node, ret);
}

struct sum_ctx {
	uint64_t mask, sum;
};

static int sum_line(char *line, void *ctx)
{
	struct sum_ctx *c = ctx;

	return parse_line(line, c->mask, &c->sum);
}

int numa_maps_nodes_bytes(const char *proc_root, pid_t pid, uint64_t mask, uint64_t *ret)
{
	struct sum_ctx c = { .mask = mask };
	char rel[32];
	int r;

	*ret = 0;
	snprintf(rel, sizeof(rel), "%d/numa_maps", (int)pid);
	r = fs_each_line(proc_root, rel, sum_line, &c);
	if (r == 0)
		*ret = c.sum;
	return r == -ENOENT ? -ESRCH : r;
}
