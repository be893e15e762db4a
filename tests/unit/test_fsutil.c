// SPDX-License-Identifier: GPL-2.0-only
/* sys/fsutil.c: bounded reads relative to a root, numbers, atomic replace;
 * sys/cpulist.c: the kernel's id lists. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/cpulist.h"
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

	/* The first line only, without its newline. */
	put("n", "cpu\nx\n");
	CHECK_EQ_INT(fs_read_line(root, "n", buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "cpu");
	CHECK_EQ_INT(fs_read_line(root, "eight", buf, sizeof(buf)), -EFBIG);
	CHECK_EQ_INT(fs_read_line(root, "missing", buf, sizeof(buf)), -ENOENT);
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

/*
 * Every form a kernel id list takes, as a node's cpulist and a memory tier's
 * nodelist (topology.c), cpu/online (sampler_bpf.c), a node's cpulist for
 * the load readers (load.c) and a PMU format's bits (pmu.c) write them.
 */
static void test_cpulist(void)
{
	char path[256];
	uint64_t bits[2];
	unsigned int n;

	CHECK_EQ_INT(cpulist_parse("0-3,8,10-11\n", bits, 128, &n), 0);
	CHECK_EQ_INT(n, 7);
	CHECK_EQ_U64(bits[0], 0xd0full);
	CHECK_EQ_INT(cpulist_parse("\n", bits, 128, &n), 0);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(cpulist_parse("", bits, 128, &n), 0);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(cpulist_parse("64-65", bits, 128, &n), 0);
	CHECK_EQ_U64(bits[1], 3);
	CHECK_EQ_INT(cpulist_parse("0-1,3\n", bits, 128, &n), 0);	/* cpulist */
	CHECK_EQ_U64(bits[0], 0xb);
	CHECK_EQ_INT(cpulist_parse("2,5-6", bits, 128, NULL), 0);	/* no newline */
	CHECK_EQ_U64(bits[0], 0x64);
	CHECK_EQ_INT(cpulist_parse("0-3,5,7-8\n", bits, 128, &n), 0);	/* cpu/online */
	CHECK_EQ_INT(n, 7);
	CHECK_EQ_U64(bits[0], 0x1af);
	CHECK_EQ_INT(cpulist_parse("0-7,32-35", bits, 64, &n), 0);	/* PMU format */
	CHECK_EQ_U64(bits[0], 0xf000000ffull);
	CHECK_EQ_INT(cpulist_parse("7", bits, 128, &n), 0);
	CHECK_EQ_U64(bits[0], 0x80);
	CHECK_EQ_INT(cpulist_parse("1,1-2,", bits, 128, &n), 0);	/* overlap, trailing comma */
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_U64(bits[0], 6);
	CHECK_EQ_INT(cpulist_parse("127", bits, 128, &n), 0);
	CHECK_EQ_U64(bits[1], 1ull << 63);
	CHECK_EQ_INT(cpulist_parse("3-1", bits, 128, &n), -EINVAL);
	CHECK_EQ_INT(cpulist_parse("1,x", bits, 128, &n), -EINVAL);
	CHECK_EQ_INT(cpulist_parse("1,,2", bits, 128, &n), -EINVAL);
	CHECK_EQ_INT(cpulist_parse("1-", bits, 128, &n), -EINVAL);
	CHECK_EQ_INT(cpulist_parse("-1", bits, 128, &n), -EINVAL);
	CHECK_EQ_INT(cpulist_parse(" 1", bits, 128, &n), -EINVAL);
	CHECK_EQ_INT(cpulist_parse("1 2", bits, 128, &n), -EINVAL);
	CHECK_EQ_INT(cpulist_parse("128", bits, 128, &n), -ERANGE);
	CHECK_EQ_INT(cpulist_parse("120-130", bits, 128, &n), -ERANGE);

	put("online", "0-2,4\n");
	CHECK_EQ_INT(cpulist_read(root, "/online", bits, 128, &n), 0);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_U64(bits[0], 0x17);
	CHECK_EQ_INT(cpulist_read(root, "missing", bits, 128, &n), -ENOENT);
	put("online", "0-2;4\n");
	CHECK_EQ_INT(cpulist_read(root, "online", bits, 128, &n), -EINVAL);
	snprintf(path, sizeof(path), "%s/online", root);
	CHECK_EQ_INT(unlink(path), 0);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(root))
		return 1;
	RUN(test_path);
	RUN(test_read);
	RUN(test_write);
	RUN(test_cpulist);
	/* Only the files the test made, no temporaries left behind. */
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 5", root);
	CHECK_EQ_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) ? 1 : TEST_EXIT();
}
