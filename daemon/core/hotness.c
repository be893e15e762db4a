// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hotness table
 * =============
 *
 * The model.  Every tracked (pid, page) has a heat: the sum of the weights of
 * the samples that hit it, each weight halving every half_life_ns since it
 * arrived.  A sampler hands in evidence -- "page P of pid 42 was seen 3 times
 * at time t" (BPF) or "the 2 MiB ranges of region R were accessed 12 times
 * per aggregation interval" (DAMON) -- and the policy asks for the hottest
 * entries (promotion candidates) and the coldest (demotion candidates).
 *
 * Decay without touching every entry.  Storing heat and decaying it every tick
 * would cost O(n) per tick.  Instead each entry stores
 *
 *	v = heat(t) * 2^((t - epoch) / half_life)
 *
 * which does not change while no sample arrives: heat(now) = v * 2^(-(now -
 * epoch) / half_life), and that factor is the same for every entry.  So the
 * order of the stored values IS the order of the current heats; a sample of
 * weight w at time t adds w * 2^((t - epoch) / half_life) to v, and sums of
 * entries (THP folding) are plain additions.  The values grow exponentially
 * with time, so after REBASE_HALF_LIVES half-lives the epoch moves to now and
 * every value is multiplied by the same factor (order kept), once per ~8
 * minutes with a 1 s half-life: the one O(n) step, and rare.
 *
 * Granularity (THP awareness).  An entry covers a 4 KiB page or a 2 MiB
 * range.  A 2 MiB entry stands for a PMD folio (the sampler says so by
 * recording len = 2 MiB) or for the part of a DAMON region inside that range;
 * once it exists, 4 KiB samples inside it fold into it, and when it is created
 * it absorbs the 4 KiB entries it covers (512 hash probes, only on creation).
 * So a hot THP is one entry that the policy moves as one folio, not 512.
 *
 * Bounded memory.  All memory comes in at init: an entry array (40 bytes per
 * entry), a bucket array (a power of two >= max_entries, 4 bytes each) and a
 * min-heap of entry indices ordered by v (4 bytes per entry) -- 48 to 52 bytes
 * per entry, ~50 MB for a million tracked pages.  When the table is full the
 * heap's root, the coldest entry, is evicted to make room; the newcomer is
 * inserted even when it is colder still, because it is the newest evidence.
 *
 * Worked example, half_life = 10 s.  Page A gets 50 samples at t = 0 and none
 * after; page B gets 10 samples every second from t = 0.  At t = 10 s A has
 * heat 25; B has sum_{k=0..10} 10 * 2^(-k/10) = 10 * (1 - 2^(-1.1)) /
 * (1 - 2^(-0.1)) = 79.7, so B is hotter.  At t = 30 s A is 6.25 and B
 * approaches its steady state 10 / (1 - 2^(-0.1)) = 149.3.  A promotion
 * threshold of, say, 100 picks B from t = 15 s on and never picks
 * A; A leaves the table first when room is needed.  With max_entries = 2 and a
 * third page C sampled once at t = 30, A (6.25) is evicted, not B.
 *
 * Cost.  hot_record() of a 4 KiB sample is one or two hash probes (the 2 MiB
 * entry that may cover the page, then the page) plus an O(log n) heap sift
 * when v grows; no allocation, no clock read.  tests/bench/hotness_bench.c
 * measures it per million samples.  The selectors scan every entry: O(n log k) for k
 * results, a few milliseconds for a million entries, so call them once per
 * tick, not per sample.  hot_drop_pid() scans every slot: batch exits.
 *
 * How it fails.
 *  - A hot set larger than max_entries: new pages evict each other (the
 *    one-sample newcomers are the coldest), the truly hot ones survive because
 *    they are re-sampled, but medium-hot pages flicker in and out.  The
 *    evictions counter grows as fast as inserts; raise max_entries.
 *  - Pages never sampled have no entry: the coldest entries are pages that
 *    were hot once and cooled, not the coldest pages of the process.  Demotion
 *    needs a source that reports cold memory too (DAMON regions with
 *    nr_accesses 0 carry no weight here and create nothing).
 *  - A THP split after its 2 MiB entry exists: samples keep folding into the
 *    range until it cools or is forgotten; the policy then moves 512 base
 *    pages where fewer would do.  Memory unmapped and remapped at the same
 *    address inherits the old heat until it decays; a pid reused after an exit
 *    would too, which is why the caller must hot_drop_pid() exited processes.
 *  - A sample stamped before the current epoch counts as arriving at the
 *    epoch; older stamps after it are honoured (a late sample weighs less,
 *    as it should).  Weights from
 *    different sources (sample counts, DAMON frequencies) are not comparable;
 *    feed one table from one source.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "hotness.h"

