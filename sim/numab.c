// SPDX-License-Identifier: GPL-2.0-only
/*
 * NUMA balancing in memory-tiering mode (kernel.numa_balancing = 2), after
 * kernel/sched/fair.c, mm/memory.c and mm/vmscan.c of 6.12.  Every rule
 * names the function and the default it follows.
 *
 * Scanning, per tenant (a task):
 *  - the first scan comes sysctl_numa_balancing_scan_delay (1000 ms) in
 *    (task_numa_work()'s numa_next_scan), then one every task_scan_min():
 *    max(1000 / (MAX_SCAN_WINDOW 2560 / scan_size 256) = 100 ms,
 *    scan_period_min 1000 ms / task_nr_scan_windows()), the windows being
 *    RSS / 256 MB (task_scan_start() without a NUMA group);
 *  - the period doubles once a pass, up to task_scan_max() (scan_period_max
 *    60000 ms / the windows): the pass's first fault that promotes runs
 *    task_numa_placement() (a new mm->numa_scan_seq), whose
 *    update_task_scan_period() finds no local and no shared fault and
 *    scans slower (period x 2, numa_next_scan = now + period).  In tiering
 *    mode every recorded fault is remote (change_prot_numa() skips top-tier
 *    pages, so no fault is local) and private (numa_migrate_check() gives
 *    a slow-tier folio's fault last_cpupid -1, which task_numa_fault()
 *    counts as private), and only promoted faults are recorded
 *    (task_numa_fault() returns early for a fault left on the slow node);
 *  - a scan arms up to sysctl_numa_balancing_scan_size (256 MB) of
 *    slow-tier pages within 8x that of address space (task_numa_work():
 *    pages, virtpages), stamping each folio's access time
 *    (folio_xchg_access_time() in change_pte_range()); a folio still
 *    armed from an earlier pass is skipped and keeps its stamp
 *    (change_pte_range(): pte_protnone());
 *  - after the end of the address space it starts again at 0.
 * Faults and promotion (should_numa_migrate_memory()):
 *  - an armed folio faults at its first access; the hint-fault latency is
 *    the fault time less the scan time (numa_hint_fault_latency());
 *  - while the fast node has free pages above WMARK_PROMO plus
 *    max(1 GiB, node / 16) (pgdat_free_space_enough()), every fault
 *    promotes and the threshold resets;
 *  - otherwise the fault promotes only when latency < the threshold,
 *    sysctl_numa_balancing_hot_threshold (1000 ms) adjusted every
 *    scan_period_max (60 s) by numa_promotion_adjust_threshold(): one of 16
 *    steps of 2 x 1000 ms down when candidates exceeded 110 % of the rate
 *    limit's worth, up when under 90 %, within [125 ms, 2000 ms];
 *  - and when this second's candidates stay under
 *    sysctl_numa_balancing_promote_rate_limit (65536 MB/s)
 *    (numa_promotion_rate_limit());
 *  - the move is migrate_misplaced_folio(): one folio per fault, modelled
 *    as fault_ns + the machine's per-folio and per-byte cost.  The
 *    faulting thread waits for it (do_numa_page()): a promotion the
 *    engine could not fit in an interval's copy time is asked for again
 *    in the next while the range is accessed, not lost with its fault;
 *    a range no longer accessed keeps its armed folios and stamp for a
 *    later fault (the threads moved on before touching them).
 * Demotion (kswapd):
 *  - watermarks from __setup_per_zone_wmarks(): gap = node x
 *    watermark_scale_factor (10) / 10000; LOW = gap, HIGH = 2 gap, PROMO =
 *    3 gap (min_free_kbytes left out: small against these nodes);
 *  - a promotion that would take the fast node under LOW fails and wakes
 *    kswapd, which in tiering mode balances to WMARK_PROMO
 *    (pgdat_balanced()), demoting the least recently accessed pages
 *    (the LRU, modelled by each range's last accessed interval) in batches.
 * Departures: a range (2 MiB) is promoted or demoted whole, on its first
 * folio's fault; the fault time is drawn from an exponential wait at the
 * range's per-folio access rate; faults that do not promote are not
 * billed.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numab.h"
#include "source.h"

#define NUMAB_SCAN_DELAY_MS 1000	/* sysctl_numa_balancing_scan_delay */
#define NUMAB_SCAN_PERIOD_MIN_MS 1000	/* sysctl_numa_balancing_scan_period_min */
#define NUMAB_SCAN_PERIOD_MAX_MS 60000	/* sysctl_numa_balancing_scan_period_max */
#define NUMAB_SCAN_SIZE_MB 256		/* sysctl_numa_balancing_scan_size */
#define NUMAB_MAX_SCAN_WINDOW 2560	/* MB/s, fair.c */
#define NUMAB_HOT_THRESHOLD_MS 1000	/* sysctl_numa_balancing_hot_threshold */
#define NUMAB_RATE_LIMIT_MB 65536	/* sysctl_numa_balancing_promote_rate_limit */
#define NUMAB_ADJUST_STEPS 16		/* NUMA_MIGRATION_ADJUST_STEPS */
#define NUMAB_WMARK_SCALE 10		/* watermark_scale_factor */
#define NUMAB_FAULT_NS 1000		/* a hint fault's own cost (assumption) */
#define NUMAB_UNARMED UINT64_MAX

