/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Token bucket for byte-rate limits (global and per-cgroup migration rates,
 * the sampler's CPU share).  Pure: the caller passes the time.
 */
#ifndef TIERD_CORE_BUCKET_H
#define TIERD_CORE_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct bucket {
	uint64_t rate_per_s;	/* tokens added per second; 0 = unlimited */
	uint64_t burst;		/* the most tokens the bucket holds */
	uint64_t tokens;
	uint64_t last_ns;
};

/* A full bucket; @rate_per_s == 0 means no limit. */
void bucket_init(struct bucket *b, uint64_t rate_per_s, uint64_t burst, uint64_t now_ns);

/* Tokens available at @now_ns (UINT64_MAX when unlimited), after refilling. */
uint64_t bucket_avail(struct bucket *b, uint64_t now_ns);

/* Take @n tokens; the bucket may not go below zero: returns false and takes
 * nothing when fewer than @n are available. */
bool bucket_take(struct bucket *b, uint64_t n, uint64_t now_ns);

/* Take @n tokens, or all there are when fewer; returns how many were taken. */
uint64_t bucket_take_upto(struct bucket *b, uint64_t n, uint64_t now_ns);

#endif
