// SPDX-License-Identifier: GPL-2.0-only
/*
 * Asking the kdamond for its tried_regions without waiting in a tick.
 *
 * Writing "update_schemes_tried_regions" to a kdamond's state file returns
 * only once the kdamond has applied its schemes and rebuilt tried_regions:
 * the writer sleeps in the kernel (mm/damon/sysfs.c:
 * damon_sysfs_handle_cmd(), 100 ms polls) for an aggregation interval or
 * more.  tierd's ticks run on one event loop that must never block, so the
 * write is made by a small worker thread: a drain asks for an update and
 * returns, the worker writes and marks it done, and the next drain reads
 * the regions it left.  A drain reads the update the previous drain asked
 * for and asks for the next one at once, so at every tick after the first
 * an aggregation is ready: the regions a tick folds are about one tick
 * interval old, which the table's half-life (seconds) does not notice.
 *
 * A drain that finds no update to read (the first after start or after
 * new targets, or one that comes before the kdamond is done) returns
 * without regions and says so to the event loop: the source's fd turns
 * readable when that update is done, and a loop that watches it ticks then
 * instead of at its next interval.  Only such a drain arms the fd, so a
 * loop that ticks on it does not tick at the kdamond's rate.
 *
 * While an update runs the kdamond holds damon_sysfs_lock (from the start
 * of the update to its end), and every other trylocked DAMON file answers
 * -EBUSY: so nothing else of the source touches the kdamond's sysfs files
 * until the update is done.  A change of targets or pace that comes then
 * waits for the next drain (change.c: the wishes), and one that comes
 * after an update is done and before a drain read it drops that update:
 * its regions are indexed by the old targets, counted at the old pace.
 *
 * The same worker writes the state changes that make the writer wait the
 * same way ("commit", "on", "off": change.c), one request at a time: a
 * drain takes a done change in before it looks for regions.
 *
 * The worker is created at the first update, from a tick: after tierd has
 * dropped its capabilities (per thread on Linux), so it has no more of them
 * than the loop.  Its stack is small: tierd locks its memory, and the
 * worker only formats a path and makes one write.  It blocks every signal;
 * the loop takes them through signalfd.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "source.h"

#define UPDATE_STACK_BYTES (64 * 1024)

/*
 * The kdamond is on: its pid goes into the ownership record here, not at
 * the next drain, so that a tierd killed in between still has its kdamond
 * removed at the next start (kdamond.c: clean_stale() removes an on
 * kdamond only when its pid is the one recorded).  The drain writes the
 * same record again when it takes the change in.
 */
static void owner_record_pid(struct sampler_damon *d, int idx)
{
	char rel[64];
	uint64_t kpid;

	snprintf(rel, sizeof(rel), "kdamonds/%d/pid", idx);
	if (damon_sysfs_read_u64(d, rel, &kpid) == 0 && kpid > 0 && kpid <= INT_MAX)
		damon_owner_write(d, (pid_t)kpid);
}

static void *update_main(void *arg)
{
	struct sampler_damon *d = arg;
	struct damon_update *u = &d->upd;
	const char *change;
	bool regions;
	int idx, r, rc;

	damon_sysfs_patient(true);	/* not the loop's thread: it may wait */
	pthread_mutex_lock(&u->lock);
	for (;;) {
		while (u->state != DAMON_UPD_ASKED && !u->quit)
			pthread_cond_wait(&u->cond, &u->lock);
		if (u->state != DAMON_UPD_ASKED)
			break;
		idx = u->idx;
		change = u->change;
		regions = u->regions;
		pthread_mutex_unlock(&u->lock);
		rc = r = change ? damon_sysfs_write(d, change, "kdamonds/%d/state", idx) : 0;
		if (rc == 0 && change && !strcmp(change, "on"))
			owner_record_pid(d, idx);
		if (r == 0 && regions)
			r = damon_sysfs_write(d, "update_schemes_tried_regions",
					      "kdamonds/%d/state", idx);
		pthread_mutex_lock(&u->lock);
		u->change_err = rc;
		u->err = r;
		u->regions = regions && rc == 0;
		u->state = DAMON_UPD_DONE;
		if (u->waiting)
			eventfd_write(u->efd, 1);
		pthread_cond_broadcast(&u->cond);
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

int damon_update_init(struct sampler_damon *d)
{
	struct damon_update *u = &d->upd;

	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0)
		return -errno;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	u->state = DAMON_UPD_IDLE;
	return 0;
}

static int worker_start(struct sampler_damon *d)
{
	struct damon_update *u = &d->upd;
	sigset_t all, old;
	pthread_attr_t attr;
	int r;

	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, UPDATE_STACK_BYTES);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	u->quit = false;
	r = -pthread_create(&u->thread, &attr, update_main, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r == 0)
		u->running = true;
	return r;
}

