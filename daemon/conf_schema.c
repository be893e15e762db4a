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

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TABLE(k, ...) { .keys = (k), .nr_keys = ARRAY_SIZE(k), __VA_ARGS__ }
#define OFF(field) offsetof(struct tierd_conf, field)
#define MAX_NODE_ID (TOPO_MAX_NODES * 16 - 1)

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

/* ---- tiers: [{name, nodes, low_watermark_pct, high_watermark_pct}] ---- */

static void check_watermarks(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
			     const char *path)
{
	struct conf_tier *t = base;

	if (!marks[0].line)
		conf_error(ctx, t->mark, path, "name", "missing");
	if (!marks[1].line || t->spec.nr_nodes == 0)
		conf_error(ctx, marks[1].line ? marks[1] : t->mark, path, "nodes",
			   "a tier needs at least one node");
	if (t->spec.low_watermark_pct > t->spec.high_watermark_pct)
		conf_error(ctx, marks[2].line ? marks[2] : marks[3], path, "low_watermark_pct",
			   "%u is above high_watermark_pct %u", t->spec.low_watermark_pct,
			   t->spec.high_watermark_pct);
}

#define TOFF(field) offsetof(struct conf_tier, spec.field)
static const struct conf_key tier_keys[] = {
	{ .name = "name", .type = CONF_STRING, .offset = TOFF(name), .size = sizeof(((struct tier_spec *)0)->name) },
	{ .name = "nodes", .type = CONF_NODELIST, .offset = TOFF(nodes), .min = 0, .max = MAX_NODE_ID,
	  .count_offset = TOFF(nr_nodes), .max_count = TOPO_MAX_NODES,
	  .marks_offset = offsetof(struct conf_tier, node_marks) + 1 },
	{ .name = "low_watermark_pct", .type = CONF_U32, .offset = TOFF(low_watermark_pct), .min = 0, .max = 50, .def = 2 },
	{ .name = "high_watermark_pct", .type = CONF_U32, .offset = TOFF(high_watermark_pct), .min = 0, .max = 50, .def = 4 },
};
static const struct conf_table tier_table = TABLE(tier_keys,
	.mark_offset = offsetof(struct conf_tier, mark) + 1, .check = check_watermarks);

/* ---- gpu_nodes: [{node, allow, max_bytes, demotion_target}] ---- */

static void check_gpu(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
		      const char *path)
{
	struct conf_gpu_node *g = base;

	if (!marks[0].line) {
		conf_error(ctx, g->mark, path, "node", "missing");
		g->node = -1;
	}
}

#define GOFF(field) offsetof(struct conf_gpu_node, field)
static const struct conf_key gpu_keys[] = {
	{ .name = "node", .type = CONF_NODE, .offset = GOFF(node), .min = 0, .max = MAX_NODE_ID },
	{ .name = "allow", .type = CONF_STRLIST, .offset = GOFF(allow) },
	{ .name = "max_bytes", .type = CONF_SIZE, .offset = GOFF(max_bytes), .min = 0, .max = UINT64_MAX },
	{ .name = "demotion_target", .type = CONF_BOOL, .offset = GOFF(demotion_target), .def = 0 },
};
static const struct conf_table gpu_table = TABLE(gpu_keys,
	.mark_offset = GOFF(mark) + 1, .check = check_gpu);

/* ---- sampling ---- */

static void check_damon(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
			const char *path)
{
	struct tierd_conf *c = base;

	if (c->sampling.damon_aggr_us < c->sampling.damon_sample_us)
		conf_error(ctx, marks[1].line ? marks[1] : marks[0], path, "aggr_interval_us",
			   "%u is below sample_interval_us %u", c->sampling.damon_aggr_us,
			   c->sampling.damon_sample_us);
}

