// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static bool prefix;
static int max_level = LOG_INFO;

void log_init(void)
{
	prefix = getenv("JOURNAL_STREAM") != NULL;
}

void log_set_max_level(int level)
{
	max_level = level;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > max_level)
		return;
	if (prefix)
		fprintf(stderr, "<%d>", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
