/* check.h - a minimal test harness: CHECK(cond) records a failure with its
 * place and keeps going; check_done() returns the exit code (0 or 1). */
#ifndef TCX_CHECK_H
#define TCX_CHECK_H

#include <stdio.h>

extern int check_failures, check_count;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		check_count++;                                                        \
		if (!(cond)) {                                                        \
			check_failures++;                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                               \
		}                                                                     \
	} while (0)

#define CHECK_MSG(cond, ...)                                                          \
	do {                                                                          \
		check_count++;                                                        \
		if (!(cond)) {                                                        \
			check_failures++;                                             \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
		}                                                                     \
	} while (0)

int check_done(void);

/* Skips the whole test (CTest SKIP_RETURN_CODE 77) with a reason. */
#define SKIP(...)                                  \
	do {                                       \
		fprintf(stderr, "skipped: ");      \
		fprintf(stderr, __VA_ARGS__);      \
		fputc('\n', stderr);               \
		return 77;                         \
	} while (0)

#endif
