/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's id lists: "0-3,8,10-11" in a node's cpulist, a memory tier's
 * nodelist, cpu/online, a PMU format's bit ranges.  One parser for all.
 */
#ifndef TIERD_SYS_CPULIST_H
#define TIERD_SYS_CPULIST_H

#include <stdint.h>

/* Ids a caller that wants every CPU should make room for (the kernel's
 * largest NR_CPUS); 1 KiB of bitmap. */
#define CPULIST_MAX_IDS 8192

/*
 * Parse @s into @bitmap (@nbits bits, cleared first): ids and ranges of ids
 * separated by commas; the empty list, a trailing comma and a trailing
 * newline are fine.  *@ret_count (may be NULL) gets the number of ids set.
 * Returns 0, -EINVAL for anything else (a range that runs backwards
 * included) or -ERANGE for an id at or above @nbits.
 */
int cpulist_parse(const char *s, uint64_t *bitmap, unsigned int nbits,
		  unsigned int *ret_count);

/* fs_read() @root/@path (at most 4 KiB) and cpulist_parse() it. */
int cpulist_read(const char *root, const char *path, uint64_t *bitmap,
		 unsigned int nbits, unsigned int *ret_count);

#endif
