// SPDX-License-Identifier: GPL-2.0-only
/* Migrator, then account, against a scripted fake move_pages. */
#include <errno.h>
#include <numaif.h>

#include "account.h"
#include "batch.h"
#include "candidates.h"
#include "fake_migrate.h"
#include "migrate.h"
#include "test.h"
#include "test_geom.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define PG 4096ull

static struct topology topo;
static struct policy_intent in[64];
static size_t nr;
/* The fixture of a migrator run: setup_run() after the intents are added. */
static struct acct_params ap;
static struct account *a;
static struct batcher *b;
static const struct batch_plan *pl;

static void setup_topo(void)
{
	memset(&topo, 0, sizeof(topo));
	topo.nr_nodes = 2;
	topo.nr_tiers = 2;
	for (int i = 0; i < 2; i++) {
		topo.nodes[i].id = i;
		topo.nodes[i].tier = i;
		topo.nodes[i].has_memory = true;
	}
}

static void add(int pid, uint64_t addr, uint32_t np, int from, int to, enum policy_kind kind, int cg)
{
	struct policy_intent *it = &in[nr++];

	memset(it, 0, sizeof(*it));
	it->pid = pid;
	it->addr = addr;
	it->nr_pages = np;
	it->from_node = from;
	it->to_node = to;
	it->cgroup = cg;
	it->kind = kind;
}

/* An account for @nr_cgroups cgroups (default parameters) and the plan of
 * in[0..nr). */
static void setup_run(int nr_cgroups)
{
	struct batch_params bp;

	acct_params_default(&ap, &test_geom);
	CHECK_EQ_INT(account_new(&ap, nr_cgroups, 8, &a), 0);
	batch_params_default(&bp, 0, &test_geom);
	CHECK_EQ_INT(batch_new(&bp, 64, &b), 0);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
}

/* The migrator, then the account, as the manager's migrate and account
 * steps run them. */
static int run_plan(struct migrator *m, struct account *acct, const struct batch_plan *p,
		    const struct policy_intent *intents, uint64_t now_ns,
		    struct mig_run_result *res)
{
	static struct acct_call calls[64];
	struct acct_result sum;
	int r = mig_run_plan(m, p, account_nomem_nodes(acct, now_ns), calls, res);

	if (r < 0)
		return r;
	account_plan(acct, &topo, p, intents, calls, now_ns, m->dry_run, &sum);
	res->moved_bytes = sum.moved_bytes;
	res->would_pages = sum.would_pages;
	return 0;
}

/* mig_init() again on a migrator of the test (zeroed before the first). */
static int init_mig(struct migrator *m, const struct mig_ops *ops, void *ctx, bool dry_run,
		    uint64_t page_bytes)
{
	mig_fini(m);
	return mig_init(m, ops, ctx, dry_run, page_bytes);
}

static void teardown_run(void)
{
	batch_free(b);
	account_free(a);
}

