// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "thp.h"

#define PAGE_SHIFT 12
#define HUGE_PAGES 512ull
#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_THP 22

static int read_u64(int fd, uint64_t index, uint64_t *ret)
{
	ssize_t n = pread(fd, ret, sizeof(*ret), (off_t)(index * sizeof(*ret)));

	if (n < 0)
		return -errno;
	return n == sizeof(*ret) ? 0 : -EIO;
}

int thp_open(struct thp_lookup *l, const char *proc_root)
{
	char path[256];

	memset(l, 0, sizeof(*l));
	l->pagemap_fd = -1;
	snprintf(l->proc_root, sizeof(l->proc_root), "%s", proc_root ? proc_root : "/proc");
	snprintf(path, sizeof(path), "%s/kpageflags", l->proc_root);
	l->kpageflags_fd = open(path, O_RDONLY | O_CLOEXEC);
	return l->kpageflags_fd < 0 ? -errno : 0;
}

int thp_pfns_visible(const char *proc_root)
{
	volatile uint64_t here = 1;	/* on the stack, so present */
	char path[256];
	uint64_t pm;
	int fd, r;

	snprintf(path, sizeof(path), "%s/self/pagemap", proc_root ? proc_root : "/proc");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_u64(fd, (uint64_t)(uintptr_t)&here >> PAGE_SHIFT, &pm);
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
}

void thp_reset(struct thp_lookup *l)
{
	memset(l->cache, 0, sizeof(l->cache));
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

static int probe(struct thp_lookup *l, uint64_t base_vpn)
{
	uint64_t pfn0, pfn1, f0, f1;
	int r;

	l->probes++;
	r = pfn_of(l, base_vpn, &pfn0);
	if (r == 0)
		r = pfn_of(l, base_vpn + HUGE_PAGES - 1, &pfn1);
	if (r < 0)
		return r;
	if (!pfn0 || pfn0 % HUGE_PAGES || pfn1 != pfn0 + HUGE_PAGES - 1)
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
	uint64_t base_vpn = (addr >> PAGE_SHIFT) & ~(HUGE_PAGES - 1);
	size_t slot = (size_t)((base_vpn / HUGE_PAGES) ^ (uint64_t)pid) % THP_CACHE;
	int r;

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
	r = probe(l, base_vpn);
	if (r < 0)
		return r;
	l->cache[slot].pid = pid;
	l->cache[slot].base = base_vpn;
	l->cache[slot].huge = r;
	return r;
}
