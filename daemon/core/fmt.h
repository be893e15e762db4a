/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Byte counts in words, one way everywhere people read them: tierd's log,
 * tierctl status.  Pure: formats into the caller's buffer.
 */
#ifndef TIERD_CORE_FMT_H
#define TIERD_CORE_FMT_H

#include <stddef.h>

/*
 * @bytes in binary units with one decimal ("64.0 KiB", "1.5 GiB"), whole
 * bytes below 1 KiB ("512 B"), into @buf of @size bytes.  Returns @buf.
 */
const char *fmt_bytes(char *buf, size_t size, double bytes);

#endif
