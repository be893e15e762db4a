/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A few dozen lines of test harness: every check that fails prints its file,
 * line and expression and marks the test failed; main() returns the verdict in
 * meson's protocol (0 pass, 1 fail, 77 skip).
 */
#ifndef TIERD_TEST_H
#define TIERD_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__,   \
				__LINE__, #cond);                                \
			test_failures++;                                         \
		}                                                                \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                       \
	do {                                                                     \
		long long _a = (long long)(a), _b = (long long)(b);              \
		if (_a != _b) {                                                  \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
				__FILE__, __LINE__, #a, _a, #b, _b);             \
			test_failures++;                                         \
		}                                                                \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                       \
	do {                                                                     \
		uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);                 \
		if (_a != _b) {                                                  \
			fprintf(stderr, "%s:%d: %s == %" PRIu64 ", expected %" PRIu64 "\n", \
				__FILE__, __LINE__, #a, _a, _b);                 \
			test_failures++;                                         \
		}                                                                \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                       \
	do {                                                                     \
		const char *_a = (a), *_b = (b);                                 \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                         \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, _a ? _a : "(null)",      \
				_b ? _b : "(null)");                             \
			test_failures++;                                         \
		}                                                                \
	} while (0)

#define RUN(fn)                                                                  \
	do {                                                                     \
		int _before = test_failures;                                     \
		fn();                                                            \
		printf("%s %s\n", test_failures == _before ? "ok  " : "FAIL", #fn); \
	} while (0)

#define TEST_EXIT() (test_failures ? 1 : 0)

/* TEST_ASAN: built with AddressSanitizer.  GCC defines
 * __SANITIZE_ADDRESS__; clang before 16 does not, and says so through
 * __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

#endif
