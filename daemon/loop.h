/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The event loop: one sd-event loop that owns everything, and never
 * blocks (a wait is a timer or a descriptor here, never a sleep):
 *
 *   1. SIGTERM/SIGINT  -> leave the loop; the caller stops the manager
 *                         (STOPPING=1, kernel knobs restored)
 *   2. SIGHUP          -> tierd_reload(): parse, validate, swap or keep
 *   3. timer           -> manager_tick() every manager_interval_ms()
 *                         (WATCHDOG=1 there)
 *   4. peek descriptor -> manager_peek() while idle: the tick now if it
 *                         says so (a timer instead for a source that
 *                         has no descriptor)
 *   5. source's fd     -> the tick now: a drain came back without what
 *                         the source waited for, and it is there now
 *                         (the DAMON source's first regions)
 *   6. uevents         -> a node or memory block came, went, was onlined
 *                         or offlined: tierd_rescan_topology() once the
 *                         burst settles (a timer; every 10 s instead when
 *                         the kernel's uevents cannot be had)
 *   7. control socket  -> ctl_server.c (tierctl), on d->event
 */
#ifndef TIERD_LOOP_H
#define TIERD_LOOP_H

#include <stdint.h>

struct manager;
struct sd_event_source;
struct tierd;

struct loop {
	struct tierd *d;
	struct manager *m;
	uint64_t interval_usec;
	struct sd_event_source *tick, *peek, *ready;
	struct sd_event_source *peek_timer; /* manager_peek_every_ms() */
	struct sd_event_source *uevent, *rescan; /* memory hotplug */
	int uevent_error; /* the last one, logged once */
	int peek_fd; /* what peek watches, -1 none */
	uint32_t peek_gen;
	int ready_fd; /* what ready watches (manager_sampler_fd()), -1 none */
};

/* Block the signals the loop takes, and make d->event.  Logs errors. */
int loop_open(struct loop *l, struct tierd *d, struct manager *m);
/* The signals and the first tick (at once: READY=1 follows it), once the
 * manager runs.  Logs errors. */
int loop_arm(struct loop *l);
/* Until a signal ends it.  Returns 0 or a negative errno (logged). */
int loop_run(struct loop *l);
/* Accepts a loop that loop_open() failed on. */
void loop_close(struct loop *l);

#endif