static void test_statuses(void)
{
	struct fake_mig f = { .probe_result = 0 };
	struct migrator m = { 0 };
	struct mig_run_result res;
	struct policy_intent retry[4];
	int promo[6] = { 0, -EBUSY, -ENOENT, 1, -EACCES, 0 };

	setup_topo();
	nr = 0;
	add(7, 0x1000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(7, 0x2000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(7, 0x3000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(7, 0x4000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(7, 0x5000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(7, 0x200000, 512, 1, 0, POLICY_PROMOTE, 0);
	add(7, 0x9000, 1, 0, 1, POLICY_DEMOTE, 0);
	add(7, 0xa000, 1, 0, 1, POLICY_DEMOTE, 0);
	/* Step 0: the demotion batch; step 1: the promotion batch. */
	f.nr_steps = 2;
	f.steps[0].nr_status = 2;
	f.steps[0].status[0] = -ENOMEM;
	f.steps[0].status[1] = 1;
	f.steps[0].took_ns = 1 * MS;
	f.steps[1].nr_status = 6;
	memcpy(f.steps[1].status, promo, sizeof(promo));
	f.steps[1].took_ns = 2 * MS;

	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), 0);
	CHECK(m.has_promote);
	setup_run(2);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 100 * SEC, &res), 0);

	CHECK_EQ_INT(f.nr_calls, 2);
	/* With CAP_SYS_NICE (the probe): shared pages move too. */
	CHECK(m.has_move_all);
	CHECK_EQ_INT(f.calls[0].flags, MPOL_MF_MOVE | MPOL_MF_MOVE_ALL);
	CHECK_EQ_INT(f.calls[1].flags, MPOL_MF_MOVE | MPOL_MF_MOVE_ALL | MPOL_MF_PROMOTE);
	CHECK_EQ_INT(f.calls[1].count, 6);
	CHECK_EQ_U64(f.calls[1].addrs[5], 0x200000);
	CHECK_EQ_INT(f.calls[1].nodes[5], 0);
	CHECK_EQ_INT(res.calls, 2);
	CHECK_EQ_INT(res.failed_calls, 0);
	CHECK_EQ_U64(res.moved_bytes, 514 * PG);
	CHECK_EQ_U64(res.elapsed_ns, 3 * MS);

	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 514);
	CHECK_EQ_U64(a->class_pages[ACCT_ELSEWHERE], 1);
	CHECK_EQ_U64(a->class_pages[ACCT_BUSY], 1);
	CHECK_EQ_U64(a->class_pages[ACCT_GONE], 1);
	CHECK_EQ_U64(a->class_pages[ACCT_NOMEM], 1);
	CHECK_EQ_U64(a->class_pages[ACCT_DENIED], 1);
	/* Where pages landed: 0x4000 stayed on node 1 and counts nowhere. */
	CHECK_EQ_U64(a->node_in[0][POLICY_PROMOTE].pages, 513);
	CHECK_EQ_U64(a->node_in[0][POLICY_PROMOTE].bytes, 513 * PG);
	CHECK_EQ_U64(a->node_out[1][POLICY_PROMOTE].pages, 513);
	CHECK_EQ_U64(a->node_in[1][POLICY_DEMOTE].pages, 1);
	CHECK_EQ_U64(a->tier_in[0][POLICY_PROMOTE].pages, 513);
	CHECK_EQ_U64(a->cgroup_moved[0 * 2 + POLICY_PROMOTE].pages, 513);
	CHECK_EQ_U64(a->cgroup_moved[0 * 2 + POLICY_DEMOTE].pages, 1);
	CHECK_EQ_U64(a->cgroup_errors[0], 4);
	CHECK_EQ_U64(a->cgroup_class[0 * ACCT_NR + ACCT_MOVED], 514);
	CHECK_EQ_U64(a->cgroup_class[0 * ACCT_NR + ACCT_DENIED], 1);
	CHECK_EQ_U64(a->cgroup_class[1 * ACCT_NR + ACCT_MOVED], 0);
	CHECK_EQ_INT(a->denied_pid, 7);
	CHECK_EQ_INT(a->denied_errno, EACCES);
	/* 513 pages in 2 ms. */
	CHECK_EQ_U64(a->last_bytes_per_s, 513 * PG * 500);
	CHECK_EQ_U64(a->moved_bytes, 514 * PG);
	CHECK_EQ_U64(a->move_ns, 3 * MS);

	/* ENOMEM on node 1: blocked (index 1) for 5 s. */
	CHECK_EQ_U64(account_blocked_mask(a, &topo, 100 * SEC), 0x2);
	CHECK_EQ_U64(account_blocked_mask(a, &topo, 105 * SEC - 1), 0x2);
	CHECK_EQ_U64(account_blocked_mask(a, &topo, 105 * SEC), 0);

	/* EBUSY: retried after 1 s, with its try counted. */
	CHECK_EQ_INT(account_take_retries(a, 100 * SEC, retry, 4), 0);
	CHECK_EQ_INT(account_take_retries(a, 101 * SEC, retry, 4), 1);
	CHECK_EQ_U64(retry[0].addr, 0x2000);
	CHECK_EQ_INT(retry[0].tries, 1);
	CHECK_EQ_INT(a->nr_retry, 0);

	/* Without the kernel's promotion entry point: plain MPOL_MF_MOVE. */
	f.probe_result = -EINVAL;
	f.nr_calls = 0;
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), 0);
	CHECK(!m.has_promote);
	/* (After node 1's back-off: a batch to a node in back-off is skipped.) */
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 106 * SEC, &res), 0);
	CHECK_EQ_INT(f.nr_calls, 2);
	CHECK_EQ_INT(f.calls[1].flags, MPOL_MF_MOVE | MPOL_MF_MOVE_ALL);
	/* Without CAP_SYS_NICE: MPOL_MF_MOVE alone. */
	f.move_all_probe = -EPERM;
	f.nr_calls = 0;
	f.next_step = f.nr_steps;
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), 0);
	CHECK(!m.has_move_all);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 112 * SEC, &res), 0);
	CHECK_EQ_INT(f.calls[1].flags, MPOL_MF_MOVE);
	/* A probe failing otherwise is returned. */
	f.probe_result = -EPERM;
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), -EPERM);

	teardown_run();
	mig_fini(&m);
}

/* A plan that outlasts the migrator's budget: no batch starts after it. */
/* Three one-page promotions from node 1 to node 0, of three processes:
 * three batches. */
static void three_promotions(void)
{
	setup_topo();
	nr = 0;
	for (int pid = 7; pid <= 9; pid++)
		add(pid, 0x1000, 1, 1, 0, POLICY_PROMOTE, 0);
}

static int fake_query(void *ctx, int pid, unsigned long count, void **addrs, int *status)
{
	return fake_mig_ops.move_pages(ctx, pid, count, addrs, NULL, status, 0);
}

/*
 * A plain call that ends early (vanilla do_pages_move() returns the pages not
 * moved and leaves the statuses from the failed chunk on unwritten): the
 * migrator asks where those pages are, and counts them moved only where they
 * are on their target; without a query they are busy, never moved.
 */