/* task_nr_scan_windows() */
static uint64_t nr_scan_windows(uint64_t rss_bytes)
{
	uint64_t scan = NUMAB_SCAN_SIZE_MB << 20;
	uint64_t nr_windows = (rss_bytes + scan - 1) / scan;

	return nr_windows ? nr_windows : 1;
}

uint64_t numab_task_scan_min_ms(uint64_t rss_bytes)
{
	uint64_t windows = NUMAB_MAX_SCAN_WINDOW / NUMAB_SCAN_SIZE_MB;
	uint64_t floor_ms = 1000 / windows;
	uint64_t ms = NUMAB_SCAN_PERIOD_MIN_MS / nr_scan_windows(rss_bytes);

	return ms > floor_ms ? ms : floor_ms;
}

uint64_t numab_task_scan_max_ms(uint64_t rss_bytes)
{
	uint64_t smin = numab_task_scan_min_ms(rss_bytes);
	uint64_t smax = NUMAB_SCAN_PERIOD_MAX_MS / nr_scan_windows(rss_bytes);

	return smax > smin ? smax : smin;
}

void numab_adjust_threshold(struct numab_th *t, uint64_t now_ms,
			    uint64_t nr_cand, uint64_t rate_limit_pages)
{
	uint64_t ref_th = NUMAB_HOT_THRESHOLD_MS, unit = ref_th * 2 / NUMAB_ADJUST_STEPS;
	uint64_t ref_cand, diff, th;

	if (now_ms - t->start_ms <= NUMAB_SCAN_PERIOD_MAX_MS)
		return;
	t->start_ms = now_ms;
	ref_cand = rate_limit_pages * NUMAB_SCAN_PERIOD_MAX_MS / 1000;
	diff = nr_cand - t->nr_cand;
	th = t->th_ms ? t->th_ms : ref_th;
	if (diff > ref_cand * 11 / 10)
		th = th - unit > unit ? th - unit : unit;
	else if (diff < ref_cand * 9 / 10)
		th = th + unit < ref_th * 2 ? th + unit : ref_th * 2;
	t->nr_cand = nr_cand;
	t->th_ms = th;
}

struct numab_task {
	uint32_t first, count, cursor;
	uint32_t seq, placed_seq;	/* mm->numa_scan_seq, p->numa_scan_seq */
	uint64_t period_ms, max_period_ms, next_scan_ms;
};

struct numab {
	const struct sim_setup *s;
	int fast, slow;
	uint64_t *armed_ms;		/* [nr_ranges], NUMAB_UNARMED */
	uint32_t *last_access;		/* [nr_ranges], interval + 1; 0 never */
	uint32_t *order, *promos;	/* [nr_ranges] scratch */
	uint8_t *pending;		/* [nr_ranges] promotion asked, not done */
	struct numab_task *tasks;
	struct numab_th th;
	uint64_t nr_cand, rl_start_ms, rl_nr_cand, rate_limit_pages;
	uint64_t folios, range_pages, low, promo, enough;
	uint64_t rng;
};

