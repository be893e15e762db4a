// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <numaif.h>

#include "fake_migrate.h"

static int fake_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			   const int *nodes, int *status, int flags)
{
	struct fake_mig *f = ctx;
	struct fake_mig_step *s;
	struct fake_mig_call *c;

	if (count == 0 && !addrs)
		return flags & MPOL_MF_MOVE_ALL ? f->move_all_probe : f->probe_result;
	if (f->nr_calls >= FAKE_MIG_STEPS || count > FAKE_MIG_PAGES)
		return -E2BIG;
	c = &f->calls[f->nr_calls++];
	c->pid = pid;
	c->count = count;
	c->flags = flags;
	for (unsigned long i = 0; i < count; i++) {
		c->addrs[i] = (uint64_t)(uintptr_t)addrs[i];
		c->nodes[i] = nodes ? nodes[i] : -2;
	}
	if (f->next_step >= f->nr_steps) {
		for (unsigned long i = 0; i < count; i++) {
			status[i] = nodes ? nodes[i] : f->query_node;
			if (nodes && status[i] >= 0 && status[i] < 2)
				f->free[status[i]] -= f->page_bytes;
		}
		return 0;
	}
	s = &f->steps[f->next_step++];
	f->clock_ns += s->took_ns;
	if (s->call_err)
		return s->call_err;
	for (unsigned long i = 0; i < (s->call_ret > 0 ? (unsigned long)s->written : count); i++) {
		status[i] = s->nr_status ? s->status[i] : nodes ? nodes[i] : f->query_node;
		if (nodes && status[i] == nodes[i] && status[i] >= 0 && status[i] < 2)
			f->free[status[i]] -= f->page_bytes;
	}
	return s->call_ret;
}

static int fake_node_free(void *ctx, int node, uint64_t *ret_bytes)
{
	struct fake_mig *f = ctx;

	f->free_reads++;
	if (f->free_err)
		return f->free_err;
	if (node < 0 || node >= 2)
		return -ENOENT;
	*ret_bytes = f->free[node];
	return 0;
}

static uint64_t fake_now_ns(void *ctx)
{
	struct fake_mig *f = ctx;

	return f->clock_ns;
}

const struct mig_ops fake_mig_ops = {
	.move_pages = fake_move_pages,
	.now_ns = fake_now_ns,
	.node_free = fake_node_free,
};
