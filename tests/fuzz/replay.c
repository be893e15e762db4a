// SPDX-License-Identifier: GPL-2.0-only
/*
 * A main() for the fuzz targets in builds without libFuzzer (gcc, the
 * sanitizer build): every file named on the command line, or every file in a
 * directory named there, goes through LLVMFuzzerTestOneInput() once.  This
 * is how the seed corpus and the crash fixtures in tests/fuzz/regress run in
 * the unit suite; a target that aborts fails the test.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "rb");
	struct stat st;

	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	len = fread(buf, 1, st.st_size, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct dirent **names;
	char sub[4096];
	struct stat st;
	int n, bad = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path,
				 names[i]->d_name);
			if (run_path(sub, count) < 0)
				bad = -1;
		}
		free(names[i]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	int count = 0, bad = 0;

	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			bad = 1;
	printf("%d inputs, no crash\n", count);
	return bad || count == 0;
}
