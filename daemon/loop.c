// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sd-event wiring (loop.h): the tick timer, the hotness source's peek
 * descriptor and its own, the kernel's hotplug uevents, the signals and
 * the watchdog.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "manager.h"
#include "uevent.h"

#define USEC_PER_MSEC 1000ull
/* sd-event's default timer slack is 250 ms: too coarse for interval_ms. */
#define TICK_ACCURACY_USEC 1000ull
/* A device's memory comes as a burst of uevents (the node, then each
 * 128 MiB block added and onlined): the topology is read once it settles. */
#define TOPO_SETTLE_USEC (500 * USEC_PER_MSEC)
/* Without uevents, how often the topology is read again. */
#define TOPO_POLL_USEC (10000 * USEC_PER_MSEC)

static int on_peek(sd_event_source *s, int fd, uint32_t revents, void *userdata);
static int on_peek_timer(sd_event_source *s, uint64_t usec, void *userdata);
static int on_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* Watch the descriptor manager_peek_fd() names now: none while peeks are off
 * (a reload may turn sampling.damon.idle_peek off), a new one when the
 * source started its feed again. */
static void peek_watch(struct loop *l)
{
	uint32_t gen = 0;
	int fd = manager_peek_fd(l->m, &gen), r;

	if (fd == l->peek_fd && (fd < 0 || gen == l->peek_gen))
		return;
	l->peek = sd_event_source_disable_unref(l->peek);
	l->peek_fd = fd;
	l->peek_gen = gen;
	if (fd < 0)
		return;
	r = sd_event_add_io(l->d->event, &l->peek, fd, EPOLLIN, on_peek, l);
	if (r < 0) {
		log_warn("Failed to watch the hotness source for new heat: %s; idle ticks come on time only",
			 strerror(-r));
		l->peek = NULL;
	}
}

/* Watch the descriptor manager_sampler_fd() names now.  on_ready() moves
 * one tick forward and turns the watch off; each tick turns it on again
 * unless the descriptor is still readable then (the tick did not drain, or
 * the source left the readiness): such a readiness is not news, and
 * watching it would make the loop tick without pause. */
static void ready_watch(struct loop *l)
{
	int fd = manager_sampler_fd(l->m), r;

	if (fd == l->ready_fd) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (l->ready && poll(&p, 1, 0) == 0)
			sd_event_source_set_enabled(l->ready, SD_EVENT_ON);
		return;
	}
	l->ready = sd_event_source_disable_unref(l->ready);
	l->ready_fd = fd;
	if (fd < 0)
		return;
	r = sd_event_add_io(l->d->event, &l->ready, fd, EPOLLIN, on_ready, l);
	if (r < 0) {
		log_warn("Failed to watch the hotness source: %s; its data waits for the next tick",
			 strerror(-r));
		l->ready = NULL;
	}
}

/* The next timed peek @at, if it comes before the tick (@tick_usec);
 * else none until the next tick. */
static void peek_timer_set(struct loop *l, uint64_t at, uint64_t tick_usec)
{
	int r = 0;

	if (at >= tick_usec) {
		if (l->peek_timer)
			sd_event_source_set_enabled(l->peek_timer, SD_EVENT_OFF);
		return;
	}
	if (!l->peek_timer)
		r = sd_event_add_time(l->d->event, &l->peek_timer, CLOCK_MONOTONIC, at,
				      TICK_ACCURACY_USEC, on_peek_timer, l);
	else
		r = sd_event_source_set_time(l->peek_timer, at);
	if (r >= 0)
		r = sd_event_source_set_enabled(l->peek_timer, SD_EVENT_ONESHOT);
	if (r < 0) {
		log_warn("Failed to time the hotness source's peeks: %s; idle ticks come on time only",
			 strerror(-r));
		l->peek_timer = sd_event_source_disable_unref(l->peek_timer);
	}
}

/* Timed peeks from now until the tick at @tick_usec, for a source that
 * has no descriptor to watch. */
