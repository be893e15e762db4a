/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket, RUNTIME_DIR/control.sock: one request per connection
 * (ctl_proto.h), served from the event loop without blocking it.  Anyone
 * may connect and read; the peer's SO_PEERCRED credentials decide who may
 * change anything (reload, dry-run on|off): root, or members of
 * control.group.
 */
#ifndef TIERD_CTL_SERVER_H
#define TIERD_CTL_SERVER_H

#include "daemon.h"

struct ctl_server;

/* Create the runtime directory if needed, bind and listen, and serve from
 * d->event.  -EADDRINUSE when another tierd answers on the socket. */
int ctl_server_start(struct tierd *d, struct ctl_server **ret);

/* Close every connection and remove the socket file.  Accepts NULL. */
void ctl_server_stop(struct ctl_server *s);

#endif
