// SPDX-License-Identifier: GPL-2.0-only
/* tierd --record: the hot table's records as a replayable trace (record.h). */
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "conf.h"
#include "fsutil.h"
#include "log.h"

#define TENANT_MAX 512
#define FLUSH_NS 1000000000ull

struct record_proc {
	pid_t pid;
	uint32_t next_range;	/* the dense number its next new range gets */
	char tenant[TENANT_MAX];
};

struct record_slot {
	uint64_t range;		/* address >> geom.range_shift */
	pid_t pid;		/* 0: empty */
	uint32_t dense;
};

int record_open(struct recorder *r, const char *path, const char *root,
		const struct page_geom *g, uint64_t max_bytes, uint64_t start_ns)
{
	int n;

	memset(r, 0, sizeof(*r));
	if (strlen(path) >= sizeof(r->path))
		return -ENAMETOOLONG;
	strcpy(r->path, path);
	r->f = fopen(path, "we");
	if (!r->f)
		return -errno;
	r->root = root;
	r->geom = *g;
	r->start_ns = start_ns;
	r->last_flush_ns = start_ns;
	r->max_bytes = max_bytes ? max_bytes : RECORD_DEFAULT_MAX_BYTES;
	n = fprintf(r->f,
		    "# tierd --record: what tierd's sampler saw, for tierd-sim --trace\n"
		    "# time_us,tenant,page,accesses; tenant: cgroup/pid<N>; pages dense per\n"
		    "# process (ranges in the order first seen); accesses: the\n"
		    "# sampler's weight, rounded up\n"
		    "# page_bytes: %llu, range_bytes: %llu, pmd_bytes: %llu\n",
		    (unsigned long long)g->base, (unsigned long long)g->range,
		    (unsigned long long)g->pmd);
	if (n < 0) {
		fclose(r->f);
		r->f = NULL;
		return -EIO;
	}
	r->bytes = (uint64_t)n;
	return 0;
}

/* The tenant of @pid: its cgroup v2 path, blanks and commas made '_', then
 * "/pid<N>".  A process whose cgroup cannot be read is "/pid<N>". */
static void tenant_of(const struct recorder *r, pid_t pid, char *buf, size_t size)
{
	char proc[4096], cg[CONF_PATH_MAX] = "";
	char *p;

	if (fs_path(proc, sizeof(proc), r->root, "proc") < 0 ||
	    cg_path_of_pid(proc, pid, cg, sizeof(cg)) < 0 || strcmp(cg, "/") == 0)
		cg[0] = '\0';
	snprintf(buf, size, "%s/pid%d", cg, (int)pid);
	for (p = buf; *p; p++)
		if (*p == ',' || *p == ' ' || *p == '\t')
			*p = '_';
}

static struct record_proc *proc_get(struct recorder *r, pid_t pid)
{
	struct record_proc *p;
	uint32_t i;

	if (r->last_proc < r->nr_procs && r->procs[r->last_proc].pid == pid)
		return &r->procs[r->last_proc];
	for (i = 0; i < r->nr_procs; i++) {
		if (r->procs[i].pid == pid) {
			r->last_proc = i;
			return &r->procs[i];
		}
	}
	if (r->nr_procs == r->cap_procs) {
		uint32_t cap = r->cap_procs ? 2 * r->cap_procs : 16;

		p = realloc(r->procs, cap * sizeof(*p));
		if (!p)
			return NULL;
		r->procs = p;
		r->cap_procs = cap;
	}
	p = &r->procs[r->nr_procs];
	p->pid = pid;
	p->next_range = 0;
	tenant_of(r, pid, p->tenant, sizeof(p->tenant));
	r->last_proc = r->nr_procs++;
	return p;
}

static uint64_t slot_hash(pid_t pid, uint64_t range)
{
	uint64_t key = range * 0x9e3779b97f4a7c15ull ^ (uint64_t)pid;

	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key;
}