static void test_unreported_statuses(void)
{
	/* case 0: pages found elsewhere; 1: on their target; 2: no query */
	for (int c = 0; c < 3; c++) {
		struct fake_mig f = { .probe_result = -EINVAL, .query_node = c == 1 ? 0 : 1 };
		struct mig_ops ops = fake_mig_ops;
		struct migrator m = { 0 };
		struct mig_run_result res;

		if (c < 2)
			ops.query = fake_query;
		setup_topo();
		nr = 0;
		for (int i = 0; i < 4; i++)
			add(7, 0x1000 + (uint64_t)i * 0x1000, 1, 1, 0, POLICY_PROMOTE, 0);
		f.nr_steps = 1;
		f.steps[0].nr_status = 4;
		f.steps[0].status[0] = 0;
		f.steps[0].call_ret = 3;
		f.steps[0].written = 1;
		CHECK_EQ_INT(init_mig(&m, &ops, &f, false, 4096), 0);
		CHECK(!m.has_promote);
		setup_run(1);
		CHECK_EQ_INT(run_plan(&m, a, pl, in, 100 * SEC, &res), 0);
		/* The move, then (with a query op) a query of the same pages */
		CHECK_EQ_INT(f.nr_calls, c < 2 ? 2 : 1);
		if (c < 2) {
			CHECK_EQ_INT(f.calls[1].nodes[0], -2);
			CHECK_EQ_INT(f.calls[1].count, 4);
		}
		CHECK_EQ_U64(a->class_pages[ACCT_MOVED], c == 1 ? 4 : 1);
		CHECK_EQ_U64(a->class_pages[ACCT_BUSY], c == 1 ? 0 : 3);
		CHECK_EQ_U64(res.moved_bytes, (c == 1 ? 4 : 1) * PG);
		teardown_run();
		mig_fini(&m);
	}
}

static void test_budget(void)
{
	struct fake_mig f = { .probe_result = 0 };
	struct migrator m = { 0 };
	struct mig_run_result res;

	three_promotions();
	f.nr_steps = 3;
	for (int i = 0; i < 3; i++) {
		f.steps[i].nr_status = 1;
		f.steps[i].status[0] = 0;
		f.steps[i].took_ns = SEC;
	}
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), 0);
	m.budget_ns = 3 * SEC / 2;
	setup_run(2);
	CHECK_EQ_INT(pl->nr_batches, 3);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 100 * SEC, &res), 0);
	/* Started at 0 s and 1 s; at 2 s the budget of 1.5 s is spent. */
	CHECK_EQ_INT(f.nr_calls, 2);
	CHECK_EQ_INT(res.calls, 2);
	CHECK_EQ_INT(res.skipped_batches, 1);
	CHECK_EQ_U64(res.moved_bytes, 2 * PG);
	CHECK_EQ_INT(pl->status[pl->batches[2].first], -ECANCELED);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 2);
	teardown_run();
	mig_fini(&m);
}

/*
 * The call times tierd -v shows: three calls of 0.1, 1.9 and 1 s are
 * 0.1 s at the shortest, 1.9 s at the longest, 3 s from the first's start
 * to the last's end; a dry run times nothing.
 */
static void test_call_times(void)
{
	static const uint64_t took[3] = { SEC / 10, 19 * SEC / 10, SEC };
	struct fake_mig f;
	struct migrator m = { 0 };
	struct mig_run_result res;

	for (int dry = 0; dry <= 1; dry++) {
		three_promotions();
		memset(&f, 0, sizeof(f));
		f.nr_steps = 3;
		for (int i = 0; i < 3; i++) {
			f.steps[i].nr_status = 1;
			f.steps[i].status[0] = 0;
			f.steps[i].took_ns = took[i];
		}
		CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, dry, 4096), 0);
		setup_run(2);
		CHECK_EQ_INT(run_plan(&m, a, pl, in, 100 * SEC, &res), 0);
		CHECK_EQ_INT(res.calls, 3);
		CHECK_EQ_U64(res.min_call_ns, dry ? 0 : SEC / 10);
		CHECK_EQ_U64(res.max_call_ns, dry ? 0 : 19 * SEC / 10);
		CHECK_EQ_U64(res.span_ns, dry ? 0 : 3 * SEC);
		CHECK_EQ_U64(res.elapsed_ns, dry ? 0 : 3 * SEC);
		teardown_run();
	}
	mig_fini(&m);
}

/*
 * Each batch checks its node's free memory just before it starts: with
 * node 0 two pages above its floor, the first two one-page batches land
 * (the fake takes a page of free memory for each) and the third, which
 * would go below the floor, waits (-ECANCELED, room_skipped_batches), not
 * counted as a budget skip.  A free count that cannot be read, no floor,
 * or a dry run: everything starts.
 */
