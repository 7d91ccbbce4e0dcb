/* common.h - helpers every part of lib/ shares: errors, string buffers,
 * checked arithmetic, PCG32 random numbers, logging hooks, atomic files. */
#ifndef TCX_COMMON_H
#define TCX_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tcx.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TCX_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TCX_MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define TCX_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TCX_PRINTF(f, a)
#endif

/* Fills `err` (when not NULL) with `code` and a formatted message, and
 * returns `code`: `return tcx_fail(err, TCX_EPARSE, "unknown index '%c'", c);` */
enum tcx_status tcx_fail(struct tcx_error *err, enum tcx_status code, const char *fmt, ...)
	TCX_PRINTF(3, 4);
enum tcx_status tcx_vfail(struct tcx_error *err, enum tcx_status code, const char *fmt,
			  va_list ap);
/* As tcx_fail, and records a 1-based column (and line) of the problem. */
enum tcx_status tcx_fail_at(struct tcx_error *err, enum tcx_status code, unsigned line,
			    unsigned col, const char *fmt, ...) TCX_PRINTF(5, 6);
/* Prefixes err->msg with "<prefix>: " (for adding context on the way up). */
void tcx_error_prefix(struct tcx_error *err, const char *fmt, ...) TCX_PRINTF(2, 3);
/* Resets an error to TCX_OK with an empty message. */
void tcx_error_clear(struct tcx_error *err);

/* A growable NUL-terminated string (git's strbuf).  Zero-initialise with
 * STRBUF_INIT; release with strbuf_release.  Allocation failure is sticky:
 * `failed` is set, later appends do nothing, and strbuf_status() says so. */