#define HOT_NONE UINT32_MAX
#define HOT_KEY_HUGE (1ull << 63)
#define HOT_HUGE_PAGES (HOT_HUGE_SIZE / HOT_PAGE_SIZE)	/* 512 */
#define REBASE_HALF_LIVES 512.0	/* values stay below w * 2^512 */
#define SAMPLES_MAX UINT32_MAX

struct hot_entry {
	uint64_t key;		/* addr >> HOT_PAGE_SHIFT, | HOT_KEY_HUGE for 2 MiB */
	double v;		/* heat scaled to the epoch, see above */
	uint64_t last_ns;
	uint32_t samples;	/* saturates */
	int32_t pid;
	uint32_t next;		/* bucket chain, or free list */
	uint32_t heap_idx;	/* HOT_NONE when the slot is free */
};

_Static_assert(sizeof(struct hot_entry) == 40, "hot_entry grew: update the essay");

/* ---- arithmetic without libm ---- */

double hot_exp2(double x)
{
	union {
		uint64_t u;
		double d;
	} scale;
	double f, term, sum;
	int64_t n;

	if (x > 1023.0)
		return __builtin_inf();
	if (x < -1074.0)
		return 0.0;
	n = (int64_t)x;
	if ((double)n > x)
		n--;	/* floor for negative non-integers */
	f = (x - (double)n) * 0.69314718055994530942;	/* f * ln 2, in [0, ln 2) */
	/* e^f by its Taylor series: 20 terms bring the error under 1e-17. */
	term = 1.0;
	sum = 1.0;
	for (int k = 1; k <= 20; k++) {
		term *= f / k;
		sum += term;
	}
	if (n < -1022) {	/* subnormal result: scale in two steps */
		scale.u = (uint64_t)(n + 1022 + 1023) << 52;
		return sum * scale.d * 2.2250738585072014e-308; /* 2^-1022 */
	}
	scale.u = (uint64_t)(n + 1023) << 52;
	return sum * scale.d;
}

/* 2^((t - epoch) / half_life): what a weight arriving at @t_ns is worth. */
static double hot_scale(const struct hot_table *t, uint64_t t_ns)
{
	if (t_ns <= t->epoch_ns)
		return 1.0;
	return hot_exp2((double)(t_ns - t->epoch_ns) / (double)t->params.half_life_ns);
}

/* ---- hash ---- */

static uint32_t hot_hash(const struct hot_table *t, pid_t pid, uint64_t key)
{
	uint64_t h = (key ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ull;

	h ^= h >> 29;
	return (uint32_t)h & (t->nbuckets - 1);
}

static uint32_t hot_lookup(const struct hot_table *t, pid_t pid, uint64_t key)
{
	uint32_t i = t->buckets[hot_hash(t, pid, key)];

	while (i != HOT_NONE) {
		const struct hot_entry *e = &t->ents[i];

		if (e->key == key && e->pid == pid)
			return i;
		i = e->next;
	}
	return HOT_NONE;
}

static void hot_unhash(struct hot_table *t, uint32_t idx)
{
	struct hot_entry *e = &t->ents[idx];
	uint32_t *link = &t->buckets[hot_hash(t, e->pid, e->key)];

	while (*link != idx)
		link = &t->ents[*link].next;
	*link = e->next;
}

/* ---- min-heap of used entries by v ---- */

static bool hot_heap_less(const struct hot_table *t, uint32_t a, uint32_t b)
{
	return t->ents[t->heap[a]].v < t->ents[t->heap[b]].v;
}

static void hot_heap_swap(struct hot_table *t, uint32_t a, uint32_t b)
{
	uint32_t ea = t->heap[a], eb = t->heap[b];

	t->heap[a] = eb;
	t->heap[b] = ea;
	t->ents[eb].heap_idx = a;
	t->ents[ea].heap_idx = b;
}

static void hot_sift_up(struct hot_table *t, uint32_t i)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!hot_heap_less(t, i, parent))
			break;
		hot_heap_swap(t, i, parent);
		i = parent;
	}
}

static void hot_sift_down(struct hot_table *t, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < t->nused && hot_heap_less(t, l, m))
			m = l;
		if (r < t->nused && hot_heap_less(t, r, m))
			m = r;
		if (m == i)
			break;
		hot_heap_swap(t, i, m);
		i = m;
	}
}

