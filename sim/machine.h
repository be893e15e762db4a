/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The machine model of tierd-sim: memory nodes (capacity, load latency,
 * bandwidth, tier), page sizes, and what a migration costs on each kernel.
 * Read from a YAML file (sim/machines/); every figure there names its
 * source.  All times are nanoseconds, all sizes bytes.
 */
#ifndef TIERD_SIM_MACHINE_H
#define TIERD_SIM_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_NODES 8
#define SIM_ERR_LEN 512

struct sim_node {
	int id;
	int tier;		/* 0 is the fastest */
	uint64_t capacity_bytes;
	uint32_t latency_ns;	/* one load that misses the caches */
	double bandwidth_gbps;	/* GB/s = bytes per ns */
	bool cpuless;
};

/*
 * One move_pages() call over F folios and B bytes costs
 *	call_ns + F * folio_ns + B / copy_gbps
 * nanoseconds (copy_gbps is bytes per ns).
 */
struct sim_migcost {
	uint64_t call_ns;
	uint64_t folio_ns;
	double copy_gbps;
	int copy_threads;	/* 1 for vanilla */
};

enum sim_kernel { SIM_KERNEL_VANILLA, SIM_KERNEL_PATCHED, SIM_NR_KERNELS };

struct sim_machine {
	char name[64];
	uint64_t base_page_bytes;	/* 4, 16 or 64 KiB */
	uint64_t thp_bytes;		/* the PMD size; 0 when THP is off */
	int nr_nodes;
	struct sim_node nodes[SIM_MAX_NODES];
	struct sim_migcost mig[SIM_NR_KERNELS];
};

/*
 * Parse the machine model in @path.  0 on success; a negative errno on
 * failure with "FILE:LINE:COL: key: reason" in @err (SIM_ERR_LEN bytes).
 */
int sim_machine_load(const char *path, struct sim_machine *m, char *err);

/* Same, from a buffer; @name is what the errors call the file. */
int sim_machine_parse(const char *name, const char *buf, size_t len,
		      struct sim_machine *m, char *err);

/* Nanoseconds one call migrating @folios folios of @bytes in total costs. */
uint64_t sim_migcost_ns(const struct sim_migcost *c, uint64_t folios,
			uint64_t bytes);

/* Index of the node with the lowest tier (ties: lowest latency). */
int sim_machine_fast_node(const struct sim_machine *m);

#endif
