// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/gpu_usage: a rule's bytes on its node are its cgroups' reading plus
 * its other processes' readings, plus what tierd planned since each; a
 * rule not read yet holds at its cap; numa_maps reads come a few a tick,
 * never-read processes first, each again only after its refresh time.
 */
#include <string.h>

#include "gpu_usage.h"
#include "test.h"
#include "test_geom.h"

#define SEC 1000000000ull
#define MIB (1ull << 20)

static struct gpu_usage u;
static struct cand_procs procs;
static struct policy_params pp;

/* Rule 0: node 2, /train and "python*"; rule 1: node 3, "solver". */
static void setup(void)
{
	policy_params_default(&pp, &test_geom);
	pp.nr_rules = 2;
	pp.rules[0] = (struct policy_gpu_rule){ .node = 2, .max_bytes = 64 * MIB, .nr_allow = 2 };
	strcpy(pp.rules[0].allow[0], "/train");
	strcpy(pp.rules[0].allow[1], "python*");
	pp.rules[1] = (struct policy_gpu_rule){ .node = 3, .nr_allow = 1 };
	strcpy(pp.rules[1].allow[0], "solver");
	gpu_usage_init(&u, &pp);
	/* 10: in /train; 20: python outside it; 30: solver; 40: no rule. */
	procs = (struct cand_procs){ .nr = 4 };
	procs.procs[0] = (struct cand_proc){ .pid = 10, .cgroup = -1, .rule = 0 };
	procs.procs[1] = (struct cand_proc){ .pid = 20, .cgroup = -1, .rule = 0 };
	procs.procs[2] = (struct cand_proc){ .pid = 30, .cgroup = -1, .rule = 1 };
	procs.procs[3] = (struct cand_proc){ .pid = 40, .cgroup = -1, .rule = -1 };
}

static const bool by_cg[4] = { true, false, false, false };

static void test_unknown_until_read(void)
{
	uint64_t used[POLICY_MAX_RULES];
	pid_t due[8];

	setup();
	gpu_usage_sync(&u, &procs, by_cg);
	CHECK_EQ_INT(u.nr, 3);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], GPU_USAGE_UNKNOWN);
	CHECK_EQ_U64(used[1], GPU_USAGE_UNKNOWN);
	/* The cgroup's process is due too, but its cgroup's reading stands
	 * for it until then. */
	CHECK_EQ_U64(gpu_usage_due(&u, 1 * SEC, due, 8), 3);
	CHECK_EQ_INT(due[0], 10);
	CHECK_EQ_INT(due[1], 20);
	CHECK_EQ_INT(due[2], 30);
	gpu_usage_read_cgroups(&u, 0, true, 40 * MIB);
	gpu_usage_read_proc(&u, 20, 20 * MIB, 1 * SEC, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 60 * MIB);
	CHECK_EQ_U64(used[1], GPU_USAGE_UNKNOWN);
	gpu_usage_read_proc(&u, 30, 0, 1 * SEC, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[1], 0);
	/* A cgroup that could not be read: unknown again. */
	gpu_usage_read_cgroups(&u, 0, false, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], GPU_USAGE_UNKNOWN);
}

static void test_planned_until_next_read(void)
{
	uint64_t used[POLICY_MAX_RULES];
	struct policy_intent it[4] = {
		/* 20 promoted onto its rule's node: counts */
		{ .pid = 20, .nr_pages = 512, .to_node = 2, .kind = POLICY_PROMOTE },
		/* onto another node (DRAM): does not */
		{ .pid = 20, .nr_pages = 512, .to_node = 0, .kind = POLICY_PROMOTE },
		/* 10, counted by its cgroup */
		{ .pid = 10, .nr_pages = 256, .to_node = 2, .kind = POLICY_PROMOTE },
		/* a demotion off the node waits for the read */
		{ .pid = 20, .nr_pages = 512, .from_node = 2, .to_node = 1,
		  .kind = POLICY_DEMOTE },
	};

	setup();
	gpu_usage_sync(&u, &procs, by_cg);
	gpu_usage_read_cgroups(&u, 0, true, 40 * MIB);
	gpu_usage_read_proc(&u, 20, 20 * MIB, 1 * SEC, 0);
	gpu_usage_read_proc(&u, 30, 0, 1 * SEC, 0);
	gpu_usage_planned(&u, it, 4);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 60 * MIB + 2 * MIB + 1 * MIB);
	/* The next reads see what landed, and replace the plan. */
	gpu_usage_read_cgroups(&u, 0, true, 41 * MIB);
	gpu_usage_read_proc(&u, 20, 22 * MIB, 2 * SEC, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 63 * MIB);
}

static void test_pace(void)
{
	pid_t due[8];

	setup();
	gpu_usage_sync(&u, &procs, by_cg);
	gpu_usage_read_proc(&u, 10, 0, 2 * SEC, 0);
	gpu_usage_read_proc(&u, 20, 0, 1 * SEC, 0);
	/* 30 never read: due; 20 read a second ago: not. */
	CHECK_EQ_U64(gpu_usage_due(&u, 2 * SEC, due, 8), 1);
	CHECK_EQ_INT(due[0], 30);
	gpu_usage_read_proc(&u, 30, 0, 5 * SEC, 0);
	CHECK_EQ_U64(gpu_usage_due(&u, 6 * SEC, due, 8), 0);
	/* Past their refresh time: the oldest reading first, at most @max a
	 * call. */
	CHECK_EQ_U64(gpu_usage_due(&u, 1 * SEC + GPU_USAGE_REFRESH_NS, due, 8), 1);
	CHECK_EQ_U64(gpu_usage_due(&u, 5 * SEC + GPU_USAGE_REFRESH_NS, due, 1), 1);
	CHECK_EQ_INT(due[0], 20);
	CHECK_EQ_U64(gpu_usage_due(&u, 5 * SEC + GPU_USAGE_REFRESH_NS, due, 8), 3);
	/* Moves planned onto its node since its reading: due again after a
	 * second, not ten. */
	{
		struct policy_intent it = { .pid = 30, .nr_pages = 512, .to_node = 3,
					    .kind = POLICY_PROMOTE };

		gpu_usage_planned(&u, &it, 1);
	}
	CHECK_EQ_U64(gpu_usage_due(&u, 5 * SEC + GPU_USAGE_BUSY_REFRESH_NS - 1, due, 8), 0);
	CHECK_EQ_U64(gpu_usage_due(&u, 5 * SEC + GPU_USAGE_BUSY_REFRESH_NS, due, 8), 1);
	CHECK_EQ_INT(due[0], 30);
}