static const struct conf_key damon_keys[] = {
	{ .name = "sample_interval_us", .type = CONF_U32, .offset = OFF(sampling.damon_sample_us),
	  .min = 100, .max = 1000000, .def = 5000 },
	{ .name = "aggr_interval_us", .type = CONF_U32, .offset = OFF(sampling.damon_aggr_us),
	  .min = 1000, .max = 60000000, .def = 100000 },
};
static const struct conf_table damon_table = TABLE(damon_keys, .check = check_damon);

static void check_cgroup_paths(struct conf_ctx *ctx, const struct conf_strlist *l,
			       struct conf_mark m, const char *path, const char *key)
{
	for (int i = 0; i < l->n; i++)
		if (l->s[i][0] != '/')
			conf_error(ctx, m, path, key, "'%s' must start with / (relative to the cgroup2 mount)",
				   l->s[i]);
}

static void check_targets(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
			  const char *path)
{
	struct tierd_conf *c = base;

	check_cgroup_paths(ctx, &c->sampling.target_cgroups, marks[0], path, "cgroups");
}

static const struct conf_key target_keys[] = {
	{ .name = "cgroups", .type = CONF_STRLIST, .offset = OFF(sampling.target_cgroups) },
	{ .name = "comms", .type = CONF_STRLIST, .offset = OFF(sampling.target_comms) },
	{ .name = "min_rss_bytes", .type = CONF_SIZE, .offset = OFF(sampling.target_min_rss_bytes),
	  .min = 0, .max = UINT64_MAX, .def = 64ull << 20 },
};
static const struct conf_table target_table = TABLE(target_keys, .check = check_targets);

static const struct conf_key sampling_keys[] = {
	{ .name = "source", .type = CONF_ENUM, .offset = OFF(sampling.source), .names = source_names, .def = CONF_SOURCE_AUTO },
	{ .name = "half_life_ms", .type = CONF_U32, .offset = OFF(sampling.half_life_ms), .min = 100, .max = 3600000, .def = 10000 },
	{ .name = "max_tracked_pages", .type = CONF_U64, .offset = OFF(sampling.max_tracked_pages),
	  .min = 1024, .max = 1ull << 28, .def = 1ull << 20 },
	{ .name = "cpu_budget_pct", .type = CONF_DOUBLE, .offset = OFF(sampling.cpu_budget_pct), .dmin = 0.1, .dmax = 100, .ddef = 2 },
	{ .name = "damon", .type = CONF_MAP, .offset = 0, .sub = &damon_table },
	{ .name = "targets", .type = CONF_MAP, .offset = 0, .sub = &target_table },
};
static const struct conf_table sampling_table = TABLE(sampling_keys);

/* ---- promotion, demotion ---- */

static const struct conf_key promotion_keys[] = {
	{ .name = "hot_threshold", .type = CONF_U32, .offset = OFF(promotion.hot_threshold), .min = 0, .max = 1000000, .def = 0 },
	{ .name = "max_rate_mb_per_s", .type = CONF_U32, .offset = OFF(promotion.max_rate_mb_per_s),
	  .min = 0, .max = 1000000, .def = 256 },
	{ .name = "batch_pages", .type = CONF_U32, .offset = OFF(promotion.batch_pages), .min = 1, .max = 65536, .def = 512 },
};
static const struct conf_table promotion_table = TABLE(promotion_keys);

static const struct conf_key demotion_keys[] = {
	{ .name = "enabled", .type = CONF_BOOL, .offset = OFF(demotion.enabled), .def = 1 },
	{ .name = "cold_age_s", .type = CONF_U32, .offset = OFF(demotion.cold_age_s), .min = 1, .max = 86400, .def = 120 },
};
static const struct conf_table demotion_table = TABLE(demotion_keys);

/* ---- cgroups: [{path, fast_tier_max_bytes, migrate_max_mb_per_s}] ---- */

static void check_cgroup(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
			 const char *path)
{
	struct conf_cgroup *cg = base;

	if (!marks[0].line)
		conf_error(ctx, cg->mark, path, "path", "missing");
	else if (cg->path[0] != '/')
		conf_error(ctx, marks[0], path, "path",
			   "'%s' must start with / (relative to the cgroup2 mount)", cg->path);
}

