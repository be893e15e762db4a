// SPDX-License-Identifier: GPL-2.0-only
/*
 * sys/thp: which method thp_open() picks (PAGEMAP_SCAN, pagemap PFNs, none,
 * and why), each method's answer for a 2 MiB range (a fake PAGEMAP_SCAN;
 * a fixture /proc of sparse pagemap and kpageflags files), and PAGEMAP_SCAN
 * on this process's own memory where the kernel has it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "thp.h"
#include "test_geom.h"

#define MiB (1ull << 20)

/* A fake kernel: PAGEMAP_SCAN's answer is @regions clipped to the range
 * asked (as the kernel reports it), or @scan_ret when negative. */
struct fake {
	int scan_ret;
	const struct thp_region *regions;
	size_t nr_regions;
	int pfns_visible;
	int scans, visible_calls;
	uint64_t last_start, last_end;
};

static int fake_scan(void *ctx, int fd, uint64_t start, uint64_t end, struct thp_region *vec,
		     size_t n)
{
	struct fake *f = ctx;
	int out = 0;

	f->scans++;
	f->last_start = start;
	f->last_end = end;
	if (f->scan_ret < 0)
		return f->scan_ret;
	for (size_t i = 0; i < f->nr_regions && (size_t)out < n; i++) {
		const struct thp_region *r = &f->regions[i];

		if (r->end <= start || r->start >= end)
			continue;
		vec[out++] = (struct thp_region){ .start = r->start > start ? r->start : start,
						  .end = r->end < end ? r->end : end,
						  .huge = r->huge };
	}
	return out;
}

static int fake_pfns_visible(void *ctx, const char *proc_root, unsigned int page_shift)
{
	struct fake *f = ctx;

	f->visible_calls++;
	return f->pfns_visible;
}

static const struct thp_ops fake_ops = {
	.scan = fake_scan,
	.pfns_visible = fake_pfns_visible,
};

static void put_u64(const char *path, uint64_t index, uint64_t v)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	CHECK(fd >= 0);
	CHECK(pwrite(fd, &v, sizeof(v), (off_t)(index * sizeof(v))) == sizeof(v));
	close(fd);
}

/* A fixture /proc: ROOT/self/pagemap (empty: only opened) and ROOT/42/. */
static void make_root(char *root)
{
	char p[64];

	CHECK(mkdtemp(root) != NULL);
	snprintf(p, sizeof(p), "%s/42", root);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/self", root);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/self/pagemap", root);
	CHECK(close(open(p, O_WRONLY | O_CREAT, 0644)) == 0);
	snprintf(p, sizeof(p), "%s/42/pagemap", root);
	CHECK(close(open(p, O_WRONLY | O_CREAT, 0644)) == 0);
}

static void remove_root(const char *root)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

/*
 * A kernel without PAGEMAP_SCAN, as root: the PFN method, on a fake /proc
 * with a pagemap for pid 42 and kpageflags, as sparse files.
 */
