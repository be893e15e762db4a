/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small-file I/O for sysfs, procfs and tierd's own output files.
 *
 * Every reader takes a root directory ("/" on a machine, a fixture tree in
 * tests) and a path relative to it; a leading '/' on @path is ignored so that
 * callers can spell real paths.  Files are bounded: a file that does not fit
 * the caller's buffer is an error (-EFBIG), never silently truncated.
 *
 * All functions return 0 or a negative errno.
 */
#ifndef TIERD_SYS_FSUTIL_H
#define TIERD_SYS_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Join @root and @path into @buf (@size bytes); -ENAMETOOLONG if it does not fit. */
int fs_path(char *buf, size_t size, const char *root, const char *path);

/* Read all of @root/@path into @buf, NUL-terminated; @size includes the NUL.
 * *ret_len (may be NULL) gets the length without the NUL.  -EFBIG when the
 * file holds @size bytes or more. */
int fs_read(const char *root, const char *path, char *buf, size_t size,
	    size_t *ret_len);

/* fs_read() the first line of @root/@path, without its newline: a sysfs
 * attribute, a PMU format or event. */
int fs_read_line(const char *root, const char *path, char *buf, size_t size);

/* The same for @path relative to the directory @dirfd (openat(2)): a path
 * walk of @path's components only. */
int fs_read_at(int dirfd, const char *path, char *buf, size_t size,
	       size_t *ret_len);

/* Read @root/@pid/stat (procfs; @pid a number or "self") into @buf and set
 * *@ret_fields to its fields after the command name, which may hold spaces
 * and parentheses: the process state first.  -EPROTO when there is no
 * command name to skip. */
int fs_read_pid_stat(const char *root, const char *pid, char *buf, size_t size,
		     const char **ret_fields);

/* Call @fn with each line of @root/@path (a file of any length: a
 * process's maps), its newline kept, until @fn returns nonzero: that, 0 at
 * the end, or a read error.  For a process that exits while it is read,
 * its procfs file reads -ESRCH. */
int fs_each_line(const char *root, const char *path, int (*fn)(char *line, void *ctx),
		 void *ctx);

/* Read a file holding one unsigned decimal number (trailing newline allowed). */
int fs_read_u64(const char *root, const char *path, uint64_t *ret);

/* Write @len bytes of @buf to an existing file @root/@path in one write(2),
 * as sysctl and sysfs files expect; no O_CREAT. */
int fs_write(const char *root, const char *path, const char *buf, size_t len);

/* Replace @dir/@name atomically: write a temporary file in @dir, fsync it,
 * chmod @mode, rename it over @name.  Readers see the old or the new content,
 * never a partial one (node_exporter's textfile collector relies on this). */
int fs_write_atomic(const char *dir, const char *name, const char *buf,
		    size_t len, unsigned int mode);

#endif
