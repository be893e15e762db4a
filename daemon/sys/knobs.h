/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel knobs tierd owns while it runs, bpftune-style: the original
 * value is remembered (in memory and in a state file in the runtime
 * directory) before the first change; a value someone else wrote since is
 * theirs (tierd stops touching that knob and says so); on exit every knob
 * still holding tierd's value gets its original back; after a crash the
 * next start finds the state file and restores from it.
 *
 * Paths are read under a root directory ("" on a real system) through an
 * ops table, so tests run against fixture trees and can inject failures.
 */
#ifndef TIERD_SYS_KNOBS_H
#define TIERD_SYS_KNOBS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum knob_id {
	KNOB_COPY_MT,		/* vm.migrate_copy_mt: 0/1 (patched kernel) */
	KNOB_COPY_THREADS,	/* vm.migrate_copy_threads: 1..nr_cpu_ids */
	KNOB_COPY_PULL,		/* vm.migrate_copy_pull: 0 push, 1 pull */
	KNOB_BATCH_PAGES,	/* vm.migrate_batch_pages (read only to tierd) */
	KNOB_NUMA_BALANCING,	/* kernel.numa_balancing: bit 0 normal, bit 1 tiering */
	KNOB_DEMOTION,		/* /sys/kernel/mm/numa/demotion_enabled: true/false */
	KNOB_NR,
};

#define KNOB_NUMA_BALANCING_NORMAL 1
#define KNOB_NUMA_BALANCING_TIERING 2

struct knob_ops {
	/* Read @path into @buf (NUL-terminated); bytes read or -errno. */
	int (*read)(void *ctx, const char *path, char *buf, size_t len);
	/* Write @val to @path; 0 or -errno. */
	int (*write)(void *ctx, const char *path, const char *val);
};

extern const struct knob_ops knob_file_ops;

struct knob {
	bool present;
	bool owned;	/* tierd changed it and will restore it */
	bool managed;	/* tierd chose its value (k.set), written or already there */
	bool foreign;	/* changed by someone else after tierd: theirs now */
	long orig;
	long set;
	long would;	/* dry run: the last value tierd would have written */
};

struct knobs {
	const struct knob_ops *ops;
	void *ctx;
	char root[PATH_MAX];
	char state_path[PATH_MAX];
	/* Dry run: knobs_set() writes nothing and only records k[].would. */
	bool dry_run;
	struct knob k[KNOB_NR];
};

/* "vm.migrate_copy_mt", "kernel.numa_balancing", "demotion_enabled"... */
const char *knob_name(enum knob_id id);

/*
 * Probe which knobs exist under @root; the state file will be
 * STATE_DIR/knobs.state.  Writes nothing.  Returns 0 or -ENAMETOOLONG.
 */
int knobs_open(struct knobs *ks, const struct knob_ops *ops, void *ctx, const char *root,
	       const char *state_dir);

/*
 * Recover from a crashed run (call it once, where writing knobs is
 * allowed): if the state file exists, every knob it lists that still holds
 * the value the dead run set gets its original back (a knob changed since
 * is left as it is); the file is then removed.  *ret_recovered (may be
 * NULL) is how many were restored.  Returns 0, or a negative errno when the
 * state file exists but cannot be read or a restore write fails.
 */
int knobs_recover(struct knobs *ks, unsigned int *ret_recovered);

/* Current value: 0, -ENOENT when absent, -EINVAL when unparsable. */
int knobs_get(struct knobs *ks, enum knob_id id, long *ret);

/*
 * Set @id to @v.  The first change records the original (state file first,
 * then the write).  In a dry run nothing is written: k[id].would = @v.  Returns 0; -ENOENT when absent; -EBUSY when the knob
 * was changed by someone else since tierd set it (nothing written: back
 * off); or the errno of a failed write.
 */
int knobs_set(struct knobs *ks, enum knob_id id, long v);

/*
 * Has someone else changed a knob tierd set (or chose to leave at the value
 * it held)?  Returns 1 the first time a
 * change is seen (the knob becomes foreign; report it once), 0 otherwise,
 * or a negative errno.
 */
int knobs_check(struct knobs *ks, enum knob_id id);

/*
 * Put back every original still overwritten by tierd's value and remove the
 * state file.  Returns how many were restored, or the first failure's
 * negative errno (the others are still tried).
 */
int knobs_restore(struct knobs *ks);

/* The patched kernel's copy knobs are all there. */
bool knobs_have_copy(const struct knobs *ks);

/*
 * The copy-thread controller's decision: multi-threaded copy on/off, thread
 * count, pull (1) or push (0), or -1 to leave pull alone.  Only values that
 * differ are written.  Returns 0; -EOPNOTSUPP on a kernel without the knobs
 * (say so once and stop calling); -EBUSY when an administrator took one of
 * them over.
 */
int knobs_apply_copy(struct knobs *ks, bool mt, unsigned int threads, int pull);

enum knob_coexist {
	KNOB_TAKEOVER,		/* tierd does promotion: NUMA balancing off */
	KNOB_COEXIST,		/* leave the kernel's placement alone */
};

struct knob_coexist_status {
	int numa_balancing;	/* as found; -1 absent */
	int demotion_enabled;	/* as found; -1 absent */
	bool took_over;		/* tierd turned NUMA balancing off */
	const char *why;	/* one line for status and the log */
};

/*
 * Detect the kernel's own placement and, with KNOB_TAKEOVER, turn NUMA
 * balancing off (mode 1 pulls pages to the CPUs that touch them, mode 2
 * promotes from slow tiers: either moves the pages tierd manages) and
 * remember to restore it.  Reclaim-time demotion is left as it is in both
 * modes: it only acts under memory pressure and complements tierd.
 * Returns 0 or a negative errno from knobs_set().
 */
int knobs_coexist(struct knobs *ks, enum knob_coexist mode, struct knob_coexist_status *ret);

/* The kernel's own migrations, from ROOT/proc/vmstat (0 when absent). */
struct knob_vmstat {
	uint64_t pgpromote_success;
	uint64_t pgpromote_candidate;
	uint64_t pgdemote_kswapd;
	uint64_t pgdemote_direct;
	uint64_t pgdemote_khugepaged;
	uint64_t pgmigrate_success;
	uint64_t pgmigrate_copy_batched;
	uint64_t pgmigrate_copy_mt;
	uint64_t pgmigrate_copy_fallback;
};

int knobs_read_vmstat(struct knobs *ks, struct knob_vmstat *ret);

#endif