#define COFF(field) offsetof(struct conf_cgroup, field)
static const struct conf_key cgroup_keys[] = {
	{ .name = "path", .type = CONF_STRING, .offset = COFF(path), .size = CONF_PATH_MAX },
	{ .name = "fast_tier_max_bytes", .type = CONF_SIZE, .offset = COFF(fast_tier_max_bytes), .min = 0, .max = UINT64_MAX },
	{ .name = "migrate_max_mb_per_s", .type = CONF_U32, .offset = COFF(migrate_max_mb_per_s), .min = 0, .max = 1000000 },
};
static const struct conf_table cgroup_table = TABLE(cgroup_keys,
	.mark_offset = COFF(mark) + 1, .check = check_cgroup);

/* ---- copy_threads, kernel, metrics, control ---- */

static void check_copy_threads(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
			       const char *path)
{
	struct tierd_conf *c = base;

	if (c->copy_threads.min > c->copy_threads.max)
		conf_error(ctx, marks[1].line ? marks[1] : marks[2], path, "min",
			   "%u is above max %u", c->copy_threads.min, c->copy_threads.max);
}

static const struct conf_key copy_keys[] = {
	{ .name = "mode", .type = CONF_ENUM, .offset = OFF(copy_threads.mode), .names = copy_mode_names, .def = CONF_COPY_AUTO },
	{ .name = "min", .type = CONF_U32, .offset = OFF(copy_threads.min), .min = 1, .max = 1024, .def = 1 },
	{ .name = "max", .type = CONF_U32, .offset = OFF(copy_threads.max), .min = 1, .max = 1024, .def = 8 },
	{ .name = "busy_cpu_pct", .type = CONF_U32, .offset = OFF(copy_threads.busy_cpu_pct), .min = 1, .max = 100, .def = 75 },
};
static const struct conf_table copy_table = TABLE(copy_keys, .check = check_copy_threads);

static const struct conf_key kernel_keys[] = {
	{ .name = "numa_balancing", .type = CONF_ENUM, .offset = OFF(kernel.numa_balancing), .names = numab_names,
	  .def = CONF_NUMAB_COEXIST },
};
static const struct conf_table kernel_table = TABLE(kernel_keys);

static void check_metrics(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
			  const char *path)
{
	struct tierd_conf *c = base;

	if (c->metrics.textfile_dir[0] && c->metrics.textfile_dir[0] != '/')
		conf_error(ctx, marks[0], path, "textfile_dir", "'%s' is not an absolute path",
			   c->metrics.textfile_dir);
}

static const struct conf_key metrics_keys[] = {
	{ .name = "textfile_dir", .type = CONF_STRING, .offset = OFF(metrics.textfile_dir), .size = CONF_PATH_MAX },
	{ .name = "textfile_interval_ms", .type = CONF_U32, .offset = OFF(metrics.textfile_interval_ms),
	  .min = 1000, .max = 3600000, .def = 15000 },
};
static const struct conf_table metrics_table = TABLE(metrics_keys, .check = check_metrics);

static void check_control(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
			  const char *path)
{
	const char *g = ((struct tierd_conf *)base)->control.group;

	for (const char *p = g; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_-.", *p)) || (p == g && *p == '-')) {
			conf_error(ctx, marks[0], path, "group", "'%s' is not a valid group name", g);
			return;
		}
}

static const struct conf_key control_keys[] = {
	{ .name = "group", .type = CONF_STRING, .offset = OFF(control.group), .size = sizeof(((struct tierd_conf *)0)->control.group) },
};
static const struct conf_table control_table = TABLE(control_keys, .check = check_control);

/* ---- the file ---- */

/* Conflicts between list entries: a node in two tiers, a GPU node twice, a
 * cgroup twice, two tiers of one name. */