static void test_room_floor(void)
{
	struct fake_mig f = { .probe_result = 0, .page_bytes = PG };
	struct migrator m = { 0 };
	struct mig_run_result res;

	three_promotions();
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), 0);
	m.page_bytes = PG;
	m.floor_bytes[0] = 100 * PG;
	f.free[0] = 102 * PG;
	setup_run(2);
	CHECK_EQ_INT(pl->nr_batches, 3);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 100 * SEC, &res), 0);
	CHECK_EQ_INT(f.nr_calls, 2);
	CHECK_EQ_INT(f.free_reads, 3);
	CHECK_EQ_INT(res.room_skipped_batches, 1);
	CHECK_EQ_INT(res.skipped_batches, 0);
	CHECK_EQ_U64(res.moved_bytes, 2 * PG);
	CHECK_EQ_INT(pl->status[pl->batches[2].first], -ECANCELED);
	CHECK_EQ_U64(f.free[0], 100 * PG);

	/* Unreadable: as planned. */
	f.free_err = -EIO;
	f.nr_calls = 0;
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 101 * SEC, &res), 0);
	CHECK_EQ_INT(f.nr_calls, 3);
	CHECK_EQ_INT(res.room_skipped_batches, 0);
	/* No floor for the node; a dry run. */
	f.free_err = 0;
	f.free[0] = 0;
	f.nr_calls = 0;
	m.floor_bytes[0] = 0;
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 102 * SEC, &res), 0);
	CHECK_EQ_INT(res.calls, 3);
	m.floor_bytes[0] = 100 * PG;
	m.dry_run = true;
	f.nr_calls = 0;
	CHECK_EQ_INT(run_plan(&m, a, pl, in, 103 * SEC, &res), 0);
	CHECK_EQ_INT(res.calls, 3);
	CHECK_EQ_INT(res.room_skipped_batches, 0);
	teardown_run();
	mig_fini(&m);
}

static void test_busy_retries_and_nomem_backoff(void)
{
	struct policy_intent retry[4];
	struct batch_plan fake;
	uint64_t t;

	setup_topo();
	nr = 0;
	add(3, 0x1000, 1, 1, 0, POLICY_PROMOTE, -1);
	setup_run(1);	/* retries 1 s, 3 tries; ENOMEM back-off 5 s .. 300 s */
	fake = *pl;

	/* Busy three times: queued after 1 s, then 2 s, then dropped. */
	fake.status[0] = -EBUSY;
	account_batch(a, &topo, &fake, 0, in, MS, 0, false, NULL);
	CHECK_EQ_INT(account_take_retries(a, 1 * SEC, retry, 4), 1);
	CHECK_EQ_INT(retry[0].tries, 1);
	account_batch(a, &topo, &fake, 0, retry, MS, 1 * SEC, false, NULL);
	CHECK_EQ_INT(account_take_retries(a, 3 * SEC - 1, retry + 1, 3), 0);
	CHECK_EQ_INT(account_take_retries(a, 3 * SEC, retry + 1, 3), 1);
	CHECK_EQ_INT(retry[1].tries, 2);
	account_batch(a, &topo, &fake, 0, retry + 1, MS, 3 * SEC, false, NULL);
	CHECK_EQ_INT(a->nr_retry, 0);
	CHECK_EQ_U64(a->retries_dropped, 1);
	CHECK_EQ_U64(a->class_pages[ACCT_BUSY], 3);

	/* ENOMEM back-off doubles while it recurs, resets after a success. */
	fake.status[0] = -ENOMEM;
	t = 10 * SEC;
	account_batch(a, &topo, &fake, 0, in, MS, t, false, NULL);
	CHECK_EQ_U64(a->nomem_until_ns[0], t + 5 * SEC);
	/* A second page of the same episode does not double it. */
	account_batch(a, &topo, &fake, 0, in, MS, t + SEC, false, NULL);
	CHECK_EQ_U64(a->nomem_until_ns[0], t + 5 * SEC);
	account_batch(a, &topo, &fake, 0, in, MS, t + 6 * SEC, false, NULL);
	CHECK_EQ_U64(a->nomem_until_ns[0], t + 16 * SEC);
	account_batch(a, &topo, &fake, 0, in, MS, t + 20 * SEC, false, NULL);
	CHECK_EQ_U64(a->nomem_until_ns[0], t + 40 * SEC);
	fake.status[0] = 0;
	account_batch(a, &topo, &fake, 0, in, MS, t + 41 * SEC, false, NULL);
	fake.status[0] = -ENOMEM;
	account_batch(a, &topo, &fake, 0, in, MS, t + 50 * SEC, false, NULL);
	CHECK_EQ_U64(a->nomem_until_ns[0], t + 55 * SEC);
	/* Capped at the maximum. */
	for (int i = 0; i < 10; i++)
		account_batch(a, &topo, &fake, 0, in, MS, a->nomem_until_ns[0], false, NULL);
	CHECK_EQ_U64(a->nomem_backoff_ns[0], 300 * SEC);
	teardown_run();
}

/* One candidate of @np pages at @addr of pid 3 on @node, held back or not. */
static bool held(uint64_t addr, uint32_t np, int node, uint16_t flags, uint64_t now_ns)
{
	struct policy_page c = { .addr = addr, .pid = 3, .nr_pages = np, .node = node,
				 .flags = flags };
	uint64_t pages = 0;
	size_t n = account_hold_back(a, &c, 1, now_ns, &pages);

	CHECK_EQ_U64(pages, n ? 0 : np);
	return !n;
}

/*
 * Busy back-off: a page busy again each time it is retried is left out of
 * the candidates for 1, 2, 4 ... 64 s, and no longer; one that moves, is
 * gone or is found on another node is proposed at once.  Demotions alike.
 */
