/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tierd.yaml as a plain struct: fixed-size arrays, no pointers, so a
 * configuration is copied, compared and swapped as a value.
 *
 * The schema (every key, type, unit, range and default) is the table in
 * conf_schema.c; configs/tierd.yaml and tierd.yaml(5) document it.  Units are
 * in the key names; sizes accept K, M, G and T suffixes (powers of 1024).
 */
#ifndef TIERD_CONF_H
#define TIERD_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tiers.h"

#define CONF_MAX_PATTERNS 16 /* allow:, targets.comms, targets.cgroups */
#define CONF_PATTERN_MAX 128
#define CONF_MAX_GPU_NODES 16
#define CONF_MAX_CGROUPS 128
#define CONF_PATH_MAX 256

/* Where a value was in the file, for errors found after parsing. */
struct conf_mark {
	unsigned int line, column; /* 1-based; 0 = not from the file */
};

enum conf_source { CONF_SOURCE_AUTO, CONF_SOURCE_BPF, CONF_SOURCE_DAMON };
enum conf_copy_mode { CONF_COPY_AUTO, CONF_COPY_FIXED, CONF_COPY_OFF };
enum conf_numa_balancing { CONF_NUMAB_COEXIST, CONF_NUMAB_TAKEOVER };

struct conf_strlist {
	int n;
	char s[CONF_MAX_PATTERNS][CONF_PATTERN_MAX];
	struct conf_mark marks[CONF_MAX_PATTERNS]; /* where each entry is */
};

struct conf_tier {
	struct tier_spec spec;
	struct conf_mark mark;
	struct conf_mark node_marks[TOPO_MAX_NODES];
};

struct conf_gpu_node {
	int node;
	struct conf_strlist allow; /* "/..." cgroup paths, else comm patterns */
	uint64_t max_bytes; /* 0 = no limit */
	bool demotion_target;
	struct conf_mark mark;
};

struct conf_cgroup {
	char path[CONF_PATH_MAX]; /* relative to the cgroup2 mount, leading '/' */
	uint64_t fast_tier_max_bytes; /* 0 = no limit */
	uint32_t migrate_max_mb_per_s; /* 0 = no limit */
	struct conf_mark mark;
	struct conf_mark path_mark;
};

struct tierd_conf {
	char path[CONF_PATH_MAX]; /* the file it came from, "" for defaults */

	uint32_t interval_ms;
	uint32_t idle_interval_ms; /* never below interval_ms in effect */
	uint32_t tick_nice_boost; /* tierd rests this many nice levels below its ticks */

	int nr_tiers; /* 0: tiers come from the kernel and HMAT */
	struct conf_tier tiers[TOPO_MAX_TIERS];
	int nr_gpu_nodes;
	struct conf_gpu_node gpu_nodes[CONF_MAX_GPU_NODES];

	struct {
		enum conf_source source;
		uint32_t half_life_ms;
		uint64_t max_tracked_pages;
		double cpu_budget_pct;
		uint32_t damon_sample_us;
		uint32_t damon_aggr_us;
		uint32_t damon_min_regions;
		uint32_t damon_max_regions;
		uint32_t damon_idle_slowdown;
		bool damon_idle_peek; /* peeks between idle ticks (daemon.h) */
		struct conf_strlist target_cgroups;
		struct conf_strlist target_comms;
		uint64_t target_min_rss_bytes;
	} sampling;

	struct {
		uint32_t hot_threshold; /* 0 = adaptive */
		uint32_t max_rate_mb_per_s; /* 0 = no limit */
		uint32_t batch_pages;
		bool fill; /* promote what was never seen while all fits */
	} promotion;

	struct {
		bool enabled;
		uint32_t cold_age_s;
	} demotion;

	int nr_cgroups;
	struct conf_cgroup cgroups[CONF_MAX_CGROUPS];

	struct {
		enum conf_copy_mode mode;
		uint32_t min;
		uint32_t max;
		uint32_t busy_cpu_pct;
	} copy_threads;

	struct {
		enum conf_numa_balancing numa_balancing;
	} kernel;

	struct {
		char textfile_dir[CONF_PATH_MAX]; /* "" = no textfile */
		uint32_t textfile_interval_ms;
	} metrics;

	struct {
		char group[64]; /* "" = root only */
		struct conf_mark group_mark;
	} control;

	bool dry_run;
};

/* Every key at its default. */
void conf_defaults(struct tierd_conf *conf);

/*
 * Parse @len bytes of @text, named @name in messages, into @conf (defaults
 * first).  Returns 0, or -EINVAL with *ret_errors (malloc'd, caller frees)
 * holding one "NAME:LINE:COLUMN: KEY: reason\n" line per error; -ENOMEM.
 * @conf is undefined after an error.
 */
int conf_parse(const char *name, const char *text, size_t len,
	       struct tierd_conf *conf, char **ret_errors);

/* conf_parse() on a file; -errno (and no *ret_errors) if it cannot be read:
 * -EISDIR for a directory. */
int conf_load(const char *path, struct tierd_conf *conf, char **ret_errors);

/*
 * conf_load() for the daemon: the open file must also belong to @owner and
 * be writable by no one else, or -EPERM.  The policy names the directory
 * tierd writes its metrics into, so only tierd's own user may change it.
 */
int conf_load_trusted(const char *path, uid_t owner, struct tierd_conf *conf,
		      char **ret_errors);

/* The tiers: and gpu_nodes: sections in the form core/tiers.c takes. */
void conf_tiers_config(const struct tierd_conf *conf, struct tiers_config *ret);

/* Names for enums, as written in the file. */
const char *conf_source_name(enum conf_source s);
const char *conf_copy_mode_name(enum conf_copy_mode m);
const char *conf_numa_balancing_name(enum conf_numa_balancing m);

#endif
