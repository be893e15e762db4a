// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "fsutil.h"

int cpulist_parse(const char *s, uint64_t *bitmap, unsigned int nbits,
		  unsigned int *ret_count)
{
	unsigned int count = 0;

	memset(bitmap, 0, (nbits + 63) / 64 * sizeof(uint64_t));
	while (*s && *s != '\n') {
		unsigned long a, b;
		char *end;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		a = strtoul(s, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			b = strtoul(end + 1, &end, 10);
		}
		if (b < a)
			return -EINVAL;
		if (b >= nbits)
			return -ERANGE;
		for (unsigned long i = a; i <= b; i++) {
			if (!(bitmap[i / 64] & (1ull << (i % 64))))
				count++;
			bitmap[i / 64] |= 1ull << (i % 64);
		}
		s = end;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	if (ret_count)
		*ret_count = count;
	return 0;
}

int cpulist_read(const char *root, const char *path, uint64_t *bitmap,
		 unsigned int nbits, unsigned int *ret_count)
{
	char buf[4096];
	int r = fs_read(root, path, buf, sizeof(buf), NULL);

	if (r < 0)
		return r;
	return cpulist_parse(buf, bitmap, nbits, ret_count);
}