static void numab_destroy(void *st)
{
	struct numab *nb = st;

	free(nb->armed_ms);
	free(nb->last_access);
	free(nb->order);
	free(nb->promos);
	free(nb->pending);
	free(nb->tasks);
	free(nb);
}

static void init_tasks(struct numab *nb, const struct sim_setup *s)
{
	for (uint32_t r = 0; r < s->nr_ranges; r++) {
		struct numab_task *t = &nb->tasks[s->range_tenant[r]];

		if (!t->count)
			t->first = r;
		t->count++;
	}
	for (uint32_t i = 0; i < s->nr_tenants; i++) {
		uint64_t rss = (uint64_t)nb->tasks[i].count * s->range_bytes;

		nb->tasks[i].period_ms = numab_task_scan_min_ms(rss);
		nb->tasks[i].max_period_ms = numab_task_scan_max_ms(rss);
		nb->tasks[i].next_scan_ms = NUMAB_SCAN_DELAY_MS;
	}
}

static int numab_init(void **ret, const struct sim_setup *s)
{
	const struct sim_machine *m = s->m;
	struct numab *nb = calloc(1, sizeof(*nb));
	uint64_t cap, folio;

	if (!nb)
		return -ENOMEM;
	nb->s = s;
	nb->fast = sim_machine_fast_node(m);
	nb->slow = -1;
	for (int i = 0; i < m->nr_nodes; i++)
		if (m->nodes[i].tier > 0 && nb->slow < 0)
			nb->slow = i;
	nb->armed_ms = malloc(s->nr_ranges * sizeof(*nb->armed_ms));
	nb->last_access = calloc(s->nr_ranges, sizeof(*nb->last_access));
	nb->order = malloc(s->nr_ranges * sizeof(*nb->order));
	nb->promos = malloc(s->nr_ranges * sizeof(*nb->promos));
	nb->pending = calloc(s->nr_ranges, 1);
	nb->tasks = calloc(s->nr_tenants, sizeof(*nb->tasks));
	if (!nb->armed_ms || !nb->last_access || !nb->order || !nb->promos || !nb->pending ||
	    !nb->tasks || nb->slow < 0) {
		int r = nb->slow < 0 ? -EINVAL : -ENOMEM;

		numab_destroy(nb);
		return r;
	}
	for (uint32_t r = 0; r < s->nr_ranges; r++)
		nb->armed_ms[r] = NUMAB_UNARMED;
	init_tasks(nb, s);
	folio = m->thp_bytes && m->thp_bytes <= s->range_bytes ? m->thp_bytes :
								  m->base_page_bytes;
	nb->folios = s->range_bytes / folio;
	nb->range_pages = s->range_bytes / m->base_page_bytes;
	nb->rate_limit_pages = ((uint64_t)NUMAB_RATE_LIMIT_MB << 20) / m->base_page_bytes;
	cap = m->nodes[nb->fast].capacity_bytes;
	nb->low = cap * NUMAB_WMARK_SCALE / 10000;
	nb->promo = 3 * nb->low;
	nb->enough = cap / 16 > (1ull << 30) ? cap / 16 : 1ull << 30;
	nb->rng = s->seed ^ 0x6e756d6162ull;
	*ret = nb;
	return 0;
}

/* One task_numa_work() pass at @ts_ms. */
static void scan(struct numab *nb, const struct sim_view *v,
		 struct numab_task *t, uint64_t ts_ms)
{
	uint64_t pages = ((uint64_t)NUMAB_SCAN_SIZE_MB << 20) / nb->s->range_bytes;
	uint64_t virt = 8 * (pages ? pages : 1);

	pages = pages ? pages : 1;
	while (pages && virt) {
		uint32_t r = t->first + t->cursor;

		/* Only PTEs it changes count against the window (nr_pte_updates). */
		if (v->s->m->nodes[v->node[r]].tier > 0 &&
		    nb->armed_ms[r] == NUMAB_UNARMED) {
			nb->armed_ms[r] = ts_ms;
			pages--;
		}
		virt--;
		if (++t->cursor == t->count) {
			t->cursor = 0;
			t->seq++;	/* reset_ptenuma_scan() */
			break;
		}
	}
}

