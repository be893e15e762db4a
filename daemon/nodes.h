/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The machine's nodes as the daemon follows them (nodes.c): the policy
 * fitted to the nodes there are, the tiers in the journal, and the topology
 * read again when memory comes online or goes (daemon.h:
 * tierd_rescan_topology()).
 */
#ifndef TIERD_NODES_H
#define TIERD_NODES_H

#include "daemon.h"

/*
 * Leave out of @c each node of tiers: and gpu_nodes: that is not a memory
 * node of @topo, with a warning that says where the file names it; a tier
 * left without nodes goes too.
 */
void tierd_drop_missing_nodes(struct tierd_conf *c, const struct topology *topo);

/* One journal line per tier, and what is odd about them. */
void tierd_log_topology(const struct tierd *d);

#endif