static void test_thp_lookup(void)
{
	const uint64_t present = 1ull << 63, thp = 1ull << 22, head = 1ull << 15,
		       tail = 1ull << 16;
	char root[] = "/tmp/tierd-thp-XXXXXX", pm[64], kpf[64];
	struct thp_lookup *l = calloc(1, sizeof(*l));
	struct fake f = { .scan_ret = -ENOTTY, .pfns_visible = 1 };

	make_root(root);
	snprintf(pm, sizeof(pm), "%s/42/pagemap", root);
	snprintf(kpf, sizeof(kpf), "%s/kpageflags", root);
	/* 0x200000: a PMD THP at PFN 0x1000 (512-aligned), head and tail. */
	put_u64(pm, 0x200, present | 0x1000);
	put_u64(pm, 0x3ff, present | 0x11ff);
	put_u64(kpf, 0x1000, thp | head);
	put_u64(kpf, 0x11ff, thp | tail);
	/* 0x400000: first and last pages are THP (mTHPs) but not one folio. */
	put_u64(pm, 0x400, present | 0x2000);
	put_u64(pm, 0x5ff, present | 0x9000);
	put_u64(kpf, 0x2000, thp | head);
	put_u64(kpf, 0x9000, thp | head);
	/* 0x600000: contiguous, aligned, but plain pages. */
	put_u64(pm, 0x600, present | 0x4000);
	put_u64(pm, 0x7ff, present | 0x41ff);
	/* 0x800000: not present. */
	put_u64(pm, 0x800, 0);
	put_u64(pm, 0x9ff, 0);

	CHECK_EQ_INT(thp_open_ops(l, root, &test_geom, &fake_ops, &f), 0);
	CHECK_EQ_INT(l->method, THP_PFN);
	CHECK_EQ_STR(thp_method_name(l->method), "pagemap PFNs");
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x2abcde), 1);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x200000), 1);	/* cached */
	CHECK_EQ_U64(l->probes, 1);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x400000), 0);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x600000), 0);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x800000), 0);
	CHECK_EQ_INT(thp_is_huge(l, 43, 0x200000), -ENOENT);	/* no such pid */
	thp_reset(l);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x200000), 1);
	CHECK_EQ_U64(l->probes, 5);
	CHECK_EQ_INT(f.scans, 1);	/* the probe only */
	thp_close(l);
	free(l);
	remove_root(root);
	CHECK_EQ_INT(thp_open(l = calloc(1, sizeof(*l)), "/nonexistent/proc", &test_geom), -ENOENT);
	CHECK_EQ_STR(l->why, "/nonexistent/proc/self/pagemap: No such file or directory");
	free(l);
}

/* PAGEMAP_SCAN: the range is one THP only when one huge region covers it. */
static void test_scan(void)
{
	const struct thp_region regions[] = {
		{ 0x200000, 0x400000, true },	/* one PMD THP */
		{ 0x600000, 0xa00000, true },	/* two, reported as one region */
		{ 0xc00000, 0xd00000, true },	/* half a range: not a PMD mapping */
		{ 0xe00000, 0x1000000, false },	/* covered, not huge */
	};
	char root[] = "/tmp/tierd-thp-XXXXXX";
	struct thp_lookup *l = calloc(1, sizeof(*l));
	struct fake f = { .regions = regions, .nr_regions = 4, .pfns_visible = 1 };

	make_root(root);
	CHECK_EQ_INT(thp_open_ops(l, root, &test_geom, &fake_ops, &f), 0);
	CHECK_EQ_INT(l->method, THP_SCAN);
	CHECK_EQ_STR(thp_method_name(l->method), "PAGEMAP_SCAN");
	CHECK_EQ_INT(f.visible_calls, 0);	/* PFNs are not needed */
	CHECK_EQ_INT(l->kpageflags_fd, -1);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x2abcde), 1);
	CHECK_EQ_U64(f.last_start, 0x200000);	/* the whole 2 MiB range */
	CHECK_EQ_U64(f.last_end, 0x400000);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x3fffff), 1);	/* cached */
	CHECK_EQ_U64(l->probes, 1);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x600000), 1);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x9ff000), 1);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0xc00000), 0);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0xe00000), 0);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x1000000), 0);	/* nothing mapped */
	CHECK_EQ_INT(thp_is_huge(l, 43, 0x200000), -ENOENT);	/* no such pid */
	CHECK_EQ_U64(l->probes, 6);
	/* The process exits between open and scan. */
	f.scan_ret = -ESRCH;
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x1200000), -ESRCH);
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x200000), 1);	/* cached */
	thp_close(l);
	free(l);
	remove_root(root);
}