static int ask(struct sampler_damon *d, const char *change, bool regions, bool waiting,
	       unsigned int pace)
{
	struct damon_update *u = &d->upd;
	int r;

	if (!u->running) {
		r = worker_start(d);
		if (r < 0)
			return r;
	}
	pthread_mutex_lock(&u->lock);
	u->idx = d->idx;
	u->pace = pace;
	u->change = change;
	u->regions = regions;
	u->waiting = waiting;
	u->state = DAMON_UPD_ASKED;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

int damon_update_ask(struct sampler_damon *d, bool waiting)
{
	return ask(d, NULL, true, waiting, d->pace);
}

int damon_update_change(struct sampler_damon *d, const char *state)
{
	return ask(d, state, false, false, d->pace);
}

bool damon_update_busy(struct sampler_damon *d, bool drain)
{
	struct damon_update *u = &d->upd;
	bool busy;

	pthread_mutex_lock(&u->lock);
	busy = u->state == DAMON_UPD_ASKED;
	if (busy && drain)
		u->waiting = true;	/* this drain comes back without regions */
	pthread_mutex_unlock(&u->lock);
	return busy;
}

int damon_update_take(struct sampler_damon *d, unsigned int *ret_pace)
{
	struct damon_update *u = &d->upd;
	eventfd_t n;
	int r = 1;

	pthread_mutex_lock(&u->lock);
	if (u->state != DAMON_UPD_DONE || u->change) {
		r = 0;	/* none, or a change the drain has not taken yet */
	} else {
		if (u->err < 0)
			r = u->err;
		else if (!u->regions)
			r = 0;
		u->state = DAMON_UPD_IDLE;
	}
	*ret_pace = u->pace;
	u->waiting = false;
	pthread_mutex_unlock(&u->lock);
	eventfd_read(u->efd, &n);	/* nonblocking: clears the readiness */
	return r;
}

int damon_update_change_take(struct sampler_damon *d)
{
	struct damon_update *u = &d->upd;
	int r = 0;

	pthread_mutex_lock(&u->lock);
	if (u->state == DAMON_UPD_DONE && u->change) {
		r = u->change_err < 0 ? u->change_err : 1;
		u->change = NULL;
		if (!u->regions)
			u->state = DAMON_UPD_IDLE;
	}
	pthread_mutex_unlock(&u->lock);
	return r;
}

void damon_update_settle(struct sampler_damon *d)
{
	struct damon_update *u = &d->upd;

	pthread_mutex_lock(&u->lock);
	while (u->state == DAMON_UPD_ASKED)
		pthread_cond_wait(&u->cond, &u->lock);
	pthread_mutex_unlock(&u->lock);
}

void damon_update_stop(struct sampler_damon *d)
{
	struct damon_update *u = &d->upd;
	unsigned int pace;

	if (u->running) {
		pthread_mutex_lock(&u->lock);
		u->quit = true;
		pthread_cond_broadcast(&u->cond);
		pthread_mutex_unlock(&u->lock);
		/* An update the kernel is working on ends first (it cannot be
		 * called back); tierd is stopping, not ticking. */
		pthread_join(u->thread, NULL);
		u->running = false;
	}
	damon_update_change_take(d);	/* stop reads the kdamond's state itself */
	damon_update_take(d, &pace);
}

void damon_update_fini(struct sampler_damon *d)
{
	struct damon_update *u = &d->upd;

	if (u->efd < 0)
		return;
	damon_update_stop(d);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->lock);
	close(u->efd);
	u->efd = -1;
}
