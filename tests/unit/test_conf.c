// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config parser: defaults, the shipped configs, values that parse, and
 * every file under fixtures/conf/bad with its exact expected messages
 * (NAME.yaml -> NAME.expected).
 *
 *   test_conf FIXTURES_DIR CONFIGS_DIR
 *   test_conf --print FILE   (prints the errors, to write a new .expected)
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conf_schema.h"
#include "test.h"

static const char *fixtures, *configs;

static struct tierd_conf *parse(const char *text, char **errors)
{
	static struct tierd_conf c;
	int r = conf_parse("t.yaml", text, strlen(text), &c, errors);

	if (r < 0 && *errors)
		fprintf(stderr, "%s", *errors);
	return r < 0 ? NULL : &c;
}

static void test_defaults(void)
{
	struct tierd_conf *c;
	char *err = NULL;

	c = parse("", &err);
	CHECK(c && !err);
	if (!c)
		return;
	CHECK_EQ_INT(c->interval_ms, 1000);
	CHECK_EQ_INT(c->nr_tiers, 0);
	CHECK_EQ_INT(c->sampling.source, CONF_SOURCE_AUTO);
	CHECK_EQ_INT(c->sampling.damon_aggr_us, 100000);
	CHECK_EQ_INT(c->sampling.damon_min_regions, 200);
	CHECK_EQ_INT(c->sampling.damon_max_regions, 2000);
	CHECK_EQ_INT(c->sampling.damon_idle_slowdown, 10);
	CHECK(c->sampling.damon_idle_peek);
	CHECK_EQ_U64(c->sampling.target_min_rss_bytes, 64ull << 20);
	CHECK(c->sampling.cpu_budget_pct == 2.0);
	CHECK_EQ_INT(c->promotion.batch_pages, 4096);
	CHECK(c->demotion.enabled);
	CHECK_EQ_INT(c->copy_threads.mode, CONF_COPY_AUTO);
	CHECK_EQ_INT(c->copy_threads.max, 8);
	CHECK_EQ_INT(c->kernel.numa_balancing, CONF_NUMAB_COEXIST);
	CHECK_EQ_STR(c->metrics.textfile_dir, "");
	CHECK(!c->dry_run);
	CHECK_EQ_STR(c->path, "t.yaml");
	/* Comments only, and a bare null document, are empty files too. */
	CHECK(parse("# nothing\n", &err));
	CHECK(parse("~\n", &err));
}

static void test_values(void)
{
	struct tierd_conf *c;
	char *err = NULL;

	c = parse("interval_ms: 250\n"
		  "tiers:\n"
		  "  - name: dram\n"
		  "    nodes: [0, 2]\n"
		  "    low_watermark_pct: 3\n"
		  "    high_watermark_pct: 7\n"
		  "  - {name: cxl, nodes: [1]}\n"
		  "gpu_nodes:\n"
		  "  - node: 3\n"
		  "    allow: [/a.slice, 'py*']\n"
		  "    max_bytes: 2T\n"
		  "sampling:\n"
		  "  source: damon\n"
		  "  cpu_budget_pct: 0.5\n"
		  "  targets: {comms: [redis-server], min_rss_bytes: 512K}\n"
		  "cgroups:\n"
		  "  - path: /x.slice\n"
		  "    fast_tier_max_bytes: 3G\n"
		  "    migrate_max_mb_per_s: 100\n"
		  "copy_threads: {mode: off, min: 2, max: 2}\n"
		  "kernel: {numa_balancing: takeover}\n"
		  "control: {group: tierd}\n"
		  "dry_run: true\n",
		  &err);
	CHECK(c && !err);
	if (!c)
		return;
	CHECK_EQ_INT(c->interval_ms, 250);
	CHECK_EQ_INT(c->nr_tiers, 2);
	CHECK_EQ_STR(c->tiers[0].spec.name, "dram");
	CHECK_EQ_INT(c->tiers[0].spec.nr_nodes, 2);
	CHECK_EQ_INT(c->tiers[0].spec.nodes[1], 2);
	CHECK_EQ_INT(c->tiers[0].node_marks[1].line, 4);
	CHECK_EQ_INT(c->tiers[0].node_marks[1].column, 16);
	CHECK_EQ_INT(c->tiers[0].spec.high_watermark_pct, 7);
	CHECK_EQ_INT(c->tiers[1].spec.low_watermark_pct,
		     2); /* default per entry */
	CHECK_EQ_INT(c->tiers[1].mark.line, 7);
	CHECK_EQ_INT(c->nr_gpu_nodes, 1);
	CHECK_EQ_INT(c->gpu_nodes[0].node, 3);
	CHECK_EQ_INT(c->gpu_nodes[0].allow.n, 2);
	CHECK_EQ_STR(c->gpu_nodes[0].allow.s[1], "py*");
	CHECK_EQ_U64(c->gpu_nodes[0].max_bytes, 2ull << 40);
	CHECK(!c->gpu_nodes[0].demotion_target);
	CHECK_EQ_INT(c->sampling.source, CONF_SOURCE_DAMON);
	CHECK(c->sampling.cpu_budget_pct == 0.5);
	CHECK_EQ_STR(c->sampling.target_comms.s[0], "redis-server");
	CHECK_EQ_U64(c->sampling.target_min_rss_bytes, 512 * 1024);
	CHECK_EQ_INT(c->nr_cgroups, 1);
	CHECK_EQ_U64(c->cgroups[0].fast_tier_max_bytes, 3ull << 30);
	CHECK_EQ_INT(c->cgroups[0].migrate_max_mb_per_s, 100);
	CHECK_EQ_INT(c->copy_threads.mode, CONF_COPY_OFF);
	CHECK_EQ_INT(c->kernel.numa_balancing, CONF_NUMAB_TAKEOVER);
	CHECK_EQ_STR(c->control.group, "tierd");
	CHECK(c->dry_run);

	struct tiers_config tc;

	conf_tiers_config(c, &tc);
	CHECK_EQ_INT(tc.nr_tiers, 2);
	CHECK_EQ_INT(tc.tiers[1].nodes[0], 1);
	CHECK_EQ_INT(tc.nr_gpu_nodes, 1);
	CHECK_EQ_INT(tc.gpu_nodes[0], 3);
	CHECK_EQ_INT(tc.default_high_watermark_pct, 4);
}

