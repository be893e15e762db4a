// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a policy file cannot know by itself: which NUMA nodes hold memory,
 * which groups exist, which cgroups exist, on the machine it runs on.
 *
 * A node the policy names that is missing is an error: a tier or a GPU rule
 * without its memory is not the policy the file describes.  (At start the
 * daemon leaves such nodes out and runs with the rest, rather than leave
 * the machine with no tiering at all; it calls this afterwards.)  A group
 * that does not exist is an error: tierctl's privileged commands would be
 * open to no one the operator meant.  A cgroup that does not exist is a
 * warning: cgroups come and go with the services in them, and tierd reads
 * each cgroup it names at every tick, so the policy applies to it as soon
 * as it exists.
 */
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf_machine.h"
#include "conf_walk.h"

static bool is_memory_node(const struct topology *topo, int id)
{
	int idx = topo_node_index(topo, id);

	return idx >= 0 && topo->nodes[idx].has_memory;
}

/* Each node of tiers: and gpu_nodes: that @topo lacks, where it is named. */
static int check_nodes(struct conf_ctx *ctx, const struct tierd_conf *c,
		       const struct topology *topo)
{
	int ret = 0;

	for (int t = 0; t < c->nr_tiers; t++) {
		const struct conf_tier *ct = &c->tiers[t];

		for (int i = 0; i < ct->spec.nr_nodes; i++) {
			if (is_memory_node(topo, ct->spec.nodes[i]))
				continue;
			conf_error(ctx, ct->node_marks[i], "tiers", "",
				   "node %d is not a memory node of this machine",
				   ct->spec.nodes[i]);
			ret = -ENODEV;
		}
	}
	for (int g = 0; g < c->nr_gpu_nodes; g++) {
		const struct conf_gpu_node *gn = &c->gpu_nodes[g];

		if (is_memory_node(topo, gn->node))
			continue;
		conf_error(ctx, gn->mark, "gpu_nodes", "",
			   "node %d is not a memory node of this machine",
			   gn->node);
		ret = -ENODEV;
	}
	return ret;
}

/* getgrnam_r() into a buffer that grows with the group's member list. */
static int resolve_group(const char *name, gid_t *ret)
{
	struct group grp, *res = NULL;
	size_t size = 4096;
	char *buf = NULL;
	int r;

	*ret = (gid_t)-1;
	if (!*name)
		return 0;
	for (;;) {
		char *p = realloc(buf, size);

		if (!p) {
			r = ENOMEM;
			break;
		}
		buf = p;
		r = getgrnam_r(name, &grp, buf, size, &res);
		if (r != ERANGE || size >= (1u << 20))
			break;
		size *= 2;
	}
	if (!r && res)
		*ret = grp.gr_gid;
	free(buf);
	if (r)
		return -r;
	return res ? 0 : -ENOENT;
}

static int check_group(struct conf_ctx *ctx, const struct tierd_conf *c,
		       gid_t *ret_gid)
{
	int r = resolve_group(c->control.group, ret_gid);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		conf_error(ctx, c->control.group_mark, "control", "group",
			   "'%s': %s", c->control.group,
			   r == -ENOENT ? "no such group" : strerror(-r));
	return r;
}

struct cgroup_check {
	struct conf_ctx *ctx;
	char dir[4096]; /* ROOT/sys/fs/cgroup */
	bool mounted; /* a cgroup2 file system is there */
	bool told; /* that it is not, once */
};

/* Warn if cgroup @cg, named at @m, is not a directory below the mount. */
static void check_cgroup(struct cgroup_check *cc, const char *cg,
			 struct conf_mark m, const char *path, const char *key,
			 const char *then)
{
	char file[sizeof(cc->dir) + CONF_PATH_MAX];
	struct stat st;
	int r;

	if (!cc->mounted) {
		if (!cc->told)
			conf_error(cc->ctx, m, path, key,
				   "no cgroup2 file system at %s: the cgroups the policy names are not checked",
				   cc->dir);
		cc->told = true;
		return;
	}
	snprintf(file, sizeof(file), "%s%s", cc->dir, cg);
	r = stat(file, &st) < 0 ? -errno : 0;
	if (r == 0 && S_ISDIR(st.st_mode))
		return;
	if (r == 0 || r == -ENOENT || r == -ENOTDIR)
		conf_error(cc->ctx, m, path, key,
			   "'%s' is not a cgroup on this machine (yet): %s once it exists",
			   cg, then);
	else
		conf_error(cc->ctx, m, path, key, "'%s' not checked: %s: %s",
			   cg, file, strerror(-r));
}

