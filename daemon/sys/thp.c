// SPDX-License-Identifier: GPL-2.0-only
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "thp.h"

/* Linux 6.7's PAGEMAP_SCAN, for userspace headers older than that. */
#ifndef PAGEMAP_SCAN
struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_HUGE (1 << 6)
#endif
static_assert(sizeof(struct pm_scan_arg) == 96, "struct pm_scan_arg is Linux's");

#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_THP 22

static int real_scan(void *ctx, int fd, uint64_t start, uint64_t end, struct thp_region *vec,
		     size_t n)
{
	struct page_region pr[THP_REGIONS];
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = start,
		.end = end,
		.vec = (uint64_t)(uintptr_t)pr,
		.vec_len = n < THP_REGIONS ? n : THP_REGIONS,
		/* Mapped by a present huge PMD (not a migration entry). */
		.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT,
		.return_mask = PAGE_IS_HUGE,
	};
	int r = ioctl(fd, PAGEMAP_SCAN, &arg);

	if (r < 0)
		return -errno;
	for (int i = 0; i < r; i++)
		vec[i] = (struct thp_region){ .start = pr[i].start, .end = pr[i].end,
					      .huge = pr[i].categories & PAGE_IS_HUGE };
	return r;
}

static int real_pfns_visible(void *ctx, const char *proc_root, unsigned int page_shift)
{
	return thp_pfns_visible(proc_root, page_shift);
}

const struct thp_ops thp_real_ops = {
	.scan = real_scan,
	.pfns_visible = real_pfns_visible,
};

static int read_u64(int fd, uint64_t index, uint64_t *ret)
{
	ssize_t n = pread(fd, ret, sizeof(*ret), (off_t)(index * sizeof(*ret)));

	if (n < 0)
		return -errno;
	return n == sizeof(*ret) ? 0 : -EIO;
}

const char *thp_method_name(enum thp_method m)
{
	switch (m) {
	case THP_SCAN:
		return "PAGEMAP_SCAN";
	case THP_PFN:
		return "pagemap PFNs";
	default:
		return "none";
	}
}

/* Does this kernel take PAGEMAP_SCAN?  Asked of our own pagemap. */
static int scan_works(struct thp_lookup *l)
{
	volatile uint64_t here = 1; /* on the stack, so mapped */
	uint64_t page = (uint64_t)(uintptr_t)&here & ~(l->geom.base - 1);
	struct thp_region vec[THP_REGIONS];
	char path[256];
	int fd, r;

	snprintf(path, sizeof(path), "%s/self/pagemap", l->proc_root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(l->why, sizeof(l->why), "%s/self/pagemap: %s", l->proc_root,
			 strerror(-r));
		return r;
	}
	r = l->ops->scan(l->ctx, fd, page, page + l->geom.base, vec, THP_REGIONS);
	close(fd);
	if (r >= 0)
		return 0;
	if (r == -ENOTTY || r == -EINVAL)
		snprintf(l->why, sizeof(l->why), "the kernel has no PAGEMAP_SCAN (Linux >= 6.7)");
	else
		snprintf(l->why, sizeof(l->why), "PAGEMAP_SCAN: %s", strerror(-r));
	return r;
}

/* The PFN method's prerequisites; l->why already says why not PAGEMAP_SCAN. */
static int pfns_work(struct thp_lookup *l)
{
	size_t n = strlen(l->why);
	char path[256];
	int r = l->ops->pfns_visible(l->ctx, l->proc_root, l->geom.shift);

	if (r == 0) {
		snprintf(l->why + n, sizeof(l->why) - n,
			 ", and pagemap hides PFNs (needs CAP_SYS_ADMIN)");
		return -EPERM;
	}
	if (r < 0) {
		snprintf(l->why + n, sizeof(l->why) - n, ", and %s/self/pagemap: %s",
			 l->proc_root, strerror(-r));
		return r;
	}
	snprintf(path, sizeof(path), "%s/kpageflags", l->proc_root);
	l->kpageflags_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (l->kpageflags_fd < 0) {
		r = -errno;
		snprintf(l->why + n, sizeof(l->why) - n, ", and %s/kpageflags: %s", l->proc_root,
			 strerror(-r));
		return r;
	}
	return 0;
}

int thp_open_ops(struct thp_lookup *l, const char *proc_root, const struct page_geom *g,
		 const struct thp_ops *ops, void *ctx)
{
	int r;

	memset(l, 0, sizeof(*l));
	l->geom = *g;
	l->ops = ops;
	l->ctx = ctx;
	l->pagemap_fd = l->kpageflags_fd = -1;
	snprintf(l->proc_root, sizeof(l->proc_root), "%s", proc_root ? proc_root : "/proc");
	if (!g->thp) {
		snprintf(l->why, sizeof(l->why), "the kernel has no PMD THPs (no %s)",
			 "transparent_hugepage/hpage_pmd_size");
		return -ENOTSUP;
	}
	r = scan_works(l);
	if (r == 0) {
		l->method = THP_SCAN;
		return 0;
	}
	if (r == -ENOENT) /* no pagemap at all */
		return r;
	r = pfns_work(l);
	if (r < 0)
		return r;
	l->why[0] = '\0';
	l->method = THP_PFN;
	return 0;
}

