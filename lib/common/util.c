/* util.c - checked arithmetic, number parsing, whole-file reads, mkdir -p, atomic
 * output files, input text for generated code and the monotonic clock. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "fault.h"

bool common_mul_overflows_i64(int64_t a, int64_t b, int64_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

bool common_add_overflows_i64(int64_t a, int64_t b, int64_t *out)
{
	return __builtin_add_overflow(a, b, out);
}

bool common_parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return false;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno == ERANGE || end == s)
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end)
		return false;
	*out = (int64_t)v;
	return true;
}

bool common_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE)
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end)
		return false;
	*out = v;
	return true;
}

enum tcx_status common_read_file(const char *path, char **out, size_t *len, struct tcx_error *err)
{
	FILE *fp;
	char *buf = NULL, *p;
	size_t n = 0, cap = 0, got;

	*out = NULL;
	if (len)
		*len = 0;
	if (strcmp(path, "-") == 0)
		fp = stdin;
	else
		fp = fopen(path, "rb");
	if (!fp)
		return tcx_fail(err, TCX_EIO, "cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			p = realloc(buf, cap + 1);
			if (!p) {
				free(buf);
				if (fp != stdin)
					fclose(fp);
				return tcx_fail(err, TCX_ENOMEM, "out of memory reading '%s'", path);
			}
			buf = p;
		}
		got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		int e = errno;

		free(buf);
		if (fp != stdin)
			fclose(fp);
		return tcx_fail(err, TCX_EIO, "cannot read '%s': %s", path, strerror(e));
	}
	if (fp != stdin)
		fclose(fp);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return TCX_OK;
}

enum tcx_status common_make_dirs(const char *dir, struct tcx_error *err)
{
	char *d = strdup(dir), *p;
	enum tcx_status st = TCX_OK;
	struct stat sb;

	if (!d)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (p = d + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(d, 0777) != 0 && errno != EEXIST) {
			st = tcx_fail(err, TCX_EIO, "cannot create directory '%s': %s", d,
				      strerror(errno));
			goto out_free_d;
		}
		if (stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			st = tcx_fail(err, TCX_EIO, "cannot create directory '%s': %s", d,
				      strerror(ENOTDIR));
			goto out_free_d;
		}
		*p = c;
		if (c == '\0')
			break;
	}
out_free_d:
	free(d);
	return st;
}

/* Temporary files still open, for removal from a signal handler.  Slots
 * are claimed and released by the thread that opens and closes them; the
 * handler only reads them. */
#define MAX_LIVE_TMP 32
static char *volatile live_tmp[MAX_LIVE_TMP];

static void live_add(char *tmp)
{
	for (int i = 0; i < MAX_LIVE_TMP; i++)
		if (!live_tmp[i]) {
			live_tmp[i] = tmp;
			return;
		}
}

static void live_del(char *tmp)
{
	for (int i = 0; i < MAX_LIVE_TMP; i++)
		if (live_tmp[i] == tmp)
			live_tmp[i] = NULL;
}

void atomic_file_cleanup_all(void)
{
	for (int i = 0; i < MAX_LIVE_TMP; i++)
		if (live_tmp[i])
			unlink(live_tmp[i]);
}

#define TMP_SUFFIX_MAX 24 /* ".tmp.XXXXXX" and ".tmp.%08x" fit */

/* An unnamed file in the directory of `path` (Linux's O_TMPFILE), or -1
 * where the kernel, the file system or a missing /proc (needed to name it
 * at commit) does not allow one. */
static int open_unnamed(const char *path)
{
#ifdef O_TMPFILE
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (access("/proc/self/fd", X_OK) != 0)
		return -1;
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -1;
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666); /* 0666 under the umask */
	free(dir);
	return fd;
#else
	(void)path;
	return -1;
#endif
}

/* Gives an unnamed file af->path itself where no file has that name yet:
 * then no temporary name ever exists, which a SIGKILL between the link and
 * the rename would leave behind.  False where the name is taken (the
 * temporary name and a rename replace it) or the link fails. */
static bool link_direct(struct atomic_file *af)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(af->fp));
	return linkat(AT_FDCWD, proc, AT_FDCWD, af->path, AT_SYMLINK_FOLLOW) == 0;
}

