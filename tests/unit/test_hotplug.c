// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory hotplug: which uevents say the topology may have changed, what
 * changed between two readings of fixture trees, and the daemon following a
 * node whose memory comes online after it started and goes again: the GPU
 * rule the file names for it applies and is left out again, the tiers are
 * derived again, per-node counters follow their nodes to new indexes, the
 * tick's refresh notices what uevents missed, and status says so.
 *
 *   test_hotplug FIXTURES_DIR
 *
 * Trees (FIXTURES_DIR/topology): dram-cxl (nodes 0, 1), hotplug-hbm-empty
 * (node 2 added, no memory online), hotplug-hbm (node 2 with 1 GiB, no
 * CPUs), hotplug-dram-hbm (nodes 0 and 2 only).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "manager.h"
#include "sampler_fake.h"
#include "status.h"
#include "test.h"
#include "topo_change.h"
#include "topo_read.h"
#include "uevent.h"

#define SEC 1000000000ull

static const char *fixtures_dir;
static char tmpdir[] = "/tmp/test_hotplug.XXXXXX";
static char conf_path[256];
static char root[4096];

/* d->root (and topo_read()'s) is this tree from now on. */
static const char *tree(const char *name)
{
	snprintf(root, sizeof(root), "%s/topology/%s", fixtures_dir, name);
	return root;
}

static void write_conf(const char *text)
{
	FILE *f = fopen(conf_path, "w");

	fputs(text, f);
	fclose(f);
}

#define MSG(s) s, sizeof(s) - 1

static void test_uevent(void)
{
	CHECK(uevent_is_topology(MSG("online@/devices/system/memory/memory40\0ACTION=online\0"
				    "DEVPATH=/devices/system/memory/memory40\0SUBSYSTEM=memory\0"
				    "SEQNUM=1834\0")));
	CHECK(uevent_is_topology(MSG("add@/devices/system/node/node2\0ACTION=add\0"
				    "DEVPATH=/devices/system/node/node2\0SUBSYSTEM=node\0SEQNUM=1830\0")));
	CHECK(uevent_is_topology(MSG("offline@/devices/system/memory/memory41\0SUBSYSTEM=memory\0"
				    "ACTION=offline\0")));
	CHECK(uevent_is_topology(MSG("remove@/devices/system/memory/memory41\0ACTION=remove\0"
				    "SUBSYSTEM=memory\0")));
	/* Not hotplug: another action, another subsystem, a cut message. */
	CHECK(!uevent_is_topology(MSG("change@/devices/system/memory/memory40\0ACTION=change\0"
				     "SUBSYSTEM=memory\0")));
	CHECK(!uevent_is_topology(MSG("add@/devices/virtual/net/lo\0ACTION=add\0SUBSYSTEM=net\0")));
	CHECK(!uevent_is_topology(MSG("online@/devices/system/cpu/cpu1\0ACTION=online\0"
				     "SUBSYSTEM=cpu\0")));
	CHECK(!uevent_is_topology(MSG("online@/x\0ACTION=online\0SUBSYSTEM=memo")));
	CHECK(!uevent_is_topology(MSG("online@/x\0SUBSYSTEM=memory\0ACTION=onl")));
	CHECK(!uevent_is_topology(MSG("SUBSYSTEM=memory\0")));
	CHECK(!uevent_is_topology("", 0));
}

static void read_tree(const char *name, struct topology *t)
{
	CHECK_EQ_INT(topo_read(tree(name), 4096, t), 0);
}

