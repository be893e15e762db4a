// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_tree.h"

/* nftw() takes no context: the copy in progress. */
static const char *copy_src, *copy_dst;

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int copy_file(const char *from, const char *to)
{
	char buf[4096];
	int in, out, r = 0;
	ssize_t n = 0;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while (!r && (n = read(in, buf, sizeof(buf))) > 0)
		r = write_all(out, buf, (size_t)n);
	if (!r && n < 0)
		r = -errno;
	close(in);
	close(out);
	return r;
}

/* nftw(3) callback: 0, or a positive errno, which stops the walk. */
static int copy_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char dst[PATH_MAX * 2];

	snprintf(dst, sizeof(dst), "%s%s", copy_dst, path + strlen(copy_src));
	if (type == FTW_D)
		return mkdir(dst, 0755) < 0 && errno != EEXIST ? errno : 0;
	if (type != FTW_F)
		return EINVAL; /* links and the like: no fixture has them */
	return -copy_file(path, dst);
}

int fs_tree_copy(const char *src, char *tmpl)
{
	int r;

	if (!mkdtemp(tmpl))
		return -errno;
	copy_src = src;
	copy_dst = tmpl;
	r = nftw(src, copy_one, 16, FTW_PHYS);
	return r < 0 ? -errno : -r;
}

int fs_tree_put(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* Its directories, where the fixture has none. */
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		r = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
		*p = '/';
		if (r < 0)
			return r;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = write_all(fd, text, strlen(text));
	close(fd);
	return r;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

void fs_tree_remove(const char *root)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
