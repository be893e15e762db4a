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

bool log_enabled(int level)
{
	return level <= max_level;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	if (prefix)
		fprintf(stderr, "<%d>", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