static void test_change(void)
{
	static struct topology a, b, c, e;
	struct topo_change ch;
	int old_index[TOPO_MAX_NODES];
	char text[192];

	read_tree("dram-cxl", &a);
	read_tree("hotplug-hbm-empty", &e);
	read_tree("hotplug-hbm", &b);
	read_tree("hotplug-dram-hbm", &c);
	CHECK(!topo_change_find(&a, &a, &ch));
	CHECK_EQ_INT(ch.nr_online + ch.nr_offline + ch.nr_added + ch.nr_removed, 0);

	/* The node first, without memory; then its memory onlined. */
	CHECK(topo_change_find(&a, &e, &ch));
	CHECK_EQ_INT(ch.nr_online, 0);
	CHECK_EQ_INT(ch.nr_added, 1);
	CHECK_EQ_INT(ch.added[0], 2);
	topo_change_describe(&ch, &e, text, sizeof(text));
	CHECK_EQ_STR(text, "node 2 added without memory");
	CHECK(topo_change_find(&e, &b, &ch));
	CHECK_EQ_INT(ch.nr_online, 1);
	CHECK_EQ_INT(ch.online[0], 2);
	CHECK_EQ_INT(ch.nr_added, 0);
	topo_change_describe(&ch, &b, text, sizeof(text));
	CHECK_EQ_STR(text, "node 2 online (1.0 GiB, no CPUs)");
	/* All at once. */
	CHECK(topo_change_find(&a, &b, &ch));
	CHECK_EQ_INT(ch.nr_online, 1);
	CHECK_EQ_INT(ch.nr_added, 0);

	/* Offlined, then the node gone; both at once. */
	CHECK(topo_change_find(&b, &e, &ch));
	topo_change_describe(&ch, &e, text, sizeof(text));
	CHECK_EQ_STR(text, "node 2 offline");
	CHECK(topo_change_find(&e, &a, &ch));
	topo_change_describe(&ch, &a, text, sizeof(text));
	CHECK_EQ_STR(text, "node 2 removed");
	CHECK(topo_change_find(&b, &a, &ch));
	topo_change_describe(&ch, &a, text, sizeof(text));
	CHECK_EQ_STR(text, "node 2 offline (node gone)");

	/* Node 1 comes between 0 and 2: node 2's index moves from 1 to 2. */
	CHECK(topo_change_find(&c, &b, &ch));
	topo_change_describe(&ch, &b, text, sizeof(text));
	CHECK_EQ_STR(text, "node 1 online (64.0 GiB, no CPUs)");
	topo_change_remap(&c, &b, old_index);
	CHECK_EQ_INT(old_index[0], 0);
	CHECK_EQ_INT(old_index[1], -1);
	CHECK_EQ_INT(old_index[2], 1);

	/* Cut short, still a string. */
	topo_change_describe(&ch, &b, text, 12);
	CHECK_EQ_STR(text, "node 1 onli");
}

static struct sampler_fake sf;

static const struct manager_ops *fake_ops(void)
{
	static const pid_t none[1];
	static struct manager_ops ops;

	sampler_fake_init(&sf, "fake");
	ops = (struct manager_ops){ .sampler = &sf.base, .pids = none };
	return &ops;
}

static void start(struct tierd *d, struct manager *m, const char *tree_name)
{
	memset(d, 0, sizeof(*d));
	d->root = tree(tree_name);
	snprintf(d->config_path, sizeof(d->config_path), "%s", conf_path);
	snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s", tmpdir);
	d->no_knobs = true;
	CHECK_EQ_INT(tierd_init(d), 0);
	CHECK_EQ_INT(manager_init(m, d, fake_ops()), 0);
}

static void stop(struct tierd *d, struct manager *m)
{
	manager_fini(m);
	tierd_fini(d);
}

static bool status_has(struct tierd *d, uint64_t now_ns, const char *want)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	bool found;

	status_render(d, f, false, now_ns);
	fclose(f);
	found = text && strstr(text, want);
	if (!found)
		fprintf(stderr, "no '%s' in:\n%s", want, text ? text : "");
	free(text);
	return found;
}

/* tierd starts before the GPU's memory is online: the rule waits for it,
 * applies once node 2 has memory, and is left out again when it goes. */
static void test_gpu_node_online(void)
{
	static struct manager m;
	static struct tierd d;
	int idx;

	write_conf("tiers:\n  - name: fast\n    nodes: [0]\n  - name: slow\n    nodes: [1]\n"
		   "gpu_nodes:\n  - node: 2\n    allow: [hotmem]\n");
	start(&d, &m, "dram-cxl");
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 0);
	CHECK_EQ_INT(d.conf_file->nr_gpu_nodes, 1);
	CHECK_EQ_INT(tierd_rescan_topology(&d), 0);
	CHECK_EQ_INT(d.topo_changes_total, 0);
	CHECK(!status_has(&d, d.start_ns, "topology:"));

	/* The node, no memory yet: nothing to apply. */
	d.root = tree("hotplug-hbm-empty");
	CHECK_EQ_INT(tierd_rescan_topology(&d), 1);
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 0);
	CHECK_EQ_STR(d.topo_change, "node 2 added without memory");

	/* Its memory online: the rule applies, node 2 is a GPU node in no
	 * tier, the configured tiers stay. */
	d.root = tree("hotplug-hbm");
	CHECK_EQ_INT(tierd_rescan_topology(&d), 1);
	CHECK_EQ_INT(d.topo_changes_total, 2);
	CHECK_EQ_STR(d.topo_change, "node 2 online (1.0 GiB, no CPUs)");
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 1);
	CHECK_EQ_INT(d.conf->gpu_nodes[0].node, 2);
	CHECK_EQ_STR(d.conf->gpu_nodes[0].allow.s[0], "hotmem");
	idx = topo_node_index(&d.topo, 2);
	CHECK_EQ_INT(idx, 2);
	CHECK(idx >= 0 && d.topo.nodes[idx].gpu);
	CHECK(idx >= 0 && d.topo.nodes[idx].has_memory);
	CHECK_EQ_INT(d.topo.nr_tiers, 2);
	CHECK_EQ_STR(d.topo.tiers[0].name, "fast");
	CHECK(status_has(&d, d.topo_change_ns + 3 * SEC,
			 "topology: 2 changes since start, the last 3s ago: node 2 online (1.0 GiB, no CPUs)\n"));
	/* The pipeline runs on the new topology. */
	CHECK_EQ_INT(manager_tick(&m, d.topo_change_ns + SEC), 0);
	/* Read again, the same: nothing to do. */
	CHECK_EQ_INT(tierd_rescan_topology(&d), 0);
	CHECK_EQ_INT(d.topo_changes_total, 2);

	/* Offlined: the rule is left out again, the file's stays. */
	d.root = tree("hotplug-hbm-empty");
	CHECK_EQ_INT(tierd_rescan_topology(&d), 1);
	CHECK_EQ_STR(d.topo_change, "node 2 offline");
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 0);
	CHECK_EQ_INT(d.conf_file->nr_gpu_nodes, 1);
	idx = topo_node_index(&d.topo, 2);
	CHECK(idx >= 0 && !d.topo.nodes[idx].gpu);
	CHECK_EQ_INT(manager_tick(&m, d.topo_change_ns + 2 * SEC), 0);

	/* A tree that cannot be read: the topology stays. */
	d.root = tree("no-such-tree");
	CHECK_EQ_INT(tierd_rescan_topology(&d), -ENOENT);
	CHECK_EQ_INT(d.topo.nr_nodes, 3);
	stop(&d, &m);
}