static void test_busy_backoff(void)
{
	static const uint64_t wait_s[] = { 1, 2, 4, 8, 16, 32, 64, 64 };
	struct policy_intent retry[4];
	struct batch_plan fake;
	uint64_t t = 10 * SEC;

	setup_topo();
	nr = 0;
	add(3, 0x1000, 1, 1, 0, POLICY_PROMOTE, -1);
	add(3, 0x200000, 512, 0, 1, POLICY_DEMOTE, -1);
	setup_run(1);
	fake = *pl;
	CHECK_EQ_INT(pl->nr_batches, 2);
	CHECK_EQ_U64((uint64_t)(uintptr_t)pl->addrs[pl->batches[1].first], 0x1000);
	CHECK_EQ_U64(pl->batches[1].first, 1);
	CHECK(!held(0x1000, 1, 1, 0, t));

	fake.status[0] = -EBUSY; /* the THP's demotion */
	fake.status[1] = -EBUSY;
	for (size_t i = 0; i < sizeof(wait_s) / sizeof(wait_s[0]); i++) {
		account_batch(a, &topo, &fake, 1, in, MS, t, false, NULL);
		CHECK_EQ_U64(account_busy_pages(a, t), 1);
		CHECK(held(0x1000, 1, 1, 0, t + wait_s[i] * SEC - 1));
		CHECK(!held(0x1000, 1, 1, 0, t + wait_s[i] * SEC));
		t += wait_s[i] * SEC;
	}
	/* The retry queue tried it at the back-off's first two times. */
	CHECK_EQ_INT(account_take_retries(a, 11 * SEC - 1, retry, 4), 0);
	CHECK_EQ_INT(account_take_retries(a, 11 * SEC, retry, 4), 1);

	/* Busy before its time (with a range's pages): the same retry time. */
	account_batch(a, &topo, &fake, 1, in, MS, t, false, NULL);
	account_batch(a, &topo, &fake, 1, in, MS, t + SEC, false, NULL);
	CHECK(held(0x1000, 1, 1, 0, t + 64 * SEC - 1));
	CHECK(!held(0x1000, 1, 1, 0, t + 64 * SEC));
	/* A range of base pages is no single page: proposed. */
	CHECK(!held(0x1000, 1, 1, POLICY_F_PAGES, t + SEC));

	/* Found on another node: it moved, proposed at once, forgotten. */
	CHECK(!held(0x1000, 1, 0, 0, t + 2 * SEC));
	CHECK(!held(0x1000, 1, 1, 0, t + 2 * SEC));
	CHECK_EQ_U64(account_busy_pages(a, t + 2 * SEC), 0);

	/* Busy again: 1 s, 2 s ...; moved at a retry: forgotten. */
	t += 100 * SEC;
	account_batch(a, &topo, &fake, 1, in, MS, t, false, NULL);
	account_batch(a, &topo, &fake, 1, in, MS, t + SEC, false, NULL);
	CHECK(held(0x1000, 1, 1, 0, t + 3 * SEC - 1));
	fake.status[1] = 0;
	account_batch(a, &topo, &fake, 1, in, MS, t + 3 * SEC, false, NULL);
	CHECK(!held(0x1000, 1, 1, 0, t + 3 * SEC));
	/* Busy again later: starts over at 1 s; gone: forgotten. */
	fake.status[1] = -EBUSY;
	account_batch(a, &topo, &fake, 1, in, MS, t + 10 * SEC, false, NULL);
	CHECK(held(0x1000, 1, 1, 0, t + 11 * SEC - 1));
	CHECK(!held(0x1000, 1, 1, 0, t + 11 * SEC));
	fake.status[1] = -ENOENT;
	account_batch(a, &topo, &fake, 1, in, MS, t + 11 * SEC, false, NULL);
	CHECK_EQ_U64(account_busy_pages(a, t + 11 * SEC), 0);

	/* Not busy again within 64 s of its retry time: starts over. */
	fake.status[1] = -EBUSY;
	account_batch(a, &topo, &fake, 1, in, MS, t + 20 * SEC, false, NULL);
	account_batch(a, &topo, &fake, 1, in, MS, t + 21 * SEC, false, NULL);
	account_batch(a, &topo, &fake, 1, in, MS, t + 23 * SEC + 64 * SEC, false, NULL);
	CHECK(!held(0x1000, 1, 1, 0, t + 88 * SEC));

	/* A THP's demotion backs off the same way, its 512 pages counted. */
	account_batch(a, &topo, &fake, 0, in, MS, t + 200 * SEC, false, NULL);
	CHECK_EQ_U64(account_busy_pages(a, t + 200 * SEC), 512);
	CHECK(held(0x200000, 512, 0, 0, t + 201 * SEC - 1));
	CHECK(!held(0x200000, 512, 0, 0, t + 201 * SEC));
	teardown_run();

	/* The memory's size: a power of two of whole sets, or none. */
	acct_params_default(&ap, &test_geom);
	ap.busy_slots = 4;
	CHECK_EQ_INT(account_new(&ap, 1, 8, &a), -EINVAL);
	ap.busy_slots = 24;
	CHECK_EQ_INT(account_new(&ap, 1, 8, &a), -EINVAL);
	ap.busy_slots = 0;
	CHECK_EQ_INT(account_new(&ap, 1, 8, &a), 0);
	CHECK(!held(0x1000, 1, 1, 0, 0));
	account_free(a);
}

