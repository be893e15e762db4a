// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queries of the hotness table: one entry's heat, the hottest or coldest
 * entries of a process or of all, and a walk over every entry.  Selection
 * scans the occupied slot groups once; hotness.c's essay gives the cost.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "hotness_int.h"

static uint32_t hot_find(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t ps = pid > 0 ? hot_pid_find(t, pid) : PID_NONE, pos;
	uint64_t slot_bits = (uint64_t)(ps + 1) << KEY_PID_SHIFT;
	uint64_t page = addr >> t->params.geom.shift;

	if (ps == PID_NONE || addr >= HOT_ADDR_LIMIT)
		return PID_NONE;
	if (t->pids[ps].nhuge &&
	    hot_probe(t, slot_bits | KEY_HUGE | hot_huge_page(t, page), &pos))
		return pos;
	if (hot_probe(t, slot_bits | page, &pos))
		return pos;
	return PID_NONE;
}

uint64_t hot_entry_len(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t pos = hot_find(t, pid, addr);

	if (pos == PID_NONE)
		return 0;
	return t->slots[pos].key & KEY_HUGE ? t->params.geom.range : t->params.geom.base;
}

double hot_weight(const struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t pos = hot_find(t, pid, addr);

	return pos == PID_NONE ? 0.0 : (double)t->slots[pos].v;
}

double hot_weight_scale(const struct hot_table *t, uint64_t now_ns)
{
	return hot_scale(t, now_ns);
}

double hot_heat(const struct hot_table *t, pid_t pid, uint64_t addr, uint64_t now_ns)
{
	return hot_weight(t, pid, addr) / hot_scale(t, now_ns);
}

uint64_t hot_record_time(const struct hot_table *t, uint64_t ns)
{
	return t->time_base_ns + ((uint64_t)hot_tick(t, ns) << HOT_TIME_SHIFT);
}

int hot_forget(struct hot_table *t, pid_t pid, uint64_t addr)
{
	uint32_t pos = hot_find(t, pid, addr);

	if (pos == PID_NONE)
		return -ENOENT;
	hot_remove_at(t, pos);
	return 0;
}

static void hot_view(const struct hot_table *t, uint32_t pos, double inv_scale,
		     struct hot_entry_view *v)
{
	const struct hot_entry *e = &t->slots[pos];

	v->pid = t->pids[KEY_PSLOT(e->key)].pid;
	v->addr = KEY_PAGE(e->key) << t->params.geom.shift;
	v->len = e->key & KEY_HUGE ? t->params.geom.range : t->params.geom.base;
	v->heat = (double)e->v * inv_scale;
	v->samples = TAIL_SAMPLES(e->tail);
	v->last_ns = t->time_base_ns + ((uint64_t)TAIL_TICK(e->tail) << HOT_TIME_SHIFT);
}

/*
 * Selection keeps the k best seen so far in @out as a heap whose root is the
 * worst of them.  "Better" is hotter (dir > 0) or colder (dir < 0); equal heats
 * go to the lower (pid, addr), so the result does not depend on slot order.
 * The heat field holds the stored value v until the end.
 */
static bool hot_heat_worse(double a, double b, int dir)
{
	return dir > 0 ? a < b : a > b;
}

