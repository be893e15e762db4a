// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every key of tierd.yaml: type, unit (in the name), range and default.
 * configs/tierd.yaml and man/tierd.yaml.5 document the same table; a unit
 * test checks that the shipped tierd.yaml's values equal these defaults.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "conf_schema.h"

#define FIELD_SIZE(type, f) sizeof(((type *)0)->f)
#define TIER_NAME_SIZE FIELD_SIZE(struct tier_spec, name)
#define GROUP_SIZE FIELD_SIZE(struct tierd_conf, control.group)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TABLE(k, ...)                                              \
	{                                                          \
		.keys = (k), .nr_keys = ARRAY_SIZE(k), __VA_ARGS__ \
	}
#define OFF(field) offsetof(struct tierd_conf, field)
#define MAX_NODE_ID (TOPO_MAX_NODES * 16 - 1)

/* Table rows; ranges and defaults are in the unit the key's name gives. */
#define U32(n, off, lo, hi, d)                                         \
	{                                                              \
		.name = n, .type = CONF_U32, .offset = off, .min = lo, \
		.max = hi, .def = d                                    \
	}
#define U64(n, off, lo, hi, d)                                         \
	{                                                              \
		.name = n, .type = CONF_U64, .offset = off, .min = lo, \
		.max = hi, .def = d                                    \
	}
#define SIZE(n, off, d)                                      \
	{                                                    \
		.name = n, .type = CONF_SIZE, .offset = off, \
		.max = UINT64_MAX, .def = d                  \
	}
#define DOUBLE(n, off, lo, hi, d)                                          \
	{                                                                  \
		.name = n, .type = CONF_DOUBLE, .offset = off, .dmin = lo, \
		.dmax = hi, .ddef = d                                      \
	}
#define BOOL(n, off, d)                                               \
	{                                                             \
		.name = n, .type = CONF_BOOL, .offset = off, .def = d \
	}
#define STRING(n, off, sz)                                                \
	{                                                                 \
		.name = n, .type = CONF_STRING, .offset = off, .size = sz \
	}
#define ENUM(n, off, nm, d)                                               \
	{                                                                 \
		.name = n, .type = CONF_ENUM, .offset = off, .names = nm, \
		.def = d                                                  \
	}
#define NODE(n, off)                                         \
	{                                                    \
		.name = n, .type = CONF_NODE, .offset = off, \
		.max = MAX_NODE_ID                           \
	}
#define STRLIST(n, off)                                        \
	{                                                      \
		.name = n, .type = CONF_STRLIST, .offset = off \
	}
#define MAP(n, tbl)                                     \
	{                                               \
		.name = n, .type = CONF_MAP, .sub = tbl \
	}
#define LIST(n, off, elem, tbl, cnt, maxc)                                 \
	{                                                                  \
		.name = n, .type = CONF_LIST, .offset = off, .size = elem, \
		.sub = tbl, .count_offset = cnt, .max_count = maxc         \
	}

static const char *const source_names[] = { "auto", "bpf", "damon", NULL };
static const char *const copy_mode_names[] = { "auto", "fixed", "off", NULL };
static const char *const numab_names[] = { "coexist", "takeover", NULL };

const char *conf_source_name(enum conf_source s)
{
	return source_names[s];
}

const char *conf_copy_mode_name(enum conf_copy_mode m)
{
	return copy_mode_names[m];
}

const char *conf_numa_balancing_name(enum conf_numa_balancing m)
{
	return numab_names[m];
}

/*
 * A cgroup the policy names (cgroups[].path, sampling.targets.cgroups, a
 * gpu_nodes[].allow entry that starts with /): its path below the cgroup2
 * mount, as /proc/PID/cgroup writes it.  tierd compares such paths as
 * strings and opens files below the mount by them, so ".." (which leads
 * out of the subtree, or of the mount), "." and "//" are refused: a path
 * written with them would never match a process's cgroup.
 */