struct strbuf {
	char *buf;
	size_t len, alloc;
	bool failed;
};
#define STRBUF_INIT { NULL, 0, 0, false }
void strbuf_add(struct strbuf *sb, const char *s, size_t n);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addc(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) TCX_PRINTF(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_reset(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Returns the buffer (never NULL: "" when empty) and leaves it owned by sb. */
const char *strbuf_str(const struct strbuf *sb);
/* Hands the heap string to the caller (free() it) and resets sb. */
char *strbuf_detach(struct strbuf *sb);
enum tcx_status strbuf_status(const struct strbuf *sb, struct tcx_error *err);

/* Checked arithmetic on int64_t: return false on overflow. */
bool common_mul_overflows_i64(int64_t a, int64_t b, int64_t *out);
bool common_add_overflows_i64(int64_t a, int64_t b, int64_t *out);

/* Parses a whole decimal integer (optional sign); false on junk or overflow. */
bool common_parse_i64(const char *s, int64_t *out);
/* Parses a whole floating-point number; false on junk. */
bool common_parse_double(const char *s, double *out);

/* PCG32 (O'Neill, "PCG: A Family of Simple Fast Space-Efficient
 * Statistically Good Algorithms for Random Number Generation", 2014):
 * 64-bit LCG state, XSH-RR output.  Seeded as pcg32_srandom_r. */
struct pcg32 {
	uint64_t state;
	uint64_t inc;
};
void pcg32_seed(struct pcg32 *rng, uint64_t seed, uint64_t stream);
uint32_t pcg32_next(struct pcg32 *rng);
/* Uniform in [0, bound) without modulo bias. */
uint32_t pcg32_bounded(struct pcg32 *rng, uint32_t bound);
/* Uniform double in [0, 1) with 53 random bits. */
double pcg32_double(struct pcg32 *rng);

/* Logging.  lib/ never prints; it calls tcx_log, which hands the message to
 * the hook the program installed (cmd/ prints it to stderr).  Levels: */
enum tcx_log_level { TCX_LOG_ERROR, TCX_LOG_WARN, TCX_LOG_INFO, TCX_LOG_DEBUG };
typedef void (*tcx_log_fn)(enum tcx_log_level level, const char *msg, void *ctx);
void tcx_log_set(tcx_log_fn fn, void *ctx, enum tcx_log_level max_level);
void tcx_log(enum tcx_log_level level, const char *fmt, ...) TCX_PRINTF(2, 3);
bool tcx_log_enabled(enum tcx_log_level level);

/* Reads a whole file into a NUL-terminated heap buffer (caller frees). */
enum tcx_status common_read_file(const char *path, char **out, size_t *len, struct tcx_error *err);
/* mkdir -p: creates dir and every missing directory above it. */
enum tcx_status common_make_dirs(const char *dir, struct tcx_error *err);

/* Atomic output: writes go to a temporary file beside `path`, which
 * atomic_file_commit renames over `path` after fsync; atomic_file_abort (or
 * a crash) leaves `path` untouched.  "-" means stdout (no temporary).  On
 * Linux the temporary is an unnamed file (O_TMPFILE) that gets its name only
 * at commit, so that even SIGKILL leaves no temporary file behind; where
 * that is not available it is "<path>.tmp.XXXXXX" from the start. */
struct atomic_file {
	FILE *fp;
	char *path;
	char *tmp;
	bool unnamed; /* fp is an O_TMPFILE file; tmp is its name-to-be */
};
enum tcx_status atomic_file_open(struct atomic_file *af, const char *path, struct tcx_error *err);
enum tcx_status atomic_file_commit(struct atomic_file *af, struct tcx_error *err);
void atomic_file_abort(struct atomic_file *af);
/* Removes every temporary file still open (called from signal handlers
 * through tcx's cleanup path; async-signal-safe). */
void atomic_file_cleanup_all(void);

/* Text from an input (a logic or config file, a path) for generated code:
 * appends s with only letters, digits, space and _ - . , : + = ( ) [ ] * /
 * as themselves and every other byte as a three-digit octal escape (\ooo),
 * as is a '/' next to a '*'.  The result cannot end a C, C++, OpenCL C or
 * CUDA string literal or comment early, start a comment, splice a line
 * (no quote, backslash before a newline, '?' of a trigraph, newline or
 * comment delimiter survives), nor mean anything in Markdown inside
 * backticks; it reads as the C literal of the bytes.  The caller must not
 * put a '*' or '/' right next to it.  Not for CMake, which has no octal
 * escapes. */
void strbuf_add_ctext(struct strbuf *sb, const char *s);
/* The C string literal of s: '"', strbuf_add_ctext's text, '"'; the word
 * NULL when s is NULL. */
void strbuf_add_cstring(struct strbuf *sb, const char *s);

/* "Did you mean": common_edit_distance is the optimal-string-alignment
 * distance (Damerau-Levenshtein: insertions, deletions, substitutions and
 * swaps of adjacent letters each cost 1), ignoring case.  A struct suggest
 * keeps the closest of the candidates offered to it that is close enough
 * to be a typo of `word` (about one edit in four letters, at most 3; a
 * word of 3 or more letters that starts a longer candidate counts as one
 * edit; a candidate with no letter of the word left in place, as 's' for
 * 'q', is none; the first of equals wins; `word` itself is never
 * suggested):
 *
 *	struct suggest sg;
 *	suggest_init(&sg, name);
 *	for (...) suggest_add(&sg, candidate);
 *	tcx_fail(err, TCX_EINVAL, "unknown thing '%s'%s", name,
 *		 suggest_hint(&sg, buf, sizeof(buf)));
 *
 * `best` points at the candidate (borrowed: the caller keeps the
 * candidates alive); suggest_len is its length, which is the length of
 * the word for suggest_add_words (a space-separated list). */
struct suggest {
	const char *word;
	const char *best; /* NULL when nothing is close */
	size_t dist;
};
size_t common_edit_distance(const char *a, const char *b);
void suggest_init(struct suggest *s, const char *word);
void suggest_add(struct suggest *s, const char *candidate);
void suggest_add_words(struct suggest *s, const char *list);
int suggest_len(const struct suggest *s);
/* "; did you mean 'X'?" in buf, or "" when nothing is close. */
const char *suggest_hint(const struct suggest *s, char *buf, size_t len);

/* fp16 and bf16 conversions (round to nearest even), bit patterns in uint16_t. */
float half_to_float(uint16_t h);
uint16_t half_from_float(float f);
float bf16_to_float(uint16_t b);
uint16_t bf16_from_float(float f);

/* FNV-1a 64-bit hash, for cache keys. */
uint64_t common_hash64(const void *data, size_t len, uint64_t seed);

/* Seconds from a monotonic clock. */
double common_now_seconds(void);

#endif /* TCX_COMMON_H */
