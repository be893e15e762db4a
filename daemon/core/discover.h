/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether a new hot set is being found: the share of samples that land on
 * memory the hotness table holds no heat for (hot_stats.fresh of
 * hot_stats.samples), against its least over the last minute.  Pure: the
 * caller hands in the table's counters and the time.
 *
 * A source that samples one event in N (hardware sampling) sees a settled
 * workload's hot memory again and again, and its cold memory now and then:
 * the fresh share is what chance gives the cold memory.  When the hot set
 * moves, or a phase starts, the new hot memory's first samples are all
 * fresh and the share rises several times over.  The policy's crowded
 * floor (policy_noise.c) waits for a second sample against chance; while
 * the share says the fresh samples are news rather than chance, one will
 * do (policy_input.news_since_ns).  Memory that is warm all over (uniform
 * access) keeps the share high, and never several times its least.
 *
 * Samples, not records: a source that counts a page's samples between
 * drains records the page once, whatever its count, so a drain after a
 * long idle tick folds the hot pages' many samples into few records and
 * its share of fresh records would rise with nothing new.
 */
#ifndef TIERD_CORE_DISCOVER_H
#define TIERD_CORE_DISCOVER_H

#include <stdbool.h>
#include <stdint.h>

#define DISCOVER_SLOTS 12		/* the least share's history: slots ... */
#define DISCOVER_SLOT_NS 5000000000ull	/* ... of 5 s: a minute */
#define DISCOVER_MIN_SAMPLES 256	/* a share measured over no fewer */
#define DISCOVER_RATIO 3.0		/* news: this many times the least share's fresh samples, */
#define DISCOVER_LEAST_FRESH 8		/* or this many, where that is fewer */

struct discover {
	uint64_t samples, fresh;	/* the counters where the share's count began ... */
	uint64_t at_ns;			/* ... and when */
	bool started;
	bool on;			/* discover_step()'s answer */
	uint64_t since_ns;		/* while on: when the count that found news began */
	double share, quiet;		/* the last share measured, the least one then */
	float min[DISCOVER_SLOTS];	/* the least share measured in each slot ... */
	uint64_t slot[DISCOVER_SLOTS];	/* ... of this number (now / SLOT_NS + 1; 0 none) */
};

/*
 * Take the table's hot_stats.samples and .fresh at @now_ns; true while the
 * fresh samples since the last count are DISCOVER_RATIO times or more what
 * the least share measured before in the last DISCOVER_SLOTS slots (the
 * current one included) gives as many samples, or than
 * DISCOVER_LEAST_FRESH where that gives fewer (a few fresh samples among
 * a settled set's are not news).  A share is counted once
 * DISCOVER_MIN_SAMPLES samples have come since the last; between, the
 * answer stands.  No share counted before: false.  Counters that went
 * back (a new table) start the count again.
 */
bool discover_step(struct discover *d, uint64_t samples, uint64_t fresh, uint64_t now_ns);

#endif
