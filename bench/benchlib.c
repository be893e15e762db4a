// SPDX-License-Identifier: GPL-2.0-only
#include "benchlib.h"

#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KPF_THP_BIT 22
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define PM_PRESENT (1ULL << 63)

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Word i of the buffer holds a value mixed from i and the seed, so a page
 * that lands at the wrong offset, a stale page and a zeroed page all fail
 * the check.
 */
static inline uint64_t pattern_word(size_t i, uint64_t seed)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL ^ seed;

	return x ^ (x >> 29);
}

void bench_fill(void *buf, size_t bytes, uint64_t seed)
{
	uint64_t *w = buf;
	size_t i, n = bytes / sizeof(*w);

	for (i = 0; i < n; i++)
		w[i] = pattern_word(i, seed);
}

int bench_check(const void *buf, size_t bytes, uint64_t seed,
		size_t *ret_bad_offset)
{
	const uint64_t *w = buf;
	size_t i, n = bytes / sizeof(*w);

	for (i = 0; i < n; i++) {
		uint64_t want = pattern_word(i, seed);
		size_t b;

		if (w[i] == want)
			continue;
		/* Name the first wrong byte, not just the word. */
		for (b = 0; b < sizeof(want); b++)
			if (((const uint8_t *)&w[i])[b] !=
			    ((const uint8_t *)&want)[b])
				break;
		*ret_bad_offset = i * sizeof(*w) + b;
		return -EIO;
	}
	return 0;
}

int bench_alloc_on_node(size_t bytes, int node, bool thp, uint64_t seed,
			void **ret_buf)
{
	unsigned long mask[4] = { 0 };
	void *buf;

	if (node < 0 || node >= (int)(sizeof(mask) * 8))
		return -EINVAL;
	buf = aligned_alloc(BENCH_THP_BYTES, bytes);
	if (!buf)
		return -ENOMEM;
	if (madvise(buf, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) < 0)
		return -errno;
	mask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
	if (mbind(buf, bytes, MPOL_BIND, mask, sizeof(mask) * 8, 0) < 0)
		return -errno;
	bench_fill(buf, bytes, seed);
	if (mbind(buf, bytes, MPOL_DEFAULT, NULL, 0, 0) < 0)
		return -errno;
	*ret_buf = buf;
	return 0;
}

int bench_check_node(void **addrs, size_t n, int node, size_t *ret_bad,
		     int *ret_status)
{
	int *status;
	size_t i;
	int ret = 0;

	status = calloc(n, sizeof(*status));
	if (!status)
		return -ENOMEM;
	if (move_pages(0, n, addrs, NULL, status, 0) < 0) {
		ret = -errno;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (status[i] != node) {
			*ret_bad = i;
			*ret_status = status[i];
			ret = -EFAULT;
			break;
		}
	}
out:
	free(status);
	return ret;
}

int bench_check_thp(void **addrs, size_t n, bool want_thp, size_t *ret_bad)
{
	int pm, kpf, ret = 0;
	size_t i;

	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm < 0)
		return -errno;
	kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (kpf < 0) {
		ret = -errno;
		close(pm);
		return ret;
	}
	for (i = 0; i < n; i++) {
		uint64_t ent, flags, pfn;
		off_t off = (off_t)((uintptr_t)addrs[i] / BENCH_BASE_BYTES) * 8;

		if (pread(pm, &ent, sizeof(ent), off) != sizeof(ent)) {
			ret = -EIO;
			break;
		}
		pfn = ent & PM_PFN_MASK;
		if (!(ent & PM_PRESENT)) {
			*ret_bad = i;
			ret = -EFAULT;
			break;
		}
		if (!pfn) {
			ret = -EPERM;
			break;
		}
		if (pread(kpf, &flags, sizeof(flags), (off_t)pfn * 8) !=
		    sizeof(flags)) {
			ret = -EIO;
			break;
		}
		if (!!(flags & (1ULL << KPF_THP_BIT)) != want_thp) {
			*ret_bad = i;
			ret = -EFAULT;
			break;
		}
	}
	close(kpf);
	close(pm);
	return ret;
}

int bench_vmstat_read(struct bench_vmstat *ret)
{
	char line[256];
	FILE *f;

#define X(k) ret->k = -1;
	BENCH_VMSTAT_KEYS
#undef X
	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
#define X(k)                                             \
	if (!strcmp(line, #k))                           \
		ret->k = strtoll(sp + 1, NULL, 10);
		BENCH_VMSTAT_KEYS
#undef X
	}
	fclose(f);
	return 0;
}

void bench_vmstat_add(struct bench_vmstat *acc, const struct bench_vmstat *before,
		      const struct bench_vmstat *after)
{
#define X(k)                                               \
	if (before->k < 0 || after->k < 0 || acc->k < 0)   \
		acc->k = -1;                               \
	else                                               \
		acc->k += after->k - before->k;
	BENCH_VMSTAT_KEYS
#undef X
}

void bench_vmstat_json(FILE *f, const struct bench_vmstat *before,
		       const struct bench_vmstat *after)
{
	const char *sep = "";

	fputc('{', f);
#define X(k)                                                           \
	if (before->k >= 0 && after->k >= 0) {                         \
		fprintf(f, "%s\"%s\": %lld", sep, #k,                  \
			(long long)(after->k - before->k));            \
		sep = ", ";                                            \
	}
	BENCH_VMSTAT_KEYS
#undef X
	fputc('}', f);
}

int bench_parse_list(const char *s, long *ret, size_t max, size_t *ret_n)
{
	size_t n = 0;
	char *end;
	long a, b;

	a = strtol(s, &end, 10);
	if (end != s && *end == '-') {
		/* from-to: powers of two, e.g. 1-256 or 512-16384 */
		b = strtol(end + 1, &end, 10);
		if (*end || a < 1 || b < a)
			return -EINVAL;
		for (; a <= b; a *= 2) {
			if (n == max)
				return -E2BIG;
			ret[n++] = a;
		}
		*ret_n = n;
		return 0;
	}
	for (;;) {
		a = strtol(s, &end, 10);
		if (end == s || a < 1)
			return -EINVAL;
		if (n == max)
			return -E2BIG;
		ret[n++] = a;
		if (!*end)
			break;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
	*ret_n = n;
	return 0;
}
