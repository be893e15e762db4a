// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process slots of the hotness table: the pid behind each key's slot
 * number, found through a small open-addressed index, freed with the
 * process's last entry (hotness.c's essay has the layout).
 */
#include "hotness_int.h"

/* The slot of @pid, or PID_NONE. */
uint32_t hot_pid_find(const struct hot_table *t, pid_t pid)
{
	uint32_t i = pid_home(t, pid);
	uint16_t s;

	while ((s = t->pid_index[i]) != 0) {
		if (t->pids[s - 1].pid == pid)
			return s - 1;
		i = (i + 1) & t->pid_index_mask;
	}
	return PID_NONE;
}

static void pid_free(struct hot_table *t, uint32_t ps)
{
	uint32_t mask = t->pid_index_mask;
	uint32_t hole = pid_home(t, t->pids[ps].pid), j;

	while (t->pid_index[hole] != ps + 1)
		hole = (hole + 1) & mask;
	/* Backward-shift deletion: pull later members of the run into the hole
	 * when the hole lies on their probe path. */
	for (j = (hole + 1) & mask; t->pid_index[j]; j = (j + 1) & mask) {
		uint32_t home = pid_home(t, t->pids[t->pid_index[j] - 1].pid);

		if (((j - home) & mask) >= ((j - hole) & mask)) {
			t->pid_index[hole] = t->pid_index[j];
			hole = j;
		}
	}
	t->pid_index[hole] = 0;
	t->pids[ps].pid = 0;
	t->pids[ps].nents = t->pid_free;
	t->pid_free = ps;
	t->npids--;
	if (t->cache_slot == ps + 1)
		t->cache_slot = 0;
}
/* One entry (or pin) of @ps fewer: the slot is freed with its last entry. */
void hot_pid_put(struct hot_table *t, uint32_t ps)
{
	if (--t->pids[ps].nents == 0)
		pid_free(t, ps);
}

/*
 * Remove every entry of process slot @ps (which frees it).  Deleting at @i
 * pulls later entries of the run back into @i, so @i is looked at again; an
 * entry only ever moves to a slot it could have started in, never past one
 * already looked at, except from the wrapped start of the table, which was
 * looked at first.
 */void hot_drop_slot(struct hot_table *t, uint32_t ps, size_t *ret_n)
{
	uint32_t left = t->pids[ps].nents;
	size_t n = 0;

	for_each_occupied_slot(t, i) {
		while (left && (t->slots[i].key >> KEY_PID_SHIFT) == ps + 1) {
			hot_remove_at(t, i);
			left--;
			n++;
		}
		if (!left)
			goto pool;
	}
pool:
	for (uint32_t i = t->npool; i-- > 0;)
		if (KEY_PSLOT(t->pool[i].key) == ps)
			hot_pool_del(t, i);
	*ret_n = n;
}

size_t hot_drop_pid(struct hot_table *t, pid_t pid)
{
	uint32_t ps = pid > 0 ? hot_pid_find(t, pid) : PID_NONE;
	size_t n = 0;

	if (ps == PID_NONE)
		return 0;
	hot_drop_slot(t, ps, &n);
	t->st.dropped += n;
	return n;
}