static void check_root(struct conf_ctx *ctx, void *base, const struct conf_mark *marks,
		       const char *path)
{
	struct tierd_conf *c = base;
	char key[64];

	for (int a = 0; a < c->nr_tiers; a++) {
		struct conf_tier *ta = &c->tiers[a];

		for (int b = 0; b < a; b++) {
			struct conf_tier *tb = &c->tiers[b];

			if (ta->spec.name[0] && !strcmp(ta->spec.name, tb->spec.name)) {
				snprintf(key, sizeof(key), "tiers[%d].name", a);
				conf_error(ctx, ta->mark, key, "", "'%s' is also the name of tiers[%d]",
					   ta->spec.name, b);
			}
			for (int i = 0; i < ta->spec.nr_nodes; i++)
				for (int j = 0; j < tb->spec.nr_nodes; j++)
					if (ta->spec.nodes[i] == tb->spec.nodes[j]) {
						snprintf(key, sizeof(key), "tiers[%d].nodes", a);
						conf_error(ctx, ta->node_marks[i], key, "",
							   "node %d is already in tiers[%d] (%s)",
							   ta->spec.nodes[i], b, tb->spec.name);
					}
		}
	}
	for (int a = 0; a < c->nr_gpu_nodes; a++)
		for (int b = 0; b < a; b++)
			if (c->gpu_nodes[a].node >= 0 && c->gpu_nodes[a].node == c->gpu_nodes[b].node) {
				snprintf(key, sizeof(key), "gpu_nodes[%d].node", a);
				conf_error(ctx, c->gpu_nodes[a].mark, key, "",
					   "node %d is already gpu_nodes[%d]", c->gpu_nodes[a].node, b);
			}
	for (int a = 0; a < c->nr_cgroups; a++)
		for (int b = 0; b < a; b++)
			if (c->cgroups[a].path[0] && !strcmp(c->cgroups[a].path, c->cgroups[b].path)) {
				snprintf(key, sizeof(key), "cgroups[%d].path", a);
				conf_error(ctx, c->cgroups[a].mark, key, "",
					   "'%s' is already cgroups[%d]", c->cgroups[a].path, b);
			}
}

static const struct conf_key root_keys[] = {
	{ .name = "interval_ms", .type = CONF_U32, .offset = OFF(interval_ms), .min = 10, .max = 60000, .def = 1000 },
	{ .name = "tiers", .type = CONF_LIST, .offset = OFF(tiers), .size = sizeof(struct conf_tier), .sub = &tier_table,
	  .count_offset = OFF(nr_tiers), .max_count = TOPO_MAX_TIERS },
	{ .name = "gpu_nodes", .type = CONF_LIST, .offset = OFF(gpu_nodes), .size = sizeof(struct conf_gpu_node),
	  .sub = &gpu_table, .count_offset = OFF(nr_gpu_nodes), .max_count = CONF_MAX_GPU_NODES },
	{ .name = "sampling", .type = CONF_MAP, .offset = 0, .sub = &sampling_table },
	{ .name = "promotion", .type = CONF_MAP, .offset = 0, .sub = &promotion_table },
	{ .name = "demotion", .type = CONF_MAP, .offset = 0, .sub = &demotion_table },
	{ .name = "cgroups", .type = CONF_LIST, .offset = OFF(cgroups), .size = sizeof(struct conf_cgroup),
	  .sub = &cgroup_table, .count_offset = OFF(nr_cgroups), .max_count = CONF_MAX_CGROUPS },
	{ .name = "copy_threads", .type = CONF_MAP, .offset = 0, .sub = &copy_table },
	{ .name = "kernel", .type = CONF_MAP, .offset = 0, .sub = &kernel_table },
	{ .name = "metrics", .type = CONF_MAP, .offset = 0, .sub = &metrics_table },
	{ .name = "control", .type = CONF_MAP, .offset = 0, .sub = &control_table },
	{ .name = "dry_run", .type = CONF_BOOL, .offset = OFF(dry_run), .def = 0 },
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
