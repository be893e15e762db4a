// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "migrate.h"

#define PF_EXITING 0x00000004	/* include/linux/sched.h */

/* The real ops' context: the root directory, "/" for NULL. */
static const char *root_of(void *ctx)
{
	return ctx ? (const char *)ctx : "/";
}

/*
 * Has @pid exited?  Gone from /proc, a zombie or dead, or past the point
 * of exit where its memory is let go (PF_EXITING in the stat flags).
 */
static bool pid_exited(const char *root, int pid)
{
	char id[16], proc[4096], buf[1024], state;
	unsigned long flags;
	const char *p;
	int r;

	snprintf(id, sizeof(id), "%d", pid);
	snprintf(proc, sizeof(proc), "%s/proc", strcmp(root, "/") ? root : "");
	r = fs_read_pid_stat(proc, id, buf, sizeof(buf), &p);
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
	if (r == -EINVAL && pid > 0 && count && pid_exited(root_of(ctx), pid))
		return -ESRCH;
	return (int)r;
}

static int real_query(void *ctx, int pid, unsigned long count, void **addrs, int *status)
{
	int r = real_move_pages(ctx, pid, count, addrs, NULL, status, 0);

	return r < 0 ? r : 0;
}

static uint64_t real_now_ns(void *ctx)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int real_node_free(void *ctx, int node, uint64_t *ret_bytes)
{
	return topo_node_free(root_of(ctx), node, ret_bytes);
}

const struct mig_ops mig_real_ops = {
	.move_pages = real_move_pages,
	.now_ns = real_now_ns,
	.node_free = real_node_free,
	.query = real_query,
};

int mig_init(struct migrator *m, const struct mig_ops *ops, void *ctx, bool dry_run,
	     uint64_t page_bytes)
{
	int r;

	memset(m, 0, sizeof(*m));
	m->ops = ops;
	m->ctx = ctx;
	m->dry_run = dry_run;
	m->page_bytes = page_bytes;
	/* Untouched until a batch needs it: no resident memory before. */
	m->where = calloc(MIG_LOOK_MAX, sizeof(*m->where));
	if (!m->where)
		return -ENOMEM;
	/* Refused only without CAP_SYS_NICE (kernel_move_pages()). */
	m->has_move_all = ops->move_pages(ctx, 0, 0, NULL, NULL, NULL, MPOL_MF_MOVE_ALL) == 0;
	r = ops->move_pages(ctx, 0, 0, NULL, NULL, NULL, MPOL_MF_PROMOTE);
	m->has_promote = r == 0;
	return r == 0 || r == -EINVAL ? 0 : r;
}

