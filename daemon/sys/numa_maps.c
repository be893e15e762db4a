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

int numa_maps_nodes_bytes(const char *proc_root, pid_t pid, uint64_t mask, uint64_t *ret)
{
	char rel[32], path[4096], *line = NULL;
	size_t cap = 0;
	uint64_t sum = 0;
	FILE *f;
	int r = 0;

	*ret = 0;
	snprintf(rel, sizeof(rel), "%d/numa_maps", (int)pid);
	r = fs_path(path, sizeof(path), proc_root, rel);
	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	errno = 0;
	while (getline(&line, &cap, f) >= 0) {
		r = parse_line(line, mask, &sum);
		if (r < 0)
			break;
	}
	/* A process that exits while it is read: its file reads ESRCH. */
	if (r == 0 && ferror(f))
		r = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	if (r == 0)
		*ret = sum;
	return r;
}