/* Neither method: thp_open() fails and says why; lookups refuse. */
static void test_none(void)
{
	char root[] = "/tmp/tierd-thp-XXXXXX", want[192];
	struct thp_lookup *l = calloc(1, sizeof(*l));
	struct fake f = { .scan_ret = -ENOTTY, .pfns_visible = 0 };

	make_root(root);
	/* An older kernel, without CAP_SYS_ADMIN (the shipped unit). */
	CHECK_EQ_INT(thp_open_ops(l, root, &test_geom, &fake_ops, &f), -EPERM);
	CHECK_EQ_INT(l->method, THP_NONE);
	CHECK_EQ_STR(l->why, "the kernel has no PAGEMAP_SCAN (Linux >= 6.7), "
		     "and pagemap hides PFNs (needs CAP_SYS_ADMIN)");
	CHECK_EQ_INT(thp_is_huge(l, 42, 0x200000), -ENOTCONN);
	CHECK_EQ_U64(l->probes, 0);
	thp_close(l);
	/* EINVAL is the same; PFNs visible but no kpageflags. */
	f = (struct fake){ .scan_ret = -EINVAL, .pfns_visible = 1 };
	CHECK_EQ_INT(thp_open_ops(l, root, &test_geom, &fake_ops, &f), -ENOENT);
	snprintf(want, sizeof(want), "the kernel has no PAGEMAP_SCAN (Linux >= 6.7), "
		 "and %s/kpageflags: No such file or directory", root);
	CHECK_EQ_STR(l->why, want);
	thp_close(l);
	/* Another error is named as it is. */
	f = (struct fake){ .scan_ret = -EPERM, .pfns_visible = 0 };
	CHECK_EQ_INT(thp_open_ops(l, root, &test_geom, &fake_ops, &f), -EPERM);
	CHECK_EQ_STR(l->why, "PAGEMAP_SCAN: Operation not permitted, "
		     "and pagemap hides PFNs (needs CAP_SYS_ADMIN)");
	thp_close(l);
	free(l);
	remove_root(root);
}

/* AnonHugePages of the mapping that starts at @addr in our smaps, in KiB. */
static long anon_huge_kib(uint64_t addr)
{
	char line[256], want[32];
	long kib = -1;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%" PRIx64 "-", addr);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, want, strlen(want));
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

/*
 * The real PAGEMAP_SCAN on this process (no privileges needed): a
 * MADV_HUGEPAGE range the kernel backed with a THP is one, a
 * MADV_NOHUGEPAGE range of base pages is not.  Where the kernel has no
 * PAGEMAP_SCAN or gives no THP, says so and checks what it can.
 */
static void test_scan_self(void)
{
	struct thp_lookup *l = calloc(1, sizeof(*l));
	size_t len = 4 * MiB;
	char *map = mmap(NULL, len + 2 * MiB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *huge, *small;
	int r;

	CHECK(map != MAP_FAILED);
	huge = (char *)(((uintptr_t)map + 2 * MiB - 1) & ~(uintptr_t)(2 * MiB - 1));
	small = huge + 2 * MiB;
	r = thp_open(l, "/proc", &test_geom);
	if (r < 0) {
		printf("note: no THP lookups here (%s); PAGEMAP_SCAN not checked\n", l->why);
		CHECK(r == -EPERM || r == -EACCES || r == -ENOENT);
		goto out;
	}
	if (l->method != THP_SCAN) {
		printf("note: the kernel has no PAGEMAP_SCAN; checked through %s\n",
		       thp_method_name(l->method));
	}
	/* Split the mapping: the first 2 MiB may be huge, the next not. */
	CHECK(madvise(huge, 2 * MiB, MADV_HUGEPAGE) == 0);
	CHECK(madvise(small, 2 * MiB, MADV_NOHUGEPAGE) == 0);
	memset(huge, 1, 2 * MiB);
	memset(small, 1, 2 * MiB);
	CHECK_EQ_INT(thp_is_huge(l, getpid(), (uint64_t)(uintptr_t)small + 12345), 0);
	if (anon_huge_kib((uint64_t)(uintptr_t)huge) != 2048) {
		printf("note: the kernel gave no THP to the MADV_HUGEPAGE range "
		       "(transparent_hugepage off?); only the base pages checked\n");
		goto out;
	}
	CHECK_EQ_INT(thp_is_huge(l, getpid(), (uint64_t)(uintptr_t)huge + 12345), 1);
out:
	thp_close(l);
	free(l);
	munmap(map, len + 2 * MiB);
}

int main(void)
{
	RUN(test_thp_lookup);
	RUN(test_scan);
	RUN(test_none);
	RUN(test_scan_self);
	return TEST_EXIT();
}
