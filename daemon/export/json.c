// SPDX-License-Identifier: GPL-2.0-only
#include "json.h"

/*
 * The length of the well-formed UTF-8 sequence at @s (Unicode's table
 * 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), or 0
 * with *ret_bad the length of its longest valid start, at least 1: the
 * bytes one \ufffd stands for, as the Unicode standard recommends.
 */
static size_t utf8_len(const unsigned char *s, size_t *ret_bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		*ret_bad = 1;
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi) { /* the NUL at the end, too */
			*ret_bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/* The two-character escape of byte @c, 0 if it has none. */
static char short_escape(unsigned char c)
{
	switch (c) {
	case '"':
	case '\\':
		return c;
	case '\b':
		return 'b';
	case '\f':
		return 'f';
	case '\n':
		return 'n';
	case '\r':
		return 'r';
	case '\t':
		return 't';
	default:
		return 0;
	}
}

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t bad = 0, n = utf8_len(p, &bad);
		char e;

		if (!n) {
			fputs("\\ufffd", f);
			p += bad;
		} else if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
		} else if ((e = short_escape(*p))) {
			fputc('\\', f);
			fputc(e, f);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else {
			fputc(*p++, f);
		}
	}
	fputc('"', f);
}