static void peek_timer_watch(struct loop *l, uint64_t tick_usec)
{
	uint64_t every = manager_peek_every_ms(l->m) * USEC_PER_MSEC, now_usec;

	sd_event_now(l->d->event, CLOCK_MONOTONIC, &now_usec);
	peek_timer_set(l, every ? now_usec + every : UINT64_MAX, tick_usec);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *l = userdata;
	struct tierd *d = l->d;
	struct timespec a, b;
	uint64_t now_usec, next;

	clock_gettime(CLOCK_MONOTONIC, &a);
	manager_tick(l->m, a.tv_sec * 1000000000ull + a.tv_nsec);
	clock_gettime(CLOCK_MONOTONIC, &b);
	d->last_tick_duration_ns =
		(b.tv_sec - a.tv_sec) * 1000000000ull + b.tv_nsec - a.tv_nsec;

	/* Fixed rate (slower while idle); after a stall, start again from
	 * now rather than catch up. */
	l->interval_usec = manager_interval_ms(l->m) * USEC_PER_MSEC;
	next = usec + l->interval_usec;
	sd_event_now(d->event, CLOCK_MONOTONIC, &now_usec);
	if (next <= now_usec)
		next = now_usec + l->interval_usec;
	sd_event_source_set_time(s, next);
	peek_watch(l);
	peek_timer_watch(l, next);
	ready_watch(l);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* The source saw heat it did not know: a peek that finds it too while
 * tierd is idle moves the next tick to now.  manager_peek() takes the
 * readiness away whatever it decides. */
static int on_peek(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *l = userdata;
	struct tierd *d = l->d;
	uint64_t now_usec;

	sd_event_now(d->event, CLOCK_MONOTONIC, &now_usec);
	if (manager_peek(l->m, now_usec * 1000) > 0) {
		sd_event_source_set_time(l->tick, now_usec);
		sd_event_source_set_enabled(l->tick, SD_EVENT_ONESHOT);
	}
	return 0;
}

/* A timed peek: the tick now if it found new heat, else the next peek an
 * interval on, while that comes before the tick. */
static int on_peek_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *l = userdata;
	uint64_t now_usec, tick_usec = UINT64_MAX;

	sd_event_now(l->d->event, CLOCK_MONOTONIC, &now_usec);
	if (manager_peek(l->m, now_usec * 1000) > 0) {
		sd_event_source_set_time(l->tick, now_usec);
		return sd_event_source_set_enabled(l->tick, SD_EVENT_ONESHOT);
	}
	sd_event_source_get_time(l->tick, &tick_usec);
	peek_timer_watch(l, tick_usec);
	return 0;
}

/* A drain came back without what the source waited for, and it is there
 * now: the next tick at once rather than an interval later.  The tick's
 * drain takes the readiness; until then the watch is off. */
static int on_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *l = userdata;
	uint64_t now_usec;

	sd_event_source_set_enabled(s, SD_EVENT_OFF);
	sd_event_now(l->d->event, CLOCK_MONOTONIC, &now_usec);
	sd_event_source_set_time(l->tick, now_usec);
	return sd_event_source_set_enabled(l->tick, SD_EVENT_ONESHOT);
}

/* Read the topology again TOPO_SETTLE_USEC from now, unless that is due. */
static void rescan_soon(struct loop *l)
{
	uint64_t now_usec;
	int on = 0;

	if (!l->rescan || (sd_event_source_get_enabled(l->rescan, &on) >= 0 && on))
		return;
	sd_event_now(l->d->event, CLOCK_MONOTONIC, &now_usec);
	sd_event_source_set_time(l->rescan, now_usec + TOPO_SETTLE_USEC);
	sd_event_source_set_enabled(l->rescan, SD_EVENT_ONESHOT);
}

/* A node or a memory block came, went, was onlined or offlined. */
static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *l = userdata;
	int r = uevent_drain(fd);

	if (r < 0 && r != l->uevent_error)
		log_warn("Failed to read the kernel's uevents: %s (logged once until it changes)",
			 strerror(-r));
	l->uevent_error = r < 0 ? r : 0;
	if (r != 0)
		rescan_soon(l); /* an error may have lost one */
	return 0;
}

