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