/* Gives an unnamed file its temporary name beside af->path. */
static int link_unnamed(struct atomic_file *af, size_t n)
{
	char proc[64];
	static unsigned counter;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(af->fp));
	for (int tries = 0; tries < 100; tries++) {
		unsigned r = (unsigned)getpid() * 2654435761u ^
			     (unsigned)(uint64_t)(common_now_seconds() * 1e9) ^
			     (counter++ * 40503u);

		snprintf(af->tmp, n + TMP_SUFFIX_MAX, "%s.tmp.%08x", af->path, r);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, af->tmp, AT_SYMLINK_FOLLOW) == 0) {
			live_add(af->tmp);
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

enum tcx_status atomic_file_open(struct atomic_file *af, const char *path, struct tcx_error *err)
{
	size_t n;
	int fd;

	memset(af, 0, sizeof(*af));
	if (strcmp(path, "-") == 0) {
		af->fp = stdout;
		return TCX_OK;
	}
	n = strlen(path);
	af->path = strdup(path);
	if (!af->path)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	{
		/* not a regular file (/dev/null, a FIFO, a terminal): written to
		 * directly, for a rename would replace the device itself */
		struct stat sb;

		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
			af->fp = fopen(path, "wb");
			if (!af->fp) {
				int e = errno;

				atomic_file_abort(af);
				return tcx_fail(err, TCX_EIO, "cannot open '%s': %s", path,
						strerror(e));
			}
			return TCX_OK;
		}
	}
	af->tmp = malloc(n + TMP_SUFFIX_MAX);
	if (!af->tmp) {
		atomic_file_abort(af);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	fd = open_unnamed(path);
	if (fd >= 0) {
		af->unnamed = true;
		af->tmp[0] = '\0';
		af->fp = fdopen(fd, "wb");
		if (!af->fp) {
			close(fd);
			atomic_file_abort(af);
			return tcx_fail(err, TCX_EIO, "cannot open '%s'", path);
		}
		return TCX_OK;
	}
	snprintf(af->tmp, n + TMP_SUFFIX_MAX, "%s.tmp.XXXXXX", path);
	fd = mkstemp(af->tmp);
	if (fd < 0) {
		int e = errno;

		free(af->tmp);
		af->tmp = NULL;
		atomic_file_abort(af);
		return tcx_fail(err, TCX_EIO, "cannot create '%s': %s", path, strerror(e));
	}
	{
		/* mkstemp makes 0600; outputs are ordinary files under the umask */
		mode_t mask = umask(022);

		umask(mask);
		if (fchmod(fd, 0666 & ~mask) != 0)
			tcx_log(TCX_LOG_DEBUG, "cannot set the mode of '%s'", af->tmp);
	}
	af->fp = fdopen(fd, "wb");
	if (!af->fp) {
		close(fd);
		unlink(af->tmp);
		atomic_file_abort(af);
		return tcx_fail(err, TCX_EIO, "cannot open '%s'", path);
	}
	live_add(af->tmp);
	return TCX_OK;
}

/* The file has its name: forget the names it was written under. */
static void committed(struct atomic_file *af)
{
	free(af->tmp);
	free(af->path);
	af->tmp = af->path = NULL;
	af->unnamed = false;
}

enum tcx_status atomic_file_commit(struct atomic_file *af, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;
	int bad;

	if (af->fp == stdout) {
		if (fflush(stdout) != 0)
			st = tcx_fail(err, TCX_EIO, "cannot write to standard output: %s",
				      strerror(errno));
		af->fp = NULL;
		return st;
	}
	if (!af->fp)
		return tcx_fail(err, TCX_EINVAL, "output file is not open");
	if (!af->tmp) {
		/* a device or FIFO, written in place: nothing to sync or rename */
		bad = ferror(af->fp) || fflush(af->fp) != 0;
		if (fclose(af->fp) != 0)
			bad = true;
		af->fp = NULL;
		if (bad)
			st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", af->path,
				      strerror(errno));
		free(af->path);
		af->path = NULL;
		return st;
	}
	bad = ferror(af->fp) || fflush(af->fp) != 0 || fsync(fileno(af->fp)) != 0;
	if (!bad && fault_hit(FAULT_WRITE)) {
		errno = ENOSPC; /* TCX_FAULT=write:N: as a full disk */
		bad = true;
	}
	if (bad) {
		st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", af->path, strerror(errno));
		atomic_file_abort(af);
		return st;
	}
	if (af->unnamed && link_direct(af)) {
		/* no file of that name yet: the unnamed file took it, whole */
		bad = fclose(af->fp) != 0;
		af->fp = NULL;
		if (bad) {
			st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", af->path,
				      strerror(errno));
			unlink(af->path);
		}
		committed(af);
		return st;
	}
	if (af->unnamed && link_unnamed(af, strlen(af->path)) != 0) {
		st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", af->path, strerror(errno));
		af->tmp[0] = '\0';
		atomic_file_abort(af);
		return st;
	}
	if (fclose(af->fp) != 0) {
		af->fp = NULL;
		st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", af->path, strerror(errno));
		atomic_file_abort(af);
		return st;
	}
	af->fp = NULL;
	if (rename(af->tmp, af->path) != 0) {
		st = tcx_fail(err, TCX_EIO, "cannot rename to '%s': %s", af->path, strerror(errno));
		atomic_file_abort(af);
		return st;
	}
	live_del(af->tmp);
	committed(af);
	return TCX_OK;
}

void atomic_file_abort(struct atomic_file *af)
{
	if (af->fp && af->fp != stdout)
		fclose(af->fp);
	af->fp = NULL;
	if (af->tmp && af->tmp[0]) {
		unlink(af->tmp);
		live_del(af->tmp);
	}
	free(af->tmp);
	free(af->path);
	af->tmp = af->path = NULL;
	af->unnamed = false;
}

/* The bytes that stand as themselves in strbuf_add_ctext's text. */
static bool ctext_plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(" _-.,:+=()[]*/", c));
}

void strbuf_add_ctext(struct strbuf *sb, const char *s)
{
	for (const char *p = s; p && *p; p++) {
		/* a '/' beside a '*' would start or end a comment */
		bool slash_star = *p == '/' && ((p > s && p[-1] == '*') || p[1] == '*');

		if (ctext_plain(*p) && !slash_star)
			strbuf_addc(sb, *p);
		else
			strbuf_addf(sb, "\\%03o", (unsigned char)*p);
	}
}

void strbuf_add_cstring(struct strbuf *sb, const char *s)
{
	if (!s) {
		strbuf_adds(sb, "NULL");
		return;
	}
	strbuf_addc(sb, '"');
	strbuf_add_ctext(sb, s);
	strbuf_addc(sb, '"');
}

double common_now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