/* should_numa_migrate_memory() for a fault at @ft_ms after @latency_ms. */
static bool should_promote(struct numab *nb, uint64_t free_fast,
			   uint64_t ft_ms, uint64_t latency_ms)
{
	uint64_t th;

	if (free_fast >= nb->promo + nb->enough) {
		nb->th.th_ms = 0;
		return true;
	}
	numab_adjust_threshold(&nb->th, ft_ms, nb->nr_cand, nb->rate_limit_pages);
	th = nb->th.th_ms ? nb->th.th_ms : NUMAB_HOT_THRESHOLD_MS;
	if (latency_ms >= th)
		return false;
	/* numa_promotion_rate_limit() */
	nb->nr_cand += nb->range_pages;
	if (ft_ms - nb->rl_start_ms > 1000) {
		nb->rl_start_ms = ft_ms;
		nb->rl_nr_cand = nb->nr_cand;
	}
	return nb->nr_cand - nb->rl_nr_cand < nb->rate_limit_pages;
}

/*
 * A promoted fault at @ft_ms, the first of a new pass: task_numa_placement()
 * and update_task_scan_period() scan slower.
 */
static void scan_slower(struct numab_task *t, double ft_ms)
{
	uint64_t next;

	if (t->placed_seq == t->seq)
		return;
	t->placed_seq = t->seq;
	t->period_ms = 2 * t->period_ms < t->max_period_ms ? 2 * t->period_ms :
							     t->max_period_ms;
	next = (uint64_t)ft_ms + t->period_ms;
	/* Scans up to the interval's end have run already. */
	if (next > t->next_scan_ms)
		t->next_scan_ms = next;
}

/*
 * Hint faults of this interval, after the promotions still pending from
 * earlier ones; the promotions go to nb->promos.
 */
static uint32_t faults(struct numab *nb, const struct sim_view *v,
		       uint64_t *used, double start_ms, double end_ms,
		       bool *ret_wake)
{
	const struct sim_machine *m = v->s->m;
	uint64_t cap = m->nodes[nb->fast].capacity_bytes, rb = v->s->range_bytes;
	uint32_t k = 0;

	for (uint32_t r = 0; r < v->s->nr_ranges; r++) {
		if (!nb->pending[r])
			continue;
		nb->pending[r] = 0;
		if (m->nodes[v->node[r]].tier == 0) {
			nb->armed_ms[r] = NUMAB_UNARMED;	/* moved */
			continue;
		}
		if (!v->truth[r])
			continue;	/* still armed, with its stamp */
		if (cap - used[nb->fast] < nb->low + rb) {
			nb->armed_ms[r] = NUMAB_UNARMED;
			*ret_wake = true;	/* the allocation fails */
			continue;
		}
		nb->pending[r] = 1;
		used[nb->fast] += rb;
		used[v->node[r]] -= rb;
		nb->promos[k++] = r;
	}
	for (uint32_t r = 0; r < v->s->nr_ranges; r++) {
		double rate, base, ft;

		if (nb->armed_ms[r] == NUMAB_UNARMED || nb->pending[r] ||
		    !v->truth[r] || m->nodes[v->node[r]].tier == 0)
			continue;
		rate = v->truth[r] / (double)nb->folios / (end_ms - start_ms);
		base = nb->armed_ms[r] > start_ms ? nb->armed_ms[r] : start_ms;
		ft = base - log(1 - sim_rand_unit(&nb->rng)) / rate;
		if (ft >= end_ms)
			continue;
		if (!should_promote(nb, cap - used[nb->fast], ft,
				    ft - nb->armed_ms[r])) {
			nb->armed_ms[r] = NUMAB_UNARMED;
			continue;
		}
		if (cap - used[nb->fast] < nb->low + rb) {
			nb->armed_ms[r] = NUMAB_UNARMED;
			*ret_wake = true;	/* the allocation fails */
			continue;
		}
		used[nb->fast] += rb;
		used[v->node[r]] -= rb;
		nb->promos[k++] = r;
		nb->pending[r] = 1;	/* armed until its move is done */
		scan_slower(&nb->tasks[v->s->range_tenant[r]], ft);
	}
	return k;
}

