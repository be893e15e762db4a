/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Accounting of move_pages(2) results, and what they mean for later ticks.
 *
 * The status array is the truth: a page counts where it landed, per node,
 * per tier, per cgroup, per errno class.  -EBUSY (and -EAGAIN) pages back
 * off and are queued for a retry when their back-off ends, up to a number
 * of tries; -ENOENT, -EFAULT and -ESRCH pages are dropped (the page or the
 * process is gone); -ENOMEM stops moves to that node for a doubling back-off;
 * -EACCES and -EPERM (a cpuset, a missing capability, a shared page the
 * kernel will not move) are counted and the last offender kept for the
 * daemon to report; the daemon remembers the pages (cand_denied_mark()) so
 * that they are not proposed again until something changes.  A page that
 * an earlier batch of the plan moved through another process that maps it
 * (ACCT_STATUS_SHARED) is counted apart, not as moved a second time.
 *
 * A busy page backs off: it is left out of the candidates
 * (account_hold_back()) for a time that doubles while it stays busy
 * (account_busy.c has the why and the numbers).
 *
 * Pure: times come in; arrays are sized in account_new().
 */
#ifndef TIERD_CORE_ACCOUNT_H
#define TIERD_CORE_ACCOUNT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "policy.h"
#include "topology.h"

enum acct_class {
	ACCT_MOVED,		/* on the node asked for */
	ACCT_ELSEWHERE,		/* status >= 0 but another node */
	ACCT_BUSY,		/* -EBUSY, -EAGAIN: retried later */
	ACCT_GONE,		/* -ENOENT, -EFAULT, -ESRCH: dropped */
	ACCT_NOMEM,		/* -ENOMEM: target backs off */
	ACCT_DENIED,		/* -EACCES, -EPERM: reported */
	ACCT_OTHER,		/* anything else (-EINVAL, -EIO, ...) */
	ACCT_SHARED,		/* ACCT_STATUS_SHARED: moved already, not an error */
	ACCT_NR,
};

/*
 * The status sys/migrate gives a page that was on its target before its
 * call: a shared page that an earlier batch of the plan moved through
 * another process that maps it.  The kernel never reports -EEXIST in the
 * status array (do_pages_move() turns it into -EFAULT).
 */
#define ACCT_STATUS_SHARED (-EEXIST)

/* The class of one move_pages status for a page asked to go to @target. */
enum acct_class acct_classify(int status, int target);
const char *acct_class_name(enum acct_class c);

struct acct_params {
	uint32_t page_size;		/* bytes of a base page */
	uint64_t busy_delay_ns;		/* first retry delay; doubles per try */
	uint64_t busy_backoff_max_ns;	/* the longest a busy page is left out */
	uint32_t busy_max_tries;	/* then the retry queue drops the page */
	uint32_t busy_slots;		/* busy pages remembered: 0, or a power of
					 * two >= ACCT_BUSY_WAYS */
	uint64_t nomem_backoff_ns;	/* first back-off; doubles while it recurs */
	uint64_t nomem_backoff_max_ns;
};

/* Defaults for pages of @g. */
void acct_params_default(struct acct_params *p, const struct page_geom *g);

struct acct_sum {
	uint64_t pages;
	uint64_t bytes;
};

#define ACCT_BUSY_WAYS 8

/* A page the kernel reported busy: left out of the candidates until
 * until_ns while it is on node. */
struct acct_busy {
	uint64_t addr;
	uint64_t until_ns;	/* 0 = free slot */
	int32_t pid;
	int16_t node;		/* node id it was busy on */
	uint8_t tries;		/* busy again when retried, in a row */
	uint8_t order;		/* log2 of its base pages: 0, a THP's PMD order */
};

/* Direction index for the [2] arrays: enum policy_kind. */
struct account {
	struct acct_params params;
	/* Pages that changed node, where they landed / where they left. */
	struct acct_sum node_in[TOPO_MAX_NODES][2];	/* by node id < 64 */
	struct acct_sum node_out[TOPO_MAX_NODES][2];
	struct acct_sum tier_in[TOPO_MAX_TIERS][2];
	struct acct_sum *cgroup_moved;	/* [max_cgroups * 2] */
	uint64_t *cgroup_errors;	/* [max_cgroups] pages not moved */
	uint64_t *cgroup_class;		/* [max_cgroups * ACCT_NR] pages per class */
	size_t max_cgroups;
	uint64_t class_pages[ACCT_NR];
	uint64_t retries_dropped;	/* still busy after busy_max_tries */
	/* Dry run: what would have moved. */
	struct acct_sum would[2];
	/* -ENOMEM back-off, by node id < 64. */
	uint64_t nomem_until_ns[TOPO_MAX_NODES];
	uint64_t nomem_backoff_ns[TOPO_MAX_NODES];
	/* The last -EACCES/-EPERM: for the daemon's report. */
	int denied_pid;
	int denied_errno;
	/* Throughput: bytes that reached their target and the time the calls
	 * took (real moves only). */
	uint64_t moved_bytes;
	uint64_t move_ns;
	uint64_t last_bytes_per_s;
	/* Retry queue. */
	struct policy_intent *retry;
	uint64_t *retry_at_ns;
	size_t nr_retry;
	size_t max_retry;
	/* Busy back-off: busy_slots pages, sets of ACCT_BUSY_WAYS. */
	struct acct_busy *busy;
	size_t busy_sets;
};

