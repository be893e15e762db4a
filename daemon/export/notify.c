// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "notify.h"

void notify_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void notify_status(const char *status)
{
	sd_notifyf(0, "STATUS=%s", status);
}

void notify_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

void notify_reloading(void)
{
	struct timespec ts;
	uint64_t monotonic_ns;

	/* systemd matches this against the time it sent the reload request. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	monotonic_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	sd_notifyf(
		0,
		"RELOADING=1\nSTATUS=Reloading configuration\nMONOTONIC_USEC=%" PRIu64,
		monotonic_ns / 1000);
}

void notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=Stopping: restoring kernel knobs");
}
