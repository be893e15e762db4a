// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policy's names and GPU placement rules: which rule a process falls
 * under, by cgroup subtree or command name, and the names of the reasons
 * and holds that the stats count.
 */
#include <fnmatch.h>
#include <string.h>

#include "policy_int.h"

static const char *const reason_names[POLICY_R_NR] = {
	[POLICY_R_HOT] = "hot",
	[POLICY_R_GPU] = "gpu-rule",
	[POLICY_R_CAP] = "cgroup-cap",
	[POLICY_R_WMARK] = "watermark",
	[POLICY_R_ROOM] = "room",
	[POLICY_R_FILL] = "fill",
	[POLICY_R_EXCHANGE] = "exchange",
};

static const char *const hold_names[POLICY_H_NR] = {
	[POLICY_H_COOLDOWN] = "cooldown",
	[POLICY_H_PINGPONG] = "pingpong",
	[POLICY_H_NO_ROOM] = "no-room",
	[POLICY_H_CGROUP_CAP] = "cgroup-cap",
	[POLICY_H_GPU_CAP] = "gpu-cap",
	[POLICY_H_CGROUP_RATE] = "cgroup-rate",
	[POLICY_H_GLOBAL_RATE] = "global-rate",
	[POLICY_H_OUTPUT_FULL] = "output-full",
	[POLICY_H_REFILL] = "refill",
};

const char *policy_reason_name(enum policy_reason r)
{
	return (unsigned int)r < POLICY_R_NR ? reason_names[r] : "?";
}

const char *policy_hold_name(enum policy_hold h)
{
	return (unsigned int)h < POLICY_H_NR ? hold_names[h] : "?";
}

static bool cgroup_under(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (strncmp(path, top, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || (n && top[n - 1] == '/');
}

int policy_rule_match(const struct policy_params *params, const char *cgroup_path,
		      const char *comm)
{
	for (int i = 0; i < params->nr_rules; i++) {
		const struct policy_gpu_rule *r = &params->rules[i];

		for (int j = 0; j < r->nr_allow; j++) {
			const char *a = r->allow[j];

			if (a[0] == '/' ? cgroup_path && cgroup_under(cgroup_path, a) :
					  a[0] && comm && fnmatch(a, comm, 0) == 0)
				return i;
		}
	}
	return -1;
}

bool policy_rule_in_cgroups(const struct policy_params *params, int rule,
			    const char *cgroup_path)
{
	const struct policy_gpu_rule *r = &params->rules[rule];

	for (int j = 0; cgroup_path && j < r->nr_allow; j++)
		if (r->allow[j][0] == '/' && cgroup_under(cgroup_path, r->allow[j]))
			return true;
	return false;
}

bool policy_rule_cgroup_top(const struct policy_params *params, int rule, int a)
{
	const struct policy_gpu_rule *r = &params->rules[rule];

	if (r->allow[a][0] != '/')
		return false;
	for (int j = 0; j < r->nr_allow; j++) {
		if (j == a || r->allow[j][0] != '/' || !cgroup_under(r->allow[a], r->allow[j]))
			continue;
		/* Inside entry j; of two equal entries the first counts. */
		if (strcmp(r->allow[a], r->allow[j]) || j < a)
			return false;
	}
	return true;
}