/*
 * A range of base pages (POLICY_F_PAGES) is accounted page by page: what
 * moved counts, and a busy page is retried alone, not its 511 neighbours.
 */
static void test_range_pages(void)
{
	struct policy_intent retry[4];
	struct batch_params bp;
	struct batch_plan fake;

	setup_topo();
	nr = 0;
	add(3, 0x40000000, 512, 1, 0, POLICY_PROMOTE, -1);
	in[0].flags = POLICY_F_PAGES;
	acct_params_default(&ap, &test_geom);
	CHECK_EQ_INT(account_new(&ap, 1, 8, &a), 0);
	batch_params_default(&bp, 0, &test_geom);
	CHECK_EQ_INT(batch_new(&bp, 1024, &b), 0);
	CHECK_EQ_INT(batch_build(b, in, nr, &pl), 0);
	CHECK_EQ_INT(pl->nr_entries, 512);
	fake = *pl;
	for (size_t e = 0; e < 512; e++)
		fake.status[e] = 0;
	fake.status[7] = -EBUSY;
	account_batch(a, &topo, &fake, 0, in, MS, 0, false, NULL);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 511);
	CHECK_EQ_U64(a->class_pages[ACCT_BUSY], 1);
	CHECK_EQ_U64(a->node_in[0][POLICY_PROMOTE].pages, 511);
	CHECK_EQ_U64(a->moved_bytes, 511 * PG);
	CHECK_EQ_INT(account_take_retries(a, 1 * SEC, retry, 4), 1);
	CHECK_EQ_U64(retry[0].addr, 0x40000000 + 7 * PG);
	CHECK_EQ_INT(retry[0].nr_pages, 1);
	CHECK_EQ_INT(retry[0].flags, 0);
	teardown_run();
}

static void test_call_failed_and_dry_run(void)
{
	struct fake_mig f = { .probe_result = -EINVAL, .query_node = 1 };
	struct migrator m = { 0 };
	struct mig_run_result res;

	setup_topo();
	nr = 0;
	add(11, 0x1000, 1, 1, 0, POLICY_PROMOTE, -1);
	add(11, 0x200000, 512, 1, 0, POLICY_PROMOTE, -1);
	add(12, 0x1000, 1, 1, 0, POLICY_PROMOTE, -1);
	setup_run(0);

	/* pid 11 exited: the call fails with ESRCH; pid 12's call works. */
	f.nr_steps = 1;
	f.steps[0].call_err = -ESRCH;
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), 0);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_INT(res.calls, 2);
	CHECK_EQ_INT(res.failed_calls, 1);
	CHECK_EQ_INT(res.first_error, -ESRCH);
	CHECK_EQ_U64(a->class_pages[ACCT_GONE], 513);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 1);
	CHECK_EQ_U64(res.moved_bytes, PG);

	/* Node 0 full: pid 11's call fails with ENOMEM; pid 12's batch to
	 * the same node is not tried in this plan (it would only fail). */
	account_free(a);
	CHECK_EQ_INT(account_new(&ap, 0, 8, &a), 0);
	f = (struct fake_mig){ .probe_result = -EINVAL, .nr_steps = 1 };
	f.steps[0].call_err = -ENOMEM;
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, false, 4096), 0);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_INT(f.nr_calls, 1);
	CHECK_EQ_INT(res.calls, 1);
	CHECK_EQ_INT(res.nomem_skipped_batches, 1);
	CHECK_EQ_U64(a->class_pages[ACCT_NOMEM], 513);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 0);
	CHECK_EQ_U64(a->nomem_until_ns[0], SEC + 5 * SEC);

	/* Dry run: queries only; counts what would have moved. */
	account_free(a);
	CHECK_EQ_INT(account_new(&ap, 0, 8, &a), 0);
	f = (struct fake_mig){ .probe_result = -EINVAL, .query_node = 1 };
	CHECK_EQ_INT(init_mig(&m, &fake_mig_ops, &f, true, 4096), 0);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_INT(f.nr_calls, 2);
	CHECK_EQ_INT(f.calls[0].nodes[0], -2);
	CHECK_EQ_INT(f.calls[0].flags, 0);
	CHECK_EQ_U64(res.would_pages, 514);
	CHECK_EQ_U64(res.moved_bytes, 0);
	CHECK_EQ_U64(a->would[POLICY_PROMOTE].pages, 514);
	CHECK_EQ_U64(a->would[POLICY_PROMOTE].bytes, 514 * PG);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 0);
	CHECK_EQ_U64(a->moved_bytes, 0);
	/* A page already on its target would not move. */
	f.query_node = 0;
	f.nr_calls = 0;
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_U64(res.would_pages, 0);

	CHECK_EQ_INT(acct_classify(-EAGAIN, 0), ACCT_BUSY);
	CHECK_EQ_INT(acct_classify(-EFAULT, 0), ACCT_GONE);
	CHECK_EQ_INT(acct_classify(-EPERM, 0), ACCT_DENIED);
	CHECK_EQ_INT(acct_classify(-EIO, 0), ACCT_OTHER);
	CHECK_EQ_INT(acct_classify(2, 0), ACCT_ELSEWHERE);
	CHECK_EQ_STR(acct_class_name(ACCT_NOMEM), "nomem");
	CHECK_EQ_INT(acct_classify(ACCT_STATUS_SHARED, 0), ACCT_SHARED);
	CHECK_EQ_STR(acct_class_name(ACCT_SHARED), "shared");
	teardown_run();
	mig_fini(&m);
}

