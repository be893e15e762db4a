/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket's commands (ctl_proto.h's ops), apart from the socket:
 * ctl_server.c reads a request, checks its argument and the peer's right to
 * it, and hands it here.
 */
#ifndef TIERD_CTL_CMD_H
#define TIERD_CTL_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "ctl_proto.h"
#include "daemon.h"

/*
 * Run the request @h with its argument @arg, already checked, for the peer
 * @cred (logged with a reload); @now_ns is CLOCK_MONOTONIC.  Its text goes
 * to @f, JSON when @h asks for it.  Returns an enum ctl_result.
 */
int ctl_cmd_run(struct tierd *d, const struct ctl_header *h, const char *arg,
		const struct ucred *cred, uint64_t now_ns, FILE *f);

/* {"ok":@ok,"message":"@msg"} with @msg escaped, and a newline. */
void ctl_json_message(FILE *f, bool ok, const char *msg);

#endif
