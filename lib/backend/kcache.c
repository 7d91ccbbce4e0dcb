/* kcache.c - the on-disk kernel cache: keys, entry files with a checked
 * header, atomic stores (kcache.h has the format). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/kcache.h"

enum tcx_status tcx_cache_path(const char *sub, struct strbuf *out, struct tcx_error *err)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	/* the XDG base directory spec: relative paths are invalid, ignore them */
	if (xdg && xdg[0] == '/')
		strbuf_addf(out, "%s/tcx", xdg);
	else if (home && *home)
		strbuf_addf(out, "%s/.cache/tcx", home);
	else
		return tcx_fail(err, TCX_EIO, "no cache directory: set 'XDG_CACHE_HOME' or 'HOME'");
	if (sub && *sub)
		strbuf_addf(out, "/%s", sub);
	return strbuf_status(out, err);
}

bool kcache_disabled_by_env(void)
{
	const char *v = getenv("TCX_NO_KERNEL_CACHE");

	return v && *v && strcmp(v, "0") != 0;
}

/* FNV-1a over fields separated by their lengths, so that no two different
 * field lists feed the hash the same bytes. */
static uint64_t feed(uint64_t h, const void *data, size_t len)
{
	uint64_t n = len;
	unsigned char lenb[8];

	for (int k = 0; k < 8; k++)
		lenb[k] = (unsigned char)(n >> (8 * k));
	h = common_hash64(lenb, 8, h);
	return common_hash64(data, len, h);
}

static uint64_t key_half(const struct device_info *di, const char *src, size_t len,
			 const char *opts, uint64_t seed)
{
	uint64_t h = feed(seed, "tcx kernel cache 1", 18);

	h = feed(h, di->backend, strlen(di->backend));
	h = feed(h, di->name, strlen(di->name));
	h = feed(h, di->arch, strlen(di->arch));
	h = feed(h, di->driver, strlen(di->driver));
	h = feed(h, opts ? opts : "", opts ? strlen(opts) : 0);
	return feed(h, src, len);
}

void kcache_key_make(const struct device_info *di, const char *src, size_t len, const char *opts,
		     struct kcache_key *out)
{
	uint64_t h[2];

	h[0] = key_half(di, src, len, opts, 0);
	h[1] = key_half(di, src, len, opts, 0x9e3779b97f4a7c15ULL);
	for (int k = 0; k < 16; k++)
		out->b[k] = (uint8_t)(h[k / 8] >> (8 * (k % 8)));
}

void kcache_key_hex(const struct kcache_key *k, char out[33])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[2 * i] = digits[k->b[i] >> 4];
		out[2 * i + 1] = digits[k->b[i] & 15];
	}
	out[32] = '\0';
}

void kcache_entry_path(const char *dir, const struct kcache_key *k, struct strbuf *out)
{
	char hex[33];

	kcache_key_hex(k, hex);
	strbuf_addf(out, "%s/%s.bin", dir, hex);
}

/* The header's integers: n bytes, little-endian. */
static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int k = 0; k < n; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int k = n - 1; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

/* Why an entry of `n` bytes is not a valid one for key k; NULL when it is. */
static const char *entry_problem(const unsigned char *d, size_t n, const struct kcache_key *k)
{
	uint64_t blen;

	if (n < KCACHE_HEADER_SIZE)
		return "truncated header";
	if (memcmp(d, KCACHE_MAGIC, 8) != 0)
		return "bad magic";
	if (get_le(d + 8, 4) != KCACHE_VERSION)
		return "another format version";
	if (get_le(d + 12, 4) != KCACHE_HEADER_SIZE)
		return "bad header size";
	if (memcmp(d + 16, k->b, 16) != 0)
		return "key does not match";
	blen = get_le(d + 32, 8);
	if (blen == 0 || blen > KCACHE_MAX_BINARY)
		return "bad length";
	if (blen > n - KCACHE_HEADER_SIZE)
		return "truncated binary";
	if (blen < n - KCACHE_HEADER_SIZE)
		return "trailing bytes";
	if (common_hash64(d + KCACHE_HEADER_SIZE, (size_t)blen, 0) != get_le(d + 40, 8))
		return "checksum mismatch";
	return NULL;
}