static int slots_grow(struct recorder *r)
{
	uint32_t n = r->nslots ? 2 * r->nslots : 4096, i;
	struct record_slot *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < r->nslots; i++) {
		uint64_t h;

		if (!r->slots[i].pid)
			continue;
		for (h = slot_hash(r->slots[i].pid, r->slots[i].range); s[h & (n - 1)].pid; h++)
			;
		s[h & (n - 1)] = r->slots[i];
	}
	free(r->slots);
	r->slots = s;
	r->nslots = n;
	return 0;
}

/* The dense number of @range of @p; -ENOSPC past RECORD_MAX_RANGES. */
static int64_t dense_range(struct recorder *r, struct record_proc *p, uint64_t range)
{
	struct record_slot *s;
	uint64_t h;

	if (r->nused >= r->nslots / 2 && slots_grow(r) < 0)
		return -ENOMEM;
	for (h = slot_hash(p->pid, range);; h++) {
		s = &r->slots[h & (r->nslots - 1)];
		if (s->pid == p->pid && s->range == range)
			return s->dense;
		if (!s->pid)
			break;
	}
	if (r->nused >= RECORD_MAX_RANGES)
		return -ENOSPC;
	s->pid = p->pid;
	s->range = range;
	s->dense = p->next_range++;
	r->nused++;
	return s->dense;
}

static void stop(struct recorder *r, const char *why)
{
	r->full = true;
	log_notice("Recording to %s stops: %s; %" PRIu64 " records kept", r->path, why,
		   r->lines);
}

static void emit(struct recorder *r, struct record_proc *p, uint64_t addr, double w,
		 uint64_t time_us)
{
	const struct page_geom *g = &r->geom;
	int64_t d = dense_range(r, p, addr >> g->range_shift);
	uint64_t per_range = page_geom_range_pages(g);
	uint64_t page, acc = (uint64_t)ceil(w);
	int n;

	if (d < 0) {
		stop(r, d == -ENOSPC ? "the range bound is reached" : "out of memory");
		return;
	}
	page = (uint64_t)d * per_range + ((addr >> g->shift) & (per_range - 1));
	n = fprintf(r->f, "%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 "\n", time_us, p->tenant,
		    page, acc ? acc : 1);
	if (n < 0) {
		r->error = -EIO;
		stop(r, "a write failed");
		return;
	}
	r->bytes += (uint64_t)n;
	r->lines++;
	if (r->bytes >= r->max_bytes)
		stop(r, "the size bound is reached");
}

void record_observe(void *ctx, pid_t pid, uint64_t addr, uint64_t len, double weight,
		    uint64_t now_ns)
{
	struct recorder *r = ctx;
	uint64_t t_us, end, g, range = r->geom.range;
	struct record_proc *p;

	if (!r->f || r->full || !(weight > 0.0))
		return;
	p = proc_get(r, pid);
	if (!p) {
		stop(r, "out of memory");
		return;
	}
	t_us = now_ns > r->start_ns ? (now_ns - r->start_ns) / 1000 : 0;
	if (t_us < r->last_us)
		t_us = r->last_us;
	r->last_us = t_us;

	if (len <= r->geom.base) {
		emit(r, p, addr, weight, t_us);
	} else {
		/* As hot_record() folds a region: a share per range. */
		end = addr + len < addr ? UINT64_MAX : addr + len;
		for (g = page_geom_range_base(&r->geom, addr); g < end && !r->full; g += range) {
			uint64_t lo = g > addr ? g : addr;
			uint64_t hi = end - g > range ? g + range : end;

			emit(r, p, lo, weight * (double)(hi - lo) / (double)range, t_us);
		}
	}
	if (now_ns - r->last_flush_ns >= FLUSH_NS && r->f) {
		if (fflush(r->f) != 0 && !r->error) {
			r->error = -errno;
			stop(r, "a write failed");
		}
		r->last_flush_ns = now_ns;
	}
}

int record_close(struct recorder *r)
{
	int err = r->error;

	if (r->f && fclose(r->f) != 0 && !err)
		err = -errno;
	r->f = NULL;
	free(r->procs);
	free(r->slots);
	r->procs = NULL;
	r->slots = NULL;
	r->nr_procs = r->cap_procs = r->nslots = r->nused = 0;
	return err;
}