int thp_open(struct thp_lookup *l, const char *proc_root, const struct page_geom *g)
{
	return thp_open_ops(l, proc_root, g, &thp_real_ops, NULL);
}

int thp_pfns_visible(const char *proc_root, unsigned int page_shift)
{
	volatile uint64_t here = 1;	/* on the stack, so present */
	char path[256];
	uint64_t pm;
	int fd, r;

	snprintf(path, sizeof(path), "%s/self/pagemap", proc_root ? proc_root : "/proc");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_u64(fd, (uint64_t)(uintptr_t)&here >> page_shift, &pm);
	close(fd);
	if (r < 0)
		return r;
	return (pm & PM_PRESENT) && (pm & PM_PFN_MASK) ? 1 : 0;
}

void thp_close(struct thp_lookup *l)
{
	if (l->kpageflags_fd >= 0)
		close(l->kpageflags_fd);
	if (l->pagemap_fd >= 0)
		close(l->pagemap_fd);
	l->kpageflags_fd = l->pagemap_fd = -1;
	l->method = THP_NONE;
}

void thp_reset(struct thp_lookup *l)
{
	memset(l->cache, 0, sizeof(l->cache));
}

/* One PMD mapping covers the PMD range at @base: PAGEMAP_SCAN's regions
 * are merged runs, so it is inside one of them. */
static int probe_scan(struct thp_lookup *l, uint64_t base)
{
	struct thp_region vec[THP_REGIONS];
	uint64_t end = base + l->geom.pmd;
	int n = l->ops->scan(l->ctx, l->pagemap_fd, base, end, vec, THP_REGIONS);

	if (n < 0)
		return n;
	for (int i = 0; i < n && i < THP_REGIONS; i++)
		if (vec[i].huge && vec[i].start <= base && vec[i].end >= end)
			return 1;
	return 0;
}

/* PFN of @vpn, 0 when not present (or when we may not see PFNs). */
static int pfn_of(struct thp_lookup *l, uint64_t vpn, uint64_t *ret)
{
	uint64_t pm;
	int r = read_u64(l->pagemap_fd, vpn, &pm);

	if (r < 0)
		return r;
	*ret = pm & PM_PRESENT ? pm & PM_PFN_MASK : 0;
	return 0;
}

static int probe_pfn(struct thp_lookup *l, uint64_t base_vpn)
{
	uint64_t n = page_geom_pmd_pages(&l->geom), pfn0, pfn1, f0, f1;
	int r;

	r = pfn_of(l, base_vpn, &pfn0);
	if (r == 0)
		r = pfn_of(l, base_vpn + n - 1, &pfn1);
	if (r < 0)
		return r;
	if (!pfn0 || pfn0 % n || pfn1 != pfn0 + n - 1)
		return 0;
	r = read_u64(l->kpageflags_fd, pfn0, &f0);
	if (r == 0)
		r = read_u64(l->kpageflags_fd, pfn1, &f1);
	if (r < 0)
		return r;
	return (f0 >> KPF_THP & 1) && (f0 >> KPF_COMPOUND_HEAD & 1) &&
	       (f1 >> KPF_THP & 1) && (f1 >> KPF_COMPOUND_TAIL & 1);
}

int thp_is_huge(struct thp_lookup *l, pid_t pid, uint64_t addr)
{
	uint64_t base_vpn = page_geom_pmd_base(&l->geom, addr) >> l->geom.shift;
	size_t slot = (size_t)((addr >> l->geom.pmd_shift) ^ (uint64_t)pid) % THP_CACHE;
	int r;

	if (l->method == THP_NONE)
		return -ENOTCONN;
	if (l->cache[slot].pid == pid && l->cache[slot].base == base_vpn)
		return l->cache[slot].huge;
	if (l->pid != pid || l->pagemap_fd < 0) {
		char path[256];

		if (l->pagemap_fd >= 0)
			close(l->pagemap_fd);
		snprintf(path, sizeof(path), "%s/%d/pagemap", l->proc_root, (int)pid);
		l->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
		l->pid = pid;
		if (l->pagemap_fd < 0)
			return -errno;
	}
	l->probes++;
	r = l->method == THP_SCAN ? probe_scan(l, base_vpn << l->geom.shift) :
				    probe_pfn(l, base_vpn);
	if (r < 0)
		return r;
	l->cache[slot].pid = pid;
	l->cache[slot].base = base_vpn;
	l->cache[slot].huge = r;
	return r;
}
