/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What policy_drive's scenarios share (policy_lab.c): memory placed on a
 * node and read back, the machine's nodes from libnuma, and tierd itself
 * (struct drive) with the scenario's config and synthetic heat.
 */
#ifndef TIERD_LAB_POLICY_LAB_H
#define TIERD_LAB_POLICY_LAB_H

#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "batch.h"
#include "cgroup.h"
#include "copythreads.h"
#include "daemon.h"
#include "hot_table.h"
#include "knobs.h"
#include "load.h"
#include "manager.h"
#include "migrate.h"
#include "policy.h"
#include "sampler.h"

#define PG 4096ul
#define THP_BYTES (2ul << 20)
#define MiB (1ul << 20)
#define MAX_CAND (1 << 18)
#define MAX_REGIONS 8
#define MAX_TICKS 8
#define CGROOT "/sys/fs/cgroup"

extern int failures;

#define EXPECT(cond, ...)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			failures++;                                           \
		}                                                             \
	} while (0)

/* A range of a process's memory with one synthetic heat, recorded at each
 * tick's drain; heat 0: never sampled, unless the scenario samples cold
 * regions (once, a minute in the past: old enough to demote). */
struct region {
	int pid;
	uint64_t addr;
	uint64_t bytes;
	bool thp;
	uint32_t heat;
};

/* What the scenario puts in tierd.yaml, and its regions. */
struct scenario {
	struct topology topo; /* from libnuma: which nodes have CPUs */
	unsigned int low_pct, high_pct; /* tier 0's watermarks */
	uint32_t hot_threshold;
	bool demote, sample_cold, dry_run;
	int gpu_node; /* -1 none */
	uint64_t gpu_max;
	char gpu_allow[64];
	struct region regions[MAX_REGIONS];
	int nr_regions;
	/* cgroups: paths under CGROOT, caps */
	int nr_cgroups;
	char cg_path[4][64];
	uint64_t cg_cap[4];
};


extern struct policy_intent intents[MAX_CAND];
/* Scratch for node queries of the scenario's own pages. */
extern void *qaddrs[MAX_CAND];
extern int qstatus[MAX_CAND];

struct synth {
	struct sampler base;
	const struct scenario *s;
	bool started, cold_done;
	uint64_t samples;
};

/* tierd with its manager, the scenario's config and heat. */
struct drive {
	struct tierd d;
	struct manager m;
	struct synth sy;
	pid_t pids[MAX_REGIONS];
	char dir[64];
};

uint64_t now_ns(void);
/* Nodes from libnuma: tier 0 = nodes with CPUs, tier 1 = the CPU-less. */
void topo_from_libnuma(struct topology *t, int gpu_node);
/* Anonymous memory of this process placed on @node, touched, policy reset. */
void *alloc_on(int node, uint64_t bytes, bool thp);
/* How many base pages of [addr, addr+bytes) of @pid are on each node. */
int count_nodes(int pid, uint64_t addr, uint64_t bytes, long counts[TOPO_MAX_NODES]);
/* AnonHugePages of this process's mapping at @addr, in bytes. */
uint64_t thp_bytes_at(uint64_t addr);

/* tierd_init() and manager_init() as main() runs them, with the scenario's
 * sampler and processes in manager_ops; drive_stop() after. */
int drive_start(struct drive *dr, const struct scenario *s);
void drive_stop(struct drive *dr);
/* One tick of tierd.  Returns the intents it decided. */
size_t tick(struct drive *dr);
struct account *drive_account(struct drive *dr);
/* Ticks until nothing is decided; returns the ticks run. */
int run_until_quiet(struct drive *dr);

int scenario_copythreads(void);

#endif
