/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one JSON string writer of tierctl --json's answers (status.c,
 * ctl_server.c).
 */
#ifndef TIERD_JSON_H
#define TIERD_JSON_H

#include <stdio.h>

/*
 * Write @s to @f as a JSON string, quotes included, valid JSON whatever
 * bytes @s holds.  '"' and '\' are escaped; control characters (and DEL)
 * as \n, \t, \r, \b, \f or \u00XX; valid UTF-8 as it is; each byte that is
 * not part of a valid UTF-8 sequence (a path is bytes, not text) as
 * \ufffd, the replacement character, as a UTF-8 decoder that replaces
 * reads it.
 */
void json_str(FILE *f, const char *s);

#endif
