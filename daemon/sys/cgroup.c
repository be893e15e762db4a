// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fsutil.h"

int cg_path_of_pid(const char *proc_root, int pid, char *buf, size_t len)
{
	char rel[32], text[8192], *line, *next;
	int r;

	snprintf(rel, sizeof(rel), "%d/cgroup", pid);
	r = fs_read(proc_root, rel, text, sizeof(text), NULL);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	for (line = text; line; line = next) {
		size_t n;
		char *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "0::", 3) != 0)
			continue;
		p = line + 3;
		n = strlen(p);
		/* A cgroup removed while the process is in it. */
		if (n >= 10 && strcmp(p + n - 10, " (deleted)") == 0)
			p[n -= 10] = '\0';
		if (n + 1 > len)
			return -ENAMETOOLONG;
		memcpy(buf, p, n + 1);
		return 0;
	}
	return -ENOENT;
}

/* "anon N0=123 N1=456": add each node's value to @out. */
static int parse_nodes(const char *s, uint64_t *out, int *nr_nodes)
{
	while (*s) {
		char *end;
		unsigned long id;
		unsigned long long v;

		while (*s == ' ')
			s++;
		if (*s == '\0' || *s == '\n')
			break;
		if (*s != 'N')
			return -EINVAL;
		errno = 0;
		id = strtoul(s + 1, &end, 10);
		if (end == s + 1 || *end != '=')
			return -EINVAL;
		v = strtoull(end + 1, &end, 10);
		if (errno)
			return -EINVAL;
		if (id < TOPO_MAX_NODES) {
			out[id] = v;
			if ((int)id + 1 > *nr_nodes)
				*nr_nodes = (int)id + 1;
		}
		s = end;
	}
	return 0;
}

int cg_read_numa_stat(const char *cgroup_root, const char *path, struct cg_numa_stat *ret)
{
	char file[PATH_MAX], line[4096];
	bool seen_anon = false, seen_file = false;
	FILE *f;
	int r = 0;

	if ((size_t)snprintf(file, sizeof(file), "%s%s/memory.numa_stat", cgroup_root, path) >=
	    sizeof(file))
		return -ENAMETOOLONG;
	memset(ret, 0, sizeof(*ret));
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "anon ", 5) == 0) {
			r = parse_nodes(line + 5, ret->anon, &ret->nr_nodes);
			seen_anon = true;
		} else if (strncmp(line, "file ", 5) == 0) {
			r = parse_nodes(line + 5, ret->file, &ret->nr_nodes);
			seen_file = true;
		}
		if (r < 0)
			break;
	}
	fclose(f);
	if (r == 0 && (!seen_anon || !seen_file))
		r = -EINVAL;
	return r;
}

uint64_t cg_node_bytes(const struct cg_numa_stat *s, int id)
{
	if (id < 0 || id >= TOPO_MAX_NODES)
		return 0;
	return s->anon[id] + s->file[id];
}

uint64_t cg_fast_bytes(const struct cg_numa_stat *s, const struct topology *topo)
{
	uint64_t sum = 0;

	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo_index_fast(topo, i))
			sum += cg_node_bytes(s, topo->nodes[i].id);
	return sum;
}

uint64_t cg_gpu_bytes(const struct cg_numa_stat *s, const struct topology *topo)
{
	uint64_t sum = 0;

	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].gpu)
			sum += cg_node_bytes(s, topo->nodes[i].id);
	return sum;
}