static void check_cgroup_path(struct conf_ctx *ctx, const char *cg,
			      struct conf_mark m, const char *path,
			      const char *key)
{
	if (cg[0] != '/') {
		conf_error(ctx, m, path, key,
			   "'%s' must start with / (relative to the cgroup2 mount)",
			   cg);
		return;
	}
	for (const char *c = cg + 1;; c++) {
		const char *end = strchrnul(c, '/');
		size_t len = end - c;

		if (len == 2 && !strncmp(c, "..", 2)) {
			conf_error(ctx, m, path, key,
				   "'%s' has a '..' component (cgroup paths stay below the cgroup2 mount)",
				   cg);
			return;
		}
		if ((len == 1 && *c == '.') || (len == 0 && *end)) {
			conf_error(ctx, m, path, key,
				   "'%s' has a '.' or empty component (write the path as /proc/PID/cgroup shows it)",
				   cg);
			return;
		}
		if (!*end)
			return;
		c = end;
	}
}

static void check_cgroup_paths(struct conf_ctx *ctx,
			       const struct conf_strlist *l, const char *path,
			       const char *key)
{
	for (int i = 0; i < l->n; i++)
		check_cgroup_path(ctx, l->s[i], l->marks[i], path, key);
}

/* ---- tiers: [{name, nodes, low_watermark_pct, high_watermark_pct}] ---- */

static void check_watermarks(struct conf_ctx *ctx, void *base,
			     const struct conf_mark *marks, const char *path)
{
	struct conf_tier *t = base;

	if (!marks[0].line)
		conf_error(ctx, t->mark, path, "name", "missing");
	if (!marks[1].line || t->spec.nr_nodes == 0)
		conf_error(ctx, marks[1].line ? marks[1] : t->mark, path,
			   "nodes", "a tier needs at least one node");
	if (t->spec.low_watermark_pct > t->spec.high_watermark_pct)
		conf_error(ctx, marks[2].line ? marks[2] : marks[3], path,
			   "low_watermark_pct",
			   "%u is above high_watermark_pct %u",
			   t->spec.low_watermark_pct,
			   t->spec.high_watermark_pct);
}

#define TOFF(field) offsetof(struct conf_tier, spec.field)
static const struct conf_key tier_keys[] = {
	STRING("name", TOFF(name), TIER_NAME_SIZE),
	{ .name = "nodes",
	  .type = CONF_NODELIST,
	  .offset = TOFF(nodes),
	  .min = 0,
	  .max = MAX_NODE_ID,
	  .count_offset = TOFF(nr_nodes),
	  .max_count = TOPO_MAX_NODES,
	  .marks_offset = offsetof(struct conf_tier, node_marks) + 1 },
	U32("low_watermark_pct", TOFF(low_watermark_pct), 0, 50, 2),
	U32("high_watermark_pct", TOFF(high_watermark_pct), 0, 50, 4),
};
static const struct conf_table tier_table =
	TABLE(tier_keys, .mark_offset = offsetof(struct conf_tier, mark) + 1,
	      .check = check_watermarks);

/* ---- gpu_nodes: [{node, allow, max_bytes, demotion_target}] ---- */

static void check_gpu(struct conf_ctx *ctx, void *base,
		      const struct conf_mark *marks, const char *path)
{
	struct conf_gpu_node *g = base;

	if (!marks[0].line) {
		conf_error(ctx, g->mark, path, "node", "missing");
		g->node = -1;
	}
	/* Entries that start with / are cgroups; the others, comm patterns. */
	for (int i = 0; i < g->allow.n; i++)
		if (g->allow.s[i][0] == '/')
			check_cgroup_path(ctx, g->allow.s[i], g->allow.marks[i],
					  path, "allow");
}

#define GOFF(field) offsetof(struct conf_gpu_node, field)
static const struct conf_key gpu_keys[] = {
	NODE("node", GOFF(node)),
	STRLIST("allow", GOFF(allow)),
	SIZE("max_bytes", GOFF(max_bytes), 0),
	BOOL("demotion_target", GOFF(demotion_target), 0),
};
static const struct conf_table gpu_table =
	TABLE(gpu_keys, .mark_offset = GOFF(mark) + 1, .check = check_gpu);

