/* fuzz.h - what the fuzz targets share: libFuzzer's entry point, a NUL-
 * terminated copy of the input, and the checks every parser's failure must
 * pass (a status, a message, no half-made output).
 *
 * Each tests/fuzz/fuzz_<target>.c defines LLVMFuzzerTestOneInput.  With
 * TCX_FUZZ=ON and clang it is linked with libFuzzer (-fsanitize=fuzzer); in
 * every build it is also linked with regress_main.c, which feeds it the
 * files of tests/fuzz/regress/<target>/ and corpus/<target>/ as an ordinary
 * CTest test.  A broken invariant calls fuzz_fail, which aborts: libFuzzer
 * and the sanitizers report it as a crash, with the input saved. */
#ifndef TCX_FUZZ_H
#define TCX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reports a broken invariant and aborts. */
#define fuzz_fail(...)                                                                             \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: fuzz invariant broken: ", __FILE__, __LINE__);             \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		abort();                                                                           \
	} while (0)

/* A heap copy of data with a final NUL (inputs may hold NULs of their own,
 * which then end the string early, as they would on a command line). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A failed parse must say so: a status that is not TCX_OK, the same code in
 * err, and a non-empty NUL-terminated message. */
static inline void fuzz_check_error(enum tcx_status st, const struct tcx_error *err,
				    const char *what)
{
	if (st == TCX_OK)
		return;
	if ((int)st < 0 || st >= TCX_STATUS_COUNT)
		fuzz_fail("%s: status %d out of range", what, (int)st);
	if (err->code != st)
		fuzz_fail("%s: err->code %d but status %d", what, (int)err->code, (int)st);
	if (memchr(err->msg, '\0', sizeof(err->msg)) == NULL)
		fuzz_fail("%s: message not terminated", what);
	if (err->msg[0] == '\0')
		fuzz_fail("%s: status %s without a message", what, tcx_status_str(st));
}

#endif /* TCX_FUZZ_H */
