// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "account_int.h"

#define NSEC_PER_SEC 1000000000ull

static const char *const class_names[ACCT_NR] = {
	[ACCT_MOVED] = "moved",
	[ACCT_ELSEWHERE] = "elsewhere",
	[ACCT_BUSY] = "busy",
	[ACCT_GONE] = "gone",
	[ACCT_NOMEM] = "nomem",
	[ACCT_DENIED] = "denied",
	[ACCT_OTHER] = "other",
	[ACCT_SHARED] = "shared",
};

const char *acct_class_name(enum acct_class c)
{
	return (unsigned int)c < ACCT_NR ? class_names[c] : "?";
}

enum acct_class acct_classify(int status, int target)
{
	if (status >= 0)
		return status == target ? ACCT_MOVED : ACCT_ELSEWHERE;
	switch (-status) {
	case EBUSY:
	case EAGAIN:
		return ACCT_BUSY;
	case ENOENT:
	case EFAULT:
	case ESRCH:
		return ACCT_GONE;
	case ENOMEM:
		return ACCT_NOMEM;
	case EACCES:
	case EPERM:
		return ACCT_DENIED;
	case -ACCT_STATUS_SHARED:
		return ACCT_SHARED;
	default:
		return ACCT_OTHER;
	}
}

void acct_params_default(struct acct_params *p, const struct page_geom *g)
{
	p->page_size = (uint32_t)g->base;
	p->busy_delay_ns = NSEC_PER_SEC;
	p->busy_backoff_max_ns = 64 * NSEC_PER_SEC;
	p->busy_max_tries = 3;
	p->busy_slots = 4096;
	p->nomem_backoff_ns = 5 * NSEC_PER_SEC;
	p->nomem_backoff_max_ns = 300 * NSEC_PER_SEC;
}

int account_new(const struct acct_params *params, size_t max_cgroups, size_t max_retry,
		struct account **ret)
{
	struct account *a;
	int r;

