// SPDX-License-Identifier: GPL-2.0-only
/* sys/fsutil.c: bounded reads relative to a root, numbers, atomic replace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/fsutil.h"
#include "test.h"

static char root[] = "/tmp/test_fsutil.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_path(void)
{
	char buf[32];

	CHECK_EQ_INT(fs_path(buf, sizeof(buf), "/", "/proc/vmstat"), 0);
	CHECK_EQ_STR(buf, "/proc/vmstat");
	CHECK_EQ_INT(fs_path(buf, sizeof(buf), "/fix/", "sys/x"), 0);
	CHECK_EQ_STR(buf, "/fix/sys/x");
	CHECK_EQ_INT(fs_path(buf, sizeof(buf), "/fix", "//sys"), 0);
	CHECK_EQ_STR(buf, "/fix/sys");
	CHECK_EQ_INT(fs_path(buf, 8, "/fix", "sys/x"), -ENAMETOOLONG);
}

static void test_read(void)
{
	char buf[8];
	size_t len = 0;
	uint64_t v = 0;

	put("seven", "1234567");
	put("eight", "12345678");
	CHECK_EQ_INT(fs_read(root, "/seven", buf, sizeof(buf), &len), 0);
	CHECK_EQ_STR(buf, "1234567");
	CHECK_EQ_U64(len, 7);
	/* One byte more than fits: an error, never a silent truncation. */
	CHECK_EQ_INT(fs_read(root, "eight", buf, sizeof(buf), &len), -EFBIG);
	CHECK_EQ_INT(fs_read(root, "missing", buf, sizeof(buf), &len), -ENOENT);

	put("n", "18446744073709551615\n");
	CHECK_EQ_INT(fs_read_u64(root, "n", &v), 0);
	CHECK_EQ_U64(v, UINT64_MAX);
	put("n", "18446744073709551616\n");
	CHECK_EQ_INT(fs_read_u64(root, "n", &v), -ERANGE);
	put("n", "12 kB\n");
	CHECK_EQ_INT(fs_read_u64(root, "n", &v), -EINVAL);
	put("n", "-1\n");
	CHECK_EQ_INT(fs_read_u64(root, "n", &v), -EINVAL);
}

static void test_write(void)
{
	char buf[64];
	struct stat st;

	put("knob", "0\n");
	CHECK_EQ_INT(fs_write(root, "knob", "4\n", 2), 0);
	CHECK_EQ_INT(fs_read(root, "knob", buf, sizeof(buf), NULL), 0);
	CHECK_EQ_STR(buf, "4\n");
	/* Knobs are never created. */
	CHECK_EQ_INT(fs_write(root, "no-such-knob", "1", 1), -ENOENT);

	CHECK_EQ_INT(fs_write_atomic(root, "out.prom", "a 1\n", 4, 0644), 0);
	CHECK_EQ_INT(fs_write_atomic(root, "out.prom", "a 2\n", 4, 0644), 0);
	CHECK_EQ_INT(fs_read(root, "out.prom", buf, sizeof(buf), NULL), 0);
	CHECK_EQ_STR(buf, "a 2\n");
	snprintf(buf, sizeof(buf), "%s/out.prom", root);
	CHECK_EQ_INT(stat(buf, &st), 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0644);
	CHECK_EQ_INT(fs_write_atomic(root, "../escape", "x", 1, 0644), -EINVAL);
	CHECK_EQ_INT(fs_write_atomic("/nonexistent-dir", "x.prom", "x", 1,
				     0644),
		     -ENOENT);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(root))
		return 1;
	RUN(test_path);
	RUN(test_read);
	RUN(test_write);
	/* Only the files the test made, no temporaries left behind. */
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 5", root);
	CHECK_EQ_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) ? 1 : TEST_EXIT();
}
