// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
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

/* One numa_maps line: "ADDR POLICY [file=...] ... N0=12 N1=3 kernelpagesize_kB=4". */
static uint64_t line_bytes(char *line, uint64_t node_mask)
{
	unsigned long long pages = 0, kb = 4, v;
	char *tok, *save = NULL, *end;

	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9') {
			unsigned long id = strtoul(tok + 1, &end, 10);

			if (*end != '=' || id >= 64 || !(node_mask & (1ull << id)))
				continue;
			v = strtoull(end + 1, NULL, 10);
			pages += v;
		} else if (!strncmp(tok, "kernelpagesize_kB=", 18)) {
			kb = strtoull(tok + 18, NULL, 10);
		}
	}
	return pages * kb * 1024;
}

int proc_node_bytes(const char *proc_root, pid_t pid, uint64_t node_mask, uint64_t *ret)
{
	char rel[64], path[4096];
	uint64_t bytes = 0;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;
	int r;

	snprintf(rel, sizeof(rel), "%d/numa_maps", (int)pid);
	r = fs_path(path, sizeof(path), proc_root, rel);
	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, f) > 0)
		bytes += line_bytes(line, node_mask);
	r = ferror(f) ? -EIO : 0;
	free(line);
	fclose(f);
	if (r == 0)
		*ret = bytes;
	return r;
}
