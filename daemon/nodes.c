// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory that comes online after tierd starts, or goes.
 *
 * The HBM of a GPU-coherent node is onlined by the GPU's driver, often after
 * tierd has started; a CXL expander or a DIMM may be added or taken away
 * while it runs.  tierd reads the topology at start, and again when:
 *
 *   - the kernel says a node or a memory block came, went, was onlined or
 *     offlined (a uevent; loop.c waits TOPO_SETTLE for the burst of one
 *     device's blocks to end, and reads once);
 *   - a tick's refresh of the nodes' memory finds a node whose memory came
 *     or went, or a node gone (the uevents were missed or are not to be
 *     had);
 *   - every TOPO_POLL without uevents (the socket could not be opened).
 *
 * When the nodes with memory, their CPUs or their kernel tiers differ
 * (core/topo_change.h), the policy as its file says it is fitted to the new
 * nodes as at start (tierd_drop_missing_nodes(): a GPU rule whose node is
 * online now applies, one whose node went is left out), the tiers are
 * derived again, the per-node counters follow their nodes to their new
 * indexes, each tier's totals are its nodes' sums, and the manager takes
 * the new policy and topology as after a reload.  The journal and tierctl
 * status say what changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "manager.h"
#include "nodes.h"
#include "notify.h"
#include "topo_change.h"
#include "topo_read.h"

static bool is_memory_node(const struct topology *topo, int id)
{
	int idx = topo_node_index(topo, id);

	return idx >= 0 && topo->nodes[idx].has_memory;
}

/*
 * At start, a node the config names that is not a memory node now (a GPU
 * whose driver has not brought its memory online, a CXL device gone since
 * the file was written) is left out, with a warning that says where the
 * file names it, and the rest runs: refusing to start would leave the
 * machine with no tiering at all.  A tier left without nodes goes too.  A
 * reload still refuses such a file: tierctl shows the error, the running
 * policy stays.  Once the node's memory is online, the topology's rescan
 * puts it back.
 */
void tierd_drop_missing_nodes(struct tierd_conf *c, const struct topology *topo)
{
	int nt = 0, ng = 0;

	for (int t = 0; t < c->nr_tiers; t++) {
		struct conf_tier *ct = &c->tiers[t];
		int k = 0;

		for (int i = 0; i < ct->spec.nr_nodes; i++) {
			const struct conf_mark *m = &ct->node_marks[i];

			if (is_memory_node(topo, ct->spec.nodes[i])) {
				ct->node_marks[k] = *m;
				ct->spec.nodes[k++] = ct->spec.nodes[i];
				continue;
			}
			log_warn("%s:%u:%u: tiers: node %d is not a memory node of this machine: tier '%s' runs without it",
				 c->path, m->line, m->column, ct->spec.nodes[i], ct->spec.name);
		}
		ct->spec.nr_nodes = k;
		if (!k) {
			log_warn("%s:%u:%u: tiers: tier '%s' has no memory node left: left out",
				 c->path, ct->mark.line, ct->mark.column, ct->spec.name);
			continue;
		}
		if (nt != t)
			c->tiers[nt] = *ct;
		nt++;
	}
	if (c->nr_tiers && !nt)
		log_warn("%s: no configured tier has a memory node: tiers come from the kernel",
			 c->path);
	c->nr_tiers = nt;
	for (int g = 0; g < c->nr_gpu_nodes; g++) {
		const struct conf_gpu_node *gn = &c->gpu_nodes[g];

		if (!is_memory_node(topo, gn->node)) {
			log_warn("%s:%u:%u: gpu_nodes: node %d is not a memory node of this machine: its placement rule is left out",
				 c->path, gn->mark.line, gn->mark.column, gn->node);
			continue;
		}
		if (ng != g)
			c->gpu_nodes[ng] = *gn;
		ng++;
	}
	c->nr_gpu_nodes = ng;
}

void tierd_log_topology(const struct tierd *d)
{
	static const char *const sources[] = { "the kernel", "HMAT",
					       "the config" };
	const struct topology *t = &d->topo;

	for (int i = 0; i < t->nr_tiers; i++) {
		char nodes[256] = "";

		for (int k = 0; k < t->tiers[i].nr_nodes; k++)
			snprintf(nodes + strlen(nodes),
				 sizeof(nodes) - strlen(nodes), "%s%d",
				 k ? "," : "", t->tiers[i].nodes[k]);
		log_info("Tier %d '%s': nodes %s (from %s)", i,
			 t->tiers[i].name, nodes, sources[t->tier_source]);
	}
	if (t->kernel_tiers_flat)
		log_warn(
			"The kernel puts memory nodes in one tier that %s separates; tierd uses %d tiers as shown",
			sources[t->tier_source], t->nr_tiers);
	if (t->nr_tiers < 2)
		log_notice(
			"Only one memory tier: nothing to promote or demote on this machine");
}

/* A node's memory came or went since the topology was read, or the node
 * is gone: what the tick's refresh sees of a change (@r its error). */
static bool memory_moved(const struct topology *topo, int r)
{
	if (r == -ENOENT)
		return true;
	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].has_memory != (topo->nodes[i].total_bytes > 0))
			return true;
	return false;
}

