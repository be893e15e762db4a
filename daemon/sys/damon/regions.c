// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regions into the hotness table, one aggregation per drain: from the
 * `stat` schemes' tried_regions in sysfs, or from the damon_aggregated
 * tracepoint through a damon_feed.
 *
 * Idle regions.  A region with no access adds no heat, so the table never
 * holds memory nobody touches: a data set loaded before tierd started, and
 * never since, would sit on the fast tier for ever.  The feed hands over
 * every region with its age (aggregation intervals its access count has
 * stayed about the same, which the kernel rescales when the intervals
 * change: tierd's idle pace), so a drain from the feed also replaces the
 * idle set (core/idle.h) with the regions at nr_accesses 0, each idle
 * since age * the aggregation interval ago; demotion takes from there
 * (core/candidates.c: idle_walk()).  A range per region: the set is
 * bounded by the kdamond's regions, whatever memory they cover.  The sysfs
 * route reads accessed regions only (an idle one would cost three more
 * reads a drain, and its schemes are what runs before tierd is first at
 * rest): until the feed runs, or where it cannot, no memory is known idle.
 *
 * The sysfs route.  A tried region does not say which target it belongs to.
 * That is solved with one scheme per target, each excluding every other
 * target with a `target` filter (matching=N on damon_target_idx=i), so
 * scheme i's regions are target i's.  The scheme's access_pattern maxima
 * must be set explicitly (sysfs defaults them to 0, which matches nothing
 * but idle, zero-sized regions).  Cost per drain: the state write (update.c),
 * then three small sysfs reads per accessed region: ~3000 reads for one
 * target at the default 1000 regions, a few milliseconds.  In the lab guest
 * (TCG) this finds the 64 MiB hot region of a 512 MiB process in 5 to 9
 * drains (2 s).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/hot_table.h"
#include "../../core/idle.h"
#include "source.h"

/* One number of tried region @ri, under the directory @dfd (admin-relative
 * @dir_rel). */
static int region_u64(const struct sampler_damon *d, int dfd, const char *dir_rel,
		      unsigned long ri, const char *file, uint64_t *ret)
{
	char rel[256], path[64];

	snprintf(rel, sizeof(rel), "%s/%lu/%s", dir_rel, ri, file);
	snprintf(path, sizeof(path), "%lu/%s", ri, file);
	return damon_sysfs_read_u64_at(d, dfd, rel, path, ret);
}

static int damon_read_regions(struct sampler_damon *d, size_t i, struct hot_table *t,
			      uint64_t now_ns, double acc, uint64_t *ret_regions)
{
	char dir[768], rel[128];
	struct dirent *de;
	int records = 0, dfd;
	DIR *dd;

	snprintf(rel, sizeof(rel), "kdamonds/%d/contexts/0/schemes/%zu/tried_regions",
		 d->idx, i);
	snprintf(dir, sizeof(dir), "%s/%s", d->admin, rel);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	dd = fdopendir(dfd);
	if (!dd) {
		int r = -errno;

		close(dfd);
		return r;
	}
	while ((de = readdir(dd))) {
		uint64_t start, end, nr_acc;
		unsigned long ri;
		char *e;
		int r;

		ri = strtoul(de->d_name, &e, 10);
		if (e == de->d_name || *e)
			continue;	/* total_bytes, . and .. */
		/* openat() from the directory's fd walks two path components
		 * instead of the dozen of the full sysfs path, and that walk was
		 * most of a drain's CPU (perf in the lab guest: 62% of tierd's
		 * CPU in open()'s path walks at 2000 regions). */
		r = region_u64(d, dfd, rel, ri, "start", &start);
		if (r == 0)
			r = region_u64(d, dfd, rel, ri, "end", &end);
		if (r == 0)
			r = region_u64(d, dfd, rel, ri, "nr_accesses", &nr_acc);
		if (r < 0 || end <= start)
			continue;	/* the kernel rebuilt the directory under us */
		(*ret_regions)++;
		r = hot_record(t, d->targets[i], start, end - start, nr_acc * acc, now_ns);
		if (r > 0)
			records += r;
	}
	closedir(dd);	/* closes dfd */
	return records;
}

/* ---- the feed ---- */

/* Where regions come from, before the first idle pace. */
void damon_tp_note_initial(struct sampler_damon *d)
{
	snprintf(d->feed_note, sizeof(d->feed_note), "%s", d->feed ?
		 "regions from tried_regions until tierd is idle, then from the "
		 "damon_aggregated tracepoint" : "regions from tried_regions");
}

/* Start the feed; when it cannot run, regions stay on sysfs. */
void damon_tp_start(struct sampler_damon *d)
{
	char why[SAMPLER_WHY_MAX] = "";

	d->feed_tried = true;
	d->st.generation++;
	if (d->feed->ops->start(d->feed, d->feed_cap, d->known_cells, why, sizeof(why)) < 0) {
		snprintf(d->feed_note, sizeof(d->feed_note),
			 "regions from tried_regions (no tracepoint feed: %.100s)", why);
		return;
	}
	d->feed_on = true;
	snprintf(d->feed_note, sizeof(d->feed_note),
		 "regions from the damon_aggregated tracepoint");
}

void damon_tp_stop(struct sampler_damon *d)
{
	if (d->feed)
		d->feed->ops->stop(d->feed);
	d->feed_on = false;
	d->feed_tried = false;
}

/*
 * Follow kdamond @pid (0: none).  The aggregation in progress may still
 * hold the old targets (their regions are indexed by target), so only
 * those that begin after this are folded.
 */
int damon_tp_follow(struct sampler_damon *d, pid_t pid)
{
	uint64_t pass = 0;
	int r = d->feed->ops->follow(d->feed, pid, pid > 0 ? (uint32_t)d->ntargets : 0, &pass);

	if (r < 0)
		return r;
	if (d->idle)
		idle_begin(d->idle);	/* the old targets' idle regions */
	damon_clock_restart(d);
	d->feed_after = pass;
	d->peek_after = pass;
	return 0;
}

/*
 * Fold the newest aggregation the feed has, if it is one not folded yet.
 * It does not wait for one: after new targets (the aggregation in progress
 * at the change is skipped) the first heat comes at the drain after the
 * next aggregation's end, a tick later at the most.
 */
/* Idle region @g of a drain at @now_ns into the idle set, with @aggr_ns
 * what each aggregation its age counts took (pace.c: damon_aggr_real_ns()). */
static void idle_note(struct sampler_damon *d, const struct damon_feed_rec *g,
		      uint64_t aggr_ns, uint64_t now_ns)
{
	uint64_t idle_ns = (uint64_t)g->age * aggr_ns;

	if (!d->idle || !g->age)
		return;	/* an age of 0: it just changed, nothing to go by */
	/* Full, or a region that overlaps another (the pass raced a change of
	 * targets): left out, counted in the set's dropped. */
	idle_add(d->idle, d->targets[g->target], g->start, g->end,
		 idle_ns < now_ns ? now_ns - idle_ns : 1);
}

int damon_tp_drain(struct sampler_damon *d, struct hot_table *t, uint64_t now_ns)
{
	struct damon_feed_counters c;
	double acc = damon_acc_scale(d);
	uint64_t aggr_ns;
	int records = 0, n;
	uint64_t pass = 0;

	n = d->feed->ops->read(d->feed, d->feed_after, d->feed_buf, d->feed_cap, &pass);
	if (n == -EAGAIN)
		return 0;	/* no aggregation ended since the last drain */
	if (n < 0)
		return n;
	d->feed_after = pass;
	damon_clock_note(d, pass, now_ns);
	aggr_ns = damon_aggr_real_ns(d);
	if (d->idle)
		idle_begin(d->idle);
	for (int i = 0; i < n; i++) {
		const struct damon_feed_rec *g = &d->feed_buf[i];
		int r;

		if (g->target >= d->ntargets || g->end <= g->start)
			continue;
		if (!g->nr_accesses) {
			idle_note(d, g, aggr_ns, now_ns);
			continue;
		}
		r = hot_record(t, d->targets[g->target], g->start, g->end - g->start,
			       g->nr_accesses * acc, now_ns);
		if (r > 0)
			records += r;
	}
	d->feed->ops->counters(d->feed, &c);
	d->st.samples += (uint64_t)n;
	d->st.lost = c.overflow;
	d->st.records += records;
	d->st.drains++;
	return records;
}

/* The idle set that feed drains replace (NULL: none); only the feed has
 * idle regions to give. */
int damon_idle_into(struct sampler *s, struct idle_set *set)
{
	struct sampler_damon *d = SD(s);

	if (!d->feed)
		return -EOPNOTSUPP;
	d->idle = set;
	return 0;
}

/*
 * Fold the tried_regions of the update a drain asked for, if it is done
 * (update.c): its counts are in the unit of the pace it was asked at.
 * Returns the records folded, -errno when the update failed; *@ret_had
 * says whether there was one.
 */
int damon_tried_take(struct sampler_damon *d, struct hot_table *t, uint64_t now_ns,
		     bool *ret_had)
{
	unsigned int pace = 0;
	uint64_t regions = 0;
	int records = 0, r;
	double acc;

	r = damon_update_take(d, &pace);
	*ret_had = r != 0;
	if (r <= 0)
		return r;
	acc = damon_acc_scale_at(d, pace);
	for (size_t i = 0; i < d->ntargets && r >= 0; i++) {
		r = damon_read_regions(d, i, t, now_ns, acc, &regions);
		if (r > 0)
			records += r;
	}
	if (r < 0)
		return r;
	d->st.samples += regions;
	d->st.records += records;
	d->st.drains++;
	return records;
}