static bool hot_worse(const struct hot_entry_view *a, const struct hot_entry_view *b, int dir)
{
	if (a->heat != b->heat)
		return hot_heat_worse(a->heat, b->heat, dir);
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
			 const struct hot_cursor *after, const struct hot_skip *skip,
			 uint64_t now_ns, struct hot_entry_view *out, size_t max, int dir)
{
	double inv = 1.0 / hot_scale(t, now_ns);
	struct hot_entry_view from = { 0 };
	uint32_t want = 0;
	size_t n = 0;

	if (after && after->pid && after->rebases == t->st.rebases) {
		from.pid = after->pid;
		from.addr = after->addr;
		from.heat = after->v;	/* stored, as v.heat below */
	} else {
		after = NULL;
	}

	if (pid) {
		want = pid > 0 ? hot_pid_find(t, pid) + 1 : 0;
		if (!want)
			return 0;	/* no entries (PID_NONE + 1 wraps to 0) */
	}
	if (max == 0)
		return 0;
	for_each_occupied_slot(t, pos) {
		const struct hot_entry *e = &t->slots[pos];
		struct hot_entry_view v;

		if (!e->key || (want && (e->key >> KEY_PID_SHIFT) != want))
			continue;
		if (use_min && (double)e->v < min_v)
			continue;
		/*
		 * Heat alone settles most entries without their view: one
		 * worse than the heap's worst once it is full, or better than
		 * the cursor; an equal heat goes on to the (pid, addr) order.
		 */
		if (n == max && hot_heat_worse((double)e->v, out[0].heat, dir))
			continue;
		if (after && hot_heat_worse(from.heat, (double)e->v, dir))
			continue;
		hot_view(t, pos, 1.0, &v);
		if (after && !hot_worse(&v, &from, dir))
			continue;	/* at or before the cursor */
		/* Asked only of an entry the heap would take. */
		if (skip && skip->fn(skip->ctx, &v))
			continue;
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
	return hot_select(t, pid, min_heat > 0.0, min_heat * hot_scale(t, now_ns), NULL, NULL,
			  now_ns, out, max, 1);
}

size_t hot_select_coldest(const struct hot_table *t, pid_t pid, uint64_t now_ns,
			  struct hot_entry_view *out, size_t max)
{
	return hot_select(t, pid, false, 0.0, NULL, NULL, now_ns, out, max, -1);
}

size_t hot_select_coldest_after(const struct hot_table *t, pid_t pid, uint64_t now_ns,
				const struct hot_cursor *after, struct hot_entry_view *out,
				size_t max)
{
	return hot_select(t, pid, false, 0.0, after, NULL, now_ns, out, max, -1);
}

size_t hot_select_coldest_skip(const struct hot_table *t, uint64_t now_ns,
			       const struct hot_skip *skip, struct hot_entry_view *out,
			       size_t max)
{
	return hot_select(t, 0, false, 0.0, NULL, skip, now_ns, out, max, -1);
}

size_t hot_select_hottest_after(const struct hot_table *t, pid_t pid, uint64_t now_ns,
				const struct hot_cursor *after, const struct hot_skip *skip,
				struct hot_entry_view *out, size_t max)
{
	return hot_select(t, pid, false, 0.0, after, skip, now_ns, out, max, 1);
}

void hot_cursor_after(const struct hot_table *t, const struct hot_entry_view *v,
		      struct hot_cursor *ret)
{
	uint32_t pos = hot_find(t, v->pid, v->addr);

	memset(ret, 0, sizeof(*ret));
	if (pos == PID_NONE)
		return;
	ret->pid = v->pid;
	ret->addr = v->addr;
	ret->v = t->slots[pos].v;
	ret->rebases = t->st.rebases;
}

int hot_foreach(const struct hot_table *t, uint64_t now_ns,
		int (*fn)(const struct hot_entry_view *e, void *arg), void *arg)
{
	double inv = 1.0 / hot_scale(t, now_ns);

	for_each_occupied_slot(t, i) {
		struct hot_entry_view v;
		int r;

		if (!t->slots[i].key)
			continue;
		hot_view(t, i, inv, &v);
		r = fn(&v, arg);
		if (r)
			return r;
	}
	return 0;
}

void hot_heat_hist(const struct hot_table *t, uint64_t now_ns, struct hot_heat_bin *bins,
		   int nbins)
{
	double inv = 1.0 / hot_scale(t, now_ns);

	memset(bins, 0, (size_t)nbins * sizeof(*bins));
	for_each_occupied_slot(t, i) {
		const struct hot_entry *e = &t->slots[i];
		double heat = (double)e->v * inv;
		uint64_t len;
		int b = 0;

		if (!e->key)
			continue;
		if (heat >= 1.0)
			b = heat >= 2147483648.0 ? 32 : 32 - __builtin_clz((uint32_t)heat);
		if (b >= nbins)
			b = nbins - 1;
		len = e->key & KEY_HUGE ? t->params.geom.range : t->params.geom.base;
		bins[b].bytes += len;
		bins[b].entries++;
		bins[b].heat += heat;
	}
}

void hot_get_stats(const struct hot_table *t, struct hot_stats *ret_st)
{
	*ret_st = t->st;
	ret_st->entries = t->nused;
	ret_st->pids = t->npids;
	ret_st->mem_bytes = t->mem_bytes;
}
