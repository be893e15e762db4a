/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Access traces: one record per (time, tenant, page, accesses).  The text
 * form is "time_us,tenant,page,accesses" per line with '#' comments, plain
 * or gzip; the binary form is described in sim/README.md.  sim_trace_read()
 * tells them apart by the binary magic.
 */
#ifndef TIERD_SIM_TRACE_H
#define TIERD_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define SIM_TRACE_MAGIC "TIERSIMT"	/* 8 bytes, then one version byte */
#define SIM_TRACE_VERSION 1
#define SIM_TRACE_MAX_TENANTS 4096
#define SIM_TRACE_LINE 4096

struct sim_rec {
	uint64_t time_us;
	uint64_t page;		/* base page number in the tenant's space */
	uint64_t accesses;	/* since this tenant's previous record of it */
	uint32_t tenant;	/* index into sim_trace.tenants */
};

struct sim_trace {
	struct sim_rec *recs;
	size_t nr_recs, cap_recs;
	char **tenants;		/* cgroup-like paths, "/a/b" */
	uint32_t nr_tenants;
	/* The base page its page numbers count, from a text trace's
	 * "# page_bytes: N" line (tierd --record writes one); 0: not said. */
	uint64_t page_bytes;
};

/*
 * Read a trace (text, gzip text or binary) into @t, which the caller
 * initialises to zero and frees with sim_trace_free().  0, or a negative
 * errno with "FILE:LINE: reason" in @err (SIM_ERR_LEN bytes).
 */
int sim_trace_read(const char *path, struct sim_trace *t, char *err);

/* Index of tenant @name, added if new; a negative errno on failure. */
int sim_trace_tenant(struct sim_trace *t, const char *name);

/* Append one record; times must not go backwards (-EINVAL). */
int sim_trace_add(struct sim_trace *t, const struct sim_rec *r);

int sim_trace_write_text(const char *path, const struct sim_trace *t);
int sim_trace_write_bin(const char *path, const struct sim_trace *t);

void sim_trace_free(struct sim_trace *t);

#endif