static int on_rescan(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *l = userdata;

	tierd_rescan_topology(l->d); /* logs what changed, or why it could not */
	if (l->uevent)
		return 0; /* the next uevent arms it */
	sd_event_source_set_time(s, usec + TOPO_POLL_USEC);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Memory hotplug: the kernel's uevents, else a read every TOPO_POLL_USEC.
 * Neither is fatal: the ticks' refresh still sees a node's memory come or
 * go. */
static void topo_watch(struct loop *l)
{
	struct tierd *d = l->d;
	int fd = uevent_open(), r;

	r = sd_event_add_time_relative(d->event, &l->rescan, CLOCK_MONOTONIC, TOPO_POLL_USEC,
				       TICK_ACCURACY_USEC, on_rescan, l);
	if (r < 0) {
		log_warn("Failed to set up the topology's rescan: %s; only the ticks see memory come or go",
			 strerror(-r));
		l->rescan = NULL;
	}
	if (fd >= 0) {
		r = sd_event_add_io(d->event, &l->uevent, fd, EPOLLIN, on_uevent, l);
		if (r >= 0)
			sd_event_source_set_io_fd_own(l->uevent, 1);
		else
			close(fd);
	} else {
		r = fd;
	}
	if (r < 0) {
		l->uevent = NULL;
		log_warn("Failed to follow the kernel's memory hotplug events: %s; the topology is read again every %llu s",
			 strerror(-r), TOPO_POLL_USEC / 1000000);
		return;
	}
	if (l->rescan)
		sd_event_source_set_enabled(l->rescan, SD_EVENT_OFF);
	log_debug("Following memory hotplug through the kernel's uevents");
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si,
		     void *userdata)
{
	struct tierd *d = userdata;
	char why[4096];

	if (si->ssi_signo == SIGHUP) {
		log_info("SIGHUP: reloading %s", d->config_path);
		tierd_reload(d, why, sizeof(why)); /* logs its own errors */
		return 0;
	}
	log_info("%s: stopping", strsignal(si->ssi_signo));
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

int loop_open(struct loop *l, struct tierd *d, struct manager *m)
{
	sigset_t ss;
	int r;

	*l = (struct loop){ .d = d, .m = m, .peek_fd = -1, .ready_fd = -1 };
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	r = sd_event_default(&d->event);
	if (r < 0)
		log_err("Failed to create the event loop: %s", strerror(-r));
	return r;
}

/* The longest wait between two ticks against systemd's watchdog. */
static void check_watchdog(const struct tierd *d)
{
	uint64_t wd_usec = 0;
	uint32_t ms = d->conf->interval_ms > d->conf->idle_interval_ms ?
			      d->conf->interval_ms :
			      d->conf->idle_interval_ms;

	if (sd_watchdog_enabled(0, &wd_usec) > 0 && ms * USEC_PER_MSEC * 2 > wd_usec)
		log_warn("interval_ms or idle_interval_ms %u is more than half of WatchdogSec: systemd may kill tierd",
			 ms);
}

int loop_arm(struct loop *l)
{
	struct tierd *d = l->d;
	int r;

	check_watchdog(d);
	r = sd_event_add_signal(d->event, NULL, SIGTERM, on_signal, d);
	if (r >= 0)
		r = sd_event_add_signal(d->event, NULL, SIGINT, on_signal, d);
	if (r >= 0)
		r = sd_event_add_signal(d->event, NULL, SIGHUP, on_signal, d);
	/* The first tick at once: READY=1 follows it. */
	if (r >= 0)
		r = sd_event_add_time_relative(d->event, &l->tick, CLOCK_MONOTONIC,
					       0, TICK_ACCURACY_USEC, on_tick, l);
	if (r < 0) {
		log_err("Failed to set up the event loop: %s", strerror(-r));
		return r;
	}
	topo_watch(l);
	return 0;
}

int loop_run(struct loop *l)
{
	int r = sd_event_loop(l->d->event);

	if (r < 0)
		log_err("Event loop failed: %s", strerror(-r));
	return r;
}

void loop_close(struct loop *l)
{
	l->peek = sd_event_source_disable_unref(l->peek);
	l->peek_timer = sd_event_source_disable_unref(l->peek_timer);
	l->ready = sd_event_source_disable_unref(l->ready);
	l->uevent = sd_event_source_disable_unref(l->uevent);
	l->rescan = sd_event_source_disable_unref(l->rescan);
	l->tick = sd_event_source_unref(l->tick);
	l->d->event = sd_event_unref(l->d->event);
}
