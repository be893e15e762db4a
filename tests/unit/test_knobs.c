// SPDX-License-Identifier: GPL-2.0-only
/*
 * Knob ownership against copies of tests/fixtures/knobs (argv[1]): save,
 * set, a foreign change, restore, crash recovery, coexistence, vanilla.
 * Never touches this machine's own knobs: every path is under a temporary
 * copy of the fixture tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knobs.h"
#include "test.h"

static const char *fixtures;
static char tree[PATH_MAX], state[PATH_MAX];
static char src_root[PATH_MAX];

static int copy_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char dst[PATH_MAX * 2], buf[4096];
	int in, out;
	ssize_t n;

	snprintf(dst, sizeof(dst), "%s%s", tree, path + strlen(src_root));
	if (type == FTW_D)
		return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
	in = open(path, O_RDONLY);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

/* A fresh writable copy of fixture @name; a fresh state directory. */
static void fresh(const char *name)
{
	char tmpl[] = "/tmp/tierd-knobs.XXXXXX";

	if (tree[0])
		nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (state[0])
		nftw(state, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(tree, sizeof(tree), "%s", mkdtemp(tmpl));
	snprintf(tmpl, sizeof(tmpl), "/tmp/tierd-state.XXXXXX");
	snprintf(state, sizeof(state), "%s", mkdtemp(tmpl));
	snprintf(src_root, sizeof(src_root), "%s/%s", fixtures, name);
	if (nftw(src_root, copy_one, 16, FTW_PHYS) != 0)
		fprintf(stderr, "cannot copy %s\n", src_root);
}

static const char *slurp(const char *rel)
{
	static char buf[4096];
	char path[PATH_MAX * 2];
	int fd, n;

	snprintf(path, sizeof(path), "%s", rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "(missing)";
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static const char *knob_file(const char *rel)
{
	static char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s%s", tree, rel);
	return slurp(path);
}

static void admin_writes(const char *rel, const char *val)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s%s", tree, rel);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		fprintf(stderr, "cannot write %s\n", path);
	close(fd);
}

static const char *state_file(void)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/knobs.state", state);
	return slurp(path);
}

#define THREADS "/proc/sys/vm/migrate_copy_threads"
#define MT "/proc/sys/vm/migrate_copy_mt"
#define NB "/proc/sys/kernel/numa_balancing"

static void test_set_and_restore(void)
{
	struct knobs ks;
	unsigned int rec = 99;
	long v;

	fresh("patched");
	CHECK_EQ_INT(knobs_open(&ks, &knob_file_ops, NULL, tree, state), 0);
	CHECK_EQ_INT(knobs_recover(&ks, &rec), 0);
	CHECK_EQ_INT(rec, 0);
	CHECK(knobs_have_copy(&ks));
	CHECK_EQ_INT(knobs_get(&ks, KNOB_BATCH_PAGES, &v), 0);
	CHECK_EQ_INT(v, 512);
	CHECK_EQ_INT(knobs_get(&ks, KNOB_DEMOTION, &v), 0);
	CHECK_EQ_INT(v, 1);

	CHECK_EQ_INT(knobs_apply_copy(&ks, true, 4, 1), 0);
	CHECK_EQ_STR(knob_file(MT), "1");
	CHECK_EQ_STR(knob_file(THREADS), "4");
	CHECK_EQ_STR(knob_file("/proc/sys/vm/migrate_copy_pull"), "1");
	CHECK_EQ_STR(state_file(),
		     "# tierd: kernel knobs to restore if tierd dies (name original set)\n"
		     "vm.migrate_copy_mt 0 1\n"
		     "vm.migrate_copy_threads 1 4\n"
		     "vm.migrate_copy_pull 0 1\n");
	/* A later change keeps the first original. */
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_THREADS, 2), 0);
	CHECK_EQ_STR(knob_file(THREADS), "2");
	CHECK_EQ_INT(ks.k[KNOB_COPY_THREADS].orig, 1);
	CHECK_EQ_INT(knobs_check(&ks, KNOB_COPY_THREADS), 0);

	CHECK_EQ_INT(knobs_restore(&ks), 3);
	CHECK_EQ_STR(knob_file(MT), "0");
	CHECK_EQ_STR(knob_file(THREADS), "1");
	CHECK_EQ_STR(knob_file("/proc/sys/vm/migrate_copy_pull"), "0");
	CHECK_EQ_STR(state_file(), "(missing)");
}

