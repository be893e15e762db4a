// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lab workload with a known hot region: map SIZE_MIB of anonymous memory,
 * touch all of it once, then keep reading and writing only HOT_MIB of it at
 * offset HOT_OFF_MIB, forever.  Prints "START HOT_START HOT_END" (hex) on
 * stdout once the whole mapping is populated.
 *
 *   hotmem SIZE_MIB HOT_OFF_MIB HOT_MIB
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	size_t size, off, hot;
	char *p;

	if (argc != 4) {
		fprintf(stderr, "usage: hotmem SIZE_MIB HOT_OFF_MIB HOT_MIB\n");
		return 2;
	}
	size = strtoull(argv[1], NULL, 0) << 20;
	off = strtoull(argv[2], NULL, 0) << 20;
	hot = strtoull(argv[3], NULL, 0) << 20;
	if (!size || off + hot > size) {
		fprintf(stderr, "hotmem: the hot region must lie inside the mapping\n");
		return 2;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("hotmem: mmap");
		return 1;
	}
	for (size_t i = 0; i < size; i += 4096)
		p[i] = 1;
	printf("%lx %lx %lx\n", (unsigned long)(uintptr_t)p, (unsigned long)(uintptr_t)(p + off),
	       (unsigned long)(uintptr_t)(p + off + hot));
	fflush(stdout);
	for (unsigned char v = 0;; v++)
		for (size_t i = off; i < off + hot; i += 4096)
			p[i] += v;
}