/* The shipped tierd.yaml shows every key at its default: it must equal them. */
static void test_shipped(void)
{
	static const char *const examples[] = {
		"cxl-promotion.yaml",
		"gpu-coherent.yaml",
		"cgroup-budgets.yaml",
	};
	static struct tierd_conf file, def;
	char path[4096], *err = NULL;

	snprintf(path, sizeof(path), "%s/tierd.yaml", configs);
	CHECK_EQ_INT(conf_load(path, &file, &err), 0);
	if (err)
		fprintf(stderr, "%s", err);
	conf_defaults(&def);
	strcpy(def.path, file.path);
	CHECK(memcmp(&file, &def, sizeof(def)) == 0);
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", configs, examples[i]);
		CHECK_EQ_INT(conf_load(path, &file, &err), 0);
		if (err)
			fprintf(stderr, "%s", err);
	}
	CHECK_EQ_INT(conf_load("/nonexistent/tierd.yaml", &file, &err),
		     -ENOENT);
	CHECK(!err);
}

static char *slurp(const char *path, size_t *ret_len);

/* Every key of the schema is named in the shipped tierd.yaml and in
 * tierd.yaml(5): documentation that cannot fall behind the table. */
static void check_documented(const struct conf_table *t, const char *yaml,
			     const char *man, const char *path)
{
	for (size_t i = 0; i < t->nr_keys; i++) {
		const struct conf_key *k = &t->keys[i];
		char want[128];

		snprintf(want, sizeof(want), "%s:", k->name);
		if (!strstr(yaml, want)) {
			fprintf(stderr,
				"configs/tierd.yaml does not show %s%s\n", path,
				k->name);
			test_failures++;
		}
		if (!strstr(man, k->name)) {
			fprintf(stderr, "tierd.yaml.5 does not document %s%s\n",
				path, k->name);
			test_failures++;
		}
		if (k->sub) {
			char sub[128];

			snprintf(sub, sizeof(sub), "%s%s.", path, k->name);
			check_documented(k->sub, yaml, man, sub);
		}
	}
}

static void test_documented(void)
{
	char path[4096], *yaml, *man;

	snprintf(path, sizeof(path), "%s/tierd.yaml", configs);
	yaml = slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/../man/tierd.yaml.5", configs);
	man = slurp(path, NULL);
	CHECK(yaml && man);
	if (yaml && man)
		check_documented(&conf_root_table, yaml, man, "");
	free(yaml);
	free(man);
}

static char *slurp(const char *path, size_t *ret_len)
{
	static char buf[65536];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (ret_len)
		*ret_len = n;
	return strdup(buf);
}

static void test_bad(void)
{
	char dir[4096];
	struct dirent *de;
	int seen = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/bad", fixtures);
	d = opendir(dir);
	CHECK(d);
	if (!d)
		return;
	while ((de = readdir(d))) {
		static struct tierd_conf c;
		char path[8192], *text, *want, *got = NULL;
		size_t len, n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 5, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = slurp(path, &len);
		snprintf(path + strlen(path) - 5, 10, ".expected");
		want = slurp(path, NULL);
		CHECK(text && want);
		if (!text || !want)
			continue;
		CHECK_EQ_INT(conf_parse(de->d_name, text, len, &c, &got),
			     -EINVAL);
		CHECK_EQ_STR(got, want);
		free(text);
		free(want);
		free(got);
		seen++;
	}
	closedir(d);
	CHECK(seen >= 10);
}

/* A directory is not a config: said so, not "Input/output error". */
static void test_directory(void)
{
	static struct tierd_conf c;
	char *err = NULL;

	CHECK_EQ_INT(conf_load(fixtures, &c, &err), -EISDIR);
	CHECK(!err);
	CHECK_EQ_INT(conf_load_trusted(fixtures, geteuid(), &c, &err), -EISDIR);
	CHECK(!err);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--print")) {
		static struct tierd_conf c;
		char *err = NULL, *name = strrchr(argv[2], '/');
		size_t len;
		char *text = slurp(argv[2], &len);

		if (!text)
			return 2;
		conf_parse(name ? name + 1 : argv[2], text, len, &c, &err);
		fputs(err ? err : "", stdout);
		return 0;
	}
	fixtures = argc > 1 ? argv[1] : "tests/fixtures/conf";
	configs = argc > 2 ? argv[2] : "configs";
	RUN(test_defaults);
	RUN(test_values);
	RUN(test_shipped);
	RUN(test_bad);
	RUN(test_documented);
	RUN(test_directory);
	return TEST_EXIT();
}
