// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpulist.h"
#include "fsutil.h"
#include "topo_read.h"

#define NODE_DIR "sys/devices/system/node"
#define TIER_DIR "sys/devices/virtual/memory_tiering"

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Node ids from the nodeN directories, sorted. */
static int list_numbered(const char *root, const char *dir, const char *prefix,
			 int *ids, int max, int *ret_n)
{
	size_t plen = strlen(prefix);
	char path[4096];
	struct dirent *de;
	int n = 0, ret = 0;
	DIR *d;

	ret = fs_path(path, sizeof(path), root, dir);
	if (ret < 0)
		return ret;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		const char *p = de->d_name + plen;
		char *end;
		long id;

		if (strncmp(de->d_name, prefix, plen) ||
		    !isdigit((unsigned char)*p))
			continue;
		id = strtol(p, &end, 10);
		if (*end || id > 1 << 20)
			continue;
		if (n == max) {
			ret = -E2BIG;
			break;
		}
		ids[n++] = id;
	}
	closedir(d);
	qsort(ids, n, sizeof(*ids), cmp_int);
	*ret_n = n;
	return ret;
}

/* "Node 0 MemTotal:  7431968 kB" lines. */
static int read_meminfo(const char *root, struct topo_node *node)
{
	char path[128], buf[8192], *line, *save;
	int ret, found = 0;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", node->id);
	ret = fs_read(root, path, buf, sizeof(buf), NULL);
	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long kb;
		char key[32];
		int id;

		if (sscanf(line, "Node %d %31[^:]: %llu kB", &id, key, &kb) !=
		    3)
			continue;
		if (!strcmp(key, "MemTotal")) {
			node->total_bytes = kb * 1024;
			found |= 1;
		} else if (!strcmp(key, "MemFree")) {
			node->free_bytes = kb * 1024;
			found |= 2;
		}
	}
	return found == 3 ? 0 : -EINVAL;
}

static void read_hmat(const char *root, struct topo_node *node)
{
	static const char *const names[] = {
		"read_latency",
		"write_latency",
		"read_bandwidth",
		"write_bandwidth",
	};
	uint32_t *fields[] = {
		&node->read_latency_ns,
		&node->write_latency_ns,
		&node->read_bandwidth_mbps,
		&node->write_bandwidth_mbps,
	};

	for (size_t i = 0; i < 4; i++) {
		char path[160];
		uint64_t v;

		snprintf(path, sizeof(path),
			 NODE_DIR "/node%d/access0/initiators/%s", node->id,
			 names[i]);
		/* Absent without HMAT: 0 stands for unknown. */
		*fields[i] = fs_read_u64(root, path, &v) == 0 &&
					     v <= UINT32_MAX ?
				     v :
				     0;
	}
}

static void read_distances(const char *root, struct topology *topo, int idx)
{
	char path[128], buf[1024], *p, *end;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/distance",
		 topo->nodes[idx].id);
	if (fs_read(root, path, buf, sizeof(buf), NULL) < 0)
		return;
	/* One entry per online node, in node order: the order of our array. */
	p = buf;
	for (int j = 0; j < topo->nr_nodes; j++) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || v > 255)
			break;
		topo->distance[idx][j] = v;
		p = end;
	}
}

static void read_kernel_tiers(const char *root, struct topology *topo)
{
	int ids[64], n = 0;

	if (list_numbered(root, TIER_DIR, "memory_tier", ids, 64, &n) < 0)
		return;
	for (int t = 0; t < n; t++) {
		uint64_t bits[(TOPO_MAX_NODES * 16 + 63) / 64];
		char path[128];

		snprintf(path, sizeof(path), TIER_DIR "/memory_tier%d/nodelist",
			 ids[t]);
		if (cpulist_read(root, path, bits, TOPO_MAX_NODES * 16, NULL) < 0)
			continue;
		for (int i = 0; i < topo->nr_nodes; i++) {
			int id = topo->nodes[i].id;

			if (bits[id / 64] & (1ull << (id % 64)))
				topo->nodes[i].kernel_tier = ids[t];
		}
	}
}

/* Sum of the "high" watermarks per node from zoneinfo, in pages. */
static void read_watermarks(const char *root, uint64_t page, struct topology *topo)
{
	char path[4096];
	char line[256];
	int cur = -1;
	FILE *f;

	if (fs_path(path, sizeof(path), root, "proc/zoneinfo") < 0)
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long pages;
		int id;

		if (sscanf(line, "Node %d, zone", &id) == 1) {
			cur = topo_node_index(topo, id);
			continue;
		}
		if (cur >= 0 && sscanf(line, " high %llu", &pages) == 1)
			topo->nodes[cur].high_wmark_bytes += pages * page;
	}
	fclose(f);
}

int topo_read(const char *root, uint64_t page_bytes, struct topology *ret)
{
	int ids[TOPO_MAX_NODES], n = 0, r;

	memset(ret, 0, sizeof(*ret));
	r = list_numbered(root, NODE_DIR, "node", ids, TOPO_MAX_NODES, &n);
	if (r < 0)
		return r;
	if (n == 0)
		return -ENOENT;
	ret->nr_nodes = n;
	for (int i = 0; i < n; i++) {
		struct topo_node *node = &ret->nodes[i];
		uint64_t cpus[CPULIST_MAX_IDS / 64];
		char path[128];

		node->id = ids[i];
		node->kernel_tier = -1;
		node->tier = -1;
		snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist",
			 node->id);
		r = cpulist_read(root, path, cpus, CPULIST_MAX_IDS, &node->nr_cpus);
		if (r < 0)
			return r;
		node->has_cpus = node->nr_cpus > 0;
		r = read_meminfo(root, node);
		if (r < 0)
			return r;
		node->has_memory = node->total_bytes > 0;
		read_hmat(root, node);
	}
	for (int i = 0; i < n; i++)
		read_distances(root, ret, i);
	read_kernel_tiers(root, ret);
	read_watermarks(root, page_bytes, ret);
	return 0;
}

int topo_node_free(const char *root, int id, uint64_t *ret_bytes)
{
	struct topo_node n = { .id = id };
	int r = read_meminfo(root, &n);

	if (r == 0)
		*ret_bytes = n.free_bytes;
	return r;
}

int topo_refresh_memory(const char *root, struct topology *topo)
{
	for (int i = 0; i < topo->nr_nodes; i++) {
		int r = read_meminfo(root, &topo->nodes[i]);

		if (r < 0)
			return r;
	}
	return 0;
}