static void test_foreign_change(void)
{
	struct knobs ks;

	fresh("patched");
	CHECK_EQ_INT(knobs_open(&ks, &knob_file_ops, NULL, tree, state), 0);
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_THREADS, 4), 0);
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_MT, 1), 0);
	admin_writes(THREADS, "6\n");
	/* Noticed once, then it is theirs. */
	CHECK_EQ_INT(knobs_check(&ks, KNOB_COPY_THREADS), 1);
	CHECK_EQ_INT(knobs_check(&ks, KNOB_COPY_THREADS), 0);
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_THREADS, 3), -EBUSY);
	CHECK_EQ_INT(knobs_apply_copy(&ks, true, 3, -1), -EBUSY);
	CHECK_EQ_STR(knob_file(THREADS), "6\n");
	CHECK_EQ_STR(state_file(),
		     "# tierd: kernel knobs to restore if tierd dies (name original set)\n"
		     "vm.migrate_copy_mt 0 1\n");
	/* A change noticed only at exit: not overwritten either. */
	admin_writes(MT, "0\n");
	CHECK_EQ_INT(knobs_restore(&ks), 0);
	CHECK_EQ_STR(knob_file(MT), "0\n");
	CHECK_EQ_STR(knob_file(THREADS), "6\n");
	CHECK_EQ_STR(state_file(), "(missing)");
	/* Setting a knob to what it already holds owns nothing... */
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_PULL, 0), 0);
	CHECK(!ks.k[KNOB_COPY_PULL].owned);
	/* ...but tierd chose that value: an administrator's change is
	 * noticed, and tierd does not write over it later. */
	admin_writes("/proc/sys/vm/migrate_copy_pull", "1\n");
	CHECK_EQ_INT(knobs_check(&ks, KNOB_COPY_PULL), 1);
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_PULL, 0), -EBUSY);
	CHECK_EQ_STR(knob_file("/proc/sys/vm/migrate_copy_pull"), "1\n");
	CHECK_EQ_INT(knobs_restore(&ks), 0);
	CHECK_EQ_STR(knob_file("/proc/sys/vm/migrate_copy_pull"), "1\n");
}

static void test_crash_recovery(void)
{
	struct knobs dead, next;
	unsigned int rec = 99;

	fresh("patched");
	CHECK_EQ_INT(knobs_open(&dead, &knob_file_ops, NULL, tree, state), 0);
	CHECK_EQ_INT(knobs_set(&dead, KNOB_COPY_THREADS, 8), 0);
	CHECK_EQ_INT(knobs_set(&dead, KNOB_COPY_MT, 1), 0);
	CHECK_EQ_INT(knobs_set(&dead, KNOB_NUMA_BALANCING, 0), 0);
	/* The run dies here.  Meanwhile an administrator sets the threads. */
	admin_writes(THREADS, "5\n");
	CHECK_EQ_INT(knobs_open(&next, &knob_file_ops, NULL, tree, state), 0);
	/* Opening writes nothing (--no-knobs and dry runs only open). */
	CHECK_EQ_STR(knob_file(MT), "1");
	CHECK_EQ_INT(knobs_recover(&next, &rec), 0);
	CHECK_EQ_INT(rec, 2);
	CHECK_EQ_STR(knob_file(MT), "0");
	CHECK_EQ_STR(knob_file(NB), "2");
	CHECK_EQ_STR(knob_file(THREADS), "5\n");
	CHECK_EQ_STR(state_file(), "(missing)");
	/* A clean start has nothing to recover. */
	CHECK_EQ_INT(knobs_open(&next, &knob_file_ops, NULL, tree, state), 0);
	CHECK_EQ_INT(knobs_recover(&next, &rec), 0);
	CHECK_EQ_INT(rec, 0);
}

static int fail_writes;

static int failing_write(void *ctx, const char *path, const char *val)
{
	return fail_writes ? -EACCES : knob_file_ops.write(ctx, path, val);
}

static int plain_read(void *ctx, const char *path, char *buf, size_t len)
{
	return knob_file_ops.read(ctx, path, buf, len);
}

static const struct knob_ops failing_ops = { .read = plain_read, .write = failing_write };

static void test_write_failure(void)
{
	struct knobs ks;

	fresh("patched");
	CHECK_EQ_INT(knobs_open(&ks, &failing_ops, NULL, tree, state), 0);
	fail_writes = 1;
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_THREADS, 4), -EACCES);
	CHECK(!ks.k[KNOB_COPY_THREADS].owned);
	CHECK_EQ_STR(state_file(), "(missing)");
	fail_writes = 0;
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_THREADS, 4), 0);
	fail_writes = 1;
	CHECK_EQ_INT(knobs_restore(&ks), -EACCES);
	/* Still listed for the next start to undo. */
	CHECK_EQ_STR(state_file(),
		     "# tierd: kernel knobs to restore if tierd dies (name original set)\n"
		     "vm.migrate_copy_threads 1 4\n");
	fail_writes = 0;
	CHECK_EQ_INT(knobs_restore(&ks), 1);
	CHECK_EQ_STR(knob_file(THREADS), "1");
}