/* ---- sampling ---- */

static void check_damon(struct conf_ctx *ctx, void *base,
			const struct conf_mark *marks, const char *path)
{
	struct tierd_conf *c = base;

	if (c->sampling.damon_aggr_us < c->sampling.damon_sample_us)
		conf_error(ctx, marks[1].line ? marks[1] : marks[0], path,
			   "aggr_interval_us",
			   "%u is below sample_interval_us %u",
			   c->sampling.damon_aggr_us,
			   c->sampling.damon_sample_us);
	if (c->sampling.damon_max_regions < c->sampling.damon_min_regions)
		conf_error(ctx, marks[3].line ? marks[3] : marks[0], path,
			   "max_nr_regions", "%u is below min_nr_regions %u",
			   c->sampling.damon_max_regions,
			   c->sampling.damon_min_regions);
}

static const struct conf_key damon_keys[] = {
	U32("sample_interval_us", OFF(sampling.damon_sample_us), 100, 1000000,
	    5000),
	U32("aggr_interval_us", OFF(sampling.damon_aggr_us), 1000, 60000000,
	    100000),
	U32("min_nr_regions", OFF(sampling.damon_min_regions), 3, 100000, 200),
	U32("max_nr_regions", OFF(sampling.damon_max_regions), 3, 100000, 2000),
	U32("idle_slowdown", OFF(sampling.damon_idle_slowdown), 1, 100, 10),
	BOOL("idle_peek", OFF(sampling.damon_idle_peek), 1),
};
static const struct conf_table damon_table =
	TABLE(damon_keys, .check = check_damon);

static void check_targets(struct conf_ctx *ctx, void *base,
			  const struct conf_mark *marks, const char *path)
{
	struct tierd_conf *c = base;

	check_cgroup_paths(ctx, &c->sampling.target_cgroups, path, "cgroups");
}

static const struct conf_key target_keys[] = {
	STRLIST("cgroups", OFF(sampling.target_cgroups)),
	STRLIST("comms", OFF(sampling.target_comms)),
	SIZE("min_rss_bytes", OFF(sampling.target_min_rss_bytes), 64ull << 20),
};
static const struct conf_table target_table =
	TABLE(target_keys, .check = check_targets);

static const struct conf_key sampling_keys[] = {
	ENUM("source", OFF(sampling.source), source_names, CONF_SOURCE_AUTO),
	U32("half_life_ms", OFF(sampling.half_life_ms), 100, 3600000, 10000),
	U64("max_tracked_pages", OFF(sampling.max_tracked_pages), 1024,
	    1ull << 28, 1ull << 20),
	DOUBLE("cpu_budget_pct", OFF(sampling.cpu_budget_pct), 0.1, 100, 2),
	MAP("damon", &damon_table),
	MAP("targets", &target_table),
};
static const struct conf_table sampling_table = TABLE(sampling_keys);

/* ---- promotion, demotion ---- */

static const struct conf_key promotion_keys[] = {
	U32("hot_threshold", OFF(promotion.hot_threshold), 0, 1000000, 0),
	U32("max_rate_mb_per_s", OFF(promotion.max_rate_mb_per_s), 0, 1000000,
	    256),
	U32("batch_pages", OFF(promotion.batch_pages), 1, 65536, 4096),
	BOOL("fill", OFF(promotion.fill), 1),
};
static const struct conf_table promotion_table = TABLE(promotion_keys);

static const struct conf_key demotion_keys[] = {
	BOOL("enabled", OFF(demotion.enabled), 1),
	U32("cold_age_s", OFF(demotion.cold_age_s), 1, 86400, 120),
};
static const struct conf_table demotion_table = TABLE(demotion_keys);

/* ---- cgroups: [{path, fast_tier_max_bytes, migrate_max_mb_per_s}] ---- */

static void check_cgroup(struct conf_ctx *ctx, void *base,
			 const struct conf_mark *marks, const char *path)
{
	struct conf_cgroup *cg = base;

	if (!marks[0].line)
		conf_error(ctx, cg->mark, path, "path", "missing");
	else
		check_cgroup_path(ctx, cg->path, marks[0], path, "path");
}

