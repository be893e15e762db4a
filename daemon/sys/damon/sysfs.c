// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads and writes of the DAMON sysfs admin directory, for the DAMON source.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../fsutil.h"
#include "source.h"

/*
 * Most DAMON sysfs files take damon_sysfs_lock with mutex_trylock() and fail
 * with -EBUSY when it is held (mm/damon/sysfs.c: state_show(), state_store(),
 * pid_show(), nr_*_store(); "avoid deadlock due to concurrent state_store").
 * A running kdamond takes the lock after every sampling interval
 * (damon_sysfs_cmd_request_callback()), so a read or write of ours collides
 * with it now and then: in the lab guest about one drain in 300.  That is not
 * an error.  Where waiting is allowed (a patient thread: start, stop, the
 * worker of update.c) try again for up to DAMON_BUSY_WAIT_US in all, with
 * doubling sleeps; on the loop's thread return -EBUSY at once, and the
 * caller leaves what it was doing to the next drain.
 */
#define BUSY_FIRST_US 1000	/* first sleep after -EBUSY */
#define BUSY_MAX_US 64000	/* longest single sleep */

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Only where waiting is allowed: tierd's ticks never sleep (sampler.c). */
static _Thread_local bool patient;

bool damon_sysfs_patient(bool on)
{
	bool old = patient;

	patient = on;
	return old;
}

static int busy_backoff(uint64_t *slept_us)
{
	uint64_t us = *slept_us ? *slept_us : BUSY_FIRST_US;

	if (!patient)
		return -EBUSY;
	if (us > BUSY_MAX_US)
		us = BUSY_MAX_US;
	if (*slept_us >= DAMON_BUSY_WAIT_US)
		return -EBUSY;
	sleep_us(us);
	*slept_us += us;
	return 0;
}

/*
 * Read @path, relative to the directory @dfd (AT_FDCWD: a full path), into
 * @buf without its newline; @rel, relative to the admin directory, is what
 * the before_io test hook sees.  -EBUSY is retried (busy_backoff()) when
 * @retry.
 */
static int sysfs_read_at(const struct sampler_damon *d, int dfd, const char *rel,
			 const char *path, char *buf, size_t len, bool retry)
{
	uint64_t slept_us = 0;
	int r;

	do {
		r = d->p.before_io ? d->p.before_io(rel, false, d->p.before_io_arg) : 0;
		if (r == 0)
			r = fs_read_at(dfd, path, buf, len, NULL);
	} while (r == -EBUSY && retry && busy_backoff(&slept_us) == 0);
	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int damon_sysfs_read_u64_at(const struct sampler_damon *d, int dfd, const char *rel,
			     const char *path, uint64_t *ret)
{
	char buf[32], *end;
	int r = sysfs_read_at(d, dfd, rel, path, buf, sizeof(buf), true);

	if (r < 0)
		return r;
	*ret = strtoull(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}

int damon_sysfs_read(const struct sampler_damon *d, const char *rel, char *buf, size_t len)
{
	char full[768];
	int r = fs_path(full, sizeof(full), d->admin, rel);

	return r < 0 ? r : sysfs_read_at(d, AT_FDCWD, rel, full, buf, len, true);
}

int damon_sysfs_read_once(const struct sampler_damon *d, const char *rel, char *buf,
			  size_t len)
{
	char full[768];
	int r = fs_path(full, sizeof(full), d->admin, rel);

	return r < 0 ? r : sysfs_read_at(d, AT_FDCWD, rel, full, buf, len, false);
}

int damon_sysfs_read_u64(const struct sampler_damon *d, const char *rel, uint64_t *ret)
{
	char full[768];
	int r = fs_path(full, sizeof(full), d->admin, rel);

	return r < 0 ? r : damon_sysfs_read_u64_at(d, AT_FDCWD, rel, full, ret);
}

static int sysfs_write_once(struct sampler_damon *d, const char *rel, const char *value)
{
	char path[768];
	size_t len = strlen(value);
	ssize_t n;
	int fd;

	if (d->p.before_io) {
		int r = d->p.before_io(rel, true, d->p.before_io_arg);

		if (r < 0)
			return r;
	}
	snprintf(path, sizeof(path), "%s/%s", d->admin, rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

int damon_sysfs_write(struct sampler_damon *d, const char *value, const char *fmt, ...)
{
	uint64_t slept_us = 0;
	char rel[512];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	while ((r = sysfs_write_once(d, rel, value)) == -EBUSY && busy_backoff(&slept_us) == 0)
		;
	if (r == 0 && d->p.on_write)
		d->p.on_write(rel, value, d->p.on_write_arg);
	return r;
}

int damon_sysfs_write_u64(struct sampler_damon *d, uint64_t v, const char *fmt, ...)
{
	char rel[512], val[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	return damon_sysfs_write(d, val, "%s", rel);
}
