/* strbuf.c - growable strings with sticky allocation failure. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static bool strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want;
	char *p;

	if (sb->failed)
		return false;
	if (extra > SIZE_MAX / 2 - sb->len - 1) {
		sb->failed = true;
		return false;
	}
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return true;
	if (want < sb->alloc * 2)
		want = sb->alloc * 2;
	if (want < 64)
		want = 64;
	p = realloc(sb->buf, want);
	if (!p) {
		sb->failed = true;
		return false;
	}
	sb->buf = p;
	sb->alloc = want;
	return true;
}

void strbuf_add(struct strbuf *sb, const char *s, size_t n)
{
	if (!strbuf_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_adds(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addc(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0) {
		sb->failed = true;
		return;
	}
	if (!strbuf_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	sb->failed = false;
}

const char *strbuf_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

char *strbuf_detach(struct strbuf *sb)
{
	char *p = sb->buf;

	if (!p)
		p = calloc(1, 1);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	return p;
}

enum tcx_status strbuf_status(const struct strbuf *sb, struct tcx_error *err)
{
	if (sb->failed)
		return tcx_fail(err, TCX_ENOMEM, "out of memory building a string");
	return TCX_OK;
}
