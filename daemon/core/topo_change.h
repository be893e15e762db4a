/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Memory hotplug as tierd sees it: two readings of the node part of struct
 * topology, before and after, and what changed between them.
 *
 * A node "comes online" for tierd when it has memory now and had none (or
 * did not exist); it "goes offline" when it had memory and has none now (or
 * is gone).  That is what re-derives the tiers: a node whose memory grows or
 * shrinks keeps its place, and its capacity is what each tick reads anyway.
 * A node that appears or goes without memory (the kernel registers a node
 * when a memory device is added to it, before its blocks are onlined), a
 * node whose CPUs come or go, or one the kernel moves to another memory tier
 * changes the tiers too, without a node online or offline to report.
 *
 * Node indexes are positions in topology->nodes, sorted by id: a node that
 * comes between two others moves those after it.  topo_change_remap() gives
 * each new index the old one of the same node, so arrays kept by index (the
 * daemon's per-node counters) follow their nodes.
 */
#ifndef TIERD_CORE_TOPO_CHANGE_H
#define TIERD_CORE_TOPO_CHANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "topology.h"

struct topo_change {
	int nr_online;
	int online[TOPO_MAX_NODES]; /* node ids, ascending */
	int nr_offline;
	int offline[TOPO_MAX_NODES];
	int nr_added; /* nodes that appeared without memory */
	int added[TOPO_MAX_NODES];
	int nr_removed; /* nodes without memory that went */
	int removed[TOPO_MAX_NODES];
	/* A node's CPUs came or went, or the kernel moved it to another tier. */
	bool other;
};

/* Fill @ret with what changed from @old to @next (node parts only).
 * Returns true when anything did, and the tiers must be derived again. */
bool topo_change_find(const struct topology *old, const struct topology *next,
		      struct topo_change *ret);

/* For each node index i of @next: @ret_old_index[i] is the same node's index
 * in @old, or -1 for a node @old did not have. */
void topo_change_remap(const struct topology *old, const struct topology *next,
		       int *ret_old_index);

/* "node 2 online (1.0 GiB, no CPUs), node 1 offline" into @buf, the online
 * nodes as @next has them; then "node 3 added without memory", "node 4
 * removed"; "CPUs or kernel tiers changed" when nothing else is said.
 * Always NUL-terminated; cut short if @size is small. */
void topo_change_describe(const struct topo_change *ch, const struct topology *next,
			  char *buf, size_t size);

#endif