/* Every cgroup the policy names; the warnings are put in file order later. */
static void check_cgroups(struct conf_ctx *ctx, const struct tierd_conf *c,
			  const char *root)
{
	struct cgroup_check cc = { .ctx = ctx };
	size_t n = strlen(root);
	char key[64], file[sizeof(cc.dir) + 32];

	while (n && root[n - 1] == '/')
		n--;
	snprintf(cc.dir, sizeof(cc.dir), "%.*s/sys/fs/cgroup", (int)n, root);
	snprintf(file, sizeof(file), "%s/cgroup.controllers", cc.dir);
	cc.mounted = access(file, F_OK) == 0;

	for (int g = 0; g < c->nr_gpu_nodes; g++) {
		const struct conf_strlist *a = &c->gpu_nodes[g].allow;

		snprintf(key, sizeof(key), "gpu_nodes[%d]", g);
		for (int i = 0; i < a->n; i++)
			if (a->s[i][0] == '/')
				check_cgroup(&cc, a->s[i], a->marks[i], key,
					     "allow", "the rule admits it");
	}
	for (int i = 0; i < c->sampling.target_cgroups.n; i++)
		check_cgroup(&cc, c->sampling.target_cgroups.s[i],
			     c->sampling.target_cgroups.marks[i],
			     "sampling.targets", "cgroups",
			     "its processes are sampled");
	for (int i = 0; i < c->nr_cgroups; i++) {
		snprintf(key, sizeof(key), "cgroups[%d]", i);
		check_cgroup(&cc, c->cgroups[i].path, c->cgroups[i].path_mark,
			     key, "path", "its budget applies");
	}
}

/* Hand the texts of @errors and @warnings over; -ENOMEM if one is lost. */
static int texts(struct conf_ctx *errors, struct conf_ctx *warnings,
		 char **ret_errors, char **ret_warnings)
{
	if (errors->nr_errors)
		*ret_errors = conf_format_errors(errors);
	if (warnings->nr_errors)
		*ret_warnings = conf_format_errors(warnings);
	if ((errors->nr_errors && !*ret_errors) ||
	    (warnings->nr_errors && !*ret_warnings))
		return -ENOMEM;
	return 0;
}

int conf_check_machine(const struct tierd_conf *conf, struct topology *topo,
		       const char *root, gid_t *ret_gid, char **ret_errors,
		       char **ret_warnings)
{
	struct conf_ctx *errors, *warnings;
	struct tiers_config tc;
	int r, rg, bad = -1;

	*ret_errors = *ret_warnings = NULL;
	*ret_gid = (gid_t)-1;
	errors = calloc(1, sizeof(*errors));
	warnings = calloc(1, sizeof(*warnings));
	if (!errors || !warnings) {
		r = -ENOMEM;
		goto out;
	}
	errors->name = warnings->name = conf->path;

	r = check_nodes(errors, conf, topo);
	if (r == 0) {
		conf_tiers_config(conf, &tc);
		r = tiers_derive(topo, &tc, &bad);
		if (r < 0) /* what check_nodes() checks: not reached */
			conf_error(errors, (struct conf_mark){ 0, 0 }, "tiers",
				   "", "node %d is not a memory node of this machine",
				   bad);
	}
	rg = check_group(errors, conf, ret_gid);
	if (r == 0 || rg == -ENOMEM)
		r = rg;
	if (r != -ENOMEM)
		check_cgroups(warnings, conf, root);
	if (texts(errors, warnings, ret_errors, ret_warnings) < 0)
		r = -ENOMEM;
out:
	if (r == -ENOMEM) {
		free(*ret_errors);
		free(*ret_warnings);
		*ret_errors = *ret_warnings = NULL;
	}
	free(errors);
	free(warnings);
	return r;
}
