/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sd_notify(3) messages.  Outside systemd (no NOTIFY_SOCKET) each is a no-op.
 */
#ifndef TIERD_NOTIFY_H
#define TIERD_NOTIFY_H

#include <stdint.h>

void notify_ready(const char *status);
void notify_status(const char *status);
void notify_watchdog(void);
/* RELOADING=1 with MONOTONIC_USEC= (now), as systemd 253+ expects. */
void notify_reloading(void);
void notify_stopping(void);

#endif