void tierd_refresh_topology(struct tierd *d)
{
	int r = topo_refresh_memory(d->root, &d->topo);

	if (memory_moved(&d->topo, r)) {
		tierd_rescan_topology(d);
		return;
	}
	if (r < 0 && r != d->topo_error)
		log_warn("Failed to refresh node memory under %s: %s", d->root,
			 strerror(-r));
	d->topo_error = r;
}

/*
 * Counters kept by node index follow their nodes (@old_index: each new
 * index's old one, -1 for a new node); a tier's totals are its nodes' sums
 * from now on, so they stay with the memory the bytes went to.
 */
static void remap_stats(struct tierd_stats *s, const int *old_index,
			const struct topology *next)
{
	static struct tierd_stats was;

	was = *s;
	memset(s->node, 0, sizeof(s->node));
	for (int i = 0; i < next->nr_nodes; i++)
		if (old_index[i] >= 0)
			s->node[i] = was.node[old_index[i]];
	memset(s->tier, 0, sizeof(s->tier));
	for (int i = 0; i < next->nr_nodes; i++) {
		int t = next->nodes[i].tier;

		if (t < 0 || t >= TOPO_MAX_TIERS)
			continue;
		s->tier[t].promoted_bytes_total += s->node[i].promoted_bytes_total;
		s->tier[t].demoted_bytes_total += s->node[i].demoted_bytes_total;
	}
}

/* A GPU rule whose node is among those that came online applies now. */
static void log_rules_back(const struct tierd_conf *c, const struct topo_change *ch)
{
	for (int g = 0; g < c->nr_gpu_nodes; g++)
		for (int k = 0; k < ch->nr_online; k++)
			if (c->gpu_nodes[g].node == ch->online[k])
				log_notice("%s:%u:%u: gpu_nodes: node %d is online: its placement rule applies",
					   c->path, c->gpu_nodes[g].mark.line,
					   c->gpu_nodes[g].mark.column, ch->online[k]);
}

/* The policy as its file says it, fitted to @next, whose tiers it derives.
 * NULL when out of memory. */
static struct tierd_conf *fit_policy(const struct tierd *d, struct topology *next)
{
	struct tierd_conf *c = malloc(sizeof(*c));
	struct tiers_config tc;
	int bad = -1;

	if (!c)
		return NULL;
	*c = d->conf_file ? *d->conf_file : *d->conf;
	tierd_drop_missing_nodes(c, next);
	conf_tiers_config(c, &tc);
	/* Only nodes @next has are left: tiers_derive() cannot refuse them. */
	if (tiers_derive(next, &tc, &bad) < 0) {
		free(c);
		return NULL;
	}
	return c;
}

int tierd_rescan_topology(struct tierd *d)
{
	int old_index[TOPO_MAX_NODES], r;
	struct tierd_conf *conf;
	struct topo_change ch;
	struct topology next;
	char what[sizeof(d->topo_change)], status[256];
	struct timespec ts;

	r = topo_read(d->root, d->geom.base, &next);
	if (r < 0) {
		if (r != d->topo_error)
			log_warn("Failed to read the NUMA topology under %s again: %s; the previous one stays",
				 d->root, strerror(-r));
		d->topo_error = r;
		return r;
	}
	d->topo_error = 0;
	if (!topo_change_find(&d->topo, &next, &ch))
		return 0;
	topo_change_describe(&ch, &next, what, sizeof(what));
	log_notice("Topology changed: %s; deriving the tiers again", what);
	conf = fit_policy(d, &next);
	if (!conf) {
		log_warn("Failed to follow the topology's change: %s; the previous topology stays",
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	topo_change_remap(&d->topo, &next, old_index);
	remap_stats(&d->stats, old_index, &next);
	remap_stats(&d->prev_stats, old_index, &next);
	free(d->conf);
	d->conf = conf;
	d->topo = next;
	d->topo_changes_total++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	d->topo_change_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	snprintf(d->topo_change, sizeof(d->topo_change), "%s", what);
	if (d->mgr)
		manager_reload_apply(d->mgr);
	log_rules_back(conf, &ch);
	tierd_log_topology(d);
	tierd_status_line(d, status, sizeof(status));
	notify_status(status);
	return 1;
}