/* Node 1 comes online between nodes 0 and 2: node 2's counters move with
 * it from index 1 to 2, and the tiers' totals are their nodes' sums. */
static void test_counters_follow_nodes(void)
{
	static struct manager m;
	static struct tierd d;

	write_conf("tiers:\n  - name: fast\n    nodes: [0]\n  - name: slow\n    nodes: [1, 2]\n");
	start(&d, &m, "hotplug-dram-hbm");
	CHECK_EQ_INT(d.topo.nr_tiers, 2);
	CHECK_EQ_INT(d.topo.tiers[1].nr_nodes, 1);
	d.stats.node[0].demoted_bytes_total = 100;
	d.stats.node[1].promoted_bytes_total = 4096; /* node 2 */
	d.stats.tier[1].promoted_bytes_total = 4096;
	d.prev_stats = d.stats;
	d.stats.node[1].promoted_bytes_total = 8192;
	d.stats.tier[1].promoted_bytes_total = 8192;

	d.root = tree("hotplug-hbm");
	CHECK_EQ_INT(tierd_rescan_topology(&d), 1);
	CHECK_EQ_STR(d.topo_change, "node 1 online (64.0 GiB, no CPUs)");
	CHECK_EQ_INT(d.topo.tiers[1].nr_nodes, 2);
	CHECK_EQ_U64(d.stats.node[0].demoted_bytes_total, 100);
	CHECK_EQ_U64(d.stats.node[1].promoted_bytes_total, 0);
	CHECK_EQ_U64(d.stats.node[2].promoted_bytes_total, 8192);
	CHECK_EQ_U64(d.prev_stats.node[2].promoted_bytes_total, 4096);
	CHECK_EQ_U64(d.stats.tier[0].demoted_bytes_total, 100);
	CHECK_EQ_U64(d.stats.tier[1].promoted_bytes_total, 8192);
	CHECK_EQ_U64(d.prev_stats.tier[1].promoted_bytes_total, 4096);
	stop(&d, &m);
}

/* No uevent came: the tick's refresh sees node 2's memory come (its
 * MemTotal while tierd thinks it has none) and go (its directory gone). */
static void test_tick_notices(void)
{
	static struct manager m;
	static struct tierd d;

	write_conf("gpu_nodes:\n  - node: 2\n");
	start(&d, &m, "hotplug-hbm-empty");
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 0);
	tierd_refresh_topology(&d);
	CHECK_EQ_INT(d.topo_changes_total, 0);
	d.root = tree("hotplug-hbm");
	tierd_refresh_topology(&d);
	CHECK_EQ_INT(d.topo_changes_total, 1);
	CHECK_EQ_INT(d.conf->nr_gpu_nodes, 1);
	d.root = tree("dram-cxl");
	tierd_refresh_topology(&d);
	CHECK_EQ_INT(d.topo_changes_total, 2);
	CHECK_EQ_STR(d.topo_change, "node 2 offline (node gone)");
	CHECK_EQ_INT(d.topo.nr_nodes, 2);
	CHECK_EQ_INT(d.topo_error, 0);
	stop(&d, &m);
}

int main(int argc, char **argv)
{
	fixtures_dir = argc > 1 ? argv[1] : "tests/fixtures";
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(conf_path, sizeof(conf_path), "%s/tierd.yaml", tmpdir);
	RUN(test_uevent);
	RUN(test_change);
	RUN(test_gpu_node_online);
	RUN(test_counters_follow_nodes);
	RUN(test_tick_notices);
	unlink(conf_path);
	rmdir(tmpdir);
	return TEST_EXIT();
}