static void test_pace_by_read_cost(void)
{
	struct policy_intent it = { .pid = 20, .nr_pages = 512, .to_node = 3,
				    .kind = POLICY_PROMOTE };
	pid_t due[8];

	setup();
	gpu_usage_sync(&u, &procs, by_cg);
	gpu_usage_read_proc(&u, 10, 0, 1 * SEC, 0);
	gpu_usage_read_proc(&u, 30, 0, 1 * SEC, 0);
	/* 20's walk took 2 s: read again after 200 s, not 10, and not after
	 * a second either while moves are planned for it. */
	gpu_usage_read_proc(&u, 20, 0, 1 * SEC, 2 * SEC);
	gpu_usage_planned(&u, &it, 1);
	CHECK_EQ_U64(gpu_usage_due(&u, 1 * SEC + GPU_USAGE_REFRESH_NS, due, 8), 2);
	CHECK_EQ_INT(due[0] == 20 || due[1] == 20, 0);
	CHECK_EQ_U64(gpu_usage_due(&u, 1 * SEC + GPU_USAGE_READ_SPACING * 2 * SEC - 1, due, 8), 2);
	CHECK_EQ_U64(gpu_usage_due(&u, 1 * SEC + GPU_USAGE_READ_SPACING * 2 * SEC, due, 8), 3);
	/* A read that took a millisecond: the usual pace (100 ms < 10 s). */
	gpu_usage_read_proc(&u, 20, 0, 300 * SEC, SEC / 1000);
	CHECK_EQ_U64(gpu_usage_due(&u, 300 * SEC + GPU_USAGE_REFRESH_NS, due, 8), 3);
}

static void test_sync_keeps_readings(void)
{
	static const bool by_cg_new[4] = { true, false, false, false };
	uint64_t used[POLICY_MAX_RULES];

	setup();
	gpu_usage_sync(&u, &procs, by_cg);
	gpu_usage_read_cgroups(&u, 0, true, 0);
	gpu_usage_read_proc(&u, 20, 5 * MIB, 1 * SEC, 0);
	gpu_usage_read_proc(&u, 30, 7 * MIB, 1 * SEC, 0);
	/* 30 exits, 50 starts under rule 1: 20 keeps its reading, rule 1 is
	 * unknown until 50 is read. */
	procs.procs[2] = (struct cand_proc){ .pid = 40, .cgroup = -1, .rule = -1 };
	procs.procs[3] = (struct cand_proc){ .pid = 50, .cgroup = -1, .rule = 1 };
	gpu_usage_sync(&u, &procs, by_cg_new);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 5 * MIB);
	CHECK_EQ_U64(used[1], GPU_USAGE_UNKNOWN);
}

/*
 * A cgroup's reading misses its process's mapped pages charged to another
 * cgroup (a library's page cache): the process's own reading, larger,
 * counts; smaller (its cgroup holds more than it maps), the cgroup's.
 */
static void test_cgroup_misses_mapped_pages(void)
{
	uint64_t used[POLICY_MAX_RULES];

	setup();
	gpu_usage_sync(&u, &procs, by_cg);
	gpu_usage_read_cgroups(&u, 0, true, 40 * MIB);
	gpu_usage_read_proc(&u, 20, 20 * MIB, 1 * SEC, 0);
	gpu_usage_read_proc(&u, 10, 43 * MIB, 1 * SEC, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 63 * MIB);
	gpu_usage_read_proc(&u, 10, 30 * MIB, 2 * SEC, 0);
	gpu_usage_totals(&u, used);
	CHECK_EQ_U64(used[0], 60 * MIB);
}

/* The rule's cgroups are added up once: an entry inside another is not. */
static void test_cgroup_tops(void)
{
	setup();
	pp.rules[0].nr_allow = 4;
	strcpy(pp.rules[0].allow[2], "/train/job1");
	strcpy(pp.rules[0].allow[3], "/train");
	CHECK(policy_rule_cgroup_top(&pp, 0, 0));
	CHECK(!policy_rule_cgroup_top(&pp, 0, 1));
	CHECK(!policy_rule_cgroup_top(&pp, 0, 2));
	CHECK(!policy_rule_cgroup_top(&pp, 0, 3));
	CHECK(policy_rule_in_cgroups(&pp, 0, "/train/job1/x"));
	CHECK(!policy_rule_in_cgroups(&pp, 0, "/trainer"));
	CHECK(!policy_rule_in_cgroups(&pp, 1, "/train"));
}

int main(void)
{
	RUN(test_unknown_until_read);
	RUN(test_planned_until_next_read);
	RUN(test_pace);
	RUN(test_pace_by_read_cost);
	RUN(test_sync_keeps_readings);
	RUN(test_cgroup_tops);
	RUN(test_cgroup_misses_mapped_pages);
	return TEST_EXIT();
}
