/* error.c - status texts and the tcx_fail idiom that fills struct tcx_error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *const status_text[TCX_STATUS_COUNT] = {
	[TCX_OK] = "success",
	[TCX_ENOMEM] = "out of memory",
	[TCX_EINVAL] = "invalid argument",
	[TCX_EPARSE] = "parse error",
	[TCX_ENODEV] = "no usable device",
	[TCX_EBUILD] = "kernel build failed",
	[TCX_ELAUNCH] = "kernel launch failed",
	[TCX_EMISMATCH] = "result mismatch",
	[TCX_EIO] = "input/output error",
	[TCX_EDEVICE] = "device or runtime error",
	[TCX_EUNSUPPORTED] = "not supported",
	[TCX_ERANGE] = "value out of range",
	[TCX_EREJECT] = "solution rejected",
	[TCX_EREGRESS] = "performance regression",
	[TCX_EINTR] = "interrupted",
	[TCX_EBUSY] = "resource busy",
	[TCX_ETIMEOUT] = "timed out",
	[TCX_ECORRUPT] = "damaged file",
	[TCX_ELIMIT] = "beyond a device limit",
	[TCX_EINCOMPLETE] = "incomplete: more measurements are needed",
};

const char *tcx_status_str(enum tcx_status s)
{
	if ((unsigned)s < TCX_STATUS_COUNT && status_text[s])
		return status_text[s];
	return "unknown status";
}

const char *tcx_version(void)
{
	return TCX_VERSION_STRING;
}

/* Bytes a shortened quote keeps at each end. */
#define QUOTE_KEEP 8

/* Replaces the middle of t[from, from + n) with "..." so that the text (len
 * bytes) loses about `excess` bytes, keeping QUOTE_KEEP bytes at each end of
 * the span and never splitting a UTF-8 character.  Returns the new length
 * (len when the span is too short to shorten). */
static size_t cut_middle(char *t, size_t len, size_t from, size_t n, size_t excess)
{
	size_t drop, a, b;

	if (n < 2 * QUOTE_KEEP + 4)
		return len;
	drop = excess + 3; /* "..." takes three of the bytes dropped */
	if (drop > n - 2 * QUOTE_KEEP)
		drop = n - 2 * QUOTE_KEEP;
	a = from + (n - drop) / 2;
	b = a + drop;
	while (a > from + QUOTE_KEEP && ((unsigned char)t[a] & 0xC0) == 0x80)
		a--;
	while (b < from + n && ((unsigned char)t[b] & 0xC0) == 0x80)
		b++;
	memmove(t + a + 3, t + b, len - b + 1);
	memcpy(t + a, "...", 3);
	return len - (b - a) + 3;
}

/* Puts the message t (len bytes, NUL-terminated, modified) into msg[size].
 * A message that does not fit is shortened in the middle of its longest
 * quoted part ('...': a path, a name) first, then of the next, so that
 * what follows the quotes -- the reason, which comes last -- survives;
 * only when that is not enough does the middle of the whole text go. */
static void fit_message(char *msg, size_t size, char *t, size_t len)
{
	while (len >= size) {
		size_t best = 0, best_n = 0, open = 0, nl;
		bool in = false;

		for (size_t k = 0; k < len; k++) {
			if (t[k] != '\'')
				continue;
			if (in && k - open - 1 > best_n) {
				best = open + 1;
				best_n = k - open - 1;
			}
			in = !in;
			open = k;
		}
		nl = cut_middle(t, len, best, best_n, len - (size - 1));
		if (nl == len)
			break;
		len = nl;
	}
	if (len >= size)
		len = cut_middle(t, len, 0, len, len - (size - 1));
	memcpy(msg, t, len < size ? len + 1 : size);
	msg[size - 1] = '\0';
}

enum tcx_status tcx_vfail(struct tcx_error *err, enum tcx_status code, const char *fmt,
			  va_list ap)
{
	va_list aq;
	int n;

	if (!err)
		return code;
	err->code = code;
	err->native = 0;
	err->line = err->col = 0;
	va_copy(aq, ap);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (n > 0 && (size_t)n >= sizeof(err->msg)) {
		/* too long: the whole text, then shortened where it hurts least
		 * (out of memory: cut at the end, as vsnprintf did) */
		char *t = malloc((size_t)n + 1);

		if (t) {
			vsnprintf(t, (size_t)n + 1, fmt, aq);
			fit_message(err->msg, sizeof(err->msg), t, (size_t)n);
			free(t);
		}
	}
	va_end(aq);
	return code;
}

enum tcx_status tcx_fail(struct tcx_error *err, enum tcx_status code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tcx_vfail(err, code, fmt, ap);
	va_end(ap);
	return code;
}

enum tcx_status tcx_fail_at(struct tcx_error *err, enum tcx_status code, unsigned line,
			    unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tcx_vfail(err, code, fmt, ap);
	va_end(ap);
	if (err) {
		err->line = line;
		err->col = col;
	}
	return code;
}

void tcx_error_prefix(struct tcx_error *err, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addf(&sb, ": %s", err->msg);
	if (strbuf_status(&sb, NULL) == TCX_OK)
		fit_message(err->msg, sizeof(err->msg), sb.buf, sb.len);
	strbuf_release(&sb);
}

void tcx_error_clear(struct tcx_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}
