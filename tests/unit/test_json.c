// SPDX-License-Identifier: GPL-2.0-only
/*
 * json_str(): valid JSON whatever bytes a string holds (a path is bytes),
 * exact text for every byte 0x01-0xff and for the malformed UTF-8 forms.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "test.h"

static char *render(const char *s)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	if (!f)
		return NULL;
	json_str(f, s);
	fclose(f);
	return text;
}

#define FFFD "\\ufffd"

/* Every byte 0x01-0xff in order: ASCII as itself or escaped, and each of
 * 0x80-0xff alone (no two of them in a row form a sequence) replaced. */
static void test_every_byte(void)
{
	static const char ascii[] =
		"\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n"
		"\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014"
		"\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d"
		"\\u001e\\u001f !\\\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNO"
		"PQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\u007f";
	char in[256], want[sizeof(ascii) + 128 * 6 + 2], *got;

	for (int i = 1; i < 256; i++)
		in[i - 1] = (char)i;
	in[255] = '\0';
	strcpy(want, ascii);
	for (int i = 0x80; i < 0x100; i++)
		strcat(want, FFFD);
	strcat(want, "\"");
	got = render(in);
	CHECK_EQ_STR(got, want);
	free(got);
}

static void test_utf8(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "\"\"" },
		/* Well-formed: as it is, up to U+10FFFF. */
		{ "/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80/\xf4\x8f\xbf\xbf",
		  "\"/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80/\xf4\x8f\xbf\xbf\"" },
		/* Overlong '/', a surrogate, above U+10FFFF: a \ufffd per byte. */
		{ "a\xc0\xaf" "b", "\"a" FFFD FFFD "b\"" },
		{ "\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"" },
		{ "\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"" },
		{ "\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"" },
		{ "\xf5\xff\xfe", "\"" FFFD FFFD FFFD "\"" },
		/* A sequence cut short: one \ufffd for what was there. */
		{ "\xe2\x82", "\"" FFFD "\"" },
		{ "\xf0\x9f\x98/x", "\"" FFFD "/x\"" },
		{ "\xe2\x82\xe2\x82\xac", "\"" FFFD "\xe2\x82\xac\"" },
		/* A lone continuation byte. */
		{ "\x80\xbf", "\"" FFFD FFFD "\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = render(cases[i].in);

		CHECK_EQ_STR(got, cases[i].want);
		free(got);
	}
}

int main(void)
{
	RUN(test_every_byte);
	RUN(test_utf8);
	return TEST_EXIT();
}