const char *kcache_parse_entry(const void *data, size_t n, const struct kcache_key *k,
			       const unsigned char **bin, size_t *len)
{
	const unsigned char *d = data;
	const char *why = entry_problem(d, n, k);

	*bin = NULL;
	*len = 0;
	if (why)
		return why;
	*bin = d + KCACHE_HEADER_SIZE;
	*len = (size_t)get_le(d + 32, 8);
	return NULL;
}

enum tcx_status kcache_load(const char *dir, const struct kcache_key *k, unsigned char **bin,
			    size_t *len, struct tcx_error *err)
{
	struct strbuf path = STRBUF_INIT;
	char *data = NULL;
	size_t n = 0;
	const char *why;
	enum tcx_status st;

	*bin = NULL;
	*len = 0;
	kcache_entry_path(dir, k, &path);
	st = strbuf_status(&path, err);
	if (st)
		goto out_free_path;
	if (access(strbuf_str(&path), F_OK) != 0) {
		st = errno == ENOENT || errno == ENOTDIR
			     ? TCX_OK
			     : tcx_fail(err, TCX_EIO, "cannot read kernel cache entry '%s': %s",
					strbuf_str(&path), strerror(errno));
		goto out_free_path;
	}
	st = common_read_file(strbuf_str(&path), &data, &n, err);
	if (st)
		goto out_free_path;
	why = entry_problem((const unsigned char *)data, n, k);
	if (why) {
		st = tcx_fail(err, TCX_ECORRUPT, "damaged kernel cache entry '%s' (%s): removed",
			      strbuf_str(&path), why);
		unlink(strbuf_str(&path));
		goto out_free_data;
	}
	/* the binary, in the place of the entry it was read from */
	*len = (size_t)get_le((const unsigned char *)data + 32, 8);
	memmove(data, data + KCACHE_HEADER_SIZE, *len);
	*bin = (unsigned char *)data;
	data = NULL;
	/* recently used: for a future least-recently-used eviction */
	if (utimensat(AT_FDCWD, strbuf_str(&path), NULL, 0) != 0)
		tcx_log(TCX_LOG_DEBUG, "cannot touch '%s': %s", strbuf_str(&path),
			strerror(errno));
out_free_data:
	free(data);
out_free_path:
	strbuf_release(&path);
	return st;
}

enum tcx_status kcache_store(const char *dir, const struct kcache_key *k, const unsigned char *bin,
			     size_t len, struct tcx_error *err)
{
	struct strbuf path = STRBUF_INIT;
	struct atomic_file af;
	unsigned char head[KCACHE_HEADER_SIZE];
	enum tcx_status st;

	if (!bin || len == 0 || (uint64_t)len > KCACHE_MAX_BINARY)
		return tcx_fail(err, TCX_EINVAL, "kernel binary of %zu bytes not cached", len);
	st = common_make_dirs(dir, err);
	if (st)
		return st;
	kcache_entry_path(dir, k, &path);
	st = strbuf_status(&path, err);
	if (st)
		goto out_free_path;
	memset(head, 0, sizeof(head));
	memcpy(head, KCACHE_MAGIC, 8);
	put_le(head + 8, KCACHE_VERSION, 4);
	put_le(head + 12, KCACHE_HEADER_SIZE, 4);
	memcpy(head + 16, k->b, 16);
	put_le(head + 32, (uint64_t)len, 8);
	put_le(head + 40, common_hash64(bin, len, 0), 8);
	st = atomic_file_open(&af, strbuf_str(&path), err);
	if (st)
		goto out_free_path;
	if (fwrite(head, 1, sizeof(head), af.fp) != sizeof(head) ||
	    fwrite(bin, 1, len, af.fp) != len) {
		atomic_file_abort(&af);
		st = tcx_fail(err, TCX_EIO, "cannot write kernel cache entry '%s'",
			      strbuf_str(&path));
		goto out_free_path;
	}
	st = atomic_file_commit(&af, err);
out_free_path:
	strbuf_release(&path);
	return st;
}

enum tcx_status kcache_remove(const char *dir, const struct kcache_key *k, struct tcx_error *err)
{
	struct strbuf path = STRBUF_INIT;
	enum tcx_status st = TCX_OK;

	kcache_entry_path(dir, k, &path);
	if (unlink(strbuf_str(&path)) != 0 && errno != ENOENT)
		st = tcx_fail(err, TCX_EIO, "cannot remove '%s': %s", strbuf_str(&path),
			      strerror(errno));
	strbuf_release(&path);
	return st;
}
