/* test_error.c - tcx_fail and tcx_error_prefix keep a message's end (the
 * reason, which comes last) when the text is longer than TCX_ERROR_SIZE:
 * long quoted paths lose their middle to "...", then the whole text does;
 * short messages are left as they are, and no UTF-8 character is split. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/common.h"

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

static bool starts_with(const char *s, const char *head)
{
	return strncmp(s, head, strlen(head)) == 0;
}

/* Whether s is well-formed UTF-8 (enough for what a cut could break). */
static bool utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int more = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : 3;

		if ((*p & 0xC0) == 0x80)
			return false;
		p++;
		for (int k = 0; k < more; k++, p++)
			if ((*p & 0xC0) != 0x80)
				return false;
	}
	return true;
}

/* A path of n bytes: "/p" then "dir0123/" parts, ending in "end.c". */
static char *long_path(size_t n, const char *part)
{
	char *p = malloc(n + 1);
	size_t k = 0, m = strlen(part);

	if (!p)
		abort();
	p[k++] = '/';
	while (k + m + 5 < n) {
		memcpy(p + k, part, m);
		k += m;
	}
	memcpy(p + k, "end.c", 5);
	k += 5;
	p[k] = '\0';
	return p;
}

int main(void)
{
	struct tcx_error err = {0};
	char *p600 = long_path(600, "dir0123/"), *p300 = long_path(300, "other56/");
	char *utf = long_path(700, "\xc3\xa9\xe2\x82\xac/"); /* é and € */
	char *text;
	size_t n;

	/* short: as it is */
	tcx_fail(&err, TCX_EIO, "cannot write '%s': %s", "lib/src/x.c", "No space left on device");
	CHECK(strcmp(err.msg, "cannot write 'lib/src/x.c': No space left on device") == 0);
	CHECK(err.code == TCX_EIO);

	/* a long path: its middle goes, the reason stays */
	tcx_fail(&err, TCX_EIO, "cannot write '%s': %s", p600, "No space left on device");
	CHECK_MSG(ends_with(err.msg, "end.c': No space left on device"), "'%s'", err.msg);
	CHECK_MSG(starts_with(err.msg, "cannot write '/dir0123/"), "'%s'", err.msg);
	CHECK(strstr(err.msg, "...") != NULL);
	CHECK(strlen(err.msg) == TCX_ERROR_SIZE - 1);

	/* two long paths: both may give way, the reason stays */
	tcx_fail(&err, TCX_EIO, "cannot rename '%s' to '%s': %s", p600, p300,
		 "Invalid cross-device link");
	CHECK_MSG(ends_with(err.msg, "end.c': Invalid cross-device link"), "'%s'", err.msg);
	CHECK_MSG(starts_with(err.msg, "cannot rename '/dir0123/"), "'%s'", err.msg);
	CHECK(strlen(err.msg) < TCX_ERROR_SIZE);

	/* a prefix added on the way up: the reason stays */
	tcx_fail(&err, TCX_EPARSE, "unknown key 'Frobnicate' (line 3)");
	tcx_error_prefix(&err, "'%s'", p600);
	CHECK_MSG(ends_with(err.msg, "end.c': unknown key 'Frobnicate' (line 3)"), "'%s'", err.msg);
	CHECK(strlen(err.msg) < TCX_ERROR_SIZE);
	CHECK(err.code == TCX_EPARSE);

	/* no quotes at all: the middle of the whole text goes */
	text = long_path(900, "words ");
	tcx_fail(&err, TCX_EINVAL, "%s: the reason", text);
	CHECK_MSG(ends_with(err.msg, "end.c: the reason"), "'%s'", err.msg);
	CHECK(starts_with(err.msg, "/words "));
	CHECK(strlen(err.msg) < TCX_ERROR_SIZE);
	free(text);

	/* multibyte characters are never split */
	tcx_fail(&err, TCX_EIO, "cannot open '%s': %s", utf, "Permission denied");
	CHECK_MSG(ends_with(err.msg, "end.c': Permission denied"), "'%s'", err.msg);
	CHECK_MSG(utf8_ok(err.msg), "'%s' is not UTF-8", err.msg);

	/* exactly the room there is: as it is */
	n = TCX_ERROR_SIZE - 1 - strlen("cannot open '': x");
	text = long_path(n, "dir0123/");
	tcx_fail(&err, TCX_EIO, "cannot open '%s': x", text);
	CHECK(strstr(err.msg, "...") == NULL);
	CHECK(ends_with(err.msg, "end.c': x"));
	free(text);

	/* a real message of lib/: common_read_file on a long path that is not there */
	{
		char *got = NULL;

		CHECK(common_read_file(p600, &got, NULL, &err) == TCX_EIO);
		CHECK_MSG(ends_with(err.msg, "': No such file or directory") ||
			      ends_with(err.msg, "': File name too long"),
			  "'%s'", err.msg);
		free(got);
	}
	free(p600);
	free(p300);
	free(utf);
	return check_done();
}
