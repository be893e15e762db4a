// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "topo_change.h"

static const struct topo_node *node_of(const struct topology *topo, int id)
{
	int i = topo_node_index(topo, id);

	return i >= 0 ? &topo->nodes[i] : NULL;
}

static bool has_memory(const struct topology *topo, int id)
{
	const struct topo_node *n = node_of(topo, id);

	return n && n->has_memory;
}

bool topo_change_find(const struct topology *old, const struct topology *next,
		      struct topo_change *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (int i = 0; i < next->nr_nodes; i++) {
		const struct topo_node *n = &next->nodes[i], *o = node_of(old, n->id);

		if (n->has_memory && !has_memory(old, n->id))
			ret->online[ret->nr_online++] = n->id;
		else if (!o)
			ret->added[ret->nr_added++] = n->id;
		else if (o->has_cpus != n->has_cpus || o->kernel_tier != n->kernel_tier)
			ret->other = true;
	}
	for (int i = 0; i < old->nr_nodes; i++) {
		const struct topo_node *o = &old->nodes[i];

		if (o->has_memory && !has_memory(next, o->id))
			ret->offline[ret->nr_offline++] = o->id;
		else if (!node_of(next, o->id))
			ret->removed[ret->nr_removed++] = o->id;
	}
	return ret->nr_online || ret->nr_offline || ret->nr_added || ret->nr_removed ||
	       ret->other;
}

void topo_change_remap(const struct topology *old, const struct topology *next,
		       int *ret_old_index)
{
	for (int i = 0; i < next->nr_nodes; i++)
		ret_old_index[i] = topo_node_index(old, next->nodes[i].id);
}

/* 1073741824 -> "1.0 GiB": the status line's form, without its library. */
static void fmt_size(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static size_t append(char *buf, size_t size, size_t len, const char *text)
{
	int n = snprintf(buf + len, size - len, "%s", text);

	return n < 0 || (size_t)n >= size - len ? size - 1 : len + (size_t)n;
}

void topo_change_describe(const struct topo_change *ch, const struct topology *next,
			  char *buf, size_t size)
{
	char part[96], sz[32];
	size_t len = 0;

	if (!size)
		return;
	buf[0] = '\0';
	for (int k = 0; k < ch->nr_online; k++) {
		const struct topo_node *n = node_of(next, ch->online[k]);
		unsigned int cpus = n ? n->nr_cpus : 0;

		fmt_size(sz, sizeof(sz), n ? n->total_bytes : 0);
		if (cpus)
			snprintf(part, sizeof(part), "%snode %d online (%s, %u CPU%s)",
				 len ? ", " : "", ch->online[k], sz, cpus, cpus == 1 ? "" : "s");
		else
			snprintf(part, sizeof(part), "%snode %d online (%s, no CPUs)",
				 len ? ", " : "", ch->online[k], sz);
		len = append(buf, size, len, part);
	}
	for (int k = 0; k < ch->nr_offline; k++) {
		snprintf(part, sizeof(part), "%snode %d offline%s", len ? ", " : "",
			 ch->offline[k], node_of(next, ch->offline[k]) ? "" : " (node gone)");
		len = append(buf, size, len, part);
	}
	for (int k = 0; k < ch->nr_added; k++) {
		snprintf(part, sizeof(part), "%snode %d added without memory", len ? ", " : "",
			 ch->added[k]);
		len = append(buf, size, len, part);
	}
	for (int k = 0; k < ch->nr_removed; k++) {
		snprintf(part, sizeof(part), "%snode %d removed", len ? ", " : "", ch->removed[k]);
		len = append(buf, size, len, part);
	}
	if (!len && ch->other)
		append(buf, size, len, "CPUs or kernel tiers changed");
}