/* ---- entries ---- */

static void hot_remove(struct hot_table *t, uint32_t idx)
{
	struct hot_entry *e = &t->ents[idx];
	uint32_t hi = e->heap_idx, last = t->nused - 1;

	hot_unhash(t, idx);
	if (hi != last) {
		hot_heap_swap(t, hi, last);
		t->nused--;
		hot_sift_down(t, hi);
		hot_sift_up(t, hi);
	} else {
		t->nused--;
	}
	if (e->key & HOT_KEY_HUGE)
		t->st.huge_entries--;
	e->heap_idx = HOT_NONE;
	e->next = t->free_head;
	t->free_head = idx;
}

/* A new entry holding @v from @samples records (the newest is usually the
 * largest value, so the sift up stops at once). */
static uint32_t hot_insert(struct hot_table *t, pid_t pid, uint64_t key, double v,
			   uint32_t samples, uint64_t now_ns)
{
	uint32_t idx, b;
	struct hot_entry *e;

	if (t->free_head == HOT_NONE) {
		hot_remove(t, t->heap[0]);
		t->st.evictions++;
	}
	idx = t->free_head;
	e = &t->ents[idx];
	t->free_head = e->next;

	b = hot_hash(t, pid, key);
	e->key = key;
	e->pid = pid;
	e->v = v;
	e->samples = samples;
	e->last_ns = now_ns;
	e->next = t->buckets[b];
	t->buckets[b] = idx;
	e->heap_idx = t->nused;
	t->heap[t->nused++] = idx;
	hot_sift_up(t, e->heap_idx);
	if (key & HOT_KEY_HUGE)
		t->st.huge_entries++;
	t->st.inserts++;
	return idx;
}

static void hot_add(struct hot_table *t, uint32_t idx, double dv, uint32_t samples,
		    uint64_t now_ns)
{
	struct hot_entry *e = &t->ents[idx];

	e->v += dv;
	e->samples = e->samples > SAMPLES_MAX - samples ? SAMPLES_MAX : e->samples + samples;
	if (now_ns > e->last_ns)
		e->last_ns = now_ns;
	hot_sift_down(t, e->heap_idx);	/* v only grows: toward the leaves */
}

static void hot_maybe_rebase(struct hot_table *t, uint64_t now_ns)
{
	double span = (double)t->params.half_life_ns * REBASE_HALF_LIVES;
	double f;

	if (now_ns <= t->epoch_ns || (double)(now_ns - t->epoch_ns) < span)
		return;
	f = 1.0 / hot_scale(t, now_ns);
	for (uint32_t i = 0; i < t->nused; i++)
		t->ents[t->heap[i]].v *= f;
	t->epoch_ns = now_ns;
	t->scale = 0.0;	/* recompute against the new epoch */
	t->st.rebases++;
}

size_t hot_mem_size(uint32_t max_entries)
{
	uint64_t nb = 1;

	if (max_entries == 0 || max_entries >= (1u << 31))
		return 0;
	while (nb < max_entries)
		nb <<= 1;
	return (size_t)max_entries * (sizeof(struct hot_entry) + sizeof(uint32_t)) +
	       (size_t)nb * sizeof(uint32_t);
}