/*
 * A kernel where page 0x1000 of pids 7 and 8 is one shared page (the same
 * address after a fork) and every other page is private; all start on
 * node 1.  A move lands every page where asked.
 */
static struct {
	int shared_node;
	int private_node[2][4]; /* pid 7, 8: pages 0x2000.. */
	int moves, queries;
	/* pid 8's moves end early, as a plain call on a vanilla kernel: no
	 * status written, its page 0x3000 left where it is. */
	bool end_early;
} sk;

static int *sk_page(int pid, uint64_t addr)
{
	if (addr == 0x1000)
		return &sk.shared_node;
	return &sk.private_node[pid - 7][addr / 0x1000 - 2];
}

static int sk_move_pages(void *ctx, int pid, unsigned long count, void **addrs,
			 const int *nodes, int *status, int flags)
{
	if (count == 0 && !addrs)
		return flags & MPOL_MF_PROMOTE ? -EINVAL : 0;
	sk.moves += !!nodes;
	sk.queries += !nodes;
	for (unsigned long i = 0; i < count; i++) {
		int *node = sk_page(pid, (uint64_t)(uintptr_t)addrs[i]);

		if (nodes && sk.end_early && pid == 8) {
			if (addrs[i] != (void *)0x3000)
				*node = nodes[i];
			continue;
		}
		if (nodes)
			*node = nodes[i];
		status[i] = *node;
	}
	return nodes && sk.end_early && pid == 8 ? 1 : 0;
}

static int sk_query(void *ctx, int pid, unsigned long count, void **addrs, int *status)
{
	return sk_move_pages(ctx, pid, count, addrs, NULL, status, 0);
}

/* Every page on node 1, nothing asked yet. */
static void sk_reset(void)
{
	memset(&sk, 0, sizeof(sk));
	sk.shared_node = 1;
	for (int i = 0; i < 4; i++)
		sk.private_node[0][i] = sk.private_node[1][i] = 1;
}

static uint64_t sk_now_ns(void *ctx)
{
	return 0;
}

/* A shared page in the plan of each process that maps it is counted once,
 * where it moved: the batch that moves it.  Looks happen only before a
 * batch that may list pages another process's batch moved. */
static void test_shared_counted_once(void)
{
	const struct mig_ops ops = { .move_pages = sk_move_pages, .now_ns = sk_now_ns,
				     .query = sk_query };
	const struct mig_ops blind = { .move_pages = sk_move_pages, .now_ns = sk_now_ns };
	struct mig_run_result res;
	struct migrator m = { 0 };

	setup_topo();
	nr = 0;
	add(7, 0x1000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(7, 0x2000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(8, 0x1000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(8, 0x2000, 1, 1, 0, POLICY_PROMOTE, 0);
	add(8, 0x3000, 1, 1, 0, POLICY_PROMOTE, 0);
	setup_run(1);

	sk_reset();
	CHECK_EQ_INT(init_mig(&m, &ops, NULL, false, 4096), 0);
	CHECK(m.has_move_all);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_INT(sk.moves, 2);
	CHECK_EQ_INT(sk.queries, 1); /* before pid 8's batch only */
	CHECK_EQ_INT(res.looks, 1);
	CHECK_EQ_INT(pl->status[2], ACCT_STATUS_SHARED);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 4);
	CHECK_EQ_U64(a->class_pages[ACCT_SHARED], 1);
	CHECK_EQ_U64(a->class_pages[ACCT_DENIED], 0);
	CHECK_EQ_U64(res.moved_bytes, 4 * PG);
	CHECK_EQ_U64(a->node_in[0][POLICY_PROMOTE].pages, 4);
	CHECK_EQ_U64(a->tier_in[0][POLICY_PROMOTE].pages, 4);
	CHECK_EQ_U64(a->cgroup_moved[0 * 2 + POLICY_PROMOTE].pages, 4);
	CHECK_EQ_U64(a->cgroup_errors[0], 0);

	/* pid 8's call ends early with no status written: the query after it
	 * finds the shared page on node 0, where the look before found it
	 * (shared), 0x2000 moved, 0x3000 still on node 1 (busy). */
	teardown_run();
	setup_run(1);
	sk_reset();
	sk.end_early = true;
	CHECK_EQ_INT(init_mig(&m, &ops, NULL, false, 4096), 0);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_INT(sk.queries, 2); /* before pid 8's batch, and after it */
	CHECK_EQ_INT(pl->status[2], ACCT_STATUS_SHARED);
	CHECK_EQ_INT(pl->status[3], 0);
	CHECK_EQ_INT(pl->status[4], -EBUSY);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 3);
	CHECK_EQ_U64(a->class_pages[ACCT_SHARED], 1);
	CHECK_EQ_U64(a->class_pages[ACCT_BUSY], 1);

	/* Without a way to look, as before: the shared page counts twice. */
	teardown_run();
	setup_run(1);
	sk_reset();
	CHECK_EQ_INT(init_mig(&m, &blind, NULL, false, 4096), 0);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_INT(sk.queries, 0);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 5);

	/* One process's batches look at nothing: pid 7 alone. */
	teardown_run();
	nr = 2;
	setup_run(1);
	sk_reset();
	CHECK_EQ_INT(init_mig(&m, &ops, NULL, false, 4096), 0);
	CHECK_EQ_INT(run_plan(&m, a, pl, in, SEC, &res), 0);
	CHECK_EQ_INT(sk.queries, 0);
	CHECK_EQ_U64(a->class_pages[ACCT_MOVED], 2);
	teardown_run();
	mig_fini(&m);
}