void mig_fini(struct migrator *m)
{
	free(m->where);
	m->where = NULL;
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

/* Is batch @k's node in -ENOMEM back-off?  Marked with @mark. */
static bool node_nomem(uint64_t *nodes, const struct batch *b, bool mark)
{
	if (b->node < 0 || b->node >= 64)
		return false;
	if (mark)
		*nodes |= 1ull << b->node;
	return *nodes & 1ull << b->node;
}

/* Did batch @k answer -ENOMEM for a page, or for the whole call? */
static bool said_nomem(const struct batch_plan *pl, size_t k, int r)
{
	const struct batch *b = &pl->batches[k];

	if (r == -ENOMEM)
		return true;
	for (size_t i = b->first; r >= 0 && i < b->first + b->count; i++)
		if (pl->status[i] == -ENOMEM)
			return true;
	return false;
}

/* A call that returned: its time into @ret's; *@timed once one is. */
static void time_call(struct mig_run_result *ret, uint64_t t0, uint64_t t1, uint64_t *first_t0,
		      bool *timed)
{
	uint64_t call_ns = t1 - t0;

	if (!*timed)
		*first_t0 = t0;
	if (!*timed || call_ns < ret->min_call_ns)
		ret->min_call_ns = call_ns;
	*timed = true;
	if (call_ns > ret->max_call_ns)
		ret->max_call_ns = call_ns;
	ret->elapsed_ns += call_ns;
	ret->span_ns = t1 - *first_t0;
}

/*
 * Which processes' batches moved pages to each node earlier in a plan: a
 * batch of another process to that node may list shared pages they moved
 * already.  By node id < 64.
 */
struct moved_by {
	uint64_t nodes;		/* a batch moved pages there */
	uint64_t several;	/* batches of more than one process did */
	int pid[64];		/* the one that did */
};

static bool may_be_moved(const struct moved_by *mb, const struct batch *b)
{
	uint64_t bit;

	if (b->node < 0 || b->node >= 64)
		return false;
	bit = 1ull << b->node;
	return (mb->nodes & bit) && ((mb->several & bit) || mb->pid[b->node] != b->pid);
}

static void note_moved(struct moved_by *mb, const struct batch_plan *pl, size_t k)
{
	const struct batch *b = &pl->batches[k];
	uint64_t bit;
	size_t i;

	if (b->node < 0 || b->node >= 64)
		return;
	for (i = b->first; i < b->first + b->count; i++)
		if (pl->status[i] == pl->nodes[i])
			break;
	if (i == b->first + b->count)
		return;
	bit = 1ull << b->node;
	if ((mb->nodes & bit) && mb->pid[b->node] != b->pid)
		mb->several |= bit;
	if (!(mb->nodes & bit))
		mb->pid[b->node] = b->pid;
	mb->nodes |= bit;
}

/*
 * Before batch @k: where its pages are (m->where).  True when it looked;
 * false when it could not (no query op, a batch larger than MIG_LOOK_MAX,
 * a query that failed), and the move counts every page as before.
 */
static bool look_before(struct migrator *m, const struct batch_plan *pl, size_t k)
{
	const struct batch *b = &pl->batches[k];

	return m->ops->query && b->count <= MIG_LOOK_MAX &&
	       m->ops->query(m->ctx, b->pid, b->count, pl->addrs + b->first, m->where) == 0;
}

/*
 * The kernel leaves a page's status unwritten when a plain move_pages(2)
 * call ends early: do_pages_move() stops at the first chunk whose migration
 * failed and returns the count not moved, without the statuses of that
 * chunk (many of whose pages did move) or of the pages after it.  Each call
 * starts with MIG_STATUS_UNSET everywhere; after it, ask where the pages
 * left so are: on the target is moved, elsewhere is busy (tried again
 * later); without an answer, busy.  MIG_STATUS_UNSET_THERE is an unset
 * page that the look before the call found on its target already
 * (mark_there()): found there after, it is ACCT_STATUS_SHARED.
 */
#define MIG_STATUS_UNSET INT_MIN
#define MIG_STATUS_UNSET_THERE (INT_MIN + 1)

static bool unset(int status)
{
	return status == MIG_STATUS_UNSET || status == MIG_STATUS_UNSET_THERE;
}

/*
 * After batch @k's move, from the look before it (m->where): a page that
 * was on its target before and is there now is marked ACCT_STATUS_SHARED,
 * not moved by this call; one whose status the call left unwritten,
 * MIG_STATUS_UNSET_THERE, for settle_unreported(), which takes m->where
 * over.
 */
static void mark_there(const struct migrator *m, const struct batch_plan *pl, size_t k)
{
	const struct batch *b = &pl->batches[k];
	int *status = pl->status + b->first;

	for (size_t i = 0; i < b->count; i++) {
		if (m->where[i] != pl->nodes[b->first + i])
			continue;
		if (status[i] == pl->nodes[b->first + i])
			status[i] = ACCT_STATUS_SHARED;
		else if (status[i] == MIG_STATUS_UNSET)
			status[i] = MIG_STATUS_UNSET_THERE;
	}
}

static void settle_unreported(struct migrator *m, const struct batch_plan *pl, size_t k)
{
	const struct batch *b = &pl->batches[k];
	int *status = pl->status + b->first;
	bool known;
	size_t i;

	for (i = 0; i < b->count; i++)
		if (unset(status[i]))
			break;
	if (i == b->count)
		return;
	known = m->ops->query && b->count <= MIG_LOOK_MAX &&
		m->ops->query(m->ctx, b->pid, b->count, pl->addrs + b->first, m->where) == 0;
	for (; i < b->count; i++) {
		int target = pl->nodes[b->first + i];

		if (!unset(status[i]))
			continue;
		if (known && m->where[i] == target)
			status[i] = status[i] == MIG_STATUS_UNSET_THERE ? ACCT_STATUS_SHARED : target;
		else
			status[i] = -EBUSY;
	}
}

int mig_run_plan(struct migrator *m, const struct batch_plan *pl, uint64_t nomem_nodes,
		 struct acct_call *calls, struct mig_run_result *ret)
{
	uint64_t start = m->ops->now_ns(m->ctx), first_t0 = 0;
	bool timed = false; /* a call counted in ret's call times */
	struct moved_by mb = { 0 };

	memset(ret, 0, sizeof(*ret));
	memset(calls, 0, pl->nr_batches * sizeof(*calls));
	for (size_t k = 0; k < pl->nr_batches; k++) {
		const struct batch *b = &pl->batches[k];
		void **addrs = pl->addrs + b->first;
		int *status = pl->status + b->first;
		uint64_t t0, t1;
		int flags = MPOL_MF_MOVE, r;
		bool looked = false;

		/* Its other batches are left for a later tick. */
		if (!m->dry_run && node_nomem(&nomem_nodes, b, false)) {
			ret->nomem_skipped_batches += mig_skip(pl, k, k + 1);
			continue;
		}
		if (b->promote && m->has_promote)
			flags |= MPOL_MF_PROMOTE;
		if (m->has_move_all)
			flags |= MPOL_MF_MOVE_ALL;
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
		if (!m->dry_run && may_be_moved(&mb, b)) {
			looked = look_before(m, pl, k);
			ret->looks += looked;
			t0 = m->ops->now_ns(m->ctx); /* the call's time, not the look's */
		}
		if (m->dry_run) {
			r = m->ops->move_pages(m->ctx, b->pid, b->count, addrs, NULL, status, 0);
		} else {
			for (size_t i = 0; i < b->count; i++)
				status[i] = MIG_STATUS_UNSET;
			r = m->ops->move_pages(m->ctx, b->pid, b->count, addrs,
					       pl->nodes + b->first, status, flags);
			if (r >= 0 && looked)
				mark_there(m, pl, k);
			if (r > 0)
				settle_unreported(m, pl, k);
		}
		t1 = m->ops->now_ns(m->ctx);
		ret->calls++;
		calls[k] = (struct acct_call){ .state = r < 0 ? ACCT_CALL_FAILED : ACCT_CALL_DONE,
					       .err = r < 0 ? r : 0, .ns = t1 - t0 };
		if (said_nomem(pl, k, r))
			node_nomem(&nomem_nodes, b, true);
		if (r < 0) {
			ret->failed_calls++;
			if (!ret->first_error)
				ret->first_error = r;
			continue;
		}
		if (m->dry_run)
			continue;
		time_call(ret, t0, t1, &first_t0, &timed);
		note_moved(&mb, pl, k);
	}
	return 0;
}