/* One batch's outcome. */
struct acct_result {
	uint64_t class_pages[ACCT_NR];
	uint64_t moved_pages;		/* status == target */
	uint64_t moved_bytes;
	uint64_t bytes_per_s;		/* moved_bytes over the call's time; 0 for a dry run */
	uint64_t would_pages;		/* dry run: not on the target yet */
};

/* 0, -EINVAL (page_size 0, busy_slots not a power of two >= ACCT_BUSY_WAYS),
 * -ENOMEM. */
int account_new(const struct acct_params *params, size_t max_cgroups, size_t max_retry,
		struct account **ret);
void account_free(struct account *a);

/*
 * Account batch @k of @pl, whose status array move_pages filled (or, for a
 * dry run, a node query: the page's current node).  @intents is what the
 * plan was built from; @elapsed_ns is how long the call took.  Fills
 * @ret (may be NULL).  Always 0.
 */
int account_batch(struct account *a, const struct topology *topo, const struct batch_plan *pl,
		  size_t k, const struct policy_intent *intents, uint64_t elapsed_ns,
		  uint64_t now_ns, bool dry_run, struct acct_result *ret);

/*
 * The whole call failed with @err (negative errno, e.g. -ESRCH when the
 * process exited, -EPERM without CAP_SYS_NICE, -ENOMEM): every page of the
 * batch is accounted as if its status were @err.
 */
void account_call_failed(struct account *a, const struct batch_plan *pl, size_t k,
			 const struct policy_intent *intents, int err, uint64_t now_ns,
			 struct acct_result *ret);

/* What the migrator did with one batch of a plan (sys/migrate.c fills an
 * array of them, one per batch, for account_plan()). */
enum acct_call_state {
	ACCT_CALL_SKIPPED, /* not started: its pages wait for a later tick */
	ACCT_CALL_DONE, /* move_pages returned; the plan's status[] says the rest */
	ACCT_CALL_FAILED, /* the whole call failed with err */
};

struct acct_call {
	uint8_t state; /* enum acct_call_state */
	int err; /* negative errno of a failed call */
	uint64_t ns; /* how long the call took */
};

/*
 * Account every batch of @pl from what the migrator reports of it in
 * @calls (account_batch(), account_call_failed(); skipped batches are not
 * accounted).  @ret (may be NULL): the sums of the batches' results.
 */
void account_plan(struct account *a, const struct topology *topo, const struct batch_plan *pl,
		  const struct policy_intent *intents, const struct acct_call *calls,
		  uint64_t now_ns, bool dry_run, struct acct_result *ret);

/* Node ids (bit i = node id i) in -ENOMEM back-off at @now_ns: the
 * migrator starts no batch to them. */
uint64_t account_nomem_nodes(const struct account *a, uint64_t now_ns);

/* Node indexes (bit i = topo->nodes[i]) that take no pages at @now_ns;
 * policy_input.blocked_nodes. */
uint64_t account_blocked_mask(const struct account *a, const struct topology *topo,
			      uint64_t now_ns);

/*
 * Move retries that are due at @now_ns into @out (at most @max, oldest
 * first); they leave the queue.  Append them to the next tick's intents
 * (their tries field carries the count).  Returns how many.
 */
size_t account_take_retries(struct account *a, uint64_t now_ns, struct policy_intent *out,
			    size_t max);

/*
 * Leave out of the @n candidates @cand, in place and in their order, the
 * pages in busy back-off at @now_ns: a page or THP the kernel reported busy
 * on the node it is on now, before its retry time.  One found on another
 * node is forgotten (it moved) and kept.  Ranges of base pages
 * (POLICY_F_PAGES) are kept.  Returns how many candidates remain; the base
 * pages left out are added to @ret_pages (may be NULL).
 */
size_t account_hold_back(struct account *a, struct policy_page *cand, size_t n,
			 uint64_t now_ns, uint64_t *ret_pages);

/* Base pages in busy back-off at @now_ns: busy, and before their retry time. */
uint64_t account_busy_pages(const struct account *a, uint64_t now_ns);

#endif
