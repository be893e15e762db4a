/* SPDX-License-Identifier: GPL-2.0-only */
/* The binary trace form (sim/README.md, "Binary traces"). */
#ifndef TIERD_SIM_TRACE_BIN_H
#define TIERD_SIM_TRACE_BIN_H

#include <zlib.h>

#include "trace.h"

/* Read the rest of a binary trace after its magic; as sim_trace_read(). */
int sim_trace_read_bin(gzFile f, const char *path, struct sim_trace *t,
		       char *err);

#endif
