// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

int fs_path(char *buf, size_t size, const char *root, const char *path)
{
	int n;

	while (*path == '/')
		path++;
	if (!root || !*root)
		root = "/";
	n = snprintf(buf, size, "%s%s%s", root,
		     root[strlen(root) - 1] == '/' ? "" : "/", path);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int fs_read(const char *root, const char *path, char *buf, size_t size,
	    size_t *ret_len)
{
	char full[4096];
	int ret = fs_path(full, sizeof(full), root, path);

	if (ret < 0)
		return ret;
	return fs_read_at(AT_FDCWD, full, buf, size, ret_len);
}

int fs_each_line(const char *root, const char *path, int (*fn)(char *line, void *ctx),
		 void *ctx)
{
	char full[4096], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int r = fs_path(full, sizeof(full), root, path);

	if (r < 0)
		return r;
	f = fopen(full, "re");
	if (!f)
		return -errno;
	errno = 0;
	while (r == 0 && getline(&line, &cap, f) >= 0)
		r = fn(line, ctx);
	if (r == 0 && ferror(f))
		r = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	return r;
}

int fs_read_line(const char *root, const char *path, char *buf, size_t size)
{
	int ret = fs_read(root, path, buf, size, NULL);

	if (ret < 0)
		return ret;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int fs_read_pid_stat(const char *root, const char *pid, char *buf, size_t size,
		     const char **ret_fields)
{
	char rel[64];
	const char *p;
	int ret;

	snprintf(rel, sizeof(rel), "%s/stat", pid);
	ret = fs_read(root, rel, buf, size, NULL);
	if (ret < 0)
		return ret;
	p = strrchr(buf, ')');
	if (!p)
		return -EPROTO;
	for (p++; *p == ' '; p++)
		;
	*ret_fields = p;
	return 0;
}

int fs_read_at(int dirfd, const char *path, char *buf, size_t size,
	       size_t *ret_len)
{
	size_t len = 0;
	int fd, ret;

	if (size < 2)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += n;
		if (len == size - 1) {
			char extra;

			/* Full buffer: only fine if the file ends exactly here. */
			n = read(fd, &extra, 1);
			if (n != 0) {
				ret = n < 0 ? -errno : -EFBIG;
				goto out;
			}
			break;
		}
	}
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	ret = 0;
out:
	close(fd);
	return ret;
}

int fs_read_u64(const char *root, const char *path, uint64_t *ret)
{
	char buf[64], *end;
	unsigned long long v;
	int r;

	r = fs_read(root, path, buf, sizeof(buf), NULL);
	if (r < 0)
		return r;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno)
		return -errno;
	if (*end == '\n')
		end++;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int fs_write(const char *root, const char *path, const char *buf, size_t len)
{
	char full[4096];
	ssize_t n;
	int fd, ret;

	ret = fs_path(full, sizeof(full), root, path);
	if (ret < 0)
		return ret;
	fd = open(full, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

int fs_write_atomic(const char *dir, const char *name, const char *buf,
		    size_t len, unsigned int mode)
{
	char tmp[4096], dst[4096];
	size_t done = 0;
	int fd, ret;

	if (strchr(name, '/'))
		return -EINVAL;
	ret = fs_path(dst, sizeof(dst), dir, name);
	if (ret < 0)
		return ret;
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto fail;
		}
		done += n;
	}
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		ret = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		ret = -errno;
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, dst) < 0) {
		ret = -errno;
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return ret;
}