/* 0 for the oldest (log2 of the age 32), 32 for an age of 0. */
static int age_slot(uint32_t age)
{
	return 32 - (age ? 32 - __builtin_clz(age) : 0);
}

/* kswapd: demote the least recently used fast ranges up to WMARK_PROMO. */
static uint32_t kswapd(struct numab *nb, const struct sim_view *v,
		       uint64_t *used, struct sim_move *moves, uint32_t max)
{
	const struct sim_machine *m = v->s->m;
	uint64_t cap = m->nodes[nb->fast].capacity_bytes, rb = v->s->range_bytes;
	uint32_t n = v->s->nr_ranges, b[34] = { 0 }, k = 0;

	/* Counting sort by log2 of the time since the last access, oldest first. */
	for (uint32_t r = 0; r < n; r++)
		b[age_slot(v->interval + 1 - nb->last_access[r]) + 1]++;
	for (int i = 1; i < 34; i++)
		b[i] += b[i - 1];
	for (uint32_t r = 0; r < n; r++)
		nb->order[b[age_slot(v->interval + 1 - nb->last_access[r])]++] = r;
	for (uint32_t i = 0; i < n && k < max; i++) {
		uint32_t r = nb->order[i];

		if (cap - used[nb->fast] >= nb->promo)
			break;
		if (v->node[r] != nb->fast ||
		    used[nb->slow] + rb > m->nodes[nb->slow].capacity_bytes)
			continue;
		used[nb->fast] -= rb;
		used[nb->slow] += rb;
		moves[k++] = (struct sim_move){ .range = r, .node = nb->slow };
	}
	return k;
}

static int numab_decide(void *st, const struct sim_view *v,
			struct sim_move *moves, uint32_t max, uint32_t *ret_n)
{
	struct numab *nb = st;
	double iv_ms = v->s->interval_ns / 1e6;
	double start_ms = v->interval * iv_ms, end_ms = start_ms + iv_ms;
	uint64_t used[SIM_MAX_NODES];
	uint64_t cap = v->s->m->nodes[nb->fast].capacity_bytes;
	uint32_t np, k = 0;
	bool wake = false;

	memcpy(used, v->used_bytes, sizeof(used));
	for (uint32_t i = 0; i < v->s->nr_tenants; i++) {
		struct numab_task *t = &nb->tasks[i];

		for (; t->count && t->next_scan_ms < end_ms;
		     t->next_scan_ms += t->period_ms)
			scan(nb, v, t, t->next_scan_ms);
	}
	for (uint32_t r = 0; r < v->s->nr_ranges; r++)
		if (v->truth[r])
			nb->last_access[r] = v->interval + 1;
	np = faults(nb, v, used, start_ms, end_ms, &wake);
	if (wake || cap - used[nb->fast] < nb->low)
		k = kswapd(nb, v, used, moves, max);
	for (uint32_t i = 0; i < np && k < max; i++)
		moves[k++] = (struct sim_move){ .range = nb->promos[i],
						.node = nb->fast,
						.flags = SIM_MOVE_FAULT };
	*ret_n = k;
	return 0;
}

/* Whole passes over the address space (mm->numa_scan_seq): the most any
 * tenant's task has made. */
static uint64_t numab_passes(void *state)
{
	const struct numab *nb = state;
	uint32_t most = 0;

	for (uint32_t i = 0; i < nb->s->nr_tenants; i++)
		if (nb->tasks[i].seq > most)
			most = nb->tasks[i].seq;
	return most;
}

const struct sim_system sim_sys_numab = {
	.name = "numa_balancing", .own_sampler = true, .fault_ns = NUMAB_FAULT_NS,
	.init = numab_init, .decide = numab_decide, .destroy = numab_destroy,
	.unit = "scan passes", .units = numab_passes,
};