#define COFF(field) offsetof(struct conf_cgroup, field)
static const struct conf_key cgroup_keys[] = {
	{ .name = "path",
	  .type = CONF_STRING,
	  .offset = COFF(path),
	  .size = CONF_PATH_MAX,
	  .marks_offset = COFF(path_mark) + 1 },
	SIZE("fast_tier_max_bytes", COFF(fast_tier_max_bytes), 0),
	U32("migrate_max_mb_per_s", COFF(migrate_max_mb_per_s), 0, 1000000, 0),
};
static const struct conf_table cgroup_table = TABLE(
	cgroup_keys, .mark_offset = COFF(mark) + 1, .check = check_cgroup);

/* ---- copy_threads, kernel, metrics, control ---- */

static void check_copy_threads(struct conf_ctx *ctx, void *base,
			       const struct conf_mark *marks, const char *path)
{
	struct tierd_conf *c = base;

	if (c->copy_threads.min > c->copy_threads.max)
		conf_error(ctx, marks[1].line ? marks[1] : marks[2], path,
			   "min", "%u is above max %u", c->copy_threads.min,
			   c->copy_threads.max);
}

static const struct conf_key copy_keys[] = {
	ENUM("mode", OFF(copy_threads.mode), copy_mode_names, CONF_COPY_AUTO),
	U32("min", OFF(copy_threads.min), 1, 1024, 1),
	U32("max", OFF(copy_threads.max), 1, 1024, 8),
	U32("busy_cpu_pct", OFF(copy_threads.busy_cpu_pct), 1, 100, 75),
};
static const struct conf_table copy_table =
	TABLE(copy_keys, .check = check_copy_threads);

static const struct conf_key kernel_keys[] = {
	ENUM("numa_balancing", OFF(kernel.numa_balancing), numab_names,
	     CONF_NUMAB_COEXIST),
};
static const struct conf_table kernel_table = TABLE(kernel_keys);

static void check_metrics(struct conf_ctx *ctx, void *base,
			  const struct conf_mark *marks, const char *path)
{
	struct tierd_conf *c = base;

	if (c->metrics.textfile_dir[0] && c->metrics.textfile_dir[0] != '/')
		conf_error(ctx, marks[0], path, "textfile_dir",
			   "'%s' is not an absolute path",
			   c->metrics.textfile_dir);
}

static const struct conf_key metrics_keys[] = {
	STRING("textfile_dir", OFF(metrics.textfile_dir), CONF_PATH_MAX),
	U32("textfile_interval_ms", OFF(metrics.textfile_interval_ms), 1000,
	    3600000, 15000),
};
static const struct conf_table metrics_table =
	TABLE(metrics_keys, .check = check_metrics);

static void check_control(struct conf_ctx *ctx, void *base,
			  const struct conf_mark *marks, const char *path)
{
	const char *g = ((struct tierd_conf *)base)->control.group;

	for (const char *p = g; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_-.", *p)) ||
		    (p == g && *p == '-')) {
			conf_error(ctx, marks[0], path, "group",
				   "'%s' is not a valid group name", g);
			return;
		}
}

static const struct conf_key control_keys[] = {
	{ .name = "group",
	  .type = CONF_STRING,
	  .offset = OFF(control.group),
	  .size = GROUP_SIZE,
	  .marks_offset = OFF(control.group_mark) + 1 },
};
static const struct conf_table control_table =
	TABLE(control_keys, .check = check_control);

/* ---- the file ---- */

/* Conflicts between list entries: a node in two tiers, a GPU node twice, a
 * cgroup twice, two tiers of one name. */
