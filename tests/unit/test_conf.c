// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config parser: defaults, the shipped configs, values that parse, and
 * every file under fixtures/conf/bad with its exact expected messages
 * (NAME.yaml -> NAME.expected); a parsed config against a machine
 * (conf_check_machine()) with its exact errors and warnings.
 *
 *   test_conf FIXTURES_DIR CONFIGS_DIR
 *   test_conf --print FILE   (prints the errors, to write a new .expected)
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_machine.h"
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
	/* Where the file is, and where it names a key, are not values. */
	strcpy(def.path, file.path);
	def.control.group_mark = file.control.group_mark;
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

/* Nodes 0 and 1 with memory, node 2 without (a CPU-only node). */
static void machine_topology(struct topology *t)
{
	memset(t, 0, sizeof(*t));
	t->nr_nodes = 3;
	for (int i = 0; i < 3; i++) {
		t->nodes[i].id = i;
		t->nodes[i].has_memory = i < 2;
		t->nodes[i].kernel_tier = 4;
	}
}

/* conf_check_machine() on @text: its return, errors and warnings. */
static int machine_check(const char *text, const char *root, gid_t *gid,
			 char **errors, char **warnings)
{
	static struct topology topo;
	struct tierd_conf *c;
	char *err = NULL;

	c = parse(text, &err);
	CHECK(c && !err);
	if (!c)
		return -EINVAL;
	machine_topology(&topo);
	return conf_check_machine(c, &topo, root, gid, errors, warnings);
}

/* Nodes and control.group: errors, every one where the file names it. */
static void test_machine_errors(void)
{
	char *errors, *warnings;
	struct group *root_grp = getgrgid(0);
	char text[256];
	gid_t gid;

	CHECK_EQ_INT(machine_check("tiers:\n"
				   "  - {name: dram, nodes: [0]}\n"
				   "  - {name: cxl, nodes: [1, 2, 7]}\n"
				   "gpu_nodes:\n"
				   "  - node: 9\n"
				   "control:\n"
				   "  group: no-such-group-tierd\n",
				   "/nonexistent", &gid, &errors, &warnings),
		     -ENODEV);
	CHECK_EQ_STR(errors,
		     "t.yaml:3:28: tiers: node 2 is not a memory node of this machine\n"
		     "t.yaml:3:31: tiers: node 7 is not a memory node of this machine\n"
		     "t.yaml:5:5: gpu_nodes: node 9 is not a memory node of this machine\n"
		     "t.yaml:7:10: control.group: 'no-such-group-tierd': no such group\n");
	CHECK(!warnings);
	free(errors);

	/* The group alone: -ENOENT. */
	CHECK_EQ_INT(machine_check("interval_ms: 500\ncontrol: {group: no-such-group-tierd}\n",
				   "/nonexistent", &gid, &errors, &warnings),
		     -ENOENT);
	CHECK_EQ_STR(errors,
		     "t.yaml:2:18: control.group: 'no-such-group-tierd': no such group\n");
	CHECK_EQ_INT(gid, (gid_t)-1);
	free(errors);

	/* Good: the tiers derived from the config, the group resolved. */
	CHECK(root_grp);
	if (!root_grp)
		return;
	snprintf(text, sizeof(text),
		 "tiers:\n  - {name: a, nodes: [1]}\n  - {name: b, nodes: [0]}\n"
		 "control: {group: %s}\n", root_grp->gr_name);
	CHECK_EQ_INT(machine_check(text, "/nonexistent", &gid, &errors, &warnings), 0);
	CHECK(!errors && !warnings);
	CHECK_EQ_INT(gid, 0);
	CHECK_EQ_INT(machine_check("{}\n", "/nonexistent", &gid, &errors, &warnings), 0);
	CHECK_EQ_INT(gid, (gid_t)-1);
}

static void make_dir(const char *root, const char *path)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s%s", root, path);
	CHECK(mkdir(dir, 0755) == 0);
}

static void make_file(const char *root, const char *path)
{
	char file[4096];
	FILE *f;

	snprintf(file, sizeof(file), "%s%s", root, path);
	f = fopen(file, "w");
	CHECK(f);
	if (f)
		fclose(f);
}

/* Cgroups that do not exist: warnings with line and column, no error. */
static void test_machine_cgroups(void)
{
	static const char text[] =
		"gpu_nodes:\n"
		"  - node: 1\n"
		"    allow: [python, /a.slice, /gpu.slice]\n"
		"sampling:\n"
		"  targets:\n"
		"    cgroups:\n"
		"      - /a.slice/b\n"
		"      - /gone.slice\n"
		"cgroups:\n"
		"  - path: /a.slice\n"
		"  - path: /a.slice/file\n";
	char root[64] = "/tmp/test_conf.XXXXXX", file[4096], *errors, *warnings;
	gid_t gid;

	CHECK(mkdtemp(root));
	make_dir(root, "/sys");
	make_dir(root, "/sys/fs");
	/* Not a cgroup2 mount yet: one warning. */
	make_dir(root, "/sys/fs/cgroup");
	CHECK_EQ_INT(machine_check(text, root, &gid, &errors, &warnings), 0);
	CHECK(!errors);
	snprintf(file, sizeof(file),
		 "t.yaml:3:21: gpu_nodes[0].allow: no cgroup2 file system at %s/sys/fs/cgroup: the cgroups the policy names are not checked\n",
		 root);
	CHECK_EQ_STR(warnings, file);
	free(warnings);

	make_file(root, "/sys/fs/cgroup/cgroup.controllers");
	make_dir(root, "/sys/fs/cgroup/a.slice");
	make_dir(root, "/sys/fs/cgroup/a.slice/b");
	make_file(root, "/sys/fs/cgroup/a.slice/file");
	/* "/" at the end of the root is the same root. */
	strcat(root, "/");
	CHECK_EQ_INT(machine_check(text, root, &gid, &errors, &warnings), 0);
	CHECK(!errors);
	CHECK_EQ_STR(warnings,
		     "t.yaml:3:31: gpu_nodes[0].allow: '/gpu.slice' is not a cgroup on this machine (yet): the rule admits it once it exists\n"
		     "t.yaml:8:9: sampling.targets.cgroups: '/gone.slice' is not a cgroup on this machine (yet): its processes are sampled once it exists\n"
		     "t.yaml:11:11: cgroups[1].path: '/a.slice/file' is not a cgroup on this machine (yet): its budget applies once it exists\n");
	free(warnings);

	/* Errors and warnings together. */
	CHECK_EQ_INT(machine_check("tiers: [{name: x, nodes: [2]}]\n"
				   "cgroups: [{path: /gone.slice}]\n",
				   root, &gid, &errors, &warnings),
		     -ENODEV);
	CHECK_EQ_STR(errors,
		     "t.yaml:1:27: tiers: node 2 is not a memory node of this machine\n");
	CHECK_EQ_STR(warnings,
		     "t.yaml:2:18: cgroups[0].path: '/gone.slice' is not a cgroup on this machine (yet): its budget applies once it exists\n");
	free(errors);
	free(warnings);

	root[strlen(root) - 1] = '\0';
	snprintf(file, sizeof(file), "rm -rf '%s'", root);
	CHECK(system(file) == 0);
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
	RUN(test_machine_errors);
	RUN(test_machine_cgroups);
	RUN(test_directory);
	return TEST_EXIT();
}
