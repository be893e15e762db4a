// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GPU rule's usage: readings of its cgroups and processes, plus what
 * tierd planned since (gpu_usage.h has the model).
 */
#include <string.h>

#include "gpu_usage.h"

void gpu_usage_init(struct gpu_usage *u, const struct policy_params *params)
{
	memset(u, 0, sizeof(*u));
	u->page_size = params->page_size;
	u->nr_rules = params->nr_rules;
	for (int r = 0; r < params->nr_rules; r++) {
		u->node[r] = params->rules[r].node;
		for (int a = 0; a < params->rules[r].nr_allow; a++)
			if (params->rules[r].allow[a][0] == '/')
				u->has_cgroups[r] = true;
	}
}

static struct gpu_usage_proc *find(struct gpu_usage_proc *procs, int nr, pid_t pid)
{
	int lo = 0, hi = nr;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (procs[mid].pid == pid)
			return &procs[mid];
		if (procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void gpu_usage_sync(struct gpu_usage *u, const struct cand_procs *p, const bool *by_cgroup)
{
	int old = u->nr;

	memcpy(u->scratch, u->procs, (size_t)old * sizeof(*u->procs));
	u->nr = 0;
	for (int i = 0; i < p->nr; i++) {
		const struct cand_proc *cp = &p->procs[i];
		const struct gpu_usage_proc *was;
		struct gpu_usage_proc *n;

		if (cp->rule < 0 || cp->rule >= u->nr_rules)
			continue;
		n = &u->procs[u->nr++];
		was = find(u->scratch, old, cp->pid);
		if (was && was->rule == cp->rule && was->by_cgroup == by_cgroup[i]) {
			*n = *was;
			continue;
		}
		*n = (struct gpu_usage_proc){ .pid = cp->pid, .rule = (int16_t)cp->rule,
					      .by_cgroup = by_cgroup[i] };
	}
}

/* Sooner due first: never read (0), then the oldest reading. */
static uint64_t due_key(const struct gpu_usage_proc *g)
{
	return g->read ? g->read_ns + 1 : 0;
}

static uint64_t refresh_ns(const struct gpu_usage_proc *g)
{
	uint64_t ns = g->planned_bytes ? GPU_USAGE_BUSY_REFRESH_NS : GPU_USAGE_REFRESH_NS;
	uint64_t spaced = g->read_cost_ns * GPU_USAGE_READ_SPACING;

	return spaced > ns ? spaced : ns;
}

size_t gpu_usage_due(const struct gpu_usage *u, uint64_t now_ns, pid_t *ret, size_t max)
{
	size_t n = 0;

	/* Selection of the @max soonest: max is a handful, nr up to 1024. */
	while (n < max) {
		const struct gpu_usage_proc *best = NULL;

		for (int i = 0; i < u->nr; i++) {
			const struct gpu_usage_proc *g = &u->procs[i];
			bool taken = false;

			if (g->read && now_ns - g->read_ns < refresh_ns(g))
				continue;
			for (size_t k = 0; k < n && !taken; k++)
				taken = ret[k] == g->pid;
			if (!taken && (!best || due_key(g) < due_key(best)))
				best = g;
		}
		if (!best)
			break;
		ret[n++] = best->pid;
	}
	return n;
}

int gpu_usage_node_of(const struct gpu_usage *u, pid_t pid)
{
	const struct gpu_usage_proc *g = find((struct gpu_usage_proc *)u->procs, u->nr, pid);

	return g ? u->node[g->rule] : -1;
}

void gpu_usage_read_proc(struct gpu_usage *u, pid_t pid, uint64_t node_bytes, uint64_t now_ns,
			 uint64_t cost_ns)
{
	struct gpu_usage_proc *g = find(u->procs, u->nr, pid);

	if (!g)
		return;
	g->read = true;
	g->read_ns = now_ns;
	g->read_cost_ns = cost_ns;
	g->node_bytes = node_bytes;
	g->planned_bytes = 0;
}

void gpu_usage_read_cgroups(struct gpu_usage *u, int rule, bool ok, uint64_t bytes)
{
	if (rule < 0 || rule >= u->nr_rules)
		return;
	u->cg[rule].read = ok;
	u->cg[rule].bytes = ok ? bytes : 0;
	u->cg[rule].planned_bytes = 0;
}

void gpu_usage_planned(struct gpu_usage *u, const struct policy_intent *intents, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct policy_intent *it = &intents[i];
		struct gpu_usage_proc *g;
		uint64_t bytes = (uint64_t)it->nr_pages * u->page_size;

		if (it->kind != POLICY_PROMOTE)
			continue;
		g = find(u->procs, u->nr, it->pid);
		if (!g || it->to_node != u->node[g->rule])
			continue;
		if (g->by_cgroup)
			u->cg[g->rule].planned_bytes += bytes;
		g->planned_bytes += bytes;
	}
}

void gpu_usage_totals(const struct gpu_usage *u, uint64_t *ret)
{
	uint64_t in_cg[POLICY_MAX_RULES] = { 0 };
	bool known[POLICY_MAX_RULES];

	/* The cgroups' processes as read (one not read yet: its cgroup's
	 * reading stands for it), against the cgroups' reading. */
	for (int i = 0; i < u->nr; i++) {
		const struct gpu_usage_proc *g = &u->procs[i];

		if (g->by_cgroup)
			in_cg[g->rule] += (g->read ? g->node_bytes : 0) + g->planned_bytes;
	}
	for (int r = 0; r < u->nr_rules; r++) {
		uint64_t cg = u->cg[r].bytes + u->cg[r].planned_bytes;

		known[r] = !u->has_cgroups[r] || u->cg[r].read;
		ret[r] = u->has_cgroups[r] ? (cg > in_cg[r] ? cg : in_cg[r]) : 0;
	}
	for (int i = 0; i < u->nr; i++) {
		const struct gpu_usage_proc *g = &u->procs[i];

		if (g->by_cgroup)
			continue;
		if (!g->read)
			known[g->rule] = false;
		ret[g->rule] += g->node_bytes + g->planned_bytes;
	}
	for (int r = 0; r < u->nr_rules; r++)
		if (!known[r])
			ret[r] = GPU_USAGE_UNKNOWN;
}
