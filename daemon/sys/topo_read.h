/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reads the machine's NUMA nodes from sysfs into struct topology (the node
 * part; core/tiers.c derives the tiers).  @root is "/" on a machine and a
 * fixture tree in tests: everything read is below it.
 *
 * Read:
 *   sys/devices/system/node/nodeN/{cpulist,meminfo,distance}
 *   sys/devices/system/node/nodeN/access0/initiators/{read,write}_{latency,bandwidth}
 *   sys/devices/virtual/memory_tiering/memory_tierN/nodelist
 *   proc/zoneinfo (the high watermarks; optional)
 */
#ifndef TIERD_SYS_TOPOLOGY_H
#define TIERD_SYS_TOPOLOGY_H

#include <stdint.h>

#include "../core/topology.h"

/* Fill @ret with every node under @root.  Tier fields are reset (tier = -1,
 * nr_tiers = 0).  Returns 0, -ENOENT when there is no node directory at all,
 * -E2BIG for more than TOPO_MAX_NODES nodes, or the errno of a file that
 * every node must have (cpulist, meminfo).  @page_bytes: the kernel's base
 * page, the unit of /proc/zoneinfo's watermarks. */
int topo_read(const char *root, uint64_t page_bytes, struct topology *ret);

/* Re-read total and free bytes of every node in @topo (each tick). */
int topo_refresh_memory(const char *root, struct topology *topo);

/* Node @id's MemFree now, in bytes: 0 or a negative errno. */
int topo_node_free(const char *root, int id, uint64_t *ret_bytes);

#endif
