/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Is a sampled address inside a PMD-sized transparent huge page?  The BPF
 * sampler counts 4 KiB pages; before they go into the hotness table this says
 * which 2 MiB ranges are one folio, so the table keeps one entry for it and
 * the policy moves it as one.  Reads /proc/PID/pagemap (the PFN, root only)
 * and /proc/kpageflags (KPF_THP); read only, no kernel state changes.
 *
 * A range counts as one PMD folio when its first page is a THP head whose PFN
 * is 512-aligned and its last page is a THP tail at PFN + 511.  (kpageflags
 * marks smaller mTHPs as THP too; they fail that test.)
 */
#ifndef TIERD_SYS_THP_H
#define TIERD_SYS_THP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define THP_CACHE 1024

struct thp_lookup {
	char proc_root[128];
	int kpageflags_fd;
	pid_t pid;		/* whose pagemap is open */
	int pagemap_fd;
	uint64_t probes;	/* pagemap/kpageflags lookups made */
	struct {
		pid_t pid;
		uint64_t base;
		bool huge;
	} cache[THP_CACHE];	/* answers of this drain */
};

/* 0, or -errno when /proc/kpageflags cannot be opened (not root, no CONFIG_PROC_PAGE_MONITOR). */
int thp_open(struct thp_lookup *l, const char *proc_root);
void thp_close(struct thp_lookup *l);

/*
 * Whether pagemap shows this process PFNs: the kernel zeroes them without
 * CAP_SYS_ADMIN, and then no range can be recognised as a THP.  1, 0, -errno.
 */
int thp_pfns_visible(const char *proc_root);

/* Forget the cached answers (once per drain: folios split and collapse). */
void thp_reset(struct thp_lookup *l);

/* 1 when @addr of @pid lies in a PMD-mapped THP, 0 when not, -errno on error. */
int thp_is_huge(struct thp_lookup *l, pid_t pid, uint64_t addr);

#endif
