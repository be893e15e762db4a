// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "migrate.h"

#define PF_EXITING 0x00000004	/* include/linux/sched.h */

/*
 * Has @pid exited?  Gone from /proc, a zombie or dead, or past the point
 * of exit where its memory is let go (PF_EXITING in the stat flags).
 */
static bool pid_exited(int pid)
{
	char id[16], buf[1024], state;
	unsigned long flags;
	const char *p;
	int r;

	snprintf(id, sizeof(id), "%d", pid);
	r = fs_read_pid_stat("/proc", id, buf, sizeof(buf), &p);
	if (r < 0)
		return r == -ENOENT || r == -ESRCH;
	if (sscanf(p, "%c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return false;
	return state == 'Z' || state == 'X' || (flags & PF_EXITING);
}

static int real_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			   const int *nodes, int *status, int flags)
{
	long r = numa_move_pages(pid, count, addrs, nodes, status, flags);

	if (r >= 0)
		return (int)r;
	r = -errno;
	/* A process that exited but is not reaped yet has no mm, and the
	 * kernel answers EINVAL (find_mm_struct()): for tierd it is gone,
	 * as with ESRCH once it is reaped. */
	if (r == -EINVAL && pid > 0 && count && pid_exited(pid))
		return -ESRCH;
	return (int)r;
}

static uint64_t real_now_ns(void *ctx)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int real_node_free(void *ctx, int node, uint64_t *ret_bytes)
{
	return topo_node_free("/", node, ret_bytes);
}

const struct mig_ops mig_real_ops = {
	.move_pages = real_move_pages,
	.now_ns = real_now_ns,
	.node_free = real_node_free,
};

int mig_init(struct migrator *m, const struct mig_ops *ops, void *ctx, bool dry_run)
{
	int r;

	memset(m, 0, sizeof(*m));
	m->ops = ops;
	m->ctx = ctx;
	m->dry_run = dry_run;
	m->page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	r = ops->move_pages(ctx, 0, 0, NULL, NULL, NULL, MPOL_MF_PROMOTE);
	m->has_promote = r == 0;
	return r == 0 || r == -EINVAL ? 0 : r;
}

int mig_query(struct migrator *m, int pid, size_t count, void **addrs, int *status)
{
	int r = m->ops->move_pages(m->ctx, pid, count, addrs, NULL, status, 0);

	return r < 0 ? r : 0;
}

/*
 * Would batch @k of @pl leave its target node less free memory than its
 * floor?  The plan was made from the free memory at the tick's start; its
 * batches take seconds to copy on a slow machine, and the node's other
 * users allocate meanwhile (on a CPU's node first, down to its low
 * watermark).  A batch that goes below the floor has the kernel allocate
 * its pages through direct reclaim on that node, page after page: in the
 * lab, with node 0 filled to its high watermark (tests/lab/fault-enomem),
 * tierd ran for more than 30 s without answering tierctl.  A node whose
 * free memory cannot be read is taken as planned.
 */
static bool room_short(const struct migrator *m, const struct batch_plan *pl, size_t k)
{
	const struct batch *b = &pl->batches[k];
	uint64_t bytes = b->nr_pages * m->page_bytes, free_b;

	if (!m->ops->node_free || b->node < 0 || b->node >= TOPO_MAX_NODES ||
	    !m->floor_bytes[b->node])
		return false;
	if (m->ops->node_free(m->ctx, b->node, &free_b) < 0)
		return false;
	return free_b < m->floor_bytes[b->node] + bytes;
}

/*
 * Batches [@from, @to) of @pl (@from < @to) are not started in this plan:
 * their pages, and their heat, stay for a later tick.  Their status entries
 * become -ECANCELED, a status no node has, which says they did not move (the
 * batches tile the plan's arrays in order, batch.h).  Returns @to - @from.
 */
static size_t mig_skip(const struct batch_plan *pl, size_t from, size_t to)
{
	const struct batch *last = &pl->batches[to - 1];

	for (size_t i = pl->batches[from].first; i < last->first + last->count; i++)
		pl->status[i] = -ECANCELED;
	return to - from;
}

int mig_run_plan(struct migrator *m, struct account *a, const struct topology *topo,
		 const struct batch_plan *pl, const struct policy_intent *intents, uint64_t now_ns,
		 struct mig_run_result *ret)
{
	uint64_t start = m->ops->now_ns(m->ctx), first_t0 = 0;
	bool timed = false; /* a call counted in ret's call times */

	memset(ret, 0, sizeof(*ret));
	for (size_t k = 0; k < pl->nr_batches; k++) {
		const struct batch *b = &pl->batches[k];
		void **addrs = pl->addrs + b->first;
		int *status = pl->status + b->first;
		struct acct_result res;
		uint64_t t0, t1;
		int flags = MPOL_MF_MOVE, r;

		/* A node that said ENOMEM earlier in this plan is in back-off:
		 * its other batches would only fail again, each after the
		 * kernel's direct reclaim.  They are left for a later tick. */
		if (!m->dry_run && b->node >= 0 && b->node < TOPO_MAX_NODES &&
		    a->nomem_until_ns[b->node] > now_ns) {
			ret->nomem_skipped_batches += mig_skip(pl, k, k + 1);
			continue;
		}
		if (b->promote && m->has_promote)
			flags |= MPOL_MF_PROMOTE;
		t0 = m->ops->now_ns(m->ctx);
		if (k && m->budget_ns && t0 - start >= m->budget_ns) {
			/* The time budget is spent: the rest waits. */
			ret->skipped_batches = mig_skip(pl, k, pl->nr_batches);
			break;
		}
		if (!m->dry_run && room_short(m, pl, k)) {
			ret->room_skipped_batches += mig_skip(pl, k, k + 1);
			continue;
		}
		if (m->dry_run)
			r = m->ops->move_pages(m->ctx, b->pid, b->count, addrs, NULL, status, 0);
		else
			r = m->ops->move_pages(m->ctx, b->pid, b->count, addrs,
					       pl->nodes + b->first, status, flags);
		t1 = m->ops->now_ns(m->ctx);
		ret->calls++;
		if (r < 0) {
			ret->failed_calls++;
			if (!ret->first_error)
				ret->first_error = r;
			account_call_failed(a, pl, k, intents, r, now_ns, &res);
			continue;
		}
		account_batch(a, topo, pl, k, intents, t1 - t0, now_ns, m->dry_run, &res);
		ret->moved_bytes += res.moved_bytes;
		ret->would_pages += res.would_pages;
		if (!m->dry_run) {
			uint64_t call_ns = t1 - t0;

			if (!timed)
				first_t0 = t0;
			if (!timed || call_ns < ret->min_call_ns)
				ret->min_call_ns = call_ns;
			if (call_ns > ret->max_call_ns)
				ret->max_call_ns = call_ns;
			timed = true;
			ret->elapsed_ns += call_ns;
			ret->span_ns = t1 - first_t0;
		}
	}
	return 0;
}
