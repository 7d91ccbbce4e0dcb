/* kcache_trim.c - the size cap of the on-disk kernel cache: when its entries
 * outgrow the cap, the least recently used go first (kcache.h). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/kcache.h"

uint64_t kcache_max_bytes(void)
{
	const char *v = getenv("TCX_KERNEL_CACHE_MAX"), *units = "kKmMgG", *unit;
	char *end;
	unsigned long long n;
	uint64_t scale = 1;

	if (!v || !*v)
		return KCACHE_DEFAULT_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (end == v || errno == ERANGE)
		return KCACHE_DEFAULT_MAX;
	/* a unit: k, m or g in either case, 2^10, 2^20 or 2^30 */
	unit = *end ? strchr(units, *end) : NULL;
	if (unit) {
		scale = (uint64_t)1 << (10 * (1 + (unit - units) / 2));
		end++;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (*end || (scale > 1 && n > UINT64_MAX / scale))
		return KCACHE_DEFAULT_MAX;
	return (uint64_t)n * scale;
}

/* True for an entry's file name: 32 lowercase hex digits and ".bin". */
static bool entry_name(const char *name)
{
	for (int k = 0; k < 32; k++)
		if (!strchr("0123456789abcdef", name[k]) || !name[k])
			return false;
	return strcmp(name + 32, ".bin") == 0;
}

struct entry {
	char name[40];
	uint64_t bytes;
	struct timespec used;
};

static int older_first(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->used.tv_sec != b->used.tv_sec)
		return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
	if (a->used.tv_nsec != b->used.tv_nsec)
		return a->used.tv_nsec < b->used.tv_nsec ? -1 : 1;
	return strcmp(a->name, b->name);
}

enum tcx_status kcache_trim(const char *dir, uint64_t max_bytes, int *removed,
			    struct tcx_error *err)
{
	DIR *d;
	struct dirent *de;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0, goal;
	struct strbuf path = STRBUF_INIT;
	enum tcx_status st = TCX_OK;

	if (removed)
		*removed = 0;
	if (max_bytes == 0)
		return TCX_OK; /* no cap */
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? TCX_OK
				       : tcx_fail(err, TCX_EIO, "cannot read kernel cache '%s': %s",
						  dir, strerror(errno));
	while ((de = readdir(d))) {
		struct stat sb;

		if (!entry_name(de->d_name))
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir, de->d_name);
		if (stat(strbuf_str(&path), &sb) != 0 || !S_ISREG(sb.st_mode))
			continue; /* removed meanwhile by another process */
		if (n == cap) {
			struct entry *p = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));

			if (!p) {
				st = tcx_fail(err, TCX_ENOMEM, "out of memory");
				goto out_close;
			}
			v = p;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].bytes = (uint64_t)sb.st_size;
		v[n].used = sb.st_mtim;
		total += v[n].bytes;
		n++;
	}
	if (total <= max_bytes)
		goto out_close;
	/* down to 3/4 of the cap, so that the next stores do not trim again */
	goal = max_bytes - max_bytes / 4;
	qsort(v, n, sizeof(*v), older_first);
	for (size_t k = 0; k < n && total > goal; k++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir, v[k].name);
		if (unlink(strbuf_str(&path)) == 0) {
			if (removed)
				(*removed)++;
		} else if (errno != ENOENT) {
			st = tcx_fail(err, TCX_EIO, "cannot remove '%s': %s", strbuf_str(&path),
				      strerror(errno));
			break;
		}
		total -= v[k].bytes;
	}
out_close:
	closedir(d);
	free(v);
	strbuf_release(&path);
	return st;
}