int hot_init(struct hot_table *t, const struct hot_params *p, void *mem,
	     size_t mem_bytes, uint64_t now_ns)
{
	size_t need = hot_mem_size(p->max_entries);
	uint32_t n = p->max_entries;

	if (p->half_life_ns == 0 || need == 0 || !mem || mem_bytes < need ||
	    ((uintptr_t)mem % sizeof(uint64_t)) != 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->params = *p;
	t->ents = mem;
	t->heap = (uint32_t *)(t->ents + n);
	t->buckets = t->heap + n;
	t->nbuckets = 1;
	while (t->nbuckets < n)
		t->nbuckets <<= 1;
	memset(t->buckets, 0xff, (size_t)t->nbuckets * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		t->ents[i].heap_idx = HOT_NONE;
		t->ents[i].next = i + 1 < n ? i + 1 : HOT_NONE;
	}
	t->free_head = 0;
	t->epoch_ns = now_ns;
	t->mem_bytes = need;
	t->st.max_entries = n;
	return 0;
}

static void hot_record_page(struct hot_table *t, pid_t pid, uint64_t addr, double dv,
			    uint64_t now_ns)
{
	uint64_t key = addr >> HOT_PAGE_SHIFT;
	uint32_t idx = HOT_NONE;

	if (t->st.huge_entries)
		idx = hot_lookup(t, pid, (key & ~(HOT_HUGE_PAGES - 1)) | HOT_KEY_HUGE);
	if (idx == HOT_NONE)
		idx = hot_lookup(t, pid, key);
	if (idx == HOT_NONE)
		hot_insert(t, pid, key, dv, 1, now_ns);
	else
		hot_add(t, idx, dv, 1, now_ns);
}

static void hot_record_huge(struct hot_table *t, pid_t pid, uint64_t base, double dv,
			    uint64_t now_ns)
{
	uint64_t first = base >> HOT_PAGE_SHIFT;
	uint64_t key = first | HOT_KEY_HUGE;
	uint32_t idx = hot_lookup(t, pid, key);

	if (idx == HOT_NONE) {
		idx = hot_insert(t, pid, key, 0.0, 0, now_ns);
		/* Absorb the base pages this range covers; values share the epoch,
		 * so their sum is the range's heat. */
		for (uint64_t k = first; k < first + HOT_HUGE_PAGES &&
		     t->nused > t->st.huge_entries; k++) {
			uint32_t small = hot_lookup(t, pid, k);
			struct hot_entry *s;

			if (small == HOT_NONE)
				continue;
			s = &t->ents[small];
			hot_add(t, idx, s->v, s->samples, s->last_ns);
			hot_remove(t, small);
			t->st.folded++;
		}
	}
	hot_add(t, idx, dv, 1, now_ns);
}

int hot_record(struct hot_table *t, pid_t pid, uint64_t addr, uint64_t len,
	       double weight, uint64_t now_ns)
{
	uint64_t end, g;
	double scale;
	int n = 0;

	if (pid <= 0 || !(weight >= 0.0))
		return -EINVAL;
	if (weight == 0.0)
		return 0;
	if (now_ns < t->epoch_ns)
		now_ns = t->epoch_ns;
	hot_maybe_rebase(t, now_ns);
	/* A drain records many samples at one now_ns: one exp2 for all. */
	if (t->scale_ns != now_ns || t->scale == 0.0) {
		t->scale = hot_scale(t, now_ns);
		t->scale_ns = now_ns;
	}
	scale = t->scale;
	t->st.records++;

	if (len <= HOT_PAGE_SIZE) {
		hot_record_page(t, pid, addr, weight * scale, now_ns);
		return 1;
	}
	end = addr + len < addr ? UINT64_MAX : addr + len;
	for (g = addr & ~(HOT_HUGE_SIZE - 1); g < end; g += HOT_HUGE_SIZE) {
		uint64_t lo = g > addr ? g : addr;
		uint64_t hi = end - g > HOT_HUGE_SIZE ? g + HOT_HUGE_SIZE : end;

		hot_record_huge(t, pid, g, weight * scale * (double)(hi - lo) / HOT_HUGE_SIZE,
				now_ns);
		n++;
		if (g + HOT_HUGE_SIZE < g)
			break;
	}
	return n;
}

static uint32_t hot_find(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint64_t key = addr >> HOT_PAGE_SHIFT;
	uint32_t idx = HOT_NONE;

	if (t->st.huge_entries)
		idx = hot_lookup(t, pid, (key & ~(HOT_HUGE_PAGES - 1)) | HOT_KEY_HUGE);
	if (idx == HOT_NONE)
		idx = hot_lookup(t, pid, key);
	return idx;
}

uint64_t hot_entry_len(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t idx = hot_find(t, pid, addr);

	if (idx == HOT_NONE)
		return 0;
	return t->ents[idx].key & HOT_KEY_HUGE ? HOT_HUGE_SIZE : HOT_PAGE_SIZE;
}

double hot_heat(const struct hot_table *t, pid_t pid, uint64_t addr, uint64_t now_ns)
{
	uint32_t idx = hot_find(t, pid, addr);

	if (idx == HOT_NONE)
		return 0.0;
	return t->ents[idx].v / hot_scale(t, now_ns);
}

int hot_forget(struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t idx = hot_find(t, pid, addr);

	if (idx == HOT_NONE)
		return -ENOENT;
	hot_remove(t, idx);
	return 0;
}

size_t hot_drop_pid(struct hot_table *t, pid_t pid)
{
	size_t n = 0;

	for (uint32_t i = 0; i < t->params.max_entries; i++) {
		if (t->ents[i].heap_idx == HOT_NONE || t->ents[i].pid != pid)
			continue;
		hot_remove(t, i);
		n++;
	}
	t->st.dropped += n;
	return n;
}

static void hot_view(const struct hot_table *t, uint32_t idx, double inv_scale,
		     struct hot_entry_view *v)
{
	const struct hot_entry *e = &t->ents[idx];

	v->pid = e->pid;
	v->addr = (e->key & ~HOT_KEY_HUGE) << HOT_PAGE_SHIFT;
	v->len = e->key & HOT_KEY_HUGE ? HOT_HUGE_SIZE : HOT_PAGE_SIZE;
	v->heat = e->v * inv_scale;
	v->samples = e->samples;
	v->last_ns = e->last_ns;
}

/*
 * Selection keeps the k best seen so far in @out as a heap whose root is the
 * worst of them.  "Better" is hotter (dir > 0) or colder (dir < 0); equal heats
 * go to the lower (pid, addr), so the result does not depend on slot order.
 * The heat field holds the stored value v until the end.
 */
static bool hot_worse(const struct hot_entry_view *a, const struct hot_entry_view *b, int dir)
{
	if (a->heat != b->heat)
		return dir > 0 ? a->heat < b->heat : a->heat > b->heat;
	if (a->pid != b->pid)
		return a->pid > b->pid;
	return a->addr > b->addr;
}

static void hot_sel_down(struct hot_entry_view *h, size_t n, size_t i, int dir)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct hot_entry_view tmp;

		if (l < n && hot_worse(&h[l], &h[m], dir))
			m = l;
		if (r < n && hot_worse(&h[r], &h[m], dir))
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static size_t hot_select(const struct hot_table *t, pid_t pid, bool use_min, double min_v,
			 uint64_t now_ns, struct hot_entry_view *out, size_t max, int dir)
{
	double inv = 1.0 / hot_scale(t, now_ns);
	size_t n = 0;

	if (max == 0)
		return 0;
	for (uint32_t hi = 0; hi < t->nused; hi++) {
		uint32_t idx = t->heap[hi];
		struct hot_entry_view v;

		if (pid && t->ents[idx].pid != pid)
			continue;
		if (use_min && t->ents[idx].v < min_v)
			continue;
		hot_view(t, idx, 1.0, &v);
		if (n < max) {
			out[n++] = v;
			if (n == max)	/* heapify once full */
				for (size_t i = n / 2; i-- > 0;)
					hot_sel_down(out, n, i, dir);
		} else if (hot_worse(&out[0], &v, dir)) {
			out[0] = v;
			hot_sel_down(out, n, 0, dir);
		}
	}
	if (n < max)
		for (size_t i = n / 2; i-- > 0;)
			hot_sel_down(out, n, i, dir);
	/* Heap sort: move the worst to the end, best ends up first. */
	for (size_t end = n; end > 1; end--) {
		struct hot_entry_view tmp = out[0];

		out[0] = out[end - 1];
		out[end - 1] = tmp;
		hot_sel_down(out, end - 1, 0, dir);
	}
	for (size_t i = 0; i < n; i++)
		out[i].heat *= inv;
	return n;
}

size_t hot_select_hottest(const struct hot_table *t, pid_t pid, double min_heat,
			  uint64_t now_ns, struct hot_entry_view *out, size_t max)
{
	return hot_select(t, pid, min_heat > 0.0, min_heat * hot_scale(t, now_ns), now_ns,
			  out, max, 1);
}

size_t hot_select_coldest(const struct hot_table *t, pid_t pid, uint64_t now_ns,
			  struct hot_entry_view *out, size_t max)
{
	return hot_select(t, pid, false, 0.0, now_ns, out, max, -1);
}

int hot_foreach(const struct hot_table *t, uint64_t now_ns,
		int (*fn)(const struct hot_entry_view *e, void *arg), void *arg)
{
	double inv = 1.0 / hot_scale(t, now_ns);

	for (uint32_t hi = 0; hi < t->nused; hi++) {
		struct hot_entry_view v;
		int r;

		hot_view(t, t->heap[hi], inv, &v);
		r = fn(&v, arg);
		if (r)
			return r;
	}
	return 0;
}

void hot_get_stats(const struct hot_table *t, struct hot_stats *ret_st)
{
	*ret_st = t->st;
	ret_st->entries = t->nused;
	ret_st->mem_bytes = t->mem_bytes;
}