static void check_root(struct conf_ctx *ctx, void *base,
		       const struct conf_mark *marks, const char *path)
{
	struct tierd_conf *c = base;
	char key[64];

	for (int a = 0; a < c->nr_tiers; a++) {
		struct conf_tier *ta = &c->tiers[a];

		for (int b = 0; b < a; b++) {
			struct conf_tier *tb = &c->tiers[b];

			if (ta->spec.name[0] &&
			    !strcmp(ta->spec.name, tb->spec.name)) {
				snprintf(key, sizeof(key), "tiers[%d].name", a);
				conf_error(ctx, ta->mark, key, "",
					   "'%s' is also the name of tiers[%d]",
					   ta->spec.name, b);
			}
			for (int i = 0; i < ta->spec.nr_nodes; i++)
				for (int j = 0; j < tb->spec.nr_nodes; j++)
					if (ta->spec.nodes[i] ==
					    tb->spec.nodes[j]) {
						snprintf(key, sizeof(key),
							 "tiers[%d].nodes", a);
						conf_error(
							ctx, ta->node_marks[i],
							key, "",
							"node %d is already in tiers[%d] (%s)",
							ta->spec.nodes[i], b,
							tb->spec.name);
					}
		}
	}
	for (int a = 0; a < c->nr_gpu_nodes; a++)
		for (int b = 0; b < a; b++)
			if (c->gpu_nodes[a].node >= 0 &&
			    c->gpu_nodes[a].node == c->gpu_nodes[b].node) {
				snprintf(key, sizeof(key), "gpu_nodes[%d].node",
					 a);
				conf_error(ctx, c->gpu_nodes[a].mark, key, "",
					   "node %d is already gpu_nodes[%d]",
					   c->gpu_nodes[a].node, b);
			}
	for (int a = 0; a < c->nr_cgroups; a++)
		for (int b = 0; b < a; b++)
			if (c->cgroups[a].path[0] &&
			    !strcmp(c->cgroups[a].path, c->cgroups[b].path)) {
				snprintf(key, sizeof(key), "cgroups[%d].path",
					 a);
				conf_error(ctx, c->cgroups[a].mark, key, "",
					   "'%s' is already cgroups[%d]",
					   c->cgroups[a].path, b);
			}
}

static const struct conf_key root_keys[] = {
	U32("interval_ms", OFF(interval_ms), 10, 60000, 1000),
	U32("idle_interval_ms", OFF(idle_interval_ms), 10, 60000, 4000),
	U32("tick_nice_boost", OFF(tick_nice_boost), 0, 39, 10),
	LIST("tiers", OFF(tiers), sizeof(struct conf_tier), &tier_table,
	     OFF(nr_tiers), TOPO_MAX_TIERS),
	LIST("gpu_nodes", OFF(gpu_nodes), sizeof(struct conf_gpu_node),
	     &gpu_table, OFF(nr_gpu_nodes), CONF_MAX_GPU_NODES),
	MAP("sampling", &sampling_table),
	MAP("promotion", &promotion_table),
	MAP("demotion", &demotion_table),
	LIST("cgroups", OFF(cgroups), sizeof(struct conf_cgroup), &cgroup_table,
	     OFF(nr_cgroups), CONF_MAX_CGROUPS),
	MAP("copy_threads", &copy_table),
	MAP("kernel", &kernel_table),
	MAP("metrics", &metrics_table),
	MAP("control", &control_table),
	BOOL("dry_run", OFF(dry_run), 0),
};
const struct conf_table conf_root_table = TABLE(root_keys, .check = check_root);

void conf_tiers_config(const struct tierd_conf *conf, struct tiers_config *ret)
{
	const struct conf_key *low = &tier_keys[2], *high = &tier_keys[3];

	memset(ret, 0, sizeof(*ret));
	ret->nr_tiers = conf->nr_tiers;
	for (int i = 0; i < conf->nr_tiers; i++)
		ret->tiers[i] = conf->tiers[i].spec;
	ret->default_low_watermark_pct = low->def;
	ret->default_high_watermark_pct = high->def;
	for (int i = 0; i < conf->nr_gpu_nodes; i++)
		ret->gpu_nodes[ret->nr_gpu_nodes++] = conf->gpu_nodes[i].node;
}

void conf_defaults(struct tierd_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf_table_defaults(&conf_root_table, conf);
}