	if (!params->page_size)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->params = *params;
	a->max_cgroups = max_cgroups;
	a->max_retry = max_retry;
	a->cgroup_moved = calloc(max_cgroups * 2 + 1, sizeof(*a->cgroup_moved));
	a->cgroup_errors = calloc(max_cgroups + 1, sizeof(*a->cgroup_errors));
	a->cgroup_class = calloc(max_cgroups * ACCT_NR + 1, sizeof(*a->cgroup_class));
	a->retry = calloc(max_retry + 1, sizeof(*a->retry));
	a->retry_at_ns = calloc(max_retry + 1, sizeof(*a->retry_at_ns));
	if (!a->cgroup_moved || !a->cgroup_errors || !a->cgroup_class || !a->retry ||
	    !a->retry_at_ns) {
		account_free(a);
		return -ENOMEM;
	}
	r = acct_busy_new(a);
	if (r < 0) {
		account_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

void account_free(struct account *a)
{
	if (!a)
		return;
	free(a->cgroup_moved);
	free(a->cgroup_errors);
	free(a->cgroup_class);
	free(a->retry);
	free(a->retry_at_ns);
	free(a->busy);
	free(a);
}

static void sum_add(struct acct_sum *s, uint64_t pages, uint64_t bytes)
{
	s->pages += pages;
	s->bytes += bytes;
}

/* Queue @it, busy at @now_ns, for a retry at @at_ns (0: the delay of its
 * tries). */
static void queue_retry(struct account *a, const struct policy_intent *it, uint64_t now_ns,
			uint64_t at_ns)
{
	struct policy_intent *r;
	unsigned int tries = it->tries + 1u;

	if (tries >= a->params.busy_max_tries || a->nr_retry >= a->max_retry) {
		a->retries_dropped++;
		return;
	}
	r = &a->retry[a->nr_retry];
	*r = *it;
	r->tries = (uint8_t)tries;
	/* busy_delay, 2x, 4x ... */
	a->retry_at_ns[a->nr_retry] = at_ns ? at_ns :
					      now_ns + (a->params.busy_delay_ns << (tries - 1));
	a->nr_retry++;
}

static void nomem(struct account *a, int node, uint64_t now_ns)
{
	uint64_t b;

	if (node < 0 || node >= TOPO_MAX_NODES)
		return;
	/* Once per episode: pages of one call share one back-off step. */
	if (a->nomem_until_ns[node] > now_ns)
		return;
	b = a->nomem_backoff_ns[node];
	b = b ? b * 2 : a->params.nomem_backoff_ns;
	if (b > a->params.nomem_backoff_max_ns)
		b = a->params.nomem_backoff_max_ns;
	a->nomem_backoff_ns[node] = b;
	a->nomem_until_ns[node] = now_ns + b;
}

/* One page's status; the counters it touches. */
static void account_page(struct account *a, const struct topology *topo,
			 const struct policy_intent *it, int st, uint64_t now_ns,
			 struct acct_result *r)
{
	enum acct_class c = acct_classify(st, it->to_node);
	uint64_t np = it->nr_pages, nb = np * a->params.page_size;
	int kind = it->kind ? 1 : 0;

	a->class_pages[c] += np;
	r->class_pages[c] += np;
	if (it->cgroup >= 0 && (size_t)it->cgroup < a->max_cgroups)
		a->cgroup_class[it->cgroup * ACCT_NR + c] += np;
	if (st >= 0 || c == ACCT_SHARED || c == ACCT_GONE)
		acct_busy_forget(a, it->pid, it->addr, now_ns);
	if (st >= 0) {
		int idx = topo_node_index(topo, st), tier;

		if (c == ACCT_MOVED) {
			r->moved_pages += np;
			r->moved_bytes += nb;
		}
		if (st == it->from_node)
			return;	/* did not move */
		if (st < TOPO_MAX_NODES)
			sum_add(&a->node_in[st][kind], np, nb);
		if (it->from_node >= 0 && it->from_node < TOPO_MAX_NODES)
			sum_add(&a->node_out[it->from_node][kind], np, nb);
		tier = idx >= 0 ? topo->nodes[idx].tier : -1;
		if (tier >= 0 && tier < TOPO_MAX_TIERS)
			sum_add(&a->tier_in[tier][kind], np, nb);
		if (it->cgroup >= 0 && (size_t)it->cgroup < a->max_cgroups)
			sum_add(&a->cgroup_moved[it->cgroup * 2 + kind], np, nb);
		return;
	}
	if (c == ACCT_SHARED)
		return;	/* where it was asked to go, counted with its first move */
	if (it->cgroup >= 0 && (size_t)it->cgroup < a->max_cgroups)
		a->cgroup_errors[it->cgroup] += np;
	switch (c) {
	case ACCT_BUSY:
		queue_retry(a, it, now_ns, acct_busy_mark(a, it, now_ns));
		break;
	case ACCT_NOMEM:
		nomem(a, it->to_node, now_ns);
		break;
	case ACCT_DENIED:
		a->denied_pid = it->pid;
		a->denied_errno = -st;
		break;
	default:
		break;
	}
}

int account_batch(struct account *a, const struct topology *topo, const struct batch_plan *pl,
		  size_t k, const struct policy_intent *intents, uint64_t elapsed_ns,
		  uint64_t now_ns, bool dry_run, struct acct_result *ret)
{
	const struct batch *b = &pl->batches[k];
	struct acct_result r;

	memset(&r, 0, sizeof(r));
	for (size_t e = b->first; e < b->first + b->count; e++) {
		const struct policy_intent one = batch_entry_intent(pl, e, intents), *it = &one;
		int st = pl->status[e];

		if (dry_run) {
			int kind = it->kind ? 1 : 0;

			if (st >= 0 && st != it->to_node) {
				r.would_pages += it->nr_pages;
				sum_add(&a->would[kind], it->nr_pages,
					(uint64_t)it->nr_pages * a->params.page_size);
			} else if (st < 0) {
				a->class_pages[acct_classify(st, it->to_node)] += it->nr_pages;
				r.class_pages[acct_classify(st, it->to_node)] += it->nr_pages;
			}
			continue;
		}
		account_page(a, topo, it, st, now_ns, &r);
	}
	if (!dry_run) {
		/* A node that took pages again is out of its ENOMEM episode. */
		if (r.moved_pages && b->node >= 0 && b->node < TOPO_MAX_NODES &&
		    a->nomem_until_ns[b->node] <= now_ns)
			a->nomem_backoff_ns[b->node] = 0;
		a->moved_bytes += r.moved_bytes;
		a->move_ns += elapsed_ns;
		if (elapsed_ns) {
			r.bytes_per_s = (uint64_t)((unsigned __int128)r.moved_bytes * NSEC_PER_SEC /
						   elapsed_ns);
			a->last_bytes_per_s = r.bytes_per_s;
		}
	}
	if (ret)
		*ret = r;
	return 0;
}

void account_call_failed(struct account *a, const struct batch_plan *pl, size_t k,
			 const struct policy_intent *intents, int err, uint64_t now_ns,
			 struct acct_result *ret)
{
	const struct batch *b = &pl->batches[k];
	struct acct_result r;

	memset(&r, 0, sizeof(r));
	for (size_t e = b->first; e < b->first + b->count; e++) {
		const struct policy_intent one = batch_entry_intent(pl, e, intents);

		account_page(a, NULL, &one, err < 0 ? err : -EINVAL, now_ns, &r);
	}
	if (ret)
		*ret = r;
}

uint64_t account_blocked_mask(const struct account *a, const struct topology *topo,
			      uint64_t now_ns)
{
	uint64_t mask = 0;

	for (int i = 0; i < topo->nr_nodes && i < 64; i++) {
		int id = topo->nodes[i].id;

		if (id >= 0 && id < TOPO_MAX_NODES && a->nomem_until_ns[id] > now_ns)
			mask |= 1ull << i;
	}
	return mask;
}

size_t account_take_retries(struct account *a, uint64_t now_ns, struct policy_intent *out,
			    size_t max)
{
	size_t n = 0, keep = 0;

	for (size_t i = 0; i < a->nr_retry; i++) {
		if (n < max && a->retry_at_ns[i] <= now_ns) {
			out[n++] = a->retry[i];
			continue;
		}
		a->retry[keep] = a->retry[i];
		a->retry_at_ns[keep] = a->retry_at_ns[i];
		keep++;
	}
	a->nr_retry = keep;
	return n;
}

static void result_add(struct acct_result *sum, const struct acct_result *r)
{
	for (int c = 0; c < ACCT_NR; c++)
		sum->class_pages[c] += r->class_pages[c];
	sum->moved_pages += r->moved_pages;
	sum->moved_bytes += r->moved_bytes;
	sum->would_pages += r->would_pages;
	if (r->bytes_per_s)
		sum->bytes_per_s = r->bytes_per_s;
}

void account_plan(struct account *a, const struct topology *topo, const struct batch_plan *pl,
		  const struct policy_intent *intents, const struct acct_call *calls,
		  uint64_t now_ns, bool dry_run, struct acct_result *ret)
{
	struct acct_result sum, r;

	memset(&sum, 0, sizeof(sum));
	for (size_t k = 0; k < pl->nr_batches; k++) {
		if (calls[k].state == ACCT_CALL_SKIPPED)
			continue;
		if (calls[k].state == ACCT_CALL_FAILED)
			account_call_failed(a, pl, k, intents, calls[k].err, now_ns, &r);
		else
			account_batch(a, topo, pl, k, intents, calls[k].ns, now_ns, dry_run, &r);
		result_add(&sum, &r);
	}
	if (ret)
		*ret = sum;
}

uint64_t account_nomem_nodes(const struct account *a, uint64_t now_ns)
{
	uint64_t mask = 0;

	for (int id = 0; id < TOPO_MAX_NODES && id < 64; id++)
		if (a->nomem_until_ns[id] > now_ns)
			mask |= 1ull << id;
	return mask;
}
