/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What tierctl status, nodes and cgroups print: rendered by tierd from its
 * state, as aligned text for people or as one JSON object for programs.
 */
#ifndef TIERD_STATUS_H
#define TIERD_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#include "daemon.h"
#include "fmt.h"

void status_render(const struct tierd *d, FILE *f, bool json, uint64_t now_ns);
void status_render_nodes(const struct tierd *d, FILE *f, bool json);
void status_render_cgroups(const struct tierd *d, FILE *f, bool json);

#endif
