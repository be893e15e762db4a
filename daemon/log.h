/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Logging for daemon/ (core/ and sys/ return errors, they do not log).
 * To stderr; under systemd (JOURNAL_STREAM set) each line carries the
 * <N> syslog priority prefix that journald understands.
 */
#ifndef TIERD_LOG_H
#define TIERD_LOG_H

#include <stdbool.h>
#include <syslog.h>

void log_init(void);
void log_set_max_level(int level);
/* Whether messages at @level are written (to skip building debug text). */
bool log_enabled(int level);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
