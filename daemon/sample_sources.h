/* SPDX-License-Identifier: GPL-2.0-only */
/* The real hotness sources step 1 picks from (sample_sources.c). */
#ifndef TIERD_SAMPLE_SOURCES_H
#define TIERD_SAMPLE_SOURCES_H

#include <stddef.h>

struct sampler;
struct tierd;
struct tierd_stats;

/* The DAMON source tracks at most this many processes. */
#define DAMON_MAX_TARGETS 64

/*
 * The real sources sampling.source allows, in the order tried, appended to
 * @cands at *@nr_cands (room for two); those ruled out go into
 * @st->sampler_not_taken.  Negative errno when the DAMON source cannot be
 * made.
 */
int sample_sources_new(const struct tierd *d, struct tierd_stats *st,
		       struct sampler **cands, size_t *nr_cands);

/* @item onto @list, "; "-joined. */
void sample_list_add(char *list, size_t len, const char *item);

#endif
