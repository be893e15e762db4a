// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procmem.h"
#include "sample_watch.h"
#include "topology.h"

#define MIB (1ull << 20)
/* numa_maps reads per scan (a scan every 2 s), and the resident bytes they
 * may walk together: a thousand processes are all read in about two
 * minutes, and a scan walks no more than 16 GiB of page tables' worth. */
#define WATCH_READS 16
#define WATCH_READ_BYTES (16384 * MIB)
/* A watched process keeps its place against one with this much more. */
#define WATCH_STAY_BYTES (8 * MIB)

int sample_watch_init(struct sample_watch *w, size_t bound, size_t max)
{
	memset(w, 0, sizeof(*w));
	w->p = (struct watch_params){
		.bound = bound,
		.max_reads = WATCH_READS,
		.max_read_bytes = WATCH_READ_BYTES,
		.stay_bytes = WATCH_STAY_BYTES,
	};
	w->max = max;
	w->proc_root = "/proc";
	w->procs = calloc(max, sizeof(*w->procs));
	w->next = calloc(max, sizeof(*w->next));
	w->scratch = calloc(max, sizeof(*w->scratch));
	w->idx = calloc(max, sizeof(*w->idx));
	if (!w->procs || !w->next || !w->scratch || !w->idx) {
		sample_watch_free(w);
		return -ENOMEM;
	}
	return 0;
}

void sample_watch_free(struct sample_watch *w)
{
	free(w->procs);
	free(w->next);
	free(w->scratch);
	free(w->idx);
	memset(w, 0, sizeof(*w));
}

/* The nodes below the fastest tier, by id. */
static uint64_t lower_mask(const struct topology *topo)
{
	uint64_t mask = 0;

	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].tier > 0 && topo->nodes[i].id < 64)
			mask |= 1ull << topo->nodes[i].id;
	return mask;
}

/* @pids as the new list, what is known of each carried over. */
static void merge(struct sample_watch *w, const pid_t *pids, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		while (j < w->n && w->procs[j].pid < pids[i])
			j++;
		if (j < w->n && w->procs[j].pid == pids[i])
			w->next[i] = w->procs[j];
		else
			w->next[i] = (struct watch_proc){ .pid = pids[i] };
	}
	memcpy(w->procs, w->next, n * sizeof(*w->procs));
	w->n = n;
}

size_t sample_watch_step(struct sample_watch *w, const struct topology *topo, const pid_t *pids,
			 const uint64_t *rss, size_t n, pid_t *ret, uint64_t now_ns)
{
	uint64_t mask = lower_mask(topo);
	size_t nr, k = 0;

	if (n > w->max)
		n = w->max;
	merge(w, pids, n);
	if (n > w->p.bound) {
		for (size_t i = 0; i < n; i++)
			w->procs[i].rss_bytes = rss[i];
		nr = watch_reads(&w->p, w->procs, n, w->scratch, w->idx);
		for (size_t i = 0; i < nr; i++) {
			struct watch_proc *p = &w->procs[w->idx[i]];

			if (proc_node_bytes(w->proc_root, p->pid, mask, &p->lower_bytes) < 0)
				p->lower_bytes = 0;
			p->read_ns = now_ns ? now_ns : 1;
			w->reads_total++;
		}
	}
	watch_choose(&w->p, w->procs, n, w->scratch);
	for (size_t i = 0; i < n; i++)
		if (w->procs[i].watched)
			ret[k++] = w->procs[i].pid;
	return k;
}