static void test_coexist_and_vanilla(void)
{
	struct knobs ks;
	struct knob_coexist_status st;
	struct knob_vmstat vs;

	fresh("patched");
	CHECK_EQ_INT(knobs_open(&ks, &knob_file_ops, NULL, tree, state), 0);
	CHECK_EQ_INT(knobs_coexist(&ks, KNOB_COEXIST, &st), 0);
	CHECK_EQ_INT(st.numa_balancing, 2);
	CHECK_EQ_INT(st.demotion_enabled, 1);
	CHECK(!st.took_over);
	CHECK_EQ_STR(st.why, "coexisting with NUMA balancing in tiering mode; counting the kernel's promotions");
	CHECK_EQ_STR(knob_file(NB), "2\n");
	CHECK_EQ_INT(knobs_coexist(&ks, KNOB_TAKEOVER, &st), 0);
	CHECK(st.took_over);
	CHECK_EQ_STR(knob_file(NB), "0");
	CHECK_EQ_INT(knobs_read_vmstat(&ks, &vs), 0);
	CHECK_EQ_U64(vs.pgpromote_success, 1234);
	CHECK_EQ_U64(vs.pgdemote_kswapd, 91);
	CHECK_EQ_U64(vs.pgmigrate_copy_mt, 2048);
	CHECK_EQ_U64(vs.pgmigrate_copy_fallback, 12);
	CHECK_EQ_INT(knobs_restore(&ks), 1);
	CHECK_EQ_STR(knob_file(NB), "2");

	fresh("vanilla");
	CHECK_EQ_INT(knobs_open(&ks, &knob_file_ops, NULL, tree, state), 0);
	CHECK(!knobs_have_copy(&ks));
	CHECK_EQ_INT(knobs_apply_copy(&ks, true, 4, 0), -EOPNOTSUPP);
	CHECK_EQ_INT(knobs_set(&ks, KNOB_BATCH_PAGES, 1024), -ENOENT);
	CHECK_EQ_INT(knobs_coexist(&ks, KNOB_COEXIST, &st), 0);
	CHECK_EQ_INT(st.numa_balancing, 1);
	CHECK_EQ_INT(st.demotion_enabled, 0);
	CHECK_EQ_INT(knobs_read_vmstat(&ks, &vs), 0);
	CHECK_EQ_U64(vs.pgmigrate_copy_batched, 0);
	CHECK_EQ_U64(vs.pgpromote_candidate, 5678);
	/* demotion_enabled is written as the kernel shows it. */
	CHECK_EQ_INT(knobs_set(&ks, KNOB_DEMOTION, 1), 0);
	CHECK_EQ_STR(knob_file("/sys/kernel/mm/numa/demotion_enabled"), "true");
	CHECK_EQ_INT(knobs_restore(&ks), 1);
	CHECK_EQ_STR(knob_file("/sys/kernel/mm/numa/demotion_enabled"), "false");
	CHECK_EQ_STR(knob_name(KNOB_COPY_PULL), "vm.migrate_copy_pull");

	/* Dry run: nothing written, nothing to restore. */
	fresh("patched");
	CHECK_EQ_INT(knobs_open(&ks, &knob_file_ops, NULL, tree, state), 0);
	ks.dry_run = true;
	CHECK_EQ_INT(knobs_apply_copy(&ks, true, 3, 1), 0);
	CHECK_EQ_INT(knobs_coexist(&ks, KNOB_TAKEOVER, &st), 0);
	CHECK_EQ_INT(ks.k[KNOB_COPY_THREADS].would, 3);
	CHECK_EQ_INT(ks.k[KNOB_NUMA_BALANCING].would, 0);
	CHECK(!st.took_over);
	CHECK_EQ_STR(st.why, "dry run: would turn NUMA balancing off to take over promotion");
	CHECK_EQ_STR(knob_file(THREADS), "1\n");
	CHECK_EQ_STR(knob_file(NB), "2\n");
	CHECK_EQ_STR(state_file(), "(missing)");
	CHECK_EQ_INT(knobs_restore(&ks), 0);
	/* A state file a crashed run left stays through a dry run. */
	ks.dry_run = false;
	CHECK_EQ_INT(knobs_set(&ks, KNOB_COPY_THREADS, 3), 0);
	ks.dry_run = true;
	CHECK_EQ_INT(knobs_restore(&ks), 0);
	CHECK_EQ_STR(state_file(),
		     "# tierd: kernel knobs to restore if tierd dies (name original set)\n"
		     "vm.migrate_copy_threads 1 3\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 1;
	}
	fixtures = argv[1];
	RUN(test_set_and_restore);
	RUN(test_foreign_change);
	RUN(test_crash_recovery);
	RUN(test_write_failure);
	RUN(test_coexist_and_vanilla);
	nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	nftw(state, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return TEST_EXIT();
}
