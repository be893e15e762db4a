/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the lab benchmarks: node-bound buffers, a content
 * pattern checked byte for byte, node and THP placement checks, /proc/vmstat
 * deltas and a small JSON-lines writer.  Every function returns 0 or a
 * negative errno and prints nothing; the benchmark's main() reports.
 */
#ifndef TIERD_BENCHLIB_H
#define TIERD_BENCHLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_THP_BYTES (2UL << 20)
#define BENCH_BASE_BYTES 4096UL

uint64_t bench_now_ns(void);

/*
 * Allocate @bytes with aligned_alloc(2 MB), set MADV_HUGEPAGE (@thp) or
 * MADV_NOHUGEPAGE, bind it to @node, fault every page in by writing the
 * pattern for @seed, then drop the binding so later moves are not fought by
 * the policy.  The memory is not freed: benchmarks keep it until exit.
 */
int bench_alloc_on_node(size_t bytes, int node, bool thp, uint64_t seed,
			void **ret_buf);

void bench_fill(void *buf, size_t bytes, uint64_t seed);
/* 0 when every byte matches; -EIO and the first bad offset otherwise. */
int bench_check(const void *buf, size_t bytes, uint64_t seed,
		size_t *ret_bad_offset);

/*
 * Query the node of every address in @addrs (move_pages with nodes == NULL).
 * 0 when all are on @node; -EFAULT and the first misplaced index otherwise
 * (ret_status gets that page's status: a node or a negative errno).
 */
int bench_check_node(void **addrs, size_t n, int node, size_t *ret_bad,
		     int *ret_status);

/*
 * Check through /proc/self/pagemap and /proc/kpageflags that every address
 * in @addrs is (want_thp) or is not (!want_thp) the head of a THP.  Needs
 * CAP_SYS_ADMIN for the PFNs: -EPERM when they read as zero.
 */
int bench_check_thp(void **addrs, size_t n, bool want_thp, size_t *ret_bad);

/* Counters from /proc/vmstat that tell which migration path ran. */
#define BENCH_VMSTAT_KEYS                                                   \
	X(pgmigrate_success) X(pgmigrate_fail) X(thp_migration_success)     \
	X(thp_migration_split) X(pgmigrate_copy_batched) X(pgmigrate_copy_mt) \
	X(pgmigrate_copy_fallback) X(pgmigrate_copy_worker_ns)

struct bench_vmstat {
#define X(k) int64_t k;
	BENCH_VMSTAT_KEYS
#undef X
};

/* Missing counters read as -1 (vanilla kernels lack the copy counters). */
int bench_vmstat_read(struct bench_vmstat *ret);
/* acc += after - before; a counter missing on either side stays -1 in acc. */
void bench_vmstat_add(struct bench_vmstat *acc, const struct bench_vmstat *before,
		      const struct bench_vmstat *after);
void bench_vmstat_json(FILE *f, const struct bench_vmstat *before,
		       const struct bench_vmstat *after);

/* Parse "1,2,4" or "1-256" (powers of two from..to) into @ret (at most @max). */
int bench_parse_list(const char *s, long *ret, size_t max, size_t *ret_n);

#endif