/*
 * The pages the kernel refused: left out while they stay on the node they
 * were refused from, until they move or their retry time passes, which
 * doubles when a retry is refused again.
 */
static void test_denied_memory(void)
{
	static struct cand_ranges r;
	const uint64_t base = 0x40000000, t0 = 100 * SEC;

	cand_ranges_init(&r, &test_geom);
	cand_denied_mark(&r, 7, base + 3 * PG, 1, 1, -EACCES, t0);
	CHECK(cand_denied_skip(&r, 7, base + 3 * PG, 1, t0));
	CHECK(cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + 59 * SEC));
	/* Its neighbours, the same page of another process: proposed. */
	CHECK(!cand_denied_skip(&r, 7, base + 4 * PG, 1, t0));
	CHECK(!cand_denied_skip(&r, 8, base + 3 * PG, 1, t0));
	/* Wholly on node 1, the range is no single candidate. */
	CHECK(cand_denied_whole(&r, 7, base + 100 * PG, 1, t0));
	CHECK(!cand_denied_whole(&r, 8, base, 1, t0));
	/* A minute on (and at most 67 ms, cand_time()'s unit): proposed again. */
	CHECK(!cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + 60 * SEC + SEC / 10));
	CHECK(!cand_denied_whole(&r, 7, base, 1, t0 + 60 * SEC + SEC / 10));
	/* Refused again: two minutes, then four. */
	cand_denied_mark(&r, 7, base + 3 * PG, 1, 1, -EACCES, t0 + 61 * SEC);
	CHECK(cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + 61 * SEC + 119 * SEC));
	CHECK(!cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + 61 * SEC + 120 * SEC + SEC / 10));
	cand_denied_mark(&r, 7, base + 3 * PG, 1, 1, -EACCES, t0 + 200 * SEC);
	CHECK(cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + 200 * SEC + 239 * SEC));
	CHECK(!cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + 200 * SEC + 240 * SEC + SEC / 10));
	/* The back-off stops at 32 minutes. */
	for (int i = 0; i < 8; i++)
		cand_denied_mark(&r, 7, base + 3 * PG, 1, 1, -EACCES, t0 + (1000 + i * 4000) * SEC);
	CHECK(cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + (29000 + 1919) * SEC));
	CHECK(!cand_denied_skip(&r, 7, base + 3 * PG, 1, t0 + (29000 + 1920) * SEC + SEC / 10));

	/* Found on another node: something changed, its mark goes; a range
	 * found wholly on another node loses them all. */
	cand_ranges_init(&r, &test_geom);
	cand_denied_mark(&r, 7, base + 5 * PG, 1, 1, -EPERM, t0);
	cand_denied_mark(&r, 7, base + 6 * PG, 1, 1, -EPERM, t0);
	CHECK(!cand_denied_skip(&r, 7, base + 5 * PG, 0, t0 + SEC));
	CHECK(!cand_denied_skip(&r, 7, base + 5 * PG, 1, t0 + 2 * SEC));
	CHECK(cand_denied_skip(&r, 7, base + 6 * PG, 1, t0 + 2 * SEC));
	CHECK(!cand_denied_whole(&r, 7, base, 0, t0 + 2 * SEC));
	CHECK(!cand_denied_skip(&r, 7, base + 6 * PG, 1, t0 + 2 * SEC));
	CHECK(!cand_denied_whole(&r, 7, base, 1, t0 + 2 * SEC));

	/* A THP: all its 512 pages; a refusal from another node starts over. */
	cand_denied_mark(&r, 9, base, 512, 1, -EACCES, t0);
	CHECK(cand_denied_skip(&r, 9, base, 1, t0));
	CHECK(cand_denied_skip(&r, 9, base + 511 * PG, 1, t0));
	cand_denied_mark(&r, 9, base + 7 * PG, 1, 0, -EACCES, t0);
	CHECK(!cand_denied_skip(&r, 9, base, 1, t0));
	CHECK(cand_denied_skip(&r, 9, base + 7 * PG, 0, t0));
}

int main(void)
{
	RUN(test_statuses);
	RUN(test_unreported_statuses);
	RUN(test_budget);
	RUN(test_call_times);
	RUN(test_room_floor);
	RUN(test_busy_retries_and_nomem_backoff);
	RUN(test_busy_backoff);
	RUN(test_range_pages);
	RUN(test_call_failed_and_dry_run);
	RUN(test_shared_counted_once);
	RUN(test_denied_memory);
	return TEST_EXIT();
}
