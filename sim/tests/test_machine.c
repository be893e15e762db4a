// SPDX-License-Identifier: GPL-2.0-only
/* The machine model: the shipped files, the cost formula, strict errors. */
#include <errno.h>
#include <stdio.h>

#include "machine.h"
#include "test.h"

static const char *machines_dir;

static const char good[] =
	"name: two\n"
	"base_page_kib: 4\n"
	"thp_kib: 2048\n"
	"nodes:\n"
	"  - {id: 0, tier: 0, capacity_mib: 1024, latency_ns: 100, bandwidth_gbps: 10}\n"
	"  - {id: 1, tier: 1, capacity_mib: 4096, latency_ns: 250, bandwidth_gbps: 2.5,"
	" cpuless: true}\n"
	"migration:\n"
	"  vanilla: {call_ns: 1000, folio_ns: 500, copy_gbps: 2}\n"
	"  patched: {call_ns: 1000, folio_ns: 400, copy_gbps: 8, copy_threads: 4}\n";

static void test_parse_good(void)
{
	struct sim_machine m;
	char err[SIM_ERR_LEN];

	CHECK_EQ_INT(sim_machine_parse("t.yaml", good, sizeof(good) - 1, &m, err), 0);
	CHECK_EQ_STR(m.name, "two");
	CHECK_EQ_INT(m.nr_nodes, 2);
	CHECK_EQ_U64(m.base_page_bytes, 4096);
	CHECK_EQ_U64(m.thp_bytes, 2 << 20);
	CHECK_EQ_U64(m.nodes[1].capacity_bytes, 4096ull << 20);
	CHECK(m.nodes[1].cpuless && !m.nodes[0].cpuless);
	CHECK_EQ_INT(m.mig[SIM_KERNEL_PATCHED].copy_threads, 4);
	CHECK_EQ_INT(m.mig[SIM_KERNEL_VANILLA].copy_threads, 1);
	CHECK_EQ_INT(sim_machine_fast_node(&m), 0);
}

/* 1000 + 16 x 500 + 32 MiB / 2 B/ns = 1000 + 8000 + 16777216 ns. */
static void test_cost(void)
{
	struct sim_migcost c = { .call_ns = 1000, .folio_ns = 500,
				 .copy_gbps = 2 };

	CHECK_EQ_U64(sim_migcost_ns(&c, 16, 32 << 20), 16786216);
	CHECK_EQ_U64(sim_migcost_ns(&c, 0, 0), 1000);
}

static void expect_err(const char *text, const char *want)
{
	struct sim_machine m;
	char err[SIM_ERR_LEN];
	int r = sim_machine_parse("t.yaml", text, strlen(text), &m, err);

	CHECK_EQ_INT(r, -EINVAL);
	CHECK_EQ_STR(err, want);
}

static void test_errors(void)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "%scolour: red\n", good);
	expect_err(buf, "t.yaml:10:1: colour: unknown key");
	snprintf(buf, sizeof(buf), "%s", good);
	memcpy(strstr(buf, "base_page_kib: 4"), "base_page_kib: 8", 16);
	expect_err(buf, "t.yaml:2:16: base_page_kib: must be 4, 16 or 64");
	snprintf(buf, sizeof(buf), "%s", good);
	memcpy(strstr(buf, "latency_ns: 250"), "latency_ns: -25", 15);
	expect_err(buf, "t.yaml:6:54: latency_ns: '-25' is not an integer");
	snprintf(buf, sizeof(buf), "%s", good);
	memcpy(strstr(buf, "folio_ns: 500"), "folio_xx: 500", 13);
	expect_err(buf, "t.yaml:8:28: folio_xx: unknown key");
	expect_err("name: x\nbase_page_kib: 4\nnodes: []\n",
		   "t.yaml:3:8: nodes: a tiered machine needs two nodes");
}

static void test_shipped(void)
{
	static const char *const files[] = { "dram+cxl.yaml", "grace-hopper.yaml",
					     "lab.yaml" };
	struct sim_machine m;
	char path[1024], err[SIM_ERR_LEN];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", machines_dir, files[i]);
		CHECK_EQ_INT(sim_machine_load(path, &m, err), 0);
		if (err[0])
			fprintf(stderr, "%s\n", err);
		CHECK(m.nodes[sim_machine_fast_node(&m)].tier == 0);
	}
	CHECK_EQ_U64(m.base_page_bytes, 4096);
}

int main(int argc, char **argv)
{
	machines_dir = argc > 1 ? argv[1] : "sim/machines";
	RUN(test_parse_good);
	RUN(test_cost);
	RUN(test_errors);
	RUN(test_shipped);
	return TEST_EXIT();
}
